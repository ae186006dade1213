"""What recording a trace costs a request: the same questions answered with traces on and off.

    .venv/bin/python -m ragbench.trace_overhead --questions 40

A real engine (embedder, Chroma, BM25) over the demo documents, with a stand-in model that answers at once, so
the difference between the two runs is the recorder (spans, search records, the LLM wrapper, the queued write).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ragapp.config import REPO_ROOT, Settings
from ragapp.core.types import ChatTurn
from ragapp.engine.build import build_engine
from ragapp.models.llm import LLMS

QUESTIONS = [
    "What does error code E07 mean on the Lumen V2 Pro?",
    "Which V2 Pro firmware version added pet mode?",
    "How long is the warranty?",
    "保修期是多久？",
    "如何退货？",
]


class Instant:
    name = "instant"

    def stream_chat(self, messages: list[ChatTurn], **_: object) -> Iterator[str]:
        yield "An answer [1]."


def run(traces: bool, count: int) -> list[float]:
    with tempfile.TemporaryDirectory() as state:
        settings = Settings(
            paths={"state_dir": Path(state), "load_demo": True, "demo_dir": REPO_ROOT / "data" / "demo"},
            llm={"backend": "instant"},
            workflow={"rewrite": False, "route": False},
            traces={"enabled": traces},
        )
        engine = build_engine(settings)
        times = []
        for i in range(count + len(QUESTIONS)):
            question = QUESTIONS[i % len(QUESTIONS)] + f" ({i})"  # new text each time: no retrieval cache hit
            start = time.perf_counter()
            for _event in engine.chat.ask(question):
                pass
            if i >= len(QUESTIONS):  # the first round warms the models
                times.append((time.perf_counter() - start) * 1000)
        engine.close()
        return times


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--questions", type=int, default=40)
    args = p.parse_args()
    LLMS.register("instant")(lambda settings: Instant())
    for label, traces in (("traces off", False), ("traces on", True), ("traces off", False), ("traces on", True)):
        times = sorted(run(traces, args.questions))
        p95 = times[int(0.95 * (len(times) - 1))]
        print(f"{label}: p50 {statistics.median(times):.1f} ms, p95 {p95:.1f} ms over {len(times)} questions")


if __name__ == "__main__":
    main()
