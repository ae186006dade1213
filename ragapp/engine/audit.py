"""The audit facet: the audit log for admins (``Action.READ_AUDIT``): a page of records by filter, and CSV.

What is recorded, and how a failed write is handled, is ``ragapp.audit``'s; the other facets record through
the ``AuditLog`` they are given. Reading the log is itself recorded (who looked, with which filters).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from ragapp.audit import OUTCOMES, AuditAction, AuditLog, AuditQuery, AuditRecord, Outcome, to_csv
from ragapp.core.access import Action, Actor, require

__all__ = ["OUTCOMES", "AuditAction", "AuditPage", "AuditQuery", "AuditRecord", "AuditView", "Outcome"]

CSV_MAX_ROWS = 100_000  # one export at most; narrow the filters for more


@dataclass(frozen=True)
class AuditPage:
    records: list[AuditRecord]
    total: int  # how many match in all
    query: AuditQuery


def _filters(query: AuditQuery) -> dict[str, str]:
    return {k: str(v) for k, v in asdict(query).items() if v not in (None, "") and k not in ("limit", "offset")}


class AuditView:
    def __init__(self, log: AuditLog) -> None:
        self.log = log

    @property
    def enabled(self) -> bool:
        return self.log.enabled

    def page(self, query: AuditQuery, *, actor: Actor) -> AuditPage:
        """The records ``query`` matches, newest first, from ``query.offset``."""
        with self.log.attempt(actor, AuditAction.AUDIT_READ, **_filters(query)):
            require(actor, Action.READ_AUDIT)
            records, total = self.log.query(query)
        return AuditPage(records, total, query)

    def csv(self, query: AuditQuery, *, actor: Actor) -> str:
        """Every record ``query`` matches (its paging ignored; ``CSV_MAX_ROWS`` at most), newest first, as CSV."""
        with self.log.attempt(actor, AuditAction.AUDIT_READ, format="csv", **_filters(query)):
            require(actor, Action.READ_AUDIT)
            records, _total = self.log.query(replace(query, limit=CSV_MAX_ROWS, offset=0))  # one consistent read
        return to_csv(records)
