"""``make cluster``: the local cluster on loopback until Ctrl-C (see ragcluster.cluster)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from ragcluster.cluster import Cluster


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="PostgreSQL, a Chroma server, an LLM server, app replicas and a "
                                     "balancer on loopback; Ctrl-C stops them all.")  # fmt: skip
    parser.add_argument("--replicas", type=int, default=2, help="app replicas (default 2)")
    parser.add_argument("--port", type=int, default=7860, help="the balancer's port (default 7860)")
    parser.add_argument("--folder", type=Path, default=Path("data/cluster"), help="where everything keeps its data")
    args = parser.parse_args(argv)
    names = tuple(chr(ord("a") + i) for i in range(max(1, min(args.replicas, 26))))
    cluster = Cluster(args.folder.resolve(), names)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def say(text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    try:
        cluster.start(proxy_port=args.port, say=say)
        say(f"\nThe app: {cluster.url}  (replicas: {', '.join(r.url for r in cluster.replicas.values())})")
        say(f"Logs and data: {args.folder}. Every replica runs with:")
        for key, value in cluster.replica_env(names[0]).items():
            if key != "RAGAPP_PATHS__STATE_DIR":
                say(f"  {key}={value}")
        say("Ctrl-C stops everything.")
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        say("stopping …")
        cluster.stop()


if __name__ == "__main__":
    main()
