"""MCP ``search`` with a short keyword query ("E07", "V2 Pro suction") finds the passage the full question finds,
over the demo with the shipped reranker, through the ``mcp`` SDK's own client. The reranker, trained on
questions, scored that passage 0.13 for "E07" (0.98 for the question), under the gate's 0.2: the gate now keeps a
chunk the keyword channel ranks near the top that holds every word of such a query. A keyword query the
documents do not hold still finds nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from mcp import ClientSession

from ragapp.agent.mcp_tools import mcp_session
from tests.conftest import DEMO_DIR
from tests.integration.api_helpers import Served, run_async

pytestmark = pytest.mark.integration

ASKED = {
    "What does error code E07 mean?": ["E07", "E07 error"],
    "What is the suction power of the V2 Pro?": ["V2 Pro suction"],
}
NOTHING = "kronecker product"


def _search(served: Served, queries: list[str]) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with mcp_session(url=f"{served.url}/mcp") as client:
            return {q: await _passages(client, q) for q in queries}

    return run_async(run)


async def _passages(client: ClientSession, query: str) -> list[dict[str, Any]]:
    result = await client.call_tool("search", {"query": query, "top_k": 5})
    assert not result.isError, result.content
    return list(result.structuredContent["passages"])  # type: ignore[index]


# Behind `slow` (make test-slow, which CI runs after make test): it indexes the demo with the shipped reranker.
@pytest.mark.slow
def test_a_keyword_query_finds_the_passage_the_question_finds(serve_api: Callable[..., Served]) -> None:
    served = serve_api(paths={"load_demo": True, "demo_dir": DEMO_DIR}, rerank={"backend": "builtin"})
    queries = [*ASKED, *(short for shorts in ASKED.values() for short in shorts), NOTHING]
    found = _search(served, queries)
    for question, shorts in ASKED.items():
        target = found[question][0]
        assert target["document"] == "lumen_v2_pro_manual.pdf", question
        for short in shorts:
            ids = [p["chunk_id"] for p in found[short]]
            assert target["chunk_id"] in ids, (short, found[short])
            kept = next(p for p in found[short] if p["chunk_id"] == target["chunk_id"])
            assert kept["relevance"]["kept"] is True
    e07 = next(p for p in found["E07"] if "E07" in p["text"])
    assert e07["relevance"]["reason"] == "a keyword query: keyword rank 1, holds every word of it"
    assert found[NOTHING] == []
