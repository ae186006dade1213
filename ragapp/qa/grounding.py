"""Check a written answer against its passages, sentence by sentence, and compute its citations.

A sentence is *supported* when one passage (or a few together, for "Alpha 90, Beta 150") holds every one of
its key facts (``facts.key_facts``) and enough of its content words (``min_overlap``; jieba words for Chinese).
A sentence with key facts that no passage holds is *unsupported*. One without key facts is supported by the
passages holding enough of its words (those it cites when they do, else the one holding most), else *neutral*
("Sure.", a restatement): there is nothing to check, so its markers are kept as the model wrote them. Sentences
that only point at the passages ("This is stated in the passage on page 10.") are left out.

Markers are computed, not trusted: a supported sentence cites the passages that support it (the model's own
choice among them when it made one), an unsupported one cites nothing. The answer abstains when its core is
unsupported: its first checked (not neutral) sentence is unsupported and at most half of the checked ones are
supported. Pure functions: no model, no store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragapp.core.facts import PassageFacts, key_facts
from ragapp.core.lang import is_chinese
from ragapp.core.markers import MARKER, cited_numbers
from ragapp.core.types import SentenceSupport
from ragapp.store.tokenize import tokenize

_CLOSE = "\"'”’」』)）*_"
# A sentence ends at . ! ? before a space or the end (not inside 2.5 or run.sh, nor after an initial or an
# abbreviation: "John M. Chambers", "e.g. this"), at 。！？ or a line break; the closing quotes and the [n]
# markers written after the mark belong to it.
_BOUNDARY = re.compile(
    rf"(?:(?<!\b[A-Z])(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)[.!?](?=[\s\[【{_CLOSE}]|$)|[。！？]|\n)"
    rf"[{_CLOSE}]*(?:[ \t]*{MARKER.pattern})*[ \t]*\n*"
)
_MARKERS = re.compile(rf"[ \t]*{MARKER.pattern}")
_TAIL = re.compile(rf"(.*?)([.!?。！？]?[{_CLOSE}]*)(\s*)$", re.DOTALL)
# Sentences that only point at the passages: "This is stated in the passage on page 10.", "这在段落 [1] 中有说明。"
_POINTER = re.compile(
    r"(?:this|it|that|these|which|the answer)(?: information| option| function| behaviou?r| value)?\s+"
    r"(?:is|was|are|were|can be)\s+(?:also\s+)?"
    r"(?:stated|mentioned|found|described|explained|shown|given|noted|specified|indicated|documented|defined|"
    r"covered|listed|discussed|confirmed)\s+"
    r"(?:in|on|at|by)(?:\s+both(?:\s+and)?)?"  # "in both [1] and [2]."
    r"(?:\s*[.!?]?$|\s+(?:the\s+)?(?:context\s+)?(?:passage|page|context|document|section|text)s?\b"  # "in [2]."
    r"(?:(?!\bthat\b)[^.!?]){0,60}(?:,\s*(?:where|which)\b.*)?[.!?]?$)|"  # "… that X is 5" says something
    # "The passage that provides this information is [3]."
    r"the (?:passage|document|context|source)s? (?:that|which) (?:provides?|gives?|contains?|states?|mentions?) "
    r"(?:this|the|that) (?:information|answer|detail)s? (?:is|are)\s*[.!?]?$|"
    r"(?:这|此|以上)[^。！？]{0,12}(?:段落|文档|资料|第\s*\d+\s*页)[^。！？]{0,12}(?:说明|提到|提及|给出|指出)[^。！？]*[。！？]?$",
    re.IGNORECASE,
)
# A code a question may name and an answer's other sentences may swap for a neighbour's: E07, LB-5200, V2.
_CODE = re.compile(r"(?<![\w-])[A-Za-z]{1,4}-?\d{1,5}[A-Za-z]?(?![\w-])")
# What a small model sometimes leaves at the end: an empty quotation ('" "'), a quote mark opened and never
# closed.
_EMPTY_QUOTE_END = re.compile(r"\s*(?:[\"“”]\s*){2,}$")
# How models say the documents do not hold the answer (the prompt asks them to say exactly that).
_REFUSAL = re.compile(
    r"(does not|doesn't|do not|don't) (contain|mention|say|include|cover|provide)|no (information|mention)|"
    r"not (found|mentioned|covered)|cannot find|could not find|"
    r"没有(相关|提到|提及|找到|包含|说明)|未(提及|提到|找到)|无法(找到|回答)"
)


@dataclass(frozen=True)
class SupportRules:
    min_overlap: float = 0.4  # share of a sentence's content words its supporting passage(s) must hold
    # A sentence without key facts is supported by its words alone from this share up: filler such as "This
    # command sets the timezone to the specified timezone" (0.4) must not carry an answer whose facts are not
    # in the passages.
    words_only_overlap: float = 0.6
    max_passages: int = 3  # at most this many passages together may support one sentence


@dataclass(frozen=True)
class _Passage:
    number: int
    facts: PassageFacts
    tokens: frozenset[str]
    sentences: tuple[str, ...]
    chinese: bool = False

    @classmethod
    def of(cls, number: int, text: str, ocr: bool = False) -> _Passage:
        # a line break inside a sentence (PDF text) does not end it: the highlight is the whole sentence
        sentences = tuple(s.strip() for s in prose_sentences(text) if s.strip())
        return cls(number, PassageFacts.of(text, ocr), frozenset(tokenize(text)), sentences, is_chinese(text))


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


def prose_sentences(text: str) -> list[str]:
    """``text`` cut into sentences that join back into it, a single line break not ending one (PDF text breaks
    lines inside sentences): the cut is made on a copy with those breaks as spaces, the same length."""
    flat = re.sub(r"(?<!\n)\n(?!\n)", " ", text)
    pieces, at = [], 0
    for piece in split_sentences(flat):
        pieces.append(text[at : at + len(piece)])
        at += len(piece)
    return pieces


def strip_markers(text: str) -> str:
    return _MARKERS.sub("", text)


def check_support(
    answer: str, passages: Sequence[str], rules: SupportRules | None = None, ocr: Sequence[bool] = ()
) -> list[SentenceSupport]:
    """Each sentence of ``answer`` against ``passages`` (numbered from 1, as in the prompt), its markers fixed.
    Sentences that only point at the passages ("This is stated in the passage [1] on page 10.") are left out:
    they state nothing a reader needs (the citations show where), and the page numbers in them are guesses.
    ``ocr[i]`` marks passage i+1 as read by OCR: its facts also match through OCR's usual confusions."""
    read_by_ocr = [*ocr, *([False] * (len(passages) - len(ocr)))]
    prepared = [_Passage.of(n, text, read_by_ocr[n - 1]) for n, text in enumerate(passages, start=1)]
    pieces = split_sentences(answer)
    kept = [p for p in pieces if not is_pointer(p)] or pieces
    return [_sentence(piece, prepared, rules or SupportRules()) for piece in kept]


def is_pointer(sentence: str) -> bool:
    """A sentence that only says where the answer is ("This is stated in the passage [1].", "According to
    passage [2], ..." is not one: it goes on to say something)."""
    return bool(_POINTER.match(strip_markers(sentence).strip()))


def about_the_question(question: str, support: Sequence[SentenceSupport]) -> list[SentenceSupport]:
    """The answer's sentences without those a model pads it with about a neighbour of what was asked: after the
    first, a sentence that names codes (E12, LB-5200) and none of the question's, when the question names some
    ("What does E07 mean?" answered "E07 means … [1]. E12 means … [2]."): its passage was retrieved for being
    close to the question, and the sentence answers another one."""
    asked = {_code(c) for c in _CODE.findall(question)}
    if not asked:
        return list(support)
    kept = list(support[:1])
    for sentence in support[1:]:
        named = {_code(c) for c in _CODE.findall(strip_markers(sentence.text))}
        if named and not named & asked:
            continue
        kept.append(sentence)
    return kept


def _code(code: str) -> str:
    return code.replace("-", "").casefold()


def without_stray_end(text: str) -> str:
    """``text`` without an empty quotation at its end, or a last quote mark that closes nothing."""
    text = _EMPTY_QUOTE_END.sub("", text).rstrip()
    if text.endswith('"') and text.count('"') % 2 == 1:
        text = text[:-1].rstrip()
    return text


def core_unsupported(support: Sequence[SentenceSupport]) -> bool:
    """True when the answer's core is unsupported: its first checked sentence (supported or not; a neutral one
    says nothing to check) is, and at most half of the checked sentences are supported. A first sentence
    that a passage supports by its words ("the layout is column-major") is the core as much as one with key
    facts: counting only the latter refused answers for a page number in a sentence after them."""
    checked = [s for s in support if s.status != "neutral"]
    if not checked or checked[0].supported:
        return False
    return 2 * sum(s.supported for s in checked) <= len(checked)


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
    """A sentence without key facts is supported by the passages it cites when they hold enough of its words;
    else (citing nothing, or passages that do not hold them) by the one passage holding most (and enough) of
    them, as a sentence with key facts is by the passage that has them: a Chinese answer often has no key fact,
    and one the model cited to a wrong passage stayed neutral, its wrong marker kept. Empty when no passage
    does: the sentence is neutral, kept as written."""
    if len(tokens) < 2:
        return ()
    if valid and _overlap(tokens, [passages[n - 1] for n in valid]) >= rules.words_only_overlap:
        return valid
    holding = [p for p in passages if _overlap(tokens, [p]) >= rules.words_only_overlap]
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
