"""``python -m ragapp.engine.write_questions --kb NAME [--limit N]``: write the questions of one knowledge base's
chunks that have none, now, in this process (the "questions" enrichment step, ``ragapp.enrich.questions``), with
the configured model. Run it beside a stopped or running app on the same state; it writes as the step does."""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Sequence

from ragapp.config import Settings
from ragapp.engine.build import build_engine
from ragapp.enrich.questions import QuestionsStep

log = logging.getLogger(__name__)


def main(argv: Sequence[str] | None = None) -> int:
    """Write the questions of ``--kb``'s chunks that have none (``--limit`` at most; 0: all)."""
    parser = argparse.ArgumentParser(prog="python -m ragapp.engine.write_questions", description=main.__doc__)
    parser.add_argument("--kb", required=True, help="the knowledge base whose chunks get questions")
    parser.add_argument("--limit", type=int, default=0, help="at most this many chunks (0: all that have none)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    settings = Settings()
    # Asked for by name: written whatever RAGAPP_QUESTIONS__ENABLED says (it decides whether searches read them).
    settings = settings.model_copy(update={"questions": settings.questions.model_copy(update={"enabled": True})})
    engine = build_engine(settings)
    # The engine's own parts (this command is part of the engine layer; the background runner will own them).
    store, reranker, llm = engine._store, engine._retrieval.reranker, engine._llm
    try:
        step = QuestionsStep(llm, reranker, settings.questions)
        gone = step.orphans(store)
        if gone:
            step.forget(store, gone)
        todo = step.pending(store, args.kb)
        todo = todo[: args.limit] if args.limit > 0 else todo
        started = time.monotonic()
        for n, chunk_id in enumerate(todo, start=1):
            step.run(store, [chunk_id])
            rate = n / max(time.monotonic() - started, 1e-9) * 60
            log.info("%d/%d chunks (%.1f a minute)", n, len(todo), rate)
    finally:
        engine.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
