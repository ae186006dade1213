"""Tools in groups (``ragapp.agent.groups``) on hand-built tool lists: which groups form, when grouping starts,
and what a group choice, a wrong group and a tool outside the chosen group give."""

from __future__ import annotations

from typing import Any, ClassVar

from ragapp.agent.groups import CHOOSE_GROUP, grouped_prompt, grouping_for, tool_groups
from ragapp.agent.mcp_tools import McpTool, McpTools
from ragapp.agent.protocol import call_text, parse_step
from ragapp.agent.tools.base import TOOLS, Tool, ToolArgs
from ragapp.engine.build import load_builtins


class NoteArgs(ToolArgs):
    path: str


class ListDocuments:
    """An own tool that says it belongs with the documents."""

    name: ClassVar[str] = "list_documents"
    description: ClassVar[str] = "List the user's documents."
    group: ClassVar[str] = "documents"
    Args: ClassVar[type[ToolArgs]] = NoteArgs

    def run(self, args: Any, ctx: Any) -> Any:
        raise AssertionError("not run here")


def own() -> dict[str, Tool]:
    load_builtins()
    return {n: TOOLS.get(n)() for n in ("search_knowledge", "list_knowledge_bases", "read_chunk")}


def server_tools(server: str, *names: str) -> dict[str, Tool]:
    hub = McpTools([], 1.0)
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    tools = [McpTool(hub, server, n, f"{n} for a city", schema) for n in names]
    return {t.name: t for t in tools}  # type: ignore[misc]


def test_own_tools_mcp_servers_and_document_tools_form_their_groups() -> None:
    tools = own() | {"list_documents": ListDocuments()} | server_tools("weather", "forecast", "alerts")
    tools |= server_tools("tickets", "open")
    groups = tool_groups(tools, {"weather": "Weather for any city.  Forecasts\nand alerts."})
    assert [(g.name, g.tools) for g in groups] == [
        ("knowledge", ("search_knowledge", "list_knowledge_bases", "read_chunk")),
        ("documents", ("list_documents",)),
        ("weather", ("weather_forecast", "weather_alerts")),
        ("tickets", ("tickets_open",)),
    ]
    described = {g.name: g.description for g in groups}
    assert described["weather"] == "Weather for any city. Forecasts and alerts."  # the server's own words
    assert described["tickets"] == "The tickets server's tools."  # a server that says nothing about itself


def test_a_server_named_like_a_built_in_group_keeps_its_own_group() -> None:
    groups = tool_groups(own() | server_tools("knowledge", "lookup"))
    assert [g.name for g in groups] == ["knowledge", "knowledge_server"]


def test_grouping_starts_above_the_threshold_and_needs_two_groups() -> None:
    tools = own() | server_tools("weather", "forecast", "alerts")  # 5 tools, 2 groups
    assert grouping_for(tools, 5) is None
    assert grouping_for(tools, 4) is not None
    assert grouping_for(own(), 0) is None  # one group: nothing to choose


def test_choosing_a_group_shows_its_tools_and_a_wrong_name_lists_the_groups() -> None:
    tools = own() | server_tools("weather", "forecast", "alerts")
    grouping = grouping_for(tools, 0)
    assert grouping is not None
    error, observation = grouping.choose({"group": "news"}, tools)
    assert error == "there is no group 'news'; the groups are: knowledge, weather" and grouping.chosen is None
    error, _ = grouping.choose({}, tools)
    assert error is not None and error.startswith("no group was named")
    error, observation = grouping.choose({"group": " Weather "}, tools)
    assert error is None and grouping.chosen is not None and grouping.chosen.name == "weather"
    assert "- weather_forecast(city: string): [weather, another MCP server] forecast for a city" in observation
    assert "search_knowledge" not in observation and grouping.choices == ["weather"]
    assert [t.name for t in grouping.visible(tools)] == ["weather_forecast", "weather_alerts"]


def test_a_tool_outside_the_chosen_group_is_refused_with_where_it_is() -> None:
    tools = own() | server_tools("weather", "forecast")
    grouping = grouping_for(tools, 0)
    assert grouping is not None
    grouping.choose({"group": "knowledge"}, tools)
    refused = grouping.admit("weather_forecast")
    assert refused is not None and "not in the group knowledge" in refused and "choose the group weather" in refused
    assert grouping.admit("search_knowledge") is None
    assert grouping.admit("no_such_tool") is None  # unknown tools get the loop's own error


def test_a_tool_named_before_any_group_brings_its_group() -> None:
    tools = own() | server_tools("weather", "forecast")
    grouping = grouping_for(tools, 0)
    assert grouping is not None
    assert grouping.admit("weather_forecast") is None
    assert grouping.chosen is not None and grouping.chosen.name == "weather" and grouping.choices == ["weather"]
    assert grouping.admit("search_knowledge") is not None  # now the weather group's rules hold


def test_native_schemas_offer_the_group_choice_then_the_groups_tools() -> None:
    tools = own() | server_tools("weather", "forecast")
    grouping = grouping_for(tools, 0)
    assert grouping is not None
    (choose,) = grouping.schemas(tools)
    assert choose["function"]["name"] == CHOOSE_GROUP
    assert choose["function"]["parameters"]["properties"]["group"]["enum"] == ["knowledge", "weather"]
    grouping.choose({"group": "weather"}, tools)
    assert [s["function"]["name"] for s in grouping.schemas(tools)] == ["weather_forecast", CHOOSE_GROUP]


def test_the_text_protocol_reads_a_group_choice_and_writes_it_back() -> None:
    step = parse_step('{"thought": "it is about weather", "group": "weather"}')
    assert step is not None and step.call is not None
    assert (step.call.name, step.call.arguments) == (CHOOSE_GROUP, {"group": "weather"})
    assert call_text(step) == '{"thought": "it is about weather", "group": "weather"}'
    tool = parse_step('{"tool": "weather_forecast", "arguments": {"city": "Oslo"}, "group": "weather"}')
    assert tool is not None and tool.call is not None and tool.call.name == "weather_forecast"  # a tool wins
    tools = own() | server_tools("weather", "forecast")
    grouping = grouping_for(tools, 0)
    assert grouping is not None
    prompt = grouped_prompt(grouping, "北京明天天气怎么样？")
    assert '"group": "<group name>"' in prompt and "Write thoughts in Chinese." in prompt
    assert "weather_forecast(city" not in prompt  # signatures come with the group, not before


def test_an_unknown_tool_is_answered_with_what_may_be_called_now() -> None:
    tools = own() | server_tools("weather", "forecast")
    grouping = grouping_for(tools, 0)
    assert grouping is not None
    assert grouping.callable() == "choose a group first; the groups are: knowledge, weather"
    grouping.choose({"group": "weather"}, tools)
    assert grouping.callable() == "the tools of the group weather are: weather_forecast (groups: knowledge, weather)"
