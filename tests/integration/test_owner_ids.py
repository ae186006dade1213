"""Whose traces a browser sees: the id it keeps is issued and signed by the server at page load, so a client
that sends another browser's id (or makes one up) sees none of that browser's traces."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from ragapp.ui.state import ensure_owner
from ragapp.ui.traces import TraceHandlers

pytestmark = pytest.mark.integration


def test_a_forged_owner_id_sees_no_one_elses_traces(make_engine: Callable[..., Any]) -> None:
    rig = make_engine()
    engine = rig.engine
    alice = ensure_owner(engine, None, SimpleNamespace(session_hash="alice-session", username=None))
    assert engine.signer.unsign(alice) == "browser:alice-session"
    assert ensure_owner(engine, alice, SimpleNamespace(session_hash="later", username=None)) == alice  # kept
    rig.llm.enqueue("Nothing to say [1].")
    list(engine.chat.ask("Where is the kettle manual?", owner="browser:alice-session"))

    handlers = TraceHandlers(engine)
    _rows, ids = handlers.recent(alice)
    assert len(ids) == 1
    for forged in ("browser:alice-session", alice.replace("alice", "alicf"), "browser:alice-session~" + "0" * 32):
        _rows, ids = handlers.recent(forged, request=SimpleNamespace(session_hash="mallory", username=None))
        assert ids == [], forged
