"""Fixtures of the HTTP API tests: the real app served on a loopback port (``start_server``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.api_helpers import Served


@pytest.fixture
def serve_api(make_engine: Callable[..., Any], tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """``serve_api(documents={name: text}, accounts=False, **overrides)``. With accounts: rita (reader), eddie
    (editor) and ada (admin), each with an API key in ``keys``."""
    from ragapp.accounts.store import UserStore
    from ragapp.serve.server import RunningServer, start_server

    servers: list[RunningServer] = []

    def start(documents: dict[str, str] | None = None, accounts: bool = False, **overrides: Any) -> Served:
        name = f"state{len(servers)}"
        keys: dict[str, str] = {}
        if accounts:
            users = tmp_path / f"users{len(servers)}.json"
            store = UserStore(users, 4)
            for user, role in (("rita", "reader"), ("eddie", "editor"), ("ada", "admin")):
                store.add(user, f"{user} password", role)
                keys[user] = store.add_key(user)[1]
            overrides["auth"] = {"enabled": True, "users_file": users, "bcrypt_rounds": 4} | overrides.get("auth", {})
        rig = make_engine(name, **overrides)
        docs = {}
        for doc_name, text in (documents or {}).items():
            path = tmp_path / f"{name}-{doc_name}"
            path.write_text(text, "utf-8")
            (result,) = rig.engine.library.ingest([(path, doc_name)])
            assert result.status == "added", result.message
            docs[doc_name] = str(result.doc_id)
        server = start_server(rig.engine, "127.0.0.1", 0)
        servers.append(server)
        return Served(rig, server.url, keys, docs, server)

    yield start
    for server in servers:
        server.close()
