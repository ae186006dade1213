"""``python -m ragbench.sync_speed``: how fast a knowledge base follows a folder, and what a re-sync costs.

Two trees: ``--small`` generated small text files (one chunk each), and a real documentation tree (``--docs``,
Debian's ``/usr/share/doc``: its HTML, text, Markdown and PDF files, a subset of ``--docs-max-files`` spread
over the tree when it has more). For each: the first sync (files/s), a re-sync with nothing changed, and a
re-sync after ``--changes`` files change, with the work each did (files read and hashed, files ingested): a
re-sync should cost work in proportion to the changes, not to the tree.

    python -m ragbench.sync_speed --output results/bench/sync.json
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.config import Settings
from ragapp.sync.standalone import open_service
from ragbench.cli import print_results, run_command

DOC_TYPES = (".html", ".htm", ".txt", ".md", ".pdf")
WORDS = ("valve", "pressure", "ladder", "inspection", "torque", "manual", "safety", "boiler", "filter", "gauge",
         "schedule", "report", "voltage", "bearing", "seal", "pump", "sensor", "cable", "switch", "panel")  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.sync_speed", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--small", type=int, default=10_000, help="generated small files (0: skip)")
    p.add_argument("--docs", type=Path, default=Path("/usr/share/doc"), help="a real documentation tree")
    p.add_argument("--docs-max-files", type=int, default=300, help="files of --docs synced at most (0: skip)")
    p.add_argument("--docs-max-kb", type=float, default=64.0, help="larger files of --docs are left out")
    p.add_argument("--changes", type=int, default=10, help="files changed before the last re-sync")
    p.add_argument("--work", type=Path, help="where the trees and state go (default: a temporary folder)")
    p.add_argument("--output", type=Path, help="write the figures as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def small_tree(root: Path, count: int) -> list[Path]:
    """``count`` small text files, 100 to a folder, each different."""
    paths = []
    for i in range(count):
        words = " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(12))
        path = root / f"part{i // 100:03d}" / f"note{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Note {i}: check the {words}. Record number {i} of the maintenance log.\n", "utf-8")
        paths.append(path)
    return paths


def docs_census(root: Path) -> dict[str, Any]:
    """What the documentation tree holds: files and bytes per type synced."""
    counts: dict[str, list[int]] = {}
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            total += 1
            suffix = path.suffix.lower()
            if suffix in DOC_TYPES and not path.is_symlink():
                entry = counts.setdefault(suffix, [0, 0])
                entry[0] += 1
                entry[1] += path.stat().st_size
    return {"files": total, "by_type": {k: {"files": v[0], "bytes": v[1]} for k, v in sorted(counts.items())}}


def docs_tree(source: Path, root: Path, max_files: int, max_kb: float) -> list[Path]:
    """A copy of up to ``max_files`` of ``source``'s documents (every PDF under the size cap, then files spread
    evenly over the sorted rest), keeping their relative paths."""
    found = sorted(
        p for p in source.rglob("*")
        if p.suffix.lower() in DOC_TYPES and p.is_file() and not p.is_symlink() and p.stat().st_size <= max_kb * 1024
    )  # fmt: skip
    pdfs = [p for p in found if p.suffix.lower() == ".pdf"]
    rest = [p for p in found if p.suffix.lower() != ".pdf"]
    room = max(0, max_files - len(pdfs))
    step = max(1, len(rest) // room) if room else len(rest) + 1
    chosen = (pdfs + rest[::step])[:max_files]
    copies = []
    for path in chosen:
        copy = root / path.relative_to(source)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy)
        copies.append(copy)
    return copies


def change(paths: list[Path], count: int) -> list[Path]:
    """Append a new sentence to ``count`` files spread over ``paths`` (text files: a PDF is left alone)."""
    textual = [p for p in paths if p.suffix.lower() != ".pdf"]
    step = max(1, len(textual) // max(count, 1))
    changed = textual[::step][:count]
    for n, path in enumerate(changed):
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\nRevision {n}: the {WORDS[n % len(WORDS)]} was checked again on the second round.\n")
    return changed


def measure(name: str, tree: Path, paths: list[Path], changes: int, state: Path) -> dict[str, Any]:
    settings = Settings(paths={"state_dir": state, "load_demo": False}, sync={"enabled": False, "settle_s": 0.0})
    service, store, opened = open_service(settings)
    try:
        service.add(name, "folder", str(tree), name, background=False)
        out: dict[str, Any] = {"files": len(paths), "bytes": sum(p.stat().st_size for p in paths)}
        for step in ("first", "unchanged", "changed"):
            if step == "changed":
                out["changed_files"] = [p.relative_to(tree).as_posix() for p in change(paths, changes)]
            start = time.perf_counter()
            outcome = service.run(name)
            seconds = time.perf_counter() - start
            report = outcome.report
            assert report is not None, outcome
            out[step] = {
                "seconds": round(seconds, 2), "state": outcome.state, "seen": report.seen, "hashed": report.hashed,
                "ingested": report.ingested, "added": len(report.added), "updated": len(report.updated),
                "refused": len(report.refused), "files_per_s": round(report.seen / seconds, 1) if seconds else None,
            }  # fmt: skip
            if step == "first":
                out["first"]["ingested_per_s"] = round(report.ingested / seconds, 1)
                out["chunks"] = store.catalog.chunk_count()
                out["refusals"] = [f"{r.path}: {r.reason}" for r in report.refused][:50]
            print(f"{name} {step}: {report.summary()}; {seconds:.1f} s, read {report.hashed}, "
                  f"ingested {report.ingested}", flush=True)  # fmt: skip
        return out
    finally:
        opened.close()


def _run(args: argparse.Namespace) -> int:
    work = args.work or Path(tempfile.mkdtemp(prefix="sync-bench-"))
    results: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": platform.machine(),
        "cpus": os.cpu_count(), "command": "python -m ragbench.sync_speed " + " ".join(
            f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v is not None and k != "work"),
    }  # fmt: skip
    try:
        if args.small:
            paths = small_tree(work / "small", args.small)
            results["small"] = measure("small", work / "small", paths, args.changes, work / "state-small")
        if args.docs_max_files and args.docs.is_dir():
            results["docs_census"] = docs_census(args.docs) | {"root": str(args.docs)}
            paths = docs_tree(args.docs, work / "docs", args.docs_max_files, args.docs_max_kb)
            results["docs"] = measure("docs", work / "docs", paths, args.changes, work / "state-docs")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    return print_results(results, args.output)


if __name__ == "__main__":
    raise SystemExit(main())
