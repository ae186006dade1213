"""Gradio's sign-in tokens, forgotten ``lifetime_s`` after each sign-in (the served app is tested over HTTP in
tests/integration/test_served_app.py)."""

from __future__ import annotations

import logging

import pytest

from ragapp.serve.sessions import SessionTokens


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_token_lasts_its_lifetime_and_no_longer(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    tokens = SessionTokens(60.0, clock)
    tokens["a"] = "alice"
    clock.now = 59.9
    assert tokens.get("a") == "alice" and "a" in tokens
    clock.now = 60.0
    with caplog.at_level(logging.INFO, logger="ragapp.serve"):
        assert tokens.get("a") is None and "a" not in tokens
    assert [r.getMessage() for r in caplog.records] == ["sign-in of 'alice' expired after 0.01667 h"]
    assert tokens.get(None) is None  # no cookie


def test_expired_tokens_are_dropped_at_the_next_sign_in_and_logout_still_works() -> None:
    clock = Clock()
    tokens = SessionTokens(60.0, clock)
    tokens["a"], tokens["b"] = "alice", "bob"
    clock.now = 61.0
    tokens["c"] = "alice"
    assert dict(tokens) == {"c": "alice"}  # nobody came back with a or b: they are not kept for ever
    # Gradio's /logout, as it is written: every token of the user goes
    for token in list(tokens.keys()):
        if tokens[token] == "alice":
            del tokens[token]
    assert dict(tokens) == {}
