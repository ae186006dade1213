"""``python -m ragbench.checked_stream``: what streaming only checked sentences costs the HTTP API's first token.

Asks the demo questions (assets/examples.json) through the engine with the default settings (the local model,
the demo documents, over a fresh state in a temporary folder; the answer cache off) and times, in the same
request, three moments a client could see its first word: the model's first token (what the API streamed before
it sent checked sentences only), the first checked sentence (``CheckedTextEvent``: what it streams now) and the
checked answer (holding everything to the end). Prints each question's times and the medians' ratios to the first
token; one run, so the ratios hold on a busy machine where the seconds do not.

    .venv/bin/python -m ragbench.checked_stream [--limit N] [--output results/bench/checked_stream.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ragapp.core.events import AnswerEvent, CheckedTextEvent, TokenEvent
from ragbench.bench.answer import DEMO_QUESTIONS
from ragbench.cli import parse_counts, run_command


def timed(engine: Any, question: str) -> dict[str, Any]:
    """Seconds from the question to the first token, the first checked sentence and the checked answer."""
    start = time.perf_counter()
    seen: dict[str, Any] = {"question": question, "first_token_s": None, "first_checked_s": None, "answer_s": None}
    for event in engine.chat.ask(question, mode="workflow"):
        now = round(time.perf_counter() - start, 3)
        if isinstance(event, TokenEvent) and event.text.strip() and seen["first_token_s"] is None:
            seen["first_token_s"] = now
        elif isinstance(event, CheckedTextEvent) and seen["first_checked_s"] is None:
            seen["first_checked_s"] = now
        elif isinstance(event, AnswerEvent):
            seen["answer_s"] = now
            seen["answer_chars"] = len(event.text)
    return seen


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the questions the model answered (a first token), and their ratios to the first token. A
    question whose answer gave no checked sentence before its end counts its answer time as its first checked
    word: that is when the API sends it."""
    answered = [r for r in rows if r["first_token_s"] is not None and r["answer_s"] is not None]
    if not answered:
        return {"answered": 0}
    token = statistics.median(r["first_token_s"] for r in answered)
    checked = statistics.median(r["first_checked_s"] or r["answer_s"] for r in answered)
    whole = statistics.median(r["answer_s"] for r in answered)
    return {
        "answered": len(answered),
        "checked_before_the_end": sum(r["first_checked_s"] is not None for r in answered),
        "first_token_s_p50": round(token, 2),
        "first_checked_s_p50": round(checked, 2),
        "answer_s_p50": round(whole, 2),
        "checked_over_token": round(checked / token, 2),
        "answer_over_token": round(whole / token, 2),
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.checked_stream", description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, help="the first N demo questions only.")
    p.add_argument("--output", type=Path, help="write the rows and the summary here as JSON.")
    return p


def _run(args: argparse.Namespace) -> int:
    from ragapp.config import Settings
    from ragapp.engine.build import build_engine

    questions = [str(e["question"]) for e in json.loads(DEMO_QUESTIONS.read_text("utf-8"))][: args.limit]
    with tempfile.TemporaryDirectory(prefix="ragbench-checked-") as state:
        settings = Settings(paths={"state_dir": state}, answer_cache={"enabled": False})  # type: ignore[arg-type]
        engine = build_engine(settings)
        try:
            engine.warm_up()
            rows = []
            for question in questions:
                rows.append(timed(engine, question))
                print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
        finally:
            engine.close()
    result = {"summary": summary(rows), "rows": rows}
    print(json.dumps(result["summary"], indent=1))
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=1, ensure_ascii=False), "utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, parse_counts(_parser(), argv, "limit"))


if __name__ == "__main__":
    raise SystemExit(main())
