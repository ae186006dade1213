"""The figures of ``ragbench.model_calls`` and ``ragbench.route_skip`` from hand-built rows: calls before and
after, the outcome a call changed, the evidence a skip lost, and the margin sweep."""

from __future__ import annotations

from typing import Any

from ragbench.model_calls_report import group_figures, render, summarize
from ragbench.route_skip import sweep


def asked(
    calls: dict[str, float], kept: list[str], evidence: bool | None, skipped: dict[str, str] | None = None
) -> Any:
    return {"actions": ["fallback"], "kept": kept, "evidence": evidence, "calls": calls, "skipped": skipped or {}}


def row(group: str, before: Any, without: dict[str, Any], after: Any, gap: float | None = None) -> dict[str, Any]:
    changed = {step: (set(a["kept"]) != set(before["kept"])) for step, a in without.items()}
    return {
        "group": group,
        "split": "dev",
        "before": before,
        "without": without,
        "changed": changed,
        "after": after,
        "after_changed": set(after["kept"]) != set(before["kept"]),
        "same_search_gap": gap,
    }


ROWS = [
    # a translation that found the evidence: kept by the rules
    row(
        "set",
        asked({"translate": 3.0}, ["a", "b"], True),
        {"translate": asked({}, ["c"], False)},
        asked({"translate": 3.0}, ["a", "b"], True),
    ),
    # a translation that changed nothing: skipped after
    row(
        "set",
        asked({"translate": 2.0}, ["a"], True),
        {"translate": asked({}, ["a"], True)},
        asked({}, ["a"], True, {"translate": "no passage in the other language"}),
    ),
    # a rewrite whose skip lost the evidence
    row(
        "in conversation",
        asked({"rewrite": 8.0}, ["x"], True),
        {"rewrite": asked({}, ["y"], False)},
        asked({}, ["y"], False, {"rewrite": "stands alone"}),
    ),
]


def test_calls_seconds_changes_and_lost_evidence_are_counted() -> None:
    figures = group_figures(ROWS)
    translate = figures["steps"]["translate"]
    assert (translate["calls_before"], translate["calls_after"]) == (2, 1)
    assert (translate["seconds_before"], translate["seconds_after"]) == (5.0, 3.0)
    assert (translate["changed_outcome"], translate["evidence_gained"], translate["skipped_by_rule"]) == (1, 1, 1)
    assert (figures["calls_before"], figures["calls_after"]) == (3, 1)
    assert (figures["evidence_before"], figures["evidence_after"], figures["evidence_lost_after"]) == (3, 2, 1)
    summary = summarize(ROWS)
    assert set(summary) == {"set dev", "in conversation dev", "all"}
    assert "all calls 3 → 1" in render(summary)


def test_the_margin_sweep_counts_skips_and_changed_outcomes() -> None:
    rows = [
        {"gap": 0.05, "model": "search", "rule": "search", "model_right": True, "rule_right": True, "seconds": 3.0},
        {"gap": 0.005, "model": "clarify", "rule": "search", "model_right": True, "rule_right": False, "seconds": 4.0},
        {"gap": -1.0, "model": "system", "rule": "system", "model_right": True, "rule_right": True, "seconds": 2.0},
    ]
    by_margin = {s["margin"]: s for s in sweep(rows)}
    assert (by_margin[0.0]["skipped"], by_margin[0.0]["outcome_changed"], by_margin[0.0]["seconds_saved"]) == (
        2,
        1,
        7.0,
    )
    assert (by_margin[0.01]["skipped"], by_margin[0.01]["outcome_changed"]) == (1, 0)
    assert by_margin[0.1]["skipped"] == 0  # a message to the assistant is never skipped
