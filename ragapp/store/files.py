"""The uploaded files themselves, kept beside the catalog (``files/<doc_id><ext>``) so a citation can show its
page as it looks and a document can be indexed again after a parser or embedder change. Written before the
catalog commits and removed with the document; ``orphans`` finds what a crash in between left behind."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)


class FileStore:
    def __init__(self, folder: Path) -> None:
        self.folder = folder  # made by the first ``keep``

    def _path(self, doc_id: str, extension: str) -> Path:
        ext = extension.lower() if extension.startswith(".") and extension[1:].isalnum() else ""
        if not doc_id.isalnum():  # ids are hex digests; anything else could name a path outside the folder
            raise ValueError(f"not a document id: {doc_id!r}")
        return self.folder / f"{doc_id}{ext}"

    def keep(self, doc_id: str, source: Path, extension: str) -> Path:
        """Copy ``source`` in as document ``doc_id`` (atomically: a crash leaves the old copy or none)."""
        target = self._path(doc_id, extension)
        partial = target.with_name(target.name + ".partial")
        self.folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, partial)
        os.replace(partial, target)
        return target

    def find(self, doc_id: str) -> Path | None:
        """The kept file of document ``doc_id``; None for documents from before files were kept."""
        if not doc_id.isalnum():
            return None
        found = sorted(p for p in self.folder.glob(f"{doc_id}*") if p.stem == doc_id and p.is_file())
        return found[0] if found else None

    def remove(self, doc_id: str) -> None:
        path = self.find(doc_id)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def orphans(self, known: Iterable[str]) -> list[Path]:
        """Kept files whose document the catalog does not hold (and half-written copies)."""
        wanted = set(known)
        if not self.folder.is_dir():  # nothing kept yet
            return []
        return [p for p in self.folder.iterdir() if p.is_file() and (p.suffix == ".partial" or p.stem not in wanted)]
