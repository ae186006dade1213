"""Auto mode: simple questions take the workflow (one retrieval, one answer), comparisons and multi-hop
questions the agent (several searches). A cheap rule, no model call: the choice is shown with its reason.

The rule's kinds of question (``question_kind``) are also what procedural memory keeps its experience by."""

from __future__ import annotations

import re
from typing import Literal

from ragapp.core.lang import said_as
from ragapp.qa.rewrite import looks_multi_part

_COMPARISON = re.compile(
    r"\b(compare|comparison|differ|difference|versus|vs\.?|better|worse|both|either|which (one|of)|"
    r"same|more|less|older|newer|earlier|later|larger|smaller|longer|shorter)\b"
    r"|比较|对比|区别|不同|差别|哪个|哪一个|更|两者|相比|分别",
    re.IGNORECASE,
)
# A bridge: "the woman who portrayed...", "the company that makes...": the answer hangs on finding someone first.
_BRIDGE = re.compile(r"\b(the|a|an)\s+\w+(\s+\w+)?\s+(who|that|which|whose|where)\b", re.IGNORECASE)
# A name: two or more capitalised words ("Ed Wood", "Lumen V2 Pro", "Kiss and Tell" counts as two: fine).
_NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:of|the|de|von|van|[A-Z][\w'-]*))*\s+[A-Z][\w'-]*")


# The kinds of question Auto tells apart, in the order its rule tries them; procedural memory keeps its experience
# per kind (``ragapp.agent.procedural``).
QuestionKind = Literal["comparison", "multi-part", "bridge", "names", "single"]
KINDS: tuple[QuestionKind, ...] = ("comparison", "multi-part", "bridge", "names", "single")


def question_kind(question: str) -> QuestionKind:
    """The kind of ``question`` as Auto's rule sees it (see ``choose_mode``)."""
    if _COMPARISON.search(question):
        return "comparison"
    if looks_multi_part(question):
        return "multi-part"
    if _BRIDGE.search(question):
        return "bridge"
    return "names" if len(_names(question)) >= 2 else "single"


def rule_mode(kind: QuestionKind) -> Literal["workflow", "agent"]:
    """The mode Auto's rule gives a kind of question: the agent for all but single questions."""
    return "workflow" if kind == "single" else "agent"


def choose_mode(question: str) -> tuple[Literal["workflow", "agent"], str]:
    """("agent", why) for comparisons, multi-part questions and questions naming several things (why: in the
    question's language)."""
    kind = question_kind(question)
    if kind == "comparison":
        return "agent", said_as(question, "the question compares things", "问题在比较几样东西")
    if kind == "multi-part":
        return "agent", said_as(question, "the question asks several things", "问题包含几个小问题")
    if kind == "bridge":
        english = "the answer depends on first finding someone or something else"
        return "agent", said_as(question, english, "要先找到另一个人或事物才能回答")
    if kind == "names":
        shown = ", ".join(sorted(_names(question))[:3])
        return "agent", said_as(question, f"the question links several names ({shown})", f"问题涉及多个名称（{shown}）")
    return "workflow", said_as(question, "a single question: one search is enough", "单个问题：检索一次即可")


def _names(question: str) -> set[str]:
    """The names in ``question`` (its first character left out: a sentence's first word is capitalised anyway)."""
    return {m.group(0).strip() for m in _NAME.finditer(question[1:])}
