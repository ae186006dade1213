"""The agent's tool descriptions within their share: whole, then first sentences, then names and arguments."""

from __future__ import annotations

from ragapp.agent.tool_budget import first_sentence, fit_tools
from ragapp.agent.tools.base import TOOLS
from ragapp.engine.build import load_builtins


def _tools() -> list:  # type: ignore[type-arg]
    load_builtins()
    return [TOOLS.get(name)() for name in ("search_knowledge", "list_knowledge_bases", "read_chunk")]


def test_descriptions_are_whole_when_they_fit_then_shortened_never_left_out_as_tools() -> None:
    tools = _tools()
    whole = fit_tools(tools, 10_000, native=False)
    assert whole.compressed is None and all(t.description in line for t, line in zip(tools, whole.lines, strict=True))
    short = fit_tools(tools, whole.tokens - 1, native=False)
    assert short.compressed is not None and short.tokens < whole.tokens
    assert short.compressed.english == "tool descriptions shortened to their first sentence"
    assert short.lines[0].endswith(first_sentence(tools[0].description))
    bare = fit_tools(tools, 1, native=True)  # nothing fits: every tool is still named, with its arguments
    assert bare.compressed is not None
    assert bare.compressed.english == "tool descriptions left out (names and arguments only)"
    assert [s["function"]["name"] for s in bare.schemas] == [t.name for t in tools]
    assert all(s["function"]["description"] == "" and s["function"]["parameters"] for s in bare.schemas)


def test_first_sentence_in_english_and_chinese() -> None:
    assert first_sentence("Search the documents. Returns passages.") == "Search the documents."
    assert first_sentence("检索文档。返回段落。") == "检索文档。"
    assert first_sentence("One sentence only") == "One sentence only"
