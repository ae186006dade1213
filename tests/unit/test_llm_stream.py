"""stream_within: the time budget around any LLM backend's stream."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from ragapp.core.errors import LLMError
from ragapp.models.llm import LLMTimeoutError, stream_within


def test_pieces_pass_through_in_order() -> None:
    assert list(stream_within(lambda: iter(["a", "b", "c"]), 5.0)) == ["a", "b", "c"]


def test_backend_errors_reach_the_caller() -> None:
    def broken() -> Iterator[str]:
        yield "a"
        raise LLMError("server went away")

    stream = stream_within(broken, 5.0)
    assert next(stream) == "a"
    with pytest.raises(LLMError, match="server went away"):
        next(stream)


def test_stopping_early_closes_the_backend_stream() -> None:
    closed = threading.Event()

    def endless() -> Iterator[str]:
        try:
            while True:
                yield "token"
                time.sleep(0.01)
        finally:
            closed.set()  # llama.cpp frees its lock here

    stream = stream_within(endless, 5.0)
    assert next(stream) == "token"
    stream.close()
    assert closed.wait(2.0)


def test_a_silent_backend_times_out() -> None:
    release = threading.Event()

    def silent() -> Iterator[str]:
        release.wait(5.0)
        yield "late"

    with pytest.raises(LLMTimeoutError, match=r"did not start answering within 0\.2 s"):
        list(stream_within(silent, 0.2))
    release.set()
