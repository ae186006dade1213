"""An ingest killed with SIGKILL at each seam between the stores, then the app started again over the same state.

Ingesting writes, in order: the vectors (Chroma), the catalog transaction (SQLite, the source of truth), the
removal of a replaced version's vectors, the keyword index (BM25, rebuilt into a folder swapped in for the old
one) and, for the demo, the mark that it was loaded. A driver process (``crash_driver``, forked from the test
process's forkserver) ingests some documents, then wraps the function at one seam so that it kills its own process there
and ingests one more. The test then builds the engine again over that state (``build_engine`` reconciles) and
checks that the catalog, the vectors and the keywords agree, that every document stored before the crash is
still there and still found by both channels, and that the interrupted document is all there or not at all,
and can be added (again). No test hook in the product: the driver patches the real functions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragapp.config import Settings
from tests.hostile import crash_driver
from tests.hostile.bounded import forked

if TYPE_CHECKING:
    from tests.conftest import Rig, StoreSnapshot

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Doc:
    name: str
    text: str
    question: str  # a question only this document answers: its made-up word is in no other document


def _doc(name: str, word: str, subject: str, paragraphs: int = 1) -> Doc:
    body = "\n\n".join(
        f"Section {n}. The {word} {subject} is described here in part {n}: it weighs {n + 2} kilograms, runs "
        f"for {n * 7} minutes on a charge and ships with a {word} manual that covers part {n} in detail."
        for n in range(1, paragraphs + 1)
    )
    return Doc(name, f"# {word} {subject}\n\n{body}\n", f"How long does the {word} {subject} run?")


BEFORE = (
    _doc("kettle.md", "zorblat", "kettle"),
    _doc("lamp.md", "quintaro", "desk lamp"),
)
NEW = _doc("heater.md", "vexmorin", "space heater")
LONG = _doc("atlas.md", "plenthor", "field atlas", paragraphs=68)  # 34 chunks: over one embedding batch (32)
NEWER_LAMP = _doc("lamp.md", "drastovel", "floor lamp")  # a new version of lamp.md: replaces it


@dataclass(frozen=True)
class Case:
    point: str
    target: Doc
    survives: bool  # what the catalog says after the crash: committed before it, or not
    demo: bool = False  # loaded as the demo knowledge base on a fresh start


CASES = [
    Case("mid-embedding", LONG, survives=False),
    Case("vectors-written", NEW, survives=False),  # vectors in Chroma, no catalog entry
    Case("catalog-uncommitted", NEW, survives=False),  # rows inserted in the open transaction
    Case("catalog-committed", NEWER_LAMP, survives=True),  # replaced version's vectors still there, BM25 stale
    Case("keywords-mid-swap", NEW, survives=True),  # the old BM25 folder gone, the new one not yet in place
    Case("before-demo-mark", NEW, survives=True, demo=True),  # demo indexed, never marked as loaded
]


def _write(folder: Path, doc: Doc) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / doc.name
    path.write_text(doc.text, "utf-8")
    return path


def _crash(tmp_path: Path, settings: Settings, case: Case) -> dict[str, Any]:
    """Run the driver until it kills itself at ``case.point``; returns what it stored before arming."""
    before = [[str(_write(tmp_path / "before", d)), d.name] for d in BEFORE]
    target = _write(tmp_path / ("demo" if case.demo else "upload"), case.target)
    settings_file = tmp_path / "settings.json"
    settings_file.write_text(settings.model_dump_json(exclude={"llm"}), "utf-8")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps({"before": before, "target": [str(target), target.name], "point": case.point}))
    out = tmp_path / "driver.out"
    child = forked(crash_driver.run, str(settings_file), str(plan_file), str(out))
    child.join(240)
    if child.is_alive():
        child.kill()
        child.join()
    stdout = out.read_text("utf-8") if out.exists() else ""
    stderr = Path(f"{out}.err").read_text("utf-8") if Path(f"{out}.err").exists() else ""
    phases = {line["phase"]: line for line in map(json.loads, stdout.splitlines()) if "phase" in line}
    assert "armed" in phases, f"the driver failed before the crash:\n{stderr[-4000:]}"
    assert "survived" not in phases, f"{case.point}: the kill point was never reached"
    assert child.exitcode == -9, f"{case.point}: expected death by SIGKILL, got {child.exitcode}\n{stderr[-4000:]}"
    return phases["before"]


def _found_by_both_channels(rig: Rig, doc_id: str, doc: Doc) -> None:
    result = rig.engine.chat.retrieve(doc.question)
    assert result.candidates and result.candidates[0].chunk.doc_id == doc_id, f"{doc.name} is not found first"
    for channel in result.channel_results:
        hit_docs = {hit.chunk_id.rsplit("-", 1)[0] for hit in channel.hits}
        assert doc_id in hit_docs, f"the {channel.channel} channel no longer finds {doc.name}"
    assert {c.channel for c in result.channel_results} == {"vector", "keyword"}


@pytest.mark.parametrize("case", CASES, ids=[c.point for c in CASES])
def test_a_killed_ingest_leaves_stores_that_agree_and_lose_nothing(
    case: Case,
    tmp_path: Path,
    make_settings: Callable[..., Settings],
    make_engine: Callable[..., Rig],
    store_snapshot: Callable[[Rig], StoreSnapshot],
) -> None:
    overrides: dict[str, Any] = {"paths": {"load_demo": True, "demo_dir": tmp_path / "demo"}} if case.demo else {}
    stored = _crash(tmp_path, make_settings("state", **overrides), case)
    before_ids = frozenset(stored["chunks"])
    before_docs: dict[str, str] = stored["documents"]
    assert sorted(before_docs) == sorted(d.name for d in BEFORE) and before_ids

    rig = make_engine("state", **overrides)  # the app starts again over the same state: reconcile runs
    after = store_snapshot(rig)
    assert after.agree(), f"catalog, vectors and keywords disagree after {case.point}: {after}"
    assert after.keyword_version == after.catalog_version

    records = {d.name: d for d in rig.engine.library.documents()}
    target = records.get(case.target.name)
    replaced = case.target.name in before_docs
    ours = frozenset(cid for cid in after.catalog_ids if target is not None and cid.startswith(target.doc_id + "-"))
    if target is not None and target.doc_id != before_docs.get(case.target.name):  # the new document is in
        assert case.survives, f"{case.point}: a document whose catalog write never committed came back"
        assert len(ours) == target.chunk_count > 0  # all of its chunks, in every store (agree)
        kept = before_ids - {cid for cid in before_ids if replaced and cid.startswith(before_docs[case.target.name])}
        assert after.catalog_ids == kept | ours  # a replaced version is gone everywhere, the rest untouched
        _found_by_both_channels(rig, target.doc_id, case.target)
    else:  # the new document is not in at all: the stores hold exactly what they held before the crash
        assert not case.survives, f"{case.point}: a committed document was lost"
        assert after.catalog_ids == before_ids

    for doc in BEFORE:
        if doc.name == case.target.name and target is not None and target.doc_id != before_docs[doc.name]:
            continue  # replaced by the interrupted upload, which committed
        assert records[doc.name].doc_id == before_docs[doc.name]
        _found_by_both_channels(rig, before_docs[doc.name], doc)

    # The interrupted document can be added (again): an upload that did not commit goes in now, one that did
    # is recognised and nothing changes.
    path = tmp_path / ("demo" if case.demo else "upload") / case.target.name
    (result,) = rig.engine.library.ingest([(path, case.target.name)], kb="demo" if case.demo else "default")
    assert result.status == ("duplicate" if case.survives else "replaced" if replaced else "added"), result.message
    final = store_snapshot(rig)
    assert final.agree()
    new_id = next(d.doc_id for d in rig.engine.library.documents() if d.name == case.target.name)
    _found_by_both_channels(rig, new_id, case.target)
    if case.survives:
        assert final == after
    for doc in BEFORE:
        if doc.name != case.target.name:
            _found_by_both_channels(rig, before_docs[doc.name], doc)
