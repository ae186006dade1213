"""What the engine says as a code and its values (``Said``), as the page shows it: in both languages, from the one
catalogue (``ragapp.core.said``); text values escaped, for they may quote a file's or an intent's name."""

from __future__ import annotations

import html
from collections.abc import Callable

from ragapp.core.said import Said
from ragapp.ui.i18n import both


def _html(text: str) -> str:
    return html.escape(text, quote=False)


def said_text(said: Said, escape: Callable[[str], str] = _html) -> str | None:
    """``said`` in both languages (``both``), its text values passed through ``escape``; None for a code the
    catalogue lacks (a record written by a newer version: the caller shows its English then)."""
    english, chinese = said.worded(False, escape), said.worded(True, escape)
    return None if english is None or chinese is None else both(english, chinese)


def said_or_english(said: Said | None, english: str, escape: Callable[[str], str] = _html) -> str:
    """``said`` in both languages; where there is none (a trace stored before the engine kept its records) or
    the catalogue cannot word it, the ``english`` stored beside it, escaped, as it is."""
    worded = None if said is None else said_text(said, escape)
    return escape(english) if worded is None else worded
