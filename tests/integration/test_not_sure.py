"""Find, then say: the model first picks the passage sentence that answers (or none), and an answer the app is
not sure of is withheld as "not sure" with the passage most likely to hold it, in the engine, over the HTTP
API and over MCP. Real retrieval and stores; the model is scripted (its first reply is the selection)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from ragapp.agent.mcp_tools import mcp_session
from ragapp.core.errors import LLMError
from ragapp.core.events import AnswerEvent, StageEvent
from ragapp.models.llm import ScoredPiece
from ragapp.qa.prompts import NOT_SURE_EN, NOT_SURE_ZH
from ragapp.qa.select import SELECT_EN
from ragapp.qa.verify import VERIFY_SYSTEM
from tests.integration.api_helpers import KETTLE, LAMP, Served, run_async

pytestmark = pytest.mark.integration

SELECTING = {"workflow": {"select": "on"}}
KETTLE_SENTENCE = "The Orion Kettle K9 boils 1.7 litres of water in 3 minutes."
LAMP_SENTENCE = "The Lumen desk lamp runs 14 hours on one charge of its battery."
LAMP_ZH = "# 流明台灯\n\n## 电池\n\n流明台灯充满一次电可以使用 14 小时。\n"


def answer_of(events: list[Any]) -> AnswerEvent:
    (answer,) = [e for e in events if isinstance(e, AnswerEvent)]
    return answer


def ingest(rig: Any, tmp_path: Path, documents: dict[str, str]) -> None:
    for name, text in documents.items():
        path = tmp_path / name
        path.write_text(text, "utf-8")
        (result,) = rig.engine.library.ingest([(path, name)])
        assert result.status == "added", result.message


def test_a_selection_of_none_is_not_sure_with_the_likeliest_passage_and_no_guess(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_engine(**SELECTING)
    ingest(rig, tmp_path, {"kettle.md": KETTLE})
    rig.llm.enqueue("none")  # no sentence of the passages answers: no answer is written at all

    events = list(rig.engine.chat.ask("Which descaling agent does the Orion kettle need?", []))

    answer = answer_of(events)
    assert answer.not_sure and answer.text == NOT_SURE_EN and answer.guess == ""
    assert not answer.abstained and answer.grounded
    assert answer.citations[0].chunk.source == "kettle.md"  # the passage most likely to hold it
    (messages,) = rig.llm.calls  # the selection only
    assert messages[0].content == SELECT_EN and "Which descaling agent" in messages[-1].content
    select = [e for e in events if isinstance(e, StageEvent) and e.stage == "select" and e.status == "finished"]
    assert select[0].detail == {"picked": "none"}


def test_a_bare_fact_is_answered_by_the_picked_sentence_itself(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine(**SELECTING)
    ingest(rig, tmp_path, {"kettle.md": KETTLE, "lamp.md": LAMP})
    rig.llm.enqueue(LAMP_SENTENCE)  # a server model's free reply, matched to the sentence by its words

    answer = answer_of(list(rig.engine.chat.ask("How many hours does the Lumen desk lamp run?", [])))

    assert not answer.not_sure and answer.text == f"The documents say: “{LAMP_SENTENCE}” [1]"
    assert answer.citations[0].chunk.source == "lamp.md" and answer.citations[0].highlights == (LAMP_SENTENCE,)
    assert len(rig.llm.calls) == 1  # no answer written: the sentence is the answer


def test_an_answer_is_written_from_the_picked_sentence_alone(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine(**SELECTING)
    ingest(rig, tmp_path, {"kettle.md": KETTLE, "lamp.md": LAMP})
    rig.llm.enqueue(LAMP_SENTENCE, "It runs 14 hours on a charge [1].")

    answer = answer_of(list(rig.engine.chat.ask("Tell me about the Lumen lamp's battery life.", [])))

    assert answer.text == "It runs 14 hours on a charge [1]." and answer.citations[0].chunk.source == "lamp.md"
    _, written = rig.llm.calls
    prompt = written[-1].content
    assert "[1] (lamp.md" in prompt and LAMP_SENTENCE in prompt and "Orion" not in prompt  # that passage alone


def test_a_low_answer_is_withheld_as_not_sure_with_its_guess(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine()  # no selection: the checks' calibrator (tests' settings) finds the answer unfitting
    ingest(rig, tmp_path, {"lamp.md": LAMP, "台灯.md": LAMP_ZH})
    rig.llm.enqueue("The lamp has a battery [1].")  # a "how many hours" answered with no number

    answer = answer_of(list(rig.engine.chat.ask("How many hours does the Lumen desk lamp run?", [])))

    assert answer.not_sure and answer.text == NOT_SURE_EN and answer.guess == "The lamp has a battery [1]."
    assert answer.confidence is not None and answer.confidence.level == "low"
    assert answer.citations[0].chunk.source == "lamp.md"
    rig.llm.enqueue("台灯有电池 [1]。")
    chinese = answer_of(list(rig.engine.chat.ask("流明台灯充一次电能用几个小时？", [])))
    assert chinese.not_sure and chinese.text == NOT_SURE_ZH


def test_the_models_check_of_its_answer_is_one_more_signal_and_a_failed_one_costs_nothing(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    rig = make_engine(workflow={"verify": True})
    ingest(rig, tmp_path, {"lamp.md": LAMP})
    said = "The Lumen desk lamp runs 14 hours [1]."
    scored = [ScoredPiece(said, ((said, -0.1),))]  # a backend that scores its tokens (the local model)
    yes = ScoredPiece("yes", ((" yes", math.log(0.1)), ("yes", math.log(0.7)), ("no", math.log(0.2))))
    rig.llm.enqueue(scored, [yes])

    events = list(rig.engine.chat.ask("How many hours does the Lumen desk lamp run?", []))

    answer = answer_of(events)
    assert answer.text == said and answer.confidence is not None
    signals = dict(answer.confidence.signals)
    assert math.isclose(signals["verified"], 0.8, abs_tol=1e-3) and signals["verified_missing"] == 0.0
    (_answering, checking) = rig.llm.calls  # the answer, then the check of it
    assert checking[0].content == VERIFY_SYSTEM and "Proposed answer: The Lumen desk lamp runs 14 hours." in (
        checking[1].content
    )
    assert "[1] The Lumen desk lamp runs 14 hours on one charge" in checking[1].content
    (summary,) = rig.engine.observability.traces("local", kind="chat")
    trace = rig.engine.observability.trace(summary.id, "local")
    assert [s.attributes.get("yes") for s in trace.spans if s.name == "verify"] == [0.8]

    rig.llm.enqueue(scored, LLMError("the model went away"))
    events = list(rig.engine.chat.ask("How long does the Lumen desk lamp run on a charge?", []))
    answer = answer_of(events)
    assert answer.text == said and answer.confidence is not None
    assert dict(answer.confidence.signals)["verified_missing"] == 1.0
    failed = [e for e in events if isinstance(e, StageEvent) and e.stage == "verify" and e.status == "failed"]
    assert failed and "went away" in (failed[0].error or "")

    rig.llm.enqueue(said)  # a server that scores nothing: no check is asked of it
    answer = answer_of(list(rig.engine.chat.ask("What is the Lumen desk lamp's battery life?", [])))
    assert answer.text == said and dict(answer.confidence.signals)["verified_missing"] == 1.0  # type: ignore[union-attr]


@pytest.fixture
def served(serve_api: Callable[..., Served]) -> Served:
    return serve_api({"kettle.md": KETTLE, "lamp.md": LAMP}, **SELECTING)


def test_the_api_says_answered_false_with_the_reason_the_guess_and_the_passages(served: Served) -> None:
    client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="anything", max_retries=0, timeout=30)
    served.rig.llm.enqueue("none")
    reply = client.chat.completions.create(
        model="ragapp-workflow", messages=[{"role": "user", "content": "Which descaling agent does the kettle need?"}]
    )
    info = (reply.model_extra or {})["ragapp"]
    assert info["answered"] is False and info["reason"] == "not_sure" and info["guess"] is None
    assert reply.choices[0].message.content == NOT_SURE_EN
    (first, *_) = (reply.choices[0].message.model_extra or {})["citations"]
    assert first["document"] == "kettle.md" and "1.7 litres" in first["text"]

    served.rig.llm.enqueue(LAMP_SENTENCE, "It depends on how bright the light is [1].")
    stream = client.chat.completions.create(
        model="ragapp-workflow", stream=True,
        messages=[{"role": "user", "content": "Does the Lumen lamp's battery last a whole working day?"}],
    )  # fmt: skip
    chunks = list(stream)
    info = (chunks[-1].model_extra or {})["ragapp"]
    assert info["answered"] is False and info["reason"] == "not_sure"
    assert info["guess"] == "It depends on how bright the light is [1]."
    # only checked text streams: what a client joins up (or the whole text that replaces it) says "not sure"
    joined = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert info.get("content", joined) == NOT_SURE_EN

    served.rig.llm.enqueue(KETTLE_SENTENCE)
    reply = client.chat.completions.create(
        model="ragapp-workflow", messages=[{"role": "user", "content": "How many minutes does the Orion kettle take?"}]
    )
    info = (reply.model_extra or {})["ragapp"]
    assert info["answered"] is True and info["reason"] is None and info["guess"] is None


def test_the_mcp_ask_tool_says_not_sure_the_same_way(served: Served) -> None:
    served.rig.llm.enqueue("none")

    async def work() -> Any:
        async with mcp_session(url=f"{served.url}/mcp", headers={}) as client:
            return await client.call_tool("ask", {"question": "Which descaling agent does the kettle need?"})

    result = run_async(work)
    assert not result.isError, result.content
    asked = result.structuredContent
    assert asked["answered"] is False and asked["reason"] == "not_sure" and asked["guess"] is None
    assert asked["answer"] == NOT_SURE_EN and not asked["refused"]
    assert asked["citations"][0]["document"] == "kettle.md"
