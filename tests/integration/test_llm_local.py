"""The packaged local model, run by llama.cpp in-process. Slow-ish: loads a 1 GB GGUF once per module."""

from __future__ import annotations

import os

import pytest

from ragapp.config import LLMSettings, Settings
from ragapp.core.types import ChatTurn
from ragapp.engine.build import load_builtins
from ragapp.models.llm import LLMS, complete
from ragapp.models.llm_llama_cpp import LlamaCppLLM
from tests.workers import MODEL_THREADS

pytestmark = [pytest.mark.integration, pytest.mark.llm]

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup)")

# RAGAPP_TEST_LOCAL_MODEL=qwen2.5-coder-0.5b runs the same checks on the small model.
MODEL = os.environ.get("RAGAPP_TEST_LOCAL_MODEL", "qwen2.5-coder-1.5b")


@pytest.fixture(scope="module")
def llm() -> LlamaCppLLM:
    load_builtins()
    # The default models_dir is reused on purpose: assembling another GB per test run is waste.
    # Two threads on two cores, like the production machines (one each when two xdist workers share them).
    settings = Settings(llm=LLMSettings.model_validate({"local_model": MODEL, "n_ctx": 2048, "threads": MODEL_THREADS}))
    backend = LLMS.get("llama_cpp")(settings)
    assert isinstance(backend, LlamaCppLLM)
    return backend


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("法国的首都是哪座城市？请用中文回答。", "巴黎"),
        ("What is the capital of France? Answer in one sentence.", "Paris"),
    ],
    ids=["zh", "en"],
)
def test_streams_several_tokens(llm: LlamaCppLLM, prompt: str, expected: str) -> None:
    pieces = list(llm.stream_chat([ChatTurn("user", prompt)], max_tokens=48, temperature=0.0))
    assert len(pieces) >= 3, pieces
    assert all(isinstance(p, str) and p for p in pieces)
    assert expected in "".join(pieces)


def test_second_call_reuses_loaded_model(llm: LlamaCppLLM) -> None:
    first = llm.load()
    reply = complete(llm, [ChatTurn("user", "Reply with the word OK.")], max_tokens=8, temperature=0.0)
    assert reply.strip()
    assert llm.load() is first


def test_system_prompt_is_followed(llm: LlamaCppLLM) -> None:
    messages = [
        ChatTurn("system", "Answer with exactly one word in capital letters."),
        ChatTurn("user", "Which colour is the sky on a clear day?"),
    ]
    assert "BLUE" in complete(llm, messages, max_tokens=8, temperature=0.0).upper()


def test_an_avx512_build_reads_the_weights_without_repacking_them(llm: LlamaCppLLM) -> None:
    # llama.cpp's repacked copy of the weights reads prompts more slowly in an AVX-512 build and costs about
    # 600 MB a context (docs/lab-log.md); elsewhere llama.cpp's default stands. The wrap is undone after each load.
    import llama_cpp
    from llama_cpp import llama_cpp as low

    avx512 = "AVX512 = 1" in llama_cpp.llama_print_system_info().decode()
    assert llm.load().model_params.use_extra_bufts is (not avx512)
    assert low.llama_model_default_params().use_extra_bufts is True  # llama.cpp's own default, as it was


def _private_mb() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) // 1024 for line in status if line.startswith("RssAnon:"))


def test_every_prefix_slot_reads_the_weights_the_model_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Where llama.cpp repacks the weights (an AVX2 build), a Llama loading the file again copied them once more:
    # 770 MB a slot, against 129 MB over the first one's weights (at 4,096 tokens; docs/lab-log.md). Made to
    # repack here, whatever this build's default.
    import gc

    from ragapp.models import llm_llama_cpp

    monkeypatch.setattr(llm_llama_cpp, "_repacks", lambda: True)
    settings = Settings(llm=LLMSettings.model_validate({"local_model": MODEL, "n_ctx": 2048, "threads": MODEL_THREADS}))
    backend = LLMS.get("llama_cpp")(settings)
    assert isinstance(backend, LlamaCppLLM)
    main = backend.load()
    asked = [ChatTurn("user", "What is the capital of France? Answer in one word.")]
    before = _private_mb()
    replies = ["".join(backend.stream_chat(asked, max_tokens=8, temperature=0.0, prefix_slot=s)) for s in "ab"]
    grown = _private_mb() - before
    assert all("Paris" in reply for reply in replies), replies
    slots = list(backend._slots.values())
    assert [slot._model.model for slot in slots] == [main._model.model] * 2  # one llama_model for all
    assert grown < 2 * 400, f"two slots took {grown} MB"  # 2 x 770 MB when each repacked its own copy
    backend._slots.clear()  # the slots go; the weights stay with the model that loaded them
    del slots
    gc.collect()
    assert "Paris" in complete(backend, asked, max_tokens=8, temperature=0.0)
