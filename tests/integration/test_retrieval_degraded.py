"""A slow or failing retrieval channel costs the user that channel, never the answer.

Extra channels enter through the real ``CHANNELS`` registry, next to the real vector and keyword channels.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragapp.core.events import AnswerEvent, NoticeEvent, RetrievalEvent
from ragapp.core.types import ChannelHit, Docs, Scope
from ragapp.retrieval.channels import CHANNELS, Channel, ChannelDeps

if TYPE_CHECKING:
    from conftest import Rig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

pytestmark = pytest.mark.integration

HANG_S = 3.0
BUDGET_S = 0.5
QUESTION = "How do I start the service?"

_release = threading.Event()  # set at teardown so a sleeping channel thread ends with its test
# Set once the engine is warm: its warm-up searches (one per language, each waiting out the channel budget for a
# hung channel) would otherwise cost every test here two budgets before it starts.
_armed = threading.Event()


class SlowChannel(Channel):
    """Answers after HANG_S seconds: always past the test budget."""

    name = "slow"

    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
        if _armed.is_set():
            _release.wait(HANG_S)
        return []


class BrokenChannel(Channel):
    """Fails like a corrupt index would."""

    name = "broken"

    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
        raise RuntimeError("index file is truncated")


def _slow(_deps: ChannelDeps) -> Channel:
    return SlowChannel()


def _broken(_deps: ChannelDeps) -> Channel:
    return BrokenChannel()


for _name, _factory in (("slow", _slow), ("broken", _broken)):
    if _name not in CHANNELS:
        CHANNELS.register(_name)(_factory)


def problems(messages: tuple[str, ...] | list[str]) -> list[str]:
    """Each degradation message up to any '; ...' that says what the answer used instead, sorted."""
    return sorted(message.split(";")[0] for message in messages)


@pytest.fixture(autouse=True)
def _end_hangs() -> Iterator[None]:
    _release.clear()
    _armed.clear()
    yield
    _release.set()


@pytest.fixture
def engine_with(make_engine: Callable[..., Rig]) -> Callable[[list[str]], Rig]:
    def make(channels: list[str]) -> Rig:
        rig = make_engine(retrieval={"channels": channels, "channel_timeout_s": BUDGET_S})
        results = rig.engine.library.ingest(
            [(FIXTURES / "sample.md", "sample.md"), (FIXTURES / "sample.txt", "sample.txt")]
        )
        assert {r.status for r in results} == {"added"}
        rig.engine.warm_up()  # the first query embedding loads the model; keep that out of the budget
        _armed.set()
        return rig

    return make


def test_a_hung_channel_is_cut_at_its_budget(engine_with: Callable[[list[str]], Rig]) -> None:
    rig = engine_with(["vector", "keyword", "slow"])

    start = time.monotonic()
    result = rig.engine.chat.retrieve(QUESTION)
    elapsed = time.monotonic() - start

    assert elapsed < HANG_S - 1.0, f"the request waited {elapsed:.2f} s for a channel with a {BUDGET_S} s budget"
    assert problems(result.degraded) == [f"slow search timed out after {BUDGET_S:g} s"]
    assert "keyword" in {r.channel for r in result.channel_results}
    assert "slow" not in {r.channel for r in result.channel_results}
    assert result.chunks, "the other channels still answer"
    assert result.chunks[0].chunk.source == "sample.md"
    assert all("slow" not in c.channel_ranks for c in result.candidates)


def test_a_failing_channel_is_named_and_the_others_answer(engine_with: Callable[[list[str]], Rig]) -> None:
    rig = engine_with(["vector", "keyword", "broken"])
    result = rig.engine.chat.retrieve(QUESTION)
    assert problems(result.degraded) == ["broken search failed (RuntimeError)"]
    assert [r.channel for r in result.channel_results] == ["vector", "keyword"]
    assert result.chunks[0].chunk.source == "sample.md"


def test_the_answer_still_comes_with_a_hung_channel(engine_with: Callable[[list[str]], Rig]) -> None:
    rig = engine_with(["vector", "keyword", "slow"])
    rig.llm.enqueue(["Run ./run.sh ", "--port 8080 [1]."])

    start = time.monotonic()
    events = list(rig.engine.chat.ask(QUESTION))
    elapsed = time.monotonic() - start

    assert elapsed < HANG_S - 1.0
    notices = [e.message for e in events if isinstance(e, NoticeEvent) and e.level == "warning"]
    assert problems(notices) == [f"slow search timed out after {BUDGET_S:g} s"]
    (retrieved,) = [e for e in events if isinstance(e, RetrievalEvent)]
    assert retrieved.degraded == tuple(notices)
    (answer,) = [e for e in events if isinstance(e, AnswerEvent)]
    assert answer.text == "Run ./run.sh --port 8080 [1]."
    assert answer.grounded is True
    assert [c.chunk.source for c in answer.citations] == ["sample.md"]
    assert len(rig.llm.calls) == 1


def test_every_channel_down_means_not_found_without_calling_the_llm(
    engine_with: Callable[[list[str]], Rig],
) -> None:
    rig = engine_with(["broken", "slow"])
    events = list(rig.engine.chat.ask(QUESTION))
    (answer,) = [e for e in events if isinstance(e, AnswerEvent)]
    assert answer.grounded is False
    assert answer.citations == ()
    assert rig.llm.calls == []
    notices = [e.message for e in events if isinstance(e, NoticeEvent)]
    assert problems(notices) == ["broken search failed (RuntimeError)", f"slow search timed out after {BUDGET_S:g} s"]


STALL_S = 30.0
# Wider than BUDGET_S: on a busy two-core machine the real vector channel's query embedding can itself take
# over a second, and this test needs it to answer in time.
WIDE_BUDGET_S = 2.0


class StalledChannel(Channel):
    """Never answers within a test: waits until teardown (at most STALL_S)."""

    name = "stalled"

    def _retrieve(self, query: str, top_k: int, kbs: Scope, docs: Docs = None) -> list[ChannelHit]:
        if _armed.is_set():
            _release.wait(STALL_S)
        return []


def _stalled(_deps: ChannelDeps) -> Channel:
    return StalledChannel()


if "stalled" not in CHANNELS:
    CHANNELS.register("stalled")(_stalled)


def test_a_failing_and_a_hung_channel_together_cost_only_the_budget(make_engine: Callable[..., Rig]) -> None:
    rig = make_engine(
        retrieval={"channels": ["keyword", "broken", "vector", "stalled"], "channel_timeout_s": WIDE_BUDGET_S}
    )
    results = rig.engine.library.ingest(
        [(FIXTURES / "sample.md", "sample.md"), (FIXTURES / "sample.txt", "sample.txt")]
    )
    assert {r.status for r in results} == {"added"}
    rig.engine.warm_up()
    _armed.set()

    start = time.monotonic()
    result = rig.engine.chat.retrieve(QUESTION)
    elapsed = time.monotonic() - start

    # A safety bound, not a speed benchmark: the request waits out the budget, never the stalled channel.
    assert elapsed < WIDE_BUDGET_S + 1.0, f"took {elapsed:.2f} s with a {WIDE_BUDGET_S} s channel budget"
    assert problems(result.degraded) == [
        "broken search failed (RuntimeError)",
        f"stalled search timed out after {WIDE_BUDGET_S:g} s",
    ]
    assert [r.channel for r in result.channel_results] == ["keyword", "vector"]  # in configured order
    assert all(r.hits for r in result.channel_results)
    assert result.chunks[0].chunk.source == "sample.md"
    assert {ch for c in result.candidates for ch in c.channel_ranks} == {"keyword", "vector"}
    assert result.cached is False
