"""Routing quality on a labelled question set: how often the classifier and the decision rules do what a
careful human router would do with the same intent tree.

The labelled file (YAML or JSON) holds ``{"questions": [{question, expect, lang, note?}, ...]}`` where
``expect`` is a leaf code, a list of leaf codes (any of them is right), ``clarify`` (the app should ask
back) or ``fallback`` (the question is about nothing in the tree). ``run_routing`` classifies and decides
every question; the pure functions below turn the rows into the figures ``python -m ragbench.routing`` shows.
Nothing here prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol, cast, get_args

from ragapp.config import WorkflowSettings
from ragapp.core.errors import ConfigError, LLMError
from ragapp.core.lang import LANGUAGES, Language
from ragapp.router.classifier import Classification, LeafScore
from ragapp.router.decide import Action, RoutingDecision, decide
from ragapp.router.fit import LeafFit
from ragapp.router.tree import IntentTree
from ragbench.eval.runner import percentiles
from ragbench.routing.calibration import summarize_calibration

Outcome = Literal["leaf", "clarify", "fallback"]
ExpectedKind = Literal["route", "system", "clarify", "fallback"]
EXPECTED_KINDS: tuple[ExpectedKind, ...] = get_args(ExpectedKind)
ACTIONS: tuple[Action, ...] = get_args(Action)
ErrorKind = Literal["llm", "unparseable"]


class RoutingSetError(ConfigError):
    """A labelled question file is unreadable or does not fit the tree; ``problems`` lists every reason."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems) or ["the labelled question file is invalid"]
        super().__init__("The labelled questions cannot be used: " + "; ".join(self.problems))


# -- the labelled set ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelledQuestion:
    question: str
    outcome: Outcome
    lang: Language
    expect: tuple[str, ...] = ()  # the right leaves when outcome is "leaf" (any of them), else empty
    note: str = ""

    @property
    def label(self) -> str:
        """How the label reads in tables: 'clarify', 'fallback' or 'a.b | c.d'."""
        return " | ".join(self.expect) if self.outcome == "leaf" else self.outcome


def parse_questions(data: object) -> list[LabelledQuestion]:
    """The labelled questions in ``data`` ({"questions": [...]} or a bare list); ``RoutingSetError`` lists
    every item that is malformed."""
    items = data.get("questions") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        raise RoutingSetError(["the file needs a non-empty 'questions' list"])
    problems: list[str] = []
    out: list[LabelledQuestion] = []
    for index, item in enumerate(items, 1):
        where = f"question {index}"
        if not isinstance(item, Mapping):
            problems.append(f"{where} must be a mapping with 'question', 'expect' and 'lang'")
            continue
        text = item.get("question")
        if not isinstance(text, str) or not text.strip():
            problems.append(f"{where} needs a 'question' (text)")
            continue
        where = f"{where} ({text.strip()[:40]!r})"
        unknown = sorted(set(map(str, item)) - {"question", "expect", "lang", "note"})
        if unknown:
            problems.append(f"{where} has unknown field(s): {', '.join(unknown)}")
        lang = item.get("lang")
        if lang not in LANGUAGES:
            problems.append(f"{where}: 'lang' must be one of {', '.join(LANGUAGES)}, not {lang!r}")
            continue
        lang = cast(Language, lang)
        note = item.get("note") or ""
        if not isinstance(note, str):
            problems.append(f"{where}: 'note' must be text")
            note = ""
        expect = item.get("expect")
        if expect in ("clarify", "fallback"):
            out.append(LabelledQuestion(text.strip(), cast(Outcome, expect), lang, (), note.strip()))
            continue
        codes = [expect] if isinstance(expect, str) else expect
        if not isinstance(codes, list) or not codes or not all(isinstance(c, str) and c.strip() for c in codes):
            problems.append(f"{where}: 'expect' must be a leaf code, a list of leaf codes, 'clarify' or 'fallback'")
            continue
        if any(c.strip() in ("clarify", "fallback") for c in codes):
            problems.append(f"{where}: 'clarify' and 'fallback' cannot be mixed with leaf codes")
            continue
        out.append(LabelledQuestion(text.strip(), "leaf", lang, tuple(c.strip() for c in codes), note.strip()))
    if problems:
        raise RoutingSetError(problems)
    return out


def load_questions(path: Path) -> list[LabelledQuestion]:
    """Read a labelled question file (YAML, which also reads JSON)."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text("utf-8"))
    except OSError as exc:
        raise RoutingSetError([f"cannot read {path}: {exc.strerror or exc}"]) from None
    except yaml.YAMLError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RoutingSetError([f"{path} is not valid YAML or JSON: {first_line}"]) from None
    return parse_questions(data)


def label_problems(questions: Sequence[LabelledQuestion], tree: IntentTree) -> list[str]:
    """Expected codes that are not leaves of ``tree`` (a typo, or a group, which the router never picks)."""
    problems = []
    for item in questions:
        for code in item.expect:
            if code not in tree:
                problems.append(f"{item.question!r} expects {code!r}, which is not in the intent tree")
            elif not tree.is_leaf(code):
                problems.append(f"{item.question!r} expects {code!r}, a group: name one of its leaves")
    return problems


def expected_kind(item: LabelledQuestion, tree: IntentTree) -> ExpectedKind:
    """route (knowledge leaves), system (only SYSTEM leaves), clarify or fallback."""
    if item.outcome != "leaf":
        return item.outcome
    kinds = {node.kind for code in item.expect if (node := tree.get(code)) is not None}
    return "system" if kinds == {"SYSTEM"} else "route"


def matches(item: LabelledQuestion, action: Action, codes: Sequence[str]) -> tuple[bool, bool]:
    """(right, right with any kept code). For a leaf label the app must route or answer directly, and its
    first chosen code (or, for the second figure, any kept code) must be one of the expected ones; for
    clarify and fallback the action alone counts."""
    if item.outcome != "leaf":
        right = action == item.outcome
        return right, right
    if action not in ("route", "system") or not codes:
        return False, False
    return codes[0] in item.expect, any(code in item.expect for code in codes)


# -- one row per question --------------------------------------------------------------------------


@dataclass(frozen=True)
class RoutingRow:
    question: str
    lang: Language
    expected: str  # the label as it reads: 'clarify', 'fallback', 'a.b | c.d'
    kind: ExpectedKind
    action: Action
    codes: tuple[str, ...]  # route/system: the intents kept, best first; clarify: the choices offered
    reason: str
    correct: bool
    any_correct: bool
    seconds: float  # classification and decision, wall clock
    error: str | None = None
    error_kind: ErrorKind | None = None
    ignored: tuple[str, ...] = ()
    scores: tuple[tuple[str, float], ...] = ()  # the model's accepted scores, best first
    reply: str = ""
    note: str = ""
    top: str | None = None  # the leaf the router names first (``ranked_first``); None: it names none
    top_score: float | None = None  # the score the decision gives it
    top_right: bool | None = None  # is it one of the labelled leaves (None: labelled clarify, or no leaf)
    # What its calibrated score was computed from (``ragapp.router.fit``): similarity, margin, model score (None:
    # the embedder decided alone); None when the router had no embedder.
    features: tuple[float, float, float | None] | None = None

    def as_json(self) -> dict[str, Any]:
        return asdict(self) | {
            "seconds": round(self.seconds, 3),
            "scores": {code: round(score, 3) for code, score in self.scores},
            "top_score": None if self.top_score is None else round(self.top_score, 4),
            "features": None if self.features is None else dict(zip(FEATURES, self.features, strict=True)),
        }


def error_kind(classification: Classification | None) -> ErrorKind | None:
    """llm: the call failed (server down, timeout, crash); unparseable: it answered, but no scores could be read."""
    if classification is None or classification.error is None:
        return None
    if classification.reply or "no readable scores" in classification.error:
        return "unparseable"
    return "llm"


FEATURES = ("similarity", "margin", "model")


def ranked_first(decision: RoutingDecision) -> LeafScore | None:
    """The leaf the router names first, with the score its decision gives it: the first leaf it routes to,
    answers with or offers, else the classifier's best-scored leaf (with its calibrated score when the decision
    has one); None when it names none."""
    if decision.intents:
        return decision.intents[0]
    classification = decision.classification
    best = classification.scores[0] if classification is not None and classification.scores else None
    if best is not None and decision.fit is not None and decision.fit.code == best.code:
        return replace(best, score=decision.fit.probability)
    return best


def score_row(item: LabelledQuestion, decision: RoutingDecision, seconds: float, tree: IntentTree) -> RoutingRow:
    right, any_right = matches(item, decision.action, decision.codes)
    classification = decision.classification
    top = ranked_first(decision)
    # A question labelled clarify has no single right leaf: it says nothing about a score's calibration.
    top_right = None if top is None or item.outcome == "clarify" else top.code in item.expect
    return RoutingRow(
        question=item.question,
        lang=item.lang,
        expected=item.label,
        kind=expected_kind(item, tree),
        action=decision.action,
        codes=decision.codes,
        reason=decision.reason,
        correct=right,
        any_correct=any_right,
        seconds=seconds,
        error=classification.error if classification else None,
        error_kind=error_kind(classification),
        ignored=classification.ignored if classification else (),
        scores=tuple((s.code, s.score) for s in classification.scores) if classification else (),
        reply=classification.reply if classification else "",
        note=item.note,
        top=top.code if top is not None else None,
        top_score=top.score if top is not None else None,
        top_right=top_right,
        features=_features(decision.fit) if top is not None and decision.fit is not None else None,
    )


def _features(fit: LeafFit) -> tuple[float, float, float | None]:
    f = fit.features
    return (f.similarity, f.margin, f.model)


class Classifier(Protocol):
    def classify(self, question: str, tree: IntentTree) -> Classification: ...


Route = Callable[[str], RoutingDecision]


def classify_and_decide(classifier: Classifier, tree: IntentTree, settings: WorkflowSettings) -> Route:
    """One classification and the decision rules: the router without its knowledge-base check before asking
    back (``Engine.test_intent`` is the whole router, for a run over indexed documents)."""
    return lambda question: decide(classifier.classify(question, tree), settings, tree)


def run_routing(
    questions: Sequence[LabelledQuestion],
    tree: IntentTree,
    route: Route,
    on_row: Callable[[int, RoutingRow], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[RoutingRow]:
    """Route every question, in order (``tree`` says which expected leaves are SYSTEM ones). When the first
    question's model call fails (no server, no model), raises ``LLMError`` rather than scoring every question
    as a fallback."""
    rows: list[RoutingRow] = []
    for index, item in enumerate(questions):
        start = clock()
        decision = route(item.question)
        row = score_row(item, decision, clock() - start, tree)
        if index == 0 and row.error_kind == "llm":
            raise LLMError(f"the model failed on the first question, so nothing was measured: {row.error}")
        rows.append(row)
        if on_row is not None:
            on_row(index, row)
    return rows


# -- figures ----------------------------------------------------------------------------------------


def accuracy(rows: Sequence[RoutingRow], any_code: bool = False) -> float | None:
    """Share of rows decided right (None for no rows)."""
    if not rows:
        return None
    return sum(r.any_correct if any_code else r.correct for r in rows) / len(rows)


@dataclass(frozen=True)
class PrecisionRecall:
    """For one action (clarify, fallback): how often the app took it, how often it should have, and both."""

    taken: int
    labelled: int
    hits: int

    @property
    def precision(self) -> float | None:
        return self.hits / self.taken if self.taken else None

    @property
    def recall(self) -> float | None:
        return self.hits / self.labelled if self.labelled else None

    def as_json(self) -> dict[str, Any]:
        return {"precision": self.precision, "recall": self.recall} | asdict(self)


def precision_recall(rows: Sequence[RoutingRow], action: Literal["clarify", "fallback"]) -> PrecisionRecall:
    """Precision: of the questions where the app took ``action``, the share labelled so; recall: of the
    questions labelled ``action``, the share where the app took it."""
    taken = [r for r in rows if r.action == action]
    labelled = [r for r in rows if r.kind == action]
    hits = [r for r in taken if r.kind == action]
    return PrecisionRecall(len(taken), len(labelled), len(hits))


def percentiles_ms(seconds: Sequence[float]) -> dict[str, float | None]:
    """p50, p95 (nearest rank, as ``make eval`` counts them) and mean, in milliseconds; None for no values."""
    if not seconds:
        return {"p50": None, "p95": None, "mean": None}
    out: dict[str, float | None] = {name: round(ms, 1) for name, ms in percentiles(seconds).items()}
    return out | {"mean": round(sum(seconds) / len(seconds) * 1000, 1)}


def latency(rows: Sequence[RoutingRow]) -> dict[str, Any]:
    """The first call apart (it processes the whole prompt prefix; later calls reuse it), the rest as
    percentiles."""
    rest = [r.seconds for r in rows[1:]]
    first = round(rows[0].seconds * 1000, 1) if rows else None
    return {"first_ms": first, "n": len(rest), **percentiles_ms(rest)}


def confusion(rows: Sequence[RoutingRow]) -> dict[str, dict[str, int]]:
    """Expected kind -> the app's action -> count (every kind and action present, zeros included)."""
    table: dict[str, dict[str, int]] = {kind: {action: 0 for action in ACTIONS} for kind in EXPECTED_KINDS}
    for row in rows:
        table[row.kind][row.action] += 1
    return table


def _group(rows: Sequence[RoutingRow]) -> dict[str, Any]:
    return {"n": len(rows), "accuracy": accuracy(rows), "accuracy_any": accuracy(rows, any_code=True)}


def summarize(rows: Sequence[RoutingRow]) -> dict[str, Any]:
    """Every figure of a run, as plain data (what the JSON holds and the table shows)."""
    errors = [r for r in rows if r.error_kind is not None]
    with_ignored = [r for r in rows if r.ignored]
    return {
        "questions": len(rows),
        "accuracy": accuracy(rows),
        "accuracy_any": accuracy(rows, any_code=True),
        "by_kind": {kind: _group([r for r in rows if r.kind == kind]) for kind in EXPECTED_KINDS},
        "by_lang": {lang: _group([r for r in rows if r.lang == lang]) for lang in LANGUAGES},
        "clarify": precision_recall(rows, "clarify").as_json(),
        "fallback": precision_recall(rows, "fallback").as_json(),
        "errors": {
            "total": len(errors),
            "llm": sum(r.error_kind == "llm" for r in errors),
            "unparseable": sum(r.error_kind == "unparseable" for r in errors),
        },
        "ignored": {"ids": sum(len(r.ignored) for r in rows), "questions": len(with_ignored)},
        "confusion": confusion(rows),
        "latency_ms": latency(rows),
        "without_model": _fast(rows),
        "calibration": summarize_calibration(rows),
    }


FAST_MARK = "no model call"  # in the reason of a decision the embedder made (ragapp.router.fast)


def _fast(rows: Sequence[RoutingRow]) -> dict[str, Any]:
    """The questions routed without a model call, how often right, and how fast; and the rest."""
    fast = [r for r in rows if FAST_MARK in r.reason]
    rest = [r for r in rows if FAST_MARK not in r.reason]
    return {
        "n": len(fast),
        "accuracy": accuracy(fast),
        "latency_ms": percentiles_ms([r.seconds for r in fast]),
        "others_accuracy": accuracy(rest),
        "others_latency_ms": percentiles_ms([r.seconds for r in rest]),
    }


def misrouted(rows: Sequence[RoutingRow]) -> list[RoutingRow]:
    return [r for r in rows if not r.correct]
