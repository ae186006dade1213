"""Another ragapp as a retrieval channel (``retrieval.remotes``): two real apps served on loopback, the first
searching the second over its ``POST /v1/retrieve`` beside its own channels. The other app's passages are fused
by a namespaced id, kept by its own gate, cited with its document's name; with it down, the answer still comes,
from the local passages, with a notice. A picked knowledge base (this app's) or a document
filter leaves it out."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ragapp.core.events import AnswerEvent, NoticeEvent
from ragapp.core.filters import DocumentFilter
from tests.integration.api_helpers import KETTLE, LAMP, Served

pytestmark = pytest.mark.integration


def test_another_apps_passages_are_searched_cited_and_missed_gracefully(serve_api: Callable[..., Served]) -> None:
    other = serve_api({"lamp.md": LAMP}, accounts=True)  # its key's user reads its bases
    here = serve_api(
        {"kettle.md": KETTLE},
        retrieval={"remotes": [{"name": "hr", "url": other.url, "api_key": other.keys["rita"]}]},
    )
    engine = here.rig.engine

    found = engine.chat.retrieve("How many hours does the Lumen desk lamp run on one charge?")
    assert found.degraded == ()
    (first, *_rest) = found.chunks
    assert first.chunk.source == "hr · lamp.md" and "14 hours" in first.chunk.text
    assert first.chunk.chunk_id.startswith("hr:") and "remote:hr" in first.channel_ranks
    assert found.decisions[first.chunk.chunk_id].reason == "kept by remote:hr's own relevance gate"
    kettle = engine.chat.retrieve("How fast does the Orion Kettle K9 boil water?")
    assert kettle.chunks[0].chunk.source == "kettle.md"  # its own passages still come first for its own topics

    here.rig.llm.enqueue("The Lumen desk lamp runs 14 hours on one charge [1].")
    events = list(engine.chat.ask("How long does the Lumen desk lamp battery last?"))
    answer = next(e for e in events if isinstance(e, AnswerEvent))
    assert [c.chunk.source for c in answer.citations] == ["hr · lamp.md"]

    scoped = engine.chat.retrieve("Lumen desk lamp battery hours", frozenset({"default"}))
    assert all(not c.chunk.chunk_id.startswith("hr:") for c in scoped.candidates)  # a pick is this app's bases
    # A document filter names this app's documents: the other app is not asked, and the result says so.
    filtered = engine.chat.retrieve("Lumen desk lamp battery hours", where=DocumentFilter(path_prefix="kettle"))
    assert all(not c.chunk.chunk_id.startswith("hr:") for c in filtered.candidates)
    assert any("Other ragapp sources were not searched" in d for d in filtered.degraded)

    other.server.close()  # the other app goes down
    down = engine.chat.retrieve("Does the Orion Kettle K9 boil 1.7 litres?")
    assert any(d.startswith("remote:hr search failed") for d in down.degraded)
    assert down.chunks and down.chunks[0].chunk.source == "kettle.md"  # the answer still has its own passages
    here.rig.llm.enqueue("It boils 1.7 litres [1].")
    events = list(engine.chat.ask("How much water does the Orion Kettle K9 boil?"))
    assert any(isinstance(e, NoticeEvent) and "remote:hr search failed" in e.message for e in events)
    assert next(e for e in events if isinstance(e, AnswerEvent)).citations
