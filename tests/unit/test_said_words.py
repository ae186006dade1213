"""What the engine says as a code and values (``Said``), worded by the page in both languages
(``ragapp.ui.said_words``): each code the engine makes has both, the English word for word what the engine's
own message (for logs and the HTTP API) says, and a name in it is escaped."""

from __future__ import annotations

import re

from ragapp.core.types import Said
from ragapp.engine.library import hidden_duplicate
from ragapp.ui.said_words import SAID, said_text

LANGS = re.compile(r'<span class="lang-en">(?P<en>.*)</span><span class="lang-zh">(?P<zh>.*)</span>', re.DOTALL)


def test_every_code_has_both_languages_and_names_are_escaped() -> None:
    assert set(SAID) == {"ingest.duplicate_hidden"}
    shown = said_text(Said("ingest.duplicate_hidden", {"name": "<b>x</b>.md"}), lambda t: t.replace("<", "&lt;"))
    assert shown is not None and "&lt;b>x&lt;/b>.md" in shown and "<b>" not in shown
    assert said_text(Said("nobody.knows", {}), str) is None  # the engine's English is shown then


def test_a_duplicate_in_a_closed_base_is_said_as_the_engine_says_it() -> None:
    result = hidden_duplicate("plan.md")
    assert result.said is not None and result.doc_id is None
    parts = LANGS.fullmatch(said_text(result.said, lambda text: text) or "")
    assert parts is not None and parts["en"] == result.message
