"""The append-only audit log: who signed in, changed or searched what, when, from where (``ragapp.audit.log``)."""

from ragapp.audit.export import to_csv
from ragapp.audit.log import AuditLog, open_audit
from ragapp.audit.model import CLI_ACTOR, OUTCOMES, SYSTEM_ACTOR, AuditAction, AuditQuery, AuditRecord, Outcome
from ragapp.audit.store import AuditStore

__all__ = [
    "CLI_ACTOR",
    "OUTCOMES",
    "SYSTEM_ACTOR",
    "AuditAction",
    "AuditLog",
    "AuditQuery",
    "AuditRecord",
    "AuditStore",
    "Outcome",
    "open_audit",
    "to_csv",
]
