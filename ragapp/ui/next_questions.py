"""The next questions under an answer (``ragapp.qa.suggest`` makes them): choices of the answer's last message,
whose click asks the question (``Handlers.choose``). Their labels are the questions themselves, in the question's
language, so no page translates them. And the first screen's questions the user's own documents answer
(``OpeningQuestions``), one list per language, of which the page shows its own."""

from dataclasses import dataclass
from typing import Any

import gradio as gr

from ragapp.core.errors import AccessDenied
from ragapp.core.turn import Turn
from ragapp.engine.engine import Engine
from ragapp.ui.i18n import t
from ragapp.ui.page_language import shown
from ragapp.ui.state import actor_of

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


OPENING_SHOWN = 4  # the first screen's questions, per language


@dataclass(frozen=True)
class OpeningList:
    """The first screen's questions in one language: a titled column of buttons (hidden while empty)."""

    column: gr.Column
    buttons: tuple[gr.Button, ...]


def build_opening_lists(question: gr.Textbox) -> dict[str, OpeningList]:
    """A list per language under the examples (a style in ``page_language.HEAD`` hides the other language's); a
    click puts its question in the box, as an example does. Buttons, not a ``gr.Dataset``: that one draws a
    sample through the question box, which cuts it at 200 px."""
    lists = {}
    for lang in ("en", "zh"):
        with gr.Column(visible="hidden", elem_id=f"kb-questions-{lang}") as column:
            gr.Markdown(t("chat.kb_questions"))
            with gr.Row():
                # Not "hidden" (that one still takes its place, saying "Run"): a question's words need no translating.
                buttons = tuple(gr.Button("", visible=False, size="sm") for _ in range(OPENING_SHOWN))
        for button in buttons:
            button.click(lambda text: text, inputs=[button], outputs=[question], queue=False)
        lists[lang] = OpeningList(column, buttons)
    return lists


class OpeningQuestions:
    """What the page's load shows under the examples: the questions the documents the user may read answer."""

    def __init__(self, engine: Engine, lists: dict[str, OpeningList]) -> None:
        self.engine = engine
        self.outputs = [c for lang in ("en", "zh") for c in (lists[lang].column, *lists[lang].buttons)]

    def load(self, request: gr.Request | None = None) -> list[Any]:
        """The English column and buttons, then the Chinese ones (a column without questions stays hidden)."""
        try:
            offered = self.engine.library.opening_questions(actor=actor_of(self.engine, request))
        except AccessDenied:  # a user removed since signing in sees nothing
            offered = {}
        updates: list[Any] = []
        for lang in ("en", "zh"):
            questions = offered.get(lang, [])[:OPENING_SHOWN]
            updates.append(gr.Column(visible=shown(bool(questions))))
            updates += [gr.Button(questions[i], visible=True) if i < len(questions) else gr.Button(visible=False)
                        for i in range(OPENING_SHOWN)]  # fmt: skip
        return updates
