"""Traces and their feedback, in a SQLite file or the deployment's shared PostgreSQL database.

``TraceStore.save`` only queues: one daemon thread writes, trims oversized traces and applies retention, so a
request never waits on the database and a write error never reaches the user (it is logged and counted). A SQLite
file that cannot be opened is moved aside and a fresh one started: losing old traces beats breaking the app.

A trace is serialised here and nowhere else: ``TraceStore`` takes a ``Trace``, turns it into JSON on the writer
thread, and ``get`` reads one back. ``TracePayloadStore`` is the same table holding the JSON dicts as they are
(for tools that read or repair stored traces, and the tests of the table itself).

Times are ISO 8601 text in UTC (``started_at`` is rewritten to UTC on the way in), so as strings they sort in
time order: retention compares them with a cutoff computed here. PostgreSQL compares them byte by byte, as SQLite
does, under the "C" collation (a locale's collation weighs the punctuation differently).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Generic, Self, TypeVar

from ragapp.core.lifecycle import NotStartedError, started
from ragapp.core.said import Said
from ragapp.core.serial import load
from ragapp.db import Database, open_tables, order_column
from ragapp.tracing.model import Trace

log = logging.getLogger(__name__)

MAX_PAYLOAD_BYTES = 2 * 1024 * 1024  # a trace bigger than this (as JSON) has its long strings trimmed
TRIM_CHARS = 20_000
TRIM_MARK = "… [trimmed]"
QUEUE_SIZE = 1000  # traces waiting for the writer; beyond this new ones are dropped, never waited for
FEEDBACK_WAIT_S = 30.0  # how long feedback waits for its trace when the writer is behind

# ``question_folded``: the question casefolded in Python, searched with LIKE, so both engines find the same rows
# (SQLite's lower() folds only ASCII, PostgreSQL's depends on the server's locale, neither folds "ß" to "ss").
_TRACE_SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL, started_at TEXT NOT NULL,
    question TEXT NOT NULL DEFAULT '', mode TEXT NOT NULL DEFAULT '', total_s REAL, status TEXT NOT NULL DEFAULT '',
    degradations TEXT NOT NULL DEFAULT '[]', payload TEXT NOT NULL, question_folded TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS traces_owner_started ON traces (owner, started_at);
CREATE TABLE IF NOT EXISTS feedback (
    trace_id TEXT PRIMARY KEY, rating TEXT NOT NULL, comment TEXT NOT NULL DEFAULT '', given_at TEXT NOT NULL
);
"""
# ``seq`` orders traces that started in the same second, as SQLite's rowid does.
_TRACE_STEPS = [
    """
CREATE TABLE traces (
    seq BIGINT GENERATED ALWAYS AS IDENTITY, id TEXT PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL,
    started_at TEXT COLLATE "C" NOT NULL, question TEXT NOT NULL DEFAULT '', mode TEXT NOT NULL DEFAULT '',
    total_s DOUBLE PRECISION, status TEXT NOT NULL DEFAULT '', degradations TEXT NOT NULL DEFAULT '[]',
    payload TEXT NOT NULL, question_folded TEXT NOT NULL DEFAULT ''
);
CREATE INDEX traces_owner_started ON traces (owner, started_at);
CREATE TABLE feedback (
    trace_id TEXT PRIMARY KEY, rating TEXT NOT NULL, comment TEXT NOT NULL DEFAULT '', given_at TEXT NOT NULL
)"""
]
_TRACE_COLUMNS = "id, owner, kind, started_at, question, mode, total_s, status, degradations, payload, question_folded"
_UPSERT = (
    f"INSERT INTO traces ({_TRACE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _TRACE_COLUMNS.split(", ")[1:])
)
_SUMMARY_COLUMNS = (
    "id, started_at, question, mode, kind, total_s, status, degradations, coalesce(rating, ''), coalesce(comment, '')"
)
_WITH_FEEDBACK = "traces LEFT JOIN feedback ON feedback.trace_id = traces.id"
_ORPHANS = "DELETE FROM feedback WHERE trace_id NOT IN (SELECT id FROM traces)"
# One statement, so the trace cannot go between finding it and keeping its feedback.
_FEEDBACK = (
    "INSERT INTO feedback (trace_id, rating, comment, given_at) "
    "SELECT id, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT) FROM traces WHERE id = ? AND owner = ? "
    "ON CONFLICT (trace_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment, "
    "given_at = excluded.given_at"
)
RATINGS = ("up", "down")
MAX_COMMENT_CHARS = 2000

T = TypeVar("T")


@dataclass(frozen=True)
class TraceSummary:
    """One row of the Traces list."""

    id: str
    started_at: str
    question: str
    mode: str
    kind: str
    total_s: float | None
    status: str
    degradations: tuple[str, ...]
    rating: str = ""  # the user's feedback on the answer: "up", "down" or "" (none)
    comment: str = ""
    degradations_said: dict[str, tuple[Said, ...]] = field(default_factory=dict)  # by English, where kept


class _TraceTable(Generic[T]):
    """Traces, per owner. Writes go through one daemon thread (``start`` starts it); reads go straight to the
    database.

    ``target``: a SQLite file, or the shared ``Database``. ``save`` takes ownership of the trace: do not change it
    afterwards. ``write_errors`` counts traces that could not be written, ``dropped`` those the full queue refused.
    """

    def __init__(self, target: Path | Database, max_traces: int = 500, max_age_days: float = 14.0) -> None:
        self.path = target if isinstance(target, Path) else None
        self.max_traces = max_traces
        self.max_age_days = max_age_days
        self.write_errors = 0
        self.dropped = 0
        self._target = target
        self._started: Database | None = None
        self._owned = False
        self._seq = ""
        self._queue: queue.Queue[T | threading.Event | None] = queue.Queue(QUEUE_SIZE)
        self._pending: dict[str, int] = {}  # ids queued and not written yet, for set_feedback
        self._pending_lock = threading.Lock()
        self._closed = False
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Open the tables (creating or migrating them) and start the writer thread; a second call does nothing."""
        if self._started is not None:
            return self
        db, self._owned = open_tables(self._target, "traces", _TRACE_SCHEMA, _TRACE_STEPS)
        if db.dialect == "sqlite":
            _add_folded_question(db)
        self._seq = order_column(db)
        self._started = db
        self._thread = threading.Thread(target=self._run, name="trace-writer", daemon=True)
        self._thread.start()
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    # -- writing -------------------------------------------------------------------------------

    def _encode(self, trace: T) -> dict[str, Any]:
        raise NotImplementedError

    def _decode(self, payload: dict[str, Any]) -> T:
        raise NotImplementedError

    def save(self, trace: T) -> None:
        """Queue the trace for writing and return at once; once started, never raises (problems are logged and
        counted)."""
        if self._closed:
            log.warning("trace %r not saved: the trace store is closed", _trace_id(trace))
            return
        if self._thread is None:
            raise NotStartedError(self)
        self._count_pending(trace, +1)
        try:
            self._queue.put_nowait(trace)
        except queue.Full:
            self._count_pending(trace, -1)
            self.dropped += 1
            log.warning("trace %r dropped: %d traces are already waiting to be written", _trace_id(trace), QUEUE_SIZE)

    def flush(self, timeout: float = 5.0) -> None:
        """Wait (at most ``timeout`` seconds) until every trace queued so far is written."""
        if self._thread is None or not self._thread.is_alive():
            return
        deadline = time.monotonic() + timeout
        done = threading.Event()
        try:
            self._queue.put(done, timeout=timeout)
        except queue.Full:
            log.warning("trace store flush gave up after %.1f s: the queue stayed full", timeout)
            return
        if not done.wait(max(0.0, deadline - time.monotonic())):
            log.warning("trace store flush gave up after %.1f s: traces are still being written", timeout)

    def close(self) -> None:
        """Write what is queued and stop the writer thread; close the database if it was opened here."""
        if self._closed:
            return
        self._closed = True
        if self._thread is None or self._started is None:  # never started: nothing to write or close
            return
        self.flush()
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=1.0)
        self._thread.join(timeout=5.0)
        if self._owned:
            self._started.close()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, threading.Event):
                item.set()
                continue
            try:
                self._write(item)
            except Exception as exc:  # the writer must survive anything one trace can do
                self.write_errors += 1
                log.warning("could not write trace %r: %s", _trace_id(item), exc)
            finally:
                self._count_pending(item, -1)

    def _write(self, trace: T) -> None:
        row = _trace_row(self._encode(trace))
        with self._db.transaction() as tx:
            # Replicas trimming at once would each delete by their own view of the newest rows: one at a time.
            tx.lock("traces:retention")
            tx.execute(_UPSERT, row)
            tx.execute("DELETE FROM traces WHERE started_at < ?", (_cutoff(self.max_age_days),))
            tx.execute(
                "DELETE FROM traces WHERE id NOT IN "
                f"(SELECT id FROM traces ORDER BY started_at DESC, {self._seq} DESC LIMIT ?)",
                (max(0, self.max_traces),),
            )
            tx.execute(_ORPHANS)

    def _count_pending(self, trace: object, step: int) -> None:
        trace_id = str(_trace_id(trace))
        with self._pending_lock:
            left = self._pending.get(trace_id, 0) + step
            if left > 0:
                self._pending[trace_id] = left
            else:
                self._pending.pop(trace_id, None)

    # -- reading -------------------------------------------------------------------------------

    def list(
        self,
        owner: str | None,
        *,
        text: str = "",
        status: str | None = None,
        mode: str | None = None,
        kind: str | None = None,
        rating: str | None = None,
        limit: int = 100,
    ) -> builtins.list[TraceSummary]:
        """The owner's traces (None: everyone's), newest first. ``text`` matches part of the question, ignoring
        case; ``rating``: "up", "down", "any" (some feedback) or "none"."""
        where: builtins.list[str] = []
        args: builtins.list[object] = []
        if owner is not None:
            where.append("owner = ?")
            args.append(owner)
        if rating in RATINGS:
            where.append("rating = ?")
            args.append(rating)
        elif rating == "any":
            where.append("rating IS NOT NULL")
        elif rating == "none":
            where.append("rating IS NULL")
        needle = text.strip().casefold()
        if needle:
            where.append("question_folded LIKE ? ESCAPE '\\'")
            args.append(f"%{_like_literal(needle)}%")
        for column, value in (("status", status), ("mode", mode), ("kind", kind)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = f"SELECT {_SUMMARY_COLUMNS} FROM {_WITH_FEEDBACK}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY started_at DESC, traces.{self._seq} DESC LIMIT ?"
        args.append(max(0, limit))
        return [_summary(row) for row in self._db.query(sql, args)]

    def get(self, trace_id: str, owner: str | None) -> T | None:
        """The whole trace, or None when there is none with this id for this owner (None: anyone's)."""
        row = self._db.one(
            "SELECT payload FROM traces WHERE id = ? AND (CAST(? AS TEXT) IS NULL OR owner = ?)",
            (trace_id, owner, owner),
        )
        if row is None:
            return None
        try:
            payload = json.loads(row[0])
        except ValueError as exc:
            log.warning("trace %r is unreadable (%s)", trace_id, exc)
            return None
        if not isinstance(payload, dict):
            log.warning("trace %r is unreadable (not a JSON object)", trace_id)
            return None
        return self._decode(payload)

    def set_feedback(self, trace_id: str, owner: str, rating: str, comment: str = "") -> bool:
        """Keep the owner's feedback on the answer of trace ``trace_id`` (a later one replaces it); False when
        the owner has no such trace. ``rating`` is "up" or "down"; the comment is cut to ``MAX_COMMENT_CHARS``."""
        if rating not in RATINGS:
            raise ValueError(f"rating must be one of {RATINGS}, not {rating!r}")
        self.flush()  # the trace of the answer just given may still be queued
        given = datetime.now(UTC).isoformat(timespec="seconds")
        args = (rating, plain_text(comment.strip()[:MAX_COMMENT_CHARS]), given, trace_id, owner)
        if self._db.execute(_FEEDBACK, args):
            return True
        with self._pending_lock:
            if trace_id not in self._pending:
                return False
        # flush gave up while this very trace still waits for the writer (a busy machine): it is not gone, it is
        # late. Wait for it rather than tell the user their answer's trace is gone.
        self.flush(FEEDBACK_WAIT_S)
        return bool(self._db.execute(_FEEDBACK, args))

    def feedback(self, trace_id: str) -> tuple[str, str]:
        """(rating, comment) given on trace ``trace_id``; ("", "") when none."""
        row = self._db.one("SELECT rating, comment FROM feedback WHERE trace_id = ?", (trace_id,))
        return (str(row[0]), str(row[1])) if row else ("", "")

    def delete_all(self, owner: str) -> int:
        """Delete every trace of ``owner`` (including those still queued); returns how many went."""
        self.flush()
        with self._db.transaction() as tx:
            tx.lock("traces:retention")  # a writer trimming the same rows in another order could deadlock with us
            gone = tx.execute("DELETE FROM traces WHERE owner = ?", (owner,))
            tx.execute(_ORPHANS)
            return gone


class TraceStore(_TraceTable[Trace]):
    """Typed traces: each is serialised (``Trace.to_dict``) on the writer thread and read back as a ``Trace``."""

    def _encode(self, trace: Trace) -> dict[str, Any]:
        return trace.to_dict()

    def _decode(self, payload: dict[str, Any]) -> Trace:
        return Trace.from_dict(payload)


class TracePayloadStore(_TraceTable[dict[str, Any]]):
    """The same table with each trace as its stored JSON dict, unchanged."""

    def _encode(self, trace: dict[str, Any]) -> dict[str, Any]:
        return trace

    def _decode(self, payload: dict[str, Any]) -> dict[str, Any]:
        return payload


# -- opening -----------------------------------------------------------------------------------


def _add_folded_question(db: Database) -> None:
    """A file from before ``question_folded`` gets the column, filled in for the traces it holds."""
    with db.transaction() as tx:
        if any(column[1] == "question_folded" for column in tx.query("PRAGMA table_info(traces)")):
            return
        tx.execute("ALTER TABLE traces ADD COLUMN question_folded TEXT NOT NULL DEFAULT ''")
        rows = tx.query("SELECT id, question FROM traces")
        tx.many("UPDATE traces SET question_folded = ? WHERE id = ?", [(q.casefold(), i) for i, q in rows])


# -- rows --------------------------------------------------------------------------------------


def _trace_row(trace: dict[str, Any]) -> tuple[object, ...]:
    payload = _dumps(trace)
    if len(payload.encode("utf-8")) > MAX_PAYLOAD_BYTES:
        trace = _trim(trace)
        payload = _dumps(trace)
    total = trace.get("total_s")
    # Each degradation as its English, or with its records (for the list's column in the page's language)
    said = trace.get("degradations_said") or {}
    degradations = [
        {"english": str(d), "said": said[d]} if isinstance(said.get(d), list) else str(d)
        for d in trace.get("degradations") or ()
    ]
    question = plain_text(str(trace.get("question") or ""))
    return (
        str(trace["id"]),
        str(trace["owner"]),
        str(trace.get("kind") or "chat"),
        utc_iso(str(trace["started_at"])),
        question,
        str(trace.get("mode") or ""),
        None if total is None else float(total),
        str(trace.get("status") or ""),
        json.dumps(degradations, ensure_ascii=False),
        payload,
        question.casefold(),
    )


def utc_iso(text: str) -> str:
    """``text`` (ISO 8601) in UTC as ``isoformat`` writes it, so times compare as strings ("…+02:00", "…Z" or no
    offset, taken as UTC, would sort apart from the same instant written "…+00:00"); other text is kept."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return text
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).isoformat()


def _cutoff(max_age_days: float) -> str:
    try:
        return (datetime.now(UTC) - timedelta(days=max_age_days)).isoformat(timespec="seconds")
    except OverflowError:  # further back than any date: nothing is that old
        return ""


def _dumps(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:  # a value JSON does not know (a datetime, a Path): keep its text
        return json.dumps(value, ensure_ascii=False, default=str)


def _trim(value: Any) -> Any:
    """A copy of ``value`` with every string longer than ``TRIM_CHARS`` cut there and marked."""
    if isinstance(value, str):
        return value[:TRIM_CHARS] + TRIM_MARK if len(value) > TRIM_CHARS else value
    if isinstance(value, dict):
        return {key: _trim(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_trim(item) for item in value]
    return value


def _summary(row: tuple[Any, ...]) -> TraceSummary:
    trace_id, started_at, question, mode, kind, total_s, status, degradations, rating, comment = row
    english: list[str] = []
    said: dict[str, tuple[Said, ...]] = {}
    for item in json.loads(degradations or "[]"):  # a string (rows written before the records were kept) or a dict
        if isinstance(item, dict):
            english.append(str(item.get("english", "")))
            said[english[-1]] = tuple(load(Said, part) for part in item.get("said") or () if isinstance(part, dict))
        else:
            english.append(str(item))
    return TraceSummary(
        trace_id, started_at, question, mode, kind, total_s, status, tuple(english), rating, comment, said
    )


def _like_literal(text: str) -> str:
    """``text`` matched literally by LIKE ... ESCAPE '\\': a typed "%" or "_" is not a wildcard."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def plain_text(value: str) -> str:
    """``value`` without NUL, which PostgreSQL's text cannot hold (dropped on both engines, to keep the same)."""
    return value.replace("\x00", "")


def _trace_id(trace: object) -> object:
    if isinstance(trace, Trace):
        return trace.id
    return trace.get("id") if isinstance(trace, dict) else None
