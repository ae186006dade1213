"""The knowledge base over MCP at /mcp of the served app, driven by the ``mcp`` SDK's own client over streamable
HTTP: the tools and their schemas, search, read, list and ask (with progress), the documents as resources, the
API keys and knowledge-base rules of the HTTP API, and bad arguments answered as tool errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from mcp import ClientSession
from pydantic import AnyUrl

from ragapp.accounts.model import KbRule
from ragapp.agent.mcp_tools import mcp_session
from tests.integration.api_helpers import KETTLE, LAMP, Served, run_async

pytestmark = pytest.mark.integration


def _call(served: Served, user: str | None, work: Callable[[ClientSession], Any]) -> Any:
    """``work(client)`` with an MCP client session at the app's /mcp with ``user``'s key (None: no key)."""

    async def run() -> Any:
        headers = {"Authorization": f"Bearer {served.keys[user]}"} if user else {}
        async with mcp_session(url=f"{served.url}/mcp", headers=headers) as client:
            return await work(client)

    return run_async(run)


def _data(result: Any) -> Any:
    assert not result.isError, result.content
    return result.structuredContent


def test_an_mcp_client_searches_reads_lists_and_asks(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE, "lamp.md": LAMP})
    served.rig.llm.enqueue("The Orion Kettle K9 boils 1.7 litres of water in 3 minutes [1].")
    progress: list[str] = []

    async def work(client: ClientSession) -> dict[str, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        found = _data(await client.call_tool("search", {"query": "How fast does the kettle boil?", "top_k": 3}))
        first = found["passages"][0]
        read = _data(await client.call_tool("read", {"chunk_id": first["chunk_id"], "around": 1}))
        bases = _data(await client.call_tool("list_knowledge_bases", {}))

        async def step(done: float, total: float | None, message: str | None) -> None:
            progress.append(message or "")

        asked = _data(
            await client.call_tool("ask", {"question": "How fast does the kettle boil?"}, progress_callback=step)
        )
        templates = [t.uriTemplate for t in (await client.list_resource_templates()).resourceTemplates]
        listed = await client.read_resource(AnyUrl("ragapp://knowledge-bases/default"))
        document = await client.read_resource(AnyUrl(f"ragapp://documents/{first['chunk_id'].split('-')[0]}"))
        return {"tools": tools, "found": found, "read": read, "bases": bases, "asked": asked, "templates": templates,
                "listed": listed, "document": document}  # fmt: skip

    got = _call(served, None, work)  # loopback, accounts off: no key needed, as for /v1
    assert set(got["tools"]) == {"search", "read", "list_knowledge_bases", "ask"}
    search_schema = got["tools"]["search"].inputSchema
    assert search_schema["required"] == ["query"] and search_schema["properties"]["top_k"]["maximum"] == 20
    assert "passages" in got["tools"]["search"].outputSchema["properties"]
    first = got["found"]["passages"][0]
    assert first["document"] == "kettle.md" and "1.7 litres" in first["text"] and first["rank"] == 1
    assert set(first["channel_ranks"]) <= {"vector", "keyword"} and first["channel_ranks"]
    assert first["relevance"]["kept"] is True and got["found"]["degraded"] == []
    assert got["read"]["document"] == "kettle.md" and got["read"]["passage"]["chunk_id"] == first["chunk_id"]
    assert first["chunk_id"] in [p["chunk_id"] for p in got["read"]["around"]]
    assert {b["name"]: b["documents"] for b in got["bases"]["result"]} == {"default": 2}
    asked = got["asked"]
    assert asked["answer"] == "The Orion Kettle K9 boils 1.7 litres of water in 3 minutes [1]."
    assert [(c["number"], c["document"]) for c in asked["citations"]] == [(1, "kettle.md")]
    assert asked["grounded"] and not asked["refused"] and asked["mode"] == "workflow"
    assert "retrieve…" in progress and "generate…" in progress  # the steps, as they ran
    assert set(got["templates"]) == {"ragapp://knowledge-bases/{name}", "ragapp://documents/{doc_id}"}
    listed = json.loads(got["listed"].contents[0].text)
    assert sorted(d["name"] for d in listed) == ["kettle.md", "lamp.md"]
    assert "boils 1.7 litres" in got["document"].contents[0].text


def test_bad_arguments_and_unknown_bases_come_back_as_tool_errors(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE})

    async def work(client: ClientSession) -> list[Any]:
        return [
            await client.call_tool("search", {"query": "kettle", "top_k": 500}),
            await client.call_tool("search", {"query": ""}),
            await client.call_tool("search", {"query": "kettle", "knowledge_bases": ["nowhere"]}),
            await client.call_tool("read", {"chunk_id": "no-such-chunk"}),
            await client.call_tool("ask", {"question": "kettle?", "mode": "telepathy"}),
        ]

    too_many, empty, unknown, missing, bad_mode = _call(served, None, work)
    for result in (too_many, empty, unknown, missing, bad_mode):
        assert result.isError
    assert "top_k" in too_many.content[0].text and "less than or equal to 20" in too_many.content[0].text
    assert "No knowledge base 'nowhere'" in unknown.content[0].text
    assert "No passage 'no-such-chunk'" in missing.content[0].text
    assert "mode" in bad_mode.content[0].text


def test_keys_and_knowledge_base_rules_hold_in_every_tool(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE}, accounts=True)
    served.rig.engine.accounts.store.set_kb_rule("default", KbRule(readers=("eddie",)))
    kettle = served.docs["kettle.md"]

    async def tools(client: ClientSession) -> list[Any]:
        return [
            await client.call_tool("list_knowledge_bases", {}),
            await client.call_tool("search", {"query": "kettle boils"}),
            await client.call_tool("search", {"query": "kettle", "knowledge_bases": ["default"]}),
        ]

    async def document(client: ClientSession) -> Any:
        return await client.read_resource(AnyUrl(f"ragapp://documents/{kettle}"))

    bases, searched, named = _call(served, "rita", tools)  # a reader the base is closed to
    assert _data(bases)["result"] == [] and _data(searched)["passages"] == []
    assert named.isError and "No knowledge base 'default'" in named.content[0].text
    with pytest.raises(Exception, match=r"\S"):  # refused, not read
        _call(served, "rita", document)
    bases, searched, named = _call(served, "eddie", tools)  # a reader it is open to
    assert _data(bases)["result"][0]["name"] == "default" and _data(searched)["passages"]
    chunk_id = _data(searched)["passages"][0]["chunk_id"]

    async def read(client: ClientSession) -> Any:
        return await client.call_tool("read", {"chunk_id": chunk_id})

    refused_read = _call(served, "rita", read)  # a passage found by eddie, asked for by rita: refused
    assert refused_read.isError and "kettle" not in refused_read.content[0].text.lower()
    assert "1.7 litres" in _data(_call(served, "eddie", read))["passage"]["text"]
    assert "boils 1.7 litres" in _call(served, "eddie", document).contents[0].text
    with pytest.raises(Exception, match=r"\S"):  # no key, accounts on: refused before the session starts
        _call(served, None, tools)
    with served.client() as anonymous:
        keyless = anonymous.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert keyless.status_code == 401 and "python -m ragapp.users key NAME" in keyless.json()["error"]["message"]
