"""``python -m ragbench.api``: several clients at once against the HTTP API: retrieval-only calls, then streamed
answers, each timed.

    python -m ragbench.api [--users 8] [--requests 8] [--url http://127.0.0.1:7860 --key KEY] \\
        [--output results/bench/api.json]

Without ``--url`` it builds the app from the default settings (the local model, the demo documents) over a
fresh state in a temporary folder, warms it up and serves it in this process on a free loopback port
(``start_server``). One untimed search first (it loads the reranker); then each phase sends ``--requests``
requests in all, spread over ``--users`` threads that each send theirs one after another: ``POST /v1/retrieve``
with the demo questions, then ``POST /v1/chat/completions`` with ``stream: true``, read to ``[DONE]``. Prints
requests/s, p50/p95 latency (and time to the first token of an answer) and the errors of each phase; JSON goes
to ``--output``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from ragbench.bench.answer import DEMO_QUESTIONS, fmt, percentile
from ragbench.cli import parse_counts, run_command, write_json


@dataclass
class Call:
    user: int
    question: str
    first_token_s: float | None = None
    total_s: float | None = None
    chunks: int = 0  # retrieval: chunks returned; answers: content pieces streamed
    error: str | None = None


def retrieve(http: httpx.Client, call: Call) -> None:
    reply = http.post("/v1/retrieve", json={"query": call.question})
    reply.raise_for_status()
    call.chunks = len(reply.json()["chunks"])


def stream_answer(http: httpx.Client, mode: str, question: str) -> Iterator[dict[str, Any]]:
    """``POST /v1/chat/completions`` streamed in ``mode``: each chunk's JSON, to ``[DONE]`` (RuntimeError if the
    stream ends without it or sends an error)."""
    body = {"model": f"ragapp-{mode}", "stream": True, "messages": [{"role": "user", "content": question}]}
    with http.stream("POST", "/v1/chat/completions", json=body) as reply:
        reply.raise_for_status()
        for line in reply.iter_lines():
            if line == "data: [DONE]":
                return
            if line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
                if "error" in data:
                    raise RuntimeError(data["error"]["message"])
                yield data
    raise RuntimeError("the stream ended without [DONE]")


def answer(http: httpx.Client, call: Call, start: float) -> None:
    for data in stream_answer(http, "workflow", call.question):
        if data["choices"][0]["delta"].get("content"):
            call.chunks += 1
            if call.first_token_s is None:
                call.first_token_s = time.perf_counter() - start


def run_phase(url: str, key: str | None, users: int, calls: list[Call], stream: bool) -> float:
    """Send ``calls`` from ``users`` threads at once; returns the wall time."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}

    def user(index: int) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=600) as http:
            for call in calls[index::users]:
                start = time.perf_counter()
                try:
                    if stream:
                        answer(http, call, start)
                    else:
                        retrieve(http, call)
                except Exception as exc:  # the benchmark reports errors; it does not stop at them
                    call.error = f"{type(exc).__name__}: {exc}"
                call.total_s = time.perf_counter() - start

    threads = [threading.Thread(target=user, args=(i,)) for i in range(users)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def summarize(calls: list[Call], wall_s: float) -> dict[str, Any]:
    ok = [c for c in calls if c.error is None]

    def stat(values: list[float]) -> dict[str, float | None]:
        return {"p50": percentile(values, 0.5), "p95": percentile(values, 0.95)}

    return {
        "requests": len(calls),
        "errors": len(calls) - len(ok),
        "wall_s": round(wall_s, 2),
        "requests_per_s": round(len(ok) / wall_s, 3) if wall_s > 0 else None,
        "total_s": stat([c.total_s for c in ok if c.total_s is not None]),
        "first_token_s": stat([c.first_token_s for c in ok if c.first_token_s is not None]),
    }


@contextmanager
def local_server() -> Iterator[str]:
    """The app over a fresh state (default settings: the local model, the demo documents), warmed up and served
    on a free loopback port in this process; yields its URL."""
    from ragapp.config import Settings
    from ragapp.engine.build import build_engine
    from ragapp.serve.server import start_server

    with tempfile.TemporaryDirectory(prefix="ragbench-api-") as state:
        engine = build_engine(Settings(paths={"state_dir": state}))  # type: ignore[arg-type]
        try:
            engine.warm_up()
            server = start_server(engine, "127.0.0.1", 0)
            try:
                yield server.url
            finally:
                server.close()
        finally:
            engine.close()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.api", description=__doc__.split("\n\n")[0])
    p.add_argument("--users", type=int, default=8, help="clients at once (default: %(default)s).")
    p.add_argument("--requests", type=int, default=8, help="requests per phase, in all (default: %(default)s).")
    p.add_argument("--url", help="a running app (default: start one in this process, on loopback).")
    p.add_argument("--key", help="an API key for --url (python -m ragapp.users key NAME).")
    p.add_argument("--output", type=Path, help="write the calls and the summary here as JSON.")
    return p


def _report(name: str, summary: dict[str, Any]) -> None:
    t, f = summary["total_s"], summary["first_token_s"]
    line = (
        f"  {name:9s} {summary['requests']:3d} requests, {summary['errors']} errors, "
        f"{fmt(summary['requests_per_s'], 2)} req/s; latency p50 {fmt(t['p50'], 2)} s, p95 {fmt(t['p95'], 2)} s"
    )
    if f["p50"] is not None:
        line += f"; first token p50 {fmt(f['p50'], 2)} s, p95 {fmt(f['p95'], 2)} s"
    print(line)


def _run(args: argparse.Namespace) -> int:
    questions = [str(e["question"]) for e in json.loads(DEMO_QUESTIONS.read_text("utf-8"))]
    phases: dict[str, list[Call]] = {
        name: [Call(i % args.users, questions[i % len(questions)]) for i in range(args.requests)]
        for name in ("retrieve", "answer")
    }

    def go(url: str) -> dict[str, Any]:
        # One search first, untimed: the first loads what the warm-up does not (the reranker, the caches)
        headers = {"Authorization": f"Bearer {args.key}"} if args.key else {}
        with httpx.Client(base_url=url, headers=headers, timeout=600) as http:
            retrieve(http, Call(0, "warm up"))
        out = {}
        for name, calls in phases.items():
            wall = run_phase(url, args.key, args.users, calls, stream=name == "answer")
            out[name] = summarize(calls, wall)
        return out

    with nullcontext(args.url.rstrip("/")) if args.url else local_server() as url:
        print(f"app at {url}; {args.users} users, {args.requests} requests per phase", file=sys.stderr)
        summary = go(url)
    print(f"HTTP API, {args.users} users, {os.cpu_count()} CPUs:")
    for name, figures in summary.items():
        _report(name, figures)
    for name, calls in phases.items():
        for call in calls:
            if call.error:
                print(f"  {name} error (user {call.user}): {call.error}")
    if args.output:
        payload = {
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "cpus": os.cpu_count(),
            "users": args.users,
            "summary": summary,
            "calls": {name: [asdict(c) for c in calls] for name, calls in phases.items()},
        }
        write_json(args.output, payload)
    return 1 if any(s["errors"] for s in summary.values()) else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_counts(_parser(), argv, "users", "requests")
    return run_command(_run, args)


if __name__ == "__main__":
    raise SystemExit(main())
