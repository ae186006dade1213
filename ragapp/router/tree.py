"""The intent tree: nodes, paths, validation, and the YAML/JSON form people import and export.

Groups (nodes with children) organise the tree; leaves carry what routing needs. A leaf is either
``KB`` (retrieve from its knowledge bases, with its own top-k and optional answer prompt) or ``SYSTEM``
(greetings, who-are-you, feedback: answered without retrieval). Everything here is pure data: the
store persists it, the classifier reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from ragapp.core.errors import ConfigError
from ragapp.core.said import Said

Kind = Literal["KB", "SYSTEM"]
KINDS: tuple[Kind, ...] = ("KB", "SYSTEM")
Label = dict[str, str]  # an intent read from a file: its place ("where") and its code, for what is said of it
Format = Literal["yaml", "json"]
GROUP = "group"  # how a node with children (or without a kind) is shown: not a ``Kind``, nodes store None

_CODE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
MAX_TOP_K = 20
FORMAT_VERSION = 1


class IntentTreeError(ConfigError):
    """An intent tree (or an edit to one) is invalid; ``problems`` lists every reason, one per line."""

    def __init__(self, problems: Iterable[Said]) -> None:
        self.reasons = list(problems) or [Said("intent_tree.invalid")]  # for a page to word in its language
        self.problems = [reason.english for reason in self.reasons]  # in English: the API's and the log's
        super().__init__("The intent tree was not changed: " + "; ".join(self.problems))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.reasons,)  # read back in another process (a bounded parse) from its records


@dataclass(frozen=True)
class IntentNode:
    """One node. ``kind`` is set on leaves only; ``kbs``, ``top_k`` and ``prompt`` matter on leaves only."""

    code: str
    name: str
    parent: str | None = None
    description: str = ""
    examples: tuple[str, ...] = ()
    kind: Kind | None = None
    kbs: tuple[str, ...] = ()
    top_k: int | None = None  # chunks in the prompt for this leaf; None: the retrieval setting
    prompt: str | None = None  # extra answer instructions (KB), or the reply's instructions (SYSTEM)
    position: int = 0  # order among siblings

    def with_parent(self, parent: str | None, position: int | None = None) -> IntentNode:
        return replace(self, parent=parent, position=self.position if position is None else position)


class IntentTree:
    """An immutable set of nodes with tree queries. Build any set of nodes; ``problems()`` says what is wrong."""

    def __init__(self, nodes: Iterable[IntentNode] = ()) -> None:
        self._nodes: dict[str, IntentNode] = {}
        self._duplicates: list[str] = []
        for node in nodes:
            if node.code in self._nodes:
                self._duplicates.append(node.code)
            self._nodes[node.code] = node
        self._children: dict[str | None, list[IntentNode]] = {}
        for node in self._nodes.values():
            self._children.setdefault(node.parent, []).append(node)
        for siblings in self._children.values():
            siblings.sort(key=lambda n: (n.position, n.name.lower(), n.code))

    # -- queries -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, code: object) -> bool:
        return code in self._nodes

    def get(self, code: str) -> IntentNode | None:
        return self._nodes.get(code)

    def nodes(self) -> list[IntentNode]:
        """Every node, parents before children, siblings in order."""
        return [node for _depth, node in self.walk()]

    def children(self, code: str | None) -> list[IntentNode]:
        """The children of ``code`` (None: the top-level nodes), in order."""
        return list(self._children.get(code, []))

    def is_leaf(self, code: str) -> bool:
        return not self._children.get(code)

    def walk(self) -> Iterator[tuple[int, IntentNode]]:
        """(depth, node), depth first from the top level. Nodes caught in a cycle are never reached."""
        stack = [(0, node) for node in reversed(self.children(None))]
        seen: set[str] = set()
        while stack:
            depth, node = stack.pop()
            if node.code in seen:
                continue
            seen.add(node.code)
            yield depth, node
            stack.extend((depth + 1, child) for child in reversed(self.children(node.code)))

    def leaves(self, kinds: Collection[Kind] = KINDS) -> list[IntentNode]:
        """The leaves (of the given kinds), in tree order."""
        return [n for n in self.nodes() if self.is_leaf(n.code) and n.kind in kinds]

    def path(self, code: str) -> list[IntentNode]:
        """The nodes from the top level down to ``code`` (stops at a cycle or a missing parent)."""
        chain: list[IntentNode] = []
        seen: set[str] = set()
        node = self._nodes.get(code)
        while node is not None and node.code not in seen:
            seen.add(node.code)
            chain.append(node)
            node = self._nodes.get(node.parent) if node.parent is not None else None
        return chain[::-1]

    def full_path(self, code: str) -> str:
        """'Products > Lumen V2 Pro > Specs': how the classifier and the UI name a leaf."""
        return " > ".join(n.name for n in self.path(code))

    def shown_kind(self, code: str) -> str:
        """The kind a node acts as: "group" when it has children or no kind, else its ``kind``."""
        node = self._nodes.get(code)
        if node is None or node.kind is None or not self.is_leaf(code):
            return GROUP
        return node.kind

    def parents_for(self, code: str | None) -> list[IntentNode]:
        """Where ``code`` may go (besides the top level): every node but itself and what is under it."""
        barred = {code, *(n.code for n in self.descendants(code))} if code is not None and code in self else set()
        return [node for node in self.nodes() if node.code not in barred]

    def descendants(self, code: str) -> list[IntentNode]:
        out: list[IntentNode] = []
        stack = list(self.children(code))
        while stack:
            node = stack.pop()
            if node.code in {n.code for n in out}:
                continue
            out.append(node)
            stack.extend(self.children(node.code))
        return out

    # -- edits (each returns a new tree; validate it before keeping it) -------------------------

    def with_node(self, node: IntentNode, replacing: str | None = None) -> IntentTree:
        """This tree with ``node`` added, or put in place of ``replacing`` (a rename re-parents its children)."""
        old = replacing or node.code
        nodes = []
        for existing in self._nodes.values():
            if existing.code == old:
                continue
            if existing.parent == old and node.code != old:
                existing = existing.with_parent(node.code)
            nodes.append(existing)
        before = self._nodes.get(old)
        if before is None or before.parent != node.parent:  # new here: it goes last among its siblings
            siblings = [n for n in self.children(node.parent) if n.code != old]
            node = replace(node, position=max((n.position for n in siblings), default=-1) + 1)
        else:
            node = replace(node, position=before.position)
        return IntentTree([*nodes, node])

    def leaf_made_group(self, node: IntentNode, replacing: str | None = None) -> IntentNode | None:
        """The leaf that saving ``node`` (in place of ``replacing``) puts a child under, which makes it a group;
        None when there is none. A node put under its own subtree makes a cycle instead, which validation
        refuses."""
        host = self._nodes.get(node.parent) if node.parent is not None else None
        if host is None or host.kind is None or not self.is_leaf(host.code):
            return None
        old = replacing or node.code
        if host.code in {old, *(n.code for n in self.descendants(old))}:
            return None
        return host

    def with_saved(self, node: IntentNode, replacing: str | None = None) -> IntentTree:
        """``with_node``, after the rule that a leaf receiving a child becomes a group: its kind, knowledge
        bases, top-k and prompt are cleared in the same edit."""
        tree: IntentTree = self
        host = self.leaf_made_group(node, replacing)
        if host is not None:
            tree = self.with_node(replace(host, kind=None, kbs=(), top_k=None, prompt=None), host.code)
        return tree.with_node(node, replacing)

    def without(self, code: str) -> IntentTree:
        """This tree without ``code`` and everything under it."""
        gone = {code, *(n.code for n in self.descendants(code))}
        return IntentTree(n for n in self._nodes.values() if n.code not in gone)

    # -- validation ----------------------------------------------------------------------------

    def problems(self, known_kbs: Collection[str] | None = None) -> list[str]:
        """Every reason this tree cannot be used, in English (``reasons``: as records). ``known_kbs``: the
        knowledge bases that exist (None skips that check)."""
        return [reason.english for reason in self.reasons(known_kbs)]

    def reasons(self, known_kbs: Collection[str] | None = None) -> list[Said]:
        """Every reason this tree cannot be used, as records of the catalogue (``ragapp.core.said_intents``)."""
        out = [Said("intent_tree.code_twice", {"code": code}) for code in dict.fromkeys(self._duplicates)]
        reached = {node.code for node in self.nodes()}
        for node in self._nodes.values():
            of = {"code": node.code}
            if not _CODE.match(node.code):
                out.append(Said("intent_tree.code_invalid", of))
            if not node.name.strip():
                out.append(Said("intent_tree.no_name", of))
            if node.parent is not None and node.parent not in self._nodes:
                out.append(Said("intent_tree.no_parent", {**of, "parent": node.parent}))
            elif node.code not in reached:
                out.append(Said("intent_tree.cycle", of))
            if not self.is_leaf(node.code):
                if node.kind is not None:
                    out.append(Said("intent_tree.group_kind", {**of, "kind": node.kind}))
                continue
            if node.kind is None:
                out.append(Said("intent_tree.leaf_kind", of))
            elif node.kind not in KINDS:
                out.append(Said("intent_tree.unknown_kind", {**of, "kind": node.kind}))
            elif node.kind == "KB":
                if not node.kbs:
                    out.append(Said("intent_tree.kb_none", of))
                elif known_kbs is not None:
                    missing = [kb for kb in node.kbs if kb not in known_kbs]
                    if missing:
                        values = {**of, "missing": ", ".join(missing), "known": ", ".join(sorted(known_kbs))}
                        out.append(
                            Said("intent_tree.kb_missing" if known_kbs else "intent_tree.kb_missing_none", values)
                        )
            elif node.kbs:
                out.append(Said("intent_tree.system_kbs", of))
            if node.top_k is not None and not 1 <= node.top_k <= MAX_TOP_K:
                out.append(Said("intent_tree.top_k_range", {**of, "top_k": node.top_k, "most": MAX_TOP_K}))
        return out

    def validated(self, known_kbs: Collection[str] | None = None) -> IntentTree:
        """This tree, or ``IntentTreeError`` with every problem."""
        reasons = self.reasons(known_kbs)
        if reasons:
            raise IntentTreeError(reasons)
        return self

    # -- the exchange format ---------------------------------------------------------------------

    def to_data(self) -> dict[str, Any]:
        """Nested plain data: what ``dump_tree`` writes and ``tree_from_data`` reads."""

        def node_data(node: IntentNode) -> dict[str, Any]:
            data: dict[str, Any] = {"code": node.code, "name": node.name}
            if node.description:
                data["description"] = node.description
            if node.examples:
                data["examples"] = list(node.examples)
            if node.kind is not None:
                data["kind"] = node.kind
            if node.kbs:
                data["knowledge_bases"] = list(node.kbs)
            if node.top_k is not None:
                data["top_k"] = node.top_k
            if node.prompt:
                data["prompt"] = node.prompt
            children = self.children(node.code)
            if children:
                data["children"] = [node_data(child) for child in children]
            return data

        return {"version": FORMAT_VERSION, "intents": [node_data(n) for n in self.children(None)]}


# -- reading and writing the exchange format ---------------------------------------------------

_FIELDS = {"code", "name", "description", "examples", "kind", "knowledge_bases", "top_k", "prompt", "children"}


def tree_from_data(data: object) -> IntentTree:
    """Build a tree from nested data ({"intents": [...]} or a bare list). Raises ``IntentTreeError`` listing
    every shape problem; run ``validated`` on the result for the tree rules."""
    problems: list[Said] = []
    nodes: list[IntentNode] = []
    items = data.get("intents") if isinstance(data, Mapping) else data
    if isinstance(data, Mapping) and "intents" not in data:
        raise IntentTreeError([Said("intent_tree.no_list")])
    if not isinstance(items, list):
        raise IntentTreeError([Said("intent_tree.not_a_list")])

    def visit(item: object, parent: str | None, position: int, where: str, depth: int = 1) -> None:
        if depth > MAX_DEPTH or len(nodes) >= MAX_NODES:  # a walk of bounded size, whatever the data
            deep = depth > MAX_DEPTH
            most = MAX_DEPTH if deep else MAX_NODES
            raise IntentTreeError([Said("intent_tree.too_deep" if deep else "intent_tree.too_many", {"most": most})])
        if not isinstance(item, Mapping):
            problems.append(Said("intent_tree.not_a_mapping", {"where": where}))
            return
        code = item.get("code")
        if not isinstance(code, str) or not code.strip():
            problems.append(Said("intent_tree.no_code", {"where": where}))
            return
        label = {"where": where, "code": code}
        unknown = sorted(set(item) - _FIELDS)
        if unknown:
            problems.append(Said("intent_tree.unknown_fields", {**label, "fields": ", ".join(map(str, unknown))}))
        name = item.get("name")
        if not isinstance(name, str):
            problems.append(Said("intent_tree.no_name_text", label))
            name = ""
        node = IntentNode(
            code=code.strip(),
            name=name.strip(),
            parent=parent,
            description=_text(item, "description", label, problems),
            examples=_texts(item, "examples", label, problems),
            kind=_kind(item, label, problems),
            kbs=_texts(item, "knowledge_bases", label, problems),
            top_k=_top_k(item, label, problems),
            prompt=_text(item, "prompt", label, problems) or None,
            position=position,
        )
        nodes.append(node)
        children = item.get("children", [])
        if not isinstance(children, list):
            problems.append(Said("intent_tree.children_list", label))
            return
        for index, child in enumerate(children):
            visit(child, node.code, index, f"{where} > {index + 1}", depth + 1)

    for index, item in enumerate(items):
        visit(item, None, index, str(index + 1))
    if problems:
        raise IntentTreeError(problems)
    return IntentTree(nodes)


MAX_DEPTH = 12  # levels of intents: the demo tree has 3
MAX_NODES = 5000
MAX_BRACKETS = 200  # "[" or "{" open at once: a real tree needs a few per level; YAML's scanner is quadratic in it


def _bracket_depth(text: str) -> int:
    """The most brackets open at once, quotes ignored (an over-count only refuses a file that is odd anyway)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
    return deepest


def _has_alias(text: str) -> bool:
    """Whether the YAML ``text`` uses an alias, read as a stream of events: linear, nothing expanded."""
    import yaml

    try:
        return any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return False  # the parse below reports the syntax error


def parse_tree(text: str, fmt: Format | None = None) -> IntentTree:
    """Parse YAML or JSON (JSON is tried first when ``fmt`` is None; YAML reads JSON too)."""
    import yaml

    if not text.strip():
        raise IntentTreeError([Said("intent_tree.file_empty")])
    if _bracket_depth(text) > MAX_BRACKETS:
        raise IntentTreeError([Said("intent_tree.file_deep", {"most": MAX_DEPTH})])
    try:
        if fmt != "json" and _has_alias(text):
            # An alias repeats a node: a few hundred bytes of nested aliases expand into billions of intents.
            raise IntentTreeError([Said("intent_tree.file_aliases")])
        data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    except RecursionError:
        raise IntentTreeError([Said("intent_tree.file_deep", {"most": MAX_DEPTH})]) from None
    except (ValueError, yaml.YAMLError) as exc:
        code = "intent_tree.file_invalid_json" if fmt == "json" else "intent_tree.file_invalid"
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise IntentTreeError([Said(code, {"line": first_line})]) from None
    return tree_from_data(data)


def dump_tree(tree: IntentTree, fmt: Format = "yaml") -> str:
    import yaml

    data = tree.to_data()
    if fmt == "json":
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return cast(str, yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100))


def _text(item: Mapping[str, Any], key: str, label: Label, problems: list[Said]) -> str:
    value = item.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        problems.append(Said("intent_tree.not_text", {**label, "key": key}))
        return ""
    return value.strip()


def _texts(item: Mapping[str, Any], key: str, label: Label, problems: list[Said]) -> tuple[str, ...]:
    value = item.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(Said("intent_tree.not_texts", {**label, "key": key}))
        return ()
    return tuple(v.strip() for v in value if v.strip())


def _kind(item: Mapping[str, Any], label: Label, problems: list[Said]) -> Kind | None:
    value = item.get("kind")
    if value is None:
        return None
    if not isinstance(value, str) or value.upper() not in KINDS:
        problems.append(Said("intent_tree.bad_kind", {**label, "kind": str(value)}))
        return None
    return cast(Kind, value.upper())


def _top_k(item: Mapping[str, Any], label: Label, problems: list[Said]) -> int | None:
    value = item.get("top_k")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        problems.append(Said("intent_tree.bad_top_k", label))
        return None
    return value
