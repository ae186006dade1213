"""A question in one language over documents in the other is searched in the documents' language too.

Across languages only the vector channel reads the question, and multilingual-e5 scores every passage in
the other language alike (0.83-0.87 for a Chinese question over English manuals, the evidence rarely on top),
while the keyword channel and the reranker cannot read across at all. So when a question's search finds
passages in the other language and nothing strong in its own, the model translates it (one short call, ~2 s
on 2 cores) and the translation is searched as well; the answer is still written in the question's language.
A failed, empty or wrong-language translation means the question is searched as asked only.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragapp.core.lang import Language, language_of
from ragapp.core.types import ChatTurn, RetrievalResult, Said
from ragapp.models.llm import LLM, short_reply

SYSTEM = {
    "en": "Translate the user's question into English, to search English documents. Keep names, commands, "
    "options, file names, codes and numbers exactly as written. Reply with the English question only.",
    "zh": "把用户的问题翻译成中文，用于检索中文文档。名称、命令、选项、文件名、代码和数字保持原样。"
    "只输出翻译后的问题。",
}
_MAX_TOKENS = 120


@dataclass(frozen=True)
class Translation:
    question: str
    target: Language
    text: str | None  # None: use the question as asked
    error: str | None = None
    duration_s: float = 0.0
    said: Said | None = None  # the error as a record, where the page has words for it


def other_language(question: str) -> Language:
    return "zh" if language_of(question) == "en" else "en"


def needs_translation(question: str, result: RetrievalResult, below: float) -> bool:
    """The search found passages in the other language and kept nothing in the question's own language that
    the reranker scored ``below`` or better (without a reranker, nothing of its own language at all)."""
    own = language_of(question)
    if not any(language_of(c.chunk.text) != own for c in result.candidates):
        return False
    mine = [c for c in result.chunks if language_of(c.chunk.text) == own]
    return not any(c.rerank_score is None or c.rerank_score >= below for c in mine)


def translation_skip_reason(question: str, result: RetrievalResult) -> str | None:
    """Why a question that ``needs_translation`` is not translated after all: the relevance gate kept passages,
    all of them in the question's own language, so the other language's candidates were weighed against them and
    none came near the question (an English question about R over R's English manual and a Chinese FAQ: the FAQ's
    passages are only the vector channel's nearest, and a Chinese search would find the same FAQ). None:
    translate; also when the gate kept nothing at all (a Chinese question over English text the gate could not
    judge: the translation is the one way left to find it). The setting ``translate_only_if_other_kept``."""
    own = language_of(question)
    if not result.chunks or any(language_of(c.chunk.text) != own for c in result.chunks):
        return None
    return "the passages kept are all in the question's language: none in the other language came near it"


class QuestionTranslator:
    def __init__(self, llm: LLM, timeout_s: float) -> None:
        self._llm = llm
        self._timeout_s = timeout_s

    def translate(self, question: str) -> Translation:
        target = other_language(question)
        messages = [ChatTurn("system", SYSTEM[target]), ChatTurn("user", question)]
        reply = short_reply(self._llm, messages, _MAX_TOKENS, self._timeout_s)
        duration = reply.seconds
        if reply.text is None:
            return Translation(question, target, None, reply.error, duration)
        text = " ".join(reply.text.strip().strip("\"'“”").split())
        if not text or len(text) > 4 * len(question) + 100:
            said = Said("stage.no_translation")
            return Translation(question, target, None, said.english, duration, said)
        if language_of(text) != target:
            said = Said("stage.wrong_language", {"language": target})
            return Translation(question, target, None, said.english, duration, said)
        return Translation(question, target, text, None, duration)
