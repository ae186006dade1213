"""What the mode comparison shows: a progress line per answer, the table, and the JSON it rewrites as it goes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragbench.eval.answers import AnswerRow, summarize


def write_json(path: Path, payload: dict[str, Any], rows: Sequence[AnswerRow]) -> None:
    modes = payload["modes"]
    data = {**payload, "answered": len({r.query_id for r in rows})}
    data["summary"] = summarize(rows, modes)
    data["rows"] = [r.as_json() for r in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(path.suffix + ".part")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    temporary.replace(path)


def progress_line(index: int, total: int, row: AnswerRow) -> str:
    extra = f" steps {row.steps}" if row.mode != "workflow" else ""
    extra += " FALLBACK" if row.fallback else ""
    return (
        f"[{index + 1:>3}/{total}] {row.mode:<8} {row.seconds:6.1f}s  F1 {row.f1:.2f}  EM {row.em:.0f}  "
        f"supports {row.supports_found}/{len(row.supports)}  calls {row.usage.calls}{extra}  {row.question[:70]}"
    )


def _cell(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def render_table(label: str, summary: dict[str, Any]) -> str:
    header = [
        "mode", "n", "both sup %", "in prompt %", "EM", "F1", "contains", "calls/q", "tokens/q",
        "s/q p50", "s/q mean", "steps/q", "fallbacks",
    ]  # fmt: skip
    body = []
    for mode, s in summary["modes"].items():
        agentic = mode != "workflow"
        body.append(
            [
                mode,
                str(s["questions"]),
                _cell(None if s["both_supports"] is None else 100 * s["both_supports"], ".0f"),
                _cell(None if s["both_supports_in_prompt"] is None else 100 * s["both_supports_in_prompt"], ".0f"),
                _cell(s["em"], ".3f"),
                _cell(s["f1"], ".3f"),
                _cell(s["contains"], ".3f"),
                _cell(s["model_calls"], ".1f"),
                _cell(s["tokens"], ".0f"),
                _cell(s["seconds_p50"], ".1f"),
                _cell(s["seconds_mean"], ".1f"),
                _cell(s["steps"], ".1f") if agentic else "-",
                str(s["fallbacks"]) if agentic else "-",
            ]
        )
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    lines = [label, "", line(header), line(["-" * w for w in widths]), *(line(r) for r in body)]
    for pair in summary["paired"]:
        first, second = pair["modes"]
        f1, sup = pair["f1"], pair["supports"]
        lines.append(
            f"\n{second} vs {first} on {pair['questions']} questions: F1 better {f1['better']}, worse {f1['worse']}, "
            f"same {f1['same']}; supports found better {sup['better']}, worse {sup['worse']}, same {sup['same']}"
        )
    return "\n".join(lines)
