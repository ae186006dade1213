"""``python -m ragbench.mcp_overhead``: what the MCP server adds to a search, against the HTTP API's.

    python -m ragbench.mcp_overhead [--rounds 5] [--output results/bench/mcp.json]

Builds the app from the default settings over a fresh state (the demo documents), serves it in this process on
a free loopback port (``start_server``) and asks each demo question ``--rounds`` times both ways, one client, one
call at a time: ``POST /v1/retrieve`` (httpx) and the MCP ``search`` tool at /mcp (the ``mcp`` SDK's client
session, kept open). Each question is searched once first, untimed, so both ways read the engine's
retrieval cache: the difference is the transport's and the result's shaping, not the search. The order of the
two alternates from call to call. Prints p50/p95 of each and of the per-call difference.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import anyio
import httpx

from ragapp.agent.mcp_tools import mcp_session
from ragbench.api import local_server
from ragbench.bench.answer import DEMO_QUESTIONS, percentile
from ragbench.cli import run_command


async def _timed(call: Callable[[str], Awaitable[None]], question: str) -> float:
    start = time.perf_counter()
    await call(question)
    return time.perf_counter() - start


async def measure(url: str, questions: list[str], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"retrieve": [], "mcp": [], "difference": []}
    async with (
        httpx.AsyncClient(base_url=url, timeout=120) as http,
        mcp_session(url=f"{url}/mcp") as client,
    ):

        async def api(question: str) -> None:
            reply = await http.post("/v1/retrieve", json={"query": question})
            reply.raise_for_status()

        async def tool(question: str) -> None:
            result = await client.call_tool("search", {"query": question})
            if result.isError:
                raise RuntimeError(result.content)

        for question in questions:  # the searches themselves, once: then both ways read the cache
            await api(question)
        calls = 0
        for _ in range(rounds):
            for question in questions:
                first_api = calls % 2 == 0
                calls += 1
                if first_api:
                    spent_api = await _timed(api, question)
                    spent_mcp = await _timed(tool, question)
                else:
                    spent_mcp = await _timed(tool, question)
                    spent_api = await _timed(api, question)
                times["retrieve"].append(spent_api)
                times["mcp"].append(spent_mcp)
                times["difference"].append(spent_mcp - spent_api)
    return times


def _ms(values: list[float], q: float) -> float:
    found = percentile(values, q)
    return round(1000 * found, 1) if found is not None else float("nan")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.mcp_overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=5, help="times each demo question is asked each way.")
    p.add_argument("--output", type=Path, help="write the figures here as JSON.")
    return p


def _run(args: argparse.Namespace) -> int:
    questions = [str(e["question"]) for e in json.loads(DEMO_QUESTIONS.read_text("utf-8"))]
    with local_server() as url:
        print(f"app at {url}; {len(questions)} questions x {args.rounds} rounds, each way", file=sys.stderr)
        times = anyio.run(measure, url, questions, args.rounds)
    summary = {name: {"p50_ms": _ms(values, 0.5), "p95_ms": _ms(values, 0.95)} for name, values in times.items()}
    print(f"search, cached, one client, {os.cpu_count()} CPUs, {len(times['mcp'])} calls each way:")
    for name, label in (("retrieve", "POST /v1/retrieve"), ("mcp", "MCP search"), ("difference", "MCP - API")):
        print(f"  {label:18s} p50 {summary[name]['p50_ms']:7.1f} ms   p95 {summary[name]['p95_ms']:7.1f} ms")
    if args.output:
        payload = {
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "cpus": os.cpu_count(),
            "rounds": args.rounds,
            "summary": summary,
            "times_s": times,
        }
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(payload, indent=2) + "\n", "utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
