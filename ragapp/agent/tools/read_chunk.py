"""read_chunk: read around a passage that was found (the text before and after it in its document)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ragapp.agent.tools.base import TOOLS, ToolArgs, ToolContext, ToolOutput, passage_lines
from ragapp.core.types import RetrievedChunk


class ReadArgs(ToolArgs):
    chunk_id: str = Field(min_length=1, description="A chunk_id shown with a passage.")
    window: int = Field(1, ge=0, le=3, description="How many neighbouring chunks to read on each side.")


class ReadChunk:
    name: ClassVar[str] = "read_chunk"
    description: ClassVar[str] = (
        "Read a passage together with the text just before and after it in its document, when a passage "
        "found by search_knowledge is cut off or refers to something nearby. Returns numbered passages."
    )
    Args: ClassVar[type[ToolArgs]] = ReadArgs

    def run(self, args: ReadArgs, ctx: ToolContext) -> ToolOutput:
        chunks = ctx.catalog.chunk_window(args.chunk_id, args.window)
        if not chunks:
            return ToolOutput(
                f"There is no chunk {args.chunk_id!r}. Use a chunk_id exactly as shown with a passage.", "unknown chunk"
            )
        if ctx.scope is not None:
            kb = ctx.catalog.document(chunks[0].doc_id)
            if kb is not None and kb.kb not in ctx.scope:
                return ToolOutput("That chunk is outside the knowledge bases the user chose.", "outside the scope")
        numbered = ctx.passages.add(RetrievedChunk(c, 0.0, {}, {}) for c in chunks)
        return ToolOutput(passage_lines(numbered, 1200), f"{len(chunks)} chunk(s) of {chunks[0].source}", len(chunks))


@TOOLS.register(ReadChunk.name)
def create_read_chunk() -> ReadChunk:
    return ReadChunk()
