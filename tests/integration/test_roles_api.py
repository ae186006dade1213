"""Roles over HTTP: the app served with accounts on, called the way a script would, with Gradio's own client.
Nobody gets in without signing in, a reader's call to the delete endpoint is refused (and nothing is deleted),
an editor's goes through."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.store import UserStore

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(make_engine: Callable[..., Any], tmp_path: Path) -> Iterator[tuple[Any, str, str]]:
    from ragapp.serve.server import start_server

    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    store.add("rita", "reader password", "reader")
    store.add("eddie", "editor password", "editor")
    rig = make_engine(auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    doc = tmp_path / "kettle.md"
    doc.write_text("# Kettle\n\nThe Orion Kettle K9 boils 1.7 litres in 3 minutes.\n", "utf-8")
    (result,) = rig.engine.library.ingest([(doc, doc.name)])
    server = start_server(rig.engine, "127.0.0.1", _free_port())  # as app.py serves it
    try:
        yield rig, f"{server.url}/", str(result.doc_id)
    finally:
        server.close()


def test_a_reader_calling_delete_is_refused_and_an_editor_is_not(served: tuple[Any, str, str]) -> None:
    from gradio_client import Client

    rig, url, doc_id = served
    with pytest.raises(Exception):  # noqa: B017 (the client's error for a refused login varies by version)
        Client(url, verbose=False)  # no account: no way in
    with pytest.raises(Exception):  # noqa: B017
        Client(url, auth=("rita", "wrong password"), verbose=False)

    reader = Client(url, auth=("rita", "reader password"), verbose=False)
    endpoint = "/delete_document"
    with pytest.raises(Exception, match=r"Your role \(reader\) may not delete documents"):
        reader.predict(doc_id, [], api_name=endpoint)
    assert [d.doc_id for d in rig.engine.library.documents()] == [doc_id]

    editor = Client(url, auth=("eddie", "editor password"), verbose=False)
    editor.predict(doc_id, [], api_name=endpoint)
    assert rig.engine.library.documents() == []
