"""Audit records as CSV, for a spreadsheet: UTF-8 with a byte-order mark (so Excel reads Chinese), the csv
module's quoting (commas, quotes, newlines), and every cell that a spreadsheet would run as a formula (one
starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) prefixed with ``'`` so it shows as text
(OWASP's advice on CSV injection)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable

from ragapp.audit.model import AuditRecord

HEADER = ("id", "when (UTC)", "user", "role", "client", "action", "target", "outcome", "detail")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str:
    """``value`` as a cell a spreadsheet shows and never evaluates."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def to_csv(records: Iterable[AuditRecord]) -> str:
    """The records as CSV text, a header first (write it as UTF-8; the text starts with a byte-order mark)."""
    out = io.StringIO()
    out.write("\ufeff")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(HEADER)
    for r in records:
        detail = json.dumps(r.detail, ensure_ascii=False, sort_keys=True) if r.detail else ""
        row = (r.id, r.at, r.actor, r.role, r.client, r.action, r.target, r.outcome, detail)
        writer.writerow([safe_cell(cell) for cell in row])
    return out.getvalue()
