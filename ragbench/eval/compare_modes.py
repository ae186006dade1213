"""``python -m ragbench.eval.compare_modes``: Workflow against Agent answering on a HotpotQA-style BEIR folder.

    python -m ragbench.eval.compare_modes --dataset ../shared/data/hotpotqa-dev200 --modes workflow,agent \\
        --limit 30 --cache .cache/eval --output results/agent/hotpotqa-local-qwen2.5-coder-1.5b.json

Indexes the corpus once into an engine state under --cache (each paragraph one document named after its
title, with the BEIR id as its document id; a store that ``python -m ragbench.eval`` already embedded is
copied from --index-from instead of embedding again), then asks every question in each mode with a fresh
conversation and records: both supporting paragraphs retrieved, EM / F1 / contains of the answer against
``metadata.answers``, model calls and estimated tokens, seconds, agent steps and workflow fallbacks. Prints
a table and writes the rows, the summary, the model and the settings as JSON (rewritten after every question,
so an interrupted run keeps what it measured; --max-minutes stops asking after a time budget).

The model comes from the usual RAGAPP_* settings: the packaged local model by default;
RAGAPP_LLM__BACKEND=openai with RAGAPP_LLM__BASE_URL and RAGAPP_LLM__MODEL measures a server model. A model
that cannot answer a one-token test call stops the command before anything is indexed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.chunks import doc_of_chunk_id
from ragapp.core.errors import ConfigError, LLMError
from ragapp.core.tokens import estimate_tokens
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLM, LLMS, ToolCallingLLM, ToolReply, stream_within
from ragapp.qa.budget import turns_tokens
from ragbench.cli import run_command
from ragbench.eval.answers import AnswerRow, Usage, collect, score_row, summarize
from ragbench.eval.beir import BeirDataset, Query, load_beir
from ragbench.eval.corpus import IndexReport, build_index, passage_chunks

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine

MODES = ("workflow", "agent", "auto")
COUNTING = "counting"  # LLM backends named "counting+<backend>" wrap <backend> and count its calls
PREFLIGHT_TIMEOUT_S = 60.0


# -- counting the model's work ------------------------------------------------------------------------


class CountingLLM:
    """Wraps a backend and counts its calls and (estimated, ``estimate_tokens``) prompt and reply tokens, and
    keeps every reply (the raw text the agent parsed). Everything else (``load``, ``base_url``) is the
    wrapped backend's.

    Each call gets its reply slot when it starts and fills it piece by piece, so a reply cut by a time budget
    (its worker thread stops a piece later) counts towards the question that made the call."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self._prompt_tokens = 0
        self._slots: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    def usage(self) -> Usage:
        with self._lock:
            replies = ["".join(slot) for slot in self._slots]
            prompt = self._prompt_tokens
        return Usage(len(replies), prompt, sum(estimate_tokens(r) for r in replies))

    def replies(self) -> list[str]:
        """Every reply so far, in the order the calls started (a reply still streaming: what came so far)."""
        with self._lock:
            return ["".join(slot) for slot in self._slots]

    def _start(self, prompt_tokens: int) -> list[str]:
        slot: list[str] = []
        with self._lock:
            self._prompt_tokens += prompt_tokens
            self._slots.append(slot)
        return slot

    def stream_chat(
        self,
        messages: list[ChatTurn],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        json: bool = False,
        prefix_slot: str | None = None,
    ) -> Iterator[str]:
        slot = self._start(turns_tokens(messages))
        stream = self.inner.stream_chat(
            messages, max_tokens=max_tokens, temperature=temperature, json=json, prefix_slot=prefix_slot
        )
        return self._counted(stream, slot)

    def _counted(self, stream: Iterator[str], slot: list[str]) -> Iterator[str]:
        try:
            for piece in stream:
                with self._lock:
                    slot.append(piece)
                yield piece
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet: no recursion while unpickling or half-built
            raise AttributeError(name)
        return getattr(self.inner, name)


class CountingToolLLM(CountingLLM):
    """The counting wrapper for a backend with native function calling."""

    def complete_with_tools(
        self,
        messages: list[ChatTurn],
        tools: list[dict[str, Any]],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> ToolReply:
        slot = self._start(turns_tokens(messages) + estimate_tokens(json.dumps(tools)))
        assert isinstance(self.inner, ToolCallingLLM)
        reply = self.inner.complete_with_tools(messages, tools, max_tokens=max_tokens, temperature=temperature)
        calls = json.dumps([{"name": c.name, "arguments": c.arguments} for c in reply.calls]) if reply.calls else ""
        with self._lock:
            slot.append(f"{reply.content}\n{calls}".strip())
        return reply


def counting(inner: LLM) -> CountingLLM:
    return CountingToolLLM(inner) if isinstance(inner, ToolCallingLLM) else CountingLLM(inner)


# The backend built for a state dir (so the command can read its counts after ``build_engine``), and backends
# built ahead of the engine (the test call), which the factory wraps instead of building another.
_BUILT: dict[Path, CountingLLM] = {}
_PREPARED: dict[Path, LLM] = {}


def _inner_settings(settings: Settings) -> Settings:
    backend = settings.llm.backend.removeprefix(f"{COUNTING}+")
    return settings.model_copy(update={"llm": settings.llm.model_copy(update={"backend": backend})})


def _counting_factory(settings: Settings) -> CountingLLM:
    key = Path(settings.paths.state_dir).resolve()
    inner = _PREPARED.pop(key, None)
    if inner is None:
        inner_settings = _inner_settings(settings)
        inner = LLMS.get(inner_settings.llm.backend)(inner_settings)
    llm = counting(inner)
    _BUILT[key] = llm
    return llm


def counting_backend(backend: str) -> str:
    """Register (once) and return the name of the backend that counts ``backend``'s calls."""
    name = f"{COUNTING}+{backend}"
    if name not in LLMS:
        LLMS.register(name)(_counting_factory)
    return name


def counted_llm(settings: Settings) -> CountingLLM:
    """The counting backend ``build_engine`` built for ``settings``' state dir."""
    return _BUILT[Path(settings.paths.state_dir).resolve()]


def preflight(llm: LLM, timeout_s: float) -> float:
    """Load the model (a local one) and ask for one token; returns the seconds it took. Raises ``LLMError``
    saying nothing was measured when the model cannot answer (no server, wrong model, no model file)."""
    start = time.perf_counter()
    try:
        load = getattr(llm, "load", None)
        if callable(load):
            load()
        messages = [ChatTurn("user", "Reply with the word OK.")]
        for _ in stream_within(lambda: llm.stream_chat(messages, max_tokens=1, temperature=0.0), timeout_s):
            pass
    except LLMError as exc:
        raise LLMError(f"the model ({llm.name}) failed a one-token test call, so nothing was measured: {exc}") from exc
    return time.perf_counter() - start


# -- the engine over the corpus ----------------------------------------------------------------------


def _content_hash(doc_id: str, text: str) -> str:
    return hashlib.sha256(f"{doc_id}\n{text}".encode()).hexdigest()  # as ragbench.eval.corpus writes it


def store_matches(folder: Path, dataset: BeirDataset, settings: Settings) -> bool:
    """The catalog under ``folder`` holds exactly this corpus, chunked as ``settings`` chunk it."""
    from ragapp.store.catalog import Catalog

    catalog = Catalog(folder / "catalog.sqlite3")
    try:
        documents = {d.doc_id: d.content_hash for d in catalog.documents()}
        if documents != {p.doc_id: _content_hash(p.doc_id, p.text) for p in dataset.corpus}:
            return False
        have = {(c.chunk_id, c.text, c.source) for c in catalog.all_chunks()}
    finally:
        catalog.close()
    want = {(c.chunk_id, c.text, c.source) for p in dataset.corpus for c in passage_chunks(p, settings)}
    return have == want


def _candidates(roots: Sequence[Path], corpus_name: str, exclude: Path) -> list[Path]:
    found = []
    for root in roots:
        if root.is_dir():
            for folder in sorted(root.iterdir()):
                if (
                    folder.name.startswith(f"{corpus_name}-")
                    and (folder / "catalog.sqlite3").is_file()
                    and folder.resolve() != exclude.resolve()
                ):
                    found.append(folder)
    return found


def state_folder(corpus_file: Path, settings: Settings, cache: Path) -> Path:
    """The engine state for this corpus file, chunking and embedder (named as ``ragbench.eval`` names its stores,
    with an ``engine-`` prefix so the two never share a folder)."""
    from ragapp.models.embedders import load_embedder
    from ragbench.eval.corpus import corpus_key

    key = corpus_key(corpus_file, settings, load_embedder(settings).name)  # the embedder loads lazily: cheap
    return cache / f"engine-{corpus_file.parent.name}-{key}"


def prepare_state(
    dataset: BeirDataset, corpus_file: Path, settings: Settings, cache: Path, index_from: Sequence[Path]
) -> tuple[IndexReport, str]:
    """The indexed corpus as an engine state under ``cache`` (``state_folder``): reused when there, else
    copied from a store in ``index_from`` or ``cache`` (``python -m ragbench.eval --cache``) that holds the same
    corpus chunked the same way (vectors it lacks for this embedder are then embedded), else built. Returns
    the report and how the state came to be."""
    folder = state_folder(corpus_file, settings, cache)
    cache.mkdir(parents=True, exist_ok=True)
    how = "reused"
    if not (folder / "catalog.sqlite3").is_file():
        how = "built"
        for source in _candidates([*index_from, cache], corpus_file.parent.name, folder):
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=cache))
            shutil.copytree(source, staging, dirs_exist_ok=True)
            if store_matches(staging, dataset, settings):
                staging.rename(folder)
                how = f"copied from {source}"
                break
            shutil.rmtree(staging, ignore_errors=True)
    store, report = build_index(dataset.corpus, corpus_file, settings, cache, folder.name.rsplit("-", 1)[0])
    store.catalog.close()
    if report.folder != folder:  # build_index and state_folder name folders the same way
        raise ConfigError(f"the index was built in {report.folder}, not in {folder}")
    if how == "reused" and not report.reused:
        how = "finished"  # an interrupted build, resumed
    return report, how


# -- asking -----------------------------------------------------------------------------------------


def gold_answers(query: Query) -> list[str]:
    answers = query.metadata.get("answers")
    if isinstance(answers, str):
        return [answers]
    return [str(a) for a in answers] if isinstance(answers, list) else []


def supports_of(dataset: BeirDataset, query_id: str) -> set[str]:
    return {doc for doc, grade in dataset.qrels.get(query_id, {}).items() if grade > 0}


def ask_once(
    engine: Engine,
    llm: CountingLLM,
    dataset: BeirDataset,
    query: Query,
    mode: str,
    doc_of_source: dict[str, str],
    clock: Callable[[], float] = time.perf_counter,
) -> AnswerRow:
    """One question in one mode, with a fresh conversation, scored."""
    before, replied = llm.usage(), len(llm.replies())
    start = clock()
    events = engine.chat.ask(query.text, (), None, mode=mode)  # type: ignore[arg-type]
    seen = collect(events, mode, doc_of_source, doc_of_chunk_id)
    seconds = clock() - start
    seen.replies = llm.replies()[replied:]
    return score_row(
        query.query_id,
        query.text,
        gold_answers(query),
        supports_of(dataset, query.query_id),
        mode,
        seen,
        llm.usage() - before,
        seconds,
    )


# -- the command ------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.eval.compare_modes", description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", type=Path, required=True, help="BEIR folder whose queries carry metadata.answers.")
    p.add_argument("--split", default="test", help="qrels split holding the supporting paragraphs (default: test).")
    p.add_argument("--modes", default="workflow,agent", help="comma-separated: workflow, agent, auto.")
    p.add_argument("--limit", type=int, help="ask only the first N questions.")
    p.add_argument(
        "--max-minutes",
        type=float,
        help="start no new question after this many minutes of asking (the table and JSON then hold the "
        "questions answered so far; Ctrl-C does the same at once).",
    )
    p.add_argument(
        "--cache", type=Path, default=REPO_ROOT / ".cache" / "eval", help="keep the indexed corpus here (default: "
        ".cache/eval); a second run reuses it."
    )  # fmt: skip
    p.add_argument(
        "--index-from",
        type=Path,
        action="append",
        default=[],
        help="a `python -m ragbench.eval --cache` folder whose store of this corpus may be copied instead of "
        "embedding again (repeatable; --cache itself is always looked at).",
    )
    p.add_argument("--output", type=Path, help="write the rows, the summary, the model and the settings here.")
    p.add_argument("--name", help="label of this run in the output (default: the model's name).")
    p.add_argument("--quiet", action="store_true", help="no progress line per answer.")
    p.epilog = "The model, retrieval, workflow and agent settings come from RAGAPP_* variables, as in the app."
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    if args.max_minutes is not None and args.max_minutes <= 0:
        parser.error("--max-minutes must be positive")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if not modes or unknown:
        parser.error(f"--modes: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(MODES)}")
    args.modes = list(dict.fromkeys(modes))
    return run_command(_run, args)


def _run(args: argparse.Namespace) -> int:
    from ragapp.engine.build import build_engine, load_builtins

    dataset = load_beir(args.dataset, args.split)
    queries = list(dataset.queries[: args.limit] if args.limit else dataset.queries)
    missing = [q.query_id for q in queries if not gold_answers(q)]
    if missing:
        raise ConfigError(
            f"{len(missing)} of {len(queries)} questions have no metadata.answers (e.g. {missing[0]}): "
            "this command needs gold answers"
        )
    corpus_file = args.dataset / "corpus.jsonl"
    settings = Settings()

    # The model first: a server that is not there is reported before minutes of indexing.
    load_builtins()
    inner = LLMS.get(settings.llm.backend)(settings)
    load_s = preflight(inner, min(settings.llm.timeout_s, PREFLIGHT_TIMEOUT_S))
    model = inner.name
    name = args.name or model
    print(f"{name}: answered a test call in {load_s:.1f} s", file=sys.stderr)

    start = time.perf_counter()
    report, how = prepare_state(dataset, corpus_file, settings, args.cache, args.index_from)
    index_s = time.perf_counter() - start
    print(
        f"{dataset.name}: {len(queries)} questions, {report.documents} documents ({report.chunks} chunks) in "
        f"{report.folder} ({how}, {index_s:.0f} s)",
        file=sys.stderr,
    )
    # The engine over that state (never the demo), with the tested backend wrapped to count its calls.
    paths = settings.paths.model_copy(update={"state_dir": report.folder, "load_demo": False})
    llm_settings = settings.llm.model_copy(update={"backend": counting_backend(settings.llm.backend)})
    engine_settings = settings.model_copy(update={"paths": paths, "llm": llm_settings})
    _PREPARED[report.folder.resolve()] = inner
    engine = build_engine(engine_settings)
    llm = counted_llm(engine_settings)
    rows: list[AnswerRow] = []
    stopped = ""
    try:
        doc_of_source = {d.name: d.doc_id for d in engine.library.documents()}
        payload: dict[str, Any] = {
            "name": name,
            "model": model,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "dataset": dataset.name,
            "split": args.split,
            "modes": args.modes,
            "questions": len(queries),
            "complete": False,
            "stopped": None,
            "cpus": os.cpu_count(),
            "model_load_s": round(load_s, 2),
            "index": {
                "folder": str(report.folder),
                "documents": report.documents,
                "chunks": report.chunks,
                "how": how,
                "seconds": {k: round(v, 1) for k, v in report.seconds.items()},
                "embedder": engine.status().embedder,
            },
            "settings": {
                "llm": settings.llm.model_dump(mode="json", exclude={"api_key"}),
                "embedding": settings.embedding.model_dump(mode="json"),
                "ingest": settings.ingest.model_dump(mode="json"),
                "retrieval": settings.retrieval.model_dump(mode="json"),
                "rerank": settings.rerank.model_dump(mode="json"),
                "workflow": settings.workflow.model_dump(mode="json"),
                "agent": settings.agent.model_dump(mode="json"),
            },
        }
        started = time.monotonic()
        try:
            for index, query in enumerate(queries):
                if index and args.max_minutes is not None and time.monotonic() - started > 60 * args.max_minutes:
                    stopped = f"the {args.max_minutes:g}-minute budget ran out"
                    break
                answered: list[AnswerRow] = []  # kept only once every mode has answered, so modes stay paired
                for mode in args.modes:
                    row = ask_once(engine, llm, dataset, query, mode, doc_of_source)
                    answered.append(row)
                    if not args.quiet:
                        print(progress_line(index, len(queries), row), file=sys.stderr, flush=True)
                rows.extend(answered)
                if args.output:
                    _write(args.output, payload, rows)
        except KeyboardInterrupt:
            stopped = "interrupted"
    finally:
        engine.close()
    count = len({r.query_id for r in rows})
    label = f"{dataset.name} · {name} · {count} questions"
    if stopped:
        label += f" (stopped after {count} of {len(queries)}: {stopped})"
    print(render_table(label, summarize(rows, args.modes)))
    if args.output:
        payload["complete"], payload["stopped"] = not stopped, stopped or None
        _write(args.output, payload, rows)
        print(f"wrote {args.output}", file=sys.stderr)
    return 130 if stopped == "interrupted" else 0


def _write(path: Path, payload: dict[str, Any], rows: Sequence[AnswerRow]) -> None:
    modes = payload["modes"]
    data = {**payload, "answered": len({r.query_id for r in rows})}
    data["summary"] = summarize(rows, modes)
    data["rows"] = [r.as_json() for r in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".part")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    temporary.replace(path)


# -- rendering -----------------------------------------------------------------------------------------


def progress_line(index: int, total: int, row: AnswerRow) -> str:
    extra = f" steps {row.steps}" if row.mode != "workflow" else ""
    extra += " FALLBACK" if row.fallback else ""
    return (
        f"[{index + 1:>3}/{total}] {row.mode:<8} {row.seconds:6.1f}s  F1 {row.f1:.2f}  EM {row.em:.0f}  "
        f"supports {row.supports_found}/{len(row.supports)}  calls {row.usage.calls}{extra}  {row.question[:70]}"
    )


def _cell(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def render_table(label: str, summary: dict[str, Any]) -> str:
    header = [
        "mode", "n", "both sup %", "in prompt %", "EM", "F1", "contains", "calls/q", "tokens/q",
        "s/q p50", "s/q mean", "steps/q", "fallbacks",
    ]  # fmt: skip
    body = []
    for mode, s in summary["modes"].items():
        agentic = mode != "workflow"
        body.append(
            [
                mode,
                str(s["questions"]),
                _cell(None if s["both_supports"] is None else 100 * s["both_supports"], ".0f"),
                _cell(None if s["both_supports_in_prompt"] is None else 100 * s["both_supports_in_prompt"], ".0f"),
                _cell(s["em"], ".3f"),
                _cell(s["f1"], ".3f"),
                _cell(s["contains"], ".3f"),
                _cell(s["model_calls"], ".1f"),
                _cell(s["tokens"], ".0f"),
                _cell(s["seconds_p50"], ".1f"),
                _cell(s["seconds_mean"], ".1f"),
                _cell(s["steps"], ".1f") if agentic else "-",
                str(s["fallbacks"]) if agentic else "-",
            ]
        )
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    lines = [label, "", line(header), line(["-" * w for w in widths]), *(line(r) for r in body)]
    for pair in summary["paired"]:
        first, second = pair["modes"]
        f1, sup = pair["f1"], pair["supports"]
        lines.append(
            f"\n{second} vs {first} on {pair['questions']} questions: F1 better {f1['better']}, worse {f1['worse']}, "
            f"same {f1['same']}; supports found better {sup['better']}, worse {sup['worse']}, same {sup['same']}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
