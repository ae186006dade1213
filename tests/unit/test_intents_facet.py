"""The intents facet's edit rules, on a real engine: every caller (the Intents tab, a script, an API) gets them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragapp.engine.intent_edits import IntentDraft, import_format
from ragapp.engine.intents import Intents
from ragapp.router.tree import IntentNode, IntentTree, IntentTreeError, dump_tree

if TYPE_CHECKING:
    from tests.conftest import Rig

TREE = [
    IntentNode("products", "Products"),
    IntentNode("kettle", "Kettle K9", "products"),
    IntentNode("kettle.specs", "Specs", "kettle", kind="KB", kbs=("default",)),
    IntentNode(
        "toaster", "Toaster T2", "products", kind="KB", kbs=("default",), top_k=3, prompt="Mention the warranty."
    ),
    IntentNode("hello", "Greeting", kind="SYSTEM", position=1),
]


@pytest.fixture
def intents(make_engine: Callable[..., Rig]) -> Intents:
    intents = make_engine().engine.intents
    intents.import_tree(dump_tree(IntentTree(TREE)))
    return intents


def _refused(intents: Intents, edit: Callable[[], object]) -> list[str]:
    """Run an edit that must be refused; check it changed nothing and return its problems."""
    before = intents.export()
    with pytest.raises(IntentTreeError) as caught:
        edit()
    assert intents.export() == before
    return caught.value.problems


# -- drafts: form values to a node -----------------------------------------------------------------


def test_a_draft_is_trimmed_and_drops_what_its_kind_ignores() -> None:
    node = IntentDraft(
        " kettle.care ", "", " Care ", " How to. ", "Descale?\n\n  Clean?  ", "KB", [" a ", "b", "a", " "], 4.0, " "
    ).to_node()
    assert node == IntentNode("kettle.care", "Care", None, "How to.", ("Descale?", "Clean?"), "KB", ("a", "b"), 4)
    system = IntentDraft("hi", "products", "Hi", kind="SYSTEM", kbs=["a"], top_k=5, prompt=" Wave. ").to_node()
    assert (system.parent, system.kbs, system.top_k, system.prompt) == ("products", (), None, "Wave.")
    group = IntentDraft("g", name="G", examples=["x", " "], kind="group", kbs="a", top_k=5, prompt="p").to_node()
    assert (group.kind, group.kbs, group.top_k, group.prompt, group.examples) == (None, (), None, None, ("x",))
    for empty in (None, "", 0):  # a browser sends an empty number box as 0: the default
        assert IntentDraft("k", name="K", kind="KB", kbs="a", top_k=empty).to_node().top_k is None


@pytest.mark.parametrize(
    ("draft", "problem"),
    [
        (IntentDraft("  ", name="N", kind="KB"), "give the intent a code"),
        (IntentDraft("x", name="N", kind="LEAF"), "choose a kind"),
        (IntentDraft("x", name="N"), "choose a kind"),
        (IntentDraft("x", name="N", kind="KB", top_k=2.5), "whole number"),
        (IntentDraft("x", name="N", kind="KB", top_k=float("inf")), "whole number"),
        (IntentDraft("x", name="N", kind="KB", top_k="many"), "whole number"),
    ],
)
def test_a_draft_that_cannot_make_a_node_is_refused(draft: IntentDraft, problem: str) -> None:
    with pytest.raises(IntentTreeError) as caught:
        draft.to_node()
    assert any(problem in p for p in caught.value.problems), caught.value.problems


def test_saving_a_draft_checks_the_tree_rules_too(intents: Intents) -> None:
    problems = _refused(intents, lambda: intents.save(IntentDraft("new", name="New", kind="KB", kbs=["nowhere"])))
    assert any("do not exist: nowhere" in p for p in problems)
    saved = intents.save(IntentDraft("new", "products", "New", kind="KB", kbs=["default"]))
    assert saved.added and saved.tree.get("new") == intents.tree().get("new")


# -- codes -------------------------------------------------------------------------------------------


def test_adding_never_overwrites_an_intent(intents: Intents) -> None:
    node = IntentNode("toaster", "Other", kind="SYSTEM")
    problems = _refused(intents, lambda: intents.save(node))  # a node, not a draft: the rule still holds
    assert problems == ["the code 'toaster' is already used by Products > Toaster T2: choose another code"]


def test_a_rename_never_takes_another_intents_code(intents: Intents) -> None:
    node = IntentNode("kettle", "Toaster", "products", kind="KB", kbs=("default",))
    problems = _refused(intents, lambda: intents.save(node, replacing="toaster"))
    assert problems == ["the code 'kettle' is already used by Products > Kettle K9: choose another code"]
    saved = intents.save(IntentNode("toaster-t2", "Toaster", "products", kind="SYSTEM"), replacing="toaster")
    assert saved.renamed_from == "toaster" and not saved.added and "toaster" not in saved.tree
    same = intents.save(IntentNode("toaster-t2", "Toaster T2", "products", kind="SYSTEM"), replacing="toaster-t2")
    assert same.renamed_from is None


def test_an_edit_needs_the_intent_it_edits(intents: Intents) -> None:
    problems = _refused(intents, lambda: intents.save(IntentNode("gone", "Gone", kind="SYSTEM"), replacing="gone"))
    assert problems == ["there is no intent 'gone' to edit (was it deleted elsewhere?)"]


# -- groups ------------------------------------------------------------------------------------------


def test_a_leaf_that_receives_a_child_becomes_a_group_and_the_save_says_so(intents: Intents) -> None:
    saved = intents.save(IntentNode("toaster.specs", "Specs", "toaster", kind="SYSTEM"))
    toaster = saved.tree.get("toaster")
    assert toaster == IntentNode("toaster", "Toaster T2", "products", position=toaster.position)  # type: ignore[union-attr]
    assert saved.made_group == "toaster" and saved.tree.shown_kind("toaster") == "group"
    # A child added to a group, or a node moved under its own subtree (a cycle, refused), makes no group.
    assert intents.save(IntentNode("kettle.care", "Care", "kettle", kind="SYSTEM")).made_group is None
    assert intents.save(IntentNode("hello", "Greeting", "kettle", kind="SYSTEM"), replacing="hello").made_group is None
    problems = _refused(intents, lambda: intents.move("products", "kettle.specs"))
    assert any("cycle" in p for p in problems)
    assert intents.tree().leaf_made_group(IntentNode("products", "P", "kettle.specs"), "products") is None


def test_the_only_child_of_a_group_cannot_go_and_the_refusal_says_what_to_do(intents: Intents) -> None:
    problems = _refused(intents, lambda: intents.delete("kettle.specs"))
    assert any("needs a kind" in p for p in problems)
    assert problems[-1].endswith("add another intent under 'kettle' first, or delete 'kettle' itself")
    deleted = intents.delete("kettle")
    assert (deleted.code, deleted.path, deleted.count) == ("kettle", "Products > Kettle K9", 2)
    assert _refused(intents, lambda: intents.delete("kettle")) == [
        "there is no intent 'kettle' to delete (was it deleted elsewhere?)"
    ]


def test_a_node_is_offered_every_parent_but_itself_and_its_subtree(intents: Intents) -> None:
    tree = intents.tree()
    assert [n.code for n in tree.parents_for("kettle")] == ["products", "toaster", "hello"]
    assert [n.code for n in tree.parents_for(None)] == [n.code for n in tree.nodes()]
    assert [tree.shown_kind(code) for code in ("products", "kettle.specs", "hello")] == ["group", "KB", "SYSTEM"]


def test_kb_leaves_may_name_the_bases_that_hold_documents_and_default(
    intents: Intents, make_engine: Callable[..., Rig], tmp_path: Path
) -> None:
    assert intents.knowledge_bases(["old", "default"]) == ["default", "old"]
    rig = make_engine("docs")
    doc = tmp_path / "manual.md"
    doc.write_text("# Kettle\n\nThe kettle holds 1.7 litres.\n", "utf-8")
    rig.engine.library.ingest([(doc, doc.name)], kb="manuals")
    assert rig.engine.intents.knowledge_bases() == ["manuals", "default"]


# -- files -------------------------------------------------------------------------------------------


def test_only_yaml_and_json_files_are_imported(intents: Intents, tmp_path: Path) -> None:
    assert [import_format(n) for n in ("a.yaml", "b.YML", "c.json")] == ["yaml", "yaml", "json"]
    text = tmp_path / "tree.txt"
    text.write_text(intents.export(), "utf-8")
    assert _refused(intents, lambda: intents.import_file(text)) == ["use a .yaml, .yml or .json file, not 'tree.txt'"]
    binary = tmp_path / "tree.yaml"
    binary.write_bytes(b"\xff\xfe\x00bad")
    assert "could not be read as UTF-8" in _refused(intents, lambda: intents.import_file(binary))[0]
    good = tmp_path / "upload-1234"  # an upload's file on disk need not carry its name
    good.write_text('{"intents": [{"code": "only", "name": "Only", "kind": "SYSTEM"}]}', "utf-8")
    assert [n.code for n in intents.import_file(good, "small.json").nodes()] == ["only"]


def test_a_blank_question_is_refused_before_any_model_call(intents: Intents) -> None:
    from ragapp.core.errors import RagAppError

    with pytest.raises(RagAppError, match="question is empty"):
        intents.test("  \n ")
