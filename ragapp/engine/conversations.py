"""The conversations facet: each user's past chats, to list, reopen, rename and delete.

A conversation is kept as the engine's own records: per question, what the user's side showed and the ``Turn``
that answered it (``Exchange``), which the UI draws again on opening, exactly as it drew it live. On opening, the
documents its answers cite that have since been deleted are named (``deleted``), so an old answer stays readable
and says its source is gone.

Conversations kept before this (as the chat's message dicts: ``role``, ``content``, ``metadata``, ``options``,
``doc_id``, ``trace_id``) still open, with each citation of a deleted document marked ``doc_deleted``, and are
kept in that form when they go on.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.turn import Exchange
from ragapp.store.catalog import Catalog
from ragapp.store.conversations import ConversationStore, ConversationSummary


@dataclass(frozen=True)
class SavedConversation:
    """A conversation as kept: its exchanges, or (kept before exchanges were) its messages as shown."""

    id: str
    title: str
    memory: dict[str, Any]
    exchanges: tuple[Exchange, ...] = ()
    messages: tuple[dict[str, Any], ...] = ()  # only for a conversation kept as shown
    deleted: frozenset[str] = frozenset()  # the cited documents deleted since

    @property
    def as_shown(self) -> bool:
        """Kept as the chat's messages (before conversations were kept as exchanges)."""
        return bool(self.messages)


class Conversations:
    def __init__(self, store: ConversationStore | None, catalog: Catalog) -> None:
        self._store = store  # None: nothing is kept (no state folder)
        self._catalog = catalog

    def list(self, owner: str, *, actor: Actor = LOCAL_ACTOR) -> builtins.list[ConversationSummary]:
        require(actor, Action.CHAT)
        return self._store.list(owner) if self._store is not None else []

    def open(self, owner: str, conversation_id: str, *, actor: Actor = LOCAL_ACTOR) -> SavedConversation | None:
        """The owner's conversation, with the cited documents deleted since; None if none."""
        require(actor, Action.CHAT)
        found = self._store.get(owner, conversation_id) if self._store is not None and conversation_id else None
        if found is None:
            return None
        if any("turn" not in m for m in found.messages):  # kept as shown, before exchanges
            return SavedConversation(found.id, found.title, found.memory, messages=self._marked(found.messages))
        exchanges = tuple(Exchange.from_dict(m) for m in found.messages)
        cited = set().union(*(e.cited_documents() for e in exchanges))
        gone = frozenset(doc_id for doc_id in cited if self._catalog.document(doc_id) is None)
        return SavedConversation(found.id, found.title, found.memory, exchanges, deleted=gone)

    def _marked(self, messages: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
        cited = {m["doc_id"] for m in messages if isinstance(m.get("doc_id"), str)}
        gone = {doc_id for doc_id in cited if self._catalog.document(doc_id) is None}
        return tuple({**m, "doc_deleted": True} if m.get("doc_id") in gone else m for m in messages)

    def save(
        self,
        owner: str,
        conversation_id: str | None,
        title: str,
        exchanges: Sequence[Exchange],
        memory: dict[str, Any],
        *,
        shown: Sequence[dict[str, Any]] | None = None,
        actor: Actor = LOCAL_ACTOR,
    ) -> str | None:
        """Keep the conversation; returns its id (a new one for a new chat), None when nothing is kept.
        ``shown``: a conversation kept as shown (see the module) goes on in that form."""
        require(actor, Action.CHAT)
        if self._store is None:
            return None
        kept = list(shown) if shown is not None else [e.to_dict() for e in exchanges]
        return self._store.save(owner, conversation_id, title, kept, memory)

    def rename(self, owner: str, conversation_id: str, title: str, *, actor: Actor = LOCAL_ACTOR) -> bool:
        require(actor, Action.CHAT)
        return self._store.rename(owner, conversation_id, title) if self._store is not None else False

    def delete(self, owner: str, conversation_id: str, *, actor: Actor = LOCAL_ACTOR) -> bool:
        require(actor, Action.CHAT)
        return self._store.delete(owner, conversation_id) if self._store is not None else False

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
