"""search_knowledge: the retrieval engine as a tool."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ragapp.agent.tools.base import TOOLS, ToolArgs, ToolContext, ToolOutput, passage_lines

CHANNELS = {"hybrid": None, "vector": ("vector",), "keyword": ("keyword",)}


class SearchArgs(ToolArgs):
    query: str = Field(
        min_length=1, max_length=500, description="What to look for: one topic, with its names and numbers."
    )
    top_k: int = Field(5, ge=1, le=10, description="How many passages to return.")
    search_type: Literal["hybrid", "vector", "keyword"] = Field(
        "hybrid", description="hybrid (default), vector (meaning) or keyword (exact words, codes, part numbers)."
    )
    knowledge_base: str | None = Field(None, description="Search only this knowledge base (default: all).")


class SearchKnowledge:
    name: ClassVar[str] = "search_knowledge"
    description: ClassVar[str] = (
        "Search the user's documents. Use it to find facts, figures, procedures or policies; search for one "
        "thing at a time (a question about two products needs two searches). Returns numbered passages with "
        "their source and chunk_id, or says that nothing relevant was found."
    )
    Args: ClassVar[type[ToolArgs]] = SearchArgs

    def run(self, args: SearchArgs, ctx: ToolContext) -> ToolOutput:
        kbs = ctx.scope
        notes = ""
        if args.knowledge_base and args.knowledge_base not in {kb.name for kb in ctx.catalog.knowledge_bases()}:
            # Small models invent names ("general", "books"): searching nothing would teach them nothing.
            notes = f"\nNote: there is no knowledge base {args.knowledge_base!r}; all of them were searched."
            args = args.model_copy(update={"knowledge_base": None})
        if args.knowledge_base:
            kbs = frozenset({args.knowledge_base}) if kbs is None else kbs & {args.knowledge_base}
            if not kbs:
                return ToolOutput(
                    f"The knowledge base {args.knowledge_base!r} is outside the ones the user chose to search.",
                    "outside the user's scope",
                )
        result = ctx.retrieval.retrieve(args.query, kbs, args.top_k, CHANNELS[args.search_type])
        if not result.chunks and args.search_type != "hybrid":
            # One channel alone rarely clears the relevance gate (it is calibrated on both agreeing), and small
            # models pick "keyword" for everything: try both channels before reporting nothing.
            result = ctx.retrieval.retrieve(args.query, kbs, args.top_k)
            notes += f"\nNote: {args.search_type} search alone found nothing relevant; these come from hybrid search."
        notes += "".join(f"\nNote: {m}" for m in result.degraded)
        if not result.chunks:
            return ToolOutput(f"No relevant passages found for {args.query!r}.{notes}", "nothing relevant found")
        numbered = ctx.passages.add(result.chunks)
        sources = ", ".join(dict.fromkeys(item.chunk.source for _n, item in numbered))
        preview = f"{len(numbered)} passage(s): " + sources
        return ToolOutput(passage_lines(numbered) + notes, preview, len(numbered))


@TOOLS.register(SearchKnowledge.name)
def create_search_knowledge() -> SearchKnowledge:
    return SearchKnowledge()
