"""Evaluation output: a plain-text table for the terminal and a plotly chart for the browser."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragbench.cli import grid
from ragbench.eval.runner import ConfigResult

QUALITY = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "all_found@5", "all_found@10")


def render_table(label: str, results: Sequence[ConfigResult]) -> str:
    metrics = [m for m in QUALITY if any(m in r.metrics for r in results)]
    header = ["config", *metrics, "p50 ms", "p95 ms"]
    rows = [
        [
            r.name,
            *(f"{r.metrics.get(m, float('nan')):.3f}" for m in metrics),
            f"{r.latency_ms['p50']:.1f}",
            f"{r.latency_ms['p95']:.1f}",
        ]
        for r in results
    ]
    return "\n".join([label, *grid(header, rows)])


def render_chart(label: str, results: Sequence[ConfigResult], path: Path) -> None:
    """Grouped bars of the quality metrics, and the latency percentiles beside them."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    metrics = [m for m in QUALITY if any(m in r.metrics for r in results)]
    names = [r.name for r in results]
    fig = make_subplots(
        rows=1, cols=2, column_widths=[0.65, 0.35], subplot_titles=("quality", "latency per query (ms)")
    )
    for metric in metrics:
        fig.add_trace(go.Bar(name=metric, x=names, y=[r.metrics.get(metric) for r in results]), row=1, col=1)
    for pct in ("p50", "p95"):
        fig.add_trace(go.Bar(name=f"latency {pct}", x=names, y=[r.latency_ms[pct] for r in results]), row=1, col=2)
    fig.update_layout(title=f"Retrieval evaluation: {label}", barmode="group", template="plotly_white")
    fig.update_yaxes(range=[0, 1], row=1, col=1)
    path.write_text(fig.to_html(include_plotlyjs="cdn", full_html=True), "utf-8")
