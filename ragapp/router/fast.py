"""Routing without a model call when the tree decides clearly.

The question is compared with every leaf by the embedder (milliseconds): a leaf's score is its best cosine
over its path with its description and over each of its examples, all embedded once per tree version. When
the best leaf stands ``margin`` above every leaf that is not its twin (a same-named leaf under another
parent: "Lumen V1 › Battery" and "Lumen V2 › Battery" are told apart by the decision rules, not here), the
classification is that leaf (and its close twins), each scored with its cosine, and ``decide`` takes it from
there as it would take the model's. (A clear pick is not a certain one: the decision reports the calibrated
score of ``ragapp.router.fit``, never 1.0 for being clear.) Otherwise the caller asks the LLM classifier.
Why: the classifier call costs 2.5-5.4 s on 2 cores for every question and sub-question, while most questions
name their topic plainly.

``pick_among_equals`` is the second way past the model (the router's ``route_same_search``): when every leaf
close to the best one would search the same passages, the model's pick among them could change nothing that is
searched, so the best one is taken (docs/workflow.md, "Model calls that are skipped").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from ragapp.models.embedders import Embedder
from ragapp.router.classifier import Classification, LeafScore
from ragapp.router.tree import IntentNode, IntentTree


@dataclass(frozen=True)
class FastRule:
    min_similarity: float  # the best leaf must reach this
    margin: float  # ... and stand this far above every leaf that is not its twin


@dataclass(frozen=True)
class _LeafVectors:
    key: tuple[object, ...]
    leaves: tuple[IntentNode, ...]
    owner: np.ndarray  # row -> index into leaves
    vectors: np.ndarray  # one row per embedded text, unit length


class EmbeddingClassifier:
    """Scores leaves by similarity; ``classify`` returns a classification only when it is clear."""

    def __init__(self, embedder: Embedder, rule: FastRule) -> None:
        self._embedder = embedder
        self._rule = rule
        self._cache: _LeafVectors | None = None
        self._last: tuple[_LeafVectors, str, tuple[tuple[IntentNode, float], ...]] | None = None
        self._lock = threading.Lock()

    def similarities(self, question: str, tree: IntentTree) -> list[tuple[IntentNode, float]]:
        """Every leaf with its similarity to ``question``, best first. The last answer is kept: the router asks
        again for the same question when the model decides after the embedder could not."""
        table = self._vectors(tree)
        if not table.leaves:
            return []
        with self._lock:
            last = self._last
        if last is not None and last[0] is table and last[1] == question:
            return list(last[2])
        query = np.asarray(self._embedder.embed_queries([question]), dtype=np.float32)[0]
        cosines = table.vectors @ query
        best = np.full(len(table.leaves), -1.0, dtype=np.float32)
        np.maximum.at(best, table.owner, cosines)
        order = np.argsort(-best)
        ranked = [(table.leaves[i], float(best[i])) for i in order]
        with self._lock:
            self._last = (table, question, tuple(ranked))
        return ranked

    def classify(self, question: str, tree: IntentTree) -> Classification | None:
        return self.clear_pick(question, self.similarities(question, tree), tree)

    def clear_pick(
        self, question: str, ranked: Sequence[tuple[IntentNode, float]], tree: IntentTree
    ) -> Classification | None:
        """The classification when the best of ``ranked`` (``similarities``) is clear by the rule, else None."""
        if not ranked:
            return None
        top, top_score = ranked[0]
        twin_scores = [(leaf, s) for leaf, s in ranked[1:] if twins(leaf, top)]
        rivals = [s for leaf, s in ranked[1:] if not twins(leaf, top)]
        if top_score < self._rule.min_similarity or (rivals and top_score - rivals[0] < self._rule.margin):
            return None
        chosen = [(top, top_score)] + [(leaf, s) for leaf, s in twin_scores if top_score - s < self._rule.margin]
        scores = tuple(_score(tree, leaf, s) for leaf, s in chosen)
        offered = tuple(_score(tree, leaf, 0.0) for leaf, _ in ranked)  # every leaf, as the model's call lists them
        reply = f"embedder: {top.code} {top_score:.3f}" + (f", next {rivals[0]:.3f}" if rivals else "")
        return Classification(question, scores, offered, reply=reply, by="embedder")

    def pick_among_equals(
        self,
        question: str,
        ranked: Sequence[tuple[IntentNode, float]],
        tree: IntentTree,
        margin: float,
        search_of: Callable[[IntentNode], Hashable | None],
    ) -> Classification | None:
        """The best of ``ranked`` when every leaf within ``margin`` of it has the same ``search_of`` (what
        routing there would search; None: not a search, e.g. a message to the assistant), else None. The
        model could only pick among them, and any pick searches the same passages."""
        if not ranked:
            return None
        top, top_score = ranked[0]
        contenders = [leaf for leaf, s in ranked if top_score - s <= margin]
        searches = {search_of(leaf) for leaf in contenders}
        if len(searches) != 1 or None in searches:
            return None
        offered = tuple(_score(tree, leaf, 0.0) for leaf, _ in ranked)
        outside = next((s for _, s in ranked[len(contenders) :]), None)
        reply = (
            f"embedder: {top.code} {top_score:.3f}; the {len(contenders)} leaves within {margin:.2f} search the same"
            + (f", next outside the margin {outside:.3f}" if outside is not None else "")
        )
        return Classification(question, (_score(tree, top, top_score),), offered, reply=reply, by="embedder")

    def _vectors(self, tree: IntentTree) -> _LeafVectors:
        leaves = tuple(tree.leaves())
        key = tuple((leaf.code, leaf.name, leaf.description, leaf.examples) for leaf in leaves)
        with self._lock:
            if self._cache is not None and self._cache.key == key:
                return self._cache
            texts: list[str] = []
            owner: list[int] = []
            for i, leaf in enumerate(leaves):
                for text in leaf_texts(tree, leaf):
                    texts.append(text)
                    owner.append(i)
            vectors = (
                np.asarray(self._embedder.embed_queries(texts), dtype=np.float32)
                if texts
                else np.zeros((0, 1), dtype=np.float32)
            )
            self._cache = _LeafVectors(key, leaves, np.asarray(owner, dtype=np.int64), vectors)
            return self._cache


def leaf_texts(tree: IntentTree, leaf: IntentNode) -> Sequence[str]:
    """What a question is compared with: the leaf's path with its description, and each example."""
    head = tree.full_path(leaf.code) + (f": {leaf.description}" if leaf.description else "")
    return [head, *leaf.examples]


def twins(a: IntentNode, b: IntentNode) -> bool:
    """Leaves of the same name under different parents ("Lumen V1 › Battery", "Lumen V2 › Battery")."""
    return a.name.strip().casefold() == b.name.strip().casefold() and a.parent != b.parent


def _score(tree: IntentTree, leaf: IntentNode, score: float) -> LeafScore:
    assert leaf.kind is not None
    return LeafScore(leaf.code, tree.full_path(leaf.code), leaf.kind, leaf.parent, score)
