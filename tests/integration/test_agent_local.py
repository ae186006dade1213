"""Smoke run of agent mode with the real packaged model: it calls search_knowledge through the JSON
protocol and the answer cites what it found. Workflow against agent is measured by `make answer-eval
ANSWER_MODE=agent` beside the workflow run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragapp.config import Settings
from ragapp.core.events import AgentStepEvent, AnswerEvent, NoticeEvent
from ragapp.engine.build import build_engine
from tests.shared_models import SharedModels
from tests.workers import MODEL_THREADS

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.slow]

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup)")

MODEL = os.environ.get("RAGAPP_TEST_LOCAL_MODEL", "qwen2.5-coder-1.5b")
DOCS = {
    "alpha_manual.md": "# Alpha robot manual\n\nThe Alpha robot battery lasts 90 minutes. It weighs 2.1 kg.\n",
    "beta_manual.md": "# Beta robot manual\n\nThe Beta robot battery lasts 150 minutes. It weighs 3.4 kg.\n",
}


def test_real_model_calls_a_tool_and_answers_with_citations(tmp_path: Path, shared_models: SharedModels) -> None:
    # Generous budgets: a loaded 2-core machine (CI, other tests) can take a minute per decision.
    settings = Settings(
        paths={"state_dir": tmp_path / "state", "load_demo": False},
        llm={"local_model": MODEL, "threads": MODEL_THREADS},
        agent={"step_timeout_s": 300},
    )
    engine = build_engine(settings, shared_models.parts(settings))  # the run's embedder and reranker
    try:
        for name, text in DOCS.items():
            path = tmp_path / name
            path.write_text(text, "utf-8")
            engine.library.ingest([(path, name)])
        events = list(engine.chat.ask("How long does the Beta robot's battery last?", mode="agent"))
    finally:
        engine.close()
    notices = [e.message for e in events if isinstance(e, NoticeEvent)]
    assert not any("workflow instead" in n for n in notices), notices  # the agent itself worked
    searches = [e for e in events if isinstance(e, AgentStepEvent) and e.status == "finished"]
    assert any(s.tool == "search_knowledge" for s in searches), events
    final = next(e for e in events if isinstance(e, AnswerEvent))
    assert "150" in final.text and any(c.chunk.source == "beta_manual.md" for c in final.citations), final
