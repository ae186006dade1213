"""list_knowledge_bases: what there is to search."""

from __future__ import annotations

from typing import ClassVar

from ragapp.agent.tools.base import TOOLS, ToolArgs, ToolContext, ToolOutput


class NoArgs(ToolArgs):
    pass


class ListKnowledgeBases:
    name: ClassVar[str] = "list_knowledge_bases"
    description: ClassVar[str] = (
        "List the knowledge bases the user's documents are in, with their document and chunk counts. Use it "
        "when the question names a collection, or before searching one knowledge base."
    )
    Args: ClassVar[type[ToolArgs]] = NoArgs

    def run(self, args: NoArgs, ctx: ToolContext) -> ToolOutput:
        bases = [kb for kb in ctx.catalog.knowledge_bases() if ctx.scope is None or kb.name in ctx.scope]
        if not bases:
            return ToolOutput("There are no documents yet.", "no knowledge bases")
        lines = [f"- {kb.name}: {kb.documents} document(s), {kb.chunks} chunk(s)" for kb in bases]
        return ToolOutput("\n".join(lines), ", ".join(kb.name for kb in bases))


@TOOLS.register(ListKnowledgeBases.name)
def create_list_knowledge_bases() -> ListKnowledgeBases:
    return ListKnowledgeBases()
