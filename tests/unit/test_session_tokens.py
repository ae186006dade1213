"""Sign-ins kept in the database (``ragapp.accounts.sessions``) and Gradio's token map over them
(``ragapp.serve.sessions.SessionTokens``), with a clock moved by hand, on SQLite and PostgreSQL. The served app
over HTTP: tests/integration/test_served_app.py and test_sign_ins_http.py."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from ragapp.accounts.sessions import SessionStore, token_hash
from ragapp.engine.sign_ins import SignIns
from ragapp.serve.sessions import SessionTokens, request_from, sign_in_method


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _tokens(store: SessionStore, clock: Clock) -> SessionTokens:
    return SessionTokens(SignIns(store), clock)


def test_a_token_lasts_its_lifetime_and_no_longer(
    store_target: Callable[[str], Any], caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    tokens = _tokens(SessionStore(store_target("sessions"), 60.0).start(), clock)
    tokens["a"] = "alice"
    clock.now += 59.9
    assert tokens.get("a") == "alice" and "a" in tokens
    clock.now += 0.1
    with caplog.at_level(logging.INFO, logger="ragapp"):
        assert tokens.get("a") is None and "a" not in tokens
    assert [r.getMessage() for r in caplog.records] == ["sign-in of 'alice' expired after 0.01667 h"]
    assert tokens.get(None) is None and tokens.get("") is None  # no cookie


def test_a_sign_in_outlives_its_process_and_keeps_only_the_tokens_hash(store_target: Callable[[str], Any]) -> None:
    clock = Clock()
    first = SessionStore(store_target("sessions"), 3600.0).start()
    request_from.set(("10.0.0.7", "Firefox/140"))
    _tokens(first, clock)["secret-token"] = "alice"
    cookie = first.cookie_id()
    first.close()

    again = SessionStore(store_target("sessions"), 3600.0).start()  # the app started again (or another replica)
    assert _tokens(again, clock).get("secret-token") == "alice"
    assert again.cookie_id() == cookie  # the browser's cookie keeps its name
    (seen,) = again.active(clock.now)
    assert (seen.user, seen.method, seen.client, seen.agent) == ("alice", "password", "10.0.0.7", "Firefox/140")
    assert seen.expires - seen.started == 3600.0 and "secret-token" not in repr(seen)
    rows = again._db.query("SELECT * FROM sign_ins")
    assert "secret-token" not in repr(rows) and token_hash("secret-token") in repr(rows)
    assert seen.id not in ("secret-token", token_hash("secret-token"))


def test_expired_sign_ins_are_swept_at_the_next_sign_in_and_logout_still_works(
    store_target: Callable[[str], Any],
) -> None:
    clock = Clock()
    store = SessionStore(store_target("sessions"), 60.0).start()
    tokens = _tokens(store, clock)
    tokens["a"], tokens["b"] = "alice", "bob"
    clock.now += 61
    token = sign_in_method.set("oidc")
    try:
        tokens["c"] = "alice"
    finally:
        sign_in_method.reset(token)
    assert [(s.user, s.method) for s in store.active(clock.now)] == [("alice", "oidc")]
    assert store._db.query("SELECT user_name FROM sign_ins") == [("alice",)]  # a and b are gone from the table
    # Gradio's /logout, as it is written: it finds no token to end (only hashes are kept) ...
    for each in list(tokens.keys()):
        if tokens[each] == "alice":
            del tokens[each]
    assert tokens.get("c") == "alice"
    assert tokens.end_all("alice") == 1  # ... so SessionCookies ends them
    assert tokens.get("c") is None
    with pytest.raises(KeyError):
        del tokens["c"]


def test_an_ended_sign_in_is_refused_at_once_here_and_within_the_recheck_time_elsewhere(
    store_target: Callable[[str], Any],
) -> None:
    clock = Clock()
    here = SessionStore(store_target("sessions"), 3600.0, recheck_s=5.0).start()
    there = SessionStore(store_target("sessions"), 3600.0, recheck_s=5.0).start()  # another replica
    here.begin("t1", "alice", now=clock.now)
    here.begin("t2", "alice", now=clock.now)
    here.begin("t3", "bob", now=clock.now)
    assert there.user("t1", clock.now) == "alice" and there.user("t3", clock.now) == "bob"

    (one,) = [s for s in here.active(clock.now) if s.user == "bob"]
    assert here.end_id(one.id) == "bob" and here.end_id(one.id) is None
    assert here.end_user("alice") == 2
    assert here.user("t1", clock.now) is None and here.user("t3", clock.now) is None  # this process: at once
    assert there.user("t1", clock.now) == "alice"  # the other still trusts what it read ...
    clock.now += 5.0
    assert there.user("t1", clock.now) is None and there.user("t3", clock.now) is None  # ... for 5 s at most
    assert there.user("t2", clock.now) is None
    assert here.active(clock.now) == []


def test_last_seen_moves_at_most_once_a_minute(store_target: Callable[[str], Any]) -> None:
    clock = Clock()
    store = SessionStore(store_target("sessions"), 3600.0, recheck_s=5.0).start()
    store.begin("t", "alice", now=clock.now)
    clock.now += 30
    assert store.user("t", clock.now) == "alice"
    (seen,) = store.active(clock.now)
    assert seen.last_seen == seen.started  # not yet a minute: no write
    clock.now += 31
    assert store.user("t", clock.now) == "alice"
    (seen,) = store.active(clock.now)
    assert seen.last_seen == clock.now
