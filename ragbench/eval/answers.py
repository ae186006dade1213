"""Answer quality on a question set with gold answers and supporting documents (HotpotQA in BEIR layout):
how each answering mode (workflow, agent) does, question by question. Nothing here prints or calls a model.

- Answers are scored as the official HotpotQA / SQuAD scripts do: both sides normalised (lower case, no
  punctuation, no articles a/an/the, single spaces), then exact match and token F1, the best over the gold
  answers. Citation markers ([1], [2, 3]) are removed from the app's answer first. Since the app answers in
  sentences while gold answers are a few words, ``contains`` (the gold answer appears, word for word, in the
  normalised answer) is reported beside them.
- "Both supports retrieved": every qrels document of the question is among the documents of the passages the
  answer was written from (workflow: the passages in the answer prompt; agent: every passage it found, plus
  those in the prompt).
- ``collect`` reads one question's engine events into what a row needs; ``summarize`` turns rows into the
  figures per mode, and ``paired`` compares two modes on the questions both answered.
"""

from __future__ import annotations

import re
import statistics
import string
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragapp.core.events import EngineEvent
from ragapp.core.turn import Turn

# -- answers ----------------------------------------------------------------------------------------

# [1], [1, 2], [1][2], [1-3], and the full-width brackets a Chinese answer may use.
_CITATION = re.compile(r"\s*[\[【]\s*\d+(?:\s*[,，、;\-–]\s*\d+)*\s*[\]】]")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)
_YES_NO = ("yes", "no", "noanswer")


def strip_citations(text: str) -> str:
    """``text`` without citation markers ("Paris [1][2]." -> "Paris.")."""
    return _CITATION.sub("", text).strip()


def normalize_answer(text: str) -> str:
    """The official normalisation: lower case, punctuation removed, articles removed, whitespace collapsed."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, truth: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(truth))


def f1_score(prediction: str, truth: str) -> float:
    """Token F1 as HotpotQA scores it: a yes/no/noanswer on either side scores only against the same word."""
    pred, gold = normalize_answer(prediction), normalize_answer(truth)
    if (pred in _YES_NO or gold in _YES_NO) and pred != gold:
        return 0.0
    pred_tokens, gold_tokens = pred.split(), gold.split()
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def contains_answer(prediction: str, truth: str) -> float:
    """1.0 when the normalised gold answer occurs in the normalised prediction as whole words."""
    gold = normalize_answer(truth)
    return float(bool(gold) and f" {gold} " in f" {normalize_answer(prediction)} ")


@dataclass(frozen=True)
class AnswerScores:
    em: float
    f1: float
    contains: float


def best_over(answers: Sequence[str], prediction: str, metric: Callable[[str, str], float]) -> float:
    """The best score of ``prediction`` against any gold answer (0.0 without gold answers)."""
    return max((metric(prediction, gold) for gold in answers), default=0.0)


def score_answer(prediction: str, answers: Sequence[str]) -> AnswerScores:
    """EM, F1 and contains of the app's answer (citations removed), each the best over ``answers``."""
    text = strip_citations(prediction)
    return AnswerScores(
        best_over(answers, text, exact_match),
        best_over(answers, text, f1_score),
        best_over(answers, text, contains_answer),
    )


# -- supporting documents ----------------------------------------------------------------------------


def supports_found(supports: Collection[str], documents: Iterable[str]) -> int:
    """How many of the supporting documents are among ``documents``."""
    return len(set(supports) & set(documents))


def both_supports(supports: Collection[str], documents: Iterable[str]) -> bool:
    """Every supporting document is among ``documents`` (False when there are none to find)."""
    return bool(supports) and set(supports) <= set(documents)


# -- one question's events ---------------------------------------------------------------------------

_PREVIEW_SOURCES = re.compile(r"^\d+ (?:passage\(s\)|chunk\(s\) of):? (.+)$")


def preview_sources(preview: str, known: Collection[str]) -> list[str]:
    """The source names in an agent step's preview ("3 passage(s): A.txt, B, C.txt" or "2 chunk(s) of A.txt").
    Names may hold ", " themselves, so the pieces are joined back until they form a name in ``known``."""
    match = _PREVIEW_SOURCES.match(preview.strip())
    if not match:
        return []
    names: list[str] = []
    pending = ""
    for piece in match.group(1).split(", "):
        pending = f"{pending}, {piece}" if pending else piece
        if pending in known:
            names.append(pending)
            pending = ""
    return names


@dataclass
class Observed:
    """What one ``Engine.ask`` showed: the answer, the passages' documents, the agent's steps, the notices."""

    answer: str = ""
    grounded: bool = False
    mode: str = ""  # the mode that answered (auto: the one it chose; agent: "workflow" after a fallback)
    prompt_docs: list[str] = field(default_factory=list)  # documents of the passages in the answer prompt
    found_docs: list[str] = field(default_factory=list)  # agent: documents of every passage its tools returned
    steps: int = 0
    failed_steps: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)  # what was searched (agent) or the rewritten parts
    notices: list[str] = field(default_factory=list)
    fallback: bool = False
    error: str | None = None
    replies: list[str] = field(default_factory=list)  # the model's raw replies, when the caller records them


def collect(
    events: Iterable[EngineEvent], mode: str, doc_of_source: Mapping[str, str], doc_of_chunk: Callable[[str], str]
) -> Observed:
    """Read the events of one question. ``doc_of_source`` maps a source name to its document id (for agent
    step previews); ``doc_of_chunk`` maps a chunk id to its document id."""
    turn = Turn.of(events)
    seen = Observed(mode=turn.mode or mode, answer=turn.text if turn.answer else "", error=turn.failure("generate"))
    seen.grounded = turn.answer is not None and turn.answer.grounded
    if turn.rewrite is not None:
        seen.queries.extend(q for q in turn.rewrite.sub_questions if q not in seen.queries)
    seen.prompt_docs.extend(_new(seen.prompt_docs, (chunk.doc_id for chunk in turn.context)))
    for notice in turn.notices:
        seen.notices.append(notice.message)
        if "workflow" in notice.message.lower():
            seen.fallback = True
            seen.mode = "workflow"
    for step in turn.agent_steps:  # each as it ended, with its start's arguments
        seen.steps = max(seen.steps, step.step)
        if step.status == "started":
            continue
        seen.failed_steps += step.status == "failed"
        arguments = step.arguments
        call = {"step": step.step, "tool": step.tool, "arguments": arguments, "status": step.status}
        call.update({"thought": step.thought, "preview": step.preview, "error": step.error})
        seen.tool_calls.append(call)
        if step.tool == "search_knowledge" and isinstance(arguments.get("query"), str):
            seen.queries.append(arguments["query"])
        if step.status == "finished":
            docs = [doc_of_source[name] for name in preview_sources(step.preview, doc_of_source)]
            if step.tool == "read_chunk" and isinstance(arguments.get("chunk_id"), str):
                docs.append(doc_of_chunk(arguments["chunk_id"]))
            seen.found_docs.extend(_new(seen.found_docs, docs))
    return seen


def _new(have: Sequence[str], items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in have and item not in out:
            out.append(item)
    return out


# -- one row per question and mode ------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    """Model calls and estimated tokens spent on one question."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __sub__(self, other: Usage) -> Usage:
        return Usage(
            self.calls - other.calls,
            self.prompt_tokens - other.prompt_tokens,
            self.completion_tokens - other.completion_tokens,
        )

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class AnswerRow:
    query_id: str
    question: str
    gold: tuple[str, ...]
    mode: str  # asked for: workflow, agent or auto
    answered_by: str  # the mode that answered: auto's choice; "workflow" after an agent fallback
    answer: str
    em: float
    f1: float
    contains: float
    supports: tuple[str, ...]  # the qrels documents
    prompt_docs: tuple[str, ...]
    found_docs: tuple[str, ...]  # agent: every document its tools returned
    supports_in_prompt: int
    supports_found: int  # in the prompt or (agent) found by a tool
    both_supports: bool
    usage: Usage
    seconds: float
    steps: int = 0
    failed_steps: int = 0
    fallback: bool = False
    grounded: bool = False
    queries: tuple[str, ...] = ()
    tool_calls: tuple[dict[str, Any], ...] = ()
    notices: tuple[str, ...] = ()
    error: str | None = None
    replies: tuple[str, ...] = ()  # the model's raw replies, in order (agent decisions, then the answer)

    def as_json(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "question": self.question,
            "gold": list(self.gold),
            "mode": self.mode,
            "answered_by": self.answered_by,
            "answer": self.answer,
            "em": self.em,
            "f1": round(self.f1, 4),
            "contains": self.contains,
            "supports": list(self.supports),
            "supports_in_prompt": self.supports_in_prompt,
            "supports_found": self.supports_found,
            "both_supports": self.both_supports,
            "prompt_docs": list(self.prompt_docs),
            "found_docs": list(self.found_docs),
            "model_calls": self.usage.calls,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "seconds": round(self.seconds, 2),
            "steps": self.steps,
            "failed_steps": self.failed_steps,
            "fallback": self.fallback,
            "grounded": self.grounded,
            "queries": list(self.queries),
            "tool_calls": list(self.tool_calls),
            "notices": list(self.notices),
            "error": self.error,
            "replies": list(self.replies),
        }


def score_row(
    query_id: str,
    question: str,
    gold: Sequence[str],
    supports: Collection[str],
    mode: str,
    seen: Observed,
    usage: Usage,
    seconds: float,
) -> AnswerRow:
    scores = score_answer(seen.answer, gold)
    docs = [*seen.prompt_docs, *_new(seen.prompt_docs, seen.found_docs)]
    return AnswerRow(
        query_id=query_id,
        question=question,
        gold=tuple(gold),
        mode=mode,
        answered_by=seen.mode or mode,
        answer=seen.answer,
        em=scores.em,
        f1=scores.f1,
        contains=scores.contains,
        supports=tuple(sorted(supports)),
        prompt_docs=tuple(seen.prompt_docs),
        found_docs=tuple(seen.found_docs),
        supports_in_prompt=supports_found(supports, seen.prompt_docs),
        supports_found=supports_found(supports, docs),
        both_supports=both_supports(supports, docs),
        usage=usage,
        seconds=seconds,
        steps=seen.steps,
        failed_steps=seen.failed_steps,
        fallback=seen.fallback,
        grounded=seen.grounded,
        queries=tuple(seen.queries),
        tool_calls=tuple(seen.tool_calls),
        notices=tuple(seen.notices),
        error=seen.error,
        replies=tuple(seen.replies),
    )


# -- figures ----------------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def median(values: Sequence[float]) -> float | None:
    """The middle value (the mean of the two middle ones for an even count); None for none."""
    return statistics.median(values) if values else None


def summarize_mode(rows: Sequence[AnswerRow]) -> dict[str, Any]:
    """The figures of one mode's rows, as plain data."""
    seconds = [r.seconds for r in rows]
    return {
        "questions": len(rows),
        "both_supports": _mean([float(r.both_supports) for r in rows]),
        "both_supports_in_prompt": _mean(
            [float(bool(r.supports) and r.supports_in_prompt == len(r.supports)) for r in rows]
        ),
        "supports_recall": _mean([r.supports_found / len(r.supports) for r in rows if r.supports]),
        "em": _mean([r.em for r in rows]),
        "f1": _mean([r.f1 for r in rows]),
        "contains": _mean([r.contains for r in rows]),
        "grounded": _mean([float(r.grounded) for r in rows]),
        "model_calls": _mean([float(r.usage.calls) for r in rows]),
        "prompt_tokens": _mean([float(r.usage.prompt_tokens) for r in rows]),
        "completion_tokens": _mean([float(r.usage.completion_tokens) for r in rows]),
        "tokens": _mean([float(r.usage.tokens) for r in rows]),
        "seconds_p50": median(seconds),
        "seconds_mean": _mean(seconds),
        "steps": _mean([float(r.steps) for r in rows]),
        "failed_steps": _mean([float(r.failed_steps) for r in rows]),
        "searches": _mean([float(sum(c["tool"] == "search_knowledge" for c in r.tool_calls)) for r in rows]),
        "fallbacks": sum(r.fallback for r in rows),
        "errors": sum(r.error is not None for r in rows),
    }


def paired(rows: Sequence[AnswerRow], first: str, second: str) -> dict[str, Any]:
    """``second`` against ``first`` on the questions both answered: how often its F1 and its support
    recall were higher, lower or the same."""
    by_mode: dict[str, dict[str, AnswerRow]] = {first: {}, second: {}}
    for row in rows:
        if row.mode in by_mode:
            by_mode[row.mode][row.query_id] = row
    both = [q for q in by_mode[first] if q in by_mode[second]]

    def tally(value: Callable[[AnswerRow], float]) -> dict[str, int]:
        diffs = [value(by_mode[second][q]) - value(by_mode[first][q]) for q in both]
        return {
            "better": sum(d > 1e-9 for d in diffs),
            "worse": sum(d < -1e-9 for d in diffs),
            "same": sum(abs(d) <= 1e-9 for d in diffs),
        }

    return {
        "modes": [first, second],
        "questions": len(both),
        "f1": tally(lambda r: r.f1),
        "contains": tally(lambda r: r.contains),
        "supports": tally(lambda r: float(r.supports_found)),
    }


def summarize(rows: Sequence[AnswerRow], modes: Sequence[str]) -> dict[str, Any]:
    """Per mode (in ``modes`` order) its figures; with two or more modes, each later one paired with the first."""
    summary: dict[str, Any] = {"modes": {m: summarize_mode([r for r in rows if r.mode == m]) for m in modes}}
    summary["paired"] = [paired(rows, modes[0], other) for other in modes[1:]]
    return summary
