"""``python -m ragbench.bench load``: several people asking the running app at once, through its web API.

    python -m ragbench.bench load [--users 4] [--questions 8] [--url http://127.0.0.1:7860/] \\
        [--output results/bench/load.json]

Without ``--url`` it starts the app (``app.py``, embedded defaults, a fresh state) on a free loopback port and
stops it after. Each of ``--users`` threads asks its share of ``--questions`` demo questions one after another
through the Gradio client, as a browser does, and reads every streamed update: when the quoted evidence came,
whether and how long the answer waited in the model's queue (and behind how many), when the answer's first
words came, when it ended, and any error. Prints p50/p95 of each and the errors; JSON goes to ``--output``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.config import REPO_ROOT
from ragbench.bench.answer import DEMO_QUESTIONS, fmt, percentile
from ragbench.cli import parse_counts, run_command, write_json
from ragcluster.services import free_port

START_TIMEOUT_S = 900.0  # a first start ingests the demo documents and loads the models
_AHEAD = re.compile(r"(\d+) answers? ahead of yours")
_NOT_ANSWER = ("📌", "⚠️", "ℹ️", "🤖", "🧭")  # evidence, notices and mode lines: not the answer's own bubble


@dataclass
class Request:
    user: int
    question: str
    evidence_s: float | None = None
    first_words_s: float | None = None
    total_s: float | None = None
    max_ahead: int = 0  # the most answers this one saw ahead of it in the model's queue
    queued_from: float | None = None  # seconds after Send of the first update that showed it in line
    queued_s: float = 0.0  # from then to the last such update
    answer: str = ""
    error: str | None = None


def _content(message: Any) -> tuple[str, str]:
    """(title and the live line beside it, text) of a chat message as the Gradio client returns it."""
    if not isinstance(message, dict):
        return "", str(message)
    metadata = message.get("metadata") or {}
    content = message.get("content")
    if isinstance(content, list):  # Gradio 5+: a list of {"type": "text", "text": ...}
        content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    title = " ".join(str(metadata.get(key) or "") for key in ("title", "log")).strip()
    return title, str(content or "")


def read_update(request: Request, chat: list[Any], elapsed: float) -> None:
    """Take what one streamed update shows about this turn (the messages after the last user message)."""
    last_user = max((i for i, m in enumerate(chat) if isinstance(m, dict) and m.get("role") == "user"), default=-1)
    for message in chat[last_user + 1 :]:
        title, text = _content(message)
        if title:
            match = _AHEAD.search(title)
            if match:
                if request.queued_from is None:
                    request.queued_from = elapsed
                request.max_ahead = max(request.max_ahead, int(match.group(1)))
                request.queued_s = elapsed - request.queued_from
            continue
        if text.startswith("📌"):
            if request.evidence_s is None:
                request.evidence_s = elapsed
        elif text and not text.startswith(_NOT_ANSWER):
            if request.first_words_s is None:
                request.first_words_s = elapsed
            request.answer = text


def ask(client: Any, request: Request) -> None:
    start = time.perf_counter()
    try:
        job = client.submit(request.question, [], [], "workflow", f"load-user-{request.user}", api_name="/respond")
        for update in job:
            chat = update[1] if isinstance(update, (list, tuple)) and len(update) > 1 else []
            read_update(request, chat or [], time.perf_counter() - start)
        job.result()  # raises what the app raised
    except Exception as exc:  # the benchmark reports errors; it does not stop at them
        request.error = f"{type(exc).__name__}: {exc}"
    request.total_s = time.perf_counter() - start
    if not request.answer and request.error is None:
        request.error = "no answer came"


def wait_until_up(
    url: str, timeout_s: float, app: subprocess.Popen[bytes] | None = None, log: Path | None = None
) -> None:
    """Poll ``url`` each second until it answers 200; RuntimeError if ``app`` exits first or the time runs out."""
    deadline = time.monotonic() + timeout_s
    while True:
        if app is not None and app.poll() is not None:
            raise RuntimeError(f"the app exited with {app.returncode}; see {log}")
        try:
            urllib.request.urlopen(url, timeout=10).close()  # an HTTP error status raises too (an OSError)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer within {timeout_s:.0f} s") from None
            time.sleep(1)


@contextmanager
def running_app(log_path: Path, env: dict[str, str] | None = None, ready: str = ""):  # type: ignore[no-untyped-def]
    """The app on a free loopback port over a fresh state (``env``: more of its environment); yields its URL once
    it answers HTTP (at ``ready``, e.g. "readyz": once its models are loaded)."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ragbench-load-") as state:
        env = os.environ | (env or {}) | {"RAGAPP_PATHS__STATE_DIR": state, "RAGAPP_UI__PORT": str(port)}
        with log_path.open("w") as log:
            app = subprocess.Popen([sys.executable, str(REPO_ROOT / "app.py")], env=env, stdout=log, stderr=log)
            url = f"http://127.0.0.1:{port}/"
            try:
                wait_until_up(url + ready, START_TIMEOUT_S, app, log_path)
                yield url
            finally:
                app.terminate()
                try:
                    app.wait(30)
                except subprocess.TimeoutExpired:
                    app.kill()


def summarize(requests: list[Request]) -> dict[str, Any]:
    def stat(name: str) -> dict[str, float | None]:
        values = [v for r in requests if r.error is None and (v := getattr(r, name)) is not None]
        return {"n": len(values), "p50": percentile(values, 0.5), "p95": percentile(values, 0.95)}

    queued = [r for r in requests if r.max_ahead > 0]
    return {
        "requests": len(requests),
        "errors": sum(1 for r in requests if r.error),
        "evidence_s": stat("evidence_s"),
        "first_words_s": stat("first_words_s"),
        "total_s": stat("total_s"),
        "saw_queue_position": len(queued),
        "queued_s": {
            "p50": percentile([r.queued_s for r in queued], 0.5),
            "max": max((r.queued_s for r in queued), default=None),
        },
        "max_ahead": max((r.max_ahead for r in requests), default=0),
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.bench load", description=__doc__.split("\n\n")[0])
    p.add_argument("--users", type=int, default=4, help="people asking at once (default: %(default)s).")
    p.add_argument("--questions", type=int, default=8, help="questions in all (default: %(default)s).")
    p.add_argument("--url", help="a running app (default: start one on loopback).")
    p.add_argument("--output", type=Path, help="write the requests and the summary here as JSON.")
    return p


def _run(args: argparse.Namespace) -> int:
    from gradio_client import Client

    questions = [str(e["question"]) for e in json.loads(DEMO_QUESTIONS.read_text("utf-8"))]
    requests = [Request(i % args.users, questions[i % len(questions)]) for i in range(args.questions)]

    def go(url: str) -> float:
        clients = [Client(url, verbose=False) for _ in range(args.users)]
        start = time.perf_counter()

        def user(index: int) -> None:
            for request in requests[index :: args.users]:
                ask(clients[index], request)

        threads = [threading.Thread(target=user, args=(i,)) for i in range(args.users)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - start

    if args.url:
        wall = go(args.url)
    else:
        log = Path(tempfile.gettempdir()) / "ragbench-load-app.log"
        with running_app(log) as url:
            print(f"app up at {url} (log: {log})", file=sys.stderr)
            wall = go(url)
    summary = summarize(requests) | {"users": args.users, "wall_s": round(wall, 1)}
    print(f"{args.users} users, {len(requests)} questions in {wall:.0f} s; errors: {summary['errors']}")
    for name in ("evidence_s", "first_words_s", "total_s"):
        f = summary[name]
        print(f"  {name[:-2].replace('_', ' '):12s} p50 {fmt(f['p50'])} s, p95 {fmt(f['p95'])} s (n={f['n']})")
    q = summary["queued_s"]
    print(
        f"  {summary['saw_queue_position']} of {len(requests)} answers waited in the model's queue and showed their "
        f"place (at most {summary['max_ahead']} ahead); wait p50 {fmt(q['p50'])} s, max {fmt(q['max'])} s"
    )
    for r in requests:
        if r.error:
            print(f"  error (user {r.user}): {r.error}")
    if args.output:
        payload = {
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "cpus": os.cpu_count(),
            "summary": summary,
            "requests": [asdict(r) for r in requests],
        }
        write_json(args.output, payload)
    return 1 if summary["errors"] else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_counts(_parser(), argv, "users", "questions")
    return run_command(_run, args)
