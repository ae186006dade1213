"""Named knowledge bases against the real stores: scoped retrieval in both channels, names, duplicates,
moves, and upgrading state written before knowledge bases existed (catalog, vectors, BM25)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragapp.core.errors import IngestError
from ragapp.core.events import AnswerEvent, RetrievalEvent
from ragapp.core.types import KnowledgeBase, RetrievalResult
from ragapp.store.tokenize import TOKENIZER_VERSION
from ragapp.store.vectors import ChromaVectorIndex

if TYPE_CHECKING:
    from conftest import Rig, StoreSnapshot

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

QUESTION = "What is the gateway password?"
# Each base holds one file; all three mention the gateway password, so every channel has something to
# find in every base, and only the scope can keep a base out.
FILES = {
    "alpha": ("kettle.txt", "The Orion kettle gateway password is osprey. Rinse the kettle filter every 14 days."),
    "beta": ("router.txt", "The Vega router gateway password is pelican. Reboot the router every 30 days."),
    "gamma": ("lamp.txt", "The Lyra lamp gateway password is heron. Dust the lamp shade every week."),
}


@pytest.fixture
def three(make_engine: Callable[..., Rig], tmp_path: Path) -> Rig:
    """An engine with one file in each of the knowledge bases alpha, beta and gamma."""
    rig = make_engine()
    for kb, (name, text) in FILES.items():
        path = tmp_path / name
        path.write_text(text, "utf-8")
        (result,) = rig.engine.library.ingest([(path, name)], kb=kb)
        assert result.status == "added", result.message
    return rig


def chunk_ids_by_kb(rig: Rig) -> dict[str, set[str]]:
    docs = {d.doc_id: d.kb for d in rig.engine.library.documents()}
    by_kb: dict[str, set[str]] = {}
    for cid in ChromaVectorIndex.embedded(rig.state_dir / "chroma", rig.embedder).ids():
        by_kb.setdefault(docs[cid.rsplit("-", 1)[0]], set()).add(cid)
    return by_kb


def hits_by_channel(result: RetrievalResult) -> dict[str, set[str]]:
    return {r.channel: {h.chunk_id for h in r.hits} for r in result.channel_results}


SCOPES = [frozenset({"alpha"}), frozenset({"beta"}), frozenset({"alpha", "gamma"}), None]


def test_each_channel_stays_inside_the_scope(three: Rig) -> None:
    by_kb = chunk_ids_by_kb(three)
    for scope in SCOPES:
        allowed = set().union(*(ids for kb, ids in by_kb.items() if scope is None or kb in scope))

        result = three.engine.chat.retrieve(QUESTION, kbs=scope)

        hits = hits_by_channel(result)
        assert set(hits) == {"vector", "keyword"}
        for channel, found in hits.items():
            assert found == allowed, (scope, channel, found, allowed)  # every chunk in scope, nothing else
        assert {c.chunk.chunk_id for c in result.candidates} <= allowed
        assert result.chunks, f"{scope}: the answer passage is in scope and should pass the relevance gate"
        assert result.kbs == (tuple(sorted(scope)) if scope is not None else None)
        assert not result.degraded


def test_scope_reaches_the_answer(three: Rig) -> None:
    three.llm.enqueue("The password is pelican [1].")
    events = list(three.engine.chat.ask(QUESTION, (), frozenset({"beta"})))

    (retrieval,) = [e for e in events if isinstance(e, RetrievalEvent)]
    assert {c.chunk.source for c in retrieval.chunks} == {"router.txt"}
    prompt = "".join(turn.content for turn in three.llm.calls[0])
    assert "pelican" in prompt and "osprey" not in prompt and "heron" not in prompt

    for scope in (frozenset({"nope"}), frozenset()):  # no known knowledge base: nothing found, quietly
        result = three.engine.chat.retrieve(QUESTION, kbs=scope)
        assert all(r.hits == () for r in result.channel_results)
        assert result.chunks == () and not result.degraded
        answer = list(three.engine.chat.ask(QUESTION, (), scope))[-1]
        assert isinstance(answer, AnswerEvent) and not answer.grounded
    assert len(three.llm.calls) == 1  # the model is not asked when there is nothing to answer from


def test_knowledge_bases_are_listed_with_counts(three: Rig) -> None:
    assert three.engine.library.knowledge_bases() == [
        KnowledgeBase("alpha", 1, 1),
        KnowledgeBase("beta", 1, 1),
        KnowledgeBase("gamma", 1, 1),
    ]
    assert {d.name: d.kb for d in three.engine.library.documents()} == {v[0]: k for k, v in FILES.items()}


def test_names_are_unique_per_knowledge_base_and_content_everywhere(
    make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    rig = make_engine()
    v1, v2, v3 = (tmp_path / f"v{i}.txt" for i in (1, 2, 3))
    v1.write_text("The gateway password is osprey.", "utf-8")
    v2.write_text("The gateway password is pelican.", "utf-8")
    v3.write_text("The gateway password is heron.", "utf-8")

    (a,) = rig.engine.library.ingest([(v1, "notes.txt")], kb="alpha")
    (b,) = rig.engine.library.ingest([(v2, "notes.txt")], kb="beta")  # same name, other base: a second document
    assert (a.status, b.status) == ("added", "added")
    assert b.message == "notes.txt: added to 'beta' (1 chunks)."

    (dup,) = rig.engine.library.ingest([(v1, "copy.txt")], kb="beta")  # same bytes, any base: nothing changes
    assert dup.status == "duplicate" and dup.doc_id == a.doc_id
    assert dup.message == "copy.txt: already in the knowledge base as notes.txt in 'alpha'; nothing changed."

    (c,) = rig.engine.library.ingest([(v3, "notes.txt")], kb="beta")  # new content replaces within beta only
    assert c.status == "replaced"
    assert c.message == "notes.txt: replaced the earlier version in 'beta' (1 chunks)."
    assert sorted((d.kb, d.doc_id) for d in rig.engine.library.documents()) == [("alpha", a.doc_id), ("beta", c.doc_id)]


BAD_NAMES = ["", "   ", "a/b", "x" * 65, "semi;colon", "line\nbreak", "tab\there", "emoji 📚", "../etc"]


def test_invalid_names_are_refused_before_anything_is_stored(
    three: Rig, store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    before = store_snapshot(three)
    for name in BAD_NAMES:
        with pytest.raises(IngestError, match=r"Knowledge base name .* is not allowed: use 1 to 64 characters"):
            three.engine.library.ingest([(FIXTURES / "sample.txt", "sample.txt")], kb=name)
    assert store_snapshot(three) == before
    assert [kb.name for kb in three.engine.library.knowledge_bases()] == ["alpha", "beta", "gamma"]


def test_valid_names_are_accepted(make_engine: Callable[..., Rig]) -> None:
    rig = make_engine()
    names = {"产品手册 2024": "sample.txt", "team_a-v1.2": "sample.md", "  padded ": "sample.html"}
    for kb, file in names.items():
        (result,) = rig.engine.library.ingest([(FIXTURES / file, file)], kb=kb)
        assert result.status == "added", result.message
    assert [kb.name for kb in rig.engine.library.knowledge_bases()] == sorted(
        ["产品手册 2024", "team_a-v1.2", "padded"]
    )
    assert {d.name: d.kb for d in rig.engine.library.documents()}["sample.html"] == "padded"


def test_moving_a_document_moves_it_in_every_store(three: Rig) -> None:
    kettle = next(d for d in three.engine.library.documents() if d.name == "kettle.txt")
    assert three.engine.library.move(kettle.doc_id, "beta") == "kettle.txt"

    assert chunk_ids_by_kb(three).keys() == {"beta", "gamma"}
    tags = ChromaVectorIndex.embedded(three.state_dir / "chroma", three.embedder).kb_tags()
    assert tags[f"{kettle.doc_id}-0000"] == "beta"
    found = hits_by_channel(three.engine.chat.retrieve(QUESTION, kbs=frozenset({"beta"})))
    assert all(f"{kettle.doc_id}-0000" in ids for ids in found.values())
    assert hits_by_channel(three.engine.chat.retrieve(QUESTION, kbs=frozenset({"alpha"}))) == {
        "vector": set(),
        "keyword": set(),
    }
    with pytest.raises(IngestError, match="not allowed"):
        three.engine.library.move(kettle.doc_id, "bad/name")


def test_reconcile_retags_vectors_without_re_embedding(
    three: Rig, make_engine: Callable[..., Rig], store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    by_kb = chunk_ids_by_kb(three)
    before = store_snapshot(three)
    three.engine.close()

    index = ChromaVectorIndex.embedded(three.state_dir / "chroma", three.embedder)
    stored = {"ids": [], "embeddings": [], "metadatas": []}
    for part in index._collections.values():
        got = part.get(include=["embeddings", "metadatas"])
        stored["ids"] += got["ids"]
        stored["embeddings"] += [list(map(float, v)) for v in got["embeddings"]]
        stored["metadatas"] += [{k: v for k, v in (m or {}).items() if k != "kb"} for m in got["metadatas"] or []]
        if got["ids"]:
            part.delete(ids=got["ids"])
    # Written as before knowledge bases and per-language collections: one shared collection, no kb tags.
    legacy = index._client.get_or_create_collection(
        "chunks-" + re.sub(r"[^a-zA-Z0-9._-]", "-", three.embedder),
        metadata={"hnsw:space": "cosine"},
        embedding_function=None,
    )
    legacy.add(ids=stored["ids"], embeddings=stored["embeddings"], metadatas=stored["metadatas"])
    (wrong,) = by_kb["alpha"]
    legacy.update(ids=[wrong], metadatas=[{"kb": "gamma"}])
    del index, legacy
    tags = ChromaVectorIndex.embedded(three.state_dir / "chroma", three.embedder).kb_tags()  # migrates on open
    # Untagged vectors from before knowledge bases land in the default one; reconcile then applies the catalog's.
    assert tags[wrong] == "gamma" and sorted(tags.values()) == ["default", "default", "gamma"]

    rebuilt = make_engine()  # same state dir: build_engine reconciles on start

    tags = ChromaVectorIndex.embedded(rebuilt.state_dir / "chroma", rebuilt.embedder).kb_tags()
    assert tags == {cid: kb for kb, ids in by_kb.items() for cid in ids}
    reopened = ChromaVectorIndex.embedded(rebuilt.state_dir / "chroma", rebuilt.embedder)
    after = {}
    for part in reopened._collections.values():
        got = part.get(include=["embeddings"])
        after.update({cid: list(map(float, v)) for cid, v in zip(got["ids"], got["embeddings"], strict=True)})
    assert after == dict(zip(stored["ids"], stored["embeddings"], strict=True))  # nothing re-embedded
    assert store_snapshot(rebuilt) == before
    assert hits_by_channel(rebuilt.engine.chat.retrieve(QUESTION, kbs=frozenset({"alpha"})))["vector"] == {wrong}


def test_keyword_index_from_another_tokenizer_is_rebuilt_on_start(
    three: Rig, make_engine: Callable[..., Rig], store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    before = store_snapshot(three)
    three.engine.close()
    meta_path = three.state_dir / "bm25" / "meta.json"
    meta = json.loads(meta_path.read_text("utf-8"))
    # An index of the same catalog version whose tokens came from another tokenizer: only the tag says so.
    meta["tokenizer"] = TOKENIZER_VERSION - 1
    meta["chunk_ids"] = meta["kbs"] = []
    meta_path.write_text(json.dumps(meta), "utf-8")

    rebuilt = make_engine()

    meta = json.loads(meta_path.read_text("utf-8"))
    assert meta["tokenizer"] == TOKENIZER_VERSION
    assert store_snapshot(rebuilt) == before
    assert sorted(meta["kbs"]) == ["alpha", "beta", "gamma"]
    assert hits_by_channel(rebuilt.engine.chat.retrieve("pelican", kbs=frozenset({"beta"})))["keyword"]


_OLD_CATALOG = (
    (Path(__file__).parents[1] / "fixtures" / "catalog_before_kbs.sql").read_text("utf-8")
    + """
INSERT INTO documents VALUES ('0123456789abcdef', 'old.txt', 'txt', 'hash', 40, NULL, 1, '2023-05-01 00:00:00');
INSERT INTO chunks VALUES
    ('0123456789abcdef-0000', '0123456789abcdef', 0, 'The gateway password is osprey.', NULL, NULL);
INSERT INTO meta VALUES ('version', '1');
"""
)


def test_state_from_before_knowledge_bases_lands_in_default(make_engine: Callable[..., Rig], tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    conn = sqlite3.connect(state / "catalog.sqlite3")
    conn.executescript(_OLD_CATALOG)
    conn.close()

    rig = make_engine()  # migrates the catalog, embeds the chunk (tagged), builds BM25

    assert rig.state_dir == state
    assert [(d.name, d.kb) for d in rig.engine.library.documents()] == [("old.txt", "default")]
    assert rig.engine.library.knowledge_bases() == [KnowledgeBase("default", 1, 1)]
    assert ChromaVectorIndex.embedded(state / "chroma", rig.embedder).kb_tags() == {"0123456789abcdef-0000": "default"}
    found = hits_by_channel(rig.engine.chat.retrieve(QUESTION, kbs=frozenset({"default"})))
    assert found == {"vector": {"0123456789abcdef-0000"}, "keyword": {"0123456789abcdef-0000"}}


def test_demo_files_go_into_the_demo_knowledge_base(demo: Rig, demo_file_names: list[str]) -> None:
    assert sorted(d.name for d in demo.engine.library.documents() if d.kb == "demo") == demo_file_names
    assert [kb.name for kb in demo.engine.library.knowledge_bases()] == ["demo"]
