"""The answer cache through the real engine (real stores and embedder, the scripted model at the LLM seam): a
question asked again is answered from the kept answer, with its citations and without a model call; any change
to the documents or intents, another reader's scope, "Answer again" or the cache turned off answers anew."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
import pytest

from ragapp.accounts.model import KbRule
from ragapp.accounts.store import UserStore
from ragapp.core.access import Actor
from ragapp.core.events import AnswerEvent, CachedEvent, EngineEvent, TraceEvent
from ragapp.core.types import ChatTurn
from ragapp.ui.handlers import Handlers
from ragapp.ui.render import ANSWER_AGAIN_CHOICE
from ragapp.ui.state import Session
from tests.text import english

pytestmark = pytest.mark.integration

ALPHA = "# Alpha robot\n\nThe Alpha robot's battery lasts 90 minutes on a full charge.\n"
BETA = "# Beta robot\n\nThe Beta robot weighs 3.4 kg and its battery lasts 70 minutes.\n"
QUESTION = "How long does the Alpha robot's battery last?"
REPLY = "The Alpha robot's battery lasts 90 minutes [1]."


def ingest(rig: Any, tmp_path: Path, name: str, text: str, kb: str = "default") -> str:
    path = tmp_path / f"{kb}-{name}"
    path.write_text(text, "utf-8")
    (result,) = rig.engine.library.ingest([(path, name)], kb=kb)
    assert result.status in ("added", "replaced"), result.message
    return str(result.doc_id)


@pytest.fixture
def rig(make_engine: Callable[..., Any], tmp_path: Path) -> Any:
    rig = make_engine(answer_cache={"enabled": True})
    rig.doc_ids = {name: ingest(rig, tmp_path, name, text) for name, text in (("alpha.md", ALPHA), ("beta.md", BETA))}
    return rig


def ask(rig: Any, question: str = QUESTION, **kw: Any) -> list[EngineEvent]:
    return list(rig.engine.chat.ask(question, mode="workflow", **kw))


def answered(events: list[EngineEvent]) -> AnswerEvent:
    return next(e for e in events if isinstance(e, AnswerEvent))


def cached(events: list[EngineEvent]) -> CachedEvent | None:
    return next((e for e in events if isinstance(e, CachedEvent)), None)


def first_answer(rig: Any, **kw: Any) -> AnswerEvent:
    """Ask once through the model; the answer must be one the cache keeps."""
    rig.llm.enqueue(REPLY)
    events = ask(rig, **kw)
    answer = answered(events)
    assert cached(events) is None and answer.grounded and answer.citations, answer
    assert answer.confidence is not None and answer.confidence.level != "low", answer.confidence
    return answer


def test_a_question_asked_again_is_answered_from_the_cache_with_its_citations_and_traced(rig: Any) -> None:
    first = first_answer(rig)
    calls = len(rig.llm.calls)
    for again in (QUESTION, "  how long does the ALPHA robot's battery   last "):  # case, spacing, the "?"
        events = ask(rig, again)
        hit = cached(events)
        assert hit is not None and hit.answered_at.startswith("20"), again
        answer = answered(events)
        assert answer.text == first.text and answer.citations == first.citations
        assert answer.confidence == first.confidence and answer.support == first.support
    assert len(rig.llm.calls) == calls  # no model call
    # The hit is in its trace, pointing at the trace of the request that answered it.
    trace_id = next(e.trace_id for e in events if isinstance(e, TraceEvent))
    trace = rig.engine.observability.trace(trace_id, "local")
    span = next(s for s in trace.spans if s.name == "answer cache")
    assert span.attributes["hit"] is True and span.attributes["answered in trace"] == hit.trace_id != ""


def test_another_question_or_a_follow_up_is_not_served_from_the_cache(rig: Any) -> None:
    first_answer(rig)
    rig.llm.enqueue("The Beta robot's battery lasts 70 minutes [1].")
    assert cached(ask(rig, "How long does the Beta robot's battery last?")) is None
    rig.llm.enqueue(REPLY)
    assert cached(ask(rig, kbs=frozenset({"default", "other"}))) is None  # another scope asked for


def test_a_later_question_that_stands_alone_is_served_from_the_cache_and_a_follow_up_is_not(rig: Any) -> None:
    first = first_answer(rig)
    calls = len(rig.llm.calls)
    history = [ChatTurn("user", "How heavy is the Beta robot?"), ChatTurn("assistant", "The Beta weighs 3.4 kg [1].")]
    events = ask(rig, history=history)  # later in a chat, and it names its subject: as if asked first
    assert cached(events) is not None and answered(events).text == first.text
    assert len(rig.llm.calls) == calls  # no model call
    # A follow-up that leans on the conversation means something else in another one: answered anew, not kept.
    follow_up = "And how long does its battery last?"
    for _ in range(2):
        rig.llm.enqueue("The Beta robot's battery lasts 70 minutes [1].")
        assert cached(ask(rig, follow_up, history=history)) is None
    # A question that stands alone, first asked later in a chat, is kept for the next chat's first question.
    beta = "How long does the Beta robot's battery last?"
    rig.llm.enqueue("The Beta robot's battery lasts 70 minutes [1].")
    assert cached(ask(rig, beta, history=history)) is None
    assert cached(ask(rig, beta)) is not None


CHANGES: dict[str, Callable[[Any, Path], object]] = {
    "added": lambda rig, tmp: ingest(rig, tmp, "gamma.md", "# Gamma\n\nThe Gamma robot is blue.\n", kb="other"),
    "replaced": lambda rig, tmp: ingest(rig, tmp, "alpha.md", ALPHA.replace("90", "95")),
    "deleted": lambda rig, _tmp: rig.engine.library.delete(rig.doc_ids["beta.md"]),
    "moved": lambda rig, _tmp: rig.engine.library.move(rig.doc_ids["beta.md"], "other"),
    "re-indexed": lambda rig, _tmp: rig.engine.library.reindex(rig.doc_ids["alpha.md"]),
    "re-tagged": lambda rig, _tmp: rig.engine.library.set_tags(rig.doc_ids["alpha.md"], ["robots"]),
    "intents edited": lambda rig, _tmp: rig.engine.intents.import_tree(
        "intents:\n  - {code: robots, name: Robots, kind: KB, knowledge_bases: [default], description: robots}\n"
    ),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_any_change_to_the_documents_or_intents_makes_it_answer_anew(rig: Any, tmp_path: Path, change: str) -> None:
    first_answer(rig)
    CHANGES[change](rig, tmp_path)
    reply = REPLY.replace("90", "95") if change == "replaced" else REPLY  # the new answer from the new text
    rig.llm.enqueue(reply)
    events = ask(rig)
    assert cached(events) is None and answered(events).text == reply
    assert cached(ask(rig)) is not None  # and the new answer is kept in turn


def test_answer_again_bypasses_the_cache_and_keeps_the_new_answer(rig: Any) -> None:
    first_answer(rig)
    rig.llm.enqueue("It lasts 90 minutes on a full charge [1].")
    events = ask(rig, fresh=True)
    assert cached(events) is None and answered(events).text == "It lasts 90 minutes on a full charge [1]."
    again = ask(rig)
    assert cached(again) is not None and answered(again).text == "It lasts 90 minutes on a full charge [1]."


def test_an_answer_that_is_not_checked_and_grounded_is_not_kept(rig: Any) -> None:
    rig.llm.enqueue("The documents do not say.")
    first = answered(ask(rig, "What colour is the Alpha robot?"))
    assert first.abstained or not first.grounded or first.confidence is None or first.confidence.level == "low"
    rig.llm.enqueue("The documents do not say.")
    assert cached(ask(rig, "What colour is the Alpha robot?")) is None


def test_turned_off_it_never_answers_from_a_kept_answer(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine(answer_cache={"enabled": False})
    ingest(rig, tmp_path, "alpha.md", ALPHA)
    for _ in range(2):
        rig.llm.enqueue(REPLY)
        assert cached(ask(rig)) is None
    assert not rig.llm._replies  # both answers came from the model


def test_a_reader_of_other_knowledge_bases_never_gets_anothers_kept_answer(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    users = tmp_path / "users.json"
    store = UserStore(users, 4)
    store.add("admin", "admin password", "admin")
    store.add("hanna", "hanna password", "reader", ("hr",))
    store.set_kb_rule("robots", KbRule(readers=("group:robots",), editors=()))
    store.set_kb_rule("hr", KbRule(readers=("group:hr",), editors=()))
    rig = make_engine(auth={"enabled": True, "users_file": users, "bcrypt_rounds": 4}, answer_cache={"enabled": True})
    ingest(rig, tmp_path, "alpha.md", ALPHA, kb="robots")
    ingest(rig, tmp_path, "leave.md", "# Leave\n\nEvery employee has 27 days of paid leave.\n", kb="hr")
    admin, hanna = Actor("admin", "admin"), Actor("hanna", "reader", frozenset({"hr"}))
    first_answer(rig, actor=admin)
    assert cached(ask(rig, actor=Actor("ada", "admin"))) is not None  # the same readable scope: all
    rig.llm.enqueue("The documents do not say.")
    events = ask(rig, actor=hanna)
    assert cached(events) is None and "90 minutes" not in answered(events).text
    assert all(c.chunk.source != "alpha.md" for c in answered(events).citations)


def _last(stream: Any) -> tuple[str, list[Any], Any]:
    out = None
    for out in stream:  # noqa: B007  (the last update is the finished turn)
        pass
    assert out is not None
    return out


def test_the_chat_marks_a_kept_answer_and_answer_again_asks_the_model_anew(rig: Any) -> None:
    handlers = Handlers(rig.engine)
    rig.llm.enqueue(REPLY)
    _, first, session = _last(handlers.respond(QUESTION, [], None))
    assert not any(m.options for m in first if isinstance(m, gr.ChatMessage)) and session.again == ""

    # Asked again in a new chat: the kept answer, said to be one, with its citation and the button.
    _, shown, session = _last(handlers.respond(QUESTION, [], None))
    answer = next(m for m in english(shown) if "90 minutes" in str(m.content) and m.role == "assistant")
    assert "Answered before, on 20" in str(answer.content)
    assert shown[-1].options == [ANSWER_AGAIN_CHOICE]  # on the last message: the only one Gradio shows them on
    assert any("alpha.md" in str((m.metadata or {}).get("title", "")) for m in shown)  # its citation
    assert session.again == QUESTION
    reopened = Session(exchanges=list(session.exchanges))  # the same chat opened again from the sidebar

    # "Answer again": the model answers anew, though this chat has a turn before it, and that answer is kept.
    rig.llm.enqueue("It lasts 90 minutes on a full charge [1].")
    pick = gr.SelectData(None, {"index": 0, "value": ANSWER_AGAIN_CHOICE["value"]})
    _, again, session = _last(handlers.choose(pick, shown, session))
    text = " ".join(str(m.content) for m in english(again[len(shown) :]))
    assert "on a full charge" in text and "Answered before" not in text and session.again == ""
    assert len(rig.llm.calls[-1]) == len(rig.llm.calls[0])  # asked alone, as at first: no earlier turn sent
    _, later, _ = _last(handlers.respond(QUESTION, [], None))
    assert any("on a full charge" in str(m.content) and "Answered before" in str(m.content) for m in english(later))
    # A stale button (nothing kept shown last) does nothing; in the reopened chat it asks anew.
    _, same, _ = _last(handlers.choose(pick, later, Session()))
    assert same == later
    rig.llm.enqueue("Ninety minutes [1].")
    _, anew, _ = _last(handlers.choose(pick, [], reopened))
    assert any("Ninety minutes" in str(m.content) for m in english(anew))


def test_the_api_says_an_answer_was_answered_before_and_answers_anew_when_asked(
    serve_api: Callable[..., Any],
) -> None:
    from tests.integration.api_helpers import KETTLE

    served = serve_api({"kettle.md": KETTLE}, answer_cache={"enabled": True})
    reply = "The Orion Kettle K9 boils 1.7 litres in 3 minutes [1]."
    body = {
        "model": "ragapp-workflow",
        "messages": [{"role": "user", "content": "How fast does the Orion kettle boil?"}],
    }
    served.rig.llm.enqueue(reply)
    with served.client() as http:
        first = http.post("/v1/chat/completions", json=body).json()
        assert first["ragapp"]["answered_before"] is None
        again = http.post("/v1/chat/completions", json=body).json()
        assert again["ragapp"]["answered_before"].startswith("20")
        assert again["choices"][0]["message"]["content"] == reply
        assert again["choices"][0]["message"]["citations"] == first["choices"][0]["message"]["citations"]
        # Streamed, the last chunk says so too.
        lines = http.post("/v1/chat/completions", json=body | {"stream": True}).text.splitlines()
        last = json.loads([line for line in lines if line.startswith("data: {")][-1][len("data: ") :])
        assert last["ragapp"]["answered_before"] == again["ragapp"]["answered_before"]
        served.rig.llm.enqueue("It boils 1.7 litres in 3 minutes [1].")
        fresh = http.post("/v1/chat/completions", json=body | {"fresh": True}).json()
        assert fresh["ragapp"]["answered_before"] is None
        assert fresh["choices"][0]["message"]["content"] == "It boils 1.7 litres in 3 minutes [1]."


def test_a_paraphrase_is_served_only_above_the_similarity_set(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    """Off by default (exact questions only); set, a question the embedder finds at least that similar to a
    kept one in the same context gets its answer, saying for which wording it was kept."""
    rig = make_engine(answer_cache={"enabled": True, "paraphrase_min_similarity": 0.99})
    ingest(rig, tmp_path, "alpha.md", ALPHA)
    first_answer(rig)
    events = ask(rig, "How long does the battery of the Alpha robot last?")  # scores 0.999
    hit = cached(events)
    assert hit is not None and hit.question == QUESTION and hit.similarity is not None and hit.similarity >= 0.99
    assert answered(events).text == REPLY
    # Less alike (0.977: the same meaning, other words; 0.976: another fact) is answered anew.
    for other in (
        "What is the battery life of the Alpha robot?",
        "How long does the Alpha robot's battery take to charge?",
    ):
        rig.llm.enqueue("The documents do not say.")
        assert cached(ask(rig, other)) is None, other


def test_without_a_similarity_set_a_paraphrase_is_answered_anew(rig: Any) -> None:
    first_answer(rig)
    rig.llm.enqueue(REPLY)
    assert cached(ask(rig, "How long does the battery of the Alpha robot last?")) is None
