"""The Chat's document filter and the Knowledge tab's metadata and tags, through their handlers over a real engine
(real stores and embedder; scripted model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from ragapp.core.types import FileOrigin
from ragapp.ui.doc_about import TagHandlers
from ragapp.ui.handlers import Handlers, filter_of
from tests.text import shown

pytestmark = pytest.mark.integration

KETTLE = "# Orion Kettle\n\nThe Orion kettle boils 1.7 litres of water in 3 minutes.\n"
LAMP = "# Lumen Lamp\n\nThe Lumen lamp runs 14 hours on one charge of its battery.\n"


@pytest.fixture
def rig(make_engine: Callable[..., Any], tmp_path: Path) -> Any:
    rig = make_engine()
    for name, text, origin in (("kettle.md", KETTLE, None), ("lamp.md", LAMP, FileOrigin("shop", "lights/lamp.md"))):
        path = tmp_path / name
        path.write_text(text, "utf-8")
        item: Any = (path, name) if origin is None else (path, name, origin)
        (result,) = rig.engine.library.ingest([item])
        assert result.status == "added"
    return rig


def doc(rig: Any, name: str) -> str:
    return next(d.doc_id for d in rig.engine.library.documents() if d.name == name)


def test_tags_are_edited_and_shown_in_the_document_view(rig: Any) -> None:
    tags = TagHandlers(rig.engine)
    line, text = tags.save(doc(rig, "lamp.md"), "Lighting，battery powered, lighting")
    assert text == "battery powered, lighting"  # as stored: cleaned, each once, in order
    assert "Source: shop" in shown(line).replace("`", "") and "Path: lights/lamp.md" in shown(line).replace("`", "")
    assert "Tags: battery powered, lighting" in shown(line)
    with pytest.raises(gr.Error, match="character"):
        tags.save(doc(rig, "lamp.md"), "a;b")
    with pytest.raises(gr.Error):
        tags.save(None, "x")
    assert "Tags: none" in shown(tags.about(doc(rig, "kettle.md"))[0])
    assert Handlers(rig.engine).tag_names() == ["battery powered", "lighting"]


def test_the_chat_filter_keeps_the_answer_to_the_documents_it_admits(rig: Any) -> None:
    TagHandlers(rig.engine).save(doc(rig, "lamp.md"), "lighting")
    # A question of two parts is written part by part (``AnswerWriter``): one model call each.
    rig.llm.enqueue("It runs 14 hours [1].", "It runs 14 hours [1].")
    question = "How long does the battery last and how fast does the kettle boil?"
    out = None
    for out in Handlers(rig.engine).respond(question, [], None, None, "workflow", None, ["lighting"], "", []):  # noqa: B007
        pass
    assert out is not None
    prompts = [t.content for call in rig.llm.calls for t in call]
    assert all("1.7 litres" not in p for p in prompts)  # the kettle never reached a prompt
    assert any("14 hours" in p for p in prompts)


def test_a_bad_filter_is_said_and_an_empty_one_is_none() -> None:
    assert filter_of([], " ", []) is None
    assert filter_of(None, "docs/", ["pdf"]) is not None
    with pytest.raises(gr.Error, match="file type"):
        filter_of([], "", ["p d f"])


def test_the_page_has_the_filter_and_the_tag_editor(rig: Any) -> None:
    from ragapp.ui.layout import build_ui

    TagHandlers(rig.engine).save(doc(rig, "lamp.md"), "lighting")
    page = build_ui(rig.engine)
    found = {getattr(b, "elem_id", None): b for b in page.blocks.values()}
    assert {"chat-filter-tags", "chat-filter-path", "chat-filter-types", "doc-about", "doc-tags"} <= set(found)
    assert Handlers(rig.engine).tag_choices()["choices"] == ["lighting"]  # what the page's load offers
    assert ("pdf", "pdf") in found["chat-filter-types"].choices
