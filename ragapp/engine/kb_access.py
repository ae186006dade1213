"""Which knowledge bases a user may read and edit, from the rules in the users file (``KbRule``).

Reading is enforced where the asking starts (``Chat.ask``): the question's scope becomes the bases the asker
may read, intersected with the ones they picked, and everything downstream (both search channels, the intent
tree's routing, the agent's tools, the retrieval cache, whose key holds the scope) only ever sees that scope.
Admins read and edit everything; a base without a rule is open to everyone signed in.
"""

from __future__ import annotations

from collections.abc import Iterable

from ragapp.core.access import Actor
from ragapp.core.types import Scope
from ragapp.store.catalog import Catalog
from ragapp.store.users import KbRule, UserStore


def _listed(actor: Actor, names: tuple[str, ...]) -> bool:
    return actor.name in names or any(f"group:{g}" in names for g in actor.groups)


class KbAccess:
    def __init__(self, store: UserStore, catalog: Catalog) -> None:
        self._store = store
        self._catalog = catalog

    def may_read(self, actor: Actor, kb: str, rules: dict[str, KbRule] | None = None) -> bool:
        rule = (rules if rules is not None else self._store.kb_rules()).get(kb)
        return actor.role == "admin" or rule is None or _listed(actor, rule.readers + rule.editors)

    def readable(self, actor: Actor, kbs: Iterable[str]) -> set[str]:
        """Those of ``kbs`` that ``actor`` may read (the rules read once for all of them)."""
        rules = self._store.kb_rules()
        return {kb for kb in kbs if self.may_read(actor, kb, rules)}

    def may_edit(self, actor: Actor, kb: str) -> bool:
        rule = self._store.kb_rules().get(kb)
        return actor.role == "admin" or rule is None or _listed(actor, rule.editors)

    def scope_for(self, actor: Actor, kbs: Scope) -> Scope:
        """``kbs`` (None: all) narrowed to the bases ``actor`` may read; None only when nothing is hidden."""
        rules = self._store.kb_rules()
        hidden = {kb for kb in rules if not self.may_read(actor, kb, rules)}
        if not hidden:
            return kbs
        every = {kb.name for kb in self._catalog.knowledge_bases()} | set(rules)
        return frozenset((every if kbs is None else set(kbs)) - hidden)
