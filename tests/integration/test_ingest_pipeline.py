"""Ingest, replace, delete and reconcile against the real stores: SQLite catalog, Chroma and BM25 must agree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragapp.core.errors import IngestError
from ragapp.core.types import IngestProgress
from ragapp.models.embedders import EMBEDDERS
from ragapp.store.catalog import Catalog
from ragapp.store.vectors import ChromaVectorIndex

if TYPE_CHECKING:
    from conftest import Rig, StoreSnapshot

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures"

pytestmark = pytest.mark.integration

START_QUESTION = "How do I start the service?"


def fixture(name: str) -> tuple[Path, str]:
    return FIXTURES / name, name


@pytest.fixture
def kb(make_engine: Callable[..., Rig]) -> Rig:
    """A small knowledge base: sample.md (2 chunks) and sample.txt (1 chunk)."""
    rig = make_engine()
    results = rig.engine.library.ingest([fixture("sample.md"), fixture("sample.txt")])
    assert [(r.name, r.status) for r in results] == [("sample.md", "added"), ("sample.txt", "added")]
    return rig


def doc_id_of(rig: Rig, name: str) -> str:
    (doc,) = [d for d in rig.engine.library.documents() if d.name == name]
    return doc.doc_id


def test_new_engine_starts_empty_and_consistent(
    make_engine: Callable[..., Rig], store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    rig = make_engine()
    snap = store_snapshot(rig)
    assert snap.documents == ()
    assert snap.agree() and not snap.catalog_ids
    assert snap.keyword_version == snap.catalog_version == 0
    assert rig.engine.chat.retrieve(START_QUESTION).chunks == ()


def test_ingest_adds_to_all_three_stores(
    make_engine: Callable[..., Rig], store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    rig = make_engine()
    progress: list[tuple[float, str]] = []
    results = rig.engine.library.ingest(
        [fixture("sample.md"), fixture("sample.txt"), fixture("sample.pdf")],
        lambda update: progress.append((update.fraction, update.text)),
    )

    assert [(r.status, r.chunks) for r in results] == [("added", 2), ("added", 1), ("added", 2)]
    assert results[0].message == "sample.md: added to 'default' (2 chunks)."
    snap = store_snapshot(rig)
    assert snap.documents == ("sample.md", "sample.pdf", "sample.txt")
    assert len(snap.catalog_ids) == 5
    assert snap.agree(), snap
    assert snap.keyword_version == snap.catalog_version == 3
    assert {cid.rsplit("-", 1)[0] for cid in snap.catalog_ids} == {r.doc_id for r in results}
    status = rig.engine.status()
    assert (status.documents, status.chunks) == (3, 5)
    fractions = [f for f, _ in progress]
    assert fractions == sorted(fractions) and fractions[0] >= 0 and fractions[-1] == 1.0
    assert progress[-1][1] == "updating keyword index"


def test_ingest_reports_typed_progress_per_file_and_phase(make_engine: Callable[..., Rig]) -> None:
    rig = make_engine()
    updates: list[IngestProgress] = []
    rig.engine.library.ingest([fixture("sample.pdf"), fixture("sample.md")], updates.append)
    phases = [(u.file, u.phase) for u in updates]
    assert list(dict.fromkeys(phases)) == [
        ("sample.pdf", "parse"),
        ("sample.pdf", "tables"),  # a PDF's pages searched for tables
        ("sample.pdf", "figures"),  # ... and for figures
        ("sample.pdf", "chunk"),
        ("sample.pdf", "embed"),
        ("sample.pdf", "store"),
        ("sample.md", "parse"),
        ("sample.md", "chunk"),
        ("sample.md", "embed"),
        ("sample.md", "store"),
        (None, "index"),
    ]
    # Pages read and searched, chunks embedded: done of total, for a page to draw in its own words.
    assert [(u.done, u.total) for u in updates if u.phase == "parse" and u.total] == [(2, 2)]
    assert [(u.done, u.total) for u in updates if u.phase == "tables"] == [(1, 2), (2, 2)]
    last_embed = [u for u in updates if u.file == "sample.md" and u.phase == "embed"][-1]
    assert (last_embed.done, last_embed.total, last_embed.message) == (2, 2, "embedded 2/2 chunks")
    assert updates[0].text == "sample.pdf: reading"
    # Each report says which file of the batch it is about; the batch's last one, that every file is done.
    assert {(u.file, u.index, u.count) for u in updates[:-1]} == {("sample.pdf", 0, 2), ("sample.md", 1, 2)}
    assert (updates[-1].file, updates[-1].index, updates[-1].count) == (None, 2, 2)


def test_ingested_text_is_retrievable_with_its_location(kb: Rig) -> None:
    result = kb.engine.chat.retrieve(START_QUESTION)
    top = result.chunks[0]
    assert top.chunk.source == "sample.md"
    assert top.chunk.heading == "Getting Started"
    assert top.chunk.chunk_id == f"{doc_id_of(kb, 'sample.md')}-0000"
    assert set(top.channel_ranks) == {"vector", "keyword"}


def test_pdf_chunks_keep_their_page(make_engine: Callable[..., Rig]) -> None:
    rig = make_engine()
    rig.engine.library.ingest([fixture("sample.pdf")])
    top = rig.engine.chat.retrieve("Which page talks about bananas?").chunks[0]
    assert (top.chunk.page, top.chunk.text) == (2, "Page two talks about bananas.")


def test_delete_removes_the_document_everywhere(kb: Rig, store_snapshot: Callable[[Rig], StoreSnapshot]) -> None:
    md_id = doc_id_of(kb, "sample.md")
    before = store_snapshot(kb)
    md_chunks = {cid for cid in before.catalog_ids if cid.startswith(md_id)}
    assert len(md_chunks) == 2
    assert kb.engine.chat.retrieve(START_QUESTION).chunks[0].chunk.doc_id == md_id

    assert kb.engine.library.delete(md_id) == "sample.md"

    after = store_snapshot(kb)
    assert after.documents == ("sample.txt",)
    assert after.agree(), after
    assert after.catalog_ids == before.catalog_ids - md_chunks
    assert after.keyword_version == after.catalog_version == before.catalog_version + 1
    result = kb.engine.chat.retrieve(START_QUESTION)
    assert all(c.chunk.doc_id != md_id for c in result.candidates)
    assert all(h.chunk_id not in md_chunks for r in result.channel_results for h in r.hits)


def test_deleting_a_missing_document_says_so(kb: Rig) -> None:
    md_id = doc_id_of(kb, "sample.md")
    kb.engine.library.delete(md_id)
    with pytest.raises(IngestError, match="no longer in the knowledge base"):
        kb.engine.library.delete(md_id)


def test_duplicate_upload_adds_nothing(kb: Rig, store_snapshot: Callable[[Rig], StoreSnapshot]) -> None:
    before = store_snapshot(kb)
    (result,) = kb.engine.library.ingest([(FIXTURES / "sample.txt", "copy of sample.txt")])
    assert result.status == "duplicate"
    assert result.doc_id == doc_id_of(kb, "sample.txt")
    assert (
        result.message
        == "copy of sample.txt: already in the knowledge base as sample.txt in 'default'; nothing changed."
    )
    assert store_snapshot(kb) == before


def test_concurrent_uploads_of_the_same_file_add_it_once(
    make_engine: Callable[..., Rig], store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    rig = make_engine()
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = [pool.submit(rig.engine.library.ingest, [fixture("sample.md")]) for _ in range(2)]
        statuses = sorted(f.result()[0].status for f in futures)
    assert statuses == ["added", "duplicate"]
    snap = store_snapshot(rig)
    assert snap.documents == ("sample.md",)
    assert len(snap.catalog_ids) == 2 and snap.agree()


def test_same_name_with_new_content_replaces_the_old_version(
    make_engine: Callable[..., Rig], tmp_path: Path, store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    rig = make_engine()
    old_file, new_file = tmp_path / "v1.txt", tmp_path / "v2.txt"
    old_file.write_text("The gateway password is osprey. Change it every spring.", "utf-8")
    new_file.write_text("The gateway password is pelican. Change it every autumn.", "utf-8")

    (first,) = rig.engine.library.ingest([(old_file, "notes.txt")])
    old_ids = store_snapshot(rig).catalog_ids
    (second,) = rig.engine.library.ingest([(new_file, "notes.txt")])

    assert first.status == "added"
    assert second.status == "replaced"
    assert second.message == "notes.txt: replaced the earlier version in 'default' (1 chunks)."
    assert second.doc_id != first.doc_id
    assert [(d.name, d.doc_id) for d in rig.engine.library.documents()] == [("notes.txt", second.doc_id)]
    snap = store_snapshot(rig)
    assert snap.agree(), snap
    assert not snap.catalog_ids & old_ids
    assert {cid.rsplit("-", 1)[0] for cid in snap.catalog_ids} == {second.doc_id}
    assert rig.engine.chat.retrieve("osprey").channel_results[1].hits == ()  # the old word is gone from BM25
    assert rig.engine.chat.retrieve("pelican").chunks[0].chunk.doc_id == second.doc_id


def test_bad_files_fail_alone_and_leave_the_store_unchanged(
    kb: Rig, tmp_path: Path, store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    before = store_snapshot(kb)

    results = kb.engine.library.ingest(
        [
            fixture("corrupt.pdf"),
            fixture("sample.html"),
            fixture("empty.txt"),
            fixture("blank.pdf"),
            (picture, "photo.png"),
        ]
    )

    assert [(r.name, r.status) for r in results] == [
        ("corrupt.pdf", "failed"),
        ("sample.html", "added"),
        ("empty.txt", "failed"),
        ("blank.pdf", "failed"),
        ("photo.png", "failed"),
    ]
    corrupt, html, empty, blank, png = results
    assert corrupt.message.startswith("corrupt.pdf: could not read this .pdf file; it may be corrupt")
    assert empty.message == "empty.txt: the file is empty."
    assert blank.message.startswith("blank.pdf: no text found.")
    assert png.message == "photo.png: this is not an image that can be read (UnidentifiedImageError)."
    assert all(r.doc_id is None and r.chunks == 0 for r in (corrupt, empty, blank, png))

    after = store_snapshot(kb)
    assert after.documents == ("sample.html", "sample.md", "sample.txt")
    assert after.agree(), after
    assert after.catalog_ids - before.catalog_ids == {f"{html.doc_id}-{i:04d}" for i in range(html.chunks)}
    assert after.catalog_version == before.catalog_version + 1


def test_failed_catalog_write_removes_the_new_vectors(
    kb: Rig, monkeypatch: pytest.MonkeyPatch, store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    before = store_snapshot(kb)

    def disk_full(*_args: object, **_kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(Catalog, "add_document", disk_full)
    (result,) = kb.engine.library.ingest([fixture("sample.html")])

    assert result.status == "failed"
    assert "disk full" in result.message
    assert store_snapshot(kb) == before


def test_oversized_file_is_refused(
    make_engine: Callable[..., Rig], tmp_path: Path, store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    rig = make_engine(ingest={"max_file_mb": 0.001})  # ~1 kB
    big = tmp_path / "big.txt"
    big.write_text("A long line about robot vacuums. " * 200, "utf-8")

    big_result, small_result = rig.engine.library.ingest([(big, "big.txt"), fixture("sample.txt")])

    assert big_result.status == "failed"
    assert big_result.message == "big.txt: 0.0 MB is over the 0.001 MB limit (RAGAPP_INGEST__MAX_FILE_MB)."
    assert small_result.status == "added"
    assert store_snapshot(rig).documents == ("sample.txt",)


_FRESH_PROCESS = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import conftest  # registers the scripted LLM, as in the parent
from ragapp.engine.build import build_engine
engine = build_engine(conftest.settings_on(Path(sys.argv[2])))
result = engine.chat.retrieve(sys.argv[3])
print(json.dumps({
    "documents": sorted(d.name for d in engine.library.documents()),
    "top": result.chunks[0].chunk.chunk_id if result.chunks else None,
    "candidates": [c.chunk.chunk_id for c in result.candidates],
}))
"""


def test_a_fresh_process_sees_the_same_knowledge(kb: Rig, store_snapshot: Callable[[Rig], StoreSnapshot]) -> None:
    kb.engine.library.ingest([fixture("sample.pdf")])
    expected = kb.engine.chat.retrieve(START_QUESTION)
    before = store_snapshot(kb)
    kb.engine.close()

    env = os.environ | {"PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    proc = subprocess.run(
        [sys.executable, "-c", _FRESH_PROCESS, str(REPO_ROOT / "tests"), str(kb.state_dir), START_QUESTION],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])

    assert seen["documents"] == ["sample.md", "sample.pdf", "sample.txt"]
    assert seen["top"] == expected.chunks[0].chunk.chunk_id
    assert seen["candidates"] == [c.chunk.chunk_id for c in expected.candidates]
    assert store_snapshot(kb) == before  # starting up changed nothing on disk


def test_reconcile_restores_what_was_lost_behind_the_catalogs_back(
    kb: Rig, make_engine: Callable[..., Rig], store_snapshot: Callable[[Rig], StoreSnapshot]
) -> None:
    before = store_snapshot(kb)
    md_id = doc_id_of(kb, "sample.md")
    kb.engine.close()

    vectors = ChromaVectorIndex.embedded(kb.state_dir / "chroma", kb.embedder)
    lost = sorted(cid for cid in before.vector_ids if cid.startswith(md_id))
    vectors.delete(lost)
    ghost = EMBEDDERS.get(kb.settings.embedding.backend)(kb.settings).embed_passages(["a chunk nobody knows"])
    vectors.add(["ghost-0000"], ghost, ["ghost"])
    shutil.rmtree(kb.state_dir / "bm25")
    damaged = store_snapshot(kb)
    assert damaged.vector_ids == (before.vector_ids - set(lost)) | {"ghost-0000"}
    assert damaged.keyword_ids == ()

    rebuilt = make_engine()  # same state dir: build_engine reconciles on start
    assert rebuilt.state_dir == kb.state_dir

    after = store_snapshot(rebuilt)
    assert after == before
    assert after.agree()
    assert rebuilt.engine.chat.retrieve(START_QUESTION).chunks[0].chunk.doc_id == md_id
