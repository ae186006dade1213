"""``python -m ragbench.crawl_speed``: how fast a knowledge base follows a website, and what a re-crawl costs.

Real manuals from Debian's installed documentation (``--manual``, repeatable; by default flex's, libffi's and
the Chinese New Maintainers' Guide, 204 pages linked from their start pages) are served under one home page on
loopback by Python's own HTTP server (``Last-Modified`` and ``If-Modified-Since``, as a static site answers),
and followed as a website source: the first crawl (pages/s, ingest included), a re-crawl with nothing changed,
and a re-crawl after ``--changes`` pages change, each with the requests the server saw and the pages read and
ingested. A re-crawl should cost one request a page and read only what changed.

    python -m ragbench.crawl_speed --output results/bench/crawl.json
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ragapp.config import Settings
from ragapp.sync.standalone import open_service
from ragbench.cli import print_results, run_command

HELD_OUT = ("python-policy", "zlib_how", "valgrind")  # the answer sets' held-out documents: never served
MANUALS = (Path("/usr/share/doc/flex-doc/html"), Path("/usr/share/doc/libffi-dev/html"),
           Path("/usr/share/doc/maint-guide-zh-cn/html"))  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.crawl_speed", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument(
        "--manual",
        type=Path,
        action="append",
        help="an HTML manual's folder (repeatable; default: " + ", ".join(str(m) for m in MANUALS) + ")",
    )
    p.add_argument("--changes", type=int, default=5, help="pages changed before the last re-crawl")
    p.add_argument("--work", type=Path, help="where the site and state go (default: a temporary folder)")
    p.add_argument("--output", type=Path, help="write the figures as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


class _Counted(SimpleHTTPRequestHandler):
    requests: Counter[str]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.requests[self.path] += 1
        super().do_GET()


def _serve(root: Path) -> tuple[ThreadingHTTPServer, Counter[str]]:
    counts: Counter[str] = Counter()
    handler = type("Handler", (_Counted,), {"requests": counts})
    server = ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(root)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, counts


def _copy(manual: Path, site: Path) -> list[Path]:
    pages = sorted(p for p in manual.rglob("*.htm*") if p.is_file() and not any(h in str(p) for h in HELD_OUT))
    copies = []
    for page in pages:
        copy = site / page.relative_to(manual)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(page, copy)  # the package's times: what Last-Modified says
        copies.append(copy)
    return copies


def _start(manual: Path) -> str:
    """A manual's start page: its index in whatever language it is written."""
    return next((p.name for p in sorted(manual.glob("index*.htm*"))), "index.html")


def _change(pages: list[str], site: Path, count: int) -> list[str]:
    """A sentence added to ``count`` of the pages the first crawl took, spread over them (their time becomes now).

    Only pages the crawl reached: a manual also holds pages no link leads to (flex's redirection stubs)."""
    step = max(1, len(pages) // max(count, 1))
    changed = pages[::step][:count]
    for n, rel in enumerate(changed):
        page = site / rel
        page.write_text(page.read_text("utf-8").replace("</body>", f"<p>Revision {n}.</p></body>"), "utf-8")
    return changed


def _run(args: argparse.Namespace) -> int:
    work = args.work or Path(tempfile.mkdtemp(prefix="crawl-bench-"))
    results: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": platform.machine(),
        "cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 1),
        "command": "python -m ragbench.crawl_speed " + " ".join(
            f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if k in ("changes", "output") and v),
    }  # fmt: skip
    site = work / "site"
    manuals = args.manual or [m for m in MANUALS if m.is_dir()]
    pages: list[Path] = []
    for n, manual in enumerate(manuals):
        pages += _copy(manual, site / f"m{n}")
    links = "".join(f'<li><a href="m{n}/{_start(m)}">{m.parent.name}</a></li>' for n, m in enumerate(manuals))
    (site / "index.html").write_text(f"<html><body><h1>Manuals</h1><ul>{links}</ul></body></html>", "utf-8")
    server, counts = _serve(site)
    settings = Settings(paths={"state_dir": work / "state", "load_demo": False}, sync={"enabled": False})
    service, store, opened = open_service(settings)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        service.add("manual", "web", url, "manual", background=False)
        results["manuals"], results["files"] = [str(m) for m in manuals], len(pages)
        taken: list[str] = []
        for step in ("first", "unchanged", "changed"):
            if step == "changed":
                results["changed_pages"] = _change(taken, site, args.changes)
            counts.clear()
            start = time.perf_counter()
            outcome = service.run("manual")
            seconds = time.perf_counter() - start
            report = outcome.report
            assert report is not None, outcome
            results[step] = {
                "seconds": round(seconds, 2), "state": outcome.state, "pages": report.seen,
                "pages_per_s": round(report.seen / seconds, 2) if seconds else None,
                "requests": report.requests, "most_requests_of_one_page": max(counts.values(), default=0),
                "read": report.hashed, "ingested": report.ingested, "added": len(report.added),
                "updated": len(report.updated), "unchanged": report.unchanged, "refused": len(report.refused),
                "mb": round(report.downloaded / 1e6, 2),
            }  # fmt: skip
            if step == "first":
                results["chunks"] = store.catalog.chunk_count()
                # The pages it read (a request may also be a 404 or a redirect stub: only files that are there).
                taken = sorted(
                    rel for rel in (unquote(p.split("?")[0]).lstrip("/") for p in counts)
                    if rel.endswith((".html", ".htm")) and rel != "index.html" and (site / rel).is_file()
                )  # fmt: skip
            print(f"{step}: {report.summary()}; {seconds:.1f} s", flush=True)
    finally:
        opened.close()
        server.shutdown()
        server.server_close()
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return print_results(results, args.output)


if __name__ == "__main__":
    raise SystemExit(main())
