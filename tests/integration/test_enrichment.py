"""Staged ingest against the real stores and embedder: an upload is searchable by keywords at once, its vectors
follow in the background (``ragapp.enrich``), a base can be paused (across a restart) and resumed, a deleted
document's work goes, a refused file leaves nothing, and the HTTP API shows the progress."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragapp.core.events import NoticeEvent
from ragapp.enrich.vectors import VectorsStep

if TYPE_CHECKING:
    from conftest import Rig

pytestmark = pytest.mark.integration

# Small chunks, so one short manual makes several batches; a fast tick. The app's reranker judges the passages:
# the channel-score gate wants a vector match or a keyword score a six-passage corpus cannot reach.
BACKGROUND: dict[str, Any] = {
    "enrich": {"background": True, "batch": 2, "tick_s": 0.2},
    "ingest": {"chunk_size": 120, "chunk_overlap": 0},
    "rerank": {"backend": "builtin"},
}
TOPICS = [
    "The Orion kettle descales with citric acid once a month.",
    "The Vega router reboots itself every Sunday night at three.",
    "The Lyra lamp dims in twelve steps from the touch ring.",
    "The Nova fan oscillates ninety degrees on the second button.",
    "The Pavo heater switches off when it tips over.",
    "The Tucana scale weighs up to five kilograms in grams.",
]
MANUAL = "\n\n".join(f"## Part {i}\n\n{text} " + "Keep this manual for later. " * 2 for i, text in enumerate(TOPICS))
WAIT_S = 300.0  # a loaded 2-core machine embeds a few chunks a second: generous, never a timed assertion


def upload(rig: Rig, tmp_path: Path, name: str, text: str, kb: str = "manuals") -> str:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    (result,) = rig.engine.library.ingest([(path, name)], kb=kb)
    assert result.status == "added", result.message
    return str(result.doc_id)


def vector_ids(rig: Rig) -> set[str]:
    return rig.engine._store.vectors.ids()


def catalog_ids(rig: Rig, kb: str = "manuals") -> set[str]:
    return {cid for cid, where in rig.engine._store.catalog.chunk_kbs().items() if where == kb}


def finished(rig: Rig, kb: str = "manuals") -> None:
    """Wait until the worker has done every step over ``kb``."""
    assert rig.engine.enrichment is not None
    deadline = time.monotonic() + WAIT_S
    while rig.engine.enrichment.progress(kb).indexing:
        assert time.monotonic() < deadline, rig.engine.enrichment.progress(kb)
        time.sleep(0.2)


def test_an_upload_is_found_by_keywords_before_its_vectors_and_resume_finishes(
    make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    rig = make_engine(**BACKGROUND)
    enrichment = rig.engine.enrichment
    assert enrichment is not None
    enrichment.pause("manuals")  # nothing is embedded until resumed
    upload(rig, tmp_path, "appliances.md", MANUAL)

    mine = catalog_ids(rig)
    assert len(mine) >= 4 and not mine & vector_ids(rig)  # stored, not one vector yet
    result = rig.engine.chat.retrieve("How do I descale the kettle with citric acid?", frozenset({"manuals"}))
    hits = {r.channel: r.hits for r in result.channel_results}
    assert hits["vector"] == () and hits["keyword"]  # the vector channel answers what exists: nothing
    assert any("citric acid" in c.chunk.text for c in result.chunks)
    progress = enrichment.progress("manuals")
    assert progress.paused and progress.indexing
    vectors = progress.steps[0]
    assert (vectors.step, vectors.done, vectors.total) == ("vectors", 0, len(mine))
    assert progress.said()[0].code == "enrich.progress_paused"

    # The answer says the base is still being indexed, in a typed record.
    rig.llm.enqueue("Descale it with citric acid once a month [1].")
    events = list(rig.engine.chat.ask("How do I descale the kettle?", (), frozenset({"manuals"})))
    notes = [s for e in events if isinstance(e, NoticeEvent) for s in e.said]
    assert [(s.code, s.values) for s in notes] == [("enrich.still_indexing", {"kbs": ["manuals"]})]
    assert notes[0].worded(chinese=True) is not None and "仍在建立索引" in str(notes[0].worded(chinese=True))

    enrichment.resume("manuals")
    finished(rig)
    assert mine <= vector_ids(rig)
    done = enrichment.progress("manuals")
    assert not done.paused and (done.steps[0].done, done.steps[0].total) == (len(mine), len(mine))
    assert done.said()[0].code == "enrich.done"
    result = rig.engine.chat.retrieve("How do I descale the kettle with citric acid?", frozenset({"manuals"}))
    assert {r.channel: bool(r.hits) for r in result.channel_results}["vector"]
    assert rig.engine.enrichment.indexing(frozenset({"manuals"})) == []


def test_a_restart_mid_way_keeps_the_pause_and_resumes_to_the_end(
    make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    first = make_engine("state", **BACKGROUND)
    assert first.engine.enrichment is not None
    first.engine.enrichment.pause("manuals")
    upload(first, tmp_path, "appliances.md", MANUAL)
    store = first.engine._store
    todo = VectorsStep().pending(store, "manuals")
    assert VectorsStep().run(store, todo[:2]) == 2  # one batch ran before the restart
    mine = catalog_ids(first)
    first.engine.close()

    second = make_engine("state", **BACKGROUND)  # the same state folder: a restart
    enrichment = second.engine.enrichment
    assert enrichment is not None
    progress = enrichment.progress("manuals")
    assert progress.paused  # kept in the catalog across the restart
    assert (progress.steps[0].done, progress.steps[0].total) == (2, len(mine))
    assert len(mine & vector_ids(second)) == 2  # the start's reconcile left the rest to the background

    enrichment.resume("manuals")
    finished(second)
    assert mine <= vector_ids(second)


def test_a_deleted_documents_pending_work_goes(make_engine: Callable[..., Rig], tmp_path: Path) -> None:
    rig = make_engine(**BACKGROUND)
    enrichment = rig.engine.enrichment
    assert enrichment is not None
    enrichment.pause("manuals")
    keep = upload(rig, tmp_path, "appliances.md", MANUAL)
    gone = upload(rig, tmp_path, "router.md", "# Router\n\nThe Vega router's gateway password is pelican.\n")
    before = enrichment.progress("manuals").steps[0].total

    rig.engine.library.delete(gone)

    after = enrichment.progress("manuals").steps[0]
    assert after.total < before and after.done == 0
    enrichment.resume("manuals")
    finished(rig)
    vectors = vector_ids(rig)
    assert catalog_ids(rig) <= vectors
    assert not any(cid.startswith(gone) for cid in vectors)  # nothing of the deleted one was embedded
    assert any(cid.startswith(keep) for cid in vectors)


def test_a_refused_upload_leaves_nothing_to_enrich(make_engine: Callable[..., Rig], tmp_path: Path) -> None:
    rig = make_engine(**(BACKGROUND | {"ingest": {"chunk_size": 120, "chunk_overlap": 0, "max_chunks": 3}}))
    enrichment = rig.engine.enrichment
    assert enrichment is not None
    good = tmp_path / "router.md"
    good.write_text("# Router\n\nThe Vega router's gateway password is pelican.\n", "utf-8")
    big = tmp_path / "appliances.md"
    big.write_text(MANUAL, "utf-8")  # more chunks than max_chunks: refused after chunking

    results = rig.engine.library.ingest([(big, big.name), (good, good.name)], kb="manuals")

    assert [r.status for r in results] == ["failed", "added"]
    finished(rig)
    store = rig.engine._store
    assert {d.name for d in store.catalog.documents()} == {"router.md"}
    assert vector_ids(rig) == catalog_ids(rig)  # the refused file left no vectors, and no work
    assert store.files is not None and not store.files.orphans([str(results[1].doc_id)])
    assert enrichment.progress("manuals").steps[0].total == len(catalog_ids(rig))


def test_background_off_indexes_inline(make_engine: Callable[..., Rig], tmp_path: Path) -> None:
    rig = make_engine(enrich={"background": True, "kbs": ["elsewhere"]}, ingest=BACKGROUND["ingest"])
    upload(rig, tmp_path, "appliances.md", MANUAL)  # "manuals" is not among the bases enriched in the background

    assert catalog_ids(rig) <= vector_ids(rig)  # embedded before the upload returned
    assert rig.engine.enrichment is not None
    progress = rig.engine.enrichment.progress("manuals")
    assert not progress.background and not progress.indexing


def test_the_api_shows_progress_and_editors_pause_and_resume(serve_api: Callable[..., Any], tmp_path: Path) -> None:
    served = serve_api(accounts=True, **BACKGROUND)
    engine = served.rig.engine
    engine.enrichment.pause("manuals")
    upload(served.rig, tmp_path, "appliances.md", MANUAL)
    total = len(catalog_ids(served.rig))

    with served.client("rita") as reader, served.client("eddie") as editor:
        shown = reader.get("/v1/knowledge-bases/manuals/enrichment")
        assert shown.status_code == 200, shown.text
        body = shown.json()
        assert body["paused"] and body["indexing"] and body["background"]
        assert body["steps"][0] == {"step": "vectors", "done": 0, "total": total, "per_minute": 0.0}
        assert body["lines"][0]["code"] == "enrich.progress_paused"
        assert f"vectors for 0 of {total} passages; paused" in body["lines"][0]["message"]

        searched = reader.post("/v1/retrieve", json={"query": "How often does the Orion kettle descale?"})
        assert searched.status_code == 200 and searched.json()["indexing"] == ["manuals"], searched.text

        refused = reader.post("/v1/knowledge-bases/manuals/enrichment/resume")
        assert refused.status_code == 403  # a reader may not resume it
        assert engine.enrichment.progress("manuals").paused

        resumed = editor.post("/v1/knowledge-bases/manuals/enrichment/resume")
        assert resumed.status_code == 200 and not resumed.json()["paused"]
        finished(served.rig)
        body = reader.get("/v1/knowledge-bases/manuals/enrichment").json()
        assert body["steps"][0]["done"] == total and not body["indexing"]
        done = {"code": "enrich.done", "values": {"kb": "manuals"}, "message": "manuals: fully indexed."}
        assert body["lines"] == [done]
        assert reader.post("/v1/retrieve", json={"query": "Orion kettle"}).json()["indexing"] == []


def test_the_worker_waits_while_an_answer_is_written(
    make_settings: Callable[..., Any], shared_models: Any, tmp_path: Path
) -> None:
    from ragapp.enrich.runner import EnrichRunner
    from ragapp.enrich.state import EnrichState
    from ragapp.ingest.pipeline import Ingestor, KnowledgeStore

    settings = make_settings(**BACKGROUND)
    store = KnowledgeStore.open(tmp_path / "state", shared_models.embedder(settings), settings.store)
    seen: list[int] = []  # the vectors there were each time the worker asked whether an answer is being written

    def answering() -> bool:
        seen.append(len(store.vectors.ids()))
        return len(seen) <= 3  # an answer in flight for the first three looks

    state = EnrichState(store.catalog.database).start()
    runner = EnrichRunner(store, state, settings.enrich, [VectorsStep()], answering)
    path = tmp_path / "appliances.md"
    path.write_text(MANUAL, "utf-8")
    (result,) = Ingestor(store, settings.ingest, runner).ingest_files([(path, path.name)], kb="manuals")
    assert result.status == "added" and store.vectors.ids() == set()  # the worker is not started: all left to do

    assert runner.finish("manuals")  # in this thread, as the worker would

    assert seen[:4] == [0, 0, 0, 0]  # no batch while the answer was in flight, the first one once it ended
    assert store.vectors.ids() == set(store.catalog.chunk_kbs())
    store.catalog.close()


def test_the_knowledge_tab_pauses_and_resumes_for_editors_only(serve_api: Callable[..., Any], tmp_path: Path) -> None:
    """The Knowledge tab's controls (``ragapp.ui.enrich_progress``): shown to an editor with the base picked,
    hidden from a reader, whose click is refused with a message; the editor's clicks pause and resume."""
    import gradio as gr

    from ragapp.ui.enrich_progress import EnrichHandlers

    served = serve_api(accounts=True, **BACKGROUND)
    engine = served.rig.engine
    engine.enrichment.pause("manuals")
    upload(served.rig, tmp_path, "appliances.md", MANUAL)
    handlers = EnrichHandlers(engine)
    reader, editor = gr.Request(username="rita"), gr.Request(username="eddie")

    line, controls, kbs = handlers.refresh(None, reader)
    assert "paused" in line and controls["visible"] is False and kbs["choices"] == []
    with pytest.raises(gr.Error):
        handlers.resume("manuals", reader)
    assert engine.enrichment.progress("manuals").paused

    line, controls, kbs = handlers.refresh(None, editor)
    assert controls["visible"] is True and kbs["value"] == "manuals"
    handlers.resume("manuals", editor)
    assert not engine.enrichment.progress("manuals").paused
    line, *_ = handlers.pause("manuals", editor)
    assert engine.enrichment.progress("manuals").paused and "paused" in line
    handlers.resume("manuals", editor)
    finished(served.rig)
    assert handlers.refresh("manuals", editor)[0] == ""  # done: no line, no controls
