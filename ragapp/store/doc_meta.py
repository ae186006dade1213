"""The catalog's document metadata (``document_meta``: what a file says about itself and where it came from)
and tags (``document_tags``), and a ``DocumentFilter`` turned into SQL over them.

Both tables go with their document (ON DELETE CASCADE); ``Catalog.store_document`` carries them over to a
document's new version. One statement serves SQLite and PostgreSQL: text compares the same on both (dates are
stored as ``YYYY-MM-DD HH:MM:SS``, which sorts as time does).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragapp.core.filters import UPLOAD_SOURCE, DocumentFilter, stamp
from ragapp.core.types import Scope
from ragapp.db import Rows, Transaction

Run = Callable[[str, Sequence[Any]], Rows]


def write_meta(tx: Transaction, doc_id: str, meta: Mapping[str, str]) -> None:
    tx.many(
        "INSERT INTO document_meta (doc_id, key, value) VALUES (?, ?, ?)",
        [(doc_id, k, v) for k, v in meta.items() if v],
    )


def replace_meta(tx: Transaction, doc_id: str, meta: Mapping[str, str]) -> None:
    """Set the keys of ``meta`` anew (a key given empty goes); the document's other keys stay."""
    tx.many("DELETE FROM document_meta WHERE doc_id = ? AND key = ?", [(doc_id, k) for k in meta])
    write_meta(tx, doc_id, meta)


def read_meta(run: Run, doc_id: str) -> dict[str, str]:
    return {
        str(k): str(v) for k, v in run("SELECT key, value FROM document_meta WHERE doc_id = ? ORDER BY key", (doc_id,))
    }


def read_tags(run: Run, doc_id: str) -> list[str]:
    return [str(r[0]) for r in run("SELECT tag FROM document_tags WHERE doc_id = ? ORDER BY tag", (doc_id,))]


def write_tags(tx: Transaction, doc_id: str, tags: Sequence[str]) -> None:
    """Make ``tags`` (cleaned already) the document's tags."""
    tx.execute("DELETE FROM document_tags WHERE doc_id = ?", (doc_id,))
    tx.many("INSERT INTO document_tags (doc_id, tag) VALUES (?, ?)", [(doc_id, t) for t in dict.fromkeys(tags)])


def all_tags(run: Run) -> list[tuple[str, int]]:
    """Every tag in use, with how many documents carry it, by tag."""
    rows = run("SELECT tag, COUNT(*) FROM document_tags GROUP BY tag ORDER BY tag", ())
    return [(str(tag), int(n)) for tag, n in rows]


def _like(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern (``\\`` escapes ``%`` and ``_``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _meta_value(key: str) -> str:
    return f"(SELECT m.value FROM document_meta m WHERE m.doc_id = d.doc_id AND m.key = '{key}')"


# Documents from before metadata was kept have no path or source rows: they read as uploads under their name.
_PATH = f"COALESCE({_meta_value('path')}, d.name)"
_SOURCE = f"COALESCE({_meta_value('source')}, '{UPLOAD_SOURCE}')"


def matching(run: Run, where: DocumentFilter, kbs: Scope) -> frozenset[str]:
    """The ids of the documents in ``kbs`` (None: any knowledge base) that ``where`` admits."""
    if kbs is not None and not kbs:
        return frozenset()
    clauses: list[str] = []
    args: list[Any] = []

    def add(clause: str, *values: Any) -> None:
        clauses.append(clause)
        args.extend(values)

    if kbs is not None:
        add(f"d.kb IN ({','.join('?' * len(kbs))})", *sorted(kbs))
    if where.tags:
        marks = ",".join("?" * len(where.tags))
        add(f"EXISTS (SELECT 1 FROM document_tags t WHERE t.doc_id = d.doc_id AND t.tag IN ({marks}))", *where.tags)
    if where.file_types:
        add(f"d.file_type IN ({','.join('?' * len(where.file_types))})", *where.file_types)
    if where.source is not None:
        add(f"{_SOURCE} = ?", where.source)
    if where.path_prefix is not None:
        add(f"{_PATH} LIKE ? ESCAPE '\\'", _like(where.path_prefix.lstrip("/")) + "%")
    for key, text in (("author", where.author), ("title", where.title)):
        if text is not None:
            add(f"LOWER({_meta_value(key)}) LIKE ? ESCAPE '\\'", "%" + _like(text.casefold()) + "%")
    for column, after, before in (
        # When it changed at its source, else the date the file declares, else (as far as anyone knows) when
        # it was added.
        (
            f"COALESCE({_meta_value('changed')}, {_meta_value('modified')}, d.added_at)",
            where.modified_after,
            where.modified_before,
        ),
        ("d.added_at", where.added_after, where.added_before),
    ):
        if after is not None:
            add(f"{column} >= ?", stamp(after))
        if before is not None:
            add(f"{column} < ?", stamp(before))
    sql = f"SELECT d.doc_id, {_PATH} FROM documents d" + (" WHERE " + " AND ".join(clauses) if clauses else "")
    rows = run(sql, args)
    if where.path_glob is not None:  # globs are not SQL on both engines; the rows are few by now
        rows = [r for r in rows if fnmatch.fnmatchcase(str(r[1]), where.path_glob.lstrip("/"))]
    return frozenset(str(r[0]) for r in rows)
