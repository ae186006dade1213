"""The conversations facet: each user's past chats, to list, reopen, rename and delete.

A conversation is kept as the engine's own records: per question, what the user's side showed and the ``Turn``
that answered it (``Exchange``), which the UI draws again on opening, exactly as it drew it live. On opening, the
documents its answers cite that have since been deleted are named (``deleted``), so an old answer stays readable
and says its source is gone.

Conversations kept before this (as the chat's message dicts: ``role``, ``content``, ``metadata``, ``options``,
``doc_id``, ``trace_id``) still open, with each citation of a deleted document marked ``doc_deleted``, and are
kept in that form when they go on.

``export`` gives one of the owner's conversations as a Markdown or JSON file (``ragapp.engine.chat_export``),
``export_all`` all of them in a zip (``ragapp.engine.chat_archive``); like ``open``, only ever the owner's own.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.core.turn import Exchange
from ragapp.engine.chat_archive import archive, download_name
from ragapp.engine.chat_export import MEDIA_TYPES, SUFFIXES, ChatExport, ExportFormat, render
from ragapp.engine.saved_conversation import SavedConversation
from ragapp.store.catalog import Catalog
from ragapp.store.conversations import ConversationStore, ConversationSummary


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
        when = found.created_at, found.updated_at
        if any("turn" not in m for m in found.messages):  # kept as shown, before exchanges
            marked = self._marked(found.messages)
            return SavedConversation(found.id, found.title, found.memory, (), marked, frozenset(), *when)
        exchanges = tuple(Exchange.from_dict(m) for m in found.messages)
        cited = set().union(*(e.cited_documents() for e in exchanges))
        gone = frozenset(doc_id for doc_id in cited if self._catalog.document(doc_id) is None)
        return SavedConversation(found.id, found.title, found.memory, exchanges, (), gone, *when)

    def export(
        self, owner: str, conversation_id: str, fmt: ExportFormat = "markdown", *, actor: Actor = LOCAL_ACTOR
    ) -> ChatExport | None:
        """The owner's conversation as a Markdown or JSON file; None when the owner has none of that id (another
        owner's id included: it is not found, not refused, so an id says nothing about whose it is)."""
        found = self.open(owner, conversation_id, actor=actor)
        if found is None:
            return None
        text = render(found, fmt)
        name = download_name(found.title, SUFFIXES[fmt], found.updated_at)
        return ChatExport(name, MEDIA_TYPES[fmt], text.encode("utf-8"))

    def export_all(self, owner: str, *, actor: Actor = LOCAL_ACTOR) -> ChatExport:
        """All the owner's conversations, the latest first, as a zip (one with only its index when there are
        none: ``count`` is 0)."""
        require(actor, Action.CHAT)
        listed = self._store.list(owner, limit=self._store.max_per_owner) if self._store is not None else []
        chats = [c for s in listed if (c := self.open(owner, s.id, actor=actor)) is not None]
        return archive(chats)

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
