"""A question whose search finds nothing strong is searched once more, with the sentence that would answer it.

A question phrased in the user's words ("which call walks through the variables when I don't know their
names?") can share few words with the sentence that answers it ("Mat_VarReadNextInfo reads the next
variable's information"), and then neither keyword nor vector search puts that sentence near the top. When the
reranker scores every passage kept below ``rephrase_below_score`` (and something was kept), the model writes
the sentence a manual would use to answer the question (one short call: a "hypothetical answer"; it may guess
the value, which is never shown) and the question together with that sentence is searched again. Its passages
come first, then the question's own, as many as the part may use; the answer is still written from passages
only, and still checked against them. A failed or empty reply means the question's own passages only.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragapp.core.lang import is_chinese
from ragapp.core.types import ChatTurn, RetrievalResult
from ragapp.models.llm import LLM, short_reply

SYSTEM_EN = (
    "Write the one sentence a technical manual would use to state the answer to the user's question, in the "
    "manual's own words. Keep every name, command, option and number from the question. If you do not know a "
    "value, write a plausible one. Reply with that sentence only."
)
SYSTEM_ZH = (
    "写出技术手册里用来陈述这个问题答案的那一句话，用手册自己的说法。保留问题中的名称、命令、选项和数字。"
    "不知道具体数值时写一个合理的值。只输出这一句话。"
)
_MAX_TOKENS = 80


@dataclass(frozen=True)
class Hypothesis:
    question: str
    text: str | None  # None: search the question as asked only
    error: str | None = None
    duration_s: float = 0.0

    @property
    def query(self) -> str:
        """What is searched again: the question and the sentence together."""
        return f"{self.question} {self.text}" if self.text else self.question


def needs_rephrasing(result: RetrievalResult, below: float) -> bool:
    """The search kept passages, none with a rerank score of ``below`` or more. A search that kept nothing is
    not repeated: the relevance gate found nothing near the question (the capital of France, over robot
    manuals), and "not in the knowledge base" at once, with no model call, is the honest, fast reply; on the
    dev split, searching those again gained the evidence for 3 answerable questions of 135 and gave passages to
    one of the two unanswerable ones."""
    return bool(result.chunks) and not any(c.rerank_score is None or c.rerank_score >= below for c in result.chunks)


class QuestionRephraser:
    def __init__(self, llm: LLM, timeout_s: float) -> None:
        self._llm = llm
        self._timeout_s = timeout_s

    def hypothesis(self, question: str) -> Hypothesis:
        messages = [ChatTurn("system", SYSTEM_ZH if is_chinese(question) else SYSTEM_EN), ChatTurn("user", question)]
        reply = short_reply(self._llm, messages, _MAX_TOKENS, self._timeout_s)
        duration = reply.seconds
        if reply.text is None:
            return Hypothesis(question, None, reply.error, duration)
        text = " ".join(reply.text.strip().strip("\"'“”").split())
        if not text:
            return Hypothesis(question, None, "the model wrote no sentence", duration)
        return Hypothesis(question, text[: 4 * len(question) + 200], None, duration)
