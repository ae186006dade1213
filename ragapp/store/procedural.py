"""Procedural memory's outcomes: per answer that got a verdict, its kind of question, the mode and the agent tools
that made it, and whether it was kept. In a SQLite file or the deployment's shared PostgreSQL database.

One row per answer (keyed by its trace), written as the verdict arrives: a thumbs up keeps it, a thumbs down or the
same question asked again right after does not; a later rating replaces an earlier verdict, a re-ask never replaces
a rating. Kept as rows rather than recomputed from traces because traces go after ``traces.max_traces`` or
``traces.max_age_days`` while experience should outlast them, and reading every trace's payload per question would
cost more than the question. The tallies per kind are counted from at most ``RECENT`` rows of that kind, newest
first, so old experience fades as new arrives. Global, not per knowledge base: feedback is sparse, and splitting it
by scope would leave most kinds below the evidence threshold.
"""

from __future__ import annotations

import builtins
import json
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Self

from ragapp.core.events import Tally
from ragapp.core.lifecycle import started
from ragapp.db import Database, open_tables

_SCHEMA = """
CREATE TABLE IF NOT EXISTS procedural_outcomes (
    trace_id TEXT PRIMARY KEY, kind TEXT NOT NULL, leaf TEXT NOT NULL DEFAULT '', mode TEXT NOT NULL,
    tools TEXT NOT NULL DEFAULT '[]', kept INTEGER NOT NULL, signal TEXT NOT NULL, at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS procedural_outcomes_kind_at ON procedural_outcomes (kind, at);
"""
_STEPS = [
    """
CREATE TABLE procedural_outcomes (
    trace_id TEXT PRIMARY KEY, kind TEXT NOT NULL, leaf TEXT NOT NULL DEFAULT '', mode TEXT NOT NULL,
    tools TEXT NOT NULL DEFAULT '[]', kept INTEGER NOT NULL, signal TEXT NOT NULL, at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX procedural_outcomes_kind_at ON procedural_outcomes (kind, at)"""
]
_COLUMNS = "trace_id, kind, leaf, mode, tools, kept, signal, at"
_INSERT = f"INSERT INTO procedural_outcomes ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (trace_id) DO "
_RATED = _INSERT + (
    "UPDATE SET kind = excluded.kind, leaf = excluded.leaf, mode = excluded.mode, tools = excluded.tools, "
    "kept = excluded.kept, signal = excluded.signal, at = excluded.at"
)
_REASKED = _INSERT + "NOTHING"  # a rating the user gave outweighs asking again
RECENT = 500  # rows per kind the tallies are counted from

Signal = Literal["up", "down", "reask"]


@dataclass(frozen=True)
class Outcome:
    """One answer's verdict: ``kind`` of question, ``leaf`` (the intent routing chose, "" for none), the mode that
    answered and the agent tools that returned something, and how it was judged (``signal``)."""

    trace_id: str
    kind: str
    mode: str
    signal: Signal
    tools: tuple[str, ...] = ()
    leaf: str = ""

    @property
    def kept(self) -> bool:
        return self.signal == "up"


@dataclass(frozen=True)
class TableRow:
    """One line of the table the Traces tab shows: answers of one kind (and intent leaf, "" for none) in one mode,
    and how many were kept."""

    kind: str
    mode: str
    kept: int
    answers: int
    leaf: str = ""


class ProceduralStore:
    """``target``: a SQLite file, or the shared ``Database`` (every replica learns from every user's feedback)."""

    def __init__(self, target: Path | Database, max_outcomes: int = 5000) -> None:
        self.path = target if isinstance(target, Path) else None
        self.max_outcomes = max_outcomes
        self._target = target
        self._started: Database | None = None
        self._owned = False

    def start(self) -> Self:
        """Open the file (given a path) and create or migrate the table; a second call does nothing."""
        if self._started is None:
            self._started, self._owned = open_tables(self._target, "procedural", _SCHEMA, _STEPS)
        return self

    @property
    def _db(self) -> Database:
        return started(self, self._started)

    def record(self, outcome: Outcome) -> None:
        """Keep ``outcome`` (a rating replaces the answer's earlier verdict; a re-ask only fills in a missing one),
        then trim the table to ``max_outcomes`` rows, the oldest going first."""
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        tools = json.dumps(sorted(set(outcome.tools)))
        o = outcome
        row = (o.trace_id, o.kind, o.leaf, o.mode, tools, int(o.kept), o.signal, now)
        with self._db.transaction() as tx:
            tx.execute(_REASKED if outcome.signal == "reask" else _RATED, row)
            tx.execute(
                "DELETE FROM procedural_outcomes WHERE at < (SELECT at FROM procedural_outcomes ORDER BY at DESC "
                "LIMIT 1 OFFSET ?)",
                (self.max_outcomes - 1,),
            )

    def tallies(self, kind: str) -> tuple[tuple[Tally, ...], tuple[Tally, ...]]:
        """(per mode, per agent tool) kept of answers, for ``kind``, from its ``RECENT`` newest outcomes."""
        rows = self._db.query(
            "SELECT mode, tools, kept FROM procedural_outcomes WHERE kind = ? ORDER BY at DESC LIMIT ?", (kind, RECENT)
        )
        modes: Counter[str] = Counter()
        modes_kept: Counter[str] = Counter()
        tools: Counter[str] = Counter()
        tools_kept: Counter[str] = Counter()
        for mode, used, kept in rows:
            modes[mode] += 1
            modes_kept[mode] += int(kept)
            if mode == "agent":
                for tool in _tool_list(used):
                    tools[tool] += 1
                    tools_kept[tool] += int(kept)
        return (
            tuple(Tally(m, modes_kept[m], n) for m, n in sorted(modes.items())),
            tuple(Tally(t, tools_kept[t], n) for t, n in sorted(tools.items())),
        )

    def table(self) -> builtins.list[TableRow]:
        """Every kind, intent leaf and mode with its answers and how many were kept (all the table holds)."""
        rows = self._db.query(
            "SELECT kind, leaf, mode, SUM(kept), COUNT(*) FROM procedural_outcomes GROUP BY kind, leaf, mode "
            "ORDER BY kind, leaf, mode"
        )
        return [TableRow(kind, mode, int(kept), int(n), leaf) for kind, leaf, mode, kept, n in rows]

    def close(self) -> None:
        if self._started is not None and self._owned:
            self._started.close()
        self._started = None


def _tool_list(text: str) -> builtins.list[str]:
    """The stored tool names (a JSON list); an unreadable value is no tools."""
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
