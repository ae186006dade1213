"""Traces through the real engine (real stores, embedder and retrieval; the scripted LLM at the LLM seam):
what a workflow, an agent run and an upload record, who sees them, and that recording never costs an answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.errors import LLMError
from ragapp.core.events import AnswerEvent
from ragapp.core.types import ChatTurn
from ragapp.tracing.builder import TraceBuilder
from ragapp.tracing.model import Trace
from ragapp.ui import trace_views as views
from ragapp.ui.trace_budget import budget_markdown
from tests.text import shown

pytestmark = pytest.mark.integration

ALPHA = "# Alpha robot manual\n\nThe Alpha robot battery lasts 90 minutes. The Alpha robot weighs 2.1 kg.\n"
BETA = "# Beta robot manual\n\nThe Beta robot battery lasts 150 minutes. The Beta robot weighs 3.4 kg.\n"


@pytest.fixture
def rig(make_engine: Callable[..., Any], tmp_path: Path) -> Any:
    return with_manuals(make_engine(), tmp_path)


def with_manuals(rig: Any, tmp_path: Path) -> Any:
    for name, text in (("alpha_manual.md", ALPHA), ("beta_manual.md", BETA)):
        path = tmp_path / name
        path.write_text(text, "utf-8")
        rig.engine.library.ingest([(path, name)], owner="ann")
    return rig


def latest(rig: Any, owner: str = "ann", kind: str = "chat") -> dict[str, Any]:
    summary = rig.engine.observability.traces(owner, kind=kind)[0]
    trace = rig.engine.observability.trace(summary.id, owner)
    assert trace is not None
    return trace.to_dict()  # the stored JSON shape


def names(trace: dict[str, Any]) -> list[str]:
    return [s["name"] for s in trace["spans"]]


def test_a_workflow_answer_records_spans_searches_and_the_exact_prompt(rig: Any) -> None:
    rig.llm.enqueue("The Alpha battery lasts 90 minutes [1].")
    events = list(rig.engine.chat.ask("How long does the Alpha battery last?", owner="ann"))
    assert isinstance(events[-1], AnswerEvent)
    trace = latest(rig)

    assert trace["status"] == "ok" and trace["mode"] == "workflow" and trace["total_s"] > 0
    for span in ("chat", "retrieve", "search", "channel vector", "channel keyword", "fusion", "rerank", "generate"):
        assert span in names(trace), names(trace)
    spans = {s["name"]: s for s in trace["spans"]}
    assert spans["search"]["parent"] == spans["retrieve"]["id"]
    assert spans["channel vector"]["parent"] == spans["search"]["id"]
    llm = next(s for s in trace["spans"] if s["kind"] == "llm")
    assert llm["parent"] == spans["generate"]["id"]

    search = trace["retrievals"][0]
    assert [c["channel"] for c in search["channels"]] == ["vector", "keyword"]
    best = search["candidates"][0]
    assert best["source"] == "alpha_manual.md" and best["final_rank"] == 1
    assert set(best["channel_ranks"]) == {"vector", "keyword"} and set(best["contributions"]) == {"vector", "keyword"}
    assert best["in_prompt"]

    # The exact messages the model got, and what it said, with token counts.
    call = trace["llm_calls"][0]
    sent = rig.llm.calls[-1]
    assert [m["content"] for m in call["messages"]] == [t.content for t in sent]
    assert call["completion"] == "The Alpha battery lasts 90 minutes [1]."
    assert call["prompt_tokens"] > 50 and call["completion_tokens"] > 5
    assert trace["answer"]["citations"][0]["source"] == "alpha_manual.md"

    # Exported as JSON (the tab's download), it reads back the same.
    from ragapp.ui.traces import TraceHandlers

    assert json.loads(Path(TraceHandlers.export(Trace.from_dict(trace))).read_text("utf-8")) == trace


def test_traces_belong_to_their_owner(rig: Any) -> None:
    rig.llm.enqueue("90 minutes [1].")
    list(rig.engine.chat.ask("How long does the Alpha battery last?", owner="ann"))
    mine = rig.engine.observability.traces("ann")
    assert [t.kind for t in mine] == ["chat", "ingest", "ingest"]
    assert rig.engine.observability.traces("bob") == []
    assert rig.engine.observability.trace(mine[0].id, "bob") is None
    assert rig.engine.observability.traces("ann", text="alpha battery")[0].id == mine[0].id
    assert rig.engine.observability.traces("ann", status="failed") == []


def test_a_model_failure_is_recorded_as_an_error_and_the_passages_still_come(rig: Any) -> None:
    rig.llm.enqueue(LLMError("the model server is down"))
    events = list(rig.engine.chat.ask("How much does the Beta robot weigh?", owner="ann"))
    assert isinstance(events[-1], AnswerEvent) and events[-1].citations
    trace = latest(rig)
    assert trace["status"] == "degraded"
    assert any("down" in e for e in trace["errors"])
    generate = next(s for s in trace["spans"] if s["name"] == "generate")
    assert generate["status"] == "failed"
    typed = Trace.from_dict(trace)
    assert views.why_not(typed, trace["retrievals"][0]["candidates"][0]["doc_id"], "beta_manual.md").count("✅") == 1


def test_a_recorder_that_fails_never_costs_the_answer(
    make_engine: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The answer is compared with a plain AnswerEvent: without the support check it carries no support list.
    rig = with_manuals(make_engine(workflow={"check_support": False}), tmp_path)

    def broken(self: TraceBuilder, *args: Any) -> None:
        raise RuntimeError("recorder bug")

    monkeypatch.setattr(TraceBuilder, "_retrieval", broken)
    monkeypatch.setattr(TraceBuilder, "llm_call", broken)
    rig.llm.enqueue("The Alpha battery lasts 90 minutes [1].")
    events = list(rig.engine.chat.ask("How long does the Alpha battery last?", owner="ann"))
    assert events[-1] == AnswerEvent(events[-1].text, events[-1].citations, grounded=True)
    assert events[-1].text == "The Alpha battery lasts 90 minutes [1]."
    trace = latest(rig)  # still saved, and says it may be incomplete
    assert trace["recorder_error"]


def test_an_agent_run_records_each_tool_with_its_search(rig: Any) -> None:
    call = json.dumps({"thought": "look it up", "tool": "search_knowledge", "arguments": {"query": "Beta weight"}})
    rig.llm.enqueue(call, '{"thought": "done", "answer": true}', "3.4 kg [1].")
    list(rig.engine.chat.ask("How much does the Beta robot weigh?", mode="agent", owner="ann"))
    trace = latest(rig)
    assert trace["mode"] == "agent"
    tool = next(s for s in trace["spans"] if s["name"] == "tool search_knowledge")
    search = next(s for s in trace["spans"] if s["name"] == "search" and s["parent"] == tool["id"])
    assert search["attributes"]["query"] == "Beta weight"  # the tool's search, recorded from its own thread
    assert trace["agent_steps"][0]["tool"] == "search_knowledge"
    assert len(trace["llm_calls"]) == 3  # two decisions and the answer


def test_an_upload_records_a_span_per_file_and_its_failures(rig: Any, tmp_path: Path) -> None:
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 this is not really a pdf")
    good = tmp_path / "gamma.md"
    good.write_text("# Gamma\n\nThe Gamma robot battery lasts 60 minutes.\n", "utf-8")
    rig.engine.library.ingest([(bad, bad.name), (good, good.name)], owner="ann")
    trace = latest(rig, kind="ingest")
    assert trace["status"] == "degraded" and any("broken.pdf" in d for d in trace["degradations"])
    files = [s for s in trace["spans"] if s["kind"] == "file"]
    assert [s["name"] for s in files] == ["broken.pdf", "gamma.md"]
    assert [r["status"] for r in trace["ingest"]] == ["failed", "added"]
    # LlamaIndex's own instrumentation lands in the same trace: its sentence splitter chunked gamma.md.
    splitter = next(s for s in trace["spans"] if s["name"].startswith("llamaindex SentenceSplitter"))
    assert trace["spans"][splitter["parent"]]["name"] == "parse + chunk"


def test_test_cases_score_the_current_settings_and_a_change_side_by_side(rig: Any) -> None:
    rig.engine.observability.save_test_case("ann", "How much does the Beta robot weigh?", ["beta_manual.md"])
    rig.engine.observability.save_test_case("ann", "Alpha battery life", ["alpha_manual.md"])
    assert rig.engine.observability.test_cases("bob") == []
    reports = rig.engine.observability.run_test_cases("ann", {"fusion": "rrf", "context_top_k": 1})
    assert [r.label for r in reports] == ["current settings", "with changes"]
    current, changed = reports
    assert current.hit_rate == 1.0 and current.mrr == 1.0 and current.ndcg == 1.0
    assert changed.settings["fusion"] == "rrf" and changed.settings["context_top_k"] == 1
    assert rig.engine.settings.retrieval.fusion == "zscore"  # trying a change does not keep it
    with pytest.raises(ValueError):
        rig.engine.observability.save_test_case("ann", "   ", ["beta_manual.md"])
    # Reranking is off in this engine: the panel can try the shipped reranker without keeping it.
    tried = rig.engine.observability.run_test_cases("ann", {"rerank": True, "min_rerank_score": 0.1})[1]
    assert tried.settings["reranker"] == "ragapp-minilm-zh-en" and tried.hit_rate == 1.0
    assert not rig.engine.status().reranking_enabled


def test_each_prompt_records_its_budget_and_the_tokens_of_each_part(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = with_manuals(make_engine(budget={"tools": 0.01}), tmp_path)  # too little for whole descriptions
    history = [ChatTurn("user", "Tell me about the robots."), ChatTurn("assistant", "There are two.")]
    call = json.dumps({"thought": "look it up", "tool": "search_knowledge", "arguments": {"query": "Beta weight"}})
    rig.llm.enqueue(call, '{"thought": "done", "answer": true}', "3.4 kg [1].")
    list(rig.engine.chat.ask("How much does the Beta robot weigh?", history, mode="agent", owner="ann"))
    spans = {s["name"]: s["attributes"] for s in latest(rig)["spans"]}

    agent = spans["agent"]  # the decision prompt: the tools shortened to their share
    assert agent["compressed"] == ["tool descriptions left out (names and arguments only)"]
    assert agent["prompt"]["history"] > 0 and agent["prompt"]["question"] > 0
    answer = spans["generate"]  # the answer prompt: planned by the budget, and as sent
    assert set(answer["prompt"]) == {"instructions", "question", "history", "memories", "passages", "tools"}
    assert answer["prompt"]["passages"] > 0 and answer["prompt"]["history"] > 0
    assert answer["prompt parts"]["passages"] <= answer["prompt"]["passages"]
    assert answer["budget"]["window"] == rig.engine.settings.llm.n_ctx

    typed = Trace.from_dict(latest(rig))
    text = shown(budget_markdown(typed))
    assert "**Agent's decision prompt**" in text and "**Answer prompt**" in text
    assert "Compressed to fit: tool descriptions left out" in text
