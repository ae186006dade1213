"""``python -m ragbench.tool_groups``: does choosing a group first help the model pick the right tool?

The agent's loop (``ragapp.agent.runner``, the real one) is given a scripted tool list: five MCP servers' tools
(tickets, calendar, CRM, files, weather: names, descriptions, schemas and each server's instructions as such
servers publish them, ``data/eval/tool_groups/catalogue.yaml``) beside its own three knowledge tools, 30 in all.
The model is real (the packaged one by default, llama.cpp); the tools never run: each routing question
(``data/eval/tool_groups/questions.yaml``, written before the first run, English and Chinese, split once into dev
and test) goes through the loop until the model names its first tool, and that tool is right or not. The same
questions are asked with every tool listed at once (flat) and with groups (choose a group, then a tool), at
several list sizes (the knowledge tools plus the first N servers), so the threshold
(``agent.group_tools_above``) can be chosen on dev and reported on test.

    nice -n 10 python -m ragbench.tool_groups --servers 5,1,3 --output results/tool_groups/local-qwen2.5-coder-1.5b.json

Each question takes one model call flat and two grouped (the group, then the tool), a third when the model
must be corrected (``max_steps`` 3). Seconds are measured on whatever machine runs it: say how busy it was.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from ragapp.agent.groups import CHOOSE_GROUP
from ragapp.agent.mcp_tools import McpTool, McpTools, ServerTools
from ragapp.agent.protocol import Step
from ragapp.agent.runner import AgentRunner, Run
from ragapp.config import REPO_ROOT, Settings
from ragapp.core.events import AgentStepEvent, EngineEvent
from ragapp.core.lang import is_chinese

DATA = REPO_ROOT / "data" / "eval" / "tool_groups"
KNOWLEDGE = ("search_knowledge", "list_knowledge_bases", "read_chunk")
_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "array": {"type": "array", "items": {"type": "string"}},
}


@dataclass(frozen=True)
class Question:
    id: str
    split: str
    tool: str
    q: str

    @property
    def group(self) -> str:
        return "knowledge" if self.tool in KNOWLEDGE else self.tool.split("_", 1)[0]


class ScriptedServers(McpTools):
    """The catalogue's servers as the agent sees MCP servers: their tools and instructions, nothing to call."""

    def __init__(self, servers: list[dict[str, Any]]) -> None:
        super().__init__([], 1.0)
        self._tools = [
            McpTool(self, s["name"], t["name"], t["description"], schema(t)) for s in servers for t in s["tools"]
        ]
        self._listing = [
            ServerTools(s["name"], tuple(t["name"] for t in s["tools"]), description=s["instructions"]) for s in servers
        ]

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> str:
        raise AssertionError("the bench reads the model's choice; no tool runs")


def schema(tool: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, dict[str, Any]] = {}
    for name, kind in tool["args"].items():
        properties[name] = {"type": "string", "enum": kind} if isinstance(kind, list) else dict(_TYPES[kind])
    return {"type": "object", "properties": properties, "required": list(tool.get("required", []))}


class ChoiceRecorder(AgentRunner):
    """The agent's runner, keeping every decision the model made (``Step``s), in order."""

    decisions: list[Step]

    def _decide(self, run: Run) -> Step | None:
        step = super()._decide(run)
        if step is not None:
            self.decisions.append(step)
        return step


@dataclass
class Outcome:
    id: str
    split: str
    lang: str
    expected: str
    chosen: str  # the first tool the model named ("" none: it answered or never gave a step)
    right: bool
    groups: list[str] = field(default_factory=list)  # the groups it chose (or a tool brought), in order
    right_group: bool | None = None  # grouped only: the first group (chosen, or its tool's) was the right one
    tool_first: bool | None = None  # grouped only: it named a tool without choosing a group first
    model_calls: int = 0
    seconds: float = 0.0


def first_tool(runner: ChoiceRecorder, run: Run, events: Iterator[EngineEvent]) -> str:
    """Run the loop until the model names a tool other than choose_group; that tool ("" when none)."""
    for event in events:
        if isinstance(event, AgentStepEvent) and event.status == "started" and event.tool != CHOOSE_GROUP:
            break
    for step in runner.decisions:
        if step.call is None:
            return ""  # it answered without a tool (the loop's own forced search is not the model's choice)
        if step.call.name != CHOOSE_GROUP:
            return step.call.name
    return ""


def ask(runner: ChoiceRecorder, question: Question) -> Outcome:
    runner.decisions = []
    started = time.perf_counter()
    run = runner._start(question.q, [], None, "", None, ())
    chosen = first_tool(runner, run, runner._loop(run))
    groups = list(run.grouping.choices) if run.grouping else []
    if run.grouping and not groups and chosen:  # a tool named first brings its group (the loop stops before that)
        groups = [g.name for g in run.grouping.groups if chosen in g.tools][:1]
    return Outcome(
        question.id,
        question.split,
        "zh" if is_chinese(question.q) else "en",
        question.tool,
        chosen,
        chosen == question.tool,
        groups,
        (bool(groups) and groups[0] in (question.group, f"{question.group}_server")) if run.grouping else None,
        bool(runner.decisions and runner.decisions[0].call and runner.decisions[0].call.name != CHOOSE_GROUP)
        if run.grouping
        else None,
        run.model_calls,
        round(time.perf_counter() - started, 2),
    )


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("dev", "test", "all"):
        part = [o for o in outcomes if split == "all" or o.split == split]
        if not part:
            continue
        grouped = [o for o in part if o.right_group is not None]
        out[split] = {
            "n": len(part),
            "right_tool": round(sum(o.right for o in part) / len(part), 3),
            "right_group": round(sum(bool(o.right_group) for o in grouped) / len(grouped), 3) if grouped else None,
            "no_tool": sum(not o.chosen for o in part),
            "tool_first": sum(bool(o.tool_first) for o in part),
            "model_calls": round(sum(o.model_calls for o in part) / len(part), 2),
            "seconds": round(sum(o.seconds for o in part) / len(part), 1),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--servers", default="5,1,3", help="list sizes: how many MCP servers beside the knowledge tools"
    )
    parser.add_argument("--modes", default="flat,grouped")
    parser.add_argument("--split", choices=["dev", "test", "all"], default="all")
    parser.add_argument("--limit", type=int, default=0, help="at most this many questions per size (0: all)")
    parser.add_argument("--stride", type=int, default=1, help="every Nth question of each size's set")
    parser.add_argument("--ids", default="", help="only these questions (comma-separated ids, e.g. k1,t2)")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--backend", default="llama_cpp", help="LLM backend (an OpenAI-compatible one: 'openai')")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", type=Path, default=REPO_ROOT / "results" / "tool_groups" / "local.json")
    args = parser.parse_args(argv)

    from ragapp.engine.build import load_builtins
    from ragapp.models.llm import LLMS

    load_builtins()
    servers = yaml.safe_load((DATA / "catalogue.yaml").read_text("utf-8"))["servers"]
    questions = [Question(**q) for q in yaml.safe_load((DATA / "questions.yaml").read_text("utf-8"))["questions"]]
    questions = [q for q in questions if args.split == "all" or q.split == args.split]
    questions = [q for q in questions if not args.ids or q.id in args.ids.split(",")]
    state = Path(tempfile.mkdtemp(prefix="tool-groups-"))
    base = Settings(
        paths={"state_dir": state, "load_demo": False},
        llm={"backend": args.backend, "local_model": args.model, "threads": args.threads},
    )
    llm = LLMS.get(base.llm.backend)(base)
    report: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": llm.name,
        "command": " ".join(["python -m ragbench.tool_groups", *(argv if argv is not None else sys.argv[1:])]),
        "runs": [],
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    for count in (int(n) for n in args.servers.split(",")):
        shown = servers[:count]
        present = {"knowledge", *(s["name"] for s in shown)}
        asked = [q for q in questions if q.group in present]
        asked = asked[:: args.stride][: args.limit or None]
        tools = len(KNOWLEDGE) + sum(len(s["tools"]) for s in shown)
        # One mode after the other, not interleaved: each keeps its long prompt prefix in the model's cache.
        for mode in args.modes.split(","):
            above = 0 if mode == "grouped" else 1000
            settings = base.model_copy(
                update={"agent": base.agent.model_copy(update={
                    "max_steps": 3, "group_tools_above": above, "protocol": "auto", "step_timeout_s": 1800.0,
                })}
            )  # fmt: skip
            unused: Any = None  # retrieval, catalog, workflow: no tool runs, no answer is written
            runner = ChoiceRecorder(llm, unused, unused, unused, settings, ScriptedServers(shown))
            outcomes = []
            for question in asked:
                outcome = ask(runner, question)
                outcomes.append(outcome)
                print(json.dumps({"tools": tools, "mode": mode, **asdict(outcome)}, ensure_ascii=False), flush=True)
                entry = {"tools": tools, "servers": count, "mode": mode, "summary": summary(outcomes),
                         "outcomes": [asdict(o) for o in outcomes]}  # fmt: skip
                runs = [r for r in report["runs"] if (r["tools"], r["mode"]) != (tools, mode)]
                report["runs"] = [*runs, entry]
                args.output.write_text(json.dumps(report, ensure_ascii=False, indent=1), "utf-8")  # as it goes
    shutil.rmtree(state, ignore_errors=True)
    report["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    args.output.write_text(json.dumps(report, ensure_ascii=False, indent=1), "utf-8")
    for run in report["runs"]:
        print(run["tools"], run["mode"], json.dumps(run["summary"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
