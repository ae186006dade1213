"""The audit log's store: append and read back with filters and paging, on SQLite and PostgreSQL; the database
refuses to change a row; the retention sweep removes only what is older than the setting; no code path updates
or deletes an audit row but that sweep; a log that cannot be written never breaks the action, and says so."""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ragapp.audit import AuditAction, AuditLog, AuditQuery, AuditRecord, AuditStore, to_csv
from ragapp.audit.export import safe_cell
from ragapp.config import AuditSettings
from ragapp.core.access import Actor
from ragapp.core.errors import AccessDenied
from ragapp.db import SqliteDatabase, open_database
from ragapp.db.base import statements

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _store(store_target: Callable[[str], Any], clock: Clock) -> AuditStore:
    return AuditStore(store_target("audit"), clock).start()


def _add(store: AuditStore, actor: str, action: AuditAction, target: str = "", outcome: str = "ok") -> None:
    store.append(actor, "admin", "10.0.0.1", action.value, target, outcome, {"n": 1})


def test_records_read_back_newest_first_by_filter_and_page(store_target: Callable[[str], Any]) -> None:
    clock = Clock()
    store = _store(store_target, clock)
    try:
        for n in range(5):
            _add(store, "ada" if n % 2 == 0 else "bob", AuditAction.SEARCH, f"kb{n}")
            clock.now += timedelta(hours=1)
        _add(store, "ada", AuditAction.DELETE, "100%_sure/doc", "refused")
        everything = store.query(AuditQuery())
        assert [r.target for r in everything] == ["100%_sure/doc", "kb4", "kb3", "kb2", "kb1", "kb0"]
        assert everything[-1].at == "2026-01-01T12:00:00.000000+00:00"
        assert [r.target for r in store.query(AuditQuery(actor="bob"))] == ["kb3", "kb1"]
        assert [r.target for r in store.query(AuditQuery(action="delete"))] == ["100%_sure/doc"]
        assert [r.target for r in store.query(AuditQuery(outcome="refused"))] == ["100%_sure/doc"]
        assert [r.target for r in store.query(AuditQuery(target="%_"))] == ["100%_sure/doc"]  # taken literally
        assert [r.target for r in store.query(AuditQuery(target="kb_"))] == []
        start = datetime(2026, 1, 1, 13, 0)  # no zone: UTC
        assert [r.target for r in store.query(AuditQuery(since=start, until=start + timedelta(hours=2)))] == [
            "kb2",
            "kb1",
        ]
        page = AuditQuery(limit=2, offset=2)
        assert [r.target for r in store.query(page)] == ["kb3", "kb2"]
        assert store.count(page) == 6
        assert store.count(AuditQuery(actor="ada")) == 4
        assert everything[0].detail == {"n": 1}
    finally:
        store.close()


def test_the_database_refuses_to_change_an_audit_row(store_target: Callable[[str], Any]) -> None:
    store = _store(store_target, Clock())
    try:
        _add(store, "ada", AuditAction.SIGN_IN, "ada")
        db = store._db
        with pytest.raises(Exception, match="append-only"):
            db.execute("UPDATE audit_log SET actor = ?", ("mallory",))
        assert [r.actor for r in store.query(AuditQuery())] == ["ada"]
    finally:
        store.close()


def test_the_refusal_holds_in_a_file_reopened_and_in_a_shared_sqlite_database(tmp_path: Path) -> None:
    AuditStore(tmp_path / "audit.sqlite3").start().close()
    AuditStore(tmp_path / "audit.sqlite3").start().close()  # the trigger is created once, kept
    shared = SqliteDatabase(tmp_path / "shared.sqlite3")
    store = AuditStore(shared).start()
    _add(store, "ada", AuditAction.SIGN_IN)
    with pytest.raises(Exception, match="append-only"):
        shared.execute("UPDATE audit_log SET outcome = 'ok'")
    shared.close()


def test_the_sweep_removes_only_records_older_than_the_setting(store_target: Callable[[str], Any]) -> None:
    clock = Clock()
    store = _store(store_target, clock)
    log = AuditLog(store, AuditSettings(retention_days=30))
    try:
        for age_days in (40, 31, 29, 1):
            clock.now = datetime(2026, 3, 1, tzinfo=UTC) - timedelta(days=age_days)
            _add(store, "ada", AuditAction.SEARCH, f"{age_days} days")
        clock.now = datetime(2026, 3, 1, tzinfo=UTC)
        assert log.sweep() == 2
        assert [r.target for r in store.query(AuditQuery())] == ["1 days", "29 days"]
        assert AuditLog(store, AuditSettings(retention_days=0)).sweep() == 0  # 0 keeps everything
        clock.now += timedelta(days=1000)
        assert AuditLog(store, AuditSettings(retention_days=0)).sweep() == 0
        assert store.count(AuditQuery()) == 2
    finally:
        store.close()


def test_recording_sweeps_once_a_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    store = AuditStore(tmp_path / "audit.sqlite3", clock).start()
    sweeps: list[datetime] = []
    sweep = store.sweep
    monkeypatch.setattr(store, "sweep", lambda days: sweeps.append(clock.now) or sweep(days))
    log = AuditLog(store, AuditSettings(retention_days=1))
    ada = Actor("ada", "admin")
    start = clock.now
    for hours in (0, 12, 23, 25, 30):
        clock.now = start + timedelta(hours=hours)
        log.record(ada, AuditAction.SEARCH, f"{hours} h")
    assert sweeps == [start, start + timedelta(hours=25)]  # the first record's, then a day later
    assert [r.target for r in store.query(AuditQuery())] == ["30 h", "25 h", "23 h", "12 h"]  # "0 h": 25 h old
    store.close()


# Any statement that changes audit_log. The sweep's is the one allowed, and only in the store.
# (Or that takes its guard away: altering the table, dropping its trigger.)
_CHANGES = re.compile(
    r"\b(UPDATE\s+audit_log|DELETE\s+FROM\s+audit_log|INSERT\s+OR\s+REPLACE\s+INTO\s+audit_log|REPLACE\s+INTO\s+audit_log"
    r"|TRUNCATE\s+(TABLE\s+)?audit_log|DROP\s+TABLE\s+(IF\s+EXISTS\s+)?audit_log|ALTER\s+TABLE\s+audit_log"
    r"|DROP\s+TRIGGER\s+(IF\s+EXISTS\s+)?audit_log\w*)\b",
    re.I,
)


def test_no_code_path_updates_or_deletes_an_audit_row_but_the_retention_sweep() -> None:
    found = [
        (path.relative_to(ROOT).as_posix(), match.group(0))
        for path in sorted((ROOT / "ragapp").rglob("*.py"))
        for match in _CHANGES.finditer(path.read_text("utf-8"))
    ]
    assert found == [("ragapp/audit/store.py", "DELETE FROM audit_log")]
    sweep = (ROOT / "ragapp/audit/store.py").read_text("utf-8").split("def sweep", 1)[1].split("\n    def ", 1)[0]
    assert "DELETE FROM audit_log WHERE at < ?" in sweep  # and it is the sweep's, by age
    assert not [n for n in dir(AuditStore) if re.search(r"update|edit|delete|remove|clear|set_", n)]


def test_the_scan_would_see_a_change_to_the_table() -> None:
    assert _CHANGES.search('db.execute("update  audit_log set actor = ?")')
    assert _CHANGES.search("DELETE\n FROM audit_log")
    assert _CHANGES.search("DROP TRIGGER audit_log_no_update")
    assert not _CHANGES.search("DELETE FROM audit_logbook")


class _Broken(AuditStore):
    def append(self, *args: Any) -> None:
        raise OSError("disk full")


def test_a_record_that_cannot_be_written_never_breaks_the_action_and_goes_to_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = AuditLog(_Broken(tmp_path / "audit.sqlite3").start(), AuditSettings())
    ada = Actor("ada", "admin", client="10.0.0.9")
    with caplog.at_level(logging.ERROR, "ragapp.audit.log"):
        with log.attempt(ada, AuditAction.DELETE, "hr/leave.md") as note:
            note["doc_id"] = "d1"
        done = True
    assert done
    (said,) = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert "audit record not written" in said and "disk full" in said
    assert all(part in said for part in ('"ada"', '"10.0.0.9"', '"delete"', '"hr/leave.md"', '"d1"'))
    log.close()


def test_attempt_records_a_refusal_and_a_failure_and_raises_them_on(tmp_path: Path) -> None:
    store = AuditStore(tmp_path / "audit.sqlite3").start()
    log = AuditLog(store, AuditSettings())
    rita = Actor("rita", "reader")
    with pytest.raises(AccessDenied), log.attempt(rita, AuditAction.DELETE, "x"):
        raise AccessDenied("no")
    with pytest.raises(ValueError), log.attempt(rita, AuditAction.DELETE, "y"):
        raise ValueError("broken")
    assert [(r.target, r.outcome, r.detail) for r in store.query(AuditQuery())] == [
        ("y", "failed", {"error": "broken"}),
        ("x", "refused", {"reason": "no"}),
    ]
    store.close()


def test_the_log_off_records_nothing(tmp_path: Path) -> None:
    off = AuditLog.off()
    off.record(Actor("ada", "admin"), AuditAction.SIGN_IN)
    assert off.query(AuditQuery()) == ([], 0)
    assert not list(tmp_path.iterdir())


def test_a_dollar_quoted_body_stays_one_statement() -> None:
    script = "CREATE TABLE t (x INT);\nCREATE FUNCTION f() AS $$ BEGIN a; b; END $$;\n CREATE TRIGGER g;"
    assert list(statements(script)) == [
        "CREATE TABLE t (x INT)",
        "CREATE FUNCTION f() AS $$ BEGIN a; b; END $$",
        "CREATE TRIGGER g",
    ]


def _row(**fields: Any) -> AuditRecord:
    base: dict[str, Any] = {"id": 1, "at": "2026-01-01T00:00:00.000000+00:00", "actor": "ada", "role": "admin",
                            "client": "10.0.0.1", "action": "search", "target": "hr", "outcome": "ok",
                            "detail": {}}  # fmt: skip
    return AuditRecord(**(base | fields))


def test_csv_keeps_commas_quotes_newlines_and_chinese_and_defuses_formulas() -> None:
    rows = [
        _row(target='a, "quoted"\nsecond line', detail={"question": "年假有几天？"}),
        _row(actor='=HYPERLINK("http://evil")', target="+1", role="-2", client="@SUM(A1)", id=2),
        _row(target="\tTab", action="\rcr", id=3),
    ]
    text = to_csv(rows)
    assert text.startswith("\ufeff")
    header, first, second, third = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    assert header[:3] == ["id", "when (UTC)", "user"]
    assert first[6] == 'a, "quoted"\nsecond line'
    assert first[8] == '{"question": "年假有几天？"}'
    assert (second[2], second[3], second[4], second[6]) == ('\'=HYPERLINK("http://evil")', "'-2", "'@SUM(A1)", "'+1")
    assert (third[5], third[6]) == ("'\rcr", "'\tTab")
    assert safe_cell("plain") == "plain" and safe_cell(None) == "" and safe_cell(-3) == "'-3"


def test_postgres_database_is_shared_by_replicas(postgres_url: str) -> None:
    one, two = open_database(postgres_url, pool_size=2), open_database(postgres_url, pool_size=2)
    try:
        a, b = AuditStore(one).start(), AuditStore(two).start()  # the second start finds the schema in place
        _add(a, "ada", AuditAction.SIGN_IN)
        _add(b, "bob", AuditAction.SIGN_IN)
        assert sorted(r.actor for r in a.query(AuditQuery())) == ["ada", "bob"]
    finally:
        one.close()
        two.close()
