"""Other MCP servers' tools for the agent (``agent.mcp_servers``), called through the official ``mcp`` SDK's
client like the agent's own tools: each named ``<server>_<tool>``, its arguments checked against the tool's JSON
schema before the call (``jsonschema``), within the tool time budget, its result quoted to the model as data
(sentences that speak to the assistant taken out, ``qa.injection``) and kept as a passage the answer may cite.

The servers are reached on first use, not at start: a server that does not answer costs its tools (logged, and
shown where the tools are listed), never the agent. The SDK's client is async and the agent's loop is not: one
background event loop (an anyio portal) holds every connection open for as long as the engine runs.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractContextManager, AsyncExitStack, ExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

from jsonschema import validators
from pydantic import ConfigDict, model_validator

from ragapp.agent.tools.base import DATA_NOTE, ToolArgs, ToolContext, ToolOutput
from ragapp.config.answering import McpServer
from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.qa.injection import for_model

log = logging.getLogger(__name__)

MAX_RESULT_CHARS = 4_000  # a longer result is cut: the model reads the start
_NAME = re.compile(r"[^A-Za-z0-9_-]")


@dataclass(frozen=True)
class ServerTools:
    """What one configured server offers, for the page that lists them: its tools, or why none."""

    server: str
    tools: tuple[str, ...]
    error: str | None = None
    description: str = ""  # the server's own instructions (what it is for), when it gives them


class McpToolError(Exception):
    """The server answered the call with an error: its words go back to the model."""


def args_model(name: str, schema: dict[str, Any]) -> type[ToolArgs]:
    """Arguments checked against the tool's own JSON schema, as the agent's tools' pydantic models check theirs;
    the same schema is what native function calling sends."""
    checker = validators.validator_for(schema)(schema)
    shown = dict(schema)

    class Args(ToolArgs):
        model_config = ConfigDict(extra="allow")

        @model_validator(mode="before")
        @classmethod
        def _by_schema(cls, data: Any) -> Any:
            problems = sorted(checker.iter_errors(data), key=lambda e: list(e.path))
            if problems:
                raise ValueError(
                    "; ".join(f"{'.'.join(map(str, e.path)) or 'arguments'}: {e.message}" for e in problems[:5])
                )
            return data

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return dict(shown)

    Args.__name__ = Args.__qualname__ = f"{name}Args"
    return Args


class McpTool:
    """One remote tool, as the agent's loop calls a tool (``Tool``)."""

    name: ClassVar[str]  # set per instance; ClassVar only to match the protocol
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]

    def __init__(self, hub: McpTools, server: str, tool: str, description: str, schema: dict[str, Any]) -> None:
        self._hub, self.server, self.tool = hub, server, tool
        self.name = _NAME.sub("_", f"{server}_{tool}")[:64]  # type: ignore[misc]
        said = " ".join((description or "").split())[:500]
        self.description = f"[{server}, another MCP server] {said}"  # type: ignore[misc]
        self.Args = args_model(self.name, schema)  # type: ignore[misc]

    def run(self, args: ToolArgs, ctx: ToolContext) -> ToolOutput:
        text = self._hub.call(self.server, self.tool, args.model_dump())
        text = text if len(text) <= MAX_RESULT_CHARS else text[:MAX_RESULT_CHARS] + "…"
        digest = hashlib.sha256(f"{self.name}{args.model_dump_json()}{text}".encode()).hexdigest()[:16]
        chunk = Chunk(f"mcp-{digest}", f"mcp-{self.server}", 0, text, f"{self.server} · {self.tool}")
        ((number, _item),) = ctx.passages.add([RetrievedChunk(chunk, 1.0, {}, {})])
        observation = f"{DATA_NOTE}\n\n[{number}] ({self.server} · {self.tool})\n{for_model(text)}"
        return ToolOutput(observation, _preview(text), found=1)


class McpTools:
    """The configured servers' tools, connected on first use and kept open until ``close``."""

    def __init__(self, servers: Sequence[McpServer], timeout_s: float) -> None:
        self._servers = list(servers)
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._stack: ExitStack | None = None
        self._portal: Any = None
        self._clients: dict[str, Any] = {}
        self._tools: list[McpTool] = []
        self._listing: list[ServerTools] = []
        self._instructions: dict[str, str] = {}  # each server's, as it said them when the session started

    def tools(self) -> list[McpTool]:
        self._connect()
        return list(self._tools)

    def listing(self) -> list[ServerTools]:
        """Each server with its tools (connecting if not yet), or why it has none."""
        self._connect()
        return list(self._listing)

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> str:
        client = self._clients[server]
        result = self._portal.call(_call_tool, client, tool, arguments, self._timeout_s)
        text = "\n".join(getattr(part, "text", "") for part in result.content if getattr(part, "text", None))
        if result.isError:
            raise McpToolError(text or "the server reported an error")
        return text or "(no text in the result)"

    def close(self) -> None:
        with self._lock:
            stack, self._stack = self._stack, None
        if stack is not None:
            try:
                stack.close()
            except Exception as exc:  # a server gone already: nothing left to close
                log.info("closing MCP connections: %r", exc)

    def _connect(self) -> None:
        with self._lock:
            if self._stack is not None or not self._servers:
                return
            from anyio.from_thread import start_blocking_portal

            self._stack = ExitStack()
            self._portal = self._stack.enter_context(start_blocking_portal())
            for server in self._servers:
                try:
                    client = self._stack.enter_context(self._open(server))
                    listed = self._portal.call(_list_tools, client, self._timeout_s)
                except Exception as exc:  # a server down or slow: its tools are missing, said where listed
                    log.warning("MCP server %s not reached: %r", server.name, exc)
                    self._listing.append(ServerTools(server.name, (), f"{type(exc).__name__}: {exc}"))
                    continue
                self._clients[server.name] = client
                tools = [McpTool(self, server.name, t.name, t.description or "", t.inputSchema) for t in listed.tools]
                self._tools += tools
                said = self._instructions.get(server.name, "")
                self._listing.append(ServerTools(server.name, tuple(t.name for t in tools), description=said))

    def _open(self, server: McpServer) -> AbstractContextManager[Any]:
        def heard(started: Any) -> None:
            self._instructions[server.name] = " ".join((getattr(started, "instructions", None) or "").split())

        session = mcp_session(
            url=server.url,
            headers=server.headers,
            command=server.command,
            args=server.args,
            env=server.env,
            on_start=heard,
        )
        return self._portal.wrap_async_context_manager(session)  # type: ignore[no-any-return]


@asynccontextmanager
async def mcp_session(
    *,
    url: str | None = None,
    headers: Mapping[str, str] | None = None,
    command: str | None = None,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    on_start: Callable[[Any], None] | None = None,
) -> AsyncIterator[Any]:
    """An initialised ``mcp`` client session with a server: over streamable HTTP at ``url`` (with ``headers``),
    or over stdio with the ``command`` started (with ``args`` and ``env``). ``on_start`` hears the server's
    ``InitializeResult`` (its name and instructions), which the SDK's session does not keep."""
    import httpx
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    async with AsyncExitStack() as stack:
        if command is not None:
            params = StdioServerParameters(command=command, args=list(args), env=dict(env) if env else None)
            read, write = await stack.enter_async_context(stdio_client(params))
        else:
            assert url is not None, "an MCP server needs a url or a command"
            http = await stack.enter_async_context(httpx.AsyncClient(headers=dict(headers or {}), timeout=300))
            read, write, _session_id = await stack.enter_async_context(streamable_http_client(url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write))
        started = await session.initialize()
        if on_start is not None:
            on_start(started)
        yield session


async def _list_tools(client: Any, timeout_s: float) -> Any:
    import anyio

    with anyio.fail_after(timeout_s):
        return await client.list_tools()


async def _call_tool(client: Any, tool: str, arguments: dict[str, Any], timeout_s: float) -> Any:
    import anyio

    with anyio.fail_after(timeout_s):
        return await client.call_tool(tool, arguments)


def _preview(text: str) -> str:
    first = " ".join(text.split())
    return first if len(first) <= 160 else first[:159] + "…"
