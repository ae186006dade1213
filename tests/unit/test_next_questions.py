"""The next questions under an answer (``ragapp.qa.suggest``): made by rule from the headings of the sections
beside the cited ones, in real chunks of the demo's manuals (parsed and chunked as ingest does); and how the chat
offers them (``ragapp.ui.next_questions``)."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from ragapp.core.events import AnswerEvent, Suggestion, SuggestionsEvent
from ragapp.core.lang import is_chinese
from ragapp.core.turn import Turn
from ragapp.core.types import Chunk, Citation
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.parsing import parse_file
from ragapp.qa.suggest import opening_questions, question_of, suggested
from ragapp.ui.next_questions import suggested_question
from ragapp.ui.render import TurnView
from tests.conftest import DEMO_DIR


@cache
def _chunks(name: str) -> tuple[Chunk, ...]:
    return tuple(chunk_document(parse_file(Path(DEMO_DIR / name)), name, 800, 100))


def _window(chunks: tuple[Chunk, ...]):  # type: ignore[no-untyped-def]
    """As ``Catalog.chunk_window`` reads them: the chunk and its neighbours in its document, in order."""

    def window(chunk_id: str, size: int) -> list[Chunk]:
        (cited,) = [c for c in chunks if c.chunk_id == chunk_id]
        return [c for c in chunks if abs(c.ordinal - cited.ordinal) <= size]

    return window


def _answer(*cited: Chunk, grounded: bool = True, abstained: bool = False) -> AnswerEvent:
    citations = tuple(Citation(n, c) for n, c in enumerate(cited, 1))
    return AnswerEvent("It is so [1].", citations, grounded=grounded, abstained=abstained)


def _suggest(question: str, name: str, *ordinals: int) -> tuple[Suggestion, ...]:
    chunks = _chunks(name)
    return suggested(question, _answer(*(chunks[i] for i in ordinals)), _window(chunks))


def test_the_sections_beside_the_cited_one_become_questions_nearest_first() -> None:
    found = _suggest("What is new in version 2.5.0?", "v2_pro_firmware_release_notes.md", 2)
    notes = "What does the Lumen V2 Pro Firmware Release Notes say about"
    # the next section first, then the one before, then the one after the next; never the cited one
    assert [s.text for s in found] == [f"{notes} version 2.4.0?", f"{notes} version 2.5.1?", f"{notes} version 2.3.0?"]
    chunks = _chunks("v2_pro_firmware_release_notes.md")
    assert [s.chunk_id for s in found] == [chunks[3].chunk_id, chunks[1].chunk_id, chunks[4].chunk_id]
    # a topic an earlier question of the chat named is not offered again
    before = ["What was fixed in version 2.5.1?"]
    found = suggested("What is new in version 2.5.0?", _answer(chunks[2]), _window(chunks), before=before)
    assert [s.text for s in found] == [
        f"{notes} version 2.4.0?",
        f"{notes} version 2.3.0?",
        "How to check your version?",
    ]


def test_a_chinese_question_gets_chinese_questions_from_its_manual() -> None:
    found = _suggest("V1 的滤网多久换一次？", "lumen_v1_manual_zh.md", 5)  # cites 日常维护
    assert [s.text for s in found] == [
        "流明 V1 扫地机器人 使用手册中关于“指示灯与故障处理”是怎么说的？",
        "流明 V1 扫地机器人 使用手册中关于“清洁模式”是怎么说的？",
        "流明 V1 扫地机器人 使用手册中关于“注意事项”是怎么说的？",
    ]
    assert all(is_chinese(s.text) for s in found)


def test_none_in_the_other_language_than_the_question() -> None:
    assert _suggest("How often should the V1's filter be replaced?", "lumen_v1_manual_zh.md", 5) == ()
    assert _suggest("V2 Pro 的固件怎么更新？", "v2_pro_firmware_release_notes.md", 0) == ()


@pytest.mark.parametrize(
    "answer",
    [
        AnswerEvent("The documents do not say.", (), grounded=False, abstained=True),
        _answer(_chunks("lumen_care_plus_terms.md")[5], grounded=False),  # nearest passages listed, not used
        _answer(_chunks("lumen_care_plus_terms.md")[5], abstained=True),
        None,  # asked back, or stopped before the answer
    ],
)
def test_none_under_a_refusal(answer: AnswerEvent | None) -> None:
    chunks = _chunks("lumen_care_plus_terms.md")
    assert suggested("How do I make a claim?", answer, _window(chunks)) == ()


def test_a_topic_the_question_names_and_a_section_too_short_to_answer_are_left_out() -> None:
    chunks = list(_chunks("lumen_care_plus_terms.md"))
    cancel = chunks[6]  # "5. Cancellation and refunds"; "6. Transfer" follows, "4. Making a claim" precedes
    found = suggested("Can I cancel, and what about a transfer?", _answer(cancel), _window(tuple(chunks)))
    assert "transfer" not in " ".join(s.text for s in found)
    assert found[0].text == "What does the Lumen Care Plus Service Agreement say about making a claim?"
    chunks[5] = replace(chunks[5], text="See the app.")  # "4. Making a claim", emptied: it answers nothing
    found = suggested("Can I cancel, and what about a transfer?", _answer(cancel), _window(tuple(chunks)))
    assert "claim" not in " ".join(s.text for s in found)
    assert found[0].text == "What does the Lumen Care Plus Service Agreement say about governing law and disputes?"


def test_a_long_section_cited_twice_is_offered_once_and_at_most_three_in_all() -> None:
    chunks = _chunks("lumen_care_plus_terms.md")
    found = suggested("What does Care Plus cover?", _answer(chunks[2], chunks[3], chunks[6]), _window(chunks))
    assert len(found) == 3 and len({s.text for s in found}) == 3
    assert not any("covers" in s.text or "cancellation" in s.text for s in found)  # the cited sections


@pytest.mark.parametrize(
    ("heading", "chinese", "question"),
    [
        ("Lumen V2 Pro Firmware Release Notes > How to check your version", False, "How to check your version?"),
        ("3. What is in the box", False, "What is in the box?"),
        ("1. About the Lumen V2 Pro", False, "What do the documents say about the Lumen V2 Pro?"),
        ("Care > 2. What Lumen Care Plus covers", False, "What does the Care say about what Lumen Care Plus covers?"),
        ("四、如何申请保修", True, "如何申请保修？"),
        ("一、保修期限", True, "文档中关于“保修期限”是怎么说的？"),
        ("六、其他", True, None),  # names no subject
        ("Manual > Contents", False, None),
        ("产品规格", False, None),  # the other language
        ("", False, None),
    ],
)
def test_a_heading_becomes_a_question_by_rule(heading: str, chinese: bool, question: str | None) -> None:
    assert question_of(heading, chinese) == question


def test_the_chat_offers_them_under_the_answer_and_a_click_asks_one() -> None:
    chunks = _chunks("v2_pro_firmware_release_notes.md")
    turn = Turn()
    turn.apply(_answer(chunks[2]))
    assert not any(m.options for m in TurnView(turn).messages())  # none before they come
    ask = "What does the Lumen V2 Pro Firmware Release Notes say about version 2.4.0?"
    turn.apply(SuggestionsEvent((Suggestion(ask, chunks[3].chunk_id),)))
    options = TurnView(turn).messages()[-1].options  # Gradio shows the last message's choices
    assert [o["label"] for o in options or []] == [ask]
    assert suggested_question(options[0]["value"]) == ask  # type: ignore[index]
    assert suggested_question(":answer-again:") is None and suggested_question("intent-code") is None


def test_the_first_screen_offers_each_documents_first_sections_in_its_language() -> None:
    documents = [
        _chunks(n) for n in ("v2_pro_firmware_release_notes.md", "lumen_v1_manual_zh.md", "glide_w3_quick_guide.html")
    ]
    notes = "What does the Lumen V2 Pro Firmware Release Notes say about"
    assert opening_questions(documents, chinese=False) == [
        f"{notes} version 2.5.1?",  # the title's own section is no question: every section's path names it
        f"{notes} version 2.5.0?",  # two of a document, then the next one's
        "What do the documents say about specifications?",
        "What do the documents say about before you start?",
    ]
    assert opening_questions(documents, chinese=True) == [
        "流明 V1 扫地机器人 使用手册中关于“产品规格”是怎么说的？",
        "流明 V1 扫地机器人 使用手册中关于“首次使用”是怎么说的？",
    ]


def test_a_question_written_at_ingest_is_offered_before_the_headings_rule() -> None:
    """Where a chunk has questions written for it (``ragapp.enrich.questions``), in the question's language, the
    first one not asked yet is offered as written; chunks without keep the heading's question."""
    chunks = _chunks("v2_pro_firmware_release_notes.md")
    written = {chunks[3].chunk_id: ["Which version first added the pet mode?", "What did version 2.4.0 add?"]}

    def reader(ids: list[str], chinese: bool) -> dict[str, list[str]]:
        return {} if chinese else {k: v for k, v in written.items() if k in ids}

    notes = "What does the Lumen V2 Pro Firmware Release Notes say about"
    found = suggested("What is new in version 2.5.0?", _answer(chunks[2]), _window(chunks), written=reader)
    assert [s.text for s in found] == [
        "Which version first added the pet mode?",
        f"{notes} version 2.5.1?",
        f"{notes} version 2.3.0?",
    ]
    assert found[0].chunk_id == chunks[3].chunk_id
    asked = ["Which version first added the pet mode"]  # asked already: the chunk's next written question
    found = suggested("What is new in 2.5.0?", _answer(chunks[2]), _window(chunks), before=asked, written=reader)
    assert found[0].text == "What did version 2.4.0 add?"
    # A Chinese question reads Chinese written questions only (none here): the headings' rule as before.
    zh = suggested("2.5.0 版有什么新功能？", _answer(chunks[2]), _window(chunks), written=reader)
    assert all("pet mode" not in s.text for s in zh)

    first = {chunks[0].chunk_id: ["What do the release notes list for each firmware version?"]}
    opening = opening_questions([chunks], chinese=False, written=lambda ids, _zh: first)
    assert opening[0] == "What do the release notes list for each firmware version?"
    assert opening[1] == f"{notes} version 2.5.1?"
