"""Hostile intent-tree files: an alias bomb, a tree nested past the limit, deep JSON, too many intents. Each is
refused with a message saying why, read in a child process held to 60 s and 2 GB (``tests/hostile/bounded.py``:
an alias bomb expanded would take far more), and nothing is imported."""

from __future__ import annotations

import json

import pytest

from ragapp.router.tree import MAX_DEPTH, MAX_NODES, IntentTreeError, parse_tree
from tests.hostile.bounded import bounded

ALIAS_BOMB = """
a: &a [{code: x, name: x}, {code: x, name: x}, {code: x, name: x}, {code: x, name: x}, {code: x, name: x}]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
intents: [{code: root, name: root, children: *g}]
"""


def _nested(depth: int) -> dict[str, object]:
    node: dict[str, object] = {"code": f"n{depth}", "name": f"level {depth}"}
    for level in range(depth - 1, 0, -1):
        node = {"code": f"n{level}", "name": f"level {level}", "children": [node]}
    return {"intents": [node]}


def _refused(text: str, fmt: str | None, match: str) -> None:
    with pytest.raises(IntentTreeError) as caught:
        bounded(parse_tree, text, fmt)
    assert match in " ".join(caught.value.problems)


def test_an_alias_bomb_is_refused_without_being_expanded() -> None:
    _refused(ALIAS_BOMB, "yaml", "aliases")
    _refused(ALIAS_BOMB, None, "aliases")


def test_a_tree_nested_past_the_limit_is_refused_and_one_at_the_limit_is_read() -> None:
    assert len(parse_tree(json.dumps(_nested(MAX_DEPTH)), "json").nodes()) == MAX_DEPTH
    _refused(json.dumps(_nested(MAX_DEPTH + 1)), "json", f"deeper than {MAX_DEPTH} levels")


def test_data_nested_too_deep_for_the_parser_is_a_clear_refusal() -> None:
    _refused("[" * 100_000 + "]" * 100_000, "json", "nested too deeply")
    _refused("[" * 100_000 + "]" * 100_000, "yaml", "nested too deeply")


def test_too_many_intents_are_refused() -> None:
    flat = {"intents": [{"code": f"c{i}", "name": f"n{i}"} for i in range(MAX_NODES + 1)]}
    _refused(json.dumps(flat), "json", f"over {MAX_NODES} intents")
