"""A saved test case: a question with what should answer it (a module of its own: the store keeps it, the
scoring and the answer check read it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TestCase:
    """A question saved with the documents (file names) that should answer it. ``kbs`` None means all.
    ``must_contain``: words the right answer holds ("" : citing an expected document makes it right);
    ``unanswerable``: the documents do not hold the answer, so a refusal is the right outcome."""

    __test__ = False  # not a pytest test class

    id: int
    owner: str
    question: str
    expected: tuple[str, ...]
    kbs: tuple[str, ...] | None
    created_at: str
    trace_id: str | None = None
    must_contain: str = ""
    unanswerable: bool = False
