"""When a question is searched in the documents' other language, and how its translation is checked: hand-built
retrieval results and the scripted LLM (the translation itself is the model's; its handling is ours)."""

from __future__ import annotations

from ragapp.config import Settings
from ragapp.core.errors import LLMError
from ragapp.core.types import Chunk, RetrievalResult, RetrievedChunk
from ragapp.models.llm import LLMS
from ragapp.qa.translate import QuestionTranslator, needs_translation

ZH_QUESTION = "fasta36 默认使用哪个打分矩阵？"
EN = RetrievedChunk(Chunk("e-0000", "e", 0, "The default matrix is BLOSUM50.", "fasta.pdf"), 0.1, {}, {}, None)


def _zh(score: float | None) -> RetrievedChunk:
    return RetrievedChunk(Chunk("z-0000", "z", 0, "语言环境影响排序。", "ch08.html"), 0.2, {}, {}, score)


def _result(chunks: tuple[RetrievedChunk, ...], candidates: tuple[RetrievedChunk, ...]) -> RetrievalResult:
    return RetrievalResult(ZH_QUESTION, chunks, candidates, ())


def test_translation_is_needed_only_when_the_other_language_is_there_and_nothing_strong_of_its_own() -> None:
    assert needs_translation(ZH_QUESTION, _result((_zh(0.05),), (_zh(0.05), EN)), below=0.5)  # weak own passage
    assert needs_translation(ZH_QUESTION, _result((), (_zh(0.05), EN)), below=0.5)  # nothing kept
    assert not needs_translation(ZH_QUESTION, _result((_zh(0.9),), (_zh(0.9), EN)), below=0.5)  # a strong one
    assert not needs_translation(ZH_QUESTION, _result((_zh(None),), (_zh(None), EN)), below=0.5)  # no reranker
    assert not needs_translation(ZH_QUESTION, _result((), (_zh(0.05),)), below=0.5)  # one language only


def test_the_translation_is_used_only_when_it_is_in_the_other_language() -> None:
    llm = LLMS.get("scripted")(Settings())  # the tests' ScriptedLLM (tests/conftest.py registers it)
    llm.enqueue(  # type: ignore[attr-defined]
        "“Which scoring matrix does fasta36 use by default?”", "fasta36 默认的打分矩阵", "", LLMError("down")
    )
    translator = QuestionTranslator(llm, timeout_s=5)
    first = translator.translate(ZH_QUESTION)
    assert first.text == "Which scoring matrix does fasta36 use by default?" and first.target == "en"
    calls = llm.calls  # type: ignore[attr-defined]
    assert "English" in calls[0][0].content and calls[0][1].content == ZH_QUESTION
    assert translator.translate(ZH_QUESTION).text is None  # still Chinese: searched as asked
    assert translator.translate(ZH_QUESTION).error == "the model gave no usable translation"
    failed = translator.translate(ZH_QUESTION)
    assert failed.text is None and failed.error == "down"
