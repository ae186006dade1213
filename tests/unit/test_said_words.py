"""What the engine says as a code and values (``Said``), worded by the page in both languages
(``ragapp.ui.said_words``): each code the engine makes has both, the English word for word what the engine's
own message (for logs and the HTTP API) says, and a name in it is escaped. (A website sync's codes:
``tests/unit/test_sync_web.py``.)"""

from __future__ import annotations

import re

import pytest

from ragapp.core.errors import IngestError
from ragapp.core.said import CATALOGUE as SAID
from ragapp.core.types import Said
from ragapp.engine.library import hidden_duplicate
from ragapp.ingest.parsers.base import markup_flood
from ragapp.ingest.repetition import Budget, mostly_repetition
from ragapp.sync.site_words import SITE_WORDS
from ragapp.ui.said_words import said_text

ERRORS = [
    mostly_repetition("digits.xlsx", Budget(chunks=4_996, distinct=316, allowed=139)),
    markup_flood("flood.docx", "elements"),
    markup_flood("flood.docx", "depth"),
    markup_flood("flood.docx", "text"),
]
LANGS = re.compile(r'<span class="lang-en">(?P<en>.*)</span><span class="lang-zh">(?P<zh>.*)</span>', re.DOTALL)


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: e.said.code if isinstance(e, IngestError) and e.said else "")
def test_the_page_says_what_the_engine_says_in_both_languages(error: IngestError) -> None:
    assert error.said is not None
    shown = said_text(error.said, lambda text: text)
    assert shown is not None
    parts = LANGS.fullmatch(shown)
    assert parts is not None and parts["en"] == str(error)
    assert not re.search(r"[a-z]{3,}", re.sub(r"RAGAPP_\w+|XML|MB|\w+\.\w{3,4}", "", parts["zh"]))  # no English


def test_every_code_has_both_languages_and_names_are_escaped() -> None:
    assert {e.said.code for e in ERRORS if e.said} | {"ingest.duplicate_hidden"} | set(SITE_WORDS) <= set(SAID)
    shown = said_text(Said("ingest.duplicate_hidden", {"name": "<b>x</b>.md"}), lambda t: t.replace("<", "&lt;"))
    assert shown is not None and "&lt;b>x&lt;/b>.md" in shown and "<b>" not in shown
    assert said_text(Said("nobody.knows", {}), str) is None  # the engine's English is shown then


def test_a_duplicate_in_a_closed_base_is_said_as_the_engine_says_it() -> None:
    result = hidden_duplicate("plan.md")
    assert result.said is not None and result.doc_id is None
    parts = LANGS.fullmatch(said_text(result.said, lambda text: text) or "")
    assert parts is not None and parts["en"] == result.message
