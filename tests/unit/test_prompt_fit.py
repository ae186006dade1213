"""Fitting one answer prompt into its budget: the conversation is compressed first, then the passages are
condensed, and only then dropped; what the conversation leaves goes to the passages; each step is said."""

from __future__ import annotations

from ragapp.config import Settings
from ragapp.core.types import ChatTurn, Chunk, RetrievedChunk
from ragapp.qa.budget import passages_tokens, plan_budget
from ragapp.qa.prompt_fit import FittedPrompt, fit_prompt

QUESTION = "How often is the kettle filter rinsed?"
SENTENCES = "Safety comes first. Never fill above the MAX mark. The filter is rinsed every 14 days. Keep it dry. "


def _passage(n: int) -> RetrievedChunk:
    return RetrievedChunk(Chunk(f"d-{n}", "d", n, SENTENCES * 3, "manual.pdf", page=n), 0.5, {}, {})


PASSAGES = [_passage(n) for n in range(1, 6)]
WHOLE = passages_tokens(PASSAGES)  # about 500 tokens


def _settings(prompt: int) -> Settings:
    """``prompt`` tokens to share (the window less the answer)."""
    shares = {"instructions": 0.2, "history": 0.3, "memories": 0.0, "passages": 0.4, "tools": 0.1}
    return Settings(llm={"n_ctx": 512, "max_tokens": 1000}, workflow={"context_window": prompt + 1000}, budget=shares)


def _long_history(pairs: int) -> list[ChatTurn]:
    turns = []
    for n in range(pairs):
        turns += [ChatTurn("user", f"Question {n} about the kettle? " * 4), ChatTurn("assistant", "It boils. " * 30)]
    return turns


def _english(fitted: FittedPrompt) -> tuple[str, ...]:
    return tuple(said.english for said in fitted.compressed)


def test_a_long_history_is_compressed_before_the_passages_lose_anything() -> None:
    settings = _settings(2000)  # history 600, passages 800 and what the others leave
    budget = plan_budget(settings, "rules " * 40 + QUESTION)
    history = _long_history(6)  # about 900 tokens: over the conversation's 600
    fitted = fit_prompt(QUESTION, budget, PASSAGES, history, "", condense_keep=0)
    assert 0 < len(fitted.turns) < len(history) and fitted.turns[-1] == history[-1]
    assert fitted.used["history"] <= budget.history
    assert fitted.passages == PASSAGES and fitted.condense_keep == 0  # every passage, whole
    assert _english(fitted) == (f"{len(history) - len(fitted.turns)} earlier messages left out of the prompt",)


def test_what_the_conversation_leaves_goes_to_the_passages() -> None:
    budget = plan_budget(_settings(850), "rules " * 40 + QUESTION)  # passages alone: less than all of them
    assert budget.passages < WHOLE <= budget.passages_after(0)
    assert fit_prompt(QUESTION, budget, PASSAGES, [], "", condense_keep=0).passages == PASSAGES
    chat = [ChatTurn("user" if n % 2 == 0 else "assistant", f"Message {n} about the kettle.") for n in range(40)]
    crowded = fit_prompt(QUESTION, budget, PASSAGES, chat, "", condense_keep=0)
    assert crowded.condense_keep > 0  # the conversation took its share: the passages had to be condensed


def test_passages_are_condensed_before_any_is_dropped() -> None:
    budget = plan_budget(_settings(500), "rules " * 40 + QUESTION)  # passages get about 400 tokens
    fitted = fit_prompt(QUESTION, budget, PASSAGES, [], "", condense_keep=0)
    assert fitted.passages == PASSAGES  # all kept ...
    assert fitted.condense_keep == 2 and fitted.used["passages"] <= budget.passages_after(0) < WHOLE  # ... shorter
    assert _english(fitted) == ("passages after the best condensed to 2 sentence(s) each",)


def test_passages_are_dropped_only_once_one_sentence_each_is_still_too_much() -> None:
    budget = plan_budget(_settings(280), "rules " * 40 + QUESTION)  # about 185 tokens for passages
    fitted = fit_prompt(QUESTION, budget, PASSAGES, [], "", condense_keep=2)
    assert fitted.condense_keep == 1 and 1 <= len(fitted.passages) < len(PASSAGES)
    assert fitted.passages == PASSAGES[: len(fitted.passages)]  # the best ones, whole (for citations)
    dropped = len(PASSAGES) - len(fitted.passages)
    assert _english(fitted) == (
        "passages after the best condensed to 1 sentence(s) each",
        f"{dropped} passages dropped",
    )


def test_a_summary_longer_than_the_conversation_share_is_shortened() -> None:
    budget = plan_budget(_settings(600), "rules " * 10 + QUESTION)  # the conversation gets 180 tokens
    summary = "The user asked about the kettle's filter and its light. " * 20
    fitted = fit_prompt(QUESTION, budget, PASSAGES[:1], [], summary)
    assert len(fitted.summary) < len(summary) and summary.startswith(fitted.summary.rstrip("…"))
    assert fitted.used["history"] <= budget.history // 2
    assert _english(fitted)[0].startswith("summary shortened from ")


def test_the_detail_gives_the_budget_each_part_and_what_was_compressed() -> None:
    budget = plan_budget(_settings(800), "rules " * 40 + QUESTION)
    detail = fit_prompt(QUESTION, budget, PASSAGES, _long_history(1), "Earlier: the lid.", 2).detail()
    assert set(detail) == {"budget", "prompt", "compressed", "compressed_said"}
    assert detail["budget"] == budget.as_dict()
    prompt = detail["prompt"]
    assert isinstance(prompt, dict) and set(prompt) == {
        "instructions",
        "question",
        "history",
        "memories",
        "passages",
        "tools",
    }
    assert prompt["history"] > 0 and prompt["passages"] > 0 and prompt["memories"] == prompt["tools"] == 0
