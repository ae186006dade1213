"""A conversation as the conversations facet gives it back (``ragapp.engine.conversations``), on its own so the
exporters (``chat_export``, ``chat_archive``) can read it without importing the facet that uses them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragapp.core.turn import Exchange


@dataclass(frozen=True)
class SavedConversation:
    """A conversation as kept: its exchanges, or (kept before exchanges were) its messages as shown."""

    id: str
    title: str
    memory: dict[str, Any]
    exchanges: tuple[Exchange, ...] = ()
    messages: tuple[dict[str, Any], ...] = ()  # only for a conversation kept as shown
    deleted: frozenset[str] = frozenset()  # the cited documents deleted since
    created_at: str = ""  # ISO times, UTC
    updated_at: str = ""

    @property
    def as_shown(self) -> bool:
        """Kept as the chat's messages (before conversations were kept as exchanges)."""
        return bool(self.messages)
