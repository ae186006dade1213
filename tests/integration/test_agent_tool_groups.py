"""Tools in groups through the real engine: a real MCP server (``tests/fixtures/mcp_weather_server.py``) beside
the agent's own tools, the scripted LLM at the LLM seam. Above ``agent.group_tools_above`` the model picks a group
(the server's, described in its own words), then a tool in it, in the JSON protocol and in native function
calling; each group choice is a step, shown and traced; a wrong group or a tool outside the chosen group goes
back to the model, within the step bound (a tool named before any group brings its group). At or below the
threshold every tool is listed as before."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.events import AgentStepEvent, AnswerEvent, EngineEvent, NoticeEvent
from ragapp.core.types import ToolCall
from ragapp.models.llm import ToolReply

pytestmark = pytest.mark.integration

SERVER = Path(__file__).parents[1] / "fixtures" / "mcp_weather_server.py"
WEATHER = {"name": "weather", "command": sys.executable, "args": [str(SERVER)]}
READY = '{"thought": "I have what I need", "answer": true}'
ALPHA = "# Alpha robot manual\n\nThe Alpha robot battery lasts 90 minutes.\n"


def call(tool: str, **arguments: Any) -> str:
    return json.dumps({"thought": "next step", "tool": tool, "arguments": arguments})


def group(name: str) -> str:
    return json.dumps({"thought": "this group fits", "group": name})


def steps(events: list[EngineEvent]) -> list[AgentStepEvent]:
    return [e for e in events if isinstance(e, AgentStepEvent) and e.status != "started"]


def agent(make_engine: Callable[..., Any], above: int, **agent_settings: Any) -> Any:
    settings = {"mcp_servers": [WEATHER], "tool_timeout_s": 60, "group_tools_above": above, **agent_settings}
    return make_engine(agent=settings)


def test_above_the_threshold_the_model_picks_a_group_then_a_tool(make_engine: Callable[..., Any]) -> None:
    rig = agent(make_engine, above=5)  # 3 own tools + 3 of the weather server's
    rig.llm.enqueue(group("weather"), call("weather_forecast", city="Oslo"), READY, "Light rain in Oslo [1].")
    events = list(rig.engine.chat.ask("What's the weather in Oslo tomorrow?", mode="agent", owner="ann"))

    done = steps(events)
    assert [(s.step, s.tool, s.status) for s in done] == [
        (1, "choose_group", "finished"),
        (2, "weather_forecast", "finished"),
    ]
    assert done[0].arguments == {"group": "weather"} and done[0].thought == "this group fits"
    assert done[0].preview == "weather: weather_forecast, weather_station, weather_warnings"
    # First the groups, described (the server in its own words), without the tools' signatures ...
    system = rig.llm.calls[0][0].content
    assert "- weather: Weather for any city: forecasts, stations and warnings." in system
    assert "- knowledge: Search and read the user's documents" in system
    assert "weather_forecast(" not in system and "search_knowledge(" not in system
    # ... then the chosen group's tools, as an observation.
    shown = rig.llm.calls[1][-1].content
    assert shown.startswith("Result of choose_group:\nTools in the group weather:\n- weather_forecast(city: string")
    assert "search_knowledge" not in shown.split("Call one of them")[0]
    answer = next(e for e in events if isinstance(e, AnswerEvent))
    assert [c.chunk.source for c in answer.citations] == ["weather · forecast"]
    # The group choice is in the trace like a tool call.
    summary = rig.engine.observability.traces("ann", kind="chat")[0]
    trace = rig.engine.observability.trace(summary.id, "ann")
    assert trace is not None
    recorded = trace.to_dict()
    assert [s["tool"] for s in recorded["agent_steps"]] == ["choose_group", "weather_forecast"]
    assert recorded["agent_steps"][0]["arguments"] == {"group": "weather"}
    assert "tool choose_group" in [s["name"] for s in recorded["spans"]]


def test_at_the_threshold_every_tool_is_listed_at_once(make_engine: Callable[..., Any]) -> None:
    rig = agent(make_engine, above=6)
    rig.llm.enqueue(call("weather_forecast", city="Oslo"), READY, "Light rain [1].")
    events = list(rig.engine.chat.ask("What's the weather in Oslo tomorrow?", mode="agent"))
    assert [(s.tool, s.status) for s in steps(events)] == [("weather_forecast", "finished")]
    system = rig.llm.calls[0][0].content
    assert "weather_forecast(city: string, days: integer = 1)" in system and "search_knowledge(" in system
    assert "choose_group" not in system and '"group"' not in system


def test_a_wrong_group_and_a_tool_outside_the_chosen_group_go_back_to_the_model(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = agent(make_engine, above=5, max_steps=5)
    manual = tmp_path / "alpha_manual.md"
    manual.write_text(ALPHA, "utf-8")
    rig.engine.library.ingest([(manual, "alpha_manual.md")])
    rig.llm.enqueue(
        group("news"),  # no such group
        call("weather_forecast", city="Oslo"),  # no group chosen yet: the tool brings its group
        group("knowledge"),
        call("weather_forecast", city="Oslo"),  # outside the chosen group
        call("search_knowledge", query="Alpha battery"),
        "The Alpha battery lasts 90 minutes [2].",  # the step bound is reached: the answer
    )
    events = list(rig.engine.chat.ask("How long does the Alpha battery last?", mode="agent"))

    done = steps(events)
    assert [(s.tool, s.status) for s in done] == [
        ("choose_group", "failed"),
        ("weather_forecast", "finished"),
        ("choose_group", "finished"),
        ("weather_forecast", "failed"),
        ("search_knowledge", "finished"),
    ]
    assert done[0].error == "there is no group 'news'; the groups are: knowledge, weather"
    assert "not in the group knowledge" in (done[3].error or "") and "choose the group weather" in (done[3].error or "")
    # Each mistake reached the model as an observation it could act on.
    told = [turn[-1].content for turn in rig.llm.calls[1:5]]
    assert told[0] == "Result of choose_group:\nError: there is no group 'news'; the groups are: knowledge, weather."
    assert told[3].startswith("Result of weather_forecast:\nError: weather_forecast is not in the group knowledge")
    notices = [e.message for e in events if isinstance(e, NoticeEvent)]
    assert any("limit of 5 agent steps" in n for n in notices)  # bounded, whatever the model does
    answer = next(e for e in events if isinstance(e, AnswerEvent))
    assert [c.chunk.source for c in answer.citations] == ["alpha_manual.md"]


def test_native_function_calling_offers_the_group_choice_then_the_groups_tools(
    make_engine: Callable[..., Any],
) -> None:
    settings = {"mcp_servers": [WEATHER], "tool_timeout_s": 60, "group_tools_above": 5}
    rig = make_engine(llm={"backend": "scripted-tools"}, agent=settings)
    rig.llm.enqueue(
        ToolReply("Weather it is.", (ToolCall("choose_group", {"group": "weather"}, "call_g"),)),
        ToolReply("", (ToolCall("weather_forecast", {"city": "Oslo"}, "call_f"),)),
        ToolReply("I can answer now."),
        "Light rain in Oslo [1].",
    )
    events = list(rig.engine.chat.ask("What's the weather in Oslo tomorrow?", mode="agent"))
    assert [(s.tool, s.status) for s in steps(events)] == [
        ("choose_group", "finished"),
        ("weather_forecast", "finished"),
    ]
    first, second = ([t["function"]["name"] for t in schemas] for schemas in rig.llm.tool_schemas[:2])
    assert first == ["choose_group"]
    assert second == ["weather_forecast", "weather_station", "weather_warnings", "choose_group"]
    choose = rig.llm.tool_schemas[0][0]["function"]
    assert choose["parameters"]["properties"]["group"]["enum"] == ["knowledge", "weather"]
    assert "Your tools come in groups" in rig.llm.calls[0][0].content
    transcript = rig.llm.calls[1]
    assert transcript[-2].tool_calls[0].id == "call_g" and transcript[-1].tool_call_id == "call_g"
    assert next(e for e in events if isinstance(e, AnswerEvent)).citations
