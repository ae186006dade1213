"""``python -m ragbench.checked_stream``'s summary on hand-made timings (the command itself needs the local model)."""

from __future__ import annotations

from ragbench.checked_stream import summary


def test_the_benchmark_counts_an_answer_without_a_checked_sentence_at_its_end() -> None:
    rows = [
        {"first_token_s": 2.0, "first_checked_s": 3.0, "answer_s": 6.0},
        {"first_token_s": 4.0, "first_checked_s": None, "answer_s": 5.0},  # one sentence: given with the answer
        {"first_token_s": None, "first_checked_s": None, "answer_s": 1.0},  # not answered by the model
    ]
    got = summary(rows)
    assert got["answered"] == 2 and got["checked_before_the_end"] == 1
    assert got["first_checked_s_p50"] == 4.0 and got["checked_over_token"] == round(4.0 / 3.0, 2)
