"""What a website sync tells a person, as a code and its values (``Said``), with the English the logs, the command
line and the HTTP API show, from the one catalogue (``ragapp.core.said_web``) the UI words them from in English
and Chinese."""

from __future__ import annotations

from ragapp.core.said_web import WEB
from ragapp.core.types import Said

# code: English, a str.format template over the values (the catalogue's English)
SITE_WORDS: dict[str, str] = {code: english for code, (english, _chinese) in WEB.items()}


def site_said(code: str, **values: str | int | float) -> tuple[str, Said]:
    """The English of ``code`` filled with ``values``, and the same as a ``Said``."""
    return SITE_WORDS[code].format(**values), Said(code, dict(values))


def caused_said(code: str, cause: Said, **values: str | int | float) -> tuple[str, Said]:
    """``site_said`` for a record another one made (a start page not read because of a timeout): that one's
    English is the ``reason`` value, and its code and values ride along (``cause``, ``cause_*``) for the UI
    to word it in its own languages."""
    english = SITE_WORDS[code].format(**values)
    carried = values | {"cause": cause.code} | {f"cause_{k}": v for k, v in cause.values.items()}
    return english, Said(code, dict(carried))
