"""The role table: every role × action pair, written out so a change to a role is a visible change here."""

from __future__ import annotations

import pytest

from ragapp.core.access import LOCAL_ACTOR, ROLES, Action, Actor, may, require
from ragapp.core.errors import AccessDenied

A = Action
#                          reader editor admin
TABLE = {
    A.CHAT:                (True,  True,  True),
    A.OWN_TRACES:          (True,  True,  True),
    A.OWN_TEST_CASES:      (True,  True,  True),
    A.FEEDBACK:            (True,  True,  True),
    A.UPLOAD:              (False, True,  True),
    A.DELETE:              (False, True,  True),
    A.MOVE:                (False, True,  True),
    A.EDIT_INTENTS:        (False, True,  True),
    A.MANAGE_USERS:        (False, False, True),
    A.ALL_TRACES:          (False, False, True),
    A.VIEW_SETTINGS:       (False, False, True),
    A.MANAGE_SOURCES:      (False, False, True),
    A.READ_AUDIT:          (False, False, True),
}  # fmt: skip


def test_the_table_covers_every_action() -> None:
    assert set(TABLE) == set(Action) and ROLES == ("reader", "editor", "admin")


@pytest.mark.parametrize("action", list(Action))
@pytest.mark.parametrize("role", ROLES)
def test_each_role_may_do_exactly_its_actions(role: str, action: Action) -> None:
    actor = Actor("someone", role)  # type: ignore[arg-type]
    allowed = TABLE[action][ROLES.index(role)]  # type: ignore[arg-type]
    assert may(actor, action) is allowed
    if allowed:
        require(actor, action)
    else:
        with pytest.raises(AccessDenied, match=f"Your role \\({role}\\) may not {action.value}"):
            require(actor, action)


def test_with_accounts_off_the_local_user_may_do_everything() -> None:
    assert all(may(LOCAL_ACTOR, action) for action in Action)
