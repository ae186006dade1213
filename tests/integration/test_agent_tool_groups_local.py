"""Tools in groups with the real packaged model: asked about the weather beside its own knowledge tools and a
real MCP weather server, it picks the weather group (or names one of its tools straight away, which brings the
group), then one of that server's tools, through the JSON protocol.
How often it picks right over 30 tools was measured once (docs/benchmarks.md, "Tools in groups")."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ragapp.config import Settings
from ragapp.core.events import CHOOSE_GROUP, AgentStepEvent, NoticeEvent
from ragapp.engine.build import build_engine
from tests.shared_models import SharedModels
from tests.workers import MODEL_THREADS

pytestmark = [pytest.mark.integration, pytest.mark.llm, pytest.mark.slow]

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup)")

MODEL = os.environ.get("RAGAPP_TEST_LOCAL_MODEL", "qwen2.5-coder-1.5b")
SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_weather_server.py"


def test_real_model_picks_the_weather_group_then_a_weather_tool(tmp_path: Path, shared_models: SharedModels) -> None:
    weather = {"name": "weather", "command": sys.executable, "args": [str(SERVER)]}
    # Generous budgets: a loaded 2-core machine (CI, other tests) can take a minute per decision.
    settings = Settings(
        paths={"state_dir": tmp_path / "state", "load_demo": False},
        llm={"local_model": MODEL, "threads": MODEL_THREADS},
        agent={"step_timeout_s": 300, "tool_timeout_s": 60, "mcp_servers": [weather], "group_tools_above": 0},
    )
    engine = build_engine(settings, shared_models.parts(settings))  # the run's embedder and reranker
    try:
        events = list(engine.chat.ask("What will the weather be in Oslo tomorrow?", mode="agent"))
    finally:
        engine.close()
    notices = [e.message for e in events if isinstance(e, NoticeEvent)]
    assert not any("workflow instead" in n for n in notices), notices  # the agent itself worked
    done = [e for e in events if isinstance(e, AgentStepEvent) and e.status == "finished"]
    groups = [e.arguments.get("group") for e in done if e.tool == CHOOSE_GROUP]
    assert groups[:1] in ([], ["weather"]), done  # chosen, or brought by naming one of its tools
    tools = [e.tool for e in done if e.tool != CHOOSE_GROUP]
    assert tools and tools[0].startswith("weather_"), done
