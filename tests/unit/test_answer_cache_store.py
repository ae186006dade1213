"""The answer cache's store (on SQLite and on PostgreSQL): an answer comes back under its key only, "Answer
again" replaces it, the least recently served go past the bound, old and unreadable rows are answered anew."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from ragapp.core.events import AnswerEvent
from ragapp.core.serial import dump, load
from ragapp.core.types import Chunk, Citation, Confidence, ConfidenceCheck
from ragapp.engine.answer_cache import cache_question, keepable
from ragapp.store import answer_cache
from ragapp.store.answer_cache import AnswerCacheStore

Target = Callable[[str], Any]
CHUNK = Chunk("c1", "d1", 0, "The battery lasts 90 minutes.", "alpha.md", page=2, heading="Battery")
ANSWER = AnswerEvent(
    "It lasts 90 minutes [1].",
    (Citation(1, CHUNK, 0.9, ("The battery lasts 90 minutes.",)),),
    grounded=True,
    confidence=Confidence("high", (ConfidenceCheck("supported", True, "1/1"),)),
)


def test_an_answer_comes_back_whole_under_its_key_only(store_target: Target) -> None:
    store = AnswerCacheStore(store_target("answer_cache")).start()
    assert store.get("k1") is None
    store.put("k1", "How long?", dump(ANSWER), "t1")
    found = store.get("k1")
    assert found is not None and found.trace_id == "t1" and found.answered_at.startswith("20")
    assert load(AnswerEvent, found.answer) == ANSWER  # citations, highlights and confidence too
    assert store.get("k2") is None
    # "Answer again" replaces it in place.
    store.put("k1", "How long?", dump(AnswerEvent("90 min [1].", ANSWER.citations, grounded=True)), "t2")
    again = store.get("k1")
    assert again is not None and again.trace_id == "t2" and again.answer["text"] == "90 min [1]." and len(store) == 1
    assert store.forget("k1") and store.get("k1") is None
    store.close()


def test_the_least_recently_served_go_past_the_bound(store_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    store = AnswerCacheStore(store_target("answer_cache"), max_entries=2).start()
    clock = [answer_cache._now()]
    monkeypatch.setattr(answer_cache, "_now", lambda: clock[0])

    def tick() -> None:
        clock[0] += timedelta(seconds=1)

    store.put("a", "a", dump(ANSWER))
    tick()
    store.put("b", "b", dump(ANSWER))
    tick()
    assert store.get("a") is not None  # served: now the most recent
    tick()
    store.put("c", "c", dump(ANSWER))
    assert store.get("b") is None and store.get("a") is not None and store.get("c") is not None
    assert store.clear() == 2 and len(store) == 0
    store.close()


def test_an_old_or_unreadable_answer_is_answered_anew(store_target: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    store = AnswerCacheStore(store_target("answer_cache"), max_age_days=1).start()
    store.put("old", "q", dump(ANSWER))
    later = answer_cache._now() + timedelta(days=2)
    monkeypatch.setattr(answer_cache, "_now", lambda: later)
    assert store.get("old") is None and len(store) == 0  # and deleted
    store.put("bad", "q", dump(ANSWER))
    store._db.execute("UPDATE answer_cache SET answer = ? WHERE key = ?", ("{not json", "bad"))
    assert store.get("bad") is None and len(store) == 0
    store.close()


def test_only_a_complete_checked_answer_is_kept() -> None:
    assert keepable(ANSWER)
    assert not keepable(AnswerEvent(ANSWER.text, ANSWER.citations, grounded=False, confidence=ANSWER.confidence))
    assert not keepable(AnswerEvent("Not in the documents.", (), grounded=True, abstained=True))
    assert not keepable(AnswerEvent(ANSWER.text, ANSWER.citations, grounded=True))  # not checked
    assert not keepable(AnswerEvent(ANSWER.text, ANSWER.citations, grounded=True, confidence=Confidence("low")))


def test_case_spacing_and_the_closing_mark_do_not_make_another_question() -> None:
    assert cache_question("  How long does the BATTERY   last? ") == cache_question("how long does the battery last")
    assert cache_question("电池能用多久？") == cache_question("电池能用多久")
    assert cache_question("How long does the battery last?") != cache_question("How long does the cable last?")


def test_nearest_lists_the_questions_kept_in_one_context_with_their_vectors(store_target: Target) -> None:
    store = AnswerCacheStore(store_target("answer_cache")).start()
    store.put("a", "battery?", dump(ANSWER), context="c1", vector=[0.6, 0.8])
    store.put("b", "weight?", dump(ANSWER), context="c1", vector=[1.0, 0.0])
    store.put("c", "battery?", dump(ANSWER), context="c2", vector=[0.6, 0.8])  # another scope or version
    store.put("d", "no vector", dump(ANSWER), context="c1")  # kept while paraphrase matching was off
    assert sorted(store.nearest("c1")) == [("a", [0.6, 0.8]), ("b", [1.0, 0.0])]
    assert store.nearest("c3") == []
    store._db.execute("UPDATE answer_cache SET vector = ? WHERE key = ?", ("[oops", "b"))
    assert store.nearest("c1") == [("a", [0.6, 0.8])]
    store.close()


def test_the_measurements_run_with_the_cache_off_unless_told() -> None:
    """A benchmark reusing its state folder must not measure kept answers (see ragbench/__init__.py)."""
    import os
    import subprocess
    import sys

    probe = "import ragbench; from ragapp.config import Settings; print(Settings().answer_cache.enabled)"
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGAPP_")}
    off = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    on = subprocess.run([sys.executable, "-c", probe], env=env | {"RAGAPP_ANSWER_CACHE__ENABLED": "true"},
                        capture_output=True, text=True, check=True)  # fmt: skip
    assert (off.stdout.strip(), on.stdout.strip()) == ("False", "True")


def test_an_answer_resting_on_a_remote_source_or_a_warning_is_not_kept(tmp_path: Any) -> None:
    """Another ragapp's documents change without this catalog's version moving; a warned answer is a poorer one."""
    from ragapp.config import Settings
    from ragapp.core.events import NoticeEvent, RetrievalEvent
    from ragapp.core.types import RetrievedChunk
    from ragapp.engine.answer_cache import AnswerCache

    store = AnswerCacheStore(tmp_path / "answer_cache.sqlite3").start()
    cache = AnswerCache(store, Settings(answer_cache={"enabled": True}), lambda _kbs: "1")

    def keeps(*events: Any) -> bool:
        lookup = cache.look_up("q", "workflow", None, None)
        assert lookup is not None and lookup.hit is None
        list(cache.kept(iter([*events, ANSWER]), lookup, "q"))
        found = cache.look_up("q", "workflow", None, None)
        store.clear()
        return found is not None and found.hit is not None

    local = RetrievedChunk(CHUNK, 1.0, {"vector": 1, "bm25": 2}, {})
    remote = RetrievedChunk(CHUNK, 1.0, {"remote:handbook": 1}, {})
    assert keeps(RetrievalEvent((local,)))
    assert not keeps(RetrievalEvent((local, remote)))
    assert not keeps(RetrievalEvent((local,), degraded=("bm25 timed out",)))
    assert not keeps(NoticeEvent("a link was removed", level="warning"))
    assert keeps(NoticeEvent("reranking is off"))  # information only
    store.close()
