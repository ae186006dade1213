"""Who may do what: three roles, each a set of actions, checked in the engine (the UI only hides what a role
cannot use; a script calling Gradio's API meets the same check).

    reader  chat, read its own traces and test cases, give feedback
    editor  + upload, delete and move documents, edit the intent tree
    admin   + manage users, read every trace, see the settings, follow folders and git repositories (a folder
            of the server becomes readable through the knowledge base), read the audit log

With accounts off (the default) the one local user is an admin, so the app behaves as it always has.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal, get_args

from ragapp.core.errors import AccessDenied
from ragapp.core.said import Said

Role = Literal["reader", "editor", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)


class Action(StrEnum):
    CHAT = "chat"
    OWN_TRACES = "read own traces"
    OWN_TEST_CASES = "manage own test cases"
    FEEDBACK = "give feedback"
    UPLOAD = "upload documents"
    DELETE = "delete documents"
    MOVE = "move documents"
    EDIT_INTENTS = "edit the intent tree"
    MANAGE_USERS = "manage users"
    ALL_TRACES = "read every trace"
    VIEW_SETTINGS = "see the settings"
    MANAGE_SOURCES = "follow folders and git repositories"
    READ_AUDIT = "read the audit log"


_READER = frozenset({Action.CHAT, Action.OWN_TRACES, Action.OWN_TEST_CASES, Action.FEEDBACK})
_EDITOR = _READER | {Action.UPLOAD, Action.DELETE, Action.MOVE, Action.EDIT_INTENTS}
ROLE_ACTIONS: dict[Role, frozenset[Action]] = {
    "reader": _READER,
    "editor": _EDITOR,
    "admin": _EDITOR
    | {Action.MANAGE_USERS, Action.ALL_TRACES, Action.VIEW_SETTINGS, Action.MANAGE_SOURCES, Action.READ_AUDIT},
}


@dataclass(frozen=True)
class Actor:
    """The user an engine call acts for."""

    name: str
    role: Role
    groups: frozenset[str] = field(default_factory=frozenset)
    # Where the request came from (an IP address; "" when unknown): for the audit log, not part of who it is.
    client: str = field(default="", compare=False)

    def at(self, client: str) -> Actor:
        """This actor acting from ``client``."""
        return replace(self, client=client)


LOCAL_ACTOR = Actor("local", "admin")  # accounts off: the single local user


def may(actor: Actor, action: Action) -> bool:
    return action in ROLE_ACTIONS[actor.role]


def require(actor: Actor, action: Action) -> None:
    """Raise ``AccessDenied`` (a message the UI shows as it is) unless ``actor`` may do ``action``."""
    if not may(actor, action):
        raise AccessDenied(said=Said("access.role", {"role": actor.role, "action": action.value}))
