"""The limits of ``tests/hostile/bounded.py`` hold: a child past them is killed and the test fails at once."""

from __future__ import annotations

import time

import pytest

from tests.hostile.bounded import bounded


def _hoard(megabytes: int) -> int:
    held = [bytearray(1024 * 1024) for _ in range(megabytes)]  # touched: resident, not just reserved
    return len(held)


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def _fail() -> None:
    raise ValueError("the parser's own error")


def test_a_child_over_its_memory_is_killed_and_the_test_fails() -> None:
    with pytest.raises(AssertionError, match="took over 300 MB of memory"):
        bounded(_hoard, 2_000, max_mb=300)


def test_a_child_over_its_time_is_killed_and_the_test_fails() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError, match="still running after 1 s"):
        bounded(_sleep, 30, within_s=1)
    assert time.monotonic() - started < 10  # killed, not waited for


def test_a_child_within_its_limits_gives_its_value_or_its_error() -> None:
    assert bounded(_hoard, 10) == 10
    with pytest.raises(ValueError, match="the parser's own error"):
        bounded(_fail)
