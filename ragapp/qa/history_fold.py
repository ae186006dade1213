"""Long conversations: the most recent turns stay verbatim, older ones are folded into a short summary.

The summary is made by the model once, when turns leave the recent window, and handed back to the caller
(``MemoryEvent``) to keep with its session; the next question carries it. When the model cannot summarise,
the older questions themselves, shortened, stand in for the summary: memory degrades, the answer never fails.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from ragapp.core.errors import LLMError
from ragapp.core.lang import is_chinese
from ragapp.core.types import ChatTurn
from ragapp.models.llm import LLM, stream_within

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Folded:
    summary: str
    folded: int  # how many of the oldest turns the summary now covers
    error: str | None = None


def turns_to_fold(history: Sequence[ChatTurn], recent_turns: int) -> int:
    """How many of the oldest messages leave the verbatim window (a turn is a question and its answer)."""
    keep = 2 * recent_turns
    return max(0, len(history) - keep)


def summary_messages(previous: str, older: Sequence[ChatTurn], max_chars: int) -> list[ChatTurn]:
    chinese = any(is_chinese(t.content) for t in older if t.role == "user")
    transcript = "\n".join(f"{t.role}: {t.content}" for t in older)
    if chinese:
        system = (
            f"把对话压缩成不超过 {max_chars} 个字的摘要，保留用户关心的产品、型号、数字和结论，用第三人称。只输出摘要。"
        )
        user = (f"已有摘要：{previous}\n\n" if previous else "") + f"新的对话：\n{transcript}"
    else:
        system = (
            f"Summarise the conversation in at most {max_chars} characters. Keep the products, models, numbers "
            "and conclusions the user cares about; third person. Output only the summary."
        )
        user = (f"Summary so far: {previous}\n\n" if previous else "") + f"More conversation:\n{transcript}"
    return [ChatTurn("system", system), ChatTurn("user", user)]


def fold(
    llm: LLM, previous: str, older: Sequence[ChatTurn], max_chars: int, timeout_s: float, max_tokens: int
) -> Folded:
    """Fold ``older`` turns into the summary ``previous``."""
    if not older:
        return Folded(previous, 0)
    messages = summary_messages(previous, older, max_chars)
    try:
        text = "".join(
            stream_within(lambda: llm.stream_chat(messages, max_tokens=max_tokens, temperature=0.0), timeout_s)
        )
        error = None if text.strip() else "the model returned an empty summary"
    except LLMError as exc:
        text, error = "", str(exc)
    except Exception as exc:  # memory is a convenience: never let it cost the answer
        log.exception("summarising the conversation failed")
        text, error = "", f"{type(exc).__name__}: {exc}"
    if error is not None:
        text = _questions_only(previous, older)
    return Folded(text.strip()[:max_chars], len(older), error)


def _questions_only(previous: str, older: Sequence[ChatTurn]) -> str:
    asked = " / ".join(t.content.strip()[:80] for t in older if t.role == "user")
    return " ".join(p for p in (previous, f"Earlier questions: {asked}" if asked else "") if p)
