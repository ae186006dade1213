"""The tool descriptions within their share of the window (``Settings.budget.tools``).

The usual context split keeps the tool descriptions to about a tenth of the window (``ragapp.qa.budget``). A
description says when to use the tool, and the model chooses by it, so the descriptions are shortened rather than
tools left out: first each to its first sentence, then to the tool's name and arguments alone. What was shortened is
said for the trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragapp.agent.tools.base import Tool, function_schema, signature
from ragapp.qa.budget import text_tokens

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


@dataclass(frozen=True)
class FittedTools:
    lines: list[str]  # one line per tool, for the JSON protocol's system prompt
    schemas: list[dict[str, Any]]  # the OpenAI ``tools`` entries, for native function calling
    tokens: int  # what the descriptions take in the prompt
    compressed: str | None  # what was shortened, or None


def first_sentence(text: str) -> str:
    return _SENTENCE_END.split(text.strip(), maxsplit=1)[0]


def fit_tools(tools: Sequence[Tool], allowance: int, native: bool) -> FittedTools:
    """The descriptions of ``tools`` as long as ``allowance`` tokens allow (see the module docstring)."""
    levels: tuple[tuple[str | None, Any], ...] = (
        (None, lambda t: t.description),
        ("tool descriptions shortened to their first sentence", lambda t: first_sentence(t.description)),
        ("tool descriptions left out (names and arguments only)", lambda t: ""),
    )
    fitted = None
    for said, describe in levels:
        lines = [f"- {signature(t)}" + (f": {describe(t)}" if describe(t) else "") for t in tools]
        schemas = [_described(function_schema(t), describe(t)) for t in tools]
        text = json.dumps(schemas, ensure_ascii=False) if native else "\n".join(lines)
        fitted = FittedTools(lines, schemas, text_tokens(text), said)
        if fitted.tokens <= allowance:
            return fitted
    assert fitted is not None
    return fitted


def _described(schema: dict[str, Any], description: str) -> dict[str, Any]:
    function = dict(schema["function"], description=description)
    return dict(schema, function=function)
