"""``python -m ragbench.model_calls``: which model calls before the answer run, what each costs, and whether it
changes anything the answer would be written from.

    python -m ragbench.model_calls --set data/eval/answers/debian-blind.yaml --split dev --stride 4 \\
        [--demo] [--routing tests/data/intents/demo_questions.yaml] [--after route_same_search_margin=0] \\
        [--output results/model_calls/dev.json]

The workflow may call the model before the answer to rewrite a follow-up, to route a question through the intent
tree, to translate it, or to rephrase it as the sentence that would answer it. Each question goes through the
app's own pipeline up to the passages that reach the answer's prompt, and stops there: no answer is generated,
so a run costs only those calls. The **outcome** of a question is what the answer would be written from: the
routing actions and the chunk ids in the prompt (a question the app asks back about, or answers directly as a
message to the assistant, has none), and whether the set's evidence is among them.

Each question is asked with the rules that skip calls off (``before``), then once more for each step that
called the model there with that step off (did the step change the outcome?), then with the settings as
configured plus ``--after`` (``after``). The model's replies are kept by prompt, so a call asked again is
answered at once with the same reply and is timed once. The questions:

- the answer set's split (``--stride``), each with the set's earlier turns as its history;
- the same set's single-turn questions asked inside a conversation ("in conversation"): after the question
  before it in that list, answered with its gold values, so that the rewrite rules are put to the test;
- ``--demo``: the demo questions over the demo knowledge base and its intent tree, and ``--routing``'s labelled
  routing questions over the same; both split once into dev (even positions) and test (odd positions).

Timings come from whatever machine runs it; on a busy shared one they are only roughly comparable.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.events import ClarifyEvent, EngineEvent, RetrievalEvent, RoutingEvent, StageEvent
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLM, LLMS
from ragbench.cli import parse_counts, run_command, settings_snapshot
from ragbench.model_calls_report import render, summarize

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine
    from ragapp.models.embedders import Embedder

STEPS = ("rewrite", "route", "translate", "rephrase")
# The settings of the rules that skip calls, as they were before them ("before"); "after" is as configured.
BEFORE: dict[str, Any] = {
    "rewrite_multi_part": True,
    "rewrite_above_score": None,
    "route_same_search": False,
    "translate_only_if_other_kept": False,
}
STEP_OFF = {"rewrite": "rewrite", "route": "route", "translate": "translate", "rephrase": "rephrase"}
DEMO_QUESTIONS = REPO_ROOT / "assets" / "examples.json"


class RememberingLLM:
    """The model with its replies kept by prompt: the same call again gives the same reply at once (the
    variants of one question repeat most calls). ``stage`` is set by the reader of the events; ``calls``
    records each call's stage, seconds (of the first, real call) and whether it was a repeat."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.stage = ""
        self.calls: list[tuple[str, float, bool]] = []
        self._kept: dict[str, tuple[list[str], float]] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def stream_chat(self, messages: list[ChatTurn], **kwargs: Any) -> Iterator[str]:
        stage = self.stage  # the stage the call serves: read as it starts (a call cut off by the step's time
        # limit ends later, during another stage or question, and is counted where it started)
        if stage == "generate":
            raise RuntimeError("the measurement stops before the answer: no answer call is made")
        key = json.dumps([[t.role, t.content] for t in messages] + [sorted(kwargs.items(), key=str)], default=str)
        if key in self._kept:
            pieces, seconds = self._kept[key]
            self.calls.append((stage, seconds, True))
            yield from pieces
            return
        start = time.perf_counter()
        pieces = list(self.inner.stream_chat(messages, **kwargs))
        seconds = time.perf_counter() - start
        self._kept[key] = (pieces, seconds)
        self.calls.append((stage, seconds, False))
        yield from pieces


@dataclass
class Asked:
    """One question as the pipeline took it up to the prompt, under one variant of the settings."""

    actions: list[str] = field(default_factory=list)  # "route:a.b,c.d", "clarify", "system", "fallback"
    kept: list[str] = field(default_factory=list)  # chunk ids in the prompt, in order
    evidence: bool | None = None  # the set's evidence among them (None: the question has none)
    top_score: float | None = None  # the best rerank score in the prompt
    calls: dict[str, float] = field(default_factory=dict)  # step -> model seconds (first, real call)
    skipped: dict[str, str] = field(default_factory=dict)  # step -> why no call was made
    seconds: float = 0.0  # question to prompt, on this run (repeated calls answered at once)
    degraded: list[str] = field(default_factory=list)  # a channel that failed or timed out
    failed: dict[str, str] = field(default_factory=dict)  # step -> why its call gave nothing (a timeout, ...)

    def outcome(self) -> tuple[tuple[str, ...], frozenset[str]]:
        return tuple(self.actions), frozenset(self.kept)


@dataclass
class Item:
    """A question to measure: its words, history, and how its evidence is recognised."""

    id: str
    group: str  # "set", "in conversation", "demo", "routing"
    split: str
    question: str
    history: list[ChatTurn]
    evidence: Any = None  # the set's Evidence tuple, or the demo's expected file names, or None
    expect: Any = None  # routing questions: the label


def ask_once(engine: Engine, llm: RememberingLLM, item: Item, doc_of: dict[str, Any]) -> Asked:
    """Run the pipeline up to the passages that reach the prompt and read what it did."""
    asked = Asked()
    llm.calls = []
    start = time.perf_counter()
    events = engine.chat.ask(item.question, item.history, None, mode="workflow", owner="ragbench")
    try:
        for event in events:
            if _read(event, asked, llm, doc_of, item):
                break
    finally:
        events.close()  # type: ignore[attr-defined]
    asked.seconds = round(time.perf_counter() - start, 3)
    for stage, seconds, _ in llm.calls:
        if stage in STEPS:
            asked.calls[stage] = round(asked.calls.get(stage, 0.0) + seconds, 3)
    return asked


def _read(event: EngineEvent, asked: Asked, llm: RememberingLLM, doc_of: dict[str, Any], item: Item) -> bool:
    """Fold one event into ``asked``; True when the prompt is settled (stop before the answer)."""
    if isinstance(event, StageEvent):
        if event.status == "started" and event.stage != "early search":
            llm.stage = event.stage
        if event.status == "failed" and event.stage in STEPS:
            asked.failed[event.stage] = str(event.error or "")
        if event.detail.get("model call") == "none":
            asked.skipped[event.stage] = str(event.detail.get("why", ""))
        return event.status == "started" and event.stage == "generate"
    if isinstance(event, RoutingEvent):
        codes = ",".join(i.code for i in event.intents)
        asked.actions.append(f"{event.action}:{codes}" if event.action == "route" else event.action)
        if "no model call" in event.reason and "search the same" in event.reason:
            asked.skipped["route"] = event.reason
    elif isinstance(event, ClarifyEvent):
        return True
    elif isinstance(event, RetrievalEvent):
        asked.kept = [c.chunk.chunk_id for c in event.chunks]
        scores = [c.rerank_score for c in event.chunks if c.rerank_score is not None]
        asked.top_score = round(max(scores), 3) if scores else None
        asked.evidence = _on_evidence(event, doc_of, item)
        asked.degraded = list(event.degraded)
        return True
    return False


def _on_evidence(event: RetrievalEvent, doc_of: dict[str, Any], item: Item) -> bool | None:
    from ragbench.answers.scoring import on_evidence

    if not item.evidence:
        return None
    if item.group == "demo":  # the demo names the files that hold its answer
        return any(doc_of.get(c.chunk.doc_id) in item.evidence for c in event.chunks)
    return any(on_evidence(c.chunk, doc_of.get(c.chunk.doc_id), item.evidence) for c in event.chunks)


def with_settings(engine: Engine, values: dict[str, Any]) -> None:
    """Switch the engine's workflow settings in place: the pipeline and the router read them per question."""
    for name, value in values.items():
        setattr(engine.settings.workflow, name, value)


def measure(
    engine: Engine,
    llm: RememberingLLM,
    embedder: Embedder,
    items: list[Item],
    doc_of: dict[str, Any],
    after: dict[str, Any],
    on_row: Callable[[dict[str, Any]], None] = lambda row: None,
) -> list[dict[str, Any]]:
    """Every item under ``before``, without each step that called the model there, and ``after``; ``on_row``
    gets each row as it is measured."""
    configured = {name: getattr(engine.settings.workflow, name) for name in {*BEFORE, *STEP_OFF.values(), *after}}
    rows = []
    for index, item in enumerate(items, start=1):
        with_settings(engine, configured | BEFORE)
        before = ask_once(engine, llm, item, doc_of)
        without = {}
        for step in (s for s in STEPS if s in before.calls):
            with_settings(engine, configured | BEFORE | {STEP_OFF[step]: False})
            without[step] = ask_once(engine, llm, item, doc_of)
        with_settings(engine, configured | after)
        after_run = ask_once(engine, llm, item, doc_of)
        with_settings(engine, configured)
        row = {
            "id": item.id,
            "group": item.group,
            "split": item.split,
            "question": item.question,
            "expect": item.expect,
            "before": asdict(before),
            "without": {step: asdict(a) for step, a in without.items()},
            "changed": {step: a.outcome() != before.outcome() for step, a in without.items()},
            "after": asdict(after_run),
            "after_changed": after_run.outcome() != before.outcome(),
            "same_search_gap": same_search_gap(engine, embedder, item.question),
        }
        rows.append(row)
        on_row(row)
        calls = ", ".join(f"{s} {v:.1f}s" for s, v in before.calls.items()) or "no model call"
        print(f"[{index}/{len(items)}] {item.group} {item.id}: {calls}; after {len(after_run.calls)}", file=sys.stderr)
    return rows


def same_search_gap(engine: Engine, embedder: Embedder, question: str) -> float | None:
    """How far the embedder's best leaf stands above the best leaf that would search something else (or is a
    message to the assistant): the rule ``route_same_search`` skips the model when this exceeds its margin.
    None without a tree; 1.0 when every leaf searches the same."""
    from ragapp.router.fast import EmbeddingClassifier, FastRule
    from ragapp.router.router import search_of

    tree = engine.intents.tree()
    if not tree.leaves():
        return None
    ranked = EmbeddingClassifier(embedder, FastRule(1.0, 1.0)).similarities(question, tree)
    top, top_score = ranked[0]
    other = next((s for leaf, s in ranked if search_of(leaf, None, tree) != search_of(top, None, tree)), None)
    if search_of(top, None, tree) is None:
        return -1.0  # the best leaf is a message to the assistant: the rule never applies
    return 1.0 if other is None else round(top_score - other, 4)


def set_items(set_file: Path, split: str | None, stride: int) -> tuple[Any, list[Item]]:
    from ragbench.answers.answer_set import load_set

    answer_set = load_set(set_file)
    questions = [q for q in answer_set.questions if split in (None, q.split)][::stride]
    items = []
    for q in questions:
        history = [t for turn in q.turns for t in (ChatTurn("user", turn.user), ChatTurn("assistant", turn.assistant))]
        items.append(Item(q.id, "set", q.split, q.question, history, q.evidence if q.answerable else None))
    alone = [q for q in questions if not q.turns]
    for earlier, q in itertools.pairwise(alone):
        gold = [m if isinstance(m, str) else m[0] for m in earlier.must_contain] or ["The documents do not say."]
        history = [ChatTurn("user", earlier.question), ChatTurn("assistant", ", ".join(gold))]
        evidence = q.evidence if q.answerable else None
        items.append(Item(q.id, "in conversation", q.split, q.question, history, evidence))
    return answer_set, items


def demo_items(routing: Path | None, split: str | None) -> list[Item]:
    examples = json.loads(DEMO_QUESTIONS.read_text("utf-8"))
    items = [
        Item(f"demo-{i:02d}", "demo", "dev" if i % 2 == 0 else "test", e["question"], [], e["expected_sources"])
        for i, e in enumerate(examples)
    ]
    if routing is not None:
        labelled = yaml.safe_load(routing.read_text("utf-8"))["questions"]
        items += [
            Item(f"routing-{i:02d}", "routing", "dev" if i % 2 == 0 else "test", q["question"], [], None, q["expect"])
            for i, q in enumerate(labelled)
        ]
    return [i for i in items if split in (None, i.split)]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.model_calls", description=__doc__.split("\n\n")[0])
    p.add_argument("--set", dest="set_file", type=Path, help="an answer set (YAML).")
    p.add_argument("--split", choices=("dev", "test"), help="only this split (dev: tune; test: report).")
    p.add_argument("--stride", type=int, default=1, help="every Nth question of the set.")
    p.add_argument("--demo", action="store_true", help="the demo questions over the demo knowledge base.")
    p.add_argument("--routing", type=Path, help="labelled routing questions, over the demo (with --demo).")
    p.add_argument("--turns", action="store_true", help="only the set's questions with earlier turns.")
    p.add_argument("--after", action="append", default=[], help="NAME=VALUE: a workflow setting for 'after'.")
    p.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache" / "answers", help="answer-set states.")
    p.add_argument("--state", type=Path, help="the set's engine state folder (default: its key under --cache).")
    p.add_argument("--output", type=Path, help="write rows and summary as JSON (after every group).")
    return p


def _after(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        out[name] = yaml.safe_load(value)
    return out


def _run(args: argparse.Namespace) -> int:
    from ragapp.engine.build import Parts, build_engine, load_builtins
    from ragapp.models.embedders import load_embedder

    base = Settings()
    settings = base.model_copy(
        update={
            "answer_cache": base.answer_cache.model_copy(update={"enabled": False}),
            "workflow": base.workflow.model_copy(update={"show_evidence": False}),
            # On a busy machine a channel may miss its 5 s and drop out, which would read as a changed outcome.
            "retrieval": base.retrieval.model_copy(update={"channel_timeout_s": 120.0}),
        }
    )
    load_builtins()
    llm = RememberingLLM(LLMS.get(settings.llm.backend)(settings))
    embedder = load_embedder(settings)
    parts = Parts(llm=llm, embedder=embedder)  # type: ignore[arg-type]
    after = _after(args.after)
    rows: list[dict[str, Any]] = []
    payload: dict[str, Any] = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": llm.name,
        "split": args.split or "all",
        "stride": args.stride,
        "before": BEFORE,
        "after": after,
        "settings": settings_snapshot(settings),
    }

    def write() -> None:
        if args.output:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            payload["summary"] = summarize(rows)
            payload["rows"] = rows
            args.output.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", "utf-8")

    def keep(row: dict[str, Any]) -> None:
        rows.append(row)
        write()

    if args.demo:
        with tempfile.TemporaryDirectory(prefix="ragbench-calls-") as state:
            paths = settings.paths.model_copy(update={"state_dir": Path(state)})
            engine = build_engine(settings.model_copy(update={"paths": paths}), parts)
            try:
                engine.intents.warm_up()
                doc_of = {d.doc_id: d.name for d in engine.library.documents()}
                measure(engine, llm, embedder, demo_items(args.routing, args.split), doc_of, after, keep)
            finally:
                engine.close()
        write()
    if args.set_file:
        from ragbench.answers.state import prepare_state, state_folder

        answer_set, items = set_items(args.set_file, args.split, args.stride)
        if args.turns:
            items = [i for i in items if i.group == "set" and i.history]

        def engine_of(state: Path) -> Engine:
            paths = settings.paths.model_copy(update={"state_dir": state, "load_demo": False})
            return build_engine(settings.model_copy(update={"paths": paths}), parts)

        folder = args.state or state_folder(answer_set, settings, args.cache)
        engine, _ = prepare_state(answer_set, engine_of, folder)
        try:
            docs = engine.library.documents()
            doc_of = {d.doc_id: doc.id for d in docs for doc in answer_set.documents if d.name == doc.name}
            measure(engine, llm, embedder, items, doc_of, after, keep)
        finally:
            engine.close()
        write()
    print(render(summarize(rows)))
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, parse_counts(_parser(), argv, "stride"))


if __name__ == "__main__":
    raise SystemExit(main())
