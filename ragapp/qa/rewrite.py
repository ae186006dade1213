"""Rewrite a follow-up into a standalone question, and split a multi-part question into sub-questions.

One model call does both, and only when it can matter: when a follow-up points back into the conversation
("what about the B model?"; one that stands alone is searched as asked), or when the question looks multi-part
(two question marks, "and how...", "以及"). Anything unusable in the reply (garbage, an empty question, too many
parts) falls back to the question as asked.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragapp.core.errors import LLMError
from ragapp.core.lang import is_chinese
from ragapp.core.types import ChatTurn, RetrievalResult
from ragapp.models.json_reply import json_candidates
from ragapp.models.llm import LLM, stream_within
from ragapp.store.tokenize import tokenize

log = logging.getLogger(__name__)

_MULTI_PART = re.compile(
    r"[?？].+[?？]"
    r"|\b(and|also|as well as|plus)\s+(what|how|which|when|where|who|why|is|are|does|do|can|will)\b"
    r"|以及|另外|还有|同时|并且|顺便|分别|此外",
    re.IGNORECASE | re.DOTALL,
)


# A follow-up that leans on the conversation: a pronoun or pointer, a leading "and"/"what about", a bare "呢".
_LEANS_ON_CONTEXT = re.compile(
    r"\b(it|its|it's|they|them|their|this|that|these|those|he|she|him|his|her|there|one|ones|same|former|latter|"
    r"above|previous|else|instead|too|also|other|another)\b|^\s*(and|or|but|so|then|what about|how about)\b"
    r"|它|其|该|这|那|他|她|上述|前者|后者|同样|也|呢\s*[?？]?\s*$",
    re.IGNORECASE,
)
_MIN_WORDS_ALONE = 4  # shorter follow-ups ("price?", "多少钱？") are rewritten whatever they say
_MIN_CJK_ALONE = 6
_MIN_OWN_WORDS = 2  # a follow-up's own search may skip its rewrite only with this many content words


def has_words_of_its_own(question: str) -> bool:
    """Whether a follow-up names enough by itself (``_MIN_OWN_WORDS`` content words, function words and pointers
    aside) for a strong passage found by its own words to stand for what it asks: "and when it fails?" names one
    ("fail"), and its search finds whatever fails elsewhere, so it is rewritten whatever that search scores."""
    return len(tokenize(question)) >= _MIN_OWN_WORDS


def looks_multi_part(question: str) -> bool:
    return bool(_MULTI_PART.search(question.strip()))


def stands_alone(question: str) -> bool:
    """A question that needs nothing from the conversation: long enough to name its subject, and with no
    pronoun, pointer or leading "and" that points back. Rewriting it would cost a model call (~8 s on two
    cores) to get the same question back."""
    if _LEANS_ON_CONTEXT.search(question):
        return False
    if is_chinese(question):
        return len(re.findall(r"[\u4e00-\u9fff]", question)) >= _MIN_CJK_ALONE
    return len(re.findall(r"\w+", question)) >= _MIN_WORDS_ALONE


def found_as_asked(search: Callable[[], RetrievalResult], above: float) -> str | None:
    """Why a follow-up that points back needs no rewriting: its own ``search`` already keeps a passage the
    reranker scores ``above`` or more (the answer still reads the conversation; on the blind set's follow-ups no
    such skip lost the evidence: docs/benchmarks.md). None: rewrite (also when the search fails: the answer's own
    search reports that)."""
    try:
        found = search()
    except Exception:
        log.warning("the search before rewriting failed", exc_info=True)
        return None
    best = max((c.rerank_score for c in found.chunks if c.rerank_score is not None), default=None)
    if best is None or best < above:
        return None
    return f"the question as asked finds a passage scored {best:.2f} (rewrite_above_score {above:.2f})"


# Where a question's parts meet: after a question mark, and before ", and which/how/..." (the "and" dropped). An
# ASCII "?" ends a part only before a space or a Chinese character: inside a word it is a glob or a URL's query
# ("/etc/rc?.d", "page?id=3").
_PART_BREAK = re.compile(
    r"(?<=？)\s*(?=\S)|(?<=\?)(?:\s+(?=\S)|(?=[\u3400-\u4dbf\u4e00-\u9fff]))"
    r"|,?\s+and\s+(?=(?:what|which|how|where|when|who|whose|why|on which|in which|at which)\b)",
    re.IGNORECASE,
)
_MIN_PART_CHARS = 6


def split_parts(question: str, max_parts: int) -> tuple[str, ...]:
    """The parts of a question that asks several things, cut where its wording joins them ("Which call starts
    it, and which call stops that again?", "默认值是多少？警告存在哪个变量里？"); the question itself when it has
    one part. A part may lean on the one before ("that"): parts are answered with the whole question beside
    them (``answer_messages``), so they need not stand alone. A cut that leaves a fragment (under
    ``_MIN_PART_CHARS``) is not made, nor one after which no question mark ends the text (an image or a remark
    after the question); past ``max_parts``, the rest stays with the last part."""
    parts: list[str] = []
    for piece in _PART_BREAK.split(question.strip()):
        piece = piece.strip()
        if parts and len(piece) < _MIN_PART_CHARS:
            parts[-1] = f"{parts[-1]} {piece}".strip()
        elif piece:
            parts.append(piece)
    while len(parts) > 1 and not parts[-1].endswith(("?", "？")):  # text after the last question is not one
        parts[-2:] = [f"{parts[-2]} {parts[-1]}"]
    if len(parts) > max_parts:
        parts[max_parts - 1 :] = [" ".join(parts[max_parts - 1 :])]
    return tuple(parts) if len(parts) > 1 else (question.strip(),)


@dataclass(frozen=True)
class QuestionPlan:
    original: str
    standalone: str
    sub_questions: tuple[str, ...]  # searched (and routed) one by one
    error: str | None = None  # why the question is used as asked
    reply: str = ""
    duration_s: float = 0.0
    answer_parts: tuple[str, ...] = ()  # answered one by one, then put together (none: the question at once)

    @property
    def changed(self) -> bool:
        return self.standalone != self.original or self.sub_questions != (self.original,)


SYSTEM_EN = """You prepare a user's latest message for searching a knowledge base.
1. Rewrite it as one standalone question: resolve words like "it", "that one", "the other model" using the
   conversation, keep every name, model and number, and do not answer it. If it already stands alone, keep it.
2. If it asks several different things, split it into separate standalone questions (at most {n}); otherwise
   give the one question.
Reply with JSON only: {{"question": "<standalone question>", "sub_questions": ["<question>", ...]}}
Write in the language of the user's message."""

SYSTEM_ZH = """你负责把用户的最新消息整理成用于检索知识库的问题。
1. 结合对话，把它改写成一个独立完整的问题：把"它""那个""另一款"等指代换成具体的名称，
   保留所有名称、型号和数字，不要回答。如果它本身已经完整，就保持原样。
2. 如果它同时问了几件不同的事，拆成几个独立的问题（最多 {n} 个）；否则只给这一个问题。
只输出 JSON：{{"question": "<独立问题>", "sub_questions": ["<问题>", ...]}}
用用户消息的语言书写。"""


def plan_messages(question: str, history: Sequence[ChatTurn], summary: str, max_parts: int) -> list[ChatTurn]:
    chinese = is_chinese(question)
    system = (SYSTEM_ZH if chinese else SYSTEM_EN).format(n=max_parts)
    lines = []
    if summary:
        lines.append(("对话摘要：" if chinese else "Earlier conversation (summary): ") + summary)
    if history:
        lines.append("对话：" if chinese else "Conversation:")
        lines += [f"{t.role}: {t.content.strip()[:600]}" for t in history]
    lines.append(("最新消息：" if chinese else "Latest message: ") + question)
    return [ChatTurn("system", system), ChatTurn("user", "\n".join(lines))]


class QuestionPlanner:
    def __init__(self, llm: LLM, timeout_s: float, max_parts: int) -> None:
        self._llm = llm
        self._timeout_s = timeout_s
        self._max_parts = max_parts

    def needed(self, question: str, history: Sequence[ChatTurn], summary: str, *, multi_part: bool = True) -> bool:
        """A model call can change something (``skip_reason`` is None)."""
        return self.skip_reason(question, history, summary, multi_part=multi_part) is None

    def skip_reason(
        self, question: str, history: Sequence[ChatTurn], summary: str, *, multi_part: bool = True
    ) -> str | None:
        """Why no model call is made, or None when one can change something: in a conversation, a follow-up
        that points back, or (``multi_part``) a question of several parts. A question of several parts asked
        on its own is cut by its wording (``split``): the model left 23 of 29 such questions of the blind
        answer set's dev split whole, at 7-18 s each. With ``multi_part`` off, one that stands alone is cut
        the same way in a conversation (the setting ``rewrite_multi_part``; docs/workflow.md has the
        measurement)."""
        if not (history or summary):
            return "asked on its own: nothing to resolve, the parts are cut by the wording"
        if not stands_alone(question):
            return None
        if not looks_multi_part(question):
            return "the question stands alone: it names its subject and no word points back"
        if multi_part:
            return None
        return "the question stands alone: its parts are cut by the wording (rewrite_multi_part is off)"

    def split(self, question: str) -> QuestionPlan:
        """The plan of a question asked on its own: its parts (``split_parts``) answered one by one, and searched
        one by one when each stands alone (else the whole question is searched: "which call stops that again?"
        finds nothing by itself)."""
        parts = split_parts(question, self._max_parts)
        if len(parts) == 1:
            return QuestionPlan(question, question, (question,))
        searched = parts if all(stands_alone(p) for p in parts) else (question,)
        return QuestionPlan(question, question, searched, answer_parts=parts)

    def plan(self, question: str, history: Sequence[ChatTurn] = (), summary: str = "") -> QuestionPlan:
        as_asked = QuestionPlan(question, question, (question,))
        messages = plan_messages(question, history, summary, self._max_parts)
        start = time.perf_counter()
        try:
            reply = "".join(
                stream_within(
                    lambda: self._llm.stream_chat(messages, max_tokens=300, temperature=0.0, json=True),
                    self._timeout_s,
                )
            )
        except LLMError as exc:
            return _as_asked(as_asked, str(exc), "", time.perf_counter() - start)
        except Exception as exc:  # the question as asked is always a usable plan
            log.exception("question rewriting failed")
            return _as_asked(as_asked, f"{type(exc).__name__}: {exc}", "", time.perf_counter() - start)
        duration = time.perf_counter() - start
        parsed = _parse(reply, self._max_parts)
        if isinstance(parsed, str):
            return _as_asked(as_asked, parsed, reply, duration)
        standalone, parts = parsed
        if not (history or summary):
            standalone = question  # nothing to resolve: never let the model reword a question that stands alone
        if len(standalone) > 4 * len(question) + 200:
            return _as_asked(as_asked, "the rewritten question was far longer than the question", reply, duration)
        parts = parts or (standalone,)
        return QuestionPlan(question, standalone, parts, None, reply, duration, parts if len(parts) > 1 else ())


def _as_asked(plan: QuestionPlan, error: str, reply: str, duration: float) -> QuestionPlan:
    return QuestionPlan(plan.original, plan.original, (plan.original,), error, reply, duration)


def _parse(reply: str, max_parts: int) -> tuple[str, tuple[str, ...]] | str:
    for data in json_candidates(reply):
        if not isinstance(data, dict):
            continue
        standalone = data.get("question")
        if not isinstance(standalone, str) or not standalone.strip():
            continue
        raw_parts = data.get("sub_questions", [])
        if isinstance(raw_parts, str):
            raw_parts = [raw_parts]
        parts = (
            [p.strip() for p in raw_parts if isinstance(p, str) and p.strip()] if isinstance(raw_parts, list) else []
        )
        parts = list(dict.fromkeys(parts))  # the same part twice is one part
        if len(parts) > max_parts:
            parts = parts[:max_parts]
        return standalone.strip(), tuple(parts)
    return "the model's reply held no usable question"
