"""What the engine says as a code and its values (``Said``), as the page shows it: in both languages, from the one
catalogue (``ragapp.core.said``); text values escaped, for they may quote a file's or an intent's name."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from ragapp.core.said import Said
from ragapp.ui.i18n import both


def _html(text: str) -> str:
    return html.escape(text, quote=False)


def said_text(said: Said, escape: Callable[[str], str] = _html) -> str | None:
    """``said`` in both languages (``both``), its text values passed through ``escape``; None for a code the
    catalogue lacks (a record written by a newer version: the caller shows its English then)."""
    english, chinese = said.worded(False, escape), said.worded(True, escape)
    return None if english is None or chinese is None else both(english, chinese)


def said_or_english(said: Said | Sequence[Said] | None, english: str, escape: Callable[[str], str] = _html) -> str:
    """``said`` (one record, or a reason of several worded part after part) in both languages; where there is
    none (a trace stored before the engine kept its records) or the catalogue cannot word a part, the
    ``english`` stored beside it, escaped, as it is."""
    parts = [said] if isinstance(said, Said) else list(said or ())
    worded = [(part.worded(False, escape), part.worded(True, escape)) for part in parts]
    if not worded or any(en is None or zh is None for en, zh in worded):
        return escape(english)
    return both("".join(en or "" for en, _ in worded), "".join(zh or "" for _, zh in worded))
