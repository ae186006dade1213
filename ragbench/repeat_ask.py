"""``python -m ragbench.repeat_ask``: a question asked again, end to end, through the HTTP API and the page.

    python -m ragbench.repeat_ask [--limit 4] [--question TEXT ...] [--url http://127.0.0.1:7860] \\
        [--output results/bench/repeat_ask.json]

Without ``--url`` it starts the app (``app.py``: the local model, the demo documents, a fresh state) with the
answer cache on, on a free loopback port, and waits until ``/readyz`` says its models are loaded. Then each demo
question (``assets/examples.json``, the first ``--limit``) is asked twice through each path a user takes:
- the OpenAI-compatible API: ``POST /v1/chat/completions`` streamed, timed to ``data: [DONE]``; a hit is a reply
  whose ``ragapp.answered_before`` is set;
- the page, in headless Chromium (Debian's, as the browser tests use; ``RAGAPP_TEST_CHROMIUM`` to point
  elsewhere): a new browser page (a new chat) per ask, timed from pressing Enter until the answer is complete on
  screen: its 👍/👎 or its "Answer again" shown and nothing on the page being updated any more (the events chained
  after the answer done too: the chat kept in the sidebar, its sources shown beside it). A hit shows "Answered
  before", and is also timed to that note's showing (it comes with the whole answer and its citations).
Both paths ask in the page's mode (``agent.mode``) over every knowledge base, so they share kept answers: the
path that asks a question first alternates from one question to the next, and the other path's first ask is
then a hit too. Prints each ask (path, first or second, seconds, hit) and the p50/max of the hits per path; JSON
goes to ``--output``. The time of a hit should be at most 1 s (issue 35).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from ragapp.config import Settings
from ragbench.api import stream_answer
from ragbench.bench.answer import DEMO_QUESTIONS, fmt, percentile
from ragbench.bench.load import running_app, wait_until_up
from ragbench.cli import parse_counts, run_command, write_json

READY_TIMEOUT_S = 900.0  # a first start ingests the demo documents and loads the models
ANSWER_TIMEOUT_S = 600.0  # the local model on a busy 2-core machine
CHROMIUM = os.environ.get("RAGAPP_TEST_CHROMIUM", "/usr/bin/chromium")
# Installed before Enter: from then on, each animation frame looks at the page and notes when a kept answer is
# shown (its "Answered before" note) and when the answer is complete: its 👍/👎 or "Answer again" have been shown
# and nothing on the page is being updated any more (the chat kept in the sidebar, its sources shown beside it:
# the events chained after the answer). The buttons alone are not enough: an answer's first bubbles may show
# them while the model still writes.
_WATCH = """() => {
    const t0 = performance.now();
    const visible = (el) => el.offsetParent !== null;
    window.__repeat = {};
    const tick = () => {
        const chat = document.querySelector('#chatbot');
        const done = window.__repeat;
        if (chat && done.shown === undefined && chat.innerText.includes('Answered before')) {
            done.shown = (performance.now() - t0) / 1000;
        }
        if (chat && done.ready === undefined) {
            const busy = '.generating, .pending, [data-status="pending"]';
            const writing = chat.closest('.generating') || chat.querySelector(busy);
            const rated = [...chat.querySelectorAll('.message-buttons-left')].some(visible);
            const again = [...chat.querySelectorAll('button')]
                .some((b) => visible(b) && b.innerText.includes('Answer again'));
            if (!writing && (rated || again)) done.ready = true;
        }
        if (done.ready && !document.querySelector('.generating')) {
            done.settled = (performance.now() - t0) / 1000;
            return;
        }
        requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
}"""


@dataclass
class Ask:
    question: str
    path: str  # "api" or "page"
    nth: int  # 1: the first time this path asks it, 2: the second
    seconds: float | None = None  # to the answer complete: [DONE] on the API, the page settled on the page
    shown_s: float | None = None  # the page, a kept answer: until it is on screen, with its note and citations
    hit: bool = False  # answered from the answer cache
    error: str | None = None


def ask_api(http: httpx.Client, question: str, mode: str) -> bool:
    """Ask through the API, streamed, read to ``[DONE]``; whether it was answered from the cache."""
    kept = [bool((data.get("ragapp") or {}).get("answered_before")) for data in stream_answer(http, mode, question)]
    return any(kept)


def ask_page(browser: Any, url: str, question: str) -> tuple[float, float | None]:
    """Ask in a new page (a new chat): the seconds from Enter to the answer complete on screen, and to a kept
    answer's note shown (None: the answer was not a kept one)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    try:
        page = context.new_page()
        page.set_default_timeout(ANSWER_TIMEOUT_S * 1000)
        page.goto(url)
        box = page.locator("#question textarea")
        box.wait_for()
        box.fill(question)
        page.evaluate(_WATCH)
        box.press("Enter")
        page.wait_for_function("() => window.__repeat.settled !== undefined", timeout=ANSWER_TIMEOUT_S * 1000)
        done = page.evaluate("window.__repeat")
        shown = done.get("shown")
        return float(done["settled"]), float(shown) if shown is not None else None
    finally:
        context.close()


@contextmanager
def chromium() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # a dev dependency
        raise SystemExit("playwright is missing: make setup-dev (and Debian's chromium)") from exc
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"Chromium not found at {CHROMIUM}: apt-get install chromium, or set RAGAPP_TEST_CHROMIUM")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield browser
        finally:
            browser.close()


def run_asks(url: str, questions: list[str], mode: str) -> list[Ask]:
    asks: list[Ask] = []
    with chromium() as browser, httpx.Client(base_url=url, timeout=ANSWER_TIMEOUT_S) as http:
        for index, question in enumerate(questions):
            order = ("api", "page") if index % 2 == 0 else ("page", "api")
            for path in order:
                for nth in (1, 2):
                    ask = Ask(question, path, nth)
                    try:
                        if path == "api":
                            start = time.perf_counter()
                            ask.hit = ask_api(http, question, mode)
                            ask.seconds = time.perf_counter() - start
                        else:
                            ask.seconds, ask.shown_s = ask_page(browser, url, question)
                            ask.hit = ask.shown_s is not None
                    except Exception as exc:  # reported, not fatal: the other asks still run
                        ask.error = f"{type(exc).__name__}: {exc}"
                    asks.append(ask)
                    kept = " (kept answer)" if ask.hit else ""
                    note = f", its note shown at {fmt(ask.shown_s, 2)} s" if ask.shown_s is not None else ""
                    shown = f"error: {ask.error}" if ask.error else f"{fmt(ask.seconds, 2)} s{kept}{note}"
                    print(f"  {path:4s} ask {nth}: {shown}  {question}", flush=True)
    return asks


def summarize(asks: list[Ask]) -> dict[str, Any]:
    out: dict[str, Any] = {"errors": sum(1 for a in asks if a.error)}
    for path in ("api", "page"):
        for kind, hit in (("hits", True), ("misses", False)):
            values = [a.seconds for a in asks if a.path == path and a.hit is hit and a.seconds is not None]
            out[f"{path}_{kind}"] = {
                "n": len(values),
                "p50": percentile(values, 0.5),
                "max": max(values, default=None),
            }
    shown = [a.shown_s for a in asks if a.path == "page" and a.shown_s is not None]
    out["page_hits_shown"] = {"n": len(shown), "p50": percentile(shown, 0.5), "max": max(shown, default=None)}
    second = [a for a in asks if a.nth == 2 and a.error is None]
    out["second_asks_kept"] = f"{sum(a.hit for a in second)} of {len(second)}"
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.repeat_ask", description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=4, help="demo questions to ask (default: %(default)s).")
    p.add_argument("--question", action="append", help="ask this instead of the demo questions (repeatable).")
    p.add_argument("--url", help="a running app with the answer cache on (default: start one on loopback).")
    p.add_argument("--output", type=Path, help="write the asks and the summary here as JSON.")
    return p


def _run(args: argparse.Namespace) -> int:
    demo = [str(e["question"]) for e in json.loads(DEMO_QUESTIONS.read_text("utf-8"))]
    questions = (args.question or demo)[: args.limit]
    mode = Settings().agent.mode
    if args.url:
        wait_until_up(f"{args.url.rstrip('/')}/readyz", READY_TIMEOUT_S)
        asks = run_asks(args.url.rstrip("/"), questions, mode)
    else:
        log = Path(tempfile.gettempdir()) / "ragbench-repeat-ask-app.log"
        print(f"starting the app (log: {log}), until /readyz says its models are loaded", file=sys.stderr)
        with running_app(log, {"RAGAPP_ANSWER_CACHE__ENABLED": "true"}, ready="readyz") as started:
            asks = run_asks(started.rstrip("/"), questions, mode)
    summary = summarize(asks)
    for path in ("api", "page"):
        hits, misses = summary[f"{path}_hits"], summary[f"{path}_misses"]
        print(
            f"{path:4s}: kept answer p50 {fmt(hits['p50'], 2)} s, max {fmt(hits['max'], 2)} s (n={hits['n']}); "
            f"answered anew p50 {fmt(misses['p50'])} s (n={misses['n']})"
        )
    f = summary["page_hits_shown"]
    print(f"page: kept answer's note shown p50 {fmt(f['p50'], 2)} s, max {fmt(f['max'], 2)} s")
    print(f"second asks answered from the cache: {summary['second_asks_kept']}; errors: {summary['errors']}")
    if args.output:
        payload = {
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
            "mode": mode,
            "summary": summary,
            "asks": [asdict(a) for a in asks],
        }
        write_json(args.output, payload)
    return 1 if summary["errors"] else 0


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, parse_counts(_parser(), argv, "limit"))


if __name__ == "__main__":
    sys.exit(main())
