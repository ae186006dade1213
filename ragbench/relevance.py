"""``python -m ragbench.relevance``: choose the relevance gate's rules on BEIR sets, not on the demo.

    python -m ragbench.relevance --limit 100 --cache .cache/eval --output results/relevance.json

Each question runs once through the app's retrieval (both channels, zscore fusion, the shipped reranker, the
app's budgets); every candidate rule set (``ragapp.retrieval.relevance``) then decides on the same ranked
candidates, and is scored by:

- **recall in prompt**: share of questions with a relevant passage among the ``context_top_k`` kept chunks;
- **empty prompt**: share of questions for which nothing was kept;
- **irrelevant kept**: mean number of kept chunks (in the prompt) that are not relevant;
- **all in prompt** (JSON only; for multi-hop sets): every relevant document found among the candidates has a
  chunk in the prompt.

A passage the reranker does not judge (other language) is also scored by the reranker here, to measure
whether its zh->en scores are usable ("xlang reranker" rule sets).

``sample(question, relevant)`` takes the relevant document ids, or None for a question with no answer in the
knowledge base: BEIR sets only have answerable questions, so "unanswerable" rows appear only when such
questions are passed (a real-document answer set); every other figure works the same for them.

HotpotQA's 4,858 paragraphs take ~30 min to embed on 2 shared cores, so its corpus is pooled: the first
``--limit`` questions' supporting paragraphs plus each question's ``--pool`` best BM25 paragraphs over the
whole corpus (its hard negatives). Smaller than the real pool, so its figures are labelled "pooled".
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ragapp.config import Settings
from ragapp.core.chunks import doc_of_chunk_id
from ragapp.rerank.base import passage_text
from ragapp.rerank.builtin import CompactReranker
from ragapp.rerank.compact import SHIPPED_DIR
from ragapp.retrieval.channels import CHANNELS, ChannelDeps
from ragapp.retrieval.pipeline import RetrievalPipeline
from ragapp.retrieval.relevance import Candidate, RelevanceRules, candidates_of, decide
from ragbench.cli import run_command
from ragbench.eval.beir import BeirDataset, load_beir
from ragbench.eval.corpus import build_index

SETS = {  # name -> (queries folder, corpus folder or None: the same)
    "xquad-zh": ("xquad/zh", None),
    "xquad-zh-en": ("xquad/zh", "xquad/en"),
    "xquad-en": ("xquad/en", None),
    "hotpotqa": ("hotpotqa-dev200", None),
}


@dataclass(frozen=True)
class Sample:
    """One question's ranked candidates and which of them are relevant (None: the question has no answer)."""

    candidates: tuple[Candidate, ...]
    relevant: frozenset[str] | None  # chunk ids
    cross_scores: dict[str, float]  # chunk id -> reranker score of a passage it did not judge


def sampler(pipeline: RetrievalPipeline, reranker: CompactReranker) -> Callable[[str, set[str] | None], Sample]:
    """``sample(question, relevant doc ids or None)`` through ``pipeline``."""

    def sample(question: str, relevant: set[str] | None) -> Sample:
        result = pipeline.retrieve(question)
        candidates = candidates_of(question, result.candidates)
        unjudged = [
            (c.chunk.chunk_id, passage_text(c.chunk))
            for c, view in zip(result.candidates, candidates, strict=True)
            if c.rerank_score is None and not view.same_language
        ]
        scores = reranker.score(question, [text for _, text in unjudged]) if unjudged else []
        hits = None if relevant is None else frozenset(c.chunk_id for c in candidates if doc_of(c) in relevant)
        return Sample(tuple(candidates), hits, {cid: s for (cid, _), s in zip(unjudged, scores, strict=True)})

    return sample


def answer_set_samples(set_file: Path, cache: Path, settings: Settings, reranker: CompactReranker) -> list[Sample]:
    """One sample per question of a real-document answer set, over the engine state ``python -m
    ragbench.answers`` built for it: relevant = the candidates on an evidence page or section; an unanswerable
    question has none (None), so "unanswerable_empty" says how often the gate leaves its prompt empty."""
    from ragapp.ingest.pipeline import KnowledgeStore
    from ragapp.models.embedders import load_embedder
    from ragbench.answers.answer_set import load_set
    from ragbench.answers.replay import newest_state
    from ragbench.answers.scoring import on_evidence

    answer_set = load_set(set_file)
    state = newest_state(answer_set, cache)
    knobs = settings.retrieval.model_copy(update={"cache_size": 0})
    store = KnowledgeStore.open(state, load_embedder(settings))
    deps = ChannelDeps(store.embedder, store.vectors, store.keywords)
    pipeline = RetrievalPipeline([CHANNELS.get(c)(deps) for c in knobs.channels], store.catalog, reranker, knobs)
    doc_of_set = {
        d.doc_id: doc.id for d in store.catalog.documents() for doc in answer_set.documents if d.name == doc.name
    }
    sample = sampler(pipeline, reranker)
    out = []
    for q in tqdm(answer_set.questions, desc=answer_set.name, unit="q", leave=False):
        drawn = sample(q.question, None)
        chunks = store.catalog.chunks([c.chunk_id for c in drawn.candidates])
        relevant = (
            frozenset(
                cid for cid, chunk in chunks.items() if on_evidence(chunk, doc_of_set.get(chunk.doc_id), q.evidence)
            )
            if q.answerable
            else None
        )
        out.append(dataclasses.replace(drawn, relevant=relevant))
    pipeline.close()
    store.catalog.close()
    return out


def dump_sample(s: Sample) -> dict[str, Any]:
    relevant = None if s.relevant is None else sorted(s.relevant)
    return {"candidates": [dataclasses.asdict(c) for c in s.candidates], "relevant": relevant, "cross": s.cross_scores}


def load_sample(row: dict[str, Any]) -> Sample:
    relevant = row["relevant"]
    return Sample(
        tuple(Candidate(**c) for c in row["candidates"]),
        None if relevant is None else frozenset(relevant),
        dict(row["cross"]),
    )


def doc_of(c: Candidate) -> str:
    return doc_of_chunk_id(c.chunk_id)


@dataclass(frozen=True)
class RuleSet:
    name: str
    rules: RelevanceRules | None  # None: no gate, every candidate is kept
    xlang_reranker: bool = False  # passages in another language are judged by the reranker's own score
    old: bool = False  # the gate before this change: unjudged passages fall back to the channel thresholds


# (vector rank within, similarity from, lead over the other-language median, keyword rank within) for passages
# in another language; multilingual-e5 puts a Chinese question's English answer at ~0.77 and unrelated English
# text at ~0.75, so the grid sits there. The lead and keyword rules came from the answer set's traces, where a
# mixed zh/en knowledge base let unrelated Chinese passages into English questions' prompts.
XLANG = (
    *((n, s, 0.0, 0) for n, s in ((0, 0.0), (1, 0.0), (2, 0.0), (3, 0.0), (1, 0.74), (3, 0.74), (3, 0.76), (5, 0.76))),
    (3, 0.78, 0.0, 0),
    (3, 0.74, 0.0, 2),
    (3, 0.74, 0.01, 0),
    (3, 0.74, 0.01, 2),
    (3, 0.74, 0.02, 0),
    (3, 0.74, 0.02, 2),
)


def rule_sets(base: RelevanceRules) -> list[RuleSet]:
    off = dataclasses.replace(
        base,
        agreement_top_n=0,
        rerank_margin=None,
        cross_language_top_n=0,
        cross_language_lead=0.0,
        cross_language_keyword_top_n=0,
    )
    out = [RuleSet("no gate", None), RuleSet("threshold 0.2 (before)", off, old=True)]
    for t in (0.05, 0.1, 0.2, 0.3):
        for n, k in ((0, 0), (3, 3), (5, 3), (5, 5), (10, 5)):
            for margin in (None, 0.3, 0.5, 0.7, 0.9):
                for xn, xs, lead, kw in XLANG:
                    rules = dataclasses.replace(
                        off,
                        min_rerank_score=t,
                        agreement_top_n=n,
                        agreement_max_fused_rank=k,
                        rerank_margin=margin,
                        cross_language_top_n=xn,
                        min_cross_language_similarity=xs,
                        cross_language_lead=lead,
                        cross_language_keyword_top_n=kw,
                    )
                    agree = f"agree top{n}@{k}" if n else "no agree"
                    xlang = (
                        f"xlang vec top{xn} ≥{xs:g}"
                        + (f" lead {lead:g}" if lead else "")
                        + (f" kw top{kw}" if kw else "")
                    )
                    name = f"t{t:g} · {agree} · margin {margin} · {xlang}"
                    out.append(RuleSet(name, rules))
        out.append(RuleSet(f"t{t:g} · no agree · xlang reranker", dataclasses.replace(off, min_rerank_score=t), True))
        agreeing = dataclasses.replace(off, min_rerank_score=t, agreement_top_n=3, agreement_max_fused_rank=3)
        out.append(RuleSet(f"t{t:g} · agree top3@3 · xlang reranker", agreeing, True))
    out.append(RuleSet("shipped defaults", base))
    out.append(RuleSet("shipped + require names", dataclasses.replace(base, require_names=True)))
    return out


def prompt_of(s: Sample, rule: RuleSet, top_k: int) -> list[str]:
    if rule.rules is None:
        return [c.chunk_id for c in s.candidates][:top_k]
    candidates = s.candidates
    if rule.xlang_reranker:
        candidates = tuple(
            dataclasses.replace(c, rerank_score=s.cross_scores[c.chunk_id], same_language=True)
            if c.chunk_id in s.cross_scores
            else c
            for c in candidates
        )
    decisions = decide(candidates, rule.rules, reranked=not rule.old)
    return [c.chunk_id for c, d in zip(candidates, decisions, strict=True) if d.kept][:top_k]


def score(samples: Sequence[Sample], rule: RuleSet, top_k: int) -> dict[str, float]:
    answerable = [s for s in samples if s.relevant is not None]
    prompts = [prompt_of(s, rule, top_k) for s in samples]
    found = [bool(set(p) & s.relevant) for s, p in zip(samples, prompts, strict=True) if s.relevant is not None]
    irrelevant = [sum(cid not in (s.relevant or ()) for cid in p) for s, p in zip(samples, prompts, strict=True)]
    every = [  # multi-hop: each relevant document among the candidates has a chunk in the prompt
        bool(s.relevant)
        and {doc_of_chunk_id(c) for c in s.relevant} <= {doc_of_chunk_id(c) for c in set(p) & s.relevant}
        for s, p in zip(samples, prompts, strict=True)
        if s.relevant is not None
    ]
    out = {
        "recall_in_prompt": _mean(found),
        "all_in_prompt": _mean(every),
        "empty_prompt": _mean([not p for p in prompts]),
        "irrelevant_kept": _mean(irrelevant),
    }
    unanswerable = [p for s, p in zip(samples, prompts, strict=True) if s.relevant is None]
    if unanswerable:
        out["unanswerable_empty"] = _mean([not p for p in unanswerable])
    out["questions"] = float(len(answerable))
    return out


def _mean(values: Sequence[float | bool]) -> float:
    return round(statistics.fmean(float(v) for v in values), 4) if values else 0.0


def pooled(
    dataset: BeirDataset, corpus_file: Path, settings: Settings, cache: Path, pool: int
) -> tuple[BeirDataset, Path]:
    """The corpus cut to the questions' supports and each question's ``pool`` best BM25 paragraphs, written
    to a file under ``cache`` (its content names its index)."""
    full = dataset.corpus
    store, _ = build_index(full, corpus_file, settings, cache, corpus_file.parent.name, embed=False)
    keyword = CHANNELS.get("keyword")(ChannelDeps(store.embedder, store.vectors, store.keywords))
    keep: set[str] = set()
    for q in dataset.queries:
        keep |= {d for d, g in dataset.qrels[q.query_id].items() if g > 0}
        docs = dict.fromkeys(doc_of_chunk_id(h.chunk_id) for h in keyword.retrieve(q.text, pool * 3).hits)
        keep |= set(list(docs)[:pool])
    store.catalog.close()
    corpus = tuple(p for p in full if p.doc_id in keep)
    lines = "".join(json.dumps({"_id": p.doc_id, "title": p.title, "text": p.text}) + "\n" for p in corpus)
    path = cache / "pooled" / f"{dataset.name}-{hashlib.sha256(lines.encode()).hexdigest()[:10]}" / "corpus.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(lines, "utf-8")
    return dataclasses.replace(dataset, corpus=corpus), path


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.relevance", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=Path("../shared/data"), help="folder of the BEIR sets")
    p.add_argument("--sets", default="xquad-zh,xquad-zh-en,hotpotqa", help=f"comma-separated: {', '.join(SETS)}")
    p.add_argument("--limit", type=int, default=100, help="first N questions of each set")
    p.add_argument("--pool", type=int, default=10, help="hotpotqa: BM25 paragraphs per question in its corpus")
    p.add_argument("--cache", type=Path, default=Path(".cache/eval"))
    p.add_argument("--output", type=Path, default=Path("results/relevance.json"))
    p.add_argument("--show", type=int, default=12, help="rule sets printed (best by mean recall in prompt)")
    p.add_argument(
        "--answer-set",
        type=Path,
        help="also score a real-document answer set over the state `python -m ragbench.answers` built for it.",
    )
    p.add_argument("--answers-cache", type=Path, default=Path(".cache/answers"), help="where those states are.")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def _run(args: argparse.Namespace) -> int:
    settings = Settings()
    knobs = settings.retrieval.model_copy(update={"cache_size": 0})
    reranker = CompactReranker(SHIPPED_DIR, settings.rerank.max_length, settings.rerank.batch_size)
    per_set: dict[str, list[Sample]] = {}
    for name in [n.strip() for n in args.sets.split(",") if n.strip()]:
        saved = args.cache / "relevance" / f"{name}-limit{args.limit}-pool{args.pool}.json"
        if saved.is_file():  # the retrieval pass is the slow part; rule sets are re-scored in seconds
            per_set[name] = [load_sample(row) for row in json.loads(saved.read_text("utf-8"))]
            continue
        queries, corpus = SETS[name]
        folder = args.data / queries
        dataset = load_beir(folder, "test", args.data / corpus if corpus else None)
        dataset = dataclasses.replace(dataset, queries=dataset.queries[: args.limit])
        corpus_file = (args.data / (corpus or queries)) / "corpus.jsonl"
        if name == "hotpotqa":
            dataset, corpus_file = pooled(dataset, corpus_file, settings, args.cache, args.pool)
        store, index = build_index(dataset.corpus, corpus_file, settings, args.cache, corpus_file.parent.name)
        print(f"{name}: {len(dataset.queries)} questions, {index.chunks} chunks", file=sys.stderr)
        deps = ChannelDeps(store.embedder, store.vectors, store.keywords)
        pipeline = RetrievalPipeline([CHANNELS.get(c)(deps) for c in knobs.channels], store.catalog, reranker, knobs)
        sample = sampler(pipeline, reranker)
        per_set[name] = [
            sample(q.text, {d for d, g in dataset.qrels[q.query_id].items() if g > 0})
            for q in tqdm(dataset.queries, desc=name, unit="q", leave=False)
        ]
        pipeline.close()
        store.catalog.close()
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps([dump_sample(x) for x in per_set[name]], ensure_ascii=False), "utf-8")
    if args.answer_set is not None:
        per_set[args.answer_set.stem] = answer_set_samples(args.answer_set, args.answers_cache, settings, reranker)
    table = report(per_set, rule_sets(RelevanceRules.from_settings(knobs)), knobs.context_top_k)
    chosen = choose(table)
    print(render(table, args.show))
    print(f"chosen: {chosen['name']} (mean {_cell(chosen['mean'])})")
    payload = {
        "limit": args.limit,
        "pool": args.pool,
        "top_k": knobs.context_top_k,
        "chosen": chosen,
        "columns": list(COLUMNS),
        # one compact row per rule set (900 of them): name -> set -> figures in ``columns`` order
        "rule_sets": {r["name"]: {n: [m[c] for c in COLUMNS] for n, m in r["sets"].items()} for r in table},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


METRICS = ("recall_in_prompt", "empty_prompt", "irrelevant_kept")
COLUMNS = ("recall_in_prompt", "all_in_prompt", "empty_prompt", "irrelevant_kept")


def report(per_set: dict[str, list[Sample]], rules: Sequence[RuleSet], top_k: int) -> list[dict[str, Any]]:
    """Each rule set's scores per set, and their means over the sets; best mean recall in prompt first."""
    rows = []
    for rule in rules:
        sets = {name: score(samples, rule, top_k) for name, samples in per_set.items()}
        mean = {m: _mean([s[m] for s in sets.values()]) for m in METRICS}
        knobs = None if rule.rules is None else dataclasses.asdict(rule.rules)
        rows.append({"name": rule.name, "mean": mean, "sets": sets, "rules": knobs, "old": rule.old})
    return sorted(rows, key=lambda r: (-r["mean"]["recall_in_prompt"], r["mean"]["irrelevant_kept"]))


def choose(table: Sequence[dict[str, Any]], slack: float = 0.01) -> dict[str, Any]:
    """The rule, in order: a gated rule set whose mean recall in prompt is within ``slack`` of the best; the
    fewest empty prompts among those; on every set, "all in prompt" (both supports of a multi-hop question)
    no lower than the gate before this change; then the fewest irrelevant chunks kept, and on a tie the
    stricter rule (higher thresholds)."""
    gated = [r for r in table if r["name"] != "no gate"]
    before = next(r for r in table if r["old"])
    best = max(r["mean"]["recall_in_prompt"] for r in gated)
    near = [r for r in gated if r["mean"]["recall_in_prompt"] >= best - slack]
    fewest = min(r["mean"]["empty_prompt"] for r in near)
    near = [r for r in near if r["mean"]["empty_prompt"] <= fewest]
    near = [
        r for r in near if all(m["all_in_prompt"] >= before["sets"][n]["all_in_prompt"] for n, m in r["sets"].items())
    ]
    rules = lambda r: r["rules"] or {}  # noqa: E731
    return min(
        near,
        key=lambda r: (
            r["mean"]["irrelevant_kept"],
            -rules(r).get("min_cross_language_similarity", 0.0),
            -rules(r).get("min_rerank_score", 0.0),
        ),
    )


def render(table: Sequence[dict[str, Any]], show: int) -> str:
    names = list(table[0]["sets"]) if table else []
    head = "| rule set | " + " | ".join(f"{n} recall / empty / irrelevant" for n in names) + " | mean |"
    lines = [head, "|---" * (len(names) + 2) + "|"]
    pinned = [r for r in table if r["name"] in ("no gate", "threshold 0.2 (before)", "shipped defaults")]
    for r in pinned + [r for r in table if r not in pinned][:show]:
        cells = [_cell(r["sets"][n]) for n in names] + [_cell(r["mean"])]
        lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(m: dict[str, float]) -> str:
    cell = f"{m['recall_in_prompt']:.2f} / {m['empty_prompt']:.2f} / {m['irrelevant_kept']:.2f}"
    return cell + (f" (unanswerable empty {m['unanswerable_empty']:.2f})" if "unanswerable_empty" in m else "")


if __name__ == "__main__":
    raise SystemExit(main())
