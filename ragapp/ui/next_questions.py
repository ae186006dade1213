"""The next questions under an answer (``ragapp.qa.suggest`` makes them): choices of the answer's last message,
whose click asks the question (``Handlers.choose``). Their labels are the questions themselves, in the question's
language, so no page translates them."""

from __future__ import annotations

from ragapp.core.turn import Turn

# A choice's value is the question behind this prefix: no intent code nor other choice has a colon first and
# "ask:" after it, so none is mistaken for one, and a reopened chat's buttons still say what to ask.
PREFIX = ":ask:"


def suggestion_choices(turn: Turn) -> list[dict[str, str]]:
    """The turn's next questions as chat choices (none before its answer ends)."""
    if not turn.done:
        return []
    return [{"label": s.text, "value": PREFIX + s.text} for s in turn.suggestions]


def suggested_question(value: object) -> str | None:
    """The question a clicked choice asks; None when the choice is not a next question."""
    text = str(value)
    if not text.startswith(PREFIX):
        return None
    return text[len(PREFIX) :].strip() or None
