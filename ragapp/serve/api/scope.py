"""The ``kbs`` of a request as a search scope: every name one the caller may read, or a 404 naming the ones
that are not (an unreadable base reads as unknown: its name is not told)."""

from __future__ import annotations

from collections.abc import Sequence

from ragapp.core.access import Actor
from ragapp.core.types import Scope
from ragapp.engine.engine import Engine
from ragapp.serve.api.errors import ApiError


def scope_of(engine: Engine, kbs: Sequence[str] | None, actor: Actor) -> Scope:
    """None (all the caller may read) for none or an empty list; else the names, each checked."""
    if not kbs:
        return None
    known = {kb.name for kb in engine.library.knowledge_bases(actor=actor)}
    unknown = sorted({kb for kb in kbs if kb not in known})
    if unknown:
        names = ", ".join(repr(kb) for kb in unknown)
        raise ApiError(404, f"No knowledge base {names}; GET /v1/knowledge-bases lists them.", "unknown_kb")
    return frozenset(kbs)
