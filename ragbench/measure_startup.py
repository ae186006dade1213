"""Time the first start and one answer with the local model, as a user would meet them.

Prints: time to build the engine on an empty state folder (which indexes the demo knowledge base),
the demo ingestion time alone, model warm-up, and for one demo question the time to first token and
to the full answer. Figures from one run on this machine; run it on a quiet machine.

    .venv/bin/python -m ragbench.measure_startup [--question "..."]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from ragapp.config import Settings
from ragapp.core.turn import Turn
from ragapp.engine.build import build_engine


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--question", default="零件号 LB-5200 的保修期是多久？")
    parser.add_argument("--local-model", default=None, help="qwen2.5-coder-1.5b or qwen2.5-coder-0.5b")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    state = Path(tempfile.mkdtemp(prefix="ragapp-measure-"))
    llm = {"local_model": args.local_model} if args.local_model else {}

    start = time.perf_counter()
    empty = build_engine(Settings(paths={"state_dir": state / "empty", "load_demo": False}, llm=llm))
    build_empty = time.perf_counter() - start
    start = time.perf_counter()
    engine = build_engine(Settings(paths={"state_dir": state / "demo"}, llm=llm))
    build_with_demo = time.perf_counter() - start
    empty.close()
    start = time.perf_counter()
    engine.warm_up()
    warm_up = time.perf_counter() - start

    start = time.perf_counter()
    turn = Turn.of(engine.chat.ask(args.question))
    first_token, answer = turn.first_token_s, turn.text if turn.answer is not None else ""
    total = time.perf_counter() - start
    status = engine.status()
    engine.close()
    start = time.perf_counter()
    build_engine(Settings(paths={"state_dir": state / "demo"}, llm=llm)).close()
    restart = time.perf_counter() - start
    figures = {
        "llm": status.llm,
        "embedder": status.embedder,
        "demo_documents": status.documents,
        "demo_chunks": status.chunks,
        "engine_start_empty_s": round(build_empty, 2),
        "demo_ingestion_s": round(build_with_demo - build_empty, 2),
        "model_warm_up_s": round(warm_up, 2),
        "start_to_ready_first_run_s": round(build_with_demo + warm_up, 2),
        "engine_restart_s": round(restart, 2),
        "question": args.question,
        "time_to_first_token_s": round(first_token or total, 2),
        "full_answer_s": round(total, 2),
        "answer": answer,
    }
    sys.stdout.write(json.dumps(figures, ensure_ascii=False, indent=2) + "\n")


if __name__ == "__main__":
    main()
