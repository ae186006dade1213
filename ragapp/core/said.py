"""What the engine tells a person, as a code and its values (``Said``), and the one catalogue that words each code
in English and in Chinese.

The engine never writes a display sentence for a view to parse back: it records what happened ("the rerank score
was under 0.2") as ``Said("relevance.rerank_below", {"min": 0.2})``. The UI words it in the page's languages; the
logs, traces and the HTTP API keep its English (``Said.english``), from the same templates, so an API consumer
reads the sentences it always did. The catalogue's entries are grouped by the part of the engine that says them
(``said_search``, ``said_answer``, ``said_ingest``, ``said_intents``, ``said_admin``, ``said_web``,
``said_enrich``);
``tests/unit/test_said.py`` checks that every code the engine writes has both languages.

Each template is ``str.format`` over the record's values: a text value is passed through the caller's ``escape``
(it may quote a file's or an intent's name), an int is written with thousands separators and a float as ``g``
unless the template gives its own format ("{lead:+.3f}"). A value named in ``TERMS`` is itself a word to
translate ("number" → "数字"), and so is each item of a list, joined as the language joins one ("vector and keyword",
"a, b and c", "vector、keyword").

Written here, not with gettext: the engine keeps no per-request language, and a record of code and values is
what a trace stores and a view renders again later.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragapp.core.said_admin import ADMIN, ADMIN_TERMS
from ragapp.core.said_answer import ANSWER, ANSWER_TERMS
from ragapp.core.said_enrich import ENRICH, ENRICH_TERMS
from ragapp.core.said_ingest import INGEST, INGEST_TERMS
from ragapp.core.said_intents import INTENTS
from ragapp.core.said_search import SEARCH
from ragapp.core.said_web import WEB

Escape = Callable[[str], str]

# code: (English, Chinese), each a str.format template over the record's values
CATALOGUE: dict[str, tuple[str, str]] = {**SEARCH, **ANSWER, **INGEST, **INTENTS, **ADMIN, **WEB, **ENRICH}
# value name: {value: (English, Chinese)}: values that are words themselves
TERMS: dict[str, dict[str, tuple[str, str]]] = {**ANSWER_TERMS, **INGEST_TERMS, **ADMIN_TERMS, **ENRICH_TERMS}


def _plain(text: str) -> str:
    return text


@dataclass(frozen=True)
class Said:
    """What the engine tells a person, as a code of ``CATALOGUE`` and its values (text, int or float; typed Any
    so that a stored trace reads its numbers back as they were written)."""

    code: str
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def english(self) -> str:
        """The English sentence, unescaped: for logs, traces and the HTTP API."""
        return self.worded(chinese=False) or f"{self.code} {self.values}"

    def worded(self, chinese: bool, escape: Escape = _plain) -> str | None:
        """The sentence in one language, its text values through ``escape``; None for a code the catalogue
        lacks (a record written by a newer version: the caller shows the English it stored)."""
        templates = CATALOGUE.get(self.code)
        if templates is None:
            return None
        values = {k: _value(k, v, chinese, escape) for k, v in self.values.items()}
        if isinstance(cause := self.values.get("cause"), str):  # made because of another record: its words
            inner = {k.removeprefix("cause_"): v for k, v in self.values.items() if k.startswith("cause_")}
            reason = Said(cause, inner).worded(chinese, escape)
            if reason is not None:
                values["reason"] = _Escaped(reason)
        try:
            return _Formatter(escape).format(templates[chinese], **values)
        except (KeyError, IndexError, ValueError):  # a stored record missing a value, or holding an odd one
            return None


def english_of(parts: Sequence[Said]) -> str:
    """A reason of several records in English, part after part (a part that continues another begins with its
    own separator: "; but ...")."""
    return "".join(part.english for part in parts)


def _value(name: str, value: Any, chinese: bool, escape: Escape) -> Any:
    """A value as a template reads it: a term in the language, a list joined as the language joins one."""
    terms = TERMS.get(name, {})
    if isinstance(value, list | tuple):
        items = [escape(str(terms[str(v)][chinese] if str(v) in terms else v)) for v in value]
        if chinese:
            return _Escaped("、".join(items))
        return _Escaped(" and ".join([", ".join(items[:-1]), items[-1]] if len(items) > 2 else items))
    words = terms.get(str(value))
    return value if words is None else words[chinese]


class _Escaped(str):
    """Text already escaped (a list's items, joined)."""


class _Formatter(string.Formatter):
    """``str.format`` with text escaped, ints with thousands separators and floats as ``g`` by default."""

    def __init__(self, escape: Escape) -> None:
        self.escape = escape

    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, _Escaped):
            return str(value)
        if isinstance(value, str):
            return self.escape(format(value, format_spec))
        if not format_spec and isinstance(value, int) and not isinstance(value, bool):
            format_spec = ","
        elif not format_spec and isinstance(value, float):
            format_spec = "g"
        return str(format(value, format_spec))
