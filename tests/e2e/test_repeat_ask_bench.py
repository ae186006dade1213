"""``python -m ragbench.repeat_ask`` against a served app (the scripted model, the answer cache on): each path's
first ask is answered, its second comes from the cache, and the page's "Answered before" is seen as a hit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# Slow: a benchmark's own check, four asks with two page loads (~10 s); what it measures is tested in
# tests/integration/test_answer_cache.py and tests/e2e/test_answer_cache_browser.py.
pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ALPHA = "# Alpha robot\n\nThe Alpha robot's battery lasts 90 minutes on a full charge.\n"
QUESTION = "How long does the Alpha robot's battery last?"


def test_the_benchmark_times_a_first_and_a_kept_answer_through_the_api_and_the_page(
    scripted_app: Callable[..., Any], tmp_path: Path
) -> None:
    rig, url = scripted_app({"alpha.md": ALPHA}, answer_cache={"enabled": True})
    rig.llm.reply_with(lambda _messages: "The Alpha robot's battery lasts 90 minutes [1].")
    output = tmp_path / "repeat.json"
    # The benchmark in a process of its own, as `make bench-repeat` runs it: its Playwright cannot start in this
    # one, where the browser fixtures' sync Playwright (or a loop an earlier test left) already runs.
    command = [sys.executable, "-m", "ragbench.repeat_ask", "--url", url, "--question", QUESTION]
    env = os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([*command, "--output", str(output)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    asks = json.loads(output.read_text("utf-8"))["asks"]
    # The API asks first (the first question's order): answered, then kept; the page's two asks are both kept.
    assert [(a["path"], a["nth"], a["hit"]) for a in asks] == [
        ("api", 1, False), ("api", 2, True), ("page", 1, True), ("page", 2, True),
    ]  # fmt: skip
    assert all(a["error"] is None and a["seconds"] > 0 for a in asks)
    assert len(rig.llm.calls) == 1  # only the first ask reached the model
    printed = done.stdout
    assert "page: kept answer p50" in printed and "note shown p50" in printed
    assert "second asks answered from the cache: 2 of 2" in printed
