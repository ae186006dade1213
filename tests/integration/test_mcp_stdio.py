"""``python -m ragapp.mcp``: the knowledge base over stdio, started as a desktop client starts it (a command and
environment variables) by the ``mcp`` SDK's own client, over a state the app built. Nothing but the protocol on
stdout; a user that does not exist stops it with the reason."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.store import UserStore
from ragapp.agent.mcp_tools import mcp_session
from tests.integration.api_helpers import KETTLE, run_async

pytestmark = pytest.mark.integration


def _environment(state: Path, **more: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith("RAGAPP_")}
    return keep | {
        "RAGAPP_PATHS__STATE_DIR": str(state),
        "RAGAPP_PATHS__LOAD_DEMO": "false",
        "RAGAPP_RERANK__BACKEND": "none",
        **more,
    }


def test_a_desktop_client_searches_over_stdio(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine()
    path = tmp_path / "kettle.md"
    path.write_text(KETTLE, "utf-8")
    (added,) = rig.engine.library.ingest([(path, path.name)])
    state = rig.state_dir
    rig.engine.close()  # the app is stopped; the desktop client starts its own server over the same state

    async def work() -> tuple[Any, Any]:
        async with mcp_session(command=sys.executable, args=["-m", "ragapp.mcp"], env=_environment(state)) as client:
            bases = await client.call_tool("list_knowledge_bases", {})
            found = await client.call_tool("search", {"query": "How fast does the kettle boil?"})
            return bases, found

    bases, found = run_async(work)
    assert bases.structuredContent["result"] == [{"name": "default", "documents": 1, "chunks": added.chunks}]
    (first, *_rest) = found.structuredContent["passages"]
    assert first["document"] == "kettle.md" and "1.7 litres" in first["text"]


def test_an_unknown_user_stops_the_server_with_the_reason(tmp_path: Path) -> None:
    users = tmp_path / "users.json"
    UserStore(users, 4).add("ada", "ada password", "admin")
    environment = _environment(
        tmp_path / "state", RAGAPP_AUTH__ENABLED="true", RAGAPP_AUTH__USERS_FILE=str(users), RAGAPP_MCP__USER="nobody"
    )
    done = subprocess.run(
        [sys.executable, "-m", "ragapp.mcp"], env=environment, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""  # stdout is the protocol's alone
    assert "RAGAPP_MCP__USER='nobody'" in done.stderr
