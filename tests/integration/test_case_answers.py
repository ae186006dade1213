"""Saved test cases answered through the real engine (real stores, embedder and retrieval; the scripted LLM at
the LLM seam), judged accurate / missing / hallucinated, kept, and compared with the run before: a document
removed and a model that answers differently turn one case worse and one better."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.core.types import ChatTurn

pytestmark = pytest.mark.integration

ALPHA = "# Alpha robot manual\n\nThe Alpha robot battery lasts 90 minutes. The Alpha robot weighs 2.1 kg.\n"
BETA = "# Beta robot manual\n\nThe Beta robot battery lasts 150 minutes. The Beta robot weighs 3.4 kg.\n"
BATTERY = "How long does the Alpha robot battery last?"
WEIGHT = "How much does the Beta robot weigh?"
HEAVY = "How heavy is the Alpha robot?"
MOON = "How much does a return ticket to the Moon cost?"


def _number_of(prompt: str, words: str) -> int | None:
    """The number the prompt gives the passage holding ``words``."""
    for number in range(1, 10):
        head = f"[{number}]"
        if head in prompt and words in prompt.split(head, 1)[1].split(f"[{number + 1}]", 1)[0]:
            return number
    return None


def replies(beta: str) -> Callable[[list[ChatTurn]], str]:
    """The model: right about the Alpha robot when its passage is in the prompt, ``beta`` about the Beta."""

    def reply(messages: list[ChatTurn]) -> str:
        prompt = messages[-1].content
        question = prompt.rsplit("\n", 1)[-1]
        alpha = _number_of(prompt, "Alpha robot battery lasts 90")
        number = _number_of(prompt, "Beta robot weighs")
        if "Alpha" in question and alpha is not None:
            said = "lasts 90 minutes" if "battery" in question else "weighs 2.1 kg"
            return f"The Alpha robot {said} [{alpha}]."
        if "Beta" in question and number is not None:
            return f"{beta} [{number}]."
        return "The passages do not mention this."

    return reply


def test_a_run_is_judged_kept_and_compared_with_the_one_before(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine()
    for name, text in (("alpha_manual.md", ALPHA), ("beta_manual.md", BETA)):
        (tmp_path / name).write_text(text, "utf-8")
        rig.engine.library.ingest([(tmp_path / name, name)], owner="ann")
    observability = rig.engine.observability
    observability.save_test_case("ann", BATTERY, ["alpha_manual.md"], must_contain="90 minutes")
    observability.save_test_case("ann", WEIGHT, ["beta_manual.md"], must_contain="3.4 kg")
    observability.save_test_case("ann", HEAVY, ["alpha_manual.md"])  # right when it cites the Alpha manual
    observability.save_test_case("ann", MOON, [], unanswerable=True)
    traces_before = len(observability.traces("ann", limit=500))
    assert observability.answer_checks("ann") is None

    rig.llm.reply_with(replies("The Beta robot battery lasts 150 minutes"))  # the neighbouring fact: wrong
    seen: list[tuple[int, int]] = []
    first = observability.check_answers("ann", progress=lambda done, total: seen.append((done, total)))
    verdicts = first.run.verdicts()
    assert verdicts == {BATTERY: "accurate", WEIGHT: "hallucinated", HEAVY: "accurate", MOON: "accurate"}, first
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert first.previous is None and first.comparison is None
    assert first.run.tally.score == pytest.approx(0.5)
    heavy = next(r for r in first.run.results if r.question == HEAVY)
    assert heavy.stated and heavy.cited == ("alpha_manual.md",) and heavy.in_prompt
    moon = next(r for r in first.run.results if r.question == MOON)
    assert not moon.stated and moon.unanswerable
    assert first.run.settings["mode"] == "workflow" and "context_top_k" in first.run.settings

    # The Alpha manual is removed, and the model now gets the Beta robot's weight right.
    (alpha,) = [d for d in rig.engine.library.documents() if d.name == "alpha_manual.md"]
    rig.engine.library.delete(alpha.doc_id)
    rig.llm.reply_with(replies("The Beta robot weighs 3.4 kg"))
    second = observability.check_answers("ann")
    assert second.previous == first.run
    changed = second.comparison
    assert changed is not None
    assert [(c.key, c.before, c.after) for c in changed.better] == [(WEIGHT, "hallucinated", "accurate")]
    assert {(c.key, c.before, c.after) for c in changed.worse} == {
        (BATTERY, "accurate", "missing"),
        (HEAVY, "accurate", "missing"),
    }
    assert changed.before.score == pytest.approx(0.5) and changed.after.score == pytest.approx(0.5)
    assert observability.answer_checks("ann") == second
    assert observability.answer_checks("bob") is None  # runs are per owner
    # A check changes nothing it checks: no trace of its questions.
    assert len(observability.traces("ann", limit=500)) == traces_before
