"""Structure-aware chunking: sections never share a chunk, so every chunk has one page and one heading;
inside a section LlamaIndex's ``SentenceSplitter`` cuts at sentence boundaries (Chinese and English)
with overlap. Lengths are counted in characters, which is fair to both scripts.

Chunk ids are ``<doc_id>-<ordinal>`` (``ragapp.core.chunks``): the same file always yields the same ids.
"""

from __future__ import annotations

from functools import lru_cache

from ragapp.core.chunks import chunk_id_of
from ragapp.core.types import Chunk, ParsedDocument


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
        for piece in splitter.split_text(section.text):
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
                )
            )
    return chunks
