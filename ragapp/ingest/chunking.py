"""Structure-aware chunking: sections never share a chunk, so every chunk has one page and one heading;
inside a section LlamaIndex's ``SentenceSplitter`` cuts at sentence boundaries (Chinese and English)
with overlap. Lengths are counted in characters, which is fair to both scripts.

Chunk ids are ``<doc_id>-<ordinal>``: the same file always yields the same ids.
"""

from __future__ import annotations

from functools import lru_cache

from ragapp.types import Chunk, ParsedDocument


@lru_cache(maxsize=8)
def _splitter(chunk_size: int, chunk_overlap: int):  # type: ignore[no-untyped-def]
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(
        chunk_size=chunk_size,
        chunk_overlap=min(chunk_overlap, chunk_size // 2),
        tokenizer=list,  # one "token" per character
        paragraph_separator="\n\n",
    )


def doc_of_chunk_id(chunk_id: str) -> str:
    """The document of a chunk id as ``chunk_document`` writes it (``<doc_id>-<4-digit ordinal>``)."""
    head, _, tail = chunk_id.rpartition("-")
    return head if head and tail.isdigit() and len(tail) == 4 else chunk_id


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
                    chunk_id=f"{doc_id}-{len(chunks):04d}",
                    doc_id=doc_id,
                    ordinal=len(chunks),
                    text=piece,
                    source=doc.name,
                    page=section.page,
                    heading=section.heading,
                )
            )
    return chunks


def index_text(chunk: Chunk) -> str:
    """What the indexes see: the document's name and heading give a short chunk its topic."""
    title = chunk.source.rsplit(".", 1)[0].replace("_", " ").replace("-", " ")
    context = " · ".join(part for part in (title, chunk.heading) if part)
    return f"{context}\n{chunk.text}"
