"""The budget split measurement on hand-built questions and passages: the conversations it builds, and the
prompt it fits under the budget table and as before it."""

from __future__ import annotations

from ragapp.config import Settings
from ragapp.core.types import Chunk, RetrievedChunk
from ragbench.answers.answer_set import Evidence, Question, Turn
from ragbench.budget_split import SPLITS, Asked, fit_one, history_for, settings_for, summarise

TEXT = "The cache holds 2000 pages. Pages are 4096 bytes. The header is 100 bytes. The lock byte is at 1073741824. "


def _asked(n: int, turns: tuple[Turn, ...] = ()) -> Asked:
    chunks = [RetrievedChunk(Chunk(f"c{n}-{i}", "app-doc", i, TEXT * 2, "f.html", page=i + 1), 0.5, {}, {})
              for i in range(5)]  # fmt: skip
    q = Question(f"q{n}", "fact", "en", f"How large is a page ({n})?", ("4096",), (Evidence("doc", page=5),), turns)
    return Asked(q, chunks, {"app-doc": "doc"})


def test_a_conversation_is_the_three_questions_before_then_the_questions_own_turns() -> None:
    asked = [_asked(n) for n in range(4)] + [_asked(4, (Turn("Which file?", "The database file."),))]
    assert history_for(asked, 0, "in a conversation") == [] == history_for(asked, 3, "as asked")
    turns = history_for(asked, 4, "in a conversation")
    assert [t.content for t in turns[::2]] == [a.question.question for a in asked[1:4]] + ["Which file?"]
    assert turns[1].content == (TEXT * 2)[:300] and turns[-1].content == "The database file."


def test_the_budget_table_keeps_the_evidence_where_the_split_before_it_dropped_it() -> None:
    item = _asked(0)
    base = Settings()
    small_current = fit_one(settings_for(base, 1024, None), item, [], legacy=True)
    small_seed = fit_one(settings_for(base, 1024, SPLITS["seed"]), item, [], legacy=False)
    assert small_current.dropped and not small_current.evidence  # the last passage did not fit
    assert small_seed.evidence and small_seed.answer and small_seed.passages > small_current.passages
    large = fit_one(settings_for(base, 4096, SPLITS["seed"]), item, [], legacy=False)
    assert large.passages == 5 and not large.dropped and not large.condensed
    summary = summarise([small_current, small_seed])
    assert summary["evidence in prompt"] == 0.5 and summary["questions"] == 2
