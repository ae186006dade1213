"""What an intent edit takes and gives back: a draft as a person fills it in, and the outcome of a save or a
deletion. The tree rules themselves live in ``ragapp.router.tree`` (validation, a leaf that receives a child
becomes a group) and ``ragapp.router.store`` (codes are unique); the ``Intents`` facet applies them all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from ragapp.router.tree import GROUP, Format, IntentNode, IntentTree, IntentTreeError, Kind

EDIT_KINDS = (GROUP, "KB", "SYSTEM")
IMPORT_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class IntentDraft:
    """An intent as a person fills it in (the editor form, a request body): loose values, made into an
    ``IntentNode`` by ``to_node``. Fields that do not matter for the kind are dropped, not refused."""

    code: str | None = None
    parent: str | None = None  # None or "": the top level
    name: str | None = None
    description: str | None = None
    examples: str | Sequence[str] | None = None  # a text with one example a line, or a list
    kind: str | None = None  # "group", "KB" or "SYSTEM"
    kbs: Sequence[str] | str | None = None  # KB leaves only
    top_k: float | str | None = None  # KB leaves only; 0 or empty: the retrieval setting
    prompt: str | None = None  # leaves only

    def to_node(self) -> IntentNode:
        """The node this draft describes. Raises ``IntentTreeError`` for values that cannot even make a node
        (the tree rules are checked when it is saved)."""
        problems: list[str] = []
        code = (self.code or "").strip()
        if not code:
            problems.append("give the intent a code: a short unique id such as 'glide-w3.accessories'")
        if self.kind not in EDIT_KINDS:
            problems.append("choose a kind: group, KB or SYSTEM")
        kind = cast(Kind, self.kind) if self.kind in ("KB", "SYSTEM") else None
        top_k: int | None = None
        if kind == "KB" and self.top_k not in (None, "", 0):  # a browser sends an empty number box as 0
            top_k = _whole_number(self.top_k, problems)
        if problems:
            raise IntentTreeError(problems)
        kbs = [self.kbs] if isinstance(self.kbs, str) else list(self.kbs or [])
        examples = self.examples.splitlines() if isinstance(self.examples, str) else list(self.examples or [])
        return IntentNode(
            code=code,
            name=(self.name or "").strip(),
            parent=self.parent or None,
            description=(self.description or "").strip(),
            examples=tuple(line.strip() for line in examples if line.strip()),
            kind=kind,
            kbs=tuple(dict.fromkeys(k.strip() for k in kbs if k.strip())) if kind == "KB" else (),
            top_k=top_k,
            prompt=((self.prompt or "").strip() or None) if kind is not None else None,
        )


@dataclass(frozen=True)
class SavedIntent:
    """A save that went through: the tree it made and what happened to whom."""

    tree: IntentTree
    code: str
    added: bool  # False: an existing intent was updated
    renamed_from: str | None = None
    made_group: str | None = None  # the leaf that received this intent as a child and so became a group


@dataclass(frozen=True)
class DeletedIntent:
    code: str
    path: str  # its full path before it went
    count: int  # how many intents went: it and everything under it


def import_format(name: str) -> Format:
    """The format of an intent tree file, from its name. Raises ``IntentTreeError`` for any other file."""
    suffix = Path(name).suffix.lower()
    if suffix not in IMPORT_SUFFIXES:
        raise IntentTreeError([f"use a .yaml, .yml or .json file, not {Path(name).name!r}"])
    return "json" if suffix == ".json" else "yaml"


def only_child_hint(tree: IntentTree, code: str) -> list[str]:
    """Why deleting ``code`` is refused when it is the only child of a group, and the way out (else nothing)."""
    node = tree.get(code)
    if node is None or node.parent is None or [n.code for n in tree.children(node.parent)] != [code]:
        return []
    return [
        f"'{code}' is the only intent under the group '{node.parent}', and a group needs at least one child: "
        f"add another intent under '{node.parent}' first, or delete '{node.parent}' itself"
    ]


def _whole_number(value: float | str, problems: list[str]) -> int | None:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not math.isfinite(number) or number != int(number):
        problems.append(f"top-k must be a whole number (0 or empty: the default), not {value!r}")
        return None
    return int(number)


_NOT_IN_CODE = re.compile(r"[^a-z0-9_-]+")
_LISTED = 6  # documents named in a new leaf's description; the rest are counted


def kb_leaf(tree: IntentTree, kb: str, documents: Sequence[str]) -> IntentNode:
    """A knowledge leaf at the top of ``tree`` that searches ``kb``: named after it, described by ``documents``
    (its documents' names or titles), with a code not yet in use. A person edits it afterwards like any leaf:
    the name and description are what the router compares questions with."""
    stem = "kb-" + (_NOT_IN_CODE.sub("-", kb.casefold()).strip("-") or "uploads")
    code, n = stem, 2
    while code in tree:
        code, n = f"{stem}-{n}", n + 1
    more = f" and {len(documents) - _LISTED} more" if len(documents) > _LISTED else ""
    listed = ", ".join(documents[:_LISTED]) + more
    description = f"Questions about the documents in the knowledge base {kb}" + (f": {listed}" if listed else "")
    return IntentNode(
        code=code,
        name=f"Documents in {kb} · {kb} 中的文档",
        description=description[:400],
        kind="KB",
        kbs=(kb,),
    )
