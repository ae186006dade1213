"""The chat renderer turns engine events into messages; tested with synthetic events, no model, no browser."""

from __future__ import annotations

from dataclasses import replace

from ragapp.core.events import (
    AgentStepEvent,
    AnswerEvent,
    ClarifyEvent,
    EvidenceEvent,
    MemoryEvent,
    ModeEvent,
    NoticeEvent,
    RetrievalEvent,
    RewriteEvent,
    RoutingEvent,
    StageEvent,
    TokenEvent,
    WaitEvent,
    Widened,
)
from ragapp.core.types import (
    Chunk,
    Citation,
    Confidence,
    ConfidenceCheck,
    Figure,
    LeafScore,
    RetrievedChunk,
    Said,
    SentenceSupport,
)
from ragapp.ui.confidence_badge import confidence_badge
from ragapp.ui.markup import highlighted
from ragapp.ui.render import EVIDENCE_LABEL, OPEN_PAGE_HINT, UNSUPPORTED_MARK, TurnView, citation_title
from ragapp.ui.state import Session
from tests.text import english, shown

CHUNK = Chunk("d1-0000", "d1", 0, "Batteries are covered for 12 months.", "warranty.pdf", page=3, heading="Battery")
RETRIEVED = RetrievedChunk(CHUNK, 0.03, {"vector": 1}, {"vector": 0.9})


# Under a grounded answer whose confidence was not assessed (these events carry none): the neutral badge.
UNCHECKED = "\n\n" + shown(confidence_badge(AnswerEvent("", (), grounded=True)))


def _contents(view: TurnView) -> list[str]:
    return [str(m.content) for m in view.messages()]


def test_stage_is_pending_then_done_with_duration_and_summary() -> None:
    view = TurnView()
    view.apply(StageEvent("retrieve", "started"))
    (step,) = english(view.messages())
    assert step.metadata == {"title": "🔎 Searching the knowledge base", "status": "pending"}
    view.apply(
        StageEvent(
            "retrieve",
            "finished",
            duration_s=0.123,
            detail={"channels": {"vector": 20, "keyword": 7}, "candidates": 22, "relevant": 5, "reranker": "off"},
        )
    )
    (step,) = english(view.messages())
    assert step.metadata["status"] == "done"
    assert step.metadata["duration"] == 0.12
    assert step.content == "vector: 20 hits, keyword: 7 hits · 22 fused candidates · 5 relevant · reranker: off"


def test_failed_stage_is_marked_with_its_error() -> None:
    view = TurnView()
    view.apply(StageEvent("generate", "started"))
    view.apply(StageEvent("generate", "failed", duration_s=1.0, error="model server unreachable"))
    (step,) = view.messages()
    assert step.metadata["title"].startswith("❌")
    assert step.content == "model server unreachable"


def test_tokens_stream_into_one_answer_then_citations_follow() -> None:
    view = TurnView()
    view.apply(RetrievalEvent((RETRIEVED,)))
    for piece in ["Batteries ", "are covered ", "for 12 months [1]."]:
        view.apply(TokenEvent(piece))
    assert [str(m.content) for m in english(view.messages())] == ["Batteries are covered for 12 months [1]."]
    view.apply(AnswerEvent("Batteries are covered for 12 months [1].", (Citation(1, CHUNK),), grounded=True))
    answer, citation = english(view.messages())
    assert answer.content == "Batteries are covered for 12 months [1]." + UNCHECKED
    assert citation.metadata["title"] == "📄 [1] warranty.pdf · p. 3 · Battery"
    assert citation.content == f"Batteries are covered for 12 months.\n\n{shown(OPEN_PAGE_HINT)}"


def test_the_evidence_sentence_shows_before_the_answer_and_stays_above_it() -> None:
    view = TurnView()
    view.apply(RetrievalEvent((RETRIEVED,)))
    view.apply(EvidenceEvent("Batteries are covered for 12 months.", Citation(1, CHUNK, None, (CHUNK.text,))))
    (evidence,) = english(view.messages())  # nothing generated yet: the quote is what the reader has
    assert evidence.content == (
        f"{shown(EVIDENCE_LABEL)} · \\[1\\] warranty.pdf · p. 3 · Battery\n\n"
        "> <mark>Batteries are covered for 12 months.</mark>"
    )
    view.apply(TokenEvent("Twelve months [1]."))
    view.apply(AnswerEvent("Twelve months [1].", (Citation(1, CHUNK),), grounded=True))
    assert [str(m.content) for m in english(view.messages())][:2] == [
        evidence.content,
        "Twelve months [1]." + UNCHECKED,
    ]


def test_the_quote_becomes_the_passage_the_answer_cites_first_and_a_refusal_shows_none() -> None:
    other = Chunk("d2-0000", "d2", 0, "Screens are covered for 36 months. Keys for 6.", "warranty.pdf", page=7)
    quoted = "Screens are covered for 36 months."
    view = TurnView()
    view.apply(EvidenceEvent(quoted, Citation(4, other, None, (quoted,))))
    assert "\\[4\\] warranty.pdf · p. 7" in _contents(view)[0]  # while the model writes: the best sentence
    cited = Citation(1, CHUNK, None, ("Batteries are covered for 12 months.",))
    view.apply(AnswerEvent("Twelve months [1].", (cited,), grounded=True))
    assert _contents(view)[0] == (
        f"{EVIDENCE_LABEL} · \\[1\\] warranty.pdf · p. 3 · Battery\n\n"
        "> <mark>Batteries are covered for 12 months.</mark>"
    )

    refused = TurnView()
    refused.apply(EvidenceEvent(quoted, Citation(4, other, None, (quoted,))))
    refused.apply(AnswerEvent("The documents do not say this.", (Citation(1, other),), False, abstained=True))
    assert [c for c in _contents(refused) if c.startswith("📌")] == []  # its nearest passage is a source below


def test_answer_without_citations_lists_the_passages_consulted() -> None:
    view = TurnView()
    view.apply(RetrievalEvent((RETRIEVED,)))
    view.apply(AnswerEvent("Twelve months.", (), grounded=True))
    _answer, consulted = view.messages()
    assert "Passages consulted" in consulted.metadata["title"]
    assert consulted.content == "- warranty.pdf · p. 3 · Battery"


def test_not_found_answer_has_no_sources() -> None:
    view = TurnView()
    view.apply(RetrievalEvent(()))
    view.apply(AnswerEvent("Not in the knowledge base.", (), grounded=False))
    assert _contents(view) == ["Not in the knowledge base."]


def test_notice_is_shown_as_a_warning_line() -> None:
    view = TurnView()
    view.apply(NoticeEvent.worded(Said("degraded.timed_out", {"channel": "keyword", "s": 5.0}), level="warning"))
    view.apply(NoticeEvent("an older notice, kept in English", level="warning"))
    assert [shown(c) for c in _contents(view)] == [
        "⚠️ keyword search timed out after 5 s",
        "⚠️ an older notice, kept in English",
    ]
    assert [shown(c, "zh") for c in _contents(view)] == [
        "⚠️ keyword 检索超时（5 秒）",
        "⚠️ an older notice, kept in English",
    ]


def test_citation_passage_markup_is_escaped() -> None:
    hostile = Chunk("d2-0000", "d2", 0, "<img src=x onerror=alert(1)>", "evil.html")
    view = TurnView()
    view.apply(AnswerEvent("See [1].", (Citation(1, hostile),), grounded=True))
    _answer, citation = view.messages()
    assert "<img" not in str(citation.content)
    assert citation_title(Citation(1, hostile)) == "[1] evil.html"


def test_a_cited_scanned_passage_says_how_sure_the_ocr_was() -> None:
    scanned = Chunk("d3-0000", "d3", 0, "Charge it for two hours.", "scan.pdf", page=2, ocr_confidence=0.874)
    view = TurnView()
    view.apply(AnswerEvent("Two hours [1].", (Citation(1, scanned),), grounded=True))
    _answer, citation = english(view.messages())
    assert citation.metadata["title"] == "📄 [1] scan.pdf · p. 2 · 🖨️ OCR 87%"
    assert "OCR" not in citation_title(Citation(1, CHUNK))  # a text layer says nothing of OCR


def test_session_keeps_turns_until_the_engine_folds_them_into_a_summary() -> None:
    session = Session()
    for n in range(4):
        session.remember(f"q{n}", f"a{n}")
    session.fold(MemoryEvent("The user asked q0 and q1.", 4))
    assert session.summary == "The user asked q0 and q1."
    assert [t.content for t in session.recent()] == ["q2", "a2", "q3", "a3"]


LEAF_V1 = LeafScore("v1.specs", "Products > Lumen V1 > Specs", "KB", "v1", 0.9)
LEAF_W3 = LeafScore("w3.specs", "Products > Glide W3 > Specs", "KB", "w3", 0.9)


def test_routing_decision_and_reason_fill_the_routing_step() -> None:
    view = TurnView()
    view.apply(StageEvent("route", "started"))
    view.apply(StageEvent("route", "finished", duration_s=1.5, detail={"decision": "route"}))
    view.apply(RoutingEvent("How long?", "route", (LEAF_V1,), "routed to Products > Lumen V1 > Specs (0.90)"))
    (step,) = english(view.messages())
    assert step.metadata["title"] == "🧭 Choosing where to look"
    assert "**Search in**: Lumen V1 › Specs (0.90)" in str(step.content)
    assert "Why: routed to" in str(step.content)


def test_the_routing_step_says_which_uncovered_bases_it_also_searched_and_why() -> None:
    view = TurnView()
    view.apply(StageEvent("route", "started"))
    view.apply(StageEvent("route", "finished", duration_s=0.1, detail={"decision": "route"}))
    poor = LeafScore("shipping", "After-sales > Shipping and returns", "KB", "service", 0.08)
    event = RoutingEvent("foo_open?", "route", (poor,), "routed to Shipping (0.08)", (poor,), 0.08, ("default",), 0.5)
    view.apply(event)
    (step,) = view.messages()
    assert "Shipping and returns (0.08)" in shown(str(step.content))
    said = "Also searched **default**, which no intent covers: no intent fits this question well (0.08 < 0.50)."
    assert said in shown(str(step.content))
    assert "同时检索了没有意图覆盖的 **default**：没有哪个意图与这个问题足够匹配（0.08 < 0.50）" in shown(
        str(step.content), "zh"
    )


def test_a_weak_search_widened_is_said_from_its_record_in_both_languages() -> None:
    view = TurnView()
    view.apply(NoticeEvent("engine words", widened=Widened(("default",), 0.21, 0.5)))
    (notice,) = view.messages()
    english_text, chinese_text = shown(str(notice.content)), shown(str(notice.content), "zh")
    assert english_text == (
        "ℹ️ The intent's knowledge bases held nothing strong (best 0.21 < 0.50): also searched **default**, which "
        "no intent covers."
    )
    assert (
        chinese_text
        == "ℹ️ 该意图的知识库中没有高度相关的内容（最高 0.21 < 0.50）：已同时检索没有意图覆盖的 **default**。"
    )


def test_clarification_offers_each_choice_and_search_everything() -> None:
    view = TurnView()
    view.apply(ClarifyEvent("How long?", ("How long?",), "How long?", (LEAF_V1, LEAF_W3)))
    view.apply(TokenEvent("Which one do you mean?"))
    view.apply(AnswerEvent("Which one do you mean?", (), grounded=False))
    (answer,) = view.messages()
    assert answer.options == [
        {"label": "Lumen V1 › Specs", "value": "v1.specs"},
        {"label": "Glide W3 › Specs", "value": "w3.specs"},
        {"label": "Search everything", "value": "*"},
    ]


def test_rewritten_question_is_shown_small_under_the_answer() -> None:
    view = TurnView()
    view.apply(
        RewriteEvent("And the <b>V1</b>?", "What is the V1's <b>suction</b>?", ("What is the V1's <b>suction</b>?",))
    )
    view.apply(AnswerEvent("2600 Pa [1].", (Citation(1, CHUNK),), grounded=True))
    answer, note, _source = english(view.messages())
    assert answer.content == "2600 Pa [1]." + UNCHECKED
    assert note.content.startswith("<sub>🔎 Searched as: ") and "&lt;b&gt;suction" in note.content


# -- agent mode ---------------------------------------------------------------------------------

SEARCH = {"query": "Alpha battery"}


def test_agent_step_is_pending_then_done_with_the_call_and_its_result() -> None:
    view = TurnView()
    view.apply(AgentStepEvent(1, "started", "search_knowledge", SEARCH, "find the battery life"))
    (step,) = english(view.messages())
    assert step.metadata == {"title": "🛠️ Step 1 · search_knowledge", "status": "pending"}
    assert "**Why:** find the battery life" in str(step.content)
    assert '`search_knowledge` `{"query": "Alpha battery"}`' in str(step.content)
    assert "Result" not in str(step.content)

    view.apply(
        AgentStepEvent(
            1, "finished", "search_knowledge", SEARCH, "find the battery life", "2 passage(s): robots.md", 0.456
        )
    )
    (step,) = english(view.messages())
    assert step.metadata == {"title": "🛠️ Step 1 · search_knowledge", "status": "done", "duration": 0.46}
    assert "**Result:** 2 passage(s): robots.md" in str(step.content)
    assert "**Why:** find the battery life" in str(step.content)


def test_failed_agent_step_is_marked_with_its_error() -> None:
    view = TurnView()
    view.apply(AgentStepEvent(2, "started", "read_chunk", {"chunk_id": 7}, "read on"))
    view.apply(
        AgentStepEvent(
            2, "failed", "read_chunk", {"chunk_id": 7}, "read on", "", 0.01, "invalid arguments for read_chunk"
        )
    )
    (step,) = english(view.messages())
    assert step.metadata["title"] == "❌ 🛠️ Step 2 · read_chunk: failed"
    assert step.metadata["status"] == "done"
    assert "**Error:** invalid arguments for read_chunk" in str(step.content)
    assert "Result" not in str(step.content)


def test_unreadable_reply_is_a_failed_step_of_its_own() -> None:
    view = TurnView()
    view.apply(AgentStepEvent(1, "failed", "?", error="the reply was not a tool call or an answer"))
    (step,) = english(view.messages())
    assert step.metadata["title"] == "❌ 🛠️ Step 1 · no tool call: failed"
    assert step.content == "**Error:** the reply was not a tool call or an answer"


def test_auto_mode_choice_is_an_info_line() -> None:
    view = TurnView()
    view.apply(ModeEvent("agent", "Auto chose agent: the question compares things"))
    view.apply(ModeEvent("workflow", "a single question: one search is enough"))
    assert _contents(view) == [
        "🤖 Auto chose agent: the question compares things",
        "🧭 Auto chose workflow: a single question: one search is enough",
    ]


def test_agent_turn_shows_the_stage_the_steps_in_order_then_the_cited_answer() -> None:
    view = TurnView()
    view.apply(StageEvent("agent", "started", detail={"protocol": "json"}))
    view.apply(AgentStepEvent(1, "started", "search_knowledge", SEARCH, "one"))
    view.apply(AgentStepEvent(1, "finished", "search_knowledge", SEARCH, "one", "1 passage(s): warranty.pdf", 0.1))
    view.apply(AgentStepEvent(2, "started", "list_knowledge_bases", {}, "two"))
    view.apply(AgentStepEvent(2, "finished", "list_knowledge_bases", {}, "two", "1 knowledge base", 0.1))
    view.apply(AgentStepEvent(3, "started", "search_knowledge", {"query": "Beta"}, "three"))
    view.apply(AgentStepEvent(3, "failed", "search_knowledge", {"query": "Beta"}, "three", "", 10.0, "timed out"))
    view.apply(NoticeEvent("Reached the limit of 3 agent steps; answering from what was found."))
    view.apply(StageEvent("agent", "finished", 2.5, {"steps": 3, "model calls": 1, "passages": 1}))
    view.apply(RetrievalEvent((RETRIEVED,)))
    view.apply(TokenEvent("12 months [1]."))
    view.apply(AnswerEvent("12 months [1].", (Citation(1, CHUNK),), grounded=True))
    titles = [str((m.metadata or {}).get("title", m.content)) for m in english(view.messages())]
    assert titles == [
        "🤖 Agent working",
        "🛠️ Step 1 · search_knowledge",
        "🛠️ Step 2 · list_knowledge_bases",
        "❌ 🛠️ Step 3 · search_knowledge: failed",
        "ℹ️ Reached the limit of 3 agent steps; answering from what was found.",
        "12 months [1]." + UNCHECKED,
        "📄 [1] warranty.pdf · p. 3 · Battery",
    ]
    stage = english(view.messages())[0]
    assert stage.metadata == {"title": "🤖 Agent working", "status": "done", "duration": 2.5}
    assert stage.content == "3 steps · 1 model call · 1 passage found"
    assert all((m.metadata or {}).get("status") != "pending" for m in english(view.messages()))


def test_step_events_update_the_bubble_of_their_own_step() -> None:
    view = TurnView()
    view.apply(AgentStepEvent(1, "started", "search_knowledge", {"query": "Alpha"}, "first"))
    view.apply(AgentStepEvent(2, "started", "search_knowledge", {"query": "Beta"}, "second"))
    view.apply(AgentStepEvent(2, "finished", "search_knowledge", {"query": "Beta"}, "second", "Beta found", 0.2))
    first, second = english(view.messages())
    assert first.metadata["status"] == "pending" and "Beta" not in str(first.content)
    assert second.metadata["status"] == "done" and "**Result:** Beta found" in str(second.content)
    view.apply(AgentStepEvent(1, "failed", "search_knowledge", {"query": "Alpha"}, "first", "", 0.3, "boom"))
    first, second = english(view.messages())
    assert first.metadata["title"].startswith("❌ 🛠️ Step 1") and "**Error:** boom" in str(first.content)
    assert "**Result:** Beta found" in str(second.content) and second.metadata["title"] == "🛠️ Step 2 · search_knowledge"


def test_step_text_from_the_model_cannot_inject_markup() -> None:
    view = TurnView()
    hostile = {"query": "a `tick` <b>"}
    view.apply(AgentStepEvent(1, "finished", "search_knowledge", hostile, "<img src=x onerror=alert(1)>", "<i>x</i>"))
    content = str(view.messages()[0].content)
    assert "<img" not in content and "<i>" not in content
    assert '``{"query": "a `tick` <b>"}``' in content  # a code span: shown as typed, not as markup


def test_failed_agent_stage_falls_back_visibly() -> None:
    view = TurnView()
    view.apply(StageEvent("agent", "started"))
    view.apply(StageEvent("agent", "failed", 1.0, error="model server unreachable"))
    view.apply(NoticeEvent("The agent could not work on this question; answering with the workflow.", "warning"))
    stage, notice = english(view.messages())
    assert stage.metadata["title"] == "❌ 🤖 Agent working: failed" and stage.content == "model server unreachable"
    assert str(notice.content).startswith("⚠️ The agent could not work")


# -- the support check ----------------------------------------------------------------------------


def test_the_checked_answer_replaces_the_draft_and_marks_the_unsupported_sentence() -> None:
    support = (
        SentenceSupport("Batteries are covered for 12 months [1]. ", "supported", (2,), (1,), ("12",)),
        SentenceSupport("Screens for 36 months.", "unsupported", (1,), (), ("36",), ("36",)),
    )
    citation = Citation(1, CHUNK, highlights=("Batteries are covered for 12 months.",))
    view = TurnView()
    view.apply(TokenEvent("Batteries are covered for 12 months [2]. Screens for 36 months [1]."))
    view.apply(
        AnswerEvent(
            "Batteries are covered for 12 months [1]. Screens for 36 months.", (citation,), True, False, support
        )
    )
    answer, source = english(view.messages())
    assert answer.content == (
        'Batteries are covered for 12 months [1]. <span class="unsupported" style="opacity:0.6">Screens for 36 '
        f"months.</span><sup> {shown(UNSUPPORTED_MARK)}</sup>" + UNCHECKED
    )
    assert view.answer == "Batteries are covered for 12 months [1]. Screens for 36 months."  # what history keeps
    assert source.metadata["title"] == "📄 [1] warranty.pdf · p. 3 · Battery"
    assert source.content == f"<mark>Batteries are covered for 12 months.</mark>\n\n{shown(OPEN_PAGE_HINT)}"


def test_a_refused_answer_is_shown_as_it_is_with_the_closest_passages() -> None:
    support = (SentenceSupport("Screens for 36 months.", "unsupported", (1,), (), ("36",), ("36",)),)
    view = TurnView()
    view.apply(AnswerEvent("The documents do not say this.", (Citation(1, CHUNK),), False, True, support))
    answer, source = view.messages()
    assert answer.content == "The documents do not say this."
    assert source.metadata["title"].startswith("📄 [1] warranty.pdf")


def test_highlighted_passages_escape_markup_and_markdown() -> None:
    text = "Run *make* <b>now</b>. Then `rm -rf` # done"
    assert highlighted(text, ("Then `rm -rf` # done", "not in it")) == (
        r"Run \*make\* &lt;b&gt;now&lt;/b&gt;. <mark>Then \`rm -rf\` \# done</mark>"
    )


def test_a_waiting_answer_shows_its_place_in_line_then_what_the_model_reads() -> None:
    view = TurnView()
    view.apply(StageEvent("generate", "started", detail={"model": "m", "passages": 3, "prompt tokens": 420}))

    def line(lang: str = "en") -> str:  # in the title, seen while the step is collapsed
        return shown(str(view.messages()[0].metadata["title"]), lang)

    assert "Reading 3 passages (≈ 420 tokens" in line()
    assert "正在阅读 3 段资料（约 420 词元）" in line("zh")
    view.apply(WaitEvent(2, 1.2))
    assert "2 answers ahead of yours" in line()
    view.apply(WaitEvent(1, 6.0))
    assert line() == "✍️ Writing the answer · ⏳ Waiting for the model: 1 answer ahead of yours · 6 s"
    assert line("zh") == "✍️ 正在写回答 · ⏳ 排队中，前面还有 1 个回答 · 6 s"
    view.apply(WaitEvent(0, 9.4))
    assert line() == "✍️ Writing the answer · 📖 Reading 3 passages (≈ 420 tokens)… · 9 s"
    view.apply(TokenEvent("Twelve"))
    view.apply(StageEvent("generate", "finished", duration_s=12.0, detail={"chars": 6}))
    step = view.messages()[0]
    assert step.metadata["status"] == "done" and "log" not in step.metadata
    assert line() == "✍️ Writing the answer"
    assert shown(step.content) == "6 characters written"


def test_a_group_choice_is_its_own_kind_of_step_in_both_languages() -> None:
    view = TurnView()
    view.apply(AgentStepEvent(1, "started", "choose_group", {"group": "weather"}, "it is about weather"))
    view.apply(
        AgentStepEvent(1, "finished", "choose_group", {"group": "weather"}, "", "weather: weather_forecast", 0.001)
    )
    (step,) = english(view.messages())
    assert step.metadata["title"] == "🗂️ Step 1 · tool group weather"
    assert "**Tool group:** `weather`" in str(step.content) and "choose_group" not in str(step.content)
    assert "**Its tools:** weather: weather_forecast" in str(step.content)
    (raw,) = view.messages()
    assert "步骤 1 · 工具组 weather" in str(raw.metadata["title"]) and "组内工具" in str(raw.content)  # type: ignore[index]


def test_not_sure_shows_the_likeliest_passage_open_and_the_guess_behind_a_button() -> None:
    confidence = Confidence("low", (ConfidenceCheck("fits", False),), 0.21)
    event = AnswerEvent(
        "Not sure: ...", (Citation(1, CHUNK, None, ("Batteries are covered for 12 months.",)),), True,
        confidence=confidence, not_sure=True, guess="It is covered [1].",
    )  # fmt: skip
    view = TurnView()
    view.apply(event)
    answer, source = view.messages()
    assert shown(str(answer.content)).startswith("🤔 **Not sure — the passage most likely to hold it:**")
    assert shown(str(answer.content), "zh").startswith("🤔 **不确定——最可能包含答案的段落：**")
    guess = str(answer.content).split('<details class="model-guess">', 1)[1]
    assert shown(guess).startswith("<summary>Show the model's guess</summary>")
    assert "It is covered [1]." in shown(guess) and "confidence-low" in guess  # its badge says why
    assert not source.metadata and "**📄 [1] warranty.pdf" in str(source.content)  # open, not behind a click

    no_guess = TurnView()
    no_guess.apply(replace(event, guess=""))  # no sentence answered: nothing to show behind the button
    assert "model-guess" not in str(no_guess.messages()[0].content)


def test_a_cited_figure_shows_open_on_its_picture_with_its_caption_and_page() -> None:
    caption = 'Figure 2: <img src=x onerror=alert(1)> "plot"'
    figure = Chunk(
        "d4-0001", "d4", 1, f"{caption}\n\n1 0.5 0", "plots.pdf", page=3, figure=Figure(0.1, 0.1, 0.9, 0.5, caption)
    )
    picture = "data:image/png;base64,iVBORw0KGgo="
    view = TurnView(figures={figure.chunk_id: picture})
    view.apply(AnswerEvent("A plot [1], a battery [2].", (Citation(1, figure), Citation(2, CHUNK)), grounded=True))
    _answer, drawn, words = english(view.messages())
    assert drawn.metadata == {
        "title": '📄 [1] plots.pdf · p. 3 · 🖼 Figure 2: &lt;img src=x onerror=alert(1)&gt; "plot"'
    }
    content = str(drawn.content)
    assert (
        content.count("<img") == 1
        and f'<img src="{picture}" alt="Figure 2: &lt;img src=x onerror=alert(1)&gt; &quot;plot&quot;"' in content
    )
    assert "page 3" in content and "第 3 页" in shown(str(view.messages()[1].content), "zh")
    assert words.metadata["status"] == "done"  # a passage of words stays folded
    unseen = TurnView()  # no picture to show (a Word file's figure, a file no longer kept): its words, folded
    unseen.apply(AnswerEvent("A plot [1].", (Citation(1, figure),), grounded=True))
    assert "<img" not in str(unseen.messages()[1].content) and unseen.messages()[1].metadata["status"] == "done"
