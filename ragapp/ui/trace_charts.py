"""Plotly figures for the Traces tab: the span waterfall of one request and the test-case metrics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from ragapp.engine import Span, Trace

if TYPE_CHECKING:
    from ragapp.engine import CaseReport

KIND_COLOURS = {
    "request": "#94a3b8",
    "stage": "#60a5fa",
    "retrieval": "#34d399",
    "channel": "#10b981",
    "fusion": "#a78bfa",
    "rerank": "#f472b6",
    "llm": "#fbbf24",
    "tool": "#fb923c",
    "file": "#60a5fa",
    "library": "#cbd5e1",
}
FAILED = "#ef4444"
RUN_MARKS = "①②③④"


def waterfall(trace: Trace) -> go.Figure:
    """One bar per span, from its start to its end, children indented under their parent; failures in red."""
    depth: dict[int, int] = {}
    for span in trace.spans:
        parent = span.parent
        depth[span.id] = depth.get(parent, -1) + 1 if parent is not None else 0
    ordered = _tree_order(trace.spans)
    labels = [f"{'· ' * depth[s.id]}{s.name} #{s.id}" for s in ordered]
    durations = [max(s.duration_s or 0.0, 0.0) * 1000 for s in ordered]
    colours = [FAILED if s.status in {"failed", "unfinished"} else KIND_COLOURS.get(s.kind, "#64748b") for s in ordered]
    hover = [
        f"{s.name} ({s.kind})<br>start {s.start_s * 1000:.0f} ms · {d:.0f} ms · {s.status}"
        + (f"<br>{s.error}" if s.error else "")
        for s, d in zip(ordered, durations, strict=True)
    ]
    figure = go.Figure(
        go.Bar(
            y=labels,
            x=durations,
            base=[s.start_s * 1000 for s in ordered],
            orientation="h",
            marker_color=colours,
            hovertext=hover,
            hoverinfo="text",
            text=[f"{d:.0f} ms" for d in durations],
            textposition="outside",
            cliponaxis=False,
        )
    )
    figure.update_layout(
        # A figure is drawn on the server, in no language: its title and axis say what needs no words.
        title=f"{(trace.total_s or 0):.2f} s",
        xaxis_title="ms",
        yaxis={"autorange": "reversed", "type": "category"},
        height=max(260, 28 * len(ordered) + 120),
        margin={"l": 10, "r": 60, "t": 50, "b": 40},
        showlegend=False,
    )
    return figure


def _tree_order(spans: Sequence[Span]) -> list[Span]:
    """Parents before their children, children by start time (depth-first)."""
    children: dict[int | None, list[Span]] = {}
    for span in spans:
        children.setdefault(span.parent, []).append(span)
    out: list[Span] = []

    def walk(parent: int | None) -> None:
        for span in sorted(children.get(parent, []), key=lambda s: (s.start_s, s.id)):
            out.append(span)
            walk(span.id)

    walk(None)
    return out


def metrics_chart(reports: Sequence[CaseReport]) -> go.Figure:
    """Hit rate, MRR and nDCG per run, side by side (current settings vs the changes being tried)."""
    figure = go.Figure()
    for number, report in enumerate(reports):
        summary = report.summary()
        figure.add_bar(
            name=RUN_MARKS[number % len(RUN_MARKS)],  # a figure is drawn in no language: the runs are ① and ②
            x=[name.replace("hit rate", "Hit") for name in summary],  # "Hit", "MRR@10", "nDCG@10": no words
            y=list(summary.values()),
            text=[f"{v:.2f}" for v in summary.values()],
            textposition="outside",
        )
    figure.update_layout(
        barmode="group",
        yaxis={"range": [0, 1.1]},
        title=f"n = {len(reports[0].results) if reports else 0}",
        height=340,
        margin={"l": 10, "r": 10, "t": 50, "b": 40},
    )
    return figure
