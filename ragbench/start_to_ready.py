"""Seconds from starting the app (``python app.py``) to ``/readyz`` answering ready, as an operator meets them.

    .venv/bin/python -m ragbench.start_to_ready [--state DIR] [--runs 2]

Each run starts the app on a free loopback port with the state folder ``DIR`` (default: a fresh temporary
one, so the first run also indexes the demo knowledge base and the later runs are restarts over it), asks
``/healthz`` and ``/readyz`` every 0.2 s, and prints when the server answered and when it was ready (models
loaded, the search warmed: ``Engine.warm_up``); then stops it. Run it on an idle machine: every figure here
depends on what else is running.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from ragapp.config import REPO_ROOT

POLL_S = 0.2
LIMIT_S = 900.0  # a start that takes longer is reported as failed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def status(url: str) -> int | None:
    """The HTTP status of ``url``, or None while nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def one_start(state: Path, log: Path) -> tuple[float | None, float | None]:
    """Seconds to the server answering and to ``/readyz`` ready (None: not within ``LIMIT_S``)."""
    port = free_port()
    env = {**os.environ, "RAGAPP_PATHS__STATE_DIR": str(state), "RAGAPP_UI__HOST": "127.0.0.1"}
    env["RAGAPP_UI__PORT"] = str(port)
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    with log.open("ab") as out:
        app = subprocess.Popen([sys.executable, str(REPO_ROOT / "app.py")], env=env, stdout=out, stderr=out)
    up: float | None = None
    try:
        while (elapsed := time.perf_counter() - started) < LIMIT_S and app.poll() is None:
            if up is None and status(f"{base}/healthz") == 200:
                up = elapsed
            if up is not None and status(f"{base}/readyz") == 200:
                return up, time.perf_counter() - started
            time.sleep(POLL_S)
        return up, None
    finally:
        app.terminate()
        try:
            app.wait(30)
        except subprocess.TimeoutExpired:
            app.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=Path, help="state folder (default: a fresh temporary one)")
    parser.add_argument("--runs", type=int, default=2, help="starts in a row over the same state (default: 2)")
    args = parser.parse_args(argv)
    state = args.state or Path(tempfile.mkdtemp(prefix="ragapp-ready-"))
    log = state.parent / f"{state.name}-app.log"
    for run in range(1, args.runs + 1):
        up, ready = one_start(state, log)
        shown = "-" if ready is None else f"{ready:.1f} s"
        print(f"start {run}: serving after {'-' if up is None else f'{up:.1f} s'}, ready after {shown} (log: {log})")
        if ready is None:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
