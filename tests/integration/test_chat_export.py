"""Chats exported from a real engine (real stores and retrieval, scripted model): a chat kept by the chat's own
handlers exports with its citations (the PDF's name and page) as Markdown, JSON and in the zip, an agent-mode
chat with its steps; only ever the owner's. Over HTTP (the app served, API keys): a user's browser chats are
theirs to list and export, another user's id is not found, the file names survive Chinese titles."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote

import gradio as gr
import pytest

from ragapp.ui.chat_exports import NO_CHAT_OPEN, NO_CHATS, NOT_FOUND, ChatExports
from ragapp.ui.chats import ChatHistory
from ragapp.ui.handlers import Handlers
from ragapp.ui.state import Session
from tests.integration.api_helpers import KETTLE, Served

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).parents[1] / "fixtures"
QUESTION = "What does page two talk about?"
ANSWER = "Page two talks about bananas [1]."


@pytest.fixture
def rig(make_engine: Callable[..., Any], tmp_path: Path) -> Any:
    rig = make_engine()
    path = tmp_path / "fruit.pdf"
    shutil.copy(FIXTURES / "sample.pdf", path)  # page 1: apples, page 2: bananas
    (result,) = rig.engine.library.ingest([(path, path.name)])
    assert result.status == "added", result.message
    return rig


def _chat(rig: Any, owner: str, question: str, *replies: str, mode: str = "workflow", request: Any = None) -> str:
    """A question answered and kept as the chat's handlers do it; returns the conversation's id."""
    rig.llm.enqueue(*replies)
    out = None
    for out in Handlers(rig.engine).respond(question, [], None, None, mode, owner, request=request):  # noqa: B007
        pass
    assert out is not None
    _, kept, _ = ChatHistory(rig.engine).persist(out[2], owner, request)
    assert kept
    return str(kept)


def test_an_export_holds_the_conversations_citations_with_document_and_page(rig: Any) -> None:
    kept = _chat(rig, rig.engine.signer.sign("browser:one"), QUESTION, ANSWER)
    conversations = rig.engine.conversations

    md = conversations.export("browser:one", kept, "markdown")
    assert (
        md is not None
        and md.media_type.startswith("text/markdown")
        and md.name.endswith("-What-does-page-two-talk-about.md")
    )
    text = md.data.decode("utf-8")
    assert "## Q: What does page two talk about?" in text and ANSWER in text
    assert "- [1] **fruit.pdf**, page 2" in text
    assert "Page two talks about bananas." in text.split("- [1] **fruit.pdf**, page 2", 1)[1]  # the quote

    js = conversations.export("browser:one", kept, "json")
    assert js is not None and js.media_type == "application/json" and js.name.endswith(".json")
    body = json.loads(js.data)
    assert (body["format"], body["version"], body["id"]) == ("ragapp.conversation", 1, kept)
    (exchange,) = body["exchanges"]
    assert exchange["answer"] == ANSWER and exchange["mode"] == "workflow"
    assert [(c["number"], c["document"], c["page"]) for c in exchange["citations"]] == [(1, "fruit.pdf", 2)]
    assert "bananas" in exchange["citations"][0]["passage"]


def test_an_agent_chat_exports_with_its_steps(rig: Any) -> None:
    kept = _chat(
        rig, rig.engine.signer.sign("browser:one"), QUESTION,
        '{"thought": "find it", "tool": "search_knowledge", "arguments": {"query": "page two"}}',
        '{"thought": "enough", "answer": true}',
        ANSWER,
        mode="agent",
    )  # fmt: skip
    text = rig.engine.conversations.export("browser:one", kept, "markdown").data.decode("utf-8")
    assert '*Agent steps:*\n\n1. `search_knowledge(query="page two", top_k=5, ' in text
    assert "- [1] **fruit.pdf**, page 2" in text
    (exchange,) = json.loads(rig.engine.conversations.export("browser:one", kept, "json").data)["exchanges"]
    assert exchange["mode"] == "agent"
    assert [(s["tool"], s["status"], s["arguments"]["query"]) for s in exchange["agent_steps"]] == [
        ("search_knowledge", "finished", "page two")
    ]
    assert exchange["citations"][0]["page"] == 2


def test_only_the_owner_exports_a_chat_and_the_zip_holds_all_theirs(rig: Any) -> None:
    one, two = rig.engine.signer.sign("browser:one"), rig.engine.signer.sign("browser:two")
    first = _chat(rig, one, QUESTION, ANSWER)
    second = _chat(rig, one, QUESTION, ANSWER)  # the same title, the same day
    theirs = _chat(rig, two, "What does page one talk about?", "Page one talks about apples [1].")
    conversations = rig.engine.conversations
    assert conversations.export("browser:two", first) is None  # not found: no hint that it exists
    assert conversations.export("browser:one", theirs) is None
    assert conversations.export("browser:one", "no-such-id") is None

    made = conversations.export_all("browser:one")
    assert made.count == 2 and made.media_type == "application/zip"
    with zipfile.ZipFile(io.BytesIO(made.data)) as zipped:
        index = json.loads(zipped.read("index.json"))
        assert sorted(c["id"] for c in index["conversations"]) == sorted([first, second])
        files = [c["markdown"] for c in index["conversations"]] + [c["json"] for c in index["conversations"]]
        assert len(set(files)) == 4 and sorted([*files, "index.json", "index.md"]) == sorted(zipped.namelist())
        for listed in index["conversations"]:
            assert "- [1] **fruit.pdf**, page 2" in zipped.read(listed["markdown"]).decode("utf-8")
        assert "apples" not in "".join(zipped.read(n).decode("utf-8") for n in zipped.namelist())


def test_the_sidebar_exports_the_open_chat_and_all_chats(rig: Any) -> None:
    owner = rig.engine.signer.sign("browser:one")
    exports = ChatExports(rig.engine)
    with pytest.raises(gr.Error, match="no saved chat to export"):
        exports.export(None, Session(), "markdown", owner)
    with pytest.raises(gr.Error, match="no saved chats yet"):
        exports.export_all(owner)
    assert "no saved chat" in NO_CHAT_OPEN and "还没有" in NO_CHATS  # both languages

    kept = _chat(rig, owner, QUESTION, ANSWER)
    update = exports.export(None, Session(conversation_id=kept), "json", owner)  # the open chat
    assert update["visible"] is True
    path = Path(update["value"])
    assert json.loads(path.read_text("utf-8"))["exchanges"][0]["citations"][0]["page"] == 2
    update = exports.export(kept, None, "markdown", owner)  # the one picked in the list
    assert "- [1] **fruit.pdf**, page 2" in Path(update["value"]).read_text("utf-8")
    zipped = Path(exports.export_all(owner)["value"])
    assert zipped.suffix == ".zip" and zipfile.is_zipfile(zipped)
    assert len({Path(update["value"]).parent, path.parent, zipped.parent}) == 3  # a folder each

    with pytest.raises(gr.Error) as refused:  # another browser naming this chat
        exports.export(kept, None, "markdown", rig.engine.signer.sign("browser:two"))
    assert refused.value.message == NOT_FOUND


def _user(name: str) -> Any:
    """What Gradio hands a handler for a signed-in user (the chat's owner comes from it)."""
    return SimpleNamespace(username=name, session_hash="s")


def test_over_http_a_user_exports_their_browser_chats_and_nobody_elses(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"kettle.md": KETTLE}, accounts=True)
    rig = served.rig
    kept = _chat(rig, "", "How long does the Orion Kettle K9 take?", "3 minutes [1].", request=_user("rita"))
    assert rig.engine.conversations.rename("user:rita", kept, "水壶 烧水要多久？/..")

    with served.client("rita") as rita:
        listed = rita.get("/v1/conversations")
        assert listed.status_code == 200
        assert [(c["id"], c["title"]) for c in listed.json()] == [(kept, "水壶 烧水要多久？/..")]

        md = rita.get(f"/v1/conversations/{kept}/export")  # Markdown unless asked
        assert md.status_code == 200 and md.headers["content-type"] == "text/markdown; charset=utf-8"
        disposition = md.headers["content-disposition"]
        assert disposition.startswith('attachment; filename="') and "filename*=UTF-8''" in disposition
        assert unquote(disposition.split("filename*=UTF-8''")[1]).endswith("-水壶-烧水要多久.md")
        assert "- [1] **kettle.md**" in md.text and "3 minutes [1]." in md.text

        js = rita.get(f"/v1/conversations/{kept}/export", params={"format": "json"})
        assert js.status_code == 200 and js.headers["content-type"] == "application/json"
        assert js.json()["exchanges"][0]["citations"][0]["document"] == "kettle.md"

        assert rita.get(f"/v1/conversations/{kept}/export", params={"format": "pdf"}).status_code == 422
        missing = rita.get("/v1/conversations/no-such-id/export")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "conversation_not_found"

        zipped = rita.get("/v1/conversations/export")
        assert zipped.status_code == 200 and zipped.headers["content-type"] == "application/zip"
        assert zipped.headers["content-disposition"].startswith('attachment; filename="ragapp-chats-')
        with zipfile.ZipFile(io.BytesIO(zipped.content)) as archive:
            assert len(json.loads(archive.read("index.json"))["conversations"]) == 1

    with served.client("eddie") as eddie:  # another user: her chat is not found, his list and zip are empty
        refused = eddie.get(f"/v1/conversations/{kept}/export")
        assert refused.status_code == 404 and kept not in refused.text.replace(f"{kept!r}", "")
        assert eddie.get("/v1/conversations").json() == []
        with zipfile.ZipFile(io.BytesIO(eddie.get("/v1/conversations/export").content)) as archive:
            assert json.loads(archive.read("index.json"))["conversations"] == []

    with served.client() as nobody:
        paths = nobody.get("/openapi.json").json()["paths"]  # described for any OpenAPI tool
        assert {"/v1/conversations", "/v1/conversations/export", "/v1/conversations/{conversation_id}/export"} <= set(
            paths
        )
        assert nobody.get("/v1/conversations").status_code == 401
        assert nobody.get(f"/v1/conversations/{kept}/export").status_code == 401
