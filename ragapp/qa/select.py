"""Answer by selection: before it answers, the model copies the passage sentence that states the answer, or
writes "none", held by a grammar to the sentences of the passages in its prompt; the answer is then written
from that sentence alone (``writer``), or is the sentence itself where the question asks for a bare fact.

Copying, not numbering: asked for the number of the sentence that answers, the packaged 1.5B model chose near
chance (its first token's probabilities within a few points of each other over four numbered sentences, the
wrong one first); asked to copy the sentence, it began the right one with probability 0.94-0.98 and gave
"None" 0.31 where no sentence answered. Only the first tokens are needed: the reply is cut once they fit a
single sentence (2-4 tokens). The selection prompt is the answer prompt with one more line, so the model
reads the passages once for the selection and the answer's instructions stay read (``answer_slot``).

The probabilities of the pick come from the pieces' scores (``ScoredPiece``, the local model): renormalised
over the tokens the grammar allows at each step, approximated by those of the step's likeliest tokens that
continue a sentence (or "none"). Without scores (servers, the scripted test model) the reply is matched to a
sentence by its text and the probabilities are unknown.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragapp.core.lang import is_chinese
from ragapp.core.types import ChatTurn, RetrievedChunk
from ragapp.qa.answer_fit import asked_kind
from ragapp.qa.grounding import prose_sentences
from ragapp.store.tokenize import tokenize

# The selection's own instructions, with worked examples: they stay read in the selection's model context
# (``selection_slot``), so their length costs nothing per question. Without the examples the model answered in
# its own words ("6", "Since ...") where it was asked to copy, and the grammar then forced "none".
SELECT_EN = """You find the sentence of the user's documents that answers a question. The user gives numbered \
context passages and a question. Reply with one sentence copied word for word from the passages: the sentence \
that states the answer. If no sentence states the answer, reply: none. Never answer in your own words.

Example:
Context:
[1] (manual.pdf · p. 2)
The server listens on port 8080 by default. Logs are kept for 30 days.

[2] (manual.pdf · p. 5)
Set LOG_LEVEL to debug for more output. The debug log names every request.

Question: How long does the server keep its logs?
Reply: Logs are kept for 30 days.

Question: Which database does the server store its users in?
Reply: none"""
SELECT_ZH = """你的任务是在用户的文档中找出回答问题的那一句话。用户给出编号的参考资料和一个问题。请逐字抄写参考资料中\
给出答案的那一句话，不要用自己的话回答；如果没有任何一句给出答案，就回复：none。

示例：
参考资料：
[1] (manual.pdf · p. 2)
The server listens on port 8080 by default. Logs are kept for 30 days.

[2] (指南.html · 3.1 日志)
将 LOG_LEVEL 设为 debug 可以输出更多信息。调试日志会记录每一个请求。

问题：服务器的日志保留多久？
回复：Logs are kept for 30 days.

问题：怎样让日志输出更多信息？
回复：将 LOG_LEVEL 设为 debug 可以输出更多信息。

问题：服务器把用户存在哪个数据库里？
回复：none"""
NONE = ("none", "None")
MIN_CHARS = 4  # shorter pieces ("1.", "a)") are no sentence to pick
MAX_TOKENS = 12  # the reply is cut once it fits one sentence; this bounds a grammar-held reply that never does
FREE_TOKENS = 120  # a backend that ignores the grammar writes the sentence out whole
_GAP = re.compile(r"^\s*…\s*|\s*…\s*$")  # ``condense`` marks left-out sentences with "…"


@dataclass(frozen=True)
class Candidate:
    """A sentence of a passage in the prompt: its passage's number there (from 1) and its text as the passage
    has it."""

    passage: int
    text: str


@dataclass(frozen=True)
class Pick:
    """What the model picked: a sentence, or none (``candidate`` None and ``none`` True); ``failed`` when the
    reply fits neither. ``probability``: of the sentence (or of "none") as the model's first choice; ``margin``:
    the narrowest lead the chosen token had over the next allowed one along the way; ``none_probability``: of
    "none" at the first step. All None without scores."""

    candidate: Candidate | None
    none: bool = False
    probability: float | None = None
    margin: float | None = None
    none_probability: float | None = None
    reply: str = ""

    @property
    def failed(self) -> bool:
        return self.candidate is None and not self.none


def candidates(passages: Sequence[RetrievedChunk]) -> list[Candidate]:
    """The sentences of ``passages`` (as the prompt shows them, numbered from 1), each text once, in order."""
    seen: set[str] = set()
    out: list[Candidate] = []
    for number, passage in enumerate(passages, start=1):
        for piece in prose_sentences(passage.chunk.text):
            text = _GAP.sub("", piece).strip()
            if len(text) < MIN_CHARS or text in seen:
                continue
            seen.add(text)
            out.append(Candidate(number, text))
    return out


def selection_messages(messages: Sequence[ChatTurn], question: str) -> list[ChatTurn]:
    """The answer prompt ``messages`` (its passages, conversation and question) under the selection's
    instructions instead of the answer's."""
    _system, *rest = messages
    return [ChatTurn("system", SELECT_ZH if is_chinese(question) else SELECT_EN), *rest]


def selection_slot(question: str) -> str:
    """The model context selections in this question's language use (their instructions stay read there)."""
    return "select-zh" if is_chinese(question) else "select-en"


def grammar(found: Sequence[Candidate]) -> str:
    """GBNF: the reply is one of the sentences, word for word, or "none"."""
    texts = [c.text for c in found] + list(NONE)
    return "root ::= " + " | ".join(json.dumps(t, ensure_ascii=False) for t in texts)


def settled(reply: str, found: Sequence[Candidate]) -> bool:
    """The reply so far fits one sentence only (or is "none"): the rest of it would only copy that sentence."""
    if reply in NONE:
        return True
    return bool(reply) and sum(c.text.startswith(reply) for c in found) <= 1


def enough(reply: str, found: Sequence[Candidate], pieces: int) -> bool:
    """Read no further: the reply is ``settled``, or has run ``MAX_TOKENS`` pieces within the sentences (two
    sentences that begin alike, held by the grammar: the first that fits is taken)."""
    if settled(reply, found):
        return True
    return pieces >= MAX_TOKENS and any(c.text.startswith(reply) for c in found)


def read_pick(pieces: Iterable[str], found: Sequence[Candidate]) -> Pick:
    """The pick from the reply's ``pieces`` (read only until it is ``settled``), with its probabilities when the
    pieces carry scores (``ScoredPiece.top``)."""
    reply = ""
    probability: float | None = 1.0
    margin: float | None = None
    none_probability: float | None = None
    texts = [c.text for c in found]
    for piece in pieces:
        top = getattr(piece, "top", ())
        if top and probability is not None:
            allowed = _allowed(reply, top, texts)
            share = allowed.get(str(piece))
            if share is None:
                probability = None  # the piece is no single top token: its probability is unknown
            else:
                probability *= share
                lead = share - max((p for t, p in allowed.items() if t != piece), default=0.0)
                margin = lead if margin is None else min(margin, lead)
            if not reply:
                none_probability = sum(p for t, p in allowed.items() if any(w.startswith(t) for w in NONE))
        elif not top:
            probability = None
        reply += piece
        if settled(reply, found):
            break
    return _pick(reply, found, probability, margin, none_probability)


def _allowed(reply: str, top: Sequence[tuple[str, float]], texts: Sequence[str]) -> dict[str, float]:
    """The step's likeliest tokens that continue a sentence (or "none") after ``reply``, their probabilities
    renormalised over them."""
    kept = {t: math.exp(lp) for t, lp in top if t and any(x.startswith(reply + t) for x in (*texts, *NONE))}
    total = sum(kept.values())
    return {t: p / total for t, p in kept.items()} if total > 0 else {}


def _pick(
    reply: str, found: Sequence[Candidate], probability: float | None, margin: float | None, none_p: float | None
) -> Pick:
    said = reply.strip()
    if said.lower().strip(".。") == "none" or said in NONE:
        return Pick(None, True, probability, margin, none_p, reply)
    fitting = [c for c in found if c.text.startswith(said)] if said else []
    if fitting:
        return Pick(fitting[0], False, probability, margin, none_p, reply)
    matched = _by_words(said, found)  # a backend that ignored the grammar: the sentence it wrote out
    return Pick(matched, False, None, None, None, reply)


def _by_words(reply: str, found: Sequence[Candidate]) -> Candidate | None:
    """The sentence a free reply copied: one whose text the reply holds (or the reverse), else the one sharing
    most of its words when that is most of them."""
    plain = " ".join(reply.split())
    for c in found:
        text = " ".join(c.text.split())
        if text in plain or (len(plain) >= MIN_CHARS and plain in text):
            return c
    words = set(tokenize(reply))
    if not words:
        return None
    best = max(found, key=lambda c: len(words & set(tokenize(c.text))), default=None)
    if best is None or len(words & set(tokenize(best.text))) < 0.6 * len(words):
        return None
    return best


def window(found: Sequence[Candidate], picked: Candidate) -> str:
    """The picked sentence with the sentences beside it in its passage (a pronoun in it names what the one
    before says; the value may follow in the next): what the answer is written from."""
    same = [c for c in found if c.passage == picked.passage]
    at = same.index(picked)
    return " ".join(c.text for c in same[max(0, at - 1) : at + 2])


_FACT_EN = re.compile(
    r"^\s*(which|what)\s+(\w+\s+){0,3}?(command|option|flag|function|file|variable|field|keyword|type|value|"
    r"name|macro|constant|setting|directory|package|program|tool|argument|parameter|format|code|symbol|operator|"
    r"byte|offset|header|character|string|number|port|key|script|method|mode|environment variable)s?\b",
    re.IGNORECASE,
)
_FACT_ZH = re.compile(
    r"(哪个|哪一个|哪些|什么)(命令|选项|参数|函数|文件|变量|字段|关键字|类型|值|名字|名称|宏|常量|目录|软件包|程序|工具|脚本|端口|字符|格式)|叫什么"
)


def asks_bare_fact(question: str) -> bool:
    """The question asks for one value or name (how many, which version, which option...): the picked sentence
    itself answers it, in the documents' own words."""
    if asked_kind(question) in ("number", "version", "year"):
        return True
    return bool(_FACT_ZH.search(question) if is_chinese(question) else _FACT_EN.search(question))
