"""How many chunks a file's text is worth embedding: a budget scaled to how much distinct text it holds.

Embedding is what a file costs (about 5 chunks a second on 2 cores), and a file can be cheap to send yet dear
to embed: a 1 MB spreadsheet of 100,000 × 200 cells of one digit became about 5,000 chunks, a quarter of an
hour of embedding, all of it the same row. Its distinct text is what measures it: the file's distinct chunks,
compressed (LZMA: its window spans repeats farther apart than zlib's 32 KB), are a few hundred bytes.

Measured on real files: prose, manuals, source code and logs compress to 22-150 bytes a chunk (a 4 MB synthetic log of
near-identical lines: 22; generated SIMD bindings: 33), while the digit spreadsheet compresses to 0.1 and the
same spreadsheet with a numbered first column to 2.7. A file gets ``FREE_CHUNKS`` whatever it holds, plus one
chunk for each ``bytes_per_chunk`` of its compressed distinct text (8 by default: real files have 2x or more to
spare, repetition is refused at a glance).
"""

from __future__ import annotations

import lzma
from collections.abc import Sequence
from dataclasses import dataclass

from ragapp.core.errors import IngestError
from ragapp.core.types import Said

FREE_CHUNKS = 100  # any file may have this many, however repetitive: about 20 s of embedding


@dataclass(frozen=True)
class Budget:
    """What a file's chunks hold: ``distinct`` bytes of compressed distinct text, worth ``allowed`` chunks."""

    chunks: int
    distinct: int
    allowed: int

    @property
    def over(self) -> bool:
        return self.chunks > self.allowed


def distinct_bytes(texts: Sequence[str]) -> int:
    """The compressed size of the distinct ``texts`` (each kept once, in order)."""
    # The fastest preset: its 256 KB window is 8 times zlib's, and repeats farther apart than that are mostly
    # whole chunks, kept once here already.
    packer = lzma.LZMACompressor(preset=0)
    size = 0
    for text in dict.fromkeys(texts):
        size += len(packer.compress(text.encode("utf-8") + b"\n"))
    return size + len(packer.flush())


def chunk_budget(texts: Sequence[str], bytes_per_chunk: float) -> Budget:
    """The budget of a file whose chunks' texts are ``texts`` (``bytes_per_chunk`` 0: no limit)."""
    if bytes_per_chunk <= 0 or len(texts) <= FREE_CHUNKS:
        return Budget(len(texts), 0, len(texts))
    distinct = distinct_bytes(texts)
    return Budget(len(texts), distinct, FREE_CHUNKS + int(distinct / bytes_per_chunk))


def mostly_repetition(name: str, budget: Budget) -> IngestError:
    """The refusal of a file over its budget, saying what it holds and what that is worth."""
    values = {"name": name, "chunks": budget.chunks, "distinct": budget.distinct, "allowed": budget.allowed}
    return IngestError(said=Said("ingest.repetition", values))
