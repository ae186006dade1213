"""Finished OpenID Connect flows (ragapp.accounts.oidc_flows), on SQLite and PostgreSQL: a flow's state is taken
once, by whichever of two replicas (two stores over the same database) comes first, and forgotten once past its
time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragapp.accounts.oidc_flows import FinishedFlows


def test_a_flow_is_finished_once_across_replicas_and_forgotten_after_its_time(
    store_target: Callable[[str], Any],
) -> None:
    one, other = FinishedFlows(store_target("oidc_flows")), FinishedFlows(store_target("oidc_flows"))
    assert one.first_use("state-a", forget_after=100.0, now=10.0)
    assert not other.first_use("state-a", forget_after=100.0, now=11.0)  # the other replica refuses it
    assert not one.first_use("state-a", forget_after=100.0, now=12.0)
    assert other.first_use("state-b", forget_after=100.0, now=13.0)  # another flow is its own
    assert one.first_use("state-a", forget_after=300.0, now=200.0)  # past its time the record is gone
