"""What every ``python -m ragapp.<command>`` shares: offline defaults, plain logging, errors as one line."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable

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
