"""A file's sha256, read in blocks: the catalog's content hash, a sync's change check and a model's checksum."""

from __future__ import annotations

import hashlib
from pathlib import Path

_BLOCK = 1 << 20  # a block at a time: a 50 MB upload or a 1 GB model never sits in memory whole


def file_sha256(path: Path) -> str:
    """The hex sha256 of the bytes of ``path``."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()
