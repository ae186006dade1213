"""The next questions through the real engine (scripted LLM, real search over the demo's release notes): they
come after the answer, each finds the section it was made from, none under a refusal or with the setting off;
the OpenAI-compatible API and MCP's ``ask`` return them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
import pytest

from ragapp.core.events import AnswerEvent, SuggestionsEvent
from ragapp.core.turn import Turn
from ragapp.core.types import ChatTurn
from ragapp.mcp.server import answer_of
from tests.conftest import DEMO_DIR
from tests.integration.api_helpers import Served

pytestmark = pytest.mark.integration

NOTES = (DEMO_DIR / "v2_pro_firmware_release_notes.md").read_text("utf-8")
QUESTION = "What was fixed in firmware version 2.5.1?"
ANSWER = "Version 2.5.1 fixed the false error E12 on cold mornings [1]."


def _rig(make_engine: Callable[..., Any], **overrides: Any) -> Any:
    rig = make_engine(**overrides)
    path = rig.state_dir.parent / "notes.md"
    path.write_text(NOTES, "utf-8")
    (result,) = rig.engine.library.ingest([(path, "notes.md")])
    assert result.status == "added", result.message
    return rig


def test_after_the_answer_come_questions_whose_sections_the_search_finds(make_engine: Callable[..., Any]) -> None:
    rig = _rig(make_engine)
    rig.llm.enqueue(ANSWER)
    events = list(rig.engine.chat.ask(QUESTION))
    kinds = [type(e) for e in events]
    assert SuggestionsEvent in kinds and kinds.index(SuggestionsEvent) > kinds.index(AnswerEvent)
    turn = Turn.of(events)
    assert turn.answer is not None and turn.answer.grounded
    cited = {c.chunk.chunk_id for c in turn.citations}
    assert 2 <= len(turn.suggestions) <= 3
    for suggestion in turn.suggestions:
        assert suggestion.chunk_id not in cited and "2.5.1" not in suggestion.text
        found = rig.engine.chat.retrieve(suggestion.text)  # the question finds the section it was made from
        assert suggestion.chunk_id in [c.chunk.chunk_id for c in found.chunks[:3]], suggestion.text
    assert answer_of(turn).suggestions == [s.text for s in turn.suggestions]  # MCP's ask
    # asked next in the same chat: nothing on the topic asked before
    rig.llm.enqueue("Firmware version 2.5.0 was released on 28 May 2024 [1].")
    history = [ChatTurn("user", QUESTION), ChatTurn("assistant", ANSWER)]
    then = Turn.of(rig.engine.chat.ask("When was firmware version 2.5.0 released?", history))
    assert then.suggestions and not any("2.5.1" in s.text for s in then.suggestions)


def test_none_under_a_refusal_nor_with_the_setting_off(make_engine: Callable[..., Any]) -> None:
    rig = _rig(make_engine)
    rig.llm.enqueue("The documents do not say.")
    turn = Turn.of(rig.engine.chat.ask("Which firmware version added pet mode?"))
    assert turn.answer is not None and turn.answer.abstained and turn.suggestions == ()
    off = _rig(make_engine, name="off", workflow={"suggest_questions": False})
    off.llm.enqueue(ANSWER)
    turn = Turn.of(off.engine.chat.ask(QUESTION))
    assert turn.answer is not None and turn.answer.grounded and turn.suggestions == ()


def test_the_api_returns_them_in_its_extension(serve_api: Callable[..., Served]) -> None:
    served = serve_api({"notes.md": NOTES})
    served.rig.llm.enqueue(ANSWER)
    client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="anything", max_retries=0, timeout=60)
    reply = client.chat.completions.create(model="ragapp-workflow", messages=[{"role": "user", "content": QUESTION}])
    suggestions = (reply.model_extra or {})["ragapp"]["suggestions"]
    assert 2 <= len(suggestions) <= 3 and all(s.endswith("?") and "2.5.1" not in s for s in suggestions)
