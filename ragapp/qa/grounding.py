"""Check a written answer against its passages, sentence by sentence, and compute its citations.

A sentence is *supported* when one passage (or a few together, for "Alpha 90, Beta 150") holds every one of
its key facts (``facts.key_facts``) and enough of its content words (``min_overlap``; jieba words for Chinese).
A sentence with key facts that no passage holds is *unsupported*; one without key facts ("Sure.", a
restatement) is *neutral*: there is nothing to check, so its markers are kept as the model wrote them.

Markers are computed, not trusted: a supported sentence cites the passages that support it (the model's own
choice among them when it made one), an unsupported one cites nothing. The answer abstains when its core is
unsupported: its first sentence with key facts is unsupported and at most half of those sentences are
supported. Pure functions: no model, no store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragapp.core.lang import is_chinese
from ragapp.core.types import SentenceSupport
from ragapp.qa.citations import MARKER, cited_numbers
from ragapp.qa.facts import PassageFacts, key_facts
from ragapp.store.tokenize import tokenize

_CLOSE = "\"'”’」』)）*_"
# A sentence ends at . ! ? before a space or the end (not inside 2.5 or run.sh), at 。！？ or a line break; the
# closing quotes and the [n] markers written after the mark belong to it.
_BOUNDARY = re.compile(rf"(?:[.!?](?=[\s\[【{_CLOSE}]|$)|[。！？]|\n)[{_CLOSE}]*(?:[ \t]*{MARKER.pattern})*[ \t]*\n*")
_MARKERS = re.compile(rf"[ \t]*{MARKER.pattern}")
_TAIL = re.compile(rf"(.*?)([.!?。！？]?[{_CLOSE}]*)(\s*)$", re.DOTALL)
# How models say the documents do not hold the answer (the prompt asks them to say exactly that).
_REFUSAL = re.compile(
    r"(does not|doesn't|do not|don't) (contain|mention|say|include|cover|provide)|no (information|mention)|"
    r"not (found|mentioned|covered)|cannot find|could not find|"
    r"没有(相关|提到|提及|找到|包含|说明)|未(提及|提到|找到)|无法(找到|回答)"
)


@dataclass(frozen=True)
class SupportRules:
    min_overlap: float = 0.4  # share of a sentence's content words its supporting passage(s) must hold
    max_passages: int = 3  # at most this many passages together may support one sentence


@dataclass(frozen=True)
class _Passage:
    number: int
    facts: PassageFacts
    tokens: frozenset[str]
    sentences: tuple[str, ...]
    chinese: bool = False

    @classmethod
    def of(cls, number: int, text: str) -> _Passage:
        sentences = tuple(s.strip() for s in split_sentences(text) if s.strip())
        return cls(number, PassageFacts.of(text), frozenset(tokenize(text)), sentences, is_chinese(text))


def split_sentences(text: str) -> list[str]:
    """``text`` cut into sentences that join back into it exactly, each keeping the markers written after it."""
    pieces: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if match.end() > start:
            pieces.append(text[start : match.end()])
            start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    merged: list[str] = []
    for piece in pieces:  # a piece with nothing to say (a blank line, a lone marker) joins the one before
        if merged and not _MARKERS.sub("", piece).strip(" \t\n*-_#>"):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def strip_markers(text: str) -> str:
    return _MARKERS.sub("", text)


def check_support(answer: str, passages: Sequence[str], rules: SupportRules | None = None) -> list[SentenceSupport]:
    """Each sentence of ``answer`` against ``passages`` (numbered from 1, as in the prompt), its markers fixed."""
    prepared = [_Passage.of(n, text) for n, text in enumerate(passages, start=1)]
    return [_sentence(piece, prepared, rules or SupportRules()) for piece in split_sentences(answer)]


def core_unsupported(support: Sequence[SentenceSupport]) -> bool:
    """True when the answer's core is unsupported: its first sentence with key facts is, and at most half of
    those sentences are supported."""
    factual = [s for s in support if s.facts]
    if not factual or factual[0].supported:
        return False
    return 2 * sum(s.supported for s in factual) <= len(factual)


def model_refused(support: Sequence[SentenceSupport]) -> bool:
    """The model itself said the documents do not hold the answer (and stated no supported fact)."""
    if any(s.supported and s.facts for s in support):
        return False
    return any(_REFUSAL.search(strip_markers(s.text).lower()) for s in support)


def best_sentence(passage: str, query: str) -> str:
    """The sentence of ``passage`` that shares most words with ``query`` (the passage's first one on a tie)."""
    prepared = _Passage.of(1, passage)
    return _evidence(prepared, (), frozenset(tokenize(query)))


# -- one sentence ----------------------------------------------------------------------------------


def _sentence(piece: str, passages: list[_Passage], rules: SupportRules) -> SentenceSupport:
    body = strip_markers(piece)
    valid = tuple(n for n in cited_numbers(piece) if 1 <= n <= len(passages))
    cited = tuple(cited_numbers(piece))
    facts = key_facts(body)
    tokens = frozenset(tokenize(body))
    if not facts:
        chosen = _no_facts(tokens, valid, passages, rules)
        status = "supported" if chosen else "neutral"
        numbers = chosen or valid
        overlap = _overlap(tokens, [passages[n - 1] for n in numbers]) if numbers else _best_overlap(tokens, passages)
        return _result(piece, status, cited, numbers, facts, (), overlap, passages, tokens, chinese=is_chinese(body))
    cover = _cover(facts, tokens, valid, passages, rules, is_chinese(body))
    if cover is not None:
        overlap = _overlap(tokens, [passages[n - 1] for n in cover])
        return _result(piece, "supported", cited, cover, facts, (), overlap, passages, tokens, is_chinese(body))
    missing = tuple(f for f in facts if not any(p.facts.has(f) for p in passages))
    overlap = _best_overlap(tokens, passages)
    return _result(piece, "unsupported", cited, (), facts, missing, overlap, passages, tokens, is_chinese(body))


def _no_facts(
    tokens: frozenset[str], valid: tuple[int, ...], passages: list[_Passage], rules: SupportRules
) -> tuple[int, ...]:
    """A sentence without key facts that cites nothing: the one passage holding most (and enough) of its words;
    empty when none does, or when it cites passages itself (nothing to check them on: they are kept)."""
    if valid or len(tokens) < 2:
        return ()
    holding = [p for p in passages if _overlap(tokens, [p]) >= rules.min_overlap]
    best = max(holding, key=lambda p: _overlap(tokens, [p]), default=None)
    return () if best is None else (best.number,)


def _cover(
    facts: tuple[str, ...],
    tokens: frozenset[str],
    valid: tuple[int, ...],
    passages: list[_Passage],
    rules: SupportRules,
    chinese: bool = False,
) -> tuple[int, ...] | None:
    """The passages that support the sentence: every one holding all its facts and enough of its words (those
    the model cited, if any; else the best one), or else the fewest passages that together do. A sentence in
    another language than its passages (a Chinese answer over an English manual) shares no words with them:
    its key facts alone decide."""

    def enough(chosen: list[_Passage]) -> bool:
        return all(p.chinese != chinese for p in chosen) or _overlap(tokens, chosen) >= rules.min_overlap

    whole = [p for p in passages if all(p.facts.has(f) for f in facts) and enough([p])]
    if whole:
        mine = tuple(p.number for p in whole if p.number in valid)
        return mine or (max(whole, key=lambda p: (_overlap(tokens, [p]), -p.number)).number,)
    chosen: list[_Passage] = []
    left = set(facts)
    while left and len(chosen) < rules.max_passages:
        best = max(
            (p for p in passages if p not in chosen),
            key=lambda p: (len(left & {f for f in facts if p.facts.has(f)}), p.number in valid, -p.number),
            default=None,
        )
        if best is None or not any(best.facts.has(f) for f in left):
            return None
        chosen.append(best)
        left -= {f for f in facts if best.facts.has(f)}
    if left or not enough(chosen):
        return None
    return tuple(sorted(p.number for p in chosen))


def _result(
    piece: str,
    status: str,
    cited: tuple[int, ...],
    numbers: tuple[int, ...],
    facts: tuple[str, ...],
    missing: tuple[str, ...],
    overlap: float,
    passages: list[_Passage],
    tokens: frozenset[str],
    chinese: bool,
) -> SentenceSupport:
    evidence = tuple(_evidence(passages[n - 1], facts, tokens) for n in numbers) if status == "supported" else ()
    support = SentenceSupport(
        text=piece if status == "neutral" else _with_markers(piece, numbers, chinese),  # neutral: as written
        status="supported" if status == "supported" else "unsupported" if status == "unsupported" else "neutral",
        cited=cited,
        passages=numbers if status == "supported" else (),
        facts=facts,
        missing=missing,
        overlap=round(overlap, 3),
        evidence=evidence,
    )
    return support if status != "neutral" else replace(support, passages=())


def _overlap(tokens: frozenset[str], passages: Sequence[_Passage]) -> float:
    if not tokens:
        return 0.0
    held = frozenset().union(*(p.tokens for p in passages)) if passages else frozenset()
    return len(tokens & held) / len(tokens)


def _best_overlap(tokens: frozenset[str], passages: list[_Passage]) -> float:
    return max((_overlap(tokens, [p]) for p in passages), default=0.0)


def _evidence(passage: _Passage, facts: tuple[str, ...], tokens: frozenset[str]) -> str:
    def score(sentence: str) -> tuple[int, int]:
        found = PassageFacts.of(sentence)
        return sum(found.has(f) for f in facts), len(tokens & frozenset(tokenize(sentence)))

    return max(passage.sentences, key=score, default="")


def _with_markers(piece: str, numbers: tuple[int, ...], chinese: bool) -> str:
    """``piece`` citing ``numbers``: unchanged when it already cites exactly those, else its markers replaced by
    new ones before its end mark."""
    if set(cited_numbers(piece)) == set(numbers):
        return piece
    stripped = strip_markers(piece)
    if not numbers:
        return stripped
    match = _TAIL.match(stripped)
    assert match is not None  # the pattern matches any string
    body, end, space = match.groups()
    separator = "" if chinese else " "
    return f"{body.rstrip()}{separator}{''.join(f'[{n}]' for n in numbers)}{end}{space}"
