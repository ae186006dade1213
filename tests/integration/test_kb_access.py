"""Knowledge-base access lists through the real engine (real Chroma, BM25, reranker; scripted model): a reader
of ``hr`` never gets a chunk of ``finance``, whatever the question, the mode, the picked scope, the agent's tool
arguments or what the cache holds from an admin's question; an editor only changes the bases it may edit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore
from ragapp.core.access import Actor
from ragapp.core.errors import AccessDenied
from ragapp.core.events import AgentStepEvent, AnswerEvent, EngineEvent, RetrievalEvent
from tests.text import shown

pytestmark = pytest.mark.integration

FINANCE = "# Budget 2027\n\nThe finance department's travel budget for 2027 is 48,000 euros, approved in March.\n"
HR = "# Leave policy\n\nEvery employee has 27 days of paid leave a year; requests go to the HR portal.\n"
HANNA = Actor("hanna", "reader", frozenset({"hr"}))
QUESTION = "What is the travel budget for 2027?"


@pytest.fixture
def rig(make_engine: Callable[..., Any], tmp_path: Path) -> Any:
    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    store.add("hanna", "hanna password", "reader", ("hr",))
    store.add("admin", "admin password", "admin")
    store.add("eddie", "editor password", "editor")
    store.set_kb_rule("finance", KbRule(readers=("group:finance",), editors=("group:finance",)))
    store.set_kb_rule("hr", KbRule(readers=("group:hr",), editors=("eddie",)))
    rig = make_engine(auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4})
    for kb, text in (("finance", FINANCE), ("hr", HR)):
        path = tmp_path / f"{kb}.md"
        path.write_text(text, "utf-8")
        (result,) = rig.engine.library.ingest([(path, path.name)], kb=kb)
        assert result.status == "added"
    return rig


def _sources(events: list[EngineEvent]) -> set[str]:
    """Every document whose text reached this answer: passages retrieved, cited, or shown in agent steps."""
    seen = {item.chunk.source for e in events if isinstance(e, RetrievalEvent) for item in e.chunks}
    seen |= {c.chunk.source for e in events if isinstance(e, AnswerEvent) for c in e.citations}
    return seen


def _finance_chunk(rig: Any) -> str:
    return next(c.chunk_id for c in rig.engine._store.catalog.all_chunks() if "48,000" in c.text)


def test_an_admin_finds_the_finance_budget_and_the_cache_does_not_pass_it_on(rig: Any) -> None:
    rig.llm.enqueue("48,000 euros [1].")
    admin = list(rig.engine.chat.ask(QUESTION, actor=Actor("admin", "admin"), mode="workflow"))
    assert "finance.md" in _sources(admin)  # the question does find it, for one who may read it

    rig.llm.calls.clear()
    rig.llm.enqueue(*["Not in the documents."] * 3)  # if the HR passage is judged relevant, the model is asked
    for picked in (None, frozenset({"finance"}), frozenset({"finance", "hr"})):
        events = list(rig.engine.chat.ask(QUESTION, kbs=picked, actor=HANNA, mode="workflow"))
        assert "finance.md" not in _sources(events), picked
        assert all("48,000" not in t.content for call in rig.llm.calls for t in call), picked


def test_the_agents_tools_never_reach_finance_for_an_hr_reader(rig: Any) -> None:
    rig.llm.enqueue(
        json.dumps({"thought": "bases", "tool": "list_knowledge_bases", "arguments": {}}),
        json.dumps({"thought": "finance", "tool": "search_knowledge",
                    "arguments": {"query": "travel budget 2027", "knowledge_base": "finance"}}),
        json.dumps({"thought": "read", "tool": "read_chunk", "arguments": {"chunk_id": _finance_chunk(rig)}}),
        json.dumps({"thought": "any", "tool": "search_knowledge", "arguments": {"query": "travel budget 2027"}}),
        '{"thought": "done", "answer": true}',
        "Not in the documents.",
    )  # fmt: skip
    events = list(rig.engine.chat.ask(QUESTION, actor=HANNA, mode="agent"))

    steps = [e for e in events if isinstance(e, AgentStepEvent) and e.status != "started"]
    assert [s.tool for s in steps] == ["list_knowledge_bases", "search_knowledge", "read_chunk", "search_knowledge"]
    assert "finance" not in steps[0].preview  # the list holds only what she may read
    model_saw = "\n".join(t.content for call in rig.llm.calls for t in call)
    assert "48,000" not in model_saw and "finance.md" not in _sources(events)


def test_editors_change_only_the_bases_they_may_edit(rig: Any, tmp_path: Path) -> None:
    eddie = Actor("eddie", "editor")
    new = tmp_path / "memo.md"
    new.write_text("# Memo\n\nThe office closes at 18:00 on Fridays.\n", "utf-8")
    with pytest.raises(AccessDenied, match="knowledge base 'finance'"):
        rig.engine.library.ingest([(new, new.name)], kb="finance", actor=eddie)
    finance_doc = next(d.doc_id for d in rig.engine.library.documents() if d.kb == "finance")
    with pytest.raises(AccessDenied):
        rig.engine.library.delete(finance_doc, actor=eddie)
    with pytest.raises(AccessDenied):
        rig.engine.library.move(finance_doc, "hr", actor=eddie)
    (added,) = rig.engine.library.ingest([(new, new.name)], kb="hr", actor=eddie)
    assert added.status == "added" and len(rig.engine.library.documents()) == 3


def test_the_traces_tab_and_test_case_runs_keep_to_the_readers_bases(rig: Any) -> None:
    import gradio as gr

    from ragapp.ui.traces import TraceHandlers

    request = gr.Request(username="hanna")
    traces = TraceHandlers(rig.engine)
    assert set(traces.doc_names(request).values()) == {"hr.md"}  # the why-not picker names no finance document
    finance = next(d.doc_id for d in rig.engine.library.documents() if d.name == "finance.md")
    rig.llm.enqueue(*["Not in the documents."] * 3)
    list(rig.engine.chat.ask(QUESTION, actor=HANNA, owner="user:hanna", mode="workflow"))
    (summary,) = rig.engine.observability.traces("user:hanna", actor=HANNA)
    trace = rig.engine.observability.trace(summary.id, "user:hanna", actor=HANNA)
    assert "finance.md" not in traces.why_not(trace, finance, request)
    assert shown(traces.why_not(trace, finance, request)) == "Pick a document in the list."

    # A test case naming finance, run by the reader, searches hr only; the admin's run finds finance.
    observability = rig.engine.observability
    observability.save_test_case("user:hanna", QUESTION, ["finance.md"], ["finance"])
    (report,) = observability.run_test_cases("user:hanna", actor=HANNA)
    assert all("finance.md" not in r.ranked for r in report.results)
    (report,) = observability.run_test_cases("user:hanna", actor=Actor("admin", "admin"))
    assert report.results[0].ranked[0] == "finance.md"
