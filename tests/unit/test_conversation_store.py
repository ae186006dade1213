"""The conversation store (on SQLite and on PostgreSQL): kept per owner as shown, listed latest first, renamed,
deleted, bounded; an unreadable row is skipped, never raised."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragapp.store.conversations import TITLE_CHARS, ConversationStore, title_from

MESSAGES = [
    {"role": "user", "content": "How long does the battery last?"},
    {"role": "assistant", "content": "90 minutes [1].", "trace_id": "t1"},
    {"role": "assistant", "content": "The battery…", "metadata": {"title": "📄 [1] a.md"}, "doc_id": "d1"},
]


Target = Callable[[str], Any]


def test_a_conversation_comes_back_exactly_and_only_to_its_owner(store_target: Target) -> None:
    store = ConversationStore(store_target("conversations")).start()
    cid = store.save("ann", None, "How long does the battery last?", MESSAGES, {"summary": "s", "history": []})
    found = store.get("ann", cid)
    assert found is not None and list(found.messages) == MESSAGES and found.memory["summary"] == "s"
    assert found.title == "How long does the battery last?"
    assert store.get("bob", cid) is None and store.list("bob") == []
    assert store.rename("bob", cid, "mine now") is False and store.delete("bob", cid) is False
    # Bob "saving" onto Ann's id makes a conversation of his own; Ann's is untouched.
    other = store.save("bob", cid, "hi", [{"role": "user", "content": "hi"}], {})
    assert other != cid and list(store.get("ann", cid).messages) == MESSAGES  # type: ignore[union-attr]
    store.close()


def test_a_conversation_says_when_it_was_started_and_last_updated(store_target: Target) -> None:
    """For its export (the dates under its title): both kept, the start through every later save."""
    store = ConversationStore(store_target("conversations")).start()
    cid = store.save("ann", None, "first question", MESSAGES[:1], {})
    first = store.get("ann", cid)
    assert first is not None and first.created_at == first.updated_at and first.created_at.startswith("20")
    store.save("ann", cid, "first question", MESSAGES, {})
    again = store.get("ann", cid)
    assert again is not None and again.created_at == first.created_at and again.updated_at >= first.updated_at
    store.close()


def test_saving_again_updates_the_same_conversation_and_keeps_a_rename(store_target: Target) -> None:
    store = ConversationStore(store_target("conversations")).start()
    cid = store.save("ann", None, "first question", MESSAGES[:1], {})
    assert store.rename("ann", cid, "  Battery   questions ")
    assert store.save("ann", cid, "first question", MESSAGES, {}) == cid
    (summary,) = store.list("ann")
    assert summary.title == "Battery questions" and summary.id == cid
    assert len(store.get("ann", cid).messages) == 3  # type: ignore[union-attr]
    assert store.delete("ann", cid) and store.list("ann") == [] and store.get("ann", cid) is None
    store.close()


def test_the_list_is_latest_first_and_bounded_per_owner(store_target: Target) -> None:
    store = ConversationStore(store_target("conversations"), max_per_owner=3).start()
    ids = [store.save("ann", None, f"question {i}", MESSAGES[:1], {}) for i in range(5)]
    store.save("bob", None, "bob's", MESSAGES[:1], {})
    listed = [c.id for c in store.list("ann")]
    assert listed == ids[:1:-1]  # the three latest, newest first; the two oldest gone
    assert len(store.list("bob")) == 1
    store.close()


def test_it_survives_a_restart_and_skips_an_unreadable_row(store_target: Target) -> None:
    store = ConversationStore(store_target("conversations")).start()
    good = store.save("ann", None, "kept", MESSAGES, {})
    bad = store.save("ann", None, "broken", MESSAGES, {})
    store._db.execute("UPDATE conversations SET messages = '{not json' WHERE id = ?", (bad,))
    store.close()
    again = ConversationStore(store_target("conversations")).start()
    assert again.get("ann", bad) is None  # logged, not raised
    assert list(again.get("ann", good).messages) == MESSAGES  # type: ignore[union-attr]
    again.close()


def test_titles_are_one_line_and_bounded() -> None:
    assert title_from("  a\nb \t c ") == "a b c"
    assert len(title_from("x" * 500)) == TITLE_CHARS and title_from("x" * 500).endswith("…")
    assert title_from("   ") == "New chat"


def test_a_renamed_conversation_moves_up_when_saved_again(store_target: Target) -> None:
    store = ConversationStore(store_target("conversations"), max_per_owner=2).start()
    first = store.save("ann", None, "first", MESSAGES[:1], {})
    second = store.save("ann", None, "second", MESSAGES[:1], {})
    store._db.execute("UPDATE conversations SET updated_at = '2000-01-01T00:00:00+00:00'")
    assert store.save("ann", first, "first", MESSAGES, {}) == first  # the one just continued comes first
    assert [c.id for c in store.list("ann")] == [first, second]
    third = store.save("ann", None, "third", MESSAGES[:1], {})  # the bound drops the least recent: second
    assert [c.id for c in store.list("ann")] == [third, first]
    store.close()
