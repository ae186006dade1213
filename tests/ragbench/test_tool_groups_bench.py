"""``python -m ragbench.tool_groups`` end to end with the scripted LLM (conftest's, behind a factory that enqueues
this module's replies) in place of the model: the agent's real loop over the scripted 30 tools, flat and grouped,
scored on the model's first tool: an answer without a tool (the loop's own forced search is not the model's
choice), a wrong group corrected, a right group with the wrong tool."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragapp.config import Settings
from ragapp.models.llm import LLMS
from ragbench.tool_groups import main

if TYPE_CHECKING:
    from conftest import ScriptedLLM

BACKEND = "scripted-tool-groups"
SCRIPT: list[str] = []
BUILT: list[ScriptedLLM] = []


def _factory(settings: Settings) -> Any:
    llm = LLMS.get("scripted")(settings)  # conftest's ScriptedLLM
    llm.enqueue(*SCRIPT)  # type: ignore[attr-defined]
    SCRIPT.clear()
    BUILT.append(llm)  # type: ignore[arg-type]
    return llm


if BACKEND not in LLMS:
    LLMS.register(BACKEND)(_factory)


def tool(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "x", "tool": name, "arguments": arguments})


def group(name: str) -> str:
    return json.dumps({"thought": "x", "group": name})


def test_flat_and_grouped_choices_are_scored_on_the_first_tool(tmp_path: Path) -> None:
    SCRIPT[:] = [
        # flat, 30 tools: k1 answers without a tool; w2 picks the right tool
        '{"thought": "I know this", "answer": true}',
        tool("weather_forecast", city="Shanghai", days=3),
        # grouped: k1 picks knowledge, then search; w2 names a group that does not exist, then weather, then a
        # tool of that group that is not the right one
        group("knowledge"),
        tool("search_knowledge", query="V2 Pro battery"),
        group("forecasts"),
        group("weather"),
        tool("weather_current_weather", city="Shanghai"),
    ]
    output = tmp_path / "groups.json"
    with contextlib.redirect_stdout(io.StringIO()):
        main(["--backend", BACKEND, "--servers", "5", "--ids", "k1,w2", "--output", str(output)])
    assert BUILT[-1].unscripted_calls == 0 and not BUILT[-1]._replies  # every reply used, none missing

    report = json.loads(output.read_text("utf-8"))
    flat, grouped = report["runs"]
    assert (flat["tools"], flat["mode"], grouped["mode"]) == (30, "flat", "grouped")
    assert [(o["id"], o["chosen"], o["right"]) for o in flat["outcomes"]] == [
        ("k1", "", False),
        ("w2", "weather_forecast", True),
    ]
    assert [
        (o["chosen"], o["right"], o["groups"], o["right_group"], o["model_calls"]) for o in grouped["outcomes"]
    ] == [
        ("search_knowledge", True, ["knowledge"], True, 2),
        ("weather_current_weather", False, ["weather"], True, 3),
    ]
    assert flat["summary"]["dev"]["right_tool"] == 0.5 and flat["summary"]["dev"]["no_tool"] == 1
    assert grouped["summary"]["dev"]["right_group"] == 1.0 and grouped["summary"]["dev"]["model_calls"] == 2.5
    assert grouped["summary"]["dev"]["tool_first"] == 0 and flat["outcomes"][0]["tool_first"] is None
    # The grouped prompt listed groups, the flat one every tool's signature.
    first_flat, first_grouped = BUILT[-1].calls[0][0].content, BUILT[-1].calls[2][0].content
    assert "crm_update_deal_stage(deal_id: string" in first_flat and "- crm: Customer relationship" in first_grouped
    assert "crm_update_deal_stage(" not in first_grouped
