"""``python -m ragbench.api`` against a served app with the scripted model: both phases run and are reported."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.serve.server import start_server
from ragbench.api import main

pytestmark = pytest.mark.integration


def test_the_api_benchmark_times_retrieval_and_streamed_answers(
    make_engine: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rig = make_engine()
    doc = tmp_path / "kettle.md"
    doc.write_text("# Kettle\n\nThe Orion Kettle K9 boils 1.7 litres in 3 minutes.\n", "utf-8")
    rig.engine.library.ingest([(doc, doc.name)])
    rig.llm.reply_with(lambda _messages: ["It boils ", "in 3 minutes [1]."])
    server = start_server(rig.engine, "127.0.0.1", 0)
    try:
        output = tmp_path / "api.json"
        assert main(["--url", server.url, "--users", "2", "--requests", "3", "--output", str(output)]) == 0
    finally:
        server.close()
    printed = capsys.readouterr().out
    assert "retrieve" in printed and "answer" in printed and "req/s" in printed and "first token p50" in printed
    summary = json.loads(output.read_text("utf-8"))["summary"]
    assert summary["retrieve"]["requests"] == 3 and summary["retrieve"]["errors"] == 0
    assert summary["answer"]["errors"] == 0 and summary["answer"]["first_token_s"]["p50"] is not None
