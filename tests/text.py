"""What a page in one language shows of the chat's own words, which carry both (``ragapp.ui.render.both``), and
of an answer's clickable [n] markers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import gradio as gr

_SPAN = re.compile(r'<span class="lang-(en|zh)">(.*?)</span>', re.S)
_MARKER = re.compile(r'<span class="cite-marker">(.*?)</span>')


def shown(text: str, lang: str = "en") -> str:
    """``text`` as a page in ``lang`` shows it: its words in the other language gone, a clickable [n] as its
    text."""
    return _MARKER.sub(r"\1", _SPAN.sub(lambda m: m.group(2) if m.group(1) == lang else "", text))


def english(messages: Sequence[Any]) -> list[Any]:
    """Chat messages as an English page shows them (their titles and text)."""
    out = []
    for m in messages:
        if not isinstance(m, gr.ChatMessage):
            out.append(m)
            continue
        metadata = dict(m.metadata) if m.metadata else m.metadata
        if metadata and "title" in metadata:
            metadata["title"] = shown(str(metadata["title"]))
        content = shown(m.content) if isinstance(m.content, str) else m.content
        copy = gr.ChatMessage(role=m.role, content=content, metadata=metadata)  # type: ignore[arg-type]
        copy.options = m.options
        out.append(copy)
    return out


def in_english(value: Any) -> Any:
    """``value`` (a text, or rows of cells) as an English page shows it."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, list):
        return [in_english(v) for v in value]
    if isinstance(value, tuple):
        return tuple(in_english(v) for v in value)
    return value


class English:
    """A module of view functions whose results read as an English page shows them: ``English(views).header(t)``."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._module, name)
        if not callable(found) or isinstance(found, type):
            return found
        return lambda *args, **kwargs: in_english(found(*args, **kwargs))
