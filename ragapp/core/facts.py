"""Key facts of a sentence: the parts a small model gets wrong and a reader acts on.

Numbers (units aside: "120 分钟" and "120 minutes" both carry "120"), version strings, codes such as E07 or V2,
acronyms (GPL, CUDA), identifiers (``snake_case``, ``CamelCase``, ``--flag``, ``-z``), paths and file names,
URLs, quoted strings and code spans. A sentence is only as true as its key facts: each must occur in a passage
that supports it.

Text is compared normalised: NFKC (full-width ``１２０`` reads as ``120``), lower case, thousands separators
dropped, whitespace collapsed.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_NUMBER = re.compile(r"(?<![a-uw-z0-9_.])(\d{1,3}(?:,\d{3})+(?![\d,])|\d+(?:\.\d+)*)")
_CODE = re.compile(r"(?<![a-z0-9_])([a-z]+\d+[a-z0-9]*)(?![a-z0-9_]|\.\d)")  # e07, v2, x1000 (not v2.5)
_SNAKE = re.compile(r"(?<![\w-])([a-z0-9]+(?:_+[a-z0-9]+)+)(?![\w-])")
_FLAG = re.compile(r"(?<![\w-])(--[a-z0-9][\w-]*|-[a-z][\w-]*)")  # --max-tokens, -thread, -z
_CAMEL = re.compile(r"(?<![\w])([A-Z]?[a-z]+(?:[A-Z][a-z0-9]+)+)(?![\w])")  # on the original case
# Acronyms and all-caps names (GPL, CUDA, FASTA; GPUs counts as GPU), on the original case: the names a small
# model adds from what it already knows ("distributed under the GPL") when the passages never say them.
_ACRONYM = re.compile(r"(?<![\w-])([A-Z]{2,10})s?(?![\w-])")
_PATH = re.compile(r"(?<![\w/])((?:\.{1,2}/|/)?[\w.-]+(?:/[\w.-]+)+|\.{1,2}/[\w.-]+)")
_FILE = re.compile(r"(?<![\w.])([\w-]+\.(?:py|md|txt|json|ya?ml|toml|ini|cfg|sh|pdf|docx?|html?|csv|js|ts))(?!\w)")
_URL = re.compile(r"(https?://[^\s<>\"'）)\]】]+)")
_QUOTED = re.compile(
    r"`([^`\n]{1,80})`|\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|「([^」\n]{1,80})」|『([^』\n]{1,80})』|《([^》\n]{1,80})》"
)
_LIST_MARK = re.compile(r"^\s*(?:\d{1,2}[.)、]|[-*•])\s+")


def normalise(text: str) -> str:
    """The form facts are compared in: NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


# OCR's usual confusions, folded to one form: l/1/I/i/|, O/0, rn/m, and an underscore read as a space or lost.
_OCR_SAME = str.maketrans({"1": "l", "i": "l", "|": "l", "0": "o", "_": " "})


def ocr_fold(text: str) -> str:
    """``text`` (normalised) with the characters OCR confuses made one, so a fact quoted right ("asn1_node")
    is found in a passage read as "asnl node"."""
    return " ".join(text.translate(_OCR_SAME).replace("rn", "m").split())


def _number(raw: str) -> str:
    return raw.replace(",", "")


@dataclass(frozen=True)
class PassageFacts:
    """A passage prepared for fact lookups: its normalised text and the numbers in it; for a passage read by
    OCR, its text with OCR's confusions folded too (``ocr_fold``)."""

    text: str
    numbers: frozenset[str]
    folded: str = ""

    @classmethod
    def of(cls, text: str, ocr: bool = False) -> PassageFacts:
        norm = normalise(text)
        numbers: set[str] = set()
        for raw in _NUMBER.findall(norm):
            number = _number(raw)
            parts = number.split(".")
            # "2.5.0" also answers for "2.5"; "90.0" for "90"
            numbers.update(".".join(parts[:n]) for n in range(1, len(parts) + 1))
            if len(parts) == 2 and set(parts[1]) == {"0"}:
                numbers.add(parts[0])
        return cls(norm, frozenset(numbers), ocr_fold(norm) if ocr else "")

    def has(self, fact: str) -> bool:
        if _NUMBER.fullmatch(fact):
            return fact in self.numbers or (bool(self.folded) and ocr_fold(fact) in self.folded)
        return fact in self.text or (bool(self.folded) and ocr_fold(fact) in self.folded)


def key_facts(sentence: str) -> tuple[str, ...]:
    """The key facts of ``sentence`` (markers already removed), normalised, in order, each once."""
    text = _LIST_MARK.sub("", sentence)
    found: dict[str, None] = {}
    for groups in _QUOTED.findall(text):
        quoted = next(g for g in groups if g)
        found.setdefault(normalise(quoted), None)
    original = unicodedata.normalize("NFKC", text)
    for match in _CAMEL.findall(original):
        found.setdefault(match.lower(), None)
    for match in _ACRONYM.findall(original):
        if match != "OK":  # a word, not a name
            found.setdefault(match.lower(), None)
    norm = normalise(text)
    for url in _URL.findall(norm):
        found.setdefault(url.rstrip(".,;:!?"), None)
    norm = _URL.sub(" ", norm)
    for pattern in (_FLAG, _SNAKE, _FILE, _CODE):
        for match in pattern.findall(norm):
            found.setdefault(match, None)
    for path in _PATH.findall(norm):
        if path.startswith(("/", "./", "../")) or "." in path.rsplit("/", 1)[-1] or path.count("/") >= 2:
            found.setdefault(path.rstrip("."), None)
    for raw in _NUMBER.findall(_CODE.sub(" ", norm)):
        found.setdefault(_number(raw), None)
    return tuple(f for f in found if f.strip())
