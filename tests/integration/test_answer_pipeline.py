"""The answer pipeline end to end: real retrieval over the demo knowledge base, a scripted LLM."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragapp.core.errors import LLMError
from ragapp.core.events import (
    AnswerEvent,
    EngineEvent,
    EvidenceEvent,
    NoticeEvent,
    RetrievalEvent,
    StageEvent,
    SuggestionsEvent,
    TokenEvent,
)
from ragapp.core.types import ChatTurn
from ragapp.qa.condense import condense
from ragapp.qa.prompts import NOT_FOUND_EN, NOT_FOUND_ZH, SYSTEM_EN, SYSTEM_ZH
from ragapp.qa.rephrase import SYSTEM_EN as REPHRASE_EN

if TYPE_CHECKING:
    from conftest import Rig, ScriptedLLM

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

pytestmark = pytest.mark.integration

E07 = "What does error code E07 mean on the Lumen V2 Pro?"
V1_RUNTIME_ZH = "流明 V1 扫地机器人充满电能用多久？"
OFF_TOPIC_EN = "What's the capital of France?"


def ask(rig: Rig, question: str, history: list[ChatTurn] | None = None) -> list[EngineEvent]:
    return list(rig.engine.chat.ask(question, history or []))


def only(events: list[EngineEvent], kind: type) -> list:
    return [e for e in events if isinstance(e, kind)]


def retrieval_of(events: list[EngineEvent]) -> RetrievalEvent:
    (event,) = only(events, RetrievalEvent)
    return event


def answer_of(events: list[EngineEvent]) -> AnswerEvent:
    (answer,) = only(events, AnswerEvent)
    after = events[events.index(answer) + 1 :]
    assert all(isinstance(e, SuggestionsEvent) for e in after), after  # only the next questions follow it
    return answer


def warnings_of(events: list[EngineEvent]) -> list[str]:
    return [e.message for e in only(events, NoticeEvent) if e.level == "warning"]


def test_streamed_tokens_make_up_the_answer(demo: Rig, demo_llm: ScriptedLLM) -> None:
    # No key fact (a code, a number) in the reply: the support check keeps it as written, whatever the ranking.
    pieces = ["It means ", "a cliff sensor ", "is blocked or dirty", " [1]."]
    demo_llm.enqueue(pieces)

    events = ask(demo, E07)

    assert [e.text for e in only(events, TokenEvent)] == pieces
    answer = answer_of(events)
    assert answer.text == "".join(pieces)
    assert answer.grounded is True
    assert warnings_of(events) == []
    stages = [(e.stage, e.status) for e in only(events, StageEvent)]
    assert stages == [
        ("retrieve", "started"),
        ("retrieve", "finished"),
        ("generate", "started"),
        ("generate", "finished"),
    ]
    # The stream order: retrieval first, then tokens, then the answer.
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("RetrievalEvent") < kinds.index("TokenEvent") < kinds.index("AnswerEvent")
    finished = [e for e in only(events, StageEvent) if e.status == "finished"]
    assert finished[0].detail["relevant"] == len(retrieval_of(events).chunks)
    assert finished[1].detail == {"chars": len(answer.text)}


def test_the_best_passage_sentence_comes_before_the_model_speaks(demo: Rig, demo_llm: ScriptedLLM) -> None:
    demo_llm.enqueue("It means a cliff sensor is blocked or dirty [1].")
    events = ask(demo, E07)
    kinds = [type(e) for e in events]
    (evidence,) = only(events, EvidenceEvent)
    assert kinds.index(RetrievalEvent) < kinds.index(EvidenceEvent) < kinds.index(TokenEvent)
    passage = retrieval_of(events).chunks[evidence.citation.number - 1].chunk
    assert evidence.citation.chunk == passage and evidence.citation.highlights[0] in passage.text
    assert "E07" in evidence.quote  # the sentence that names the code the question asks about


def test_citations_map_to_the_passages_numbered_in_the_prompt(demo: Rig, demo_llm: ScriptedLLM) -> None:
    # Sentences of a word or none (no key fact, too few words to check): their markers are kept as written.
    demo_llm.enqueue("Sensors [2]. Clean them [1][2]; see also [1, 3].")

    events = ask(demo, E07)

    chunks = retrieval_of(events).chunks
    assert len(chunks) >= 3
    answer = answer_of(events)
    # Shown numbered 1..n in the order the answer first cites them, each the passage the model meant.
    assert [c.number for c in answer.citations] == [1, 2, 3]
    assert [c.chunk for c in answer.citations] == [chunks[1].chunk, chunks[0].chunk, chunks[2].chunk]
    assert answer.text == "Sensors [1]. Clean them [2][1]; see also [2, 3]."

    (messages,) = demo_llm.calls
    assert messages[0] == ChatTurn("system", SYSTEM_EN)
    prompt = messages[-1].content
    assert prompt.endswith(f"Question: {E07}")
    # Passage n follows marker [n] and precedes marker [n + 1]: the best one whole, the others condensed.
    shown = condense(E07, chunks, demo.engine.settings.workflow.condense_keep)
    assert shown[0] == chunks[0]
    for number, item in enumerate(shown, start=1):
        marker = prompt.index(f"[{number}] ({item.chunk.source}")
        text_at = prompt.index(item.chunk.text, marker)
        following = prompt.find(f"[{number + 1}] (", marker)
        assert following == -1 or text_at < following, number
    assert f"[{len(chunks) + 1}] (" not in prompt


def test_a_chinese_question_gets_the_chinese_prompt(demo: Rig, demo_llm: ScriptedLLM) -> None:
    demo_llm.enqueue("充满电后可以工作很久 [1]。")  # no key fact: the support check keeps the marker
    answer = answer_of(ask(demo, V1_RUNTIME_ZH))
    (messages,) = demo_llm.calls
    assert messages[0] == ChatTurn("system", SYSTEM_ZH)
    assert messages[-1].content.startswith("参考资料:\n[1] (lumen_v1_manual_zh.md")
    assert [c.number for c in answer.citations] == [1]


def test_history_reaches_the_model_between_system_and_question(demo: Rig, demo_llm: ScriptedLLM) -> None:
    history = [ChatTurn("user", "I own a V2 Pro."), ChatTurn("assistant", "Noted.")]
    demo_llm.enqueue("Cliff sensor [1].")
    ask(demo, E07, history)
    (messages,) = demo_llm.calls
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[1:3] == history


def test_nothing_relevant_means_no_llm_call_and_a_not_found_answer(demo: Rig, demo_llm: ScriptedLLM) -> None:
    demo_llm.enqueue("This reply must never be used.")

    events = ask(demo, OFF_TOPIC_EN)

    assert demo_llm.calls == []
    assert retrieval_of(events).chunks == ()
    answer = answer_of(events)
    assert (answer.text, answer.citations, answer.grounded) == (NOT_FOUND_EN, (), False)
    assert [e.text for e in only(events, TokenEvent)] == [NOT_FOUND_EN]
    assert ("generate", "started") not in [(e.stage, e.status) for e in only(events, StageEvent)]


@pytest.mark.parametrize(
    ("question", "expected"),
    [(OFF_TOPIC_EN, NOT_FOUND_EN), ("今天天气怎么样？", NOT_FOUND_ZH)],
    ids=["en", "zh"],
)
def test_not_found_is_said_in_the_questions_language(
    make_engine: Callable[..., Rig], question: str, expected: str
) -> None:
    rig = make_engine()  # an empty knowledge base: nothing can be relevant
    answer = answer_of(ask(rig, question))
    assert (answer.text, answer.grounded) == (expected, False)
    assert rig.llm.calls == []


def _assert_passages_fallback(events: list[EngineEvent], question_is_chinese: bool = False) -> AnswerEvent:
    chunks = retrieval_of(events).chunks
    answer = answer_of(events)
    markers = " ".join(f"[{n}]" for n in range(1, len(chunks) + 1))
    lead = "模型暂时无法生成回答" if question_is_chinese else "The model could not produce an answer right now."
    assert answer.text.startswith(lead)
    assert answer.text.endswith(markers)
    assert answer.grounded is True
    assert [(c.number, c.chunk) for c in answer.citations] == [(n, c.chunk) for n, c in enumerate(chunks, start=1)]
    failed = [e for e in only(events, StageEvent) if e.status == "failed"]
    assert [e.stage for e in failed] == ["generate"]
    return answer


def test_llm_error_becomes_a_warning_and_the_passages(demo: Rig, demo_llm: ScriptedLLM) -> None:
    demo_llm.enqueue(LLMError("The local model is busy; try again in a moment."))
    events = ask(demo, E07)
    assert warnings_of(events) == ["The local model is busy; try again in a moment."]
    _assert_passages_fallback(events)
    assert len(demo_llm.calls) == 1


def test_llm_failing_mid_stream_keeps_what_was_said(
    demo: Rig, demo_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What was said is kept as it came: the support check (which would move [1] to the E07 passage) is off.
    monkeypatch.setattr(demo.settings.workflow, "check_support", False)
    demo_llm.enqueue(["E07 means a cliff sensor [1]", LLMError("connection dropped")])
    events = ask(demo, E07)
    assert warnings_of(events) == ["Connection dropped"]
    answer = answer_of(events)
    assert answer.text == "E07 means a cliff sensor [1]"
    assert [c.number for c in answer.citations] == [1]


def test_unexpected_backend_exception_is_contained(demo: Rig, demo_llm: ScriptedLLM) -> None:
    demo_llm.enqueue(RuntimeError("CUDA out of memory"))
    events = ask(demo, E07)
    assert warnings_of(events) == ["The language model failed (RuntimeError: CUDA out of memory)"]
    _assert_passages_fallback(events)


@pytest.mark.parametrize("reply", ["", "   \n ", ["", " ", ""]], ids=["empty", "whitespace", "empty-pieces"])
def test_empty_reply_is_treated_as_a_failure(demo: Rig, demo_llm: ScriptedLLM, reply: str | list[str]) -> None:
    demo_llm.enqueue(reply)
    events = ask(demo, V1_RUNTIME_ZH)
    assert warnings_of(events) == ["The language model returned an empty answer"]
    _assert_passages_fallback(events, question_is_chinese=True)


def test_garbage_reply_gives_no_citations_and_no_crash(demo: Rig, demo_llm: ScriptedLLM) -> None:
    demo_llm.enqueue("[99] !!! [0] [x]")
    events = ask(demo, E07)
    answer = answer_of(events)
    assert answer.text == "[99] !!! [0] [x]"
    assert answer.citations == ()
    assert answer.grounded is True
    assert warnings_of(events) == []


def test_a_model_that_runs_past_its_budget_is_cut(make_engine: Callable[..., Rig]) -> None:
    rig = make_engine(llm={"timeout_s": 0.2})
    rig.engine.library.ingest([(FIXTURES / "sample.md", "sample.md")])
    rig.llm.enqueue(["Run ./run.sh [1]", rig.llm.hang(0.6), " and wait", rig.llm.hang(), " forever"])

    events = ask(rig, "How do I start the service?")

    warnings = warnings_of(events)
    assert warnings == ["The model ran past its 0.2 s budget; the answer was cut"]
    answer = answer_of(events)
    assert answer.text == "Run ./run.sh [1]"  # what arrived within the budget is kept, nothing after it
    assert [c.number for c in answer.citations] == [1]


def test_a_model_that_hangs_before_its_first_token_does_not_hold_the_request(
    make_engine: Callable[..., Rig],
) -> None:
    rig = make_engine(llm={"timeout_s": 0.3})
    rig.engine.library.ingest([(FIXTURES / "sample.md", "sample.md")])
    rig.llm.enqueue([rig.llm.hang(5.0), "too late"])

    started = time.monotonic()
    events = ask(rig, "How do I start the service?")
    elapsed = time.monotonic() - started

    assert elapsed < 3.0  # bounded by the 0.3 s budget, not by the 5 s hang
    assert warnings_of(events) == ["The model did not start answering within 0.3 s"]
    answer = _assert_passages_fallback(events)
    assert "too late" not in answer.text


def test_a_chinese_question_over_english_text_is_also_searched_in_english(
    make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    rig = make_engine(workflow={"translate": True})
    manual = tmp_path / "fasta_guide.md"
    manual.write_text(
        "# Scoring\n\nBy default fasta36 uses the BLOSUM50 scoring matrix for protein comparisons.\n\n"
        "# Threads\n\nThe -T option sets the number of worker threads.\n",
        "utf-8",
    )
    assert rig.engine.library.ingest([(manual, manual.name)])[0].status == "added"
    rig.llm.enqueue("Which scoring matrix does fasta36 use by default?", "fasta36 默认使用 BLOSUM50 [1]。")
    events = list(rig.engine.chat.ask("fasta36 默认使用哪个打分矩阵？", []))
    stages = [(e.stage, e.status) for e in only(events, StageEvent)]
    assert ("translate", "finished") in stages
    assert "BLOSUM50" in retrieval_of(events).chunks[0].chunk.text  # found through the English question
    assert rig.llm.calls[0][1].content == "fasta36 默认使用哪个打分矩阵？"  # the translation call
    assert answer_of(events).text.startswith("fasta36 默认使用 BLOSUM50")


MATIO = (
    "# Reading\n\nMat_VarReadNextInfo reads the header of the next variable in the file and returns it; call it "
    "until it returns NULL to visit every variable.\n\n# Writing\n\nMat_VarWrite writes a variable to the file.\n"
)


def test_a_question_that_finds_nothing_strong_is_searched_again_with_its_likely_answer(
    make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    # every search counts as weak: no reranker score reaches 1.0
    rig = make_engine(workflow={"rephrase": True, "rephrase_below_score": 1.0}, rerank={"backend": "builtin"})
    manual = tmp_path / "matio.md"
    manual.write_text(MATIO, "utf-8")
    assert rig.engine.library.ingest([(manual, manual.name)])[0].status == "added"
    hypothesis = "Mat_VarReadNextInfo reads the next variable's information until it returns NULL."
    rig.llm.enqueue(hypothesis, "Call Mat_VarReadNextInfo until it returns NULL [1].")
    events = list(rig.engine.chat.ask("How do I go over all variables when I don't know their names?", []))

    (stage,) = [e for e in only(events, StageEvent) if e.stage == "rephrase" and e.status == "finished"]
    assert stage.detail == {"sentence": hypothesis}
    assert rig.llm.calls[0][0].content == REPHRASE_EN  # the hypothesis call, then the answer
    assert "Mat_VarReadNextInfo" in retrieval_of(events).chunks[0].chunk.text
    assert hypothesis not in answer_of(events).text  # the sentence is only searched, never shown


def test_a_failed_rephrasing_keeps_the_questions_own_passages(make_engine: Callable[..., Rig], tmp_path: Path) -> None:
    rig = make_engine(workflow={"rephrase": True, "rephrase_below_score": 1.0}, rerank={"backend": "builtin"})
    manual = tmp_path / "matio.md"
    manual.write_text(MATIO, "utf-8")
    assert rig.engine.library.ingest([(manual, manual.name)])[0].status == "added"
    rig.llm.enqueue(LLMError("the model is down"), "Use Mat_VarReadNextInfo [1].")
    events = list(rig.engine.chat.ask("Which function reads the next variable's header?", []))

    (stage,) = [e for e in only(events, StageEvent) if e.stage == "rephrase" and e.status != "started"]
    assert stage.status == "failed" and "the model is down" in (stage.error or "")
    assert retrieval_of(events).chunks and not answer_of(events).abstained
