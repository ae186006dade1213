"""The figures of ``ragbench.model_calls``: per group of questions, how often each step called the model before
and after the rules that skip calls, what those calls cost, how often a call changed the outcome (the passages
in the prompt, the routing actions), and how often a skip lost the set's evidence. Pure: rows in, dicts out."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

STEPS = ("rewrite", "route", "translate", "rephrase")
MARGINS = (0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15)


def _p50(values: Iterable[float]) -> float | None:
    got = list(values)
    return round(float(np.percentile(got, 50)), 2) if got else None


def step_figures(rows: list[dict[str, Any]], step: str) -> dict[str, Any]:
    """``step`` before and after: calls, seconds, outcome changed by the call, evidence it brought or lost."""
    ran = [r for r in rows if step in r["before"]["calls"]]
    seconds = [r["before"]["calls"][step] for r in ran]
    after = [r for r in rows if step in r["after"]["calls"]]
    return {
        "calls_before": len(ran),
        "calls_after": len(after),
        "seconds_before": round(sum(seconds), 1),
        "seconds_after": round(sum(r["after"]["calls"][step] for r in after), 1),
        "seconds_p50": _p50(seconds),
        "changed_outcome": sum(1 for r in ran if r["changed"].get(step)),
        "evidence_gained": sum(1 for r in ran if r["before"]["evidence"] and r["without"][step]["evidence"] is False),
        "evidence_lost": sum(1 for r in ran if r["before"]["evidence"] is False and r["without"][step]["evidence"]),
        "skipped_by_rule": sum(1 for r in rows if step in r["after"]["skipped"] and step in r["before"]["calls"]),
    }


def route_sweep(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each margin of ``route_same_search``: routing calls it would skip and, of those, how many changed
    the outcome. Valid for a run whose ``after`` had ``route_same_search_margin=0`` (the embedder's best leaf,
    whatever the margin, is what the rule routes to)."""
    routed = [r for r in rows if "route" in r["before"]["calls"] and r["same_search_gap"] is not None]
    out = []
    for margin in MARGINS:
        skipped = [r for r in routed if r["same_search_gap"] > margin]
        out.append(
            {
                "margin": margin,
                "routing_calls": len(routed),
                "skipped": len(skipped),
                "changed": sum(1 for r in skipped if r["after_changed"]),
                "evidence_lost": sum(1 for r in skipped if r["before"]["evidence"] and not r["after"]["evidence"]),
                "seconds_saved": round(sum(r["before"]["calls"]["route"] for r in skipped), 1),
            }
        )
    return out


def group_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    evidence = [r for r in rows if r["before"]["evidence"] is not None]
    before_s = sum(sum(r["before"]["calls"].values()) for r in rows)
    after_s = sum(sum(r["after"]["calls"].values()) for r in rows)
    return {
        "questions": len(rows),
        "with_evidence": len(evidence),
        "steps": {step: step_figures(rows, step) for step in STEPS},
        "calls_before": sum(len(r["before"]["calls"]) for r in rows),
        "calls_after": sum(len(r["after"]["calls"]) for r in rows),
        "model_seconds_before": round(before_s, 1),
        "model_seconds_after": round(after_s, 1),
        "outcome_changed_after": sum(1 for r in rows if r["after_changed"]),
        "evidence_before": sum(1 for r in evidence if r["before"]["evidence"]),
        "evidence_after": sum(1 for r in evidence if r["after"]["evidence"]),
        "evidence_lost_after": sum(1 for r in evidence if r["before"]["evidence"] and not r["after"]["evidence"]),
        "route_sweep": route_sweep(rows),
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures per group and split ("set dev", "in conversation dev", "demo test", ...) and over all."""
    keys = sorted({f"{r['group']} {r['split']}".strip() for r in rows})
    out = {key: group_figures([r for r in rows if f"{r['group']} {r['split']}".strip() == key]) for key in keys}
    if rows:
        out["all"] = group_figures(rows)
    return out


def render(summary: dict[str, Any]) -> str:
    lines = []
    for name, g in summary.items():
        lines.append(f"{name} · {g['questions']} questions ({g['with_evidence']} with evidence)")
        lines.append(
            f"  {'step':10s} {'calls':>11s} {'model s':>13s} {'p50 s':>6s} {'changed':>7s} {'ev+':>4s} {'ev-':>4s}"
        )
        for step, f in g["steps"].items():
            lines.append(
                f"  {step:10s} {f['calls_before']:4d} → {f['calls_after']:4d} "
                f"{f['seconds_before']:6.1f} → {f['seconds_after']:5.1f} {_fmt(f['seconds_p50']):>6s} "
                f"{f['changed_outcome']:7d} {f['evidence_gained']:4d} {f['evidence_lost']:4d}"
            )
        lines.append(
            f"  all calls {g['calls_before']} → {g['calls_after']}, model seconds {g['model_seconds_before']} → "
            f"{g['model_seconds_after']}; outcome changed after: {g['outcome_changed_after']}; evidence in prompt "
            f"{g['evidence_before']} → {g['evidence_after']} (lost {g['evidence_lost_after']})"
        )
        sweep = [s for s in g["route_sweep"] if s["routing_calls"]]
        if sweep:
            cells = ", ".join(f"{s['margin']:.2f}: {s['skipped']}/{s['changed']}" for s in sweep)
            lines.append(f"  route_same_search margin → skipped/changed of {sweep[0]['routing_calls']}: {cells}")
    lines.append("changed: the step's call changed the passages in the prompt or the routing actions; ev+/ev-: the")
    lines.append("set's evidence in the prompt only with / only without the step.")
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"
