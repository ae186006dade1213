"""What to remember from a user's message, by rule: "remember that ..." kept at once, a stated preference or a
fact about the user's setting offered after the answer, and what screening leaves of either.

Rules first: "remember (that) X" / "记住 X" is recognised by its wording at the start of the message (or
", remember that" at its end), and "do you remember ...?" never is. The model is asked only where the rules
cannot tell: a message that says "remember" (记住, keep in mind ...) elsewhere, or as a question ("can you
remember that I'm on Debian 12?"); one short call (``RememberJudge``), whose failure means "not a request".

The offer after an answer is a sentence of the user's own message that says what they use, run, have or prefer
("I use the V2 Pro", "our cluster runs Debian 12", "answer in Chinese", "我用的是 V2 Pro"): a rule costs nothing
and never delays the answer, where a model call would queue behind the answers of others. A message the rules do
not match is not offered.

What is kept is screened like document text (``qa.injection``): a sentence that addresses the assistant ("ignore
the previous instructions ...") is cut out; a memory that is nothing else is refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragapp.core.types import ChatTurn, LeafScore
from ragapp.models.json_reply import json_candidates
from ragapp.models.llm import LLM, short_reply
from ragapp.qa.injection import CUT, for_model, instruction_sentences

_QUESTION_END = re.compile(r"[?？]\s*$|吗\s*[。.]?\s*$")
_REMEMBER_EN = re.compile(
    r"^\s*(?:(?:please|pls|ok|okay|also|and)[,\s]+)*(?:remember|keep in mind|note|don't forget|do not forget|"
    r"memori[sz]e)\b\s*(?:that|this|:|,)?\s*[:,-]?\s*(?P<what>.+?)\s*[.!。！]*\s*$",
    re.IGNORECASE | re.DOTALL,
)
_REMEMBER_EN_AFTER = re.compile(
    r"^\s*(?P<what>.+?)\s*[,;—-]+\s*(?:please\s+)?(?:remember|keep in mind|note)\s+(?:that|this)\s*[.!]*\s*$",
    re.IGNORECASE | re.DOTALL,
)
_REMEMBER_ZH = re.compile(
    r"^\s*(?:请|麻烦)?(?:你)?(?:帮我)?(?:记住|记一下|记下|记着|记好)(?:了)?\s*[：:，,]?\s*(?:一下)?\s*[：:，,]?\s*"
    r"(?P<what>.+?)\s*[。！!.]*\s*$",
    re.DOTALL,
)
_NOT_A_COMMAND = re.compile(r"^\s*(?:remember when|do you remember|记得吗|你记得)", re.IGNORECASE)
# A word that may ask to remember, where the rules above did not match: the model decides.
_MAY_ASK = re.compile(
    r"\b(?:remember|memori[sz]e|keep (?:(?:that|this|it) )?in mind|don't forget|do not forget)\b"
    r"|记住|记下|记一下|记着|别忘了",
    re.IGNORECASE,
)
JUDGE_SYSTEM = (
    "Decide whether the user's message asks the assistant to remember something about the user for later "
    "conversations (a fact about them or their setting, or a preference). Reply with JSON only: "
    '{"remember": true, "what": "<that fact, short, in the user\'s words and language>"} or {"remember": false}.'
)
_JUDGE_TOKENS = 80

# A clause that says what the user uses, runs, has or prefers.
_PROPOSE_EN = re.compile(
    r"\b(?:I|we)(?:'m| am|'re| are)? (?:use|using|have|own|run|running|prefer|work with|working with|on)\b|"
    r"\b(?:my|our) [\w -]{1,40}? (?:is|are|runs?|uses?|has)\b|"
    r"\b(?:always )?(?:answer|reply|respond|write) (?:me )?(?:in|with) (?:english|chinese|french|german|"
    r"spanish|japanese|short|brief|bullet)",
    re.IGNORECASE,
)
_PROPOSE_ZH = re.compile(
    r"(?:我|我们)(?:的|家|公司)?.{0,6}?(?:用的是|在用|使用的?是?|用着|买的是|买了|有一台|是用)|请?用(?:中文|英文)回答"
)
_CLAUSE = re.compile(r"[^,;.!?，；。！？\n]+")
_ASKING = re.compile(
    r"^(?:can|could|may|do|does|did|should|would|will|is|are|am|how|what|which|where|when|why|who|if|whether)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Screened:
    """A memory as it may be kept: ``text`` with the sentences that address the assistant cut out (``cut``)."""

    text: str
    cut: tuple[str, ...] = ()

    @property
    def refused(self) -> bool:
        """Nothing but instructions (or nothing at all) is left."""
        return not self.text.replace(CUT, "").strip(" .,;:!?，。；：！？")


def remember_command(message: str) -> str | None:
    """What "remember that X" asks to keep (X), or None when ``message`` is not such a request."""
    text = message.strip()
    if not text or _QUESTION_END.search(text) or _NOT_A_COMMAND.match(text):
        return None
    for pattern in (_REMEMBER_ZH, _REMEMBER_EN, _REMEMBER_EN_AFTER):
        match = pattern.match(text)
        what = match.group("what").strip() if match else ""
        if what.lower().startswith("to "):  # "remember to answer in Chinese": the preference itself
            what = what[3:4].upper() + what[4:]
        if what:
            return what
    return None


def rules_cannot_tell(message: str) -> bool:
    """``message`` may ask to remember, but the rules did not recognise it: ask the model (``RememberJudge``)."""
    text = message.strip()
    return remember_command(text) is None and not _NOT_A_COMMAND.match(text) and bool(_MAY_ASK.search(text))


@dataclass(frozen=True)
class Judged:
    what: str | None  # what to remember; None: not a request (or the model could not say)
    seconds: float
    error: str | None = None


class RememberJudge:
    """One short model call deciding whether a message the rules could not tell asks to remember something."""

    def __init__(self, llm: LLM, timeout_s: float) -> None:
        self._llm = llm
        self._timeout_s = timeout_s

    def judge(self, message: str) -> Judged:
        messages = [ChatTurn("system", JUDGE_SYSTEM), ChatTurn("user", message)]
        reply = short_reply(self._llm, messages, _JUDGE_TOKENS, self._timeout_s)
        if reply.text is None:
            return Judged(None, reply.seconds, reply.error)
        for value in json_candidates(reply.text):
            if isinstance(value, dict) and isinstance(value.get("remember"), bool):
                what = value.get("what")
                kept = " ".join(what.split()) if value["remember"] and isinstance(what, str) else ""
                return Judged(kept[:500] or None, reply.seconds)
        return Judged(None, reply.seconds, "the model's reply was not the JSON asked for")


_TOKEN = re.compile(r"[a-z0-9]+(?:[.-][a-z0-9]+)*|[\u4e00-\u9fff]+")


def choice_from_memories(choices: Sequence[LeafScore], memories: Sequence[str]) -> tuple[LeafScore, str] | None:
    """When the app would ask "which one do you mean?", the one choice the asker's memories name, and that
    memory; None when they name none or several. A choice is named by the words of its path that the other
    choices' paths lack ("V2", "Pro" against "V1"): "I use the V2 Pro" picks "Lumen V2 Pro › Specs"."""
    words = [set(_TOKEN.findall(c.path.lower())) for c in choices]
    named: dict[str, tuple[LeafScore, str]] = {}
    for choice, own in zip(choices, words, strict=True):
        distinct = own - set.intersection(*(w for w in words if w is not own)) if len(words) > 1 else own
        for memory in memories:
            if distinct & set(_TOKEN.findall(memory.lower())):
                named.setdefault(choice.code, (choice, memory))
    return next(iter(named.values())) if len(named) == 1 else None


def proposal(message: str) -> str | None:
    """A clause of the user's ``message`` worth offering to remember (a preference, a fact about their
    setting), or None. Only the user's own words: never the answer's, never a document's."""
    for clause in _CLAUSE.findall(message):
        clause = clause.strip()
        if _ASKING.match(clause):  # "can I use it outdoors?" asks, it does not tell
            continue
        if 4 <= len(clause) <= 200 and (_PROPOSE_EN.search(clause) or _PROPOSE_ZH.search(clause)):
            return clause
    return None


def screened(text: str) -> Screened:
    """``text`` as it may be kept and later put into a prompt (see the module docstring)."""
    clean = " ".join(for_model(text).split())
    cut = tuple(instruction_sentences(text))
    return Screened(clean, cut)
