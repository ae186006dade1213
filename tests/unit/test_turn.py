"""The turn: one question's events folded once, the way the chat, the API, the trace and the benchmarks read
them; and the one serialiser that stores it (and every trace) and reads old or odd rows back."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import count
from typing import Any, Literal

from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    ClarifyEvent,
    EvidenceEvent,
    ModeEvent,
    NoticeEvent,
    RetrievalEvent,
    RoutingEvent,
    StageEvent,
    TokenEvent,
    TraceEvent,
    WaitEvent,
)
from ragapp.core.serial import KEEP_UNKNOWN, OMIT_DEFAULT, Stored, dump, load
from ragapp.core.turn import StageStep, Turn
from ragapp.core.types import Chunk, Citation, Confidence, ConfidenceCheck, LeafScore, RetrievedChunk

CHUNK = Chunk("d1-0000", "d1", 0, "Batteries last ten hours.", "a.pdf", page=3)
OTHER = Chunk("d2-0000", "d2", 0, "Screens last longer.", "b.pdf")
LEAF = LeafScore("K1", "Lumen > Battery", "KB", "Lumen", 0.61)


def _ticks() -> Any:
    """A clock that moves one second per reading."""
    numbers = count()
    return lambda: float(next(numbers))


def _answered() -> Turn:
    return Turn.of(
        [
            TraceEvent("t1"),
            ModeEvent("agent", "it compares"),
            StageEvent("route", "started"),
            StageEvent("route", "finished", 0.5),
            RoutingEvent("battery?", "route", (LEAF,), "clear"),
            NoticeEvent("vector search failed", "warning"),
            AgentStepEvent(1, "started", "search", {"query": "battery"}, thought="look it up"),
            AgentStepEvent(1, "finished", "search", preview="1 passage", duration_s=0.2),
            RetrievalEvent((RetrievedChunk(CHUNK, 0.5, {"keyword": 1}, {}),), degraded=("vector search failed",)),
            RetrievalEvent((RetrievedChunk(CHUNK, 0.5, {}, {}), RetrievedChunk(OTHER, 0.4, {}, {}))),
            EvidenceEvent("Batteries last ten hours.", Citation(1, CHUNK)),
            StageEvent("generate", "started", detail={"passages": 2}),
            WaitEvent(2, 1.0),
            TokenEvent(""),
            TokenEvent("Ten "),
            TokenEvent("hours."),
            StageEvent("generate", "finished", 3.0, {"tokens": 2}),
            AnswerEvent("Ten hours [1].", (Citation(1, CHUNK),), grounded=True, confidence=Confidence("high")),
        ],
        clock=_ticks(),
    )


def test_a_turn_adds_the_events_up_once() -> None:
    turn = _answered()
    assert (turn.trace_id, turn.mode, turn.mode_reason) == ("t1", "agent", "it compares")
    assert turn.text == "Ten hours [1]." and turn.streamed == "Ten hours." and turn.done
    assert [c.chunk.chunk_id for c in turn.citations] == ["d1-0000"]
    assert [c.chunk_id for c in turn.context] == ["d1-0000", "d2-0000"]  # each chunk once, first time first
    assert len(turn.retrieved) == 2 and turn.degraded == ["vector search failed"]
    assert [n.message for n in turn.notices] == ["vector search failed"]
    # the clock reads once per event (and once at the start): the first non-empty token is event 15
    assert (turn.evidence_s, turn.first_token_s, turn.seconds) == (11.0, 15.0, 18.0)
    route, generate = turn.stages
    assert route.routing is not None and route.routing.question == "battery?" and route.ended_s == 4.0
    assert (generate.status, generate.started_detail, generate.detail) == ("finished", {"passages": 2}, {"tokens": 2})
    assert generate.wait is None and turn.pending() is None
    (step,) = turn.agent_steps  # one entry per step, as it ended, keeping what its start said
    assert (step.status, step.arguments, step.thought, step.preview) == ("finished", {"query": "battery"},
                                                                         "look it up", "1 passage")  # fmt: skip
    assert turn.failure("generate") is None


def test_a_pending_stage_keeps_its_wait_and_a_failure_its_error() -> None:
    turn = Turn()
    turn.apply(StageEvent("generate", "started"))
    turn.apply(WaitEvent(1, 2.0))
    assert turn.pending() is not None and turn.pending().wait == WaitEvent(1, 2.0)  # type: ignore[union-attr]
    assert turn.apply(TokenEvent("Ten")) == "Ten" and turn.apply(WaitEvent(0, 3.0)) == ""
    turn.apply(StageEvent("generate", "failed", error="the model hung"))
    turn.apply(StageEvent("retrieve", "finished", 0.2))  # reported only at its end
    assert turn.failure("generate") == "the model hung" and not turn.done and turn.text == "Ten"
    assert [(s.stage, s.opened) for s in turn.stages] == [("generate", True), ("retrieve", False)]


def test_a_turn_that_asks_back_keeps_the_question() -> None:
    asked = ClarifyEvent("which battery?", ("which battery?",), "battery", (LEAF,))
    turn = Turn.of([asked, TokenEvent("Which one?"), AnswerEvent("Which one?", (), grounded=False)])
    assert turn.clarify == asked and turn.text == "Which one?"


def test_a_turn_survives_its_stored_form_unchanged() -> None:
    turn = _answered()
    stored = json.loads(json.dumps(turn.to_dict()))
    assert Turn.from_dict(stored) == turn
    assert stored["steps"][0]["type"] == "ModeEvent"  # a union's members say which they are
    assert "clock" not in stored and "started" not in stored


@dataclass
class Row(Stored):
    name: str
    level: Literal["high", "low"]
    size: int
    share: float | None
    tags: tuple[str, ...] = ()
    step: StageStep | None = None
    rest: dict[str, Any] = field(default_factory=dict, metadata=KEEP_UNKNOWN)
    note: str = field(default="", metadata=OMIT_DEFAULT)


def test_an_old_or_odd_row_reads_back_with_empty_parts() -> None:
    row = Row.from_dict({"level": "medium", "size": True, "share": "half", "tags": ["a", 3, "b"], "new": 1})
    assert row == Row("", "high", 0, None, ("a", "b"), None, {"new": 1})  # bad list items are skipped
    assert row.to_dict() == {"new": 1, "name": "", "level": "high", "size": 0, "share": None, "tags": ["a", "b"],
                             "step": None}  # fmt: skip
    assert Row.from_dict("not a row") == Row("", "high", 0, None)
    assert load(Row, {"name": "n", "level": "low", "size": 2.0, "share": 1, "note": "kept"}) == Row(
        "n", "low", 2, 1.0, note="kept"
    )
    assert dump({"when": {1, 2} - {2}, "what": Confidence("low", (ConfidenceCheck("fits", False),))}) == {
        "when": [1],
        "what": {"level": "low", "checks": [{"check": "fits", "passed": False, "detail": ""}]},
    }
