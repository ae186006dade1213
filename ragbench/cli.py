"""What every ``python -m ragbench.<command>`` shares: offline defaults, plain logging, errors as one line."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.core.errors import RagAppError


def run_command(run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Call ``run(args)`` offline; a ``RagAppError`` becomes "error: ..." on stderr and exit status 2."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        return run(args)
    except RagAppError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def parse_counts(parser: argparse.ArgumentParser, argv: list[str] | None, *names: str) -> argparse.Namespace:
    """``parser``'s arguments, each of the count options ``names`` (e.g. "limit") at least 1 when given."""
    args = parser.parse_args(argv)
    for name in names:
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def settings_snapshot(settings: Settings) -> dict[str, Any]:
    """The settings an answering run used, for its JSON (the API key left out)."""
    sections = ("embedding", "ingest", "retrieval", "rerank", "workflow", "agent")
    return {"llm": settings.llm.model_dump(mode="json", exclude={"api_key"})} | {
        name: getattr(settings, name).model_dump(mode="json") for name in sections
    }


def write_json(path: Path, payload: Any) -> None:
    """``payload`` as indented JSON at ``path`` (its folder made), and "wrote PATH" on stderr."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(f"wrote {path}", file=sys.stderr)


def print_results(results: dict[str, Any], output: Path | None) -> int:
    """Print a benchmark's figures as JSON, and write them to ``output`` too when given; exit status 0."""
    if output:
        write_json(output, results)
    print(json.dumps(results, indent=2))
    return 0


def grid(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A plain-text table's lines: the first column to the left, the others to the right, a rule under the header."""
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = (c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
        return "  ".join(padded).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]
