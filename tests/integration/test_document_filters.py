"""Document filters against the real stores (real Chroma, bm25s, embedder; scripted model): each channel on its
own searches only the documents a filter admits, before fusion; where a file came from is kept and survives
indexing again and moving; a filter no document matches finds nothing and says so."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from ragapp.core.events import AgentStepEvent, AnswerEvent, NoticeEvent, RetrievalEvent, StageEvent
from ragapp.core.filters import DocumentFilter
from ragapp.core.types import Chunk, FileOrigin
from ragapp.store.bm25 import Bm25Index
from ragapp.store.vectors import ChromaVectorIndex

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.integration

QUESTION = "What is the gateway password?"
# Every file mentions the gateway password, so each channel finds every file unless the filter keeps it out.
HR = "hr-share"
FILES = {
    "leave.txt": ("alpha", "The Orion kettle gateway password is osprey.",
                  FileOrigin(HR, "policies/2024/leave.txt", "2024-03-01T08:00:00Z")),
    "travel.txt": ("alpha", "The Vega router gateway password is pelican.", FileOrigin(HR, "policies/2023/travel.txt")),
    "router.txt": ("beta", "The Lyra lamp gateway password is heron.", None),
    "lamp.md": ("beta", "# Lamp\n\nThe Nova fan gateway password is swift.", FileOrigin("eng-git", "docs/lamp.md")),
}  # fmt: skip


@pytest.fixture
def rig(make_engine: Callable[..., Rig], tmp_path: Path) -> Rig:
    return build(make_engine, tmp_path)


def build(make_engine: Callable[..., Rig], tmp_path: Path, **overrides: Any) -> Rig:
    rig = make_engine(**overrides)
    for name, (kb, text, origin) in FILES.items():
        path = tmp_path / name
        path.write_text(text, "utf-8")
        item: Any = (path, name) if origin is None else (path, name, origin)
        (result,) = rig.engine.library.ingest([item], kb=kb)
        assert result.status == "added", result.message
    rig.engine.library.set_tags(doc_id(rig, "router.txt"), ["Network", "devices"])
    return rig


def doc_id(rig: Rig, name: str) -> str:
    return next(d.doc_id for d in rig.engine.library.documents() if d.name == name)


def found(
    rig: Rig, where: DocumentFilter | None, channels: list[str] | None, kbs: frozenset[str] | None = None
) -> dict[str, set[str]]:
    result = rig.engine.chat.retrieve(QUESTION, kbs, where=where, channels=channels)
    assert not result.degraded, result.degraded
    names = {d.doc_id: d.name for d in rig.engine.library.documents()}
    return {r.channel: {names[h.chunk_id.rsplit("-", 1)[0]] for h in r.hits} for r in result.channel_results}


CASES = [
    (DocumentFilter(tags=("network",)), None, {"router.txt"}),
    (DocumentFilter(path_prefix="policies/"), None, {"leave.txt", "travel.txt"}),
    (DocumentFilter(path_glob="*/2024/*"), None, {"leave.txt"}),
    (DocumentFilter(source="upload"), None, {"router.txt"}),
    (DocumentFilter(file_types=("md",)), None, {"lamp.md"}),
    (DocumentFilter(modified_after="2024-01-01", modified_before="2024-06-01"), None, {"leave.txt"}),
    (DocumentFilter(source="hr-share"), frozenset({"alpha", "beta"}), {"leave.txt", "travel.txt"}),
    (DocumentFilter(path_prefix="docs/"), frozenset({"beta"}), {"lamp.md"}),
    (None, None, set(FILES)),
]


@pytest.mark.parametrize("channel", ["vector", "keyword"])
@pytest.mark.parametrize(("where", "kbs", "expected"), CASES)
def test_each_channel_alone_searches_only_the_filtered_documents(
    rig: Rig, channel: str, where: DocumentFilter | None, kbs: frozenset[str] | None, expected: set[str]
) -> None:
    assert found(rig, where, [channel], kbs) == {channel: expected}


def test_the_keyword_channel_on_postgresql_is_filtered_too(
    make_engine: Callable[..., Rig], tmp_path: Path, postgres_url: str
) -> None:
    rig = build(make_engine, tmp_path, store={"database_url": postgres_url, "keywords": "postgres"})
    for where, kbs, expected in CASES:
        assert found(rig, where, ["keyword"], kbs) == {"keyword": expected}, where


def test_both_channels_are_filtered_before_fusion(rig: Rig) -> None:
    result = rig.engine.chat.retrieve(QUESTION, where=DocumentFilter(path_prefix="policies/"))
    allowed = {doc_id(rig, "leave.txt"), doc_id(rig, "travel.txt")}
    assert {r.channel for r in result.channel_results} == {"vector", "keyword"}
    assert {c.chunk.doc_id for c in result.candidates} == allowed
    assert result.chunks and {c.chunk.doc_id for c in result.chunks} <= allowed
    assert result.filtered == 2
    unfiltered = rig.engine.chat.retrieve(QUESTION)  # the cache keeps the two apart
    assert {c.chunk.doc_id for c in unfiltered.candidates} > allowed
    assert unfiltered.filtered is None


def test_a_filter_that_matches_nothing_searches_nothing_and_says_so(rig: Rig) -> None:
    nothing = DocumentFilter(tags=("network",))
    result = rig.engine.chat.retrieve(QUESTION, frozenset({"alpha"}), where=nothing)
    assert result.chunks == () and result.channel_results == ()
    assert result.filtered == 0
    assert any("No document matches the filter" in d for d in result.degraded)
    events = list(rig.engine.chat.ask(QUESTION, kbs=frozenset({"alpha"}), where=nothing, mode="workflow"))
    assert any(isinstance(e, NoticeEvent) and "No document matches" in e.message for e in events)
    answer = next(e for e in events if isinstance(e, AnswerEvent))
    assert "No document matches the filter" in answer.text  # no model call was made (none was scripted)


@pytest.mark.parametrize("mode", ["workflow", "agent"])
def test_a_question_is_answered_only_from_the_filtered_documents(rig: Rig, mode: str) -> None:
    if mode == "agent":
        rig.llm.enqueue(call("search_knowledge", query="gateway password"), READY)
    rig.llm.enqueue("It is heron [1].")
    events = list(rig.engine.chat.ask(QUESTION, where=DocumentFilter(tags=("devices",)), mode=mode))  # type: ignore[arg-type]
    seen = {i.chunk.source for e in events if isinstance(e, RetrievalEvent) for i in e.chunks}
    assert seen == {"router.txt"}


def test_where_a_file_came_from_is_kept_and_survives_reindex_and_move(rig: Rig) -> None:
    library = rig.engine.library
    leave = library.document_view(doc_id(rig, "leave.txt"))
    assert leave.meta == {"source": "hr-share", "path": "policies/2024/leave.txt", "folder": "policies/2024",
                          "changed": "2024-03-01 08:00:00"}  # fmt: skip
    router = library.document_view(doc_id(rig, "router.txt"))
    assert router.meta == {"source": "upload", "path": "router.txt"}  # at the top: no folder
    assert router.tags == ("devices", "network")

    assert library.reindex(leave.record.doc_id).status == "replaced"
    assert library.document_view(leave.record.doc_id).meta == leave.meta  # where it came from is not in the file
    assert library.reindex(router.record.doc_id).status == "replaced"
    library.move(router.record.doc_id, "alpha")
    again = library.document_view(router.record.doc_id)
    assert (again.meta, again.tags, again.record.kb) == (router.meta, router.tags, "alpha")
    assert found(rig, DocumentFilter(tags=("network",)), ["vector"], frozenset({"alpha"})) == {"vector": {"router.txt"}}


def call(tool: str, **arguments: Any) -> str:
    return json.dumps({"thought": "next step", "tool": tool, "arguments": arguments})


READY = '{"thought": "I have what I need", "answer": true}'


def test_the_agent_s_filter_arguments_are_validated_and_only_narrow(rig: Rig) -> None:
    rig.llm.enqueue(
        call("search_knowledge", query="gateway password", tags=["a,b"]),  # refused: the model is told why
        call("search_knowledge", query="gateway password", file_type="p d f"),
        call("search_knowledge", query="gateway password", path_prefix="policies/"),  # outside the user's filter
        call("search_knowledge", query="gateway password", tags=["Devices"], file_type="txt", path_prefix=""),
        READY,
        "It is heron [1].",
    )
    events = list(rig.engine.chat.ask(QUESTION, where=DocumentFilter(tags=("network",)), mode="agent"))
    results = [e for e in events if isinstance(e, AgentStepEvent) and e.status != "started"]
    assert [e.status for e in results[:4]] == ["failed", "failed", "finished", "finished"]
    assert "tags" in str(results[0].error) and "character" in str(results[0].error)
    assert "file_type" in str(results[1].error)
    # Matching nothing within the user's filter, the model's own is dropped (said in the notes), the user's kept;
    # an empty value a small model fills in is no filter at all.
    assert "router.txt" in results[2].preview and "router.txt" in results[3].preview
    prompts = "\n".join(turn.content for call in rig.llm.calls for turn in call)
    assert "no document matches path_prefix=policies/; searched without those arguments" in prompts
    seen = {i.chunk.source for e in events if isinstance(e, RetrievalEvent) for i in e.chunks}
    assert seen == {"router.txt"}


# -- the indexes themselves: a filter draws top_k from the admitted documents, not top_k overall then cut --


def test_bm25_draws_its_top_k_from_the_admitted_documents(tmp_path: Path) -> None:
    strong = [Chunk(f"strong-{i:04d}", "strong", i, "gateway password gateway password", "s.txt") for i in range(5)]
    weak = [Chunk(f"weak-{i:04d}", "weak", i, f"the gateway note {i} and other words", "w.txt") for i in range(3)]
    index = Bm25Index(tmp_path / "bm25").start()
    index.rebuild(strong + weak, version=1)
    assert {cid.split("-")[0] for cid, _ in index.search("gateway password", 3)} == {"strong"}
    hits = index.search("gateway password", 3, docs=frozenset({"weak"}))
    assert sorted(cid for cid, _ in hits) == ["weak-0000", "weak-0001", "weak-0002"]
    assert index.search("gateway password", 3, docs=frozenset()) == []
    assert Bm25Index(tmp_path / "bm25").start().search("gateway", 5, docs=frozenset({"weak"}))  # persisted


def test_chroma_draws_its_top_k_from_the_admitted_documents(tmp_path: Path) -> None:
    index = ChromaVectorIndex.embedded(tmp_path / "chroma", "test-embedder")
    rng = np.random.default_rng(7)
    query = rng.normal(size=8).astype(np.float32)
    near = query + 0.01 * rng.normal(size=(6, 8)).astype(np.float32)
    far = rng.normal(size=(3, 8)).astype(np.float32)
    ids = [f"near-{i:04d}" for i in range(6)] + [f"far-{i:04d}" for i in range(3)]
    docs = ["near"] * 6 + ["far"] * 3
    kbs = ["a"] * 6 + ["a", "b", "b"]
    index.add(ids, np.vstack([near, far]), docs, ["en"] * 9, kbs)
    assert {cid.split("-")[0] for cid, _ in index.search(query, 3, "en")} == {"near"}
    assert sorted(cid for cid, _ in index.search(query, 3, "en", docs=frozenset({"far"}))) == [
        "far-0000", "far-0001", "far-0002",
    ]  # fmt: skip
    assert [c for c, _ in index.search(query, 3, "en", kbs=frozenset({"b"}), docs=frozenset({"far"}))] != []
    assert {c for c, _ in index.search(query, 5, "en", kbs=frozenset({"a"}), docs=frozenset({"far"}))} == {"far-0000"}
    assert index.search(query, 3, "en", docs=frozenset()) == []


def test_what_a_file_says_about_itself_is_stored_and_filtered_on(rig: Rig, tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("The Zephyr heater gateway password is condor.")
    document.core_properties.title, document.core_properties.author = "Heater Notes", "Li Wei"
    document.save(str(tmp_path / "heater.docx"))
    (result,) = rig.engine.library.ingest([(tmp_path / "heater.docx", "heater.docx")], kb="beta")
    assert result.status == "added", result.message
    meta = rig.engine.library.document_view(str(result.doc_id)).meta
    assert (meta["title"], meta["author"], meta["source"], meta["path"]) == (
        "Heater Notes", "Li Wei", "upload", "heater.docx",
    )  # fmt: skip
    for channel in ("vector", "keyword"):
        assert found(rig, DocumentFilter(author="li wei"), [channel]) == {channel: {"heater.docx"}}
        assert found(rig, DocumentFilter(title="heater", file_types=("docx",)), [channel]) == {channel: {"heater.docx"}}
    rig.llm.enqueue("It is condor [1].")
    events = list(rig.engine.chat.ask(QUESTION, where=DocumentFilter(author="Li"), mode="workflow"))
    retrieve = next(e for e in events if isinstance(e, StageEvent) and e.stage == "retrieve" and e.status != "started")
    assert retrieve.detail["filter documents"] == 1  # the trace says the filter was on, and how wide
