"""``python -m ragbench.staged_ingest``: how soon an upload answers, inline and staged (docs/documents.md).

For each mode, in turn (``--rounds`` times: inline, staged, inline, ...), a fresh state folder, one document
uploaded into a knowledge base while a search for ``--question`` runs every ``--poll-s`` seconds: the time until
a passage holding ``--expect`` comes back (the first answer by keywords), until the upload returns, and until the
base is fully indexed (every enrichment step done). Inline is ``RAGAPP_ENRICH__BACKGROUND=false``, as before
staged ingest; staged is the default.

    python -m ragbench.staged_ingest --output results/bench/staged_ingest.json   (make bench-staged)
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.engine.build import build_engine
from ragbench.cli import print_results, run_command

KB = "manual"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.staged_ingest", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--document", type=Path, default=Path("/usr/share/doc/git-doc/user-manual.html"))
    p.add_argument("--question", default="How do I find the commit that introduced a bug with git bisect?")
    p.add_argument("--expect", default="bisect", help="text a passage found for the question holds")
    p.add_argument("--rounds", type=int, default=1, help="inline-then-staged pairs, interleaved")
    p.add_argument("--poll-s", type=float, default=1.0, help="seconds between searches while it indexes")
    p.add_argument("--output", type=Path, help="write the figures as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def one_upload(document: Path, question: str, expect: str, background: bool, poll_s: float) -> dict[str, Any]:
    """Seconds from the upload's start to its first answering search, its return and its full indexing."""
    with tempfile.TemporaryDirectory(prefix="staged-ingest-") as state:
        settings = Settings(paths={"state_dir": Path(state), "load_demo": False}, enrich={"background": background})
        engine = build_engine(settings)
        try:
            engine.chat.retrieve(question, frozenset({KB}))  # the embedder and reranker load before the clock
            returned: dict[str, float] = {}
            began = time.monotonic()

            def upload() -> None:
                (result,) = engine.library.ingest([(document, document.name)], kb=KB)
                returned["at"] = time.monotonic() - began
                returned["chunks"] = result.chunks

            worker = threading.Thread(target=upload)
            worker.start()
            first = None
            while first is None:
                found = engine.chat.retrieve(question, frozenset({KB})).chunks
                if any(expect.lower() in c.chunk.text.lower() for c in found):
                    first = time.monotonic() - began
                else:
                    time.sleep(poll_s)
            worker.join()
            enrichment = engine.enrichment
            while enrichment is not None and enrichment.progress(KB).indexing:
                time.sleep(poll_s)
            full = time.monotonic() - began
        finally:
            engine.close()
    return {"mode": "staged" if background else "inline", "chunks": returned["chunks"],
            "first_answer_s": round(first, 1), "upload_returned_s": round(returned["at"], 1),
            "fully_indexed_s": round(full, 1)}  # fmt: skip


def _run(args: argparse.Namespace) -> int:
    runs = []
    for _ in range(args.rounds):
        for background in (False, True):
            runs.append(one_upload(args.document, args.question, args.expect, background, args.poll_s))
            print(runs[-1], flush=True)
    results = {
        "document": str(args.document),
        "bytes": args.document.stat().st_size,
        "question": args.question,
        "runs": runs,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_at_end": os.getloadavg()},
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return print_results(results, args.output)


if __name__ == "__main__":
    raise SystemExit(main())
