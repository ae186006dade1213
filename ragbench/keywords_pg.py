"""PostgreSQL full-text keyword search (``PgKeywordIndex``) against bm25s (``Bm25Index``): quality and speed.

Quality: SciFact test (en), XQuAD zh->zh and en->en, over the app's chunks (``chunk_document`` at 400/60,
indexed through ``index_text``; a document ranks at its best chunk, searched 1000 deep so 100 distinct documents
survive). Both indexes go through the app's classes, so they see the same tokens; PostgreSQL runs on a throwaway
``PostgresServer``. Reported per task: nDCG@10, Recall@100, load seconds and query p50/p95 (the app's
``recall_budget`` of 20 hits, and the 1000-deep search the metrics use).

Scale (``--scale``): ``ragbench.scale``'s synthetic chunks (Zipf words over a made-up vocabulary), loaded into
PgKeywordIndex on a fresh server: load seconds, the rebuild a replica does when nothing changed and when 1% of
the chunks changed, query p50/p95 (top 20, 4 random words, after a warm-up), how many chunks a query matches
(its terms' OR: nearly all of them with Zipf words, where a SciFact question's terms are in a quarter),
the server's memory (all its processes; RSS counts shared buffers once per process, PSS shares them out) and
its database size. With ``--scale-backends pg,bm25s`` bm25s is measured beside it by ``ragbench.scale``.

    .venv/bin/python -m ragbench.keywords_pg                                # quality, every ranking
    .venv/bin/python -m ragbench.keywords_pg --scale 10000,100000           # + scale rows appended

Results go to results/keywords_pg.json ("quality" replaced by a quality run, "scale" rows appended).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from ragapp.config import REPO_ROOT
from ragapp.core.chunks import index_text
from ragapp.core.types import Chunk, ParsedDocument, Section
from ragapp.db import Database, open_database
from ragapp.ingest.chunking import chunk_document
from ragapp.store.bm25 import Bm25Index
from ragapp.store.pg_keywords import DEFAULT_RANKING, RANKINGS, PgKeywordIndex, tsquery_literal
from ragapp.store.tokenize import tokenize
from ragapp.testcases.metrics import ndcg_at_k, recall_at_k
from ragbench import scale
from ragbench.eval.beir import BeirDataset, load_beir
from ragcluster.services import PostgresServer

DEPTH = 1000  # chunks per query for the metrics: deep enough that 100 distinct documents survive
TOP_K = scale.TOP_K  # the app's recall budget
TASKS = ("scifact", "xquad-zh", "xquad-en")
OUTPUT = REPO_ROOT / "results" / "keywords_pg.json"

Search = Callable[[str, int], list[tuple[str, float]]]


# ----------------------------------------------------------------------------------------------------------
# Quality
# ----------------------------------------------------------------------------------------------------------


@dataclass
class Task:
    """A BEIR set's test queries, and its documents cut into chunks as an upload is."""

    data: BeirDataset
    chunks: list[Chunk]


def load_task(folder: Path) -> Task:
    data = load_beir(folder, "test")
    chunks: list[Chunk] = []
    for p in data.corpus:
        # The title stands in for the file name, which index_text puts in front of every chunk; kept as the
        # chunk's text with no file name, it gives the same tokens again.
        parsed = ParsedDocument(name=f"{p.title}.txt", file_type="txt", sections=(Section(p.text),))
        for n, chunk in enumerate(chunk_document(parsed, p.doc_id, 400, 60)):
            chunks.append(Chunk(f"{p.doc_id}-{n:04d}", p.doc_id, n, index_text(chunk), ""))
    return Task(data, chunks)


def doc_of(chunk_id: str) -> str:
    return chunk_id.rsplit("-", 1)[0]


def timed(search: Search, texts: Sequence[str], k: int) -> tuple[list[list[tuple[str, float]]], list[float]]:
    for text in texts[: scale.WARMUP]:
        search(text, k)
    hits, times = [], []
    for text in texts:
        start = time.perf_counter()
        hits.append(search(text, k))
        times.append((time.perf_counter() - start) * 1000)
    return hits, times


def evaluate(task: Task, search: Search) -> dict[str, Any]:
    texts = [q.text for q in task.data.queries]
    deep, deep_times = timed(search, texts, DEPTH)
    _, times = timed(search, texts, TOP_K)
    ndcg, recall = [], []
    for query, hits in zip(task.data.queries, deep, strict=True):
        ranked = list(dict.fromkeys(doc_of(cid) for cid, _ in hits))
        ndcg.append(ndcg_at_k(ranked, task.data.qrels[query.query_id], 10))
        recall.append(recall_at_k(ranked, task.data.qrels[query.query_id], 100))
    deep_p = scale.percentiles(deep_times)
    return {
        "ndcg@10": round(float(np.mean(ndcg)), 4),
        "recall@100": round(float(np.mean(recall)), 4),
        **scale.percentiles(times),
        f"p50_ms@{DEPTH}": deep_p["p50_ms"],
        f"p95_ms@{DEPTH}": deep_p["p95_ms"],
    }


def quality(data_dir: Path, task_names: Sequence[str], rankings: Sequence[str]) -> dict[str, Any]:
    folders = {
        "scifact": data_dir / "scifact",
        "xquad-zh": data_dir / "xquad" / "zh",
        "xquad-en": data_dir / "xquad" / "en",
    }
    rows: list[dict[str, Any]] = []
    import bm25s  # noqa: F401  (imported and jieba loaded before any timing, so neither backend pays for them)

    tokenize("warm up 中文")
    server = PostgresServer()
    try:
        with tempfile.TemporaryDirectory(prefix="ragapp-kwpg-") as folder:
            for name in task_names:
                task = load_task(folders[name])
                chunks = task.chunks
                size = {
                    "task": name,
                    "docs": len(task.data.corpus),
                    "chunks": len(chunks),
                    "queries": len(task.data.queries),
                }
                print(
                    f"{name}: {size['docs']:,} docs, {size['chunks']:,} chunks, {size['queries']:,} queries", flush=True
                )

                bm25 = Bm25Index(Path(folder) / name).start()
                start = time.perf_counter()
                bm25.rebuild(chunks, 1)
                row = size | {"backend": "bm25s", "load_s": round(time.perf_counter() - start, 2)}
                rows.append(row | evaluate(task, bm25.search))
                print(_line(rows[-1]), flush=True)

                db = open_database(server.create_database(name.replace("-", "_")), pool_size=2)
                try:
                    start = time.perf_counter()
                    PgKeywordIndex(db).start().rebuild(chunks, 1)
                    load_s = round(time.perf_counter() - start, 2)
                    for ranking in rankings:
                        index = PgKeywordIndex(db, ranking=ranking).start()
                        row = size | {"backend": f"pg:{ranking}", "load_s": load_s}
                        rows.append(row | evaluate(task, index.search))
                        print(_line(rows[-1]), flush=True)
                finally:
                    db.close()
    finally:
        server.stop()
    return {"depth": DEPTH, "top_k": TOP_K, "cpus": os.cpu_count(), "rows": rows}


def _line(r: dict[str, Any]) -> str:
    return (
        f"  {r['backend']:<18} nDCG@10 {r['ndcg@10']:.4f}  R@100 {r['recall@100']:.4f}  "
        f"p50 {r['p50_ms']} ms  p95 {r['p95_ms']} ms (top {TOP_K}); load {r['load_s']} s"
    )


def quality_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        f"| task | backend | nDCG@10 | R@100 | p50 ms | p95 ms | p50 ms @{DEPTH} | p95 ms @{DEPTH} | load s |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['task']} | {r['backend']} | {r['ndcg@10']:.4f} | {r['recall@100']:.4f} | {r['p50_ms']} | "
            f"{r['p95_ms']} | {r[f'p50_ms@{DEPTH}']} | {r[f'p95_ms@{DEPTH}']} | {r['load_s']} |"
        )
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------------
# Scale
# ----------------------------------------------------------------------------------------------------------


def synthetic_chunks(n: int, rng: np.random.Generator) -> list[Chunk]:
    """``n`` chunks as ``ragbench.scale`` makes them (ids, ``WORDS_PER_CHUNK`` Zipf words), drawn a batch at a
    time so a million chunks never hold all their words in one list."""
    out: list[Chunk] = []
    per = scale.WORDS_PER_CHUNK
    for start in range(0, n, scale.BATCH):
        size = min(scale.BATCH, n - start)
        drawn = scale.words(rng, size * per)
        for j in range(size):
            i = start + j
            text = " ".join(drawn[j * per : (j + 1) * per])
            out.append(Chunk(f"{i // 100:016x}-{i % 100:04d}", f"{i // 100:016x}", i % 100, text, "synthetic.txt"))
    return out


def server_memory(server: PostgresServer) -> dict[str, float]:
    """Resident memory of the server's processes (MiB): the postmaster and its children."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process ended meanwhile
            continue
        if int(fields[1]) == postmaster:
            pids.append(int(stat.parent.name))
    rss = pss = 0.0
    for pid in pids:
        try:
            rss += scale.rss_mb(pid)
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
            pss += next(int(line.split()[1]) for line in rollup if line.startswith("Pss:")) / 1024
        except (OSError, StopIteration):
            continue
    return {"server_rss_mb": round(rss, 1), "server_pss_mb": round(pss, 1), "server_processes": len(pids)}


def _mb(db: Database, sql: str) -> float:
    row = db.one(sql)
    return round(int(row[0]) / 2**20, 1) if row else 0.0


def measure_pg(n: int, queries: int, ranking: str) -> dict[str, Any]:
    """Load ``n`` synthetic chunks into PgKeywordIndex on a fresh server and time rebuilds and searches."""
    server = PostgresServer()
    db = open_database(server.url, pool_size=2)
    try:
        rng = np.random.default_rng(2)
        chunks = synthetic_chunks(n, rng)
        asked = [" ".join(scale.words(rng, 4)) for _ in range(64)]
        index = PgKeywordIndex(db, ranking=ranking).start()
        row: dict[str, Any] = {"backend": f"pg:{ranking}", "chunks": n}
        start = time.perf_counter()
        index.rebuild(chunks, 1)
        row["load_s"] = round(time.perf_counter() - start, 1)
        print(f"  pg at {n:,}: loaded in {row['load_s']} s", flush=True)
        start = time.perf_counter()
        index.rebuild(chunks, 2)  # what a replica's start or a follower tick costs when nothing changed
        row["rebuild_unchanged_s"] = round(time.perf_counter() - start, 1)
        changed = n // 100
        fresh = synthetic_chunks(changed, np.random.default_rng(3))
        fresh = [Chunk(f"new-{c.chunk_id}", c.doc_id, c.ordinal, c.text, c.source) for c in fresh]
        start = time.perf_counter()
        index.rebuild(chunks[changed:] + fresh, 3)  # 1% of the chunks gone, as many new ones
        row["rebuild_1pct_changed_s"] = round(time.perf_counter() - start, 1)
        del chunks, fresh
        # As autovacuum would soon after a load: statistics for the planner, the GIN pending list merged (queries
        # scan that list whole). VACUUM cannot run in a transaction, so on a connection of its own.
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE keyword_terms")
        times = scale.timed_queries(lambda i: index.search(asked[i % len(asked)], TOP_K), queries)
        row |= scale.percentiles(times)
        matches = [
            db.one(
                "SELECT count(*) FROM keyword_terms WHERE terms @@ CAST(? AS tsquery)", (tsquery_literal(tokenize(q)),)
            )
            for q in asked
        ]
        row["mean_matching_chunks"] = round(statistics.mean(int(m[0]) for m in matches if m))
        row |= server_memory(server)
        row["database_mb"] = _mb(db, "SELECT pg_database_size(current_database())")
        row["table_mb"] = _mb(db, "SELECT pg_table_size('keyword_terms')")
        row["indexes_mb"] = _mb(db, "SELECT pg_indexes_size('keyword_terms')")
        settings = db.query(
            "SELECT name, current_setting(name) FROM pg_settings "
            "WHERE name IN ('shared_buffers', 'work_mem', 'maintenance_work_mem')"
        )
        row["server_settings"] = {str(k): str(v) for k, v in settings}
        return row
    finally:
        db.close()
        server.stop()


def scale_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| backend | chunks | load s | unchanged rebuild s | 1% changed s | p50 ms | p95 ms | matches/query | "
        "server RSS MiB | server PSS MiB | client RSS growth MiB | database MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]

    def cell(r: dict[str, Any], key: str) -> str:
        value = r.get(key)
        return "" if value is None else f"{value:,}" if isinstance(value, int) else str(value)

    keys = ("load_s", "rebuild_unchanged_s", "rebuild_1pct_changed_s", "p50_ms", "p95_ms", "mean_matching_chunks",
            "server_rss_mb", "server_pss_mb", "client_rss_growth_mb", "database_mb")  # fmt: skip
    for r in rows:
        lines.append(f"| {r['backend']} | {r['chunks']:,} | " + " | ".join(cell(r, k) for k in keys) + " |")
    return "\n".join(lines)


def run_scale(sizes: Sequence[int], backends: Sequence[str], queries: int, ranking: str) -> Iterator[dict[str, Any]]:
    for n in sizes:
        for backend in backends:
            start = time.perf_counter()
            if backend == "bm25s":
                row = scale.in_worker(scale.measure_keywords, n, queries)
            else:
                row = scale.in_worker(measure_pg, n, queries, ranking)
            row["wall_s"] = round(time.perf_counter() - start, 1)
            row["load_average"] = [round(x, 2) for x in os.getloadavg()]
            print(f"{row['backend']} at {n:,}: load {row['load_s']} s, p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms",
                  flush=True)  # fmt: skip
            yield row


# ----------------------------------------------------------------------------------------------------------


def _read(path: Path) -> dict[str, Any]:
    if path.is_file():
        loaded = json.loads(path.read_text("utf-8"))
        if isinstance(loaded, dict):
            return loaded
    return {}


def _write(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    here = Path(__file__).resolve().parent
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("RAGAPP_EVAL_DATA", here.parents[1] / "shared" / "data"))
    )
    p.add_argument("--tasks", default=",".join(TASKS), help="comma list")
    p.add_argument("--rankings", default=",".join(RANKINGS), help=f"comma list of {', '.join(RANKINGS)}")
    p.add_argument("--scale", default="", help="comma-separated chunk counts: the scale run instead of quality")
    p.add_argument("--scale-backends", default="pg", help="pg and/or bm25s")
    p.add_argument("--scale-ranking", default=DEFAULT_RANKING, choices=sorted(RANKINGS))
    p.add_argument("--queries", type=int, default=200, help="timed queries per scale row")
    p.add_argument("--output", type=Path, default=OUTPUT)
    args = p.parse_args(argv)
    report = _read(args.output)

    if args.scale:
        sizes = [int(s) for s in args.scale.split(",") if s.strip()]
        backends = [b for b in args.scale_backends.split(",") if b]
        if set(backends) - {"pg", "bm25s"}:
            p.error("--scale-backends: pg and/or bm25s")
        rows = report.setdefault("scale", [])
        done = []
        for row in run_scale(sizes, backends, args.queries, args.scale_ranking):
            rows.append(row)
            done.append(row)
            _write(args.output, report)  # a row at a time: a long run that is stopped keeps what it measured
        print(scale_table(done))
    else:
        rankings = [r for r in args.rankings.split(",") if r]
        unknown = sorted(set(rankings) - set(RANKINGS))
        if unknown:
            p.error(f"unknown rankings {unknown}: choose from {', '.join(RANKINGS)}")
        report["quality"] = quality(args.data_dir, [t for t in args.tasks.split(",") if t], rankings)
        _write(args.output, report)
        print(quality_table(report["quality"]["rows"]))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
