"""Procedural memory in the Traces tab: the evidence under a trace's header (read back from the stored form, as the
tab reads it) and the table of what was learned, in both languages (no engine, no gradio)."""

from __future__ import annotations

from ragapp.core.events import ExperienceEvent, Tally
from ragapp.store.procedural import TableRow
from ragapp.tracing.model import Trace
from ragapp.ui import experience_views
from tests.text import English, shown

views = English(experience_views)


def stored(experience: ExperienceEvent | None) -> Trace:
    """A trace with ``experience``, through the JSON the store keeps."""
    trace = Trace("t1", "local", "chat", "2026-01-01T00:00:00+00:00", "How long does it last?", "agent")
    trace.experience = experience
    return Trace.from_dict(trace.to_dict())


def test_the_evidence_behind_a_learned_mode_is_shown_under_the_header() -> None:
    event = ExperienceEvent(
        "single",
        (Tally("agent", 7, 9), Tally("workflow", 2, 8)),
        (Tally("search_knowledge", 7, 9),),
        "agent",
        "questions like this were answered better by the agent: 7 of 9 kept",
        ("search_knowledge", "read_chunk"),
    )
    text = views.experience_lines(stored(event))
    assert "kind of question **single question**" in text
    assert "agent 7 of 9 kept; workflow 2 of 8 kept" in text
    assert "`search_knowledge` 7 of 9 kept" in text
    assert "Auto took **agent** because of it" in text
    assert "in this order: `search_knowledge`, `read_chunk`" in text
    chinese = shown(experience_views.experience_lines(stored(event)), "zh")
    assert "智能体 9 个中保留 7 个" in chinese and "自动模式选择了" in chinese


def test_evidence_that_changed_nothing_says_so_and_a_trace_without_any_shows_nothing() -> None:
    text = views.experience_lines(stored(ExperienceEvent("comparison", (Tally("agent", 1, 3),))))
    assert "the mode was not changed" in text and "in this order" not in text
    assert views.experience_lines(stored(None)) == ""


def test_the_table_of_what_was_learned() -> None:
    rows = [TableRow("comparison", "agent", 3, 4), TableRow("single", "workflow", 0, 2, "products/<b>battery</b>")]
    table = views.experience_table(rows)
    assert "| comparison | – | agent | 3 of 4 kept |" in table
    assert "| single question | products/&lt;b&gt;battery&lt;/b&gt; | workflow | 0 of 2 kept |" in table
    assert "Nothing learned yet" in views.experience_table([])
    assert "RAGAPP_PROCEDURAL__ENABLED" in views.experience_table(None)
