"""The conversations facet: each user's past chats, kept as shown, to list, reopen, rename and delete.

The UI hands over what it showed as plain message dicts (``role``, ``content``, ``metadata``, ``options``,
and two keys of ours: ``doc_id``, the document a citation points at, and ``trace_id``, the answer's trace);
this facet stores them per owner and, on opening, marks each citation whose document has since been deleted
(``doc_deleted``) so an old answer stays readable and says its source is gone.
"""

from __future__ import annotations

import builtins
from dataclasses import replace
from typing import Any

from ragapp.core.access import LOCAL_ACTOR, Action, Actor, require
from ragapp.store.catalog import Catalog
from ragapp.store.conversations import Conversation, ConversationStore, ConversationSummary


class Conversations:
    def __init__(self, store: ConversationStore | None, catalog: Catalog) -> None:
        self._store = store  # None: nothing is kept (no state folder)
        self._catalog = catalog

    def list(self, owner: str, *, actor: Actor = LOCAL_ACTOR) -> builtins.list[ConversationSummary]:
        require(actor, Action.CHAT)
        return self._store.list(owner) if self._store is not None else []

    def open(self, owner: str, conversation_id: str, *, actor: Actor = LOCAL_ACTOR) -> Conversation | None:
        """The owner's conversation as it was shown, citations of deleted documents marked; None if none."""
        require(actor, Action.CHAT)
        found = self._store.get(owner, conversation_id) if self._store is not None and conversation_id else None
        if found is None:
            return None
        cited = {m["doc_id"] for m in found.messages if isinstance(m.get("doc_id"), str)}
        gone = {doc_id for doc_id in cited if self._catalog.document(doc_id) is None}
        if not gone:
            return found
        marked = tuple({**m, "doc_deleted": True} if m.get("doc_id") in gone else m for m in found.messages)
        return replace(found, messages=marked)

    def save(
        self,
        owner: str,
        conversation_id: str | None,
        title: str,
        messages: builtins.list[dict[str, Any]],
        memory: dict[str, Any],
        *,
        actor: Actor = LOCAL_ACTOR,
    ) -> str | None:
        """Keep the conversation; returns its id (a new one for a new chat), None when nothing is kept."""
        require(actor, Action.CHAT)
        if self._store is None:
            return None
        return self._store.save(owner, conversation_id, title, messages, memory)

    def rename(self, owner: str, conversation_id: str, title: str, *, actor: Actor = LOCAL_ACTOR) -> bool:
        require(actor, Action.CHAT)
        return self._store.rename(owner, conversation_id, title) if self._store is not None else False

    def delete(self, owner: str, conversation_id: str, *, actor: Actor = LOCAL_ACTOR) -> bool:
        require(actor, Action.CHAT)
        return self._store.delete(owner, conversation_id) if self._store is not None else False

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
