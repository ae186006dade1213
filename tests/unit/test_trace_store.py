"""The trace and test-case stores on SQLite and on PostgreSQL (``store_target``): the writer thread, retention,
search, and what only a SQLite file can go through (a corrupt file, an old file's columns)."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.said import Said
from ragapp.db import SqliteDatabase
from ragapp.testcases.answers import CaseAnswer
from ragapp.testcases.store import KEEP_RUNS, TestCaseStore
from ragapp.tracing import store as store_module
from ragapp.tracing.store import TracePayloadStore, TraceSummary, utc_iso
from ragapp.ui.trace_views import summary_rows
from tests.text import shown

Target = Callable[[str], Any]


def _ago(*, days: float = 0, minutes: float = 0) -> str:
    return (datetime.now(UTC) - timedelta(days=days, minutes=minutes)).isoformat()


def _trace(trace_id: str, owner: str = "alice", **extra: Any) -> dict[str, Any]:
    trace: dict[str, Any] = {
        "id": trace_id,
        "owner": owner,
        "kind": "chat",
        "started_at": _ago(),
        "question": f"question {trace_id}",
        "mode": "fast",
        "total_s": 1.5,
        "status": "ok",
        "degradations": [],
    }
    trace.update(extra)
    return trace


@pytest.fixture
def traces(store_target: Target) -> Iterator[TracePayloadStore]:
    store = TracePayloadStore(store_target("traces")).start()
    yield store
    store.close()


@pytest.fixture
def cases(store_target: Target) -> Iterator[TestCaseStore]:
    store = TestCaseStore(store_target("traces")).start()  # the traces' file, as the app has it
    yield store
    store.close()


# -- traces ------------------------------------------------------------------------------------


def test_round_trip_keeps_the_whole_dict(traces: TracePayloadStore) -> None:
    trace = _trace("t1", degradations=["rerank off"], steps=[{"stage": "bm25", "ms": 3}], note="中文 ✓")
    traces.save(trace)
    traces.flush()
    assert traces.get("t1", "alice") == trace
    assert traces.list("alice") == [
        TraceSummary("t1", trace["started_at"], "question t1", "fast", "chat", 1.5, "ok", ("rerank off",))
    ]


def test_a_missing_folder_is_created(tmp_path: Path) -> None:
    store = TracePayloadStore(tmp_path / "state" / "traces.db").start()
    try:
        store.save(_trace("t1"))
        store.flush()
        assert (tmp_path / "state" / "traces.db").is_file() and store.get("t1", "alice") is not None
    finally:
        store.close()


def test_traces_survive_reopening(store_target: Target) -> None:
    first = TracePayloadStore(store_target("traces")).start()
    first.save(_trace("t1"))
    first.close()  # close flushes
    second = TracePayloadStore(store_target("traces")).start()
    try:
        assert second.get("t1", "alice") is not None
    finally:
        second.close()


def test_owners_see_only_their_traces(traces: TracePayloadStore) -> None:
    traces.save(_trace("a1", owner="alice"))
    traces.save(_trace("b1", owner="bob"))
    traces.flush()
    assert traces.get("b1", "alice") is None
    assert traces.get("missing", "alice") is None
    assert [s.id for s in traces.list("alice")] == ["a1"]
    assert [s.id for s in traces.list("bob")] == ["b1"]


def test_list_is_newest_first_and_filters(traces: TracePayloadStore) -> None:
    traces.save(_trace("old", started_at=_ago(minutes=30), question="What is the VAT rate?"))
    traces.save(_trace("mid", started_at=_ago(minutes=20), question="Straße und Äpfel", status="failed"))
    traces.save(_trace("new", started_at=_ago(minutes=10), question="vat for imports", mode="deep"))
    traces.save(_trace("ing", started_at=_ago(minutes=5), question="report.pdf", kind="ingest", status="degraded"))
    traces.flush()
    assert [s.id for s in traces.list("alice")] == ["ing", "new", "mid", "old"]
    assert [s.id for s in traces.list("alice", text="VAT")] == ["new", "old"]
    assert [s.id for s in traces.list("alice", text="äPFEL")] == ["mid"]  # not only ASCII case
    assert [s.id for s in traces.list("alice", text="50%_")] == []  # no LIKE wildcards
    assert [s.id for s in traces.list("alice", status="failed")] == ["mid"]
    assert [s.id for s in traces.list("alice", mode="deep")] == ["new"]
    assert [s.id for s in traces.list("alice", kind="ingest")] == ["ing"]
    assert [s.id for s in traces.list("alice", kind="chat", text="vat", mode="fast")] == ["old"]
    assert [s.id for s in traces.list("alice", limit=2)] == ["ing", "new"]


def test_retention_keeps_the_newest_traces_of_all_owners(store_target: Target) -> None:
    store = TracePayloadStore(store_target("traces"), max_traces=3).start()
    try:
        for n in range(5):
            store.save(_trace(f"t{n}", owner="alice" if n % 2 else "bob", started_at=_ago(minutes=10 - n)))
        store.flush()
        kept = {s.id for owner in ("alice", "bob") for s in store.list(owner)}
        assert kept == {"t2", "t3", "t4"}
    finally:
        store.close()


def test_retention_drops_traces_older_than_max_age(store_target: Target) -> None:
    store = TracePayloadStore(store_target("traces"), max_age_days=14).start()
    try:
        store.save(_trace("ancient", started_at=_ago(days=30)))
        store.save(_trace("zulu", started_at=(datetime.now(UTC) - timedelta(days=15)).strftime("%Y-%m-%dT%H:%M:%SZ")))
        # Fifteen days ago in Tokyo's time reads like a later date than the cutoff: it is still too old.
        tokyo = datetime.now(UTC).astimezone(timezone(timedelta(hours=9))) - timedelta(days=14, hours=1)
        store.save(_trace("tokyo", started_at=tokyo.isoformat()))
        store.save(_trace("recent", started_at=_ago(days=13)))
        store.save(_trace("naive", started_at=(datetime.now(UTC) - timedelta(days=1)).replace(tzinfo=None).isoformat()))
        store.flush()
        assert [s.id for s in store.list("alice")] == ["naive", "recent"]
    finally:
        store.close()


def test_retention_and_order_go_by_the_instant_not_the_text(store_target: Target) -> None:
    """A trace written with another offset sorts by when it started, and is not trimmed before older ones."""
    store = TracePayloadStore(store_target("traces"), max_traces=2).start()
    try:
        now = datetime.now(UTC)
        store.save(_trace("older", started_at=(now - timedelta(minutes=30)).isoformat()))
        newest = (now - timedelta(minutes=1)).astimezone(timezone(timedelta(hours=-5)))  # "…-05:00" sorts first
        store.save(_trace("newest", started_at=newest.isoformat()))
        store.save(_trace("oldest", started_at=(now - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")))
        store.flush()
        (first, second) = store.list("alice")
        assert (first.id, second.id) == ("newest", "older")
        assert first.started_at == utc_iso(newest.isoformat()) and first.started_at.endswith("+00:00")
        assert store.get("newest", "alice")["started_at"] == newest.isoformat()  # type: ignore[index]  # kept as given
    finally:
        store.close()


def test_utc_iso() -> None:
    assert utc_iso("2026-12-01T10:00:00+00:00") == "2026-12-01T10:00:00+00:00"
    assert utc_iso("2026-12-01T10:00:00.250000+00:00") == "2026-12-01T10:00:00.250000+00:00"
    assert utc_iso("2026-12-01T10:00:00Z") == "2026-12-01T10:00:00+00:00"
    assert utc_iso("2026-12-01T05:00:00-05:00") == "2026-12-01T10:00:00+00:00"
    assert utc_iso("2026-12-01T10:00:00") == "2026-12-01T10:00:00+00:00"
    assert utc_iso("yesterday") == "yesterday"


def test_oversized_trace_has_long_strings_trimmed(traces: TracePayloadStore) -> None:
    big = "x" * 3_000_000
    traces.save(_trace("big", context=big, chunks=[{"text": "y" * 30_000}, "short"]))
    traces.save(_trace("small", context="z" * 30_000))  # long string, but the trace is under 2 MB
    traces.flush()
    stored = traces.get("big", "alice")
    assert stored is not None
    assert stored["context"] == "x" * 20_000 + "… [trimmed]"
    assert stored["chunks"] == [{"text": "y" * 20_000 + "… [trimmed]"}, "short"]
    assert stored["question"] == "question big"
    small = traces.get("small", "alice")
    assert small is not None and small["context"] == "z" * 30_000


def test_write_failure_is_logged_counted_and_the_writer_goes_on(
    traces: TracePayloadStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    real_write = traces._write
    calls = []

    def flaky(trace: dict[str, Any]) -> None:
        calls.append(trace["id"])
        if len(calls) == 1:
            raise OSError("disk full")
        real_write(trace)

    monkeypatch.setattr(traces, "_write", flaky)
    with caplog.at_level(logging.WARNING, logger="ragapp.tracing.store"):
        traces.save(_trace("lost"))
        traces.save(_trace("kept"))
        traces.save({"id": "no-owner"})  # a malformed trace fails for real, in the writer
        traces.flush()
    assert traces.write_errors == 2
    assert "disk full" in caplog.text
    assert traces.get("lost", "alice") is None
    assert traces.get("kept", "alice") is not None
    traces.save(_trace("later"))
    traces.flush()
    assert traces.get("later", "alice") is not None


def test_save_never_blocks_when_the_writer_is_stuck(
    store_target: Target, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(store_module, "QUEUE_SIZE", 3)
    store = TracePayloadStore(store_target("traces")).start()
    release = threading.Event()
    real_write = store._write

    def stuck(trace: dict[str, Any]) -> None:
        release.wait(10)
        real_write(trace)

    monkeypatch.setattr(store, "_write", stuck)
    try:
        start = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="ragapp.tracing.store"):
            for n in range(10):
                store.save(_trace(f"t{n}"))
        assert time.monotonic() - start < 1.0
        assert store.dropped >= 6
        assert "dropped" in caplog.text
        release.set()
        store.flush()
        assert 1 <= len(store.list("alice")) <= 4
    finally:
        release.set()
        store.close()


def test_values_json_does_not_know_are_stored_as_text(traces: TracePayloadStore) -> None:
    when = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    traces.save(_trace("odd", when=when, where=Path("/data/a.pdf")))
    traces.flush()
    stored = traces.get("odd", "alice")
    assert stored is not None
    assert stored["when"] == str(when)
    assert stored["where"] == str(Path("/data/a.pdf"))
    assert traces.write_errors == 0


def test_delete_all_removes_only_that_owner_including_queued(traces: TracePayloadStore) -> None:
    traces.save(_trace("a1"))
    traces.save(_trace("b1", owner="bob"))
    traces.save(_trace("a2"))  # no flush: delete_all must not let it land afterwards
    assert traces.delete_all("alice") == 2
    traces.flush()
    assert traces.list("alice") == []
    assert [s.id for s in traces.list("bob")] == ["b1"]


def test_corrupt_trace_file_is_moved_aside(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "traces.db"
    garbage = b"this is not sqlite " * 200
    path.write_bytes(garbage)
    with caplog.at_level(logging.WARNING, logger="ragapp.db.sqlite"):
        store = TracePayloadStore(path).start()
    try:
        aside = list(tmp_path.glob("traces.db.corrupt-*"))
        assert len(aside) == 1 and aside[0].read_bytes() == garbage
        assert "not a usable database" in caplog.text
        store.save(_trace("t1"))
        store.flush()
        assert store.get("t1", "alice") is not None
    finally:
        store.close()


# -- test cases --------------------------------------------------------------------------------


def test_cases_add_list_delete(cases: TestCaseStore) -> None:
    first = cases.add("alice", "  What is the VAT rate? ", [" vat.pdf", "rates.docx", "vat.pdf", "  "], trace_id="t1")
    second = cases.add("alice", "Who signs invoices?", ["policy.pdf"], kbs=["finance", "finance", " hr "])
    assert first.question == "What is the VAT rate?"
    assert first.expected == ("vat.pdf", "rates.docx")
    assert first.kbs is None and first.trace_id == "t1"
    assert second.kbs == ("finance", "hr")
    assert cases.list("alice") == [first, second]
    assert cases.delete("alice", first.id) is True
    assert cases.delete("alice", first.id) is False
    assert cases.list("alice") == [second]


def test_cases_validation(cases: TestCaseStore) -> None:
    with pytest.raises(ValueError, match="question is empty"):
        cases.add("alice", "   ", ["a.pdf"])
    with pytest.raises(ValueError, match="expected document"):
        cases.add("alice", "Q?", [])
    with pytest.raises(ValueError, match="expected document") as refused:
        cases.add("alice", "Q?", ["  ", ""])
    assert cases.list("alice") == []
    said = getattr(refused.value, "said", None)  # a record, for the page to word in its language
    assert said is not None and said.worded(True) == "没有应命中的文档：请至少选择一份应当回答这个问题的文档。"


def test_same_question_replaces_the_earlier_case(cases: TestCaseStore) -> None:
    old = cases.add("alice", "Q?", ["a.pdf"])
    other = cases.add("alice", "Other?", ["c.pdf"])
    new = cases.add("alice", " Q? ", ["b.pdf"])
    assert cases.list("alice") == [other, new]
    assert new.expected == ("b.pdf",) and new.id != old.id


def test_cases_are_per_owner(cases: TestCaseStore) -> None:
    mine = cases.add("alice", "Q?", ["a.pdf"])
    theirs = cases.add("bob", "Q?", ["b.pdf"])  # same question, other owner: not a replacement
    assert cases.list("alice") == [mine]
    assert cases.list("bob") == [theirs]
    assert cases.delete("bob", mine.id) is False
    assert cases.list("alice") == [mine]


def test_a_case_keeps_the_words_of_its_answer_or_that_a_refusal_is_right(cases: TestCaseStore) -> None:
    worded = cases.add("alice", "What is the VAT rate?", ["vat.pdf"], must_contain="  19 %\n ")
    moon = cases.add("alice", "How much is a ticket to the Moon?", [], unanswerable=True)
    assert worded.must_contain == "19 %" and not worded.unanswerable
    assert moon.expected == () and moon.unanswerable and moon.must_contain == ""
    assert cases.list("alice") == [worded, moon]
    with pytest.raises(ValueError, match="expected document"):  # answerable: the documents must be named
        cases.add("alice", "Q?", [], must_contain="x")


def _run_of(*verdicts: str) -> list[CaseAnswer]:
    return [
        CaseAnswer(f"Q{n}?", v, f"answer {n} [1]", v != "missing", cited=("a.pdf",)) for n, v in enumerate(verdicts)
    ]  # type: ignore[arg-type]


def test_runs_are_kept_per_owner_newest_first_the_last_ten(cases: TestCaseStore) -> None:
    first = cases.add_run("alice", _run_of("accurate", "missing"), {"mode": "workflow", "context_top_k": 5})
    assert cases.runs("alice") == [first]
    assert first.results[1].verdict == "missing" and first.results[0].cited == ("a.pdf",)
    assert first.settings == {"mode": "workflow", "context_top_k": 5} and first.tally.score == 0.5
    later = [cases.add_run("alice", _run_of("hallucinated"), {}) for _ in range(11)]
    bobs = cases.add_run("bob", _run_of("accurate"), {})
    kept = cases.runs("alice")
    assert [r.id for r in kept] == [r.id for r in reversed(later)][:KEEP_RUNS]  # the first two went
    assert cases.runs("alice", 2) == kept[:2] and cases.runs("bob") == [bobs]


def test_a_run_whose_record_cannot_be_read_shows_as_empty(store_target: Target) -> None:
    store = TestCaseStore(store_target("traces")).start()
    try:
        store.add_run("alice", _run_of("accurate"), {})
        with store._db.transaction() as tx:  # as a damaged row would read
            tx.execute("UPDATE test_case_runs SET run = ?", ("{not json",))
        (run,) = store.runs("alice")
        assert run.results == () and run.tally.questions == 0
    finally:
        store.close()


def test_an_old_case_file_gets_the_new_columns(tmp_path: Path) -> None:
    path = tmp_path / "traces.sqlite3"
    with sqlite3.connect(path) as old:  # the table as the app wrote it before expected answers
        old.execute(
            "CREATE TABLE test_cases (id INTEGER PRIMARY KEY AUTOINCREMENT, owner TEXT NOT NULL, question TEXT NOT "
            "NULL, expected TEXT NOT NULL, kbs TEXT, created_at TEXT NOT NULL, trace_id TEXT, UNIQUE (owner, question))"
        )
        old.execute(
            "INSERT INTO test_cases (owner, question, expected, created_at) VALUES ('alice', 'Q?', '[\"a.pdf\"]', 'x')"
        )
    old.close()
    store = TestCaseStore(path).start()
    try:
        (case,) = store.list("alice")
        assert case.expected == ("a.pdf",) and case.must_contain == "" and not case.unanswerable
        assert store.add("alice", "Moon?", [], unanswerable=True).unanswerable
        assert store.add_run("alice", _run_of("accurate"), {}).id == store.runs("alice")[0].id
    finally:
        store.close()


def test_an_old_postgres_schema_is_brought_up_to_date(postgres_url: str) -> None:
    from ragapp.db import open_database
    from ragapp.testcases.store import _CASE_STEPS

    db = open_database(postgres_url, pool_size=2)
    try:
        db.ensure_schema("test_cases", _CASE_STEPS[:1])  # as the app left it before expected answers
        db.execute("INSERT INTO test_cases (owner, question, expected, created_at) VALUES (?,?,?,?)",
                   ("alice", "Q?", '["a.pdf"]', "x"))  # fmt: skip
        store = TestCaseStore(db).start()
        (case,) = store.list("alice")
        assert case.expected == ("a.pdf",) and case.must_contain == "" and not case.unanswerable
        assert store.add("alice", "Moon?", [], unanswerable=True).unanswerable
        assert store.add_run("alice", _run_of("missing"), {}).id == store.runs("alice")[0].id
    finally:
        db.close()


def test_corrupt_case_file_is_moved_aside_and_cases_persist(tmp_path: Path) -> None:
    path = tmp_path / "cases.db"
    path.write_bytes(b"\x00\xff garbage" * 500)
    store = TestCaseStore(path).start()
    case = store.add("alice", "Q?", ["a.pdf"], kbs=["kb1"])
    store.close()
    assert len(list(tmp_path.glob("cases.db.corrupt-*"))) == 1
    reopened = TestCaseStore(path).start()
    try:
        assert reopened.list("alice") == [case]
    finally:
        reopened.close()


def test_both_stores_can_share_one_file(store_target: Target) -> None:
    traces, cases = TracePayloadStore(store_target("traces")).start(), TestCaseStore(store_target("traces")).start()
    try:
        traces.save(_trace("t1"))
        traces.flush()
        case = cases.add("alice", "Q?", ["a.pdf"], trace_id="t1")
        assert traces.get("t1", "alice") is not None
        assert cases.list("alice") == [case]
    finally:
        traces.close()
        cases.close()


def test_a_long_question_in_chinese_can_be_saved(cases: TestCaseStore) -> None:
    question = "这个问题很长" * 330  # 1980 characters, about 6 kB: more than one index entry of PostgreSQL holds
    case = cases.add("alice", question, ["a.pdf"])
    assert cases.add("alice", question, ["b.pdf"]).id != case.id
    assert [c.expected for c in cases.list("alice")] == [("b.pdf",)]


def test_nul_characters_are_dropped_on_both_engines(traces: TracePayloadStore, cases: TestCaseStore) -> None:
    traces.save(_trace("t1", question="what\x00 now"))
    traces.flush()
    assert traces.write_errors == 0 and [s.question for s in traces.list("alice", text="what now")] == ["what now"]
    assert traces.set_feedback("t1", "alice", "down", "no\x00pe")
    assert traces.feedback("t1") == ("down", "nope")
    assert cases.add("alice", "Q\x00?", ["a.pdf"]).question == "Q?"


def test_an_old_trace_file_gets_the_folded_question(tmp_path: Path) -> None:
    """A file written before ``question_folded`` existed: its traces are found by the search all the same."""
    path = tmp_path / "traces.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE traces (
            id TEXT PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL, started_at TEXT NOT NULL,
            question TEXT NOT NULL DEFAULT '', mode TEXT NOT NULL DEFAULT '', total_s REAL,
            status TEXT NOT NULL DEFAULT '', degradations TEXT NOT NULL DEFAULT '[]', payload TEXT NOT NULL
        );
        CREATE TABLE feedback (
            trace_id TEXT PRIMARY KEY, rating TEXT NOT NULL, comment TEXT NOT NULL DEFAULT '', given_at TEXT NOT NULL
        );
        """
    )
    old.execute(
        "INSERT INTO traces VALUES ('t0', 'alice', 'chat', ?, 'Große Straße', 'fast', 1.0, 'ok', '[]', '{}')", (_ago(),)
    )
    old.commit()
    old.close()
    store = TracePayloadStore(path).start()
    try:
        store.save(_trace("t1", question="STRASSE"))
        store.flush()
        assert [s.id for s in store.list("alice", text="strasse")] == ["t1", "t0"]
    finally:
        store.close()


def test_the_stores_also_take_an_open_sqlite_database(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "shared.sqlite3")
    traces, cases = TracePayloadStore(db).start(), TestCaseStore(db).start()
    try:
        traces.save(_trace("t1", question="Straße"))
        traces.flush()
        cases.add("alice", "Q?", ["a.pdf"], trace_id="t1")
        assert [s.id for s in traces.list("alice", text="STRASSE")] == ["t1"]
        assert [c.trace_id for c in cases.list("alice")] == ["t1"]
    finally:
        traces.close()
        cases.close()
    assert db.one("SELECT COUNT(*) FROM traces") == (1,)  # still open: whoever opened it closes it
    db.close()


def test_the_list_keeps_each_degradations_records_to_word_it_in_the_pages_language(
    traces: TracePayloadStore,
) -> None:
    """The Traces list's Degradations column was the engine's English on a Chinese page; an old row (strings
    only) still reads back as it was."""
    timed_out = Said("degraded.timed_out", {"channel": "vector", "s": 5.0})
    said = {timed_out.english: [{"code": timed_out.code, "values": timed_out.values}]}
    traces.save(_trace("t1", degradations=[timed_out.english, "rerank off"], degradations_said=said))
    traces.save(_trace("t0", started_at=_ago(minutes=1), degradations=["an old one"]))
    traces.flush()
    new, old = traces.list("alice")
    assert new.degradations == ("vector search timed out after 5 s", "rerank off")  # as the API gives them
    assert new.degradations_said == {"vector search timed out after 5 s": (timed_out,)}
    assert old.degradations == ("an old one",) and old.degradations_said == {}
    cell = summary_rows([new])[0][-1]
    assert shown(cell, "zh") == "vector 检索超时（5 秒）; rerank off"
    assert shown(cell, "en") == "vector search timed out after 5 s; rerank off"
