"""The caller's memories over HTTP (a real served app, API keys of real accounts): ``GET /v1/memories`` lists
only the key's user's, ``DELETE /v1/memories/{id}`` forgets one of theirs and never another's; a chat reply says
which memories it used, and another user's reply never does."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.integration.api_helpers import Served

pytestmark = pytest.mark.integration

V2 = "# Lumen V2 Pro manual\n\nThe Lumen V2 Pro battery lasts 10 hours on a full charge.\n"


def chat(served: Served, user: str, question: str) -> dict[str, object]:
    with served.client(user, timeout=60) as http:
        body = {"model": "ragapp-workflow", "messages": [{"role": "user", "content": question}]}
        reply = http.post("/v1/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    return reply.json()  # type: ignore[no-any-return]


def test_the_api_lists_and_deletes_only_the_callers_memories(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"v2_pro.md": V2}, accounts=True, retrieval={"channel_timeout_s": 60.0})
    kept = chat(served, "rita", "remember that I use the V2 Pro")
    assert "I use the V2 Pro" in kept["choices"][0]["message"]["content"]  # type: ignore[index]

    with served.client("rita") as rita, served.client("eddie") as eddie:
        listed = rita.get("/v1/memories").json()
        assert listed["enabled"] is True and [m["text"] for m in listed["memories"]] == ["I use the V2 Pro"]
        memory = listed["memories"][0]
        assert memory["source"] == "said" and memory["screened"] is False and memory["created_at"].startswith("20")
        assert eddie.get("/v1/memories").json()["memories"] == []

        served.rig.llm.enqueue("The V2 Pro battery lasts 10 hours [1].", "The battery lasts 10 hours [1].")
        mine = chat(served, "rita", "How long does the battery last?")
        assert mine["ragapp"]["memories_used"] == ["I use the V2 Pro"]  # type: ignore[index]
        theirs = chat(served, "eddie", "How long does the battery last?")
        assert theirs["ragapp"]["memories_used"] == []  # type: ignore[index]
        assert "V2 Pro" not in served.rig.llm.calls[-1][0].content  # Eddie's prompt

        refused = eddie.delete(f"/v1/memories/{memory['id']}")
        assert refused.status_code == 404 and refused.json()["error"]["code"] == "memory_not_found"
        assert len(rita.get("/v1/memories").json()["memories"]) == 1
        assert rita.delete(f"/v1/memories/{memory['id']}").status_code == 200
        assert rita.get("/v1/memories").json()["memories"] == []
        assert rita.delete(f"/v1/memories/{memory['id']}").status_code == 404
        assert rita.get("/v1/memories", headers={"Authorization": "Bearer nope"}).status_code == 401
