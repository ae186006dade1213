"""``python -m ragbench.coverage``: how much of real files' text each parser gets into the chunks.

Every HTML, PDF, text and Markdown file under the given folders (default: Debian's ``/usr/share/doc``, the
Debian Reference and R's manuals as this machine has them), plus the answer sets' documents, is parsed and chunked
as an upload is (OCR off: a scan has no text layer to compare) and measured by ``ragapp.ingest.coverage``
against its own reference text. Prints per format the files, the coverage's minimum, 5th percentile and
median, the files under 95% with what was not read, and parse time; writes every file's row as JSON.

    python -m ragbench.coverage --output results/coverage.json

The held-out documents of the developers' guide are never read (``HELD_OUT``); neither are files over
``MAX_MB`` (listed as skipped).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.ingest.boilerplate import split_boilerplate
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.coverage import with_coverage
from ragapp.ingest.parse_context import ParseOptions
from ragapp.ingest.parsing import parse_file
from ragbench.answers.answer_set import load_set
from ragbench.cli import run_command, write_json

ROOTS = (Path("/usr/share/doc"), Path("/usr/share/debian-reference"), Path("/usr/share/R/doc/manual"))
SETS = (REPO_ROOT / "data/eval/answers/debian-manuals.yaml", REPO_ROOT / "data/eval/answers/debian-blind.yaml")
FORMATS = {".html": "html", ".htm": "html", ".pdf": "pdf", ".txt": "text", ".md": "markdown"}
# Never opened here: the held-out checks of the developers' guide.
HELD_OUT = ("libtasn1-doc", "shared-mime-info", "zlib_how.html", "python-policy")
TARGETS = {"html": 0.98, "text": 0.98, "markdown": 0.98, "pdf": 0.95}  # p5 to reach
FLOOR = 0.90  # no file may be under this without a reason shown
MAX_MB = 5.0  # larger files are skipped: R's 3,600-page refman


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.coverage", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "roots", nargs="*", type=Path, help="folders to search (default: the Debian doc folders and the answer sets)."
    )
    p.add_argument("--output", type=Path, help="write every file's row and the summary as JSON.")
    return p


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def files(roots: Iterable[Path], with_sets: bool = False) -> list[Path]:
    """Every file of a measured format under ``roots`` (and in the answer sets), each once, held-out ones aside."""
    found: dict[Path, None] = {}
    for root in roots:
        if root.is_dir():
            found.update((p, None) for p in sorted(root.rglob("*")) if p.suffix.lower() in FORMATS and p.is_file())
    for set_file in SETS if with_sets else ():
        found.update((d.path, None) for d in load_set(set_file).documents if d.path.is_file())
    return [p for p in found if not any(mark in str(p) for mark in HELD_OUT)]


def measure_file(path: Path, settings: Settings) -> dict[str, Any]:
    """Parse and chunk ``path`` as an upload is, OCR off, and measure its coverage."""
    row: dict[str, Any] = {"file": str(path), "format": FORMATS[path.suffix.lower()], "bytes": path.stat().st_size}
    options = ParseOptions(ocr=False, pdf_tables=settings.ingest.pdf_tables)
    start = time.perf_counter()
    try:
        parsed = parse_file(path, options=options)
    except Exception as exc:  # an empty or unreadable file: its row says why
        row.update(status="not read", reason=str(exc), parse_s=round(time.perf_counter() - start, 3))
        return row
    row["parse_s"] = round(time.perf_counter() - start, 3)
    split = split_boilerplate(parsed, "bench")
    chunks = chunk_document(split.doc, "bench", settings.ingest.chunk_size, settings.ingest.chunk_overlap)
    report = with_coverage(path, parsed, chunks, split.skipped)
    row.update(status="read", coverage=report.coverage, unread=list(report.unread), unread_count=report.unread_count,
               chunks=len(chunks), left_out=list(report.left_out) + ([split.note] if split.note else []))  # fmt: skip
    return row


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * (len(ordered) - 1) + 0.5))]


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fmt in dict.fromkeys(FORMATS.values()):
        mine = [r for r in rows if r["format"] == fmt]
        measured = [r["coverage"] for r in mine if r.get("coverage") is not None]
        seconds = sorted(r["parse_s"] for r in mine if "parse_s" in r)
        out[fmt] = {
            "files": len(mine),
            "measured": len(measured),
            "not_read": sum(r["status"] == "not read" for r in mine),
            "min": min(measured) if measured else None,
            "p5": _percentile(measured, 0.05),
            "median": _percentile(measured, 0.5),
            "under_95": sum(c < 0.95 for c in measured),
            "under_90": sum(c < FLOOR for c in measured),
            "parse_s_p50": _percentile(seconds, 0.5),
            "parse_s_max": seconds[-1] if seconds else None,
            "target_p5": TARGETS.get(fmt),
        }
    return out


def pct(value: float | None) -> str:
    """A share as a percentage six wide, "-" for none (the coverage and highlight tables)."""
    return "     -" if value is None else f"{100 * value:6.1f}"


def render(summary: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [f"{'format':9s} {'files':>5s} {'meas.':>5s} {'min %':>6s} {'p5 %':>6s} {'med %':>6s} {'<95%':>5s} "
             f"{'<90%':>5s} {'target p5':>9s} {'parse p50 s':>11s} {'max s':>6s}"]  # fmt: skip
    for fmt, s in summary.items():
        if not s["files"]:
            continue
        target = f"{100 * s['target_p5']:.0f}%" if s["target_p5"] else "-"
        seconds = f"{s['parse_s_p50'] or 0:11.3f} {s['parse_s_max'] or 0:6.2f}"
        lines.append(
            f"{fmt:9s} {s['files']:5d} {s['measured']:5d} {pct(s['min'])} {pct(s['p5'])} {pct(s['median'])} "
            f"{s['under_95']:5d} {s['under_90']:5d} {target:>9s} {seconds}"
        )
    under = sorted((r for r in rows if (r.get("coverage") or 1.0) < 0.95), key=lambda r: r["coverage"])
    if under:
        lines.append("files under 95%:")
        for r in under:
            what = "; ".join(f"“{u}”" for u in r["unread"][:2])
            lines.append(f"  {100 * r['coverage']:5.1f}%  {r['file']}  ({r['unread_count']} lines unread: {what})")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    settings = Settings()
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    paths = files(args.roots or ROOTS, with_sets=not args.roots)
    print(f"{len(paths)} files", file=sys.stderr)
    for index, path in enumerate(paths, start=1):
        if path.stat().st_size > MAX_MB * 1024 * 1024:
            skipped.append(str(path))
            continue
        rows.append(measure_file(path, settings))
        if index % 200 == 0:
            print(f"[{index}/{len(paths)}]", file=sys.stderr)
    summary = summarize(rows)
    print(render(summary, rows))
    if skipped:
        print(f"skipped over {MAX_MB:g} MB: {', '.join(skipped)}")
    if args.output:
        payload = {"created": datetime.now(UTC).isoformat(timespec="seconds"), "summary": summary,
                   "skipped": skipped, "rows": rows}  # fmt: skip
        write_json(args.output, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
