"""search_knowledge: the retrieval engine as a tool."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from ragapp.agent.tools.base import TOOLS, ToolArgs, ToolContext, ToolOutput, passage_lines
from ragapp.core.filters import MAX_TAGS, DocumentFilter, TagError, clean_tags

CHANNELS = {"hybrid": None, "vector": ("vector",), "keyword": ("keyword",)}
_FILTERS = ("tags", "path_prefix", "file_type")


class SearchArgs(ToolArgs):
    query: str = Field(
        min_length=1, max_length=500, description="What to look for: one topic, with its names and numbers."
    )
    top_k: int = Field(5, ge=1, le=10, description="How many passages to return.")
    search_type: Literal["hybrid", "vector", "keyword"] = Field(
        "hybrid", description="hybrid (default), vector (meaning) or keyword (exact words, codes, part numbers)."
    )
    knowledge_base: str | None = Field(None, description="Search only this knowledge base (default: all).")
    tags: list[str] | None = Field(
        None, max_length=MAX_TAGS, description="Search only documents with any of these tags (default: any)."
    )
    path_prefix: str | None = Field(
        None, min_length=1, max_length=500, description="Search only documents whose path starts so, e.g. 'hr/'."
    )
    file_type: str | None = Field(
        None, pattern=r"^\.?[A-Za-z0-9]{1,10}$", description="Search only files of this type, e.g. pdf or docx."
    )

    @model_validator(mode="before")
    @classmethod
    def _unset_when_empty(cls, data: Any) -> Any:
        # Small models fill every optional field in, with "" or []: that means no filter, not a bad one.
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if not (k in _FILTERS and v in ("", [], None))}
        return data

    @field_validator("tags")
    @classmethod
    def _tags(cls, tags: list[str] | None) -> list[str] | None:
        try:
            return list(clean_tags(tags)) if tags else None
        except TagError as exc:
            raise ValueError(str(exc)) from None

    def document_filter(self) -> DocumentFilter:
        """The arguments' document filter (empty when none is set)."""
        return DocumentFilter(
            tags=tuple(self.tags or ()), path_prefix=self.path_prefix,
            file_types=(self.file_type,) if self.file_type else (),
        )  # fmt: skip


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
        docs = ctx.docs
        wanted = args.document_filter()
        if not wanted.is_empty():  # narrows the user's filter, never widens it
            found = ctx.catalog.matching(wanted, kbs)
            narrowed = found if docs is None else docs & found
            if narrowed:
                docs = narrowed
            else:  # like a made-up knowledge base: an empty search would teach the model nothing
                notes += f"\nNote: no document matches {wanted.describe()}; searched without those arguments."
        result = ctx.retrieval.retrieve(args.query, kbs, args.top_k, CHANNELS[args.search_type], docs=docs)
        if not result.chunks and args.search_type != "hybrid":
            # One channel alone rarely clears the relevance gate (it is calibrated on both agreeing), and small
            # models pick "keyword" for everything: try both channels before reporting nothing.
            result = ctx.retrieval.retrieve(args.query, kbs, args.top_k, docs=docs)
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
