"""The load benchmark reads what a browser would see in each streamed update: the evidence, the place in line
(beside a step's title), the answer's first words."""

from __future__ import annotations

from ragbench.bench.load import Request, read_update


def _step(title: str, log: str = "") -> dict[str, object]:
    return {"role": "assistant", "metadata": {"title": title, "log": log, "status": "pending"}, "content": ""}


def test_an_update_shows_the_place_in_line_then_the_evidence_then_the_answer() -> None:
    request = Request(0, "q")
    earlier = [{"role": "user", "content": "old"}, {"role": "assistant", "content": "old answer"}]
    chat = [*earlier, {"role": "user", "content": [{"type": "text", "text": "q"}]}]
    read_update(request, [*chat, _step("🧭 Choosing where to look", "⏳ Waiting: 2 answers ahead of yours")], 1.0)
    read_update(request, [*chat, _step("✍️ Writing the answer", "⏳ Waiting: 1 answer ahead of yours")], 4.0)
    assert (request.max_ahead, request.queued_from, request.queued_s) == (2, 1.0, 3.0)
    assert request.first_words_s is None  # the earlier turn's answer is not this one's
    evidence = {"role": "assistant", "content": [{"type": "text", "text": "📌 From the documents · …"}]}
    read_update(request, [*chat, _step("✍️ Writing the answer", "📖 Reading…"), evidence], 5.0)
    answer = {"role": "assistant", "content": [{"type": "text", "text": "Every 14 days [1]."}]}
    read_update(request, [*chat, _step("✍️ Writing the answer"), evidence, answer], 9.0)
    assert (request.evidence_s, request.first_words_s, request.answer) == (5.0, 9.0, "Every 14 days [1].")
