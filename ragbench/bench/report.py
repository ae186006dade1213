"""The benchmark's plain-text table, rendered from its JSON payload (so a saved run can be shown again)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from ragbench.bench.measure import INDEX_PARTS, STAGES
from ragbench.cli import grid

_QUERY_ROWS = {
    "channel:vector:embed": "query embedding",
    "channel:vector:search": "vector search",
    "channel:keyword": "keyword search",
}


def size_label(target: int) -> str:
    return f"{target // 1000}k" if target >= 1000 and target % 1000 == 0 else str(target)


def _query_stages(sizes: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(timing key, label) rows: query embedding, each channel's search, fusion, rerank, total."""
    keys = list(dict.fromkeys(k for s in sizes for k in s["query"]["ms"]))
    rows = [(k, label) for k, label in _QUERY_ROWS.items() if k in keys]
    known = {*_QUERY_ROWS, "channel:vector", "fusion", "rerank", "total"}
    rows += [(k, f"{k.split(':', 1)[1]} search") for k in keys if k.startswith("channel:") and k not in known]
    rows += [(k, k) for k in ("fusion", "rerank", "total") if k in keys]
    return rows


def render_table(payload: dict[str, Any]) -> str:
    sizes: list[dict[str, Any]] = payload["sizes"]
    header = ["", *(size_label(s["target"]) for s in sizes)]
    ingest = [s["ingest"] for s in sizes]
    sample = payload["embed_sample"]
    machine = payload["machine"]
    lines = [
        f"{payload['dataset']}: embedder {payload['embedder']}, {machine['cpus']} CPUs, no GPU used, "
        f"{sizes[0]['query']['queries']} queries per size",
        *textwrap.wrap(payload["note"], 110),
        "",
        "Ingestion: seconds (share)",
    ]
    rows = [
        ["documents", *(f"{i['documents']:,}" for i in ingest)],
        ["chunks", *(f"{i['chunks']:,}" for i in ingest)],
    ]
    for stage in STAGES:
        label = stage if stage != "embed" else "embed (* = extrapolated)"
        rows.append(
            [
                label,
                *(
                    f"{_num(i['seconds'][stage])} ({i['share'][stage]:.0%})"
                    + ("*" if stage == "embed" and not i["embed_measured"] else "")
                    for i in ingest
                ),
            ]
        )
        if stage == "index":
            names = {"chroma": "  Chroma add", "catalog": "  catalog write", "bm25": "  BM25 rebuild"}
            rows += [[names[p], *(_num(i["index_seconds"][p]) for i in ingest)] for p in INDEX_PARTS]
    rows += [
        ["total", *(_num(i["seconds"]["total"]) for i in ingest)],
        ["chunks/s", *(f"{i['chunks_per_s']:.1f}" for i in ingest)],
        ["chunks/s without embed", *(f"{i['chunks_per_s_without_embed']:.0f}" for i in ingest)],
    ]
    lines += grid(header, rows)

    lines += ["", "Query latency: p50 / p95 ms"]
    rows = [[label, *(_pct(s["query"]["ms"].get(key)) for s in sizes)] for key, label in _query_stages(sizes)]
    if all(s["query"]["reranker"] == "off" for s in sizes):
        rows.insert(len(rows) - 1, ["rerank", *("off" for _ in sizes)])
    lines += grid(header, rows)

    lines += ["", "Memory and disk: MB"]
    rows = [
        ["peak RSS", *(f"{s['memory_mb']['peak_rss']:,.0f}" for s in sizes)],
        ["RSS before the size", *(f"{s['memory_mb']['rss_before']:,.0f}" for s in sizes)],
        ["index on disk", *(f"{s['disk_mb']['total']:,.1f}" for s in sizes)],
        *([f"  {p}", *(f"{s['disk_mb'][p]:,.1f}" for s in sizes)] for p in ("chroma", "bm25", "catalog")),
    ]
    lines += grid(header, rows)
    if not sizes[0]["memory_mb"]["peak_is_per_size"]:
        lines.append("(peak RSS is the process's running maximum: this system cannot reset it between sizes)")

    compare = payload.get("llamaindex")
    if compare:
        ours, theirs = compare["ragapp"], compare["llamaindex"]
        lines += [
            "",
            f"LlamaIndex comparison: the embed sample ({ours['chunks']:,} chunks), same embedder and texts",
            *grid(
                ["", "seconds", "chunks/s", "of which embedding s"],
                [
                    [
                        "ragapp embed + index" + (" (embed from cache)" if sample["cached"] else ""),
                        f"{ours['seconds']:.1f}",
                        f"{ours['chunks_per_s']:.1f}",
                        f"{ours['embed_seconds']:.1f}",
                    ],
                    [
                        f"LlamaIndex VectorStoreIndex (embed batch {theirs['embed_batch_size']})",
                        f"{theirs['seconds']:.1f}",
                        f"{theirs['chunks_per_s']:.1f}",
                        f"{theirs['embed_seconds']:.1f}",
                    ],
                ],
            ),
            f"throughput ratio ragapp / LlamaIndex: {compare['ratio']:.2f}x",
        ]
    return "\n".join(lines)


def _num(value: float) -> str:
    """Three significant digits or so, without scientific notation."""
    return f"{value:,.1f}" if value >= 10 else f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def _pct(values: dict[str, float] | None) -> str:
    if values is None:
        return "-"
    return f"{_num(values['p50'])} / {_num(values['p95'])}"
