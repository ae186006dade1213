"""What the answer set's scoring takes from an answer: the answer without its citation markers, and medians."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ragbench.eval.answers import median, strip_citations


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("Elena Brandt wrote The Quiet Lamp [1][2].", "Elena Brandt wrote The Quiet Lamp."),
        ("Castlebury [1, 2]", "Castlebury"),
        ("It opened in 1842 [3-4] and closed [5].", "It opened in 1842 and closed."),
        ("卡斯尔伯里【1】。", "卡斯尔伯里。"),
        ("No markers, [not a number].", "No markers, [not a number]."),
    ],
)
def test_strip_citations(text: str, stripped: str) -> None:
    assert strip_citations(text) == stripped


def test_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    values: Sequence[float] = [4.0, 1.0, 3.0, 2.0]
    assert median(values) == 2.5
    assert median([]) is None
