"""What the answer set's scoring (``ragbench.answers.scoring``) takes from a model's answer before it compares it
with the gold: the answer without its citation markers, and the median of a column of figures."""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

# [1], [1, 2], [1][2], [1-3], and the full-width brackets a Chinese answer may use.
_CITATION = re.compile(r"\s*[\[【]\s*\d+(?:\s*[,，、;\-–]\s*\d+)*\s*[\]】]")


def strip_citations(text: str) -> str:
    """``text`` without citation markers ("Paris [1][2]." -> "Paris.")."""
    return _CITATION.sub("", text).strip()


def median(values: Sequence[float]) -> float | None:
    """The middle value (the mean of the two middle ones for an even count); None for none."""
    return statistics.median(values) if values else None
