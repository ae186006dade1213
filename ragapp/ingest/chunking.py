"""Structure-aware chunking: sections never share a chunk, so every chunk has one page and one heading;
inside a section LlamaIndex's ``SentenceSplitter`` cuts at sentence boundaries (Chinese and English)
with overlap. Lengths are counted in characters, which is fair to both scripts. A section longer than a chunk
that holds a Markdown table is cut around the table, and the table only between rows, its header repeated
(``ragapp.ingest.tables``): a row is never split. A figure's section (its caption, the words in it and around
it) is one chunk, cut to ``chunk_size``: the figure is cited whole.

Chunk ids are ``<doc_id>-<ordinal>`` (``ragapp.core.chunks``): the same file always yields the same ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from ragapp.core.chunks import chunk_id_of
from ragapp.core.types import Chunk, ParsedDocument, Section
from ragapp.ingest.tables import blocks, is_table_line, split_table


@lru_cache(maxsize=8)
def _splitter(chunk_size: int, chunk_overlap: int):  # type: ignore[no-untyped-def]
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(
        chunk_size=chunk_size,
        chunk_overlap=min(chunk_overlap, chunk_size // 2),
        tokenizer=list,  # one "token" per character
        paragraph_separator="\n\n",
    )


def chunk_document(doc: ParsedDocument, doc_id: str, chunk_size: int, chunk_overlap: int) -> list[Chunk]:
    splitter = _splitter(chunk_size, chunk_overlap)
    chunks: list[Chunk] = []
    for section in doc.sections:
        for piece, has_table in _pieces(section, splitter, chunk_size):
            piece = piece.strip()
            if not piece:
                continue
            chunks.append(
                Chunk(
                    chunk_id=chunk_id_of(doc_id, len(chunks)),
                    doc_id=doc_id,
                    ordinal=len(chunks),
                    text=piece,
                    source=doc.name,
                    page=section.page,
                    heading=section.heading,
                    ocr_confidence=section.ocr_confidence,
                    has_table=has_table,
                    figure=section.figure,
                )
            )
    return chunks


def _pieces(section: Section, splitter: Any, chunk_size: int) -> Iterator[tuple[str, bool]]:
    """The section's chunk texts, each with whether it holds table rows."""
    text = section.text
    if section.figure is not None:
        yield text[:chunk_size], False
        return
    has_table = section.has_table or any(is_table_line(line) for line in text.splitlines())
    if not has_table:
        yield from ((piece, False) for piece in splitter.split_text(text))
        return
    if len(text) <= chunk_size:  # the table and the words around it stay together
        yield text, True
        return
    for is_table, block in blocks(text):
        if is_table:
            yield from ((piece, True) for piece in split_table(block, chunk_size))
        else:
            yield from ((piece, False) for piece in splitter.split_text(block))
