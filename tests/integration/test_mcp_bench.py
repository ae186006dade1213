"""``python -m ragbench.mcp_overhead``'s measurement against a served app: every call each way is timed and the
two lists pair up. Figures from such a run mean nothing; only their shape is checked, never a timing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ragbench.mcp_overhead import measure
from tests.integration.api_helpers import KETTLE, Served, run_async

pytestmark = pytest.mark.integration


def test_each_question_is_timed_both_ways(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE})
    times = run_async(measure, served.url, ["How fast does the kettle boil?", "kettle volume"], 2)
    assert [len(times[k]) for k in ("retrieve", "mcp", "difference")] == [4, 4, 4]
    assert all(t > 0 for t in times["retrieve"] + times["mcp"])
    assert times["difference"] == [m - r for m, r in zip(times["mcp"], times["retrieve"], strict=True)]
