"""The models the tests' engines share (tests/shared_models.py): the run's embedder gives every text the vector the
model gives it, and embeds a text once however often the tests ingest it; an engine whose answers are only shorter
shares the run's local model."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pytest

from ragapp.config import Settings
from ragapp.models.embedders import load_embedder
from tests.shared_models import AnswerLength, SharedModels

KETTLE = "The kettle boils water in three minutes and switches itself off."
LAMP = "Descale the kettle monthly with citric acid; the lamp needs no care at all."


def test_the_run_embedder_gives_the_models_vectors_and_embeds_each_text_once(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings()
    shared = SharedModels().embedder(settings)
    assert shared is not None
    own = load_embedder(settings)  # the same model, loaded apart: what an engine of its own would get
    asked: list[list[str]] = []
    embed = shared.model.embed_passages  # type: ignore[attr-defined]

    def counted(texts: Sequence[str]) -> np.ndarray:
        asked.append(list(texts))
        return embed(texts)

    monkeypatch.setattr(shared.model, "embed_passages", counted)  # type: ignore[attr-defined]
    first = shared.embed_passages([KETTLE, LAMP, KETTLE])
    again = shared.embed_passages([LAMP, KETTLE])
    np.testing.assert_array_equal(first, own.embed_passages([KETTLE, LAMP, KETTLE]))
    np.testing.assert_array_equal(again, own.embed_passages([LAMP, KETTLE]))
    assert asked == [[KETTLE, LAMP]]  # each text once, the second call from memory
    # A question is embedded as one (e5's "query: " prefix), never given the passage's vector.
    np.testing.assert_array_equal(shared.embed_queries([KETTLE]), own.embed_queries([KETTLE]))
    assert not np.array_equal(shared.embed_queries([KETTLE])[0], first[0])


def test_an_engine_with_another_reply_length_shares_the_run_model_at_its_own_length(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = SharedModels()
    local = {"backend": "llama_cpp"}
    run_model = shared.llm(make_settings(llm=local))
    short = shared.llm(make_settings(llm={**local, "max_tokens": 48}))
    assert run_model is not None and not isinstance(run_model, AnswerLength)
    assert isinstance(short, AnswerLength) and short.model is run_model  # nothing loaded or read twice
    assert short.name == run_model.name and short.holds_grammar
    assert shared.llm(make_settings(llm={**local, "temperature": 0.7})) is not run_model  # it says other things

    asked: list[int | None] = []

    def replies(messages: list[object], *, max_tokens: int | None = None, **options: object) -> Iterator[str]:
        asked.append(max_tokens)
        yield "OK"

    monkeypatch.setattr(run_model, "stream_chat", replies)
    assert list(short.stream_chat([], temperature=0.0)) == ["OK"]
    assert list(short.stream_chat([], max_tokens=1)) == ["OK"]  # a call's own length stands
    assert asked == [48, 1]
