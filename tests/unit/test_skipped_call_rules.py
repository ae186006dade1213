"""The rules that skip a model call before the answer, on hand-built trees, scores and passages: what routing
to a leaf would search (``search_of``), the pick among leaves that all search the same, when a question is
translated, and the step that says why a follow-up was not rewritten, in both languages."""

from __future__ import annotations

from ragapp.core.events import StageEvent
from ragapp.core.types import Chunk, RetrievalResult, RetrievedChunk
from ragapp.qa.translate import needs_translation, translation_skip_reason
from ragapp.router.fast import EmbeddingClassifier, FastRule
from ragapp.router.router import search_of
from ragapp.router.tree import IntentNode, IntentTree
from ragapp.ui.step_views import stage_summary

TREE = IntentTree(
    [
        IntentNode("v1", "V1"),
        IntentNode("v1.specs", "Specs", "v1", kind="KB", kbs=("robots",)),
        IntentNode("v2", "V2"),
        IntentNode("v2.specs", "Specs", "v2", kind="KB", kbs=("robots",)),
        IntentNode("shipping", "Shipping", kind="KB", kbs=("robots",)),
        IntentNode("warranty", "Warranty", kind="KB", kbs=("robots",)),
        IntentNode("kettles", "Kettles", kind="KB", kbs=("kettles",)),
        IntentNode("hello", "Greeting", kind="SYSTEM"),
    ]
)


def leaf(code: str) -> IntentNode:
    node = TREE.get(code)
    assert node is not None
    return node


def test_what_routing_to_a_leaf_searches() -> None:
    assert search_of(leaf("shipping"), None, TREE) == search_of(leaf("warranty"), None, TREE)
    assert search_of(leaf("shipping"), None, TREE) != search_of(leaf("kettles"), None, TREE)
    assert search_of(leaf("hello"), None, TREE) is None  # answered directly: no search
    # Twins may make the app ask back which one is meant: never the same as a leaf without twins.
    assert search_of(leaf("v1.specs"), None, TREE) == search_of(leaf("v2.specs"), None, TREE)
    assert search_of(leaf("v1.specs"), None, TREE) != search_of(leaf("shipping"), None, TREE)
    # Within the user's pick of "robots", a kettles leaf searches "robots" too (the user's pick wins).
    robots = frozenset({"robots"})
    assert search_of(leaf("kettles"), robots, TREE) == search_of(leaf("shipping"), robots, TREE)


def pick(ranked: list[tuple[str, float]], margin: float) -> str | None:
    fast = EmbeddingClassifier(None, FastRule(0.88, 0.03))  # type: ignore[arg-type]
    scored = [(leaf(code), score) for code, score in ranked]
    found = fast.pick_among_equals("q", scored, TREE, margin, lambda n: search_of(n, None, TREE))
    return found.scores[0].code if found is not None else None


def test_the_best_leaf_is_taken_when_every_leaf_within_the_margin_searches_the_same() -> None:
    ranked = [("shipping", 0.86), ("warranty", 0.85), ("hello", 0.80), ("kettles", 0.79)]
    assert pick(ranked, 0.05) == "shipping"
    assert pick(ranked, 0.07) is None  # the greeting is a choice now: the model decides
    assert pick([("shipping", 0.86), ("kettles", 0.85)], 0.05) is None
    assert pick([("shipping", 0.86), ("v1.specs", 0.85)], 0.05) is None
    assert pick([("hello", 0.9), ("shipping", 0.7)], 0.05) is None  # a message to the assistant is never guessed


def test_the_step_says_why_no_rewriting_call_was_made_in_both_languages() -> None:
    for rule, english, chinese in [
        ("skipped.stands_alone", "searched as asked, no model call", "未调用模型"),
        ("skipped.parts_by_wording", "cut by its wording", "按字面拆分"),
        ("skipped.strong_search", "already finds a strong passage", "高度相关"),
        ("skipped.own_language", "not translated", "未翻译"),
    ]:
        text = stage_summary(StageEvent("rewrite", "finished", None, {"model call": "none", "rule": rule, "why": "-"}))
        assert english in text and chinese in text


def result(candidates: list[tuple[str, float]], kept: list[tuple[str, float]]) -> RetrievalResult:
    def chunk(i: int, text: str, score: float) -> RetrievedChunk:
        return RetrievedChunk(Chunk(f"c{i}", "d", i, text, "a.md"), 0.1, {}, {}, score)

    every = [chunk(i, t, s) for i, (t, s) in enumerate(candidates)]
    chosen = tuple(c for c in every if (c.chunk.text, c.rerank_score) in kept)
    return RetrievalResult("q", chosen, tuple(every), ())


ENGLISH = ("The lock-byte page is never written by the SQLite core.", 0.2)
CHINESE = ("使用 dpkg-deb 命令可以列出软件包中的文件。", 0.1)


def test_a_question_is_not_translated_when_only_its_own_language_passed_the_gate() -> None:
    question = "Which file lists the shared memory index?"
    weak = result([ENGLISH, CHINESE], [ENGLISH])  # the Chinese candidate did not pass the gate
    assert needs_translation(question, weak, 0.5)  # nothing strong in English, Chinese candidates exist ...
    assert translation_skip_reason(question, weak) is not None  # ... but none of them came near the question
    assert translation_skip_reason(question, result([ENGLISH, CHINESE], [ENGLISH, CHINESE])) is None
    # the gate kept nothing at all: the translation is the one way left to find something
    assert translation_skip_reason(question, result([ENGLISH, CHINESE], [])) is None
    assert (
        translation_skip_reason("共享内存索引在哪个文件里？", weak) is None
    )  # for a Chinese question, English is other
