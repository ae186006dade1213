"""The answer cache per knowledge base, through the real engine on SQLite and on PostgreSQL (the scripted model at
the LLM seam): a change to a document of knowledge base "a", by any path (upload, replace, re-index, tags, the
folder sync, delete, move), makes the answers over scopes that include "a" miss and keeps those over "b" alone; a
new knowledge base changes only the answers over all of them; replicas sharing PostgreSQL agree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.events import AnswerEvent, CachedEvent, EngineEvent
from tests.integration.sync_helpers import aged, write

pytestmark = pytest.mark.integration

ALPHA = "# Alpha robot\n\nThe Alpha robot's battery lasts 90 minutes on a full charge.\n"
BETA = "# Beta robot\n\nThe Beta robot weighs 3.4 kg and is painted green.\n"
GAMMA = "# Gamma robot\n\nThe Gamma robot is blue and has six wheels.\n"
# name: the question, the scope it is asked over (None: every knowledge base), the model's reply when asked anew.
ASKS: dict[str, tuple[str, frozenset[str] | None, str]] = {
    "a": ("How long does the Alpha robot's battery last?", frozenset({"a"}), "It lasts 90 minutes [1]."),
    "b": ("How much does the Beta robot weigh?", frozenset({"b"}), "The Beta robot weighs 3.4 kg [1]."),
    "all": ("How long does the Alpha robot's battery last?", None, "The battery lasts 90 minutes [1]."),
}
# Only the syncs a test asks for; a channel never given up on while the machine is busy (a degraded search's answer
# is not kept, and each answer asked anew here must be).
QUIET = {"sync": {"enabled": False, "settle_s": 0.3}, "retrieval": {"channel_timeout_s": 300}}


@pytest.fixture(params=["sqlite", "postgres"])
def database(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The store settings of one backend: the state folder's SQLite files, or a shared PostgreSQL database."""
    return {} if request.param == "sqlite" else {"store": {"database_url": request.getfixturevalue("postgres_url")}}


def ingest(rig: Any, tmp_path: Path, name: str, text: str, kb: str) -> str:
    path = tmp_path / f"{kb}-{name}"
    path.write_text(text, "utf-8")
    (result,) = rig.engine.library.ingest([(path, name)], kb=kb)
    assert result.status in ("added", "replaced"), result.message
    return str(result.doc_id)


def answered(rig: Any, name: str) -> bool:
    """Ask ``name``'s question over its scope; whether the answer came from the cache. Asked anew, the answer must
    be one the cache keeps (so the next change is tested against a kept answer)."""
    question, kbs, reply = ASKS[name]
    rig.llm.reply_with(lambda _messages: reply)
    calls = len(rig.llm.calls)
    events: list[EngineEvent] = list(rig.engine.chat.ask(question, kbs=kbs, mode="workflow"))
    rig.llm.reply_with(None)
    answer = next(e for e in events if isinstance(e, AnswerEvent))
    if any(isinstance(e, CachedEvent) for e in events):
        assert len(rig.llm.calls) == calls, name  # not asked
        return True
    assert answer.text == reply and answer.grounded and answer.citations, (name, answer)
    assert answer.confidence is not None and answer.confidence.level != "low", (name, answer.confidence)
    return False


def hits(rig: Any) -> set[str]:
    return {name for name in ASKS if answered(rig, name)}


def test_a_change_in_one_knowledge_base_keeps_the_answers_over_the_others(
    make_engine: Callable[..., Any], database: dict[str, Any], tmp_path: Path
) -> None:
    rig = make_engine(answer_cache={"enabled": True}, **QUIET, **database)
    ids = {"alpha": ingest(rig, tmp_path, "alpha.md", ALPHA, "a"), "beta": ingest(rig, tmp_path, "beta.md", BETA, "b")}
    ids["gamma"] = ingest(rig, tmp_path, "gamma.md", GAMMA, "a")
    folder = tmp_path / "handbook"
    aged(write(folder, "robots/delta.md", "# Delta robot\n\nThe Delta robot is red.\n"))
    library, sync = rig.engine.library, rig.engine.sync
    assert hits(rig) == set() and hits(rig) == set(ASKS)  # answered, then kept

    changes: list[tuple[str, Callable[[], object], set[str]]] = [  # what happens, and the answers still kept
        ("a document uploaded to a", lambda: ingest(rig, tmp_path, "delta.md", "The Delta robot is red.\n", "a"),
         {"b"}),
        ("a document replaced in a", lambda: ingest(rig, tmp_path, "gamma.md", GAMMA.replace("six", "four"), "a"),
         {"b"}),
        ("a document of a indexed again", lambda: library.reindex(ids["alpha"]), {"b"}),
        ("a document of a tagged", lambda: library.set_tags(ids["alpha"], ["robots"]), {"b"}),
        ("a folder synced into a", lambda: synced(sync.add("handbook", "folder", str(folder), "a", start=False),
                                                  "added"), {"b"}),
        ("a synced file renamed", lambda: synced((folder / "robots/delta.md").rename(folder / "old-delta.md"),
                                                 "renamed"), {"b"}),
        ("a synced folder dropped with its documents", lambda: sync.remove("handbook", delete_documents=True),
         {"b"}),
        ("a document of a deleted", lambda: library.delete(_doc(rig, "delta.md", "a")), {"b"}),
        ("a document moved from a to c", lambda: library.move(_doc(rig, "gamma.md", "a"), "c"), {"b"}),
        ("a document moved from c to b", lambda: library.move(_doc(rig, "gamma.md", "c"), "b"), {"a"}),
        ("a document uploaded to a new base", lambda: ingest(rig, tmp_path, "e.md", "The Echo robot is pink.\n", "e"),
         {"a", "b"}),
        ("nothing", lambda: None, set(ASKS)),
    ]  # fmt: skip

    def synced(_before: object, change: str) -> None:
        report = sync.run("handbook").report
        assert report is not None and getattr(report, change), report

    for what, change, kept in changes:
        change()
        assert hits(rig) == kept, what
        assert hits(rig) == set(ASKS), what  # the new answers are kept in turn


def _doc(rig: Any, name: str, kb: str) -> str:
    (found,) = [d.doc_id for d in rig.engine.library.documents() if d.name == name and d.kb == kb]
    return str(found)


def test_replicas_on_one_database_share_the_answers_and_the_versions(
    make_engine: Callable[..., Any], postgres_url: str, tmp_path: Path
) -> None:
    shared = {"answer_cache": {"enabled": True}, "store": {"database_url": postgres_url}}
    first = make_engine("first", **shared)
    ingest(first, tmp_path, "alpha.md", ALPHA, "a")
    ingest(first, tmp_path, "beta.md", BETA, "b")
    assert not answered(first, "a") and not answered(first, "b")
    second = make_engine("second", **shared)
    assert answered(second, "a") and answered(second, "b")  # kept by the first, served by the second
    ingest(second, tmp_path, "gamma.md", GAMMA, "a")  # a change through the second
    assert not answered(first, "a") and answered(first, "b")
