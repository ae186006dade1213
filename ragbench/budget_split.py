"""``python -m ragbench.budget_split``: the context budget's split, measured without generating answers.

    python -m ragbench.budget_split --set data/eval/answers/debian-blind.yaml --split dev \\
        [--windows 1024,1536,2048,4096] [--stride N] [--state DIR] [--output results/budget/NAME.json]

Each answerable question of the split goes through the app's retrieval once (as ``ragbench.answers.retrieval``:
both channels, fusion, the reranker, the relevance gate; no model call). Then, for every split of the budget
table and every window (``workflow.context_window``, the answer's ``max_tokens`` kept as configured), its answer
prompt is fitted as the app fits it (``fold_plan``, ``plan_budget``, ``fit_prompt``), in two conditions:

- ``as asked``: the question with the set's own earlier turns (multi-turn questions), else none;
- ``in a conversation``: after the three questions before it in the set, each answered by the first 300
  characters of its own best passage (an answer quotes its passage), then its own turns.

Folding needs the model; here the summary is what the app writes when the model cannot summarise (the folded
questions, cut to the summary's length), so the counts hold for any summary of that length.

Reported per split, window and condition: evidence in prompt (a passage on the evidence page or section reaches
the prompt), answer in prompt (every must_contain entry is in the passages as the prompt shows them, condensed),
passages kept, the conversation's tokens kept and how often the prompt had to fold turns, condense passages
further or drop passages. "current" is the split before the budget table: the conversation up to 30% of the
window less the answer and the instructions, the passages the rest, and no share flowing between them.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.types import ChatTurn, RetrievedChunk
from ragapp.qa.budget import (
    fit_passages,
    fit_turns,
    fold_plan,
    passages_tokens,
    plan_budget,
    text_tokens,
    turns_tokens,
)
from ragapp.qa.condense import condense
from ragapp.qa.prompt_fit import fit_prompt
from ragapp.qa.prompts import answer_messages
from ragbench.answers.answer_set import Question, load_set
from ragbench.answers.scoring import contains_all, on_evidence
from ragbench.answers.state import prepare_state, state_folder
from ragbench.cli import parse_counts, run_command

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine

# instructions, history, memories, passages, tools; None: the split before the budget table
SPLITS: dict[str, tuple[float, float, float, float, float] | None] = {
    "current": None,
    "seed": (0.2, 0.3, 0.0, 0.4, 0.1),
    "seed, memories from history": (0.2, 0.25, 0.05, 0.4, 0.1),
    "lean history": (0.2, 0.15, 0.05, 0.5, 0.1),
    "rich history": (0.15, 0.4, 0.05, 0.3, 0.1),
}
CONDITIONS = ("as asked", "in a conversation")
EARLIER = 3  # questions before it in a conversation
REPLY_CHARS = 300
LEGACY_HISTORY_SHARE = 0.3


@dataclass(frozen=True)
class Asked:
    """One question's retrieval, done once for every split and window."""

    question: Question
    passages: list[RetrievedChunk]
    doc_of: dict[str, str]  # the app's document id -> the set's


@dataclass(frozen=True)
class Fitted:
    evidence: bool
    answer: bool
    passages: int
    passage_tokens: int
    history_tokens: int
    folded: int  # messages folded beyond the recent window because of the budget
    condensed: bool  # passages condensed further than the setting
    dropped: bool


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.budget_split", description=__doc__.split("\n")[0])
    p.add_argument("--set", dest="set_file", type=Path, required=True)
    p.add_argument("--split", choices=("dev", "test"), required=True, help="dev to choose, test to report.")
    p.add_argument("--windows", default="1024,1536,2048,4096", help="context windows, comma-separated.")
    p.add_argument("--stride", type=int, default=1, help="every Nth question.")
    p.add_argument("--state", type=Path, help="engine state folder to reuse (default: keyed under --cache).")
    p.add_argument("--cache", type=Path, default=REPO_ROOT / ".cache" / "answers")
    p.add_argument("--output", type=Path)
    return p


def history_for(asked: Sequence[Asked], index: int, condition: str) -> list[ChatTurn]:
    """The conversation before question ``index`` in ``condition``."""
    turns: list[ChatTurn] = []
    if condition == "in a conversation":
        for earlier in asked[max(0, index - EARLIER) : index]:
            reply = earlier.passages[0].chunk.text[:REPLY_CHARS] if earlier.passages else "I could not find it."
            turns += [ChatTurn("user", earlier.question.question), ChatTurn("assistant", reply)]
    for turn in asked[index].question.turns:
        turns += [ChatTurn("user", turn.user), ChatTurn("assistant", turn.assistant)]
    return turns


def settings_for(base: Settings, window: int, shares: tuple[float, ...] | None) -> Settings:
    workflow = base.workflow.model_copy(update={"context_window": window})
    names = ("instructions", "history", "memories", "passages", "tools")
    budget = base.budget if shares is None else base.budget.model_validate(dict(zip(names, shares, strict=True)))
    return base.model_copy(update={"workflow": workflow, "budget": budget})


def fit_one(settings: Settings, item: Asked, history: list[ChatTurn], legacy: bool) -> Fitted:
    """``item``'s answer prompt under ``settings`` (``legacy``: as before the budget table)."""
    q = item.question
    wf = settings.workflow
    instructions = answer_messages(q.question, (), ())[0].content + q.question
    recent = max(0, len(history) - 2 * wf.recent_turns)
    count, chars = (recent, wf.summary_chars) if legacy else fold_plan(settings, "", history)
    asked_before = " / ".join(t.content.strip()[:80] for t in history[:count] if t.role == "user")
    summary = f"Earlier questions: {asked_before}"[:chars] if count else ""
    rest = history[count:]
    if legacy:  # the split before the budget table (git show 79cc4b5^:ragapp/qa/budget.py)
        window = wf.context_window or settings.llm.n_ctx
        fixed = plan_budget(settings, instructions).instructions
        room = max(0, window - settings.llm.max_tokens - fixed)
        share = int(room * LEGACY_HISTORY_SHARE)
        kept = fit_passages(item.passages, room - share)
        turns = fit_turns(rest, share)
        shown = condense(q.question, kept, wf.condense_keep)
        history_tokens = turns_tokens(turns) + text_tokens(summary)
        condensed = False
    else:
        fitted = fit_prompt(q.question, plan_budget(settings, instructions), item.passages, rest, summary,
                            wf.condense_keep)  # fmt: skip
        kept, shown = fitted.passages, condense(q.question, fitted.passages, fitted.condense_keep)
        history_tokens = fitted.used["history"]
        condensed = fitted.condense_keep != wf.condense_keep
    text = "\n".join(c.chunk.text for c in shown)
    return Fitted(
        evidence=any(on_evidence(c.chunk, item.doc_of.get(c.chunk.doc_id), q.evidence) for c in kept),
        answer=contains_all(text, q.must_contain),
        passages=len(kept),
        passage_tokens=passages_tokens(shown),
        history_tokens=history_tokens,
        folded=count - recent,
        condensed=condensed,
        dropped=len(kept) < len(item.passages),
    )


def summarise(rows: Sequence[Fitted]) -> dict[str, Any]:
    n = len(rows) or 1
    return {
        "questions": len(rows),
        "evidence in prompt": round(sum(r.evidence for r in rows) / n, 3),
        "answer in prompt": round(sum(r.answer for r in rows) / n, 3),
        "passages": round(sum(r.passages for r in rows) / n, 2),
        "passage tokens": round(sum(r.passage_tokens for r in rows) / n),
        "history tokens": round(sum(r.history_tokens for r in rows) / n),
        "folded more": round(sum(r.folded > 0 for r in rows) / n, 3),
        "condensed more": round(sum(r.condensed for r in rows) / n, 3),
        "dropped": round(sum(r.dropped for r in rows) / n, 3),
    }


def retrieve_all(engine: Engine, questions: Sequence[Question], doc_of: dict[str, str]) -> list[Asked]:
    asked = []
    for index, q in enumerate(questions, start=1):
        asked.append(Asked(q, list(engine.chat.retrieve(q.question).chunks), doc_of))
        print(f"[{index}/{len(questions)}] retrieved {q.id}", file=sys.stderr)
    return asked


def _run(args: argparse.Namespace) -> int:
    from ragapp.engine.build import build_engine, load_builtins

    answer_set = load_set(args.set_file)
    questions = [q for q in answer_set.questions if q.answerable and q.split == args.split][:: args.stride]
    windows = [int(w) for w in args.windows.split(",")]
    base = Settings()
    load_builtins()
    folder = args.state or state_folder(answer_set, base, args.cache)

    def engine_of(state: Path) -> Engine:
        paths = base.paths.model_copy(update={"state_dir": state, "load_demo": False})
        return build_engine(base.model_copy(update={"paths": paths}))

    engine, how = prepare_state(answer_set, engine_of, folder)
    print(f"{answer_set.name}: {len(questions)} questions over {folder} ({how})", file=sys.stderr)
    try:
        documents = engine.library.documents()
        doc_of = {d.doc_id: doc.id for d in documents for doc in answer_set.documents if d.name == doc.name}
        asked = retrieve_all(engine, questions, doc_of)
    finally:
        engine.close()
    results: dict[str, Any] = {}
    for condition in CONDITIONS:
        histories = [history_for(asked, i, condition) for i in range(len(asked))]
        for window in windows:
            for name, shares in SPLITS.items():
                settings = settings_for(base, window, shares)
                rows = [fit_one(settings, a, h, shares is None) for a, h in zip(asked, histories, strict=True)]
                results[f"{condition} · {window} · {name}"] = summarise(rows)
    print(render(results))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        payload = {"set": str(args.set_file), "split": args.split, "stride": args.stride, "state": str(folder),
                   "max_tokens": base.llm.max_tokens, "splits": SPLITS, "results": results}  # fmt: skip
        args.output.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", "utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def render(results: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| condition · window · split | evidence in prompt | answer in prompt | passages | passage tokens | "
        "history tokens | folded more | condensed more | dropped |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, s in results.items():
        lines.append(
            f"| {key} | {s['evidence in prompt']:.0%} | {s['answer in prompt']:.0%} | {s['passages']} | "
            f"{s['passage tokens']} | {s['history tokens']} | {s['folded more']:.0%} | {s['condensed more']:.0%} | "
            f"{s['dropped']:.0%} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, parse_counts(_parser(), argv, "stride"))


if __name__ == "__main__":
    raise SystemExit(main())
