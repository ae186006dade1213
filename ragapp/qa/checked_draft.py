"""The checked answer's beginning while the model still writes: each finished sentence of the draft checked as the
answer check will check it (``answer_check.checked_answer``), so that a stream that sends only these never has
to take a word back.

The check decides most of an answer sentence by sentence: a sentence's support, its computed markers, whether it
only points at the passages, whether it names another code than the question's (``grounding``). A few decisions
read the whole reply, and the draft waits for them: nothing is given until the first sentence the check can
judge is supported (else the answer may be refused as a whole: ``core_unsupported``) and the reply holds a word
the question does not (else it may be an echo, replaced by a quote); an address in the reply (which may be
removed: ``screen_reply``) or a marker the renumbering would rewrite stops it for good, and the rest comes with
the answer. A sentence is given once the next one has begun: until then its end, and the markers after it, may
still grow. The numbers in its markers are those ``citations.renumbered`` gives the answer: the order of first
citation, which a longer draft never changes for the markers already written. Pure: no model, no store.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragapp.core.lang import is_chinese
from ragapp.core.markers import cited_numbers, with_numbers
from ragapp.qa.answer_check import raw_words
from ragapp.qa.grounding import (
    SupportRules,
    about_the_question,
    check_support,
    is_pointer,
    split_sentences,
    strip_markers,
)
from ragapp.store.tokenize import tokenize

_OPEN_MARKER = re.compile(r"[\[【][\d\s,，、]{0,15}$")  # a marker still being written at the end


class CheckedDraft:
    """Feed it the model's reply piece by piece (``add``); ``passages``: the passages as the model read them,
    numbered from 1; ``ocr``: which were read by OCR; ``check``: the answer check is on (off, the reply is the
    answer, as written)."""

    def __init__(
        self,
        question: str,
        passages: Sequence[str],
        rules: SupportRules,
        ocr: Sequence[bool] = (),
        check: bool = True,
    ) -> None:
        self._question = question
        self._passages = list(passages)
        self._rules = rules
        self._ocr = list(ocr)
        self._check = check
        self._draft = ""
        self._given = ""
        self._stopped = False
        self._asked_words = set(tokenize(question))
        self._asked_raw = raw_words(question)

    @property
    def given(self) -> str:
        """What ``add`` has given so far."""
        return self._given

    def add(self, piece: str) -> str | None:
        """Take the next piece of the reply; the checked answer's beginning when it grew (else None)."""
        self._draft += piece
        if self._stopped:
            return None
        text = self._checked()
        if text is None or len(text) <= len(self._given):
            return None
        if not text.startswith(self._given):  # cannot happen (the rules above); never take a word back
            self._stopped = True
            return None
        self._given = text
        return text

    def _checked(self) -> str | None:
        draft = _OPEN_MARKER.sub("", self._draft.lstrip())
        pieces = split_sentences(draft)
        if len(pieces) < 2:
            return None
        finished = "".join(pieces[:-1])  # the last piece may still grow
        if "://" in finished:
            self._stopped = True  # an address may be removed from the whole reply: the rest waits
            return None
        if not self._check:
            text = finished
        else:
            if all(is_pointer(p) for p in pieces[:-1]):
                return None  # pointers are left out only when the reply says something else
            support = about_the_question(
                self._question, check_support(finished, self._passages, self._rules, self._ocr)
            )
            judged = [s for s in support if s.status != "neutral"]
            if not judged:
                return None  # nothing judged yet: the reply may still be refused as a whole
            if not judged[0].supported:
                self._stopped = True  # the first judged sentence unsupported: maybe a refusal
                return None
            if self._may_echo(finished):
                return None
            text = "".join(s.text for s in support)
        return self._numbered(text.strip())

    def _may_echo(self, text: str) -> bool:
        """Every word of ``text`` is the question's (``answer_check.echoes`` may still call the reply an echo)."""
        plain = strip_markers(text)
        if not set(tokenize(plain)) <= self._asked_words:
            return False
        return is_chinese(plain) or raw_words(plain) <= self._asked_raw

    def _numbered(self, text: str) -> str | None:
        """``text`` with its markers numbered as the answer's will be; None (and nothing more given) when the
        renumbering would rewrite a marker in a way that depends on the rest of the reply."""
        order = [n for n in cited_numbers(text) if 1 <= n <= len(self._passages)]
        mapping = {old: new for new, old in enumerate(order, start=1)}
        if with_numbers(text, {n: n for n in mapping}) != text:  # a marker "[2, 1]" is rewritten sorted, or not
            self._stopped = True
            return None
        return with_numbers(text, mapping) or None
