"""The OpenAI-compatible chat over HTTP, driven by the official ``openai`` client against the served app: the
models, a reply with its citations, a stream ending with them, the conversation as history, bad requests as
OpenAI-shaped errors, and a stream the client cuts leaving the model free."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import openai
import pytest

from tests.integration.api_helpers import KETTLE, LAMP, Served

pytestmark = pytest.mark.integration

ANSWER = "The Orion Kettle K9 boils 1.7 litres in 3 minutes [1]."


@pytest.fixture
def served(serve_api: Callable[..., Served]) -> Served:
    return serve_api({"kettle.md": KETTLE, "lamp.md": LAMP})


def _client(served: Served) -> openai.OpenAI:
    # Loopback with accounts off: no key is needed, but the client insists on one
    return openai.OpenAI(base_url=f"{served.url}/v1", api_key="anything", max_retries=0, timeout=30)


def test_models_lists_the_three_modes(served: Served) -> None:
    ids = [m.id for m in _client(served).models.list()]
    assert ids == ["ragapp-workflow", "ragapp-agent", "ragapp-auto"]


def test_a_reply_carries_the_answer_its_citations_and_its_trace(served: Served) -> None:
    served.rig.llm.enqueue(ANSWER)
    reply = _client(served).chat.completions.create(
        model="ragapp-workflow", messages=[{"role": "user", "content": "How fast does the Orion kettle boil?"}]
    )
    message = reply.choices[0].message
    assert message.content == ANSWER and reply.choices[0].finish_reason == "stop"
    (citation,) = (message.model_extra or {})["citations"]
    assert citation["number"] == 1 and citation["document"] == "kettle.md"
    assert citation["doc_id"] == served.docs["kettle.md"] and "1.7 litres" in citation["text"]
    assert citation["chunk_id"] and "location" in citation
    confidence = (message.model_extra or {})["confidence"]  # how sure, and the checks behind it
    assert confidence["level"] in ("high", "medium", "low")
    checks = {c["check"]: c["passed"] for c in confidence["checks"]}
    assert checks["supported"] is True and checks["fits"] is True
    info = (reply.model_extra or {})["ragapp"]
    assert info["grounded"] is True and info["mode"] == "workflow"
    with served.client() as http:
        trace = http.get(f"/v1/traces/{info['trace_id']}").json()
    assert trace["question"] == "How fast does the Orion kettle boil?" and trace["owner"] == "local"


def test_a_plain_client_joining_the_stream_gets_the_checked_answer(served: Served) -> None:
    llm = served.rig.llm
    # The model's last sentence only points at the passages: the check leaves it out of the answer. The model
    # stalls after its first sentence: that one is checked and sent meanwhile (the client would time out
    # after 30 s were it held to the end).
    pointer = " It is described in the context passage [1]."
    llm.enqueue([ANSWER, " It boils ", llm.hang(120), "1.7 litres of water [1].", pointer])
    stream = _client(served).chat.completions.create(
        model="ragapp-workflow",
        messages=[{"role": "user", "content": "How fast does the Orion kettle boil?"}],
        stream=True,
    )
    chunks = []
    for chunk in stream:
        chunks.append(chunk)
        if chunk.choices[0].delta.content:
            assert chunk.choices[0].delta.content == ANSWER  # the first sentence, checked, before the rest
            llm.release()
            break
    chunks += list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    last = chunks[-1]
    info = (last.model_extra or {})["ragapp"]
    with served.client() as http:
        checked = http.get(f"/v1/traces/{info['trace_id']}").json()["answer"]["text"]
    assert text == checked == ANSWER + " It boils 1.7 litres of water [1]."  # what a plain client shows
    assert "context passage" not in text and "content" not in info  # nothing to replace
    assert last.choices[0].finish_reason == "stop"
    (citation,) = (last.choices[0].delta.model_extra or {})["citations"]
    assert citation["document"] == "kettle.md"
    assert (last.choices[0].delta.model_extra or {})["confidence"]["level"] in ("high", "medium", "low")
    with httpx.stream(
        "POST", f"{served.url}/v1/chat/completions", timeout=30,
        json={"model": "ragapp-workflow", "stream": True, "messages": [{"role": "user", "content": "Kettle?"}]},
    ) as raw:  # fmt: skip
        served.rig.llm.enqueue(ANSWER)
        lines = [line for line in raw.iter_lines() if line.startswith("data:")]
    assert lines[-1] == "data: [DONE]"


def test_the_conversation_becomes_the_history_and_the_scope_narrows_the_search(served: Served) -> None:
    served.rig.llm.enqueue("It runs 14 hours [1].")
    reply = _client(served).chat.completions.create(
        model="ragapp-workflow",
        messages=[
            {"role": "system", "content": "You are a pirate."},
            {"role": "user", "content": "Tell me about the Lumen lamp."},
            {"role": "assistant", "content": "The Lumen is a desk lamp."},
            {"role": "user", "content": [{"type": "text", "text": "How long does its battery last?"}]},
        ],
        extra_body={"kbs": ["default"]},
    )
    assert reply.choices[0].message.content == "It runs 14 hours [1]."
    prompt = served.rig.llm.calls[-1]
    assert [t.content for t in prompt[1:3]] == ["Tell me about the Lumen lamp.", "The Lumen is a desk lamp."]
    assert "How long does its battery last?" in prompt[-1].content
    assert all("pirate" not in t.content for t in prompt)  # the app's instructions, not the client's


def test_bad_requests_are_openai_shaped_errors(served: Served) -> None:
    client = _client(served)
    ask = [{"role": "user", "content": "Kettle?"}]
    with pytest.raises(openai.NotFoundError, match="ragapp-workflow"):
        client.chat.completions.create(model="gpt-4o", messages=ask)  # type: ignore[arg-type]
    with pytest.raises(openai.NotFoundError, match="No knowledge base 'nowhere'"):
        client.chat.completions.create(model="ragapp-workflow", messages=ask, extra_body={"kbs": ["nowhere"]})  # type: ignore[arg-type]
    with pytest.raises(openai.BadRequestError, match="last message must be the user's question"):
        client.chat.completions.create(
            model="ragapp-workflow",
            messages=[*ask, {"role": "assistant", "content": "Yes?"}],  # type: ignore[list-item]
        )
    with pytest.raises(openai.BadRequestError, match="questions are limited to"):
        client.chat.completions.create(model="ragapp-workflow", messages=[{"role": "user", "content": "why " * 1000}])
    with served.client() as http:
        wrong = http.post("/v1/chat/completions", json={"model": "ragapp-workflow", "messages": "Kettle?"})
        not_json = http.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert wrong.status_code == 422 and wrong.json()["error"]["message"].startswith("Invalid request: messages")
    assert not_json.status_code == 422 and "error" in not_json.json()
    assert served.rig.llm.calls == []  # nothing reached the model


def test_a_stream_cut_by_the_client_lets_the_model_go(served: Served) -> None:
    llm = served.rig.llm.take_turns()  # one answer at a time, as the local model: a stuck stream blocks the next
    endless: list[Any] = [ANSWER, " The kettle ", *[piece for _ in range(300) for piece in (llm.hang(0.1), "boils ")]]
    llm.enqueue(endless)
    body = {"model": "ragapp-workflow", "stream": True, "messages": [{"role": "user", "content": "Kettle?"}]}
    with httpx.stream("POST", f"{served.url}/v1/chat/completions", json=body, timeout=30) as raw:
        for line in raw.iter_lines():
            if '"content": "The Orion Kettle K9' in line:
                break  # the answer has started: hang up mid-stream (30 s of it left)
    llm.enqueue(ANSWER)
    started = time.monotonic()
    reply = _client(served).chat.completions.create(model="ragapp-workflow", messages=body["messages"])
    assert reply.choices[0].message.content == ANSWER
    assert time.monotonic() - started < 10  # the cut stream's turn was given back, not held for 30 s
    with served.client() as http:
        statuses = [t["status"] for t in http.get("/v1/traces").json()]
    assert statuses[1] == "cancelled"  # the cut one, older than the reply


TWINS = """
intents:
  - code: alpha
    name: Alpha robot
    children:
      - {code: alpha.specs, name: Specs, kind: KB, knowledge_bases: [alpha], description: Alpha battery and size}
  - code: beta
    name: Beta robot
    children:
      - {code: beta.specs, name: Specs, kind: KB, knowledge_bases: [beta], description: Beta battery and size}
"""


def test_a_clarification_lists_the_choices_and_a_numbered_reply_answers_it(
    serve_api: Callable[..., Served], tmp_path: Any
) -> None:
    served = serve_api(workflow={"rewrite": True, "route": True})
    engine, llm = served.rig.engine, served.rig.llm
    for name, text, kb in (
        ("alpha.md", "# Alpha robot\n\nThe Alpha robot battery lasts 90 minutes.\n", "alpha"),
        ("beta.md", "# Beta robot\n\nThe Beta robot battery lasts 150 minutes.\n", "beta"),
    ):
        (tmp_path / name).write_text(text, "utf-8")
        assert engine.library.ingest([(tmp_path / name, name)], kb=kb)[0].status == "added"
    engine.intents.import_tree(TWINS)
    client = _client(served)
    question = {"role": "user", "content": "How long does the battery last?"}

    llm.enqueue('{"matches": [{"id": "alpha.specs", "score": 0.9}]}')
    asked = client.chat.completions.create(model="ragapp-workflow", messages=[question])  # type: ignore[list-item]
    message = asked.choices[0].message
    assert (
        message.content and "1. Alpha robot › Specs" in message.content and "2. Beta robot › Specs" in message.content
    )
    choices = (message.model_extra or {})["clarification"]["choices"]
    assert [(c["number"], c["code"]) for c in choices] == [(1, "alpha.specs"), (2, "beta.specs"), (0, "*")]

    llm.enqueue("The Beta battery lasts 150 minutes [1].")
    conversation = [question, {"role": "assistant", "content": message.content}, {"role": "user", "content": "2"}]
    answered = client.chat.completions.create(model="ragapp-workflow", messages=conversation, stream=True)  # type: ignore[arg-type]
    chunks = list(answered)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "The Beta battery lasts 150 minutes [1]."
    (citation,) = (chunks[-1].choices[0].delta.model_extra or {})["citations"]
    assert citation["document"] == "beta.md"
    assert len(llm.calls) == 2  # the pick needed no second classification
