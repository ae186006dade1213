"""Traces and saved test cases in SQLite.

``TraceStore.save`` only queues: one daemon thread writes, trims oversized traces and applies retention, so a
request never waits on the disk and a write error never reaches the user (it is logged and counted). A database
file that cannot be opened is moved aside and a fresh one started: losing old traces beats breaking the app.

A trace is serialised here and nowhere else: ``TraceStore`` takes a ``Trace``, turns it into JSON on the writer
thread, and ``get`` reads one back. ``TracePayloadStore`` is the same table holding the JSON dicts as they are
(for tools that read or repair stored traces, and the tests of the table itself).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

from ragapp.tracing.model import Trace

log = logging.getLogger(__name__)

MAX_PAYLOAD_BYTES = 2 * 1024 * 1024  # a trace bigger than this (as JSON) has its long strings trimmed
TRIM_CHARS = 20_000
TRIM_MARK = "… [trimmed]"
QUEUE_SIZE = 1000  # traces waiting for the writer; beyond this new ones are dropped, never waited for

_TRACE_SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL, started_at TEXT NOT NULL,
    question TEXT NOT NULL DEFAULT '', mode TEXT NOT NULL DEFAULT '', total_s REAL, status TEXT NOT NULL DEFAULT '',
    degradations TEXT NOT NULL DEFAULT '[]', payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS traces_owner_started ON traces (owner, started_at);
CREATE TABLE IF NOT EXISTS feedback (
    trace_id TEXT PRIMARY KEY, rating TEXT NOT NULL, comment TEXT NOT NULL DEFAULT '', given_at TEXT NOT NULL
);
"""
_TRACE_COLUMNS = "id, owner, kind, started_at, question, mode, total_s, status, degradations, payload"
_SUMMARY_COLUMNS = (
    "id, started_at, question, mode, kind, total_s, status, degradations, coalesce(rating, ''), coalesce(comment, '')"
)
_WITH_FEEDBACK = "traces LEFT JOIN feedback ON feedback.trace_id = traces.id"
RATINGS = ("up", "down")
MAX_COMMENT_CHARS = 2000

_IN_USE = {"SQLITE_BUSY", "SQLITE_LOCKED"}  # a healthy file another process holds: never move it aside

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


class _TraceTable(Generic[T]):
    """Traces per owner. Writes go through one daemon thread; reads share its connection under a lock.

    ``save`` takes ownership of the trace: do not change it afterwards. ``write_errors`` counts traces that could
    not be written, ``dropped`` those refused because the queue was full.
    """

    def __init__(self, path: Path, max_traces: int = 500, max_age_days: float = 14.0) -> None:
        self.path = path
        self.max_traces = max_traces
        self.max_age_days = max_age_days
        self.write_errors = 0
        self.dropped = 0
        self._conn = open_database(path, _TRACE_SCHEMA)
        self._conn.create_function("casefold", 1, _casefold, deterministic=True)
        self._lock = threading.Lock()
        self._queue: queue.Queue[T | threading.Event | None] = queue.Queue(QUEUE_SIZE)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="trace-writer", daemon=True)
        self._thread.start()

    # -- writing -------------------------------------------------------------------------------

    def _encode(self, trace: T) -> dict[str, Any]:
        raise NotImplementedError

    def _decode(self, payload: dict[str, Any]) -> T:
        raise NotImplementedError

    def save(self, trace: T) -> None:
        """Queue the trace for writing and return at once; never raises (problems are logged and counted)."""
        if self._closed:
            log.warning("trace %r not saved: the trace store is closed", _trace_id(trace))
            return
        try:
            self._queue.put_nowait(trace)
        except queue.Full:
            self.dropped += 1
            log.warning("trace %r dropped: %d traces are already waiting to be written", _trace_id(trace), QUEUE_SIZE)

    def flush(self, timeout: float = 5.0) -> None:
        """Wait (at most ``timeout`` seconds) until every trace queued so far is written."""
        if not self._thread.is_alive():
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
        """Write what is queued, stop the writer thread and close the database."""
        if self._closed:
            return
        self._closed = True
        self.flush()
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=1.0)
        self._thread.join(timeout=5.0)
        with self._lock:
            self._conn.close()

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

    def _write(self, trace: T) -> None:
        row = _trace_row(self._encode(trace))
        with self._lock, self._conn:
            self._conn.execute(f"INSERT OR REPLACE INTO traces ({_TRACE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)", row)
            self._conn.execute(
                "DELETE FROM traces WHERE julianday(started_at) < julianday('now') - ?", (self.max_age_days,)
            )
            self._conn.execute(
                "DELETE FROM traces WHERE id IN "
                "(SELECT id FROM traces ORDER BY started_at DESC, rowid DESC LIMIT -1 OFFSET ?)",
                (max(0, self.max_traces),),
            )
            self._conn.execute("DELETE FROM feedback WHERE trace_id NOT IN (SELECT id FROM traces)")

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
        sql = f"SELECT {_SUMMARY_COLUMNS} FROM {_WITH_FEEDBACK} WHERE 1"
        args: builtins.list[object] = []
        if owner is not None:
            sql += " AND owner = ?"
            args.append(owner)
        if rating in RATINGS:
            sql += " AND rating = ?"
            args.append(rating)
        elif rating == "any":
            sql += " AND rating IS NOT NULL"
        elif rating == "none":
            sql += " AND rating IS NULL"
        needle = text.strip().casefold()
        if needle:
            sql += " AND instr(casefold(question), ?) > 0"
            args.append(needle)
        for column, value in (("status", status), ("mode", mode), ("kind", kind)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        sql += " ORDER BY started_at DESC, traces.rowid DESC LIMIT ?"
        args.append(max(0, limit))
        with self._lock:
            rows = self._conn.execute(sql, args).fetchall()
        return [_summary(row) for row in rows]

    def get(self, trace_id: str, owner: str | None) -> T | None:
        """The whole trace, or None when there is none with this id for this owner (None: anyone's)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT payload FROM traces WHERE id = ? AND (? IS NULL OR owner = ?)", (trace_id, owner, owner)
            ).fetchone()
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
        with self._lock, self._conn:
            if self._conn.execute("SELECT 1 FROM traces WHERE id = ? AND owner = ?", (trace_id, owner)).fetchone():
                self._conn.execute(
                    "INSERT OR REPLACE INTO feedback (trace_id, rating, comment, given_at) VALUES (?,?,?,?)",
                    (trace_id, rating, comment.strip()[:MAX_COMMENT_CHARS], given),
                )
                return True
        return False

    def feedback(self, trace_id: str) -> tuple[str, str]:
        """(rating, comment) given on trace ``trace_id``; ("", "") when none."""
        with self._lock:
            row = self._conn.execute("SELECT rating, comment FROM feedback WHERE trace_id = ?", (trace_id,)).fetchone()
        return (str(row[0]), str(row[1])) if row else ("", "")

    def delete_all(self, owner: str) -> int:
        """Delete every trace of ``owner`` (including those still queued); returns how many went."""
        self.flush()
        with self._lock, self._conn:
            gone = self._conn.execute("DELETE FROM traces WHERE owner = ?", (owner,)).rowcount
            self._conn.execute("DELETE FROM feedback WHERE trace_id NOT IN (SELECT id FROM traces)")
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


def open_database(path: Path, schema: str) -> sqlite3.Connection:
    """Open (creating folders and file) the database at ``path`` with ``schema``.

    A file that is not a usable database is renamed to ``<name>.corrupt-<timestamp>`` and a fresh one started. If
    even that fails, an in-memory database keeps the app working (nothing survives a restart then).
    """
    with contextlib.suppress(OSError):  # a folder we cannot create shows up as an open error below
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _connect(str(path), schema)
    except sqlite3.DatabaseError as exc:
        problem: Exception = exc
    if getattr(problem, "sqlite_errorname", "") not in _IN_USE:
        try:
            aside = _move_aside(path)
            log.warning("%s is not a usable database (%s): moved it to %s and started a new one", path, problem, aside)
            return _connect(str(path), schema)
        except (OSError, sqlite3.DatabaseError) as exc:
            problem = exc
    log.warning("could not open %s (%s): keeping records in memory until the app restarts", path, problem)
    return _connect(":memory:", schema)


def _connect(target: str, schema: str) -> sqlite3.Connection:
    conn = sqlite3.connect(target, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(schema)
    except BaseException:
        conn.close()
        raise
    return conn


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while aside.exists():
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    path.rename(aside)
    for suffix in ("-wal", "-shm"):  # a stale journal would be replayed into the new file
        sidecar = path.with_name(path.name + suffix)
        if sidecar.exists():
            sidecar.rename(aside.with_name(aside.name + suffix))
    return aside


# -- rows --------------------------------------------------------------------------------------


def _trace_row(trace: dict[str, Any]) -> tuple[object, ...]:
    payload = _dumps(trace)
    if len(payload.encode("utf-8")) > MAX_PAYLOAD_BYTES:
        trace = _trim(trace)
        payload = _dumps(trace)
    total = trace.get("total_s")
    degradations = [str(d) for d in trace.get("degradations") or ()]
    return (
        str(trace["id"]),
        str(trace["owner"]),
        str(trace.get("kind") or "chat"),
        str(trace["started_at"]),
        str(trace.get("question") or ""),
        str(trace.get("mode") or ""),
        None if total is None else float(total),
        str(trace.get("status") or ""),
        json.dumps(degradations, ensure_ascii=False),
        payload,
    )


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
    found = tuple(json.loads(degradations or "[]"))
    return TraceSummary(trace_id, started_at, question, mode, kind, total_s, status, found, rating, comment)


def _casefold(value: str | None) -> str | None:
    return value.casefold() if isinstance(value, str) else value


def _trace_id(trace: object) -> object:
    if isinstance(trace, Trace):
        return trace.id
    return trace.get("id") if isinstance(trace, dict) else None
