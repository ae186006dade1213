"""The lifecycle of the parts that hold resources: database files and connections, threads, pools.

A constructor only keeps its arguments: no threads, no migrations, no hashing, no network. ``start()`` opens what
the part needs and returns the part, so a one-off user writes ``Catalog(path).start()``; a second call does
nothing. ``close()`` lets go of it again, and does nothing on a part that never started. ``build_engine`` starts
the engine's parts and ``Engine.close`` closes them.

A part used before ``start()`` raises ``NotStartedError`` rather than starting itself: a lazy start would move
the migrations (and their errors) from start-up into whichever request comes first, and need a lock on every call.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


class NotStartedError(RuntimeError):
    """A part was used before its ``start()``: a mistake in the code that built it, not in anything a user did."""

    def __init__(self, part: object) -> None:
        name = type(part).__name__
        super().__init__(
            f"{name} is used before it was started: call {name}(...).start() first "
            "(build_engine starts the engine's parts)."
        )


def started(part: object, resource: T | None) -> T:
    """What ``part`` opened in its ``start()``; ``NotStartedError`` before that."""
    if resource is None:
        raise NotStartedError(part)
    return resource
