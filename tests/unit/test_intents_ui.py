"""The Intents tab's handlers, on a real engine with the scripted LLM: no browser.

Each handler returns what its outputs show (values, or ``gr.update`` dicts); the engine's tree is the truth.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragapp.core.errors import LLMError
from ragapp.ui.intents_handlers import _INDENT, NEW, NEW_LABEL, TOP, IntentHandlers
from tests.text import shown

if TYPE_CHECKING:
    from tests.conftest import Rig

TREE = """
version: 1
intents:
  - code: products
    name: Products
    description: Our appliances.
    children:
      - code: kettle
        name: Kettle K9
        children:
          - code: kettle.specs
            name: Specs
            kind: KB
            knowledge_bases: [default]
            description: Capacity, power and boiling time of the kettle.
            examples:
              - How much water does it hold?
              - What is its power?
            top_k: 3
      - code: toaster
        name: Toaster T2
        kind: KB
        knowledge_bases: [default]
  - code: hello
    name: Greeting
    kind: SYSTEM
    prompt: Say hello.
"""
LEAVES = ["kettle.specs", "toaster", "hello"]


@pytest.fixture
def rig(make_engine: Callable[..., Rig]) -> Rig:
    rig = make_engine()
    rig.engine.intents.import_tree(TREE)
    return rig


@pytest.fixture
def h(rig: Rig) -> IntentHandlers:
    return IntentHandlers(rig.engine)


def _codes(h: IntentHandlers) -> list[str]:
    return [node.code for node in h.engine.intents.tree().nodes()]


def _form(
    code: str,
    parent: str = TOP,
    name: str = "A name",
    *,
    description: str = "",
    examples: str = "",
    kind: str = "KB",
    kbs: list[str] | None = None,
    top_k: float | None = None,
    prompt: str = "",
) -> list[Any]:
    """The editor's values, in the order ``save`` takes them after the picked code."""
    return [code, parent, name, description, examples, kind, ["default"] if kbs is None else kbs, top_k, prompt]


# -- the tree view ---------------------------------------------------------------------------------


def test_tree_rows_indent_each_node_by_depth_and_describe_it(h: IntentHandlers) -> None:
    rows = h.tree_rows()
    assert [row[1] for row in rows] == ["products", "kettle", "kettle.specs", "toaster", "hello"]
    depths = [len(row[0]) - len(row[0].lstrip(_INDENT[0])) for row in rows]
    assert depths == [0, 2, 4, 2, 0]  # two em spaces a level
    assert rows[2] == [f"{_INDENT * 2}📄 Specs", "kettle.specs", "KB", "default", 2, "3"]
    assert shown(rows[0][2]) == "group" and shown(rows[0][2], "zh") == "分组"
    assert rows[0][3:] == ["", 0, ""]
    assert rows[3][2:] == ["KB", "default", 0, "—"]  # no top-k of its own
    assert rows[4] == ["💬 Greeting", "hello", "SYSTEM", "", 0, ""]
    assert "5 intents" in h.summary() and "2 KB leaves" in h.summary()


def test_an_empty_tree_has_no_rows_and_says_so(make_engine: Callable[..., Rig]) -> None:
    h = IntentHandlers(make_engine().engine)
    assert h.tree_rows() == []
    assert "empty" in h.summary()
    assert h.pick_choices() == [(NEW_LABEL, NEW)]


def test_pickers_name_nodes_by_full_path_and_code(h: IntentHandlers) -> None:
    assert h.pick_choices()[:3] == [
        (NEW_LABEL, NEW),
        ("Products (products)", "products"),
        ("Products > Kettle K9 (kettle)", "kettle"),
    ]
    # A node cannot move under itself or what is under it: those are not offered as its parent.
    offered = [value for _label, value in h.parent_choices("kettle")]
    assert offered == [TOP, "products", "toaster", "hello"]


def test_picking_a_node_fills_the_form(h: IntentHandlers) -> None:
    code, parent, name, description, examples, kind, kbs, top_k, prompt, message = h.pick("kettle.specs")
    assert (code, name, kind) == ("kettle.specs", "Specs", "KB")
    assert parent["value"] == "kettle"
    assert description == "Capacity, power and boiling time of the kettle."
    assert examples == "How much water does it hold?\nWhat is its power?"
    assert kbs["value"] == ["default"] and kbs["visible"] is True
    assert top_k["value"] == 3
    assert prompt["value"] == ""
    assert "Products > Kettle K9 > Specs" in message

    *_, kind, kbs, top_k, prompt, message = h.pick("kettle")
    assert kind == "group" and kbs["visible"] is False and prompt["visible"] is False
    assert "also deletes the 1 intent(s) under it" in message

    *_, kind, kbs, top_k, prompt, _message = h.pick("hello")
    assert kind == "SYSTEM" and kbs["visible"] is False and top_k["visible"] is False
    assert prompt["value"] == "Say hello." and prompt["visible"] is True
    assert prompt["label"].key == "ragapp.intents.prompt_system"

    code, parent, name, *_rest = h.pick(NEW)
    assert (code, name, parent["value"]) == ("", "", TOP)


# -- editing ---------------------------------------------------------------------------------------


def test_save_adds_a_new_leaf(h: IntentHandlers) -> None:
    form = _form("kettle.care", "kettle", " Care ", examples="How to descale?\n\n  Cleaning?  \n", top_k=4)
    message, summary, rows, pick, parent = h.save(NEW, *form)
    node = h.engine.intents.tree().get("kettle.care")
    assert node is not None
    assert (node.parent, node.name, node.kind, node.kbs, node.top_k) == ("kettle", "Care", "KB", ("default",), 4)
    assert node.examples == ("How to descale?", "Cleaning?")
    assert "Added" in message and "Products > Kettle K9 > Care" in message
    assert "kettle.care" in [row[1] for row in rows] and "6 intents" in summary
    assert pick["value"] == "kettle.care"
    assert ("Products > Kettle K9 > Care (kettle.care)", "kettle.care") in pick["choices"]
    assert parent["value"] == "kettle"


def test_save_edits_renames_and_moves_the_picked_node(h: IntentHandlers) -> None:
    message, *_ = h.save("toaster", *_form("toaster-t2", "products", "Toaster T2 · 烤面包机", top_k=6))
    tree = h.engine.intents.tree()
    assert "toaster" not in tree and tree.get("toaster-t2").top_k == 6  # type: ignore[union-attr]
    h.save("toaster-t2", *_form("toaster-t2", "products", "Toaster T2", top_k=0))  # what an empty box sends
    assert h.engine.intents.tree().get("toaster-t2").top_k is None  # type: ignore[union-attr]
    assert "renamed from `toaster`" in message
    assert _codes(h) == ["products", "kettle", "kettle.specs", "toaster-t2", "hello"]  # kept its place

    h.save("hello", *_form("hello", "products", "Greeting", kind="SYSTEM", kbs=["default"], prompt="Say hi."))
    tree = h.engine.intents.tree()
    hello = tree.get("hello")
    assert hello is not None and hello.parent == "products" and hello.prompt == "Say hi."
    assert hello.kbs == ()  # knowledge bases are dropped for a SYSTEM leaf, not refused
    assert tree.full_path("hello") == "Products > Greeting"


def test_saving_a_node_under_a_leaf_makes_that_leaf_a_group(h: IntentHandlers) -> None:
    message, _summary, rows, _pick, _parent = h.save(NEW, *_form("toaster.specs", "toaster", "Specs"))
    tree = h.engine.intents.tree()
    toaster = tree.get("toaster")
    assert toaster is not None and toaster.kind is None and toaster.kbs == ()
    assert tree.get("toaster.specs").parent == "toaster"  # type: ignore[union-attr]
    assert "now a group" in message
    assert [shown(row[2]) for row in rows if row[1] == "toaster"] == ["group"]


@pytest.mark.parametrize(
    ("picked", "form", "problem"),
    [
        (NEW, _form("Bad Code"), "is not valid"),
        (NEW, _form("toaster"), "already used by Products > Toaster T2"),  # adding never overwrites
        ("toaster", _form("kettle"), "already used by Products > Kettle K9"),  # nor does a rename
        (NEW, _form("new.leaf", kbs=[]), "needs at least one knowledge base"),
        (NEW, _form("new.leaf", kbs=["nowhere"]), "do not exist: nowhere"),
        (NEW, _form("new.leaf", top_k=99), "top-k 99"),
        (NEW, _form("new.leaf", top_k=2.5), "whole number"),
        (NEW, _form("new.leaf", top_k=float("inf")), "whole number"),
        (NEW, _form("new.leaf", top_k=-1), "top-k -1"),
        (NEW, _form("new.leaf", name="  "), "needs a name"),
        (NEW, _form("new.group", kind="group"), "needs a kind"),
        ("kettle", _form("kettle", "products", "Kettle K9", kind="KB"), "it is a group"),
        ("products", _form("products", "kettle", "Products", kind="group"), "cycle"),
        ("gone", _form("gone"), "no intent 'gone' to edit"),
    ],
)
def test_a_refused_edit_changes_nothing_and_says_why(
    h: IntentHandlers, picked: str, form: list[Any], problem: str
) -> None:
    before = h.engine.intents.export()
    with pytest.warns(UserWarning, match="Not saved"):  # the toast, outside a running app
        message, summary, rows, pick, parent = h.save(picked, *form)
    assert message.startswith("❌") and "nothing was changed" in message
    assert problem in message
    assert summary == rows == pick == parent == {"__type__": "update"}  # the view stays as it was
    assert h.engine.intents.export() == before


def test_delete_removes_a_group_with_everything_under_it(h: IntentHandlers) -> None:
    h.save(NEW, *_form("kettle.care", "kettle", "Care"))
    message, summary, rows, pick, code, parent, name, *_rest = h.delete("kettle")
    assert _codes(h) == ["products", "toaster", "hello"]
    assert "Products > Kettle K9" in message and "the 2 intent(s) under it (3 in all)" in message
    assert [row[1] for row in rows] == ["products", "toaster", "hello"] and "3 intents" in summary
    assert pick["value"] == NEW and "kettle" not in [value for _label, value in pick["choices"]]
    assert (code, name, parent["value"]) == ("", "", TOP)  # the form is back to "new intent"

    message, *_ = h.delete("hello")
    assert "Greeting" in message and "under it" not in message
    assert "hello" not in h.engine.intents.tree()


def test_deleting_the_only_child_of_a_group_is_refused_with_a_way_out(h: IntentHandlers) -> None:
    before = h.engine.intents.export()
    with pytest.warns(UserWarning, match="Nothing deleted"):
        message, *rest = h.delete("kettle.specs")
    assert "needs a kind" in message and "delete 'kettle' itself" in message
    assert len(rest) == 12 and all(update == {"__type__": "update"} for update in rest)
    assert h.engine.intents.export() == before
    with pytest.warns(UserWarning):
        message, *_ = h.delete(NEW)
    assert "pick an intent" in message


# -- import and export -----------------------------------------------------------------------------


BAD_FILE = """
version: 1
intents:
  - code: one
    name: One
    kind: BOGUS
    colour: red
  - name: No code here
  - code: two
    name: Two
    kind: KB
    top_k: lots
"""


@pytest.mark.parametrize(
    ("name", "text", "problems"),
    [
        (
            "bad.yaml",
            BAD_FILE,
            ["'kind' must be KB or SYSTEM", "unknown field(s): colour", "needs a 'code'", "'top_k'"],
        ),
        ("broken.yml", "intents: [unclosed", ["not valid YAML or JSON"]),
        ("rules.json", '{"intents": [{"code": "a", "name": "A", "kind": "KB"}]}', ["needs at least one knowledge"]),
        ("intents.txt", "whatever", ["use a .yaml, .yml or .json file"]),
    ],
)
def test_importing_a_bad_file_changes_nothing_and_lists_every_problem(
    h: IntentHandlers, tmp_path: Path, name: str, text: str, problems: list[str]
) -> None:
    before = h.engine.intents.export()
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.warns(UserWarning, match="Not imported"):
        message, *rest = h.import_file(str(path))
    for problem in problems:
        assert problem in message
    assert len(rest) == 12 and all(update == {"__type__": "update"} for update in rest)
    assert h.engine.intents.export() == before


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_then_import_gives_back_the_same_tree(
    h: IntentHandlers, make_engine: Callable[..., Rig], fmt: str
) -> None:
    h.save(NEW, *_form("kettle.care", "kettle", "Care · 保养", examples="怎么除垢？", prompt="Be brief."))
    path, message = h.export_yaml() if fmt == "yaml" else h.export_json()
    assert Path(path).name == f"intents.{fmt}" and f"`intents.{fmt}`" in message
    assert Path(path).read_text("utf-8") == h.engine.intents.export(fmt)  # type: ignore[arg-type]

    other = IntentHandlers(make_engine("other").engine)
    message, summary, rows, pick, *_form_values = other.import_file(path)
    assert "Imported" in message and "6 intents" in message and "4 leaves" in message
    assert rows == h.tree_rows() and summary == h.summary()
    assert other.engine.intents.export() == h.engine.intents.export()
    assert pick["value"] == NEW and pick["choices"] == h.pick_choices()


def test_import_replaces_the_whole_tree(h: IntentHandlers, tmp_path: Path) -> None:
    path = tmp_path / "small.json"
    path.write_text('{"intents": [{"code": "only", "name": "Only", "kind": "SYSTEM"}]}', "utf-8")
    h.import_file(str(path))
    assert _codes(h) == ["only"]


# -- the test box ----------------------------------------------------------------------------------


def test_the_test_box_lists_every_leaf_and_explains_a_route(h: IntentHandlers, rig: Rig) -> None:
    reply = '{"matches": [{"id": "kettle.specs", "score": 0.9}, {"id": "kettle.colour", "score": 0.8}]}'
    rig.llm.enqueue(reply)
    rig.llm.enqueue(reply)  # the engine's own test below, for the calibrated score
    rows, decision = h.test("  How much water does the kettle hold?  ")
    decision = shown(decision)  # as an English page shows it
    assert rows == [
        ["Products > Kettle K9 > Specs", "kettle.specs", "KB", 0.9],
        ["Products > Toaster T2", "toaster", "KB", 0.0],
        ["Greeting", "hello", "SYSTEM", 0.0],
    ]
    assert "### ➡️ Route\n" in decision
    # The chosen leaf shows its calibrated score (the probability that it is right), not the model's 0.9.
    fit = rig.engine.intents.test("How much water does the kettle hold?").fit
    assert fit is not None and fit.code == "kettle.specs" and fit.features.model == 0.9
    assert f"Products > Kettle K9 > Specs (`kettle.specs`) — {fit.probability:.2f} · KB: default" in decision
    assert f"**Fit:** {fit.probability:.2f}, the probability that the first intent is right" in decision
    assert "**Reason:** routed to" in decision
    assert "Ignored ids" in decision and "`kettle.colour`" in decision
    assert "Model time:** " in decision and "Model error" not in decision
    assert rig.llm.calls[-1][-1].content == "Message: How much water does the kettle hold?"


def test_the_test_box_shows_a_clarification_a_system_reply_and_a_fallback(
    h: IntentHandlers, rig: Rig, tmp_path: Path
) -> None:
    # The app asks back only about what the documents hold: give it a document on the appliances' power.
    doc = tmp_path / "appliances.md"
    doc.write_text("# Power\n\nThe Kettle K9 uses 2200 W of power. The Toaster T2 uses 900 W of power.\n", "utf-8")
    rig.engine.library.ingest([(doc, doc.name)])
    rig.llm.enqueue('{"matches": [{"id": "toaster", "score": 0.8}, {"id": "kettle.specs", "score": 0.75}]}')
    rows, decision = h.test("How much power does it use?")
    assert [row[1] for row in rows] == ["toaster", "kettle.specs", "hello"]
    assert "Ask back" in decision and "Offered choices" in decision and "`kettle.specs`" in decision

    rig.llm.enqueue('{"matches": [{"id": "hello", "score": 1.0}]}')
    rows, decision = h.test("hi!")
    assert rows[0] == ["Greeting", "hello", "SYSTEM", 1.0]
    assert "Reply directly" in shown(decision) and "直接回复" in shown(decision, "zh") and "`hello`" in decision

    rig.llm.enqueue(LLMError("the model server is unreachable"))
    rows, decision = h.test("anything")
    assert sorted(row[1] for row in rows) == sorted(LEAVES) and {row[3] for row in rows} == {0.0}
    assert "Fall back" in decision and "Model error:** the model server is unreachable" in shown(decision)


def test_the_test_box_needs_a_question_and_a_tree(h: IntentHandlers, rig: Rig, make_engine: Callable[..., Rig]) -> None:
    rows, decision = h.test("   ")
    assert rows == [] and "Type a question" in decision
    assert rig.llm.calls == []  # no model call for an empty question

    rows, decision = IntentHandlers(make_engine("empty").engine).test("hello?")
    assert rows == [] and "Fall back" in decision and "no leaves" in decision


def test_kind_change_shows_the_fields_that_matter(h: IntentHandlers) -> None:
    kbs, top_k, prompt = h.kind_changed("KB")
    assert kbs["visible"] and top_k["visible"] and prompt["visible"]
    kbs, top_k, prompt = h.kind_changed("SYSTEM")
    assert not kbs["visible"] and not top_k["visible"] and prompt["visible"]
    kbs, top_k, prompt = h.kind_changed("group")
    assert not kbs["visible"] and not top_k["visible"] and not prompt["visible"]


def test_refresh_gives_fresh_choices(h: IntentHandlers) -> None:
    summary, rows, pick, parent, kbs = h.refresh()
    assert rows == h.tree_rows() and summary == h.summary()
    assert pick == {"__type__": "update", "choices": h.pick_choices()}
    assert parent == {"__type__": "update", "choices": h.parent_choices()}
    assert kbs == {"__type__": "update", "choices": ["default"]}  # no documents yet: just the default base
