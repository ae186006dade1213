"""The OpenAI-compatible backend against a real server: llama-cpp-python's own ``llama_cpp.server``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragapp.config import LLMSettings, Settings
from ragapp.core.errors import LLMError
from ragapp.core.types import ChatTurn
from ragapp.engine.build import load_builtins
from ragapp.models.gguf import ensure_gguf
from ragapp.models.llm import LLMS, complete
from ragapp.models.llm_openai import OpenAICompatibleLLM

pytestmark = pytest.mark.integration

ALIAS = "qwen-local-test"
STARTUP_TIMEOUT_S = 90.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _openai_llm(base_url: str, timeout_s: float = 60.0) -> OpenAICompatibleLLM:
    load_builtins()
    llm_settings = {"backend": "openai", "base_url": base_url, "model": ALIAS, "timeout_s": timeout_s}
    settings = Settings(llm=LLMSettings.model_validate(llm_settings))
    llm = LLMS.get("openai")(settings)
    assert isinstance(llm, OpenAICompatibleLLM)
    return llm


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start llama_cpp.server on a free port with the packaged model; stop it afterwards."""
    import llama_cpp.server.app  # noqa: F401  (its extras come from requirements-dev.txt)

    model = ensure_gguf(Settings().llm.local_model, Settings().paths.models_dir)
    port = _free_port()
    # A file, not a pipe: a chatty server must never block on a full pipe buffer.
    log_path = tmp_path_factory.mktemp("llama-server") / "stderr.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [
                sys.executable, "-m", "llama_cpp.server",
                "--model", str(model), "--model_alias", ALIAS,
                "--host", "127.0.0.1", "--port", str(port),
                "--n_ctx", "2048", "--n_threads", "2", "--n_threads_batch", "2",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_ready(proc, f"{base}/models", log_path)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _wait_until_ready(proc: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{_tail(log_path)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.3)
    pytest.fail(f"llama_cpp.server did not answer {url} within {STARTUP_TIMEOUT_S:.0f} s:\n{_tail(log_path)}")


def _tail(path: Path, chars: int = 4000) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-chars:]


@pytest.mark.llm
def test_streams_from_a_real_server(server_url: str) -> None:
    llm = _openai_llm(server_url)
    pieces = list(
        llm.stream_chat(
            [ChatTurn("user", "What is the capital of France? Answer in one sentence.")],
            max_tokens=32,
            temperature=0.0,
        )
    )
    assert len(pieces) >= 3, pieces
    assert "Paris" in "".join(pieces)


@pytest.mark.llm
def test_system_turn_and_chinese(server_url: str) -> None:
    llm = _openai_llm(server_url)
    reply = complete(
        llm,
        [ChatTurn("system", "用中文回答。"), ChatTurn("user", "法国的首都是哪座城市？")],
        max_tokens=32,
        temperature=0.0,
    )
    assert "巴黎" in reply


def test_closed_port_fails_fast_naming_the_url() -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there once the probe closes
    llm = _openai_llm(url)
    started = time.monotonic()
    with pytest.raises(LLMError) as err:
        list(llm.stream_chat([ChatTurn("user", "hello")]))
    assert time.monotonic() - started < 10
    assert url in str(err.value)
    assert "RAGAPP_LLM__BASE_URL" in str(err.value)
