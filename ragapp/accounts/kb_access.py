"""Which knowledge bases a user may read and edit, from the rules the accounts keep (``KbRule``).

Reading is enforced where the asking starts (``Chat.ask``): the question's scope becomes the bases the asker
may read, intersected with the ones they picked, and everything downstream (both search channels, the intent
tree's routing, the agent's tools, the retrieval cache, whose key holds the scope) only ever sees that scope.
Admins read and edit everything; a base without a rule is open to everyone signed in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore
from ragapp.core.access import Actor
from ragapp.core.types import Scope


def _listed(actor: Actor, names: tuple[str, ...]) -> bool:
    return actor.name in names or any(f"group:{g}" in names for g in actor.groups)


class KbAccess:
    """``known_kbs``: the knowledge bases that hold documents (the catalog's), to list the ones a rule hides."""

    def __init__(self, store: UserStore, known_kbs: Callable[[], Iterable[str]]) -> None:
        self._store = store
        self._known_kbs = known_kbs

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
        every = set(self._known_kbs()) | set(rules)
        return frozenset((every if kbs is None else set(kbs)) - hidden)
