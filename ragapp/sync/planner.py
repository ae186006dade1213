"""What a sync has to do: compare what the walk found with what the last sync saw, and sort the files.

Cheap first: a file whose size and modification time are as last seen is not read. Only a file whose stat
changed is hashed, and only a file whose hash changed (or is new) is ingested. A new path with the hash of a
path that vanished is a rename: its document is renamed, nothing is embedded again. Files are read through the
``Tree`` (``ragapp.sync.tree``): never through a link, never blocking on a special file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ragapp.sync.sources import Refusal
from ragapp.sync.state import FileRow
from ragapp.sync.tree import FileProblem, Seen, Tree


@dataclass(frozen=True)
class Change:
    """A file to ingest: ``row`` is what it is now, ``before`` what the last sync saw (None: a new path)."""

    seen: Seen
    row: FileRow
    before: FileRow | None


@dataclass
class Plan:
    seen: int = 0
    unchanged: list[FileRow] = field(default_factory=list)
    touched: list[FileRow] = field(default_factory=list)  # stat changed, content the same: only the row changes
    changes: list[Change] = field(default_factory=list)
    renames: list[Change] = field(default_factory=list)  # ``before``: the vanished path it came from
    removed: list[FileRow] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    retrying: list[str] = field(default_factory=list)
    hashed: int = 0


def _stat(tree: Tree, rel: str) -> tuple[int, int] | None:
    st = tree.lstat(rel)
    return None if st is None else (st.st_size, st.st_mtime_ns)


def plan(
    tree: Tree,
    seen: list[Seen],
    before: dict[str, FileRow],
    settle_s: float,
    sleep: Callable[[float], None] = time.sleep,
) -> Plan:
    """Sort the files ``tree``'s walk found against ``before`` (what the last sync saw, by path).

    A file written less than ``settle_s`` ago is looked at again ``settle_s`` later; one whose size or time
    moved meanwhile, or while it was hashed, is still being written: it is left for the next sync
    (``retrying``), as is one gone since the walk. A file that cannot be read is refused with the reason; the
    others go on."""
    out = Plan(seen=len(seen))
    candidates: list[Seen] = []
    for file in seen:
        row = before.get(file.rel_path)
        if row is not None and (row.size, row.mtime_ns) == (file.size, file.mtime_ns):
            out.unchanged.append(row)
        else:
            candidates.append(file)
    young = [f for f in candidates if time.time_ns() - f.mtime_ns < settle_s * 1e9]
    if young:
        sleep(settle_s)
    moving = {f.rel_path for f in young if _stat(tree, f.rel_path) != (f.size, f.mtime_ns)}
    present = {f.rel_path for f in seen}
    vanished = {rel: row for rel, row in before.items() if rel not in present}
    by_hash: dict[str, list[FileRow]] = {}
    for row in vanished.values():
        by_hash.setdefault(row.content_hash, []).append(row)
    for file in candidates:
        if file.rel_path in moving:
            out.retrying.append(file.rel_path)
            continue
        try:
            read = tree.read(file.rel_path)
        except FileProblem as problem:
            if problem.retry:
                out.retrying.append(file.rel_path)
            else:
                out.refused.append(Refusal(file.rel_path, problem.reason))
            continue
        out.hashed += 1
        if (read.size, read.mtime_ns) != (file.size, file.mtime_ns):  # written to since the walk
            out.retrying.append(file.rel_path)
            continue
        digest = read.content_hash
        old = before.get(file.rel_path)
        row = FileRow(file.rel_path, digest, file.size, file.mtime_ns)
        if old is not None and old.content_hash == digest:
            out.touched.append(FileRow(file.rel_path, digest, file.size, file.mtime_ns, old.doc_id, old.problem))
        elif old is None and by_hash.get(digest):
            gone = by_hash[digest].pop()
            vanished.pop(gone.rel_path)
            out.renames.append(
                Change(file, FileRow(file.rel_path, digest, file.size, file.mtime_ns, gone.doc_id), gone)
            )
        else:
            out.changes.append(Change(file, row, old))
    out.removed = sorted(vanished.values(), key=lambda r: r.rel_path)
    return out
