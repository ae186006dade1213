"""Tags and document filters through the served app: ``PUT /v1/documents/{id}/tags`` with its access rules and
validation, the metadata a document shows, a ``filter`` on ``/v1/retrieve``, on chat completions and on MCP
``search``, and a reader who cannot widen what they may read by a filter."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from ragapp.accounts.model import KbRule
from ragapp.agent.mcp_tools import mcp_session
from ragapp.core.types import FileOrigin
from tests.integration.api_helpers import KETTLE, LAMP, Served, run_async

pytestmark = pytest.mark.integration

SECRET = "# Orion Vault\n\nThe Orion kettle vault code is 4471; it opens the kettle store room.\n"


@pytest.fixture
def served(serve_api: Callable[..., Served], tmp_path: Path) -> Served:
    served = serve_api({"kettle.md": KETTLE, "lamp.md": LAMP}, accounts=True)
    path = tmp_path / "vault.md"
    path.write_text(SECRET, "utf-8")
    origin = FileOrigin("vault-share", "kitchen/vault.md", "2025-01-02T03:04:05Z")
    (result,) = served.rig.engine.library.ingest([(path, "vault.md", origin)], kb="secret")
    assert result.status == "added", result.message
    served.docs["vault.md"] = str(result.doc_id)
    served.rig.engine.accounts.store.set_kb_rule("secret", KbRule(readers=("ada",), editors=("ada",)))
    return served


def documents(body: dict[str, Any]) -> set[str]:
    return {c["document"] for c in body["chunks"]}


def test_tags_are_set_by_editors_validated_and_shown(served: Served) -> None:
    kettle = served.docs["kettle.md"]
    with served.client("rita") as rita, served.client("eddie") as eddie, served.client("ada") as ada:
        refused = rita.put(f"/v1/documents/{kettle}/tags", json={"tags": ["kitchen"]})
        assert refused.status_code == 403
        done = eddie.put(f"/v1/documents/{kettle}/tags", json={"tags": [" Kitchen ", "appliances", "kitchen"]})
        assert done.status_code == 200, done.text
        assert done.json() == {"id": kettle, "tags": ["kitchen", "appliances"]}
        bad = eddie.put(f"/v1/documents/{kettle}/tags", json={"tags": ["a,b"]})
        assert bad.status_code == 422 and "character" in bad.json()["error"]["message"]
        assert eddie.put(f"/v1/documents/{kettle}/tags", json={"tags": ["x"] * 3, "more": 1}).status_code == 422
        # A base eddie may not read reads as unknown; one he may read but not edit is refused.
        assert eddie.put(f"/v1/documents/{served.docs['vault.md']}/tags", json={"tags": ["x"]}).status_code == 404
        assert eddie.put("/v1/documents/nope/tags", json={"tags": ["x"]}).status_code == 404
        shown = rita.get(f"/v1/documents/{kettle}").json()
        assert shown["tags"] == ["appliances", "kitchen"]
        assert shown["meta"] == {"source": "upload", "path": "kettle.md"}
        vault = ada.get(f"/v1/documents/{served.docs['vault.md']}").json()
        assert vault["meta"] == {
            "source": "vault-share", "path": "kitchen/vault.md", "folder": "kitchen", "changed": "2025-01-02 03:04:05",
        }  # fmt: skip


def test_retrieve_takes_a_filter_and_refuses_a_bad_one(served: Served) -> None:
    question = {"query": "How long does the battery last and how fast does the kettle boil?"}
    with served.client("eddie") as eddie:
        eddie.put(f"/v1/documents/{served.docs['lamp.md']}/tags", json={"tags": ["lighting"]})
        everything = eddie.post("/v1/retrieve", json=question).json()
        assert documents(everything) == {"kettle.md", "lamp.md"} and everything["filtered"] is None
        lit = eddie.post("/v1/retrieve", json=question | {"filter": {"tags": ["Lighting"]}}).json()
        assert documents(lit) == {"lamp.md"} and lit["filtered"] == 1
        assert {c["document"] for c in lit["candidates"]} == {"lamp.md"}
        typed = eddie.post("/v1/retrieve", json=question | {"filter": {"path_prefix": "kettle", "file_types": ["md"]}})
        assert documents(typed.json()) == {"kettle.md"}
        none = eddie.post("/v1/retrieve", json=question | {"filter": {"tags": ["nothing-has-this"]}}).json()
        assert none["chunks"] == [] and none["filtered"] == 0
        assert any("No document matches the filter" in d for d in none["degraded"])
        for bad in ({"tag": ["x"]}, {"modified_after": "soon"}, {"file_types": ["p d f"]}, {"tags": "x" * 50}):
            reply = eddie.post("/v1/retrieve", json=question | {"filter": bad})
            assert reply.status_code == 422, (bad, reply.text)
            assert reply.json()["error"]["message"].startswith("Invalid request: filter")


def test_a_reader_cannot_widen_what_they_may_read_by_a_filter(served: Served) -> None:
    question = {"query": "What is the Orion kettle vault code?"}
    with served.client("rita") as rita, served.client("ada") as ada:
        wide = {"filter": {"source": "vault-share"}}
        assert documents(ada.post("/v1/retrieve", json=question | wide).json()) == {"vault.md"}
        mine = rita.post("/v1/retrieve", json=question | wide).json()
        assert mine["chunks"] == [] and mine["filtered"] == 0  # the filter is resolved within what rita may read
        assert rita.post("/v1/retrieve", json=question | wide | {"kbs": ["secret"]}).status_code == 404
        loose = rita.post("/v1/retrieve", json=question | {"filter": {"path_prefix": "k"}}).json()
        assert "vault.md" not in {c["document"] for c in loose["candidates"]}


def test_chat_completions_answer_only_from_the_filtered_documents(served: Served) -> None:
    served.rig.llm.enqueue("It runs 14 hours [1].")
    with served.client("rita") as rita:
        reply = rita.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "How long does the battery last, how fast does it boil?"}],
                  "filter": {"path_prefix": "lamp"}},
        )  # fmt: skip
        assert reply.status_code == 200, reply.text
        (citation,) = reply.json()["choices"][0]["message"]["citations"]
        assert citation["document"] == "lamp.md"
        assert all("1.7 litres" not in t.content for t in served.rig.llm.calls[-1])  # the kettle never reached it
        bad = rita.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}], "filter": []})
        assert bad.status_code == 422


def _mcp(served: Served, user: str, work: Callable[[ClientSession], Any]) -> Any:
    async def run() -> Any:
        headers = {"Authorization": f"Bearer {served.keys[user]}"}
        async with mcp_session(url=f"{served.url}/mcp", headers=headers) as client:
            return await work(client)

    return run_async(run)


def test_mcp_search_takes_the_same_filter(served: Served) -> None:
    async def work(client: ClientSession) -> list[Any]:
        query = "How fast does the kettle boil and how long does the lamp run?"
        return [
            await client.call_tool("search", {"query": query, "filter": {"path_prefix": "lamp"}}),
            await client.call_tool("search", {"query": query, "filter": {"source": "vault-share"}}),
            await client.call_tool("search", {"query": query, "filter": {"tag": ["x"]}}),
        ]

    lamp, vault, bad = _mcp(served, "rita", work)
    assert not lamp.isError, lamp.content
    assert {p["document"] for p in lamp.structuredContent["passages"]} == {"lamp.md"}
    assert not vault.isError and vault.structuredContent["passages"] == []  # rita may not read the vault
    assert any("No document matches" in d for d in vault.structuredContent["degraded"])
    assert bad.isError and "tag" in bad.content[0].text
