"""Agent mode with another MCP server's tools: a real MCP server (``tests/fixtures/mcp_weather_server.py``, the
SDK's ``FastMCP`` over stdio) configured in ``agent.mcp_servers``; the agent, driven by the scripted LLM at the
LLM seam, calls its tools like its own: listed with their schemas, arguments checked against the schema, each
call a step, results quoted as data (a planted instruction taken out) and citable, the server's errors and bad
arguments fed back to the model. A server that cannot start costs its tools, not the agent."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.agent.tools.base import DATA_NOTE
from ragapp.core.events import AgentStepEvent, AnswerEvent, EngineEvent

pytestmark = pytest.mark.integration

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_weather_server.py"
WEATHER = {"name": "weather", "command": sys.executable, "args": [str(SERVER)]}
READY = '{"thought": "I have what I need", "answer": true}'


def call(tool: str, **arguments: Any) -> str:
    return json.dumps({"thought": "ask the weather server", "tool": tool, "arguments": arguments})


def steps(events: list[EngineEvent]) -> list[AgentStepEvent]:
    return [e for e in events if isinstance(e, AgentStepEvent) and e.status != "started"]


def test_the_agent_calls_another_mcp_servers_tools(make_engine: Callable[..., Any]) -> None:
    rig = make_engine(agent={"mcp_servers": [WEATHER], "tool_timeout_s": 60})
    listed = rig.engine.admin.agent_tools()
    assert [(s.server, sorted(s.tools), s.error) for s in listed] == [
        ("weather", ["weather_forecast", "weather_station", "weather_warnings"], None)
    ]  # as the agent names them
    rig.llm.enqueue(
        call("weather_forecast", city="Oslo", days=9, colour="red"),  # fits the schema; the server refuses it
        call("weather_forecast", city=7),  # not a string: refused by the schema before any call
        call("weather_station", name="Blindern"),  # the server's own error
        call("weather_warnings", city="Oslo"),  # a result that speaks to the assistant
        call("weather_forecast", city="Oslo"),
        READY,
        "Tomorrow Oslo gets light rain at 12 °C [2].",
    )
    events = list(rig.engine.chat.ask("What's the weather in Oslo tomorrow?", mode="agent"))
    done = steps(events)
    assert [(s.tool, s.status) for s in done] == [
        ("weather_forecast", "failed"),
        ("weather_forecast", "failed"),
        ("weather_station", "failed"),
        ("weather_warnings", "finished"),
        ("weather_forecast", "finished"),
    ]
    assert "days must be 1 to 3" in (done[0].error or "")  # the server's words, back to the model
    assert "city: 7 is not of type 'string'" in (done[1].error or "")
    assert "station Blindern is down" in (done[2].error or "")
    assert "light rain" in done[4].preview
    # What the model read: quoted as data, the planted sentence taken out.
    observations = [m.content for turn in rig.llm.calls for m in turn if m.content.startswith("Result of weather_")]
    warning = next(o for o in observations if "No warnings for Oslo" in o)
    assert DATA_NOTE in warning and "PWNED" not in warning
    answer = next(e for e in events if isinstance(e, AnswerEvent))
    assert answer.text == "Tomorrow Oslo gets light rain at 12 °C [1]."  # renumbered from the passage it cites
    (cited,) = answer.citations
    assert cited.chunk.source == "weather · forecast" and "light rain" in cited.chunk.text
    # The schema the model is shown is the server's own.
    prompt = rig.llm.calls[0][0].content
    assert "weather_forecast(city: string, days: integer = 1)" in prompt


def test_a_server_that_does_not_start_costs_only_its_tools(make_engine: Callable[..., Any]) -> None:
    broken = {"name": "broken", "command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}
    rig = make_engine(agent={"mcp_servers": [broken, WEATHER], "tool_timeout_s": 20})
    listed = {s.server: s for s in rig.engine.admin.agent_tools()}
    assert listed["broken"].tools == () and listed["broken"].error
    assert "weather_forecast" in listed["weather"].tools
    rig.llm.enqueue(call("weather_forecast", city="Bergen"), READY, "Light rain in Bergen [1].")
    events = list(rig.engine.chat.ask("Weather in Bergen?", mode="agent"))
    assert [s.status for s in steps(events)] == ["finished"]
