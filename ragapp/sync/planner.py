"""What a sync has to do: walk the tree, compare with what the last sync saw, and sort the files.

Cheap first: a file whose size and modification time are as last seen is not read. Only a file whose stat
changed is hashed, and only a file whose hash changed (or is new) is ingested. A new path with the hash of a
path that vanished is a rename: its document is renamed, nothing is embedded again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from ragapp.core.digest import file_sha256
from ragapp.sync.sources import Refusal, Source
from ragapp.sync.state import FileRow

_SKIPPED_DIRS = {".git", ".hg", ".svn"}


@dataclass(frozen=True)
class Seen:
    """A file found by the walk, as it stood then."""

    rel_path: str
    path: Path
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Change:
    """A file to ingest: ``row`` is what it is now, ``before`` what the last sync saw (None: a new path)."""

    seen: Seen
    row: FileRow
    before: FileRow | None


@dataclass
class Plan:
    seen: int = 0
    ignored: int = 0  # files of a type the app does not read
    unchanged: list[FileRow] = field(default_factory=list)
    touched: list[FileRow] = field(default_factory=list)  # stat changed, content the same: only the row changes
    changes: list[Change] = field(default_factory=list)
    renames: list[Change] = field(default_factory=list)  # ``before``: the vanished path it came from
    removed: list[FileRow] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    retrying: list[str] = field(default_factory=list)
    hashed: int = 0


def walk(root: Path, source: Source, extensions: Collection[str]) -> tuple[list[Seen], int, list[Refusal]]:
    """The files under ``root`` the source wants, the count of those of a type not read, and the folders that
    could not be listed. Symbolic links are not followed (a link could lead anywhere on the server)."""
    found: list[Seen] = []
    refused: list[Refusal] = []
    ignored = 0

    def unreadable(error: OSError) -> None:
        where = Path(error.filename).relative_to(root).as_posix() if error.filename else "."
        refused.append(Refusal(where + "/", f"folder not readable: {error.strerror or error}"))

    for folder, dirs, files in os.walk(root, onerror=unreadable):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if not source.wants(rel):
                continue
            if path.suffix.lower() not in extensions:
                ignored += 1
                continue
            try:
                st = path.lstat()
            except OSError as exc:  # gone since listed, or not even stat-able
                refused.append(Refusal(rel, f"not readable: {exc.strerror or exc}"))
                continue
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            found.append(Seen(rel, path, st.st_size, st.st_mtime_ns))
    return found, ignored, refused


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def plan(
    seen: list[Seen],
    before: dict[str, FileRow],
    settle_s: float,
    sleep: Callable[[float], None] = time.sleep,
) -> Plan:
    """Sort the walked files against ``before`` (what the last sync saw, by path).

    A file written less than ``settle_s`` ago is looked at again ``settle_s`` later; one whose size or time
    moved meanwhile, or while it was hashed, is still being written: it is left for the next sync
    (``retrying``). A file that cannot be read is refused with the reason; the others go on."""
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
    moving = {f.rel_path for f in young if _stat(f.path) != (f.size, f.mtime_ns)}
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
            digest = file_sha256(file.path)
        except OSError as exc:
            out.refused.append(Refusal(file.rel_path, f"not readable: {exc.strerror or exc}"))
            continue
        out.hashed += 1
        if _stat(file.path) != (file.size, file.mtime_ns):  # written to while we read it
            out.retrying.append(file.rel_path)
            continue
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
