"""Evidence quotes end where a sentence ends: a sentence the page cut off is shortened to a clause with an
ellipsis (or not quoted), a sentence set over line breaks is quoted whole, a long one is shortened at a boundary;
English and Chinese (``ragapp.core.quotes``, used by ``evidence_for`` and the quote above a checked answer)."""

from __future__ import annotations

from ragapp.core.events import AnswerEvent, EvidenceEvent
from ragapp.core.quotes import quote
from ragapp.core.types import Chunk, Citation, RetrievedChunk
from ragapp.qa.answer_check import checked_answer, evidence_for
from ragapp.ui.render import TurnView
from tests.text import english

# The page ended in the middle of the last sentence; the rest is on the next page (another chunk).
CUT = "The mop pad is washable at 60 degrees. Do not use the mop on carpets, rugs or on a very\ndark"
WRAPPED = (
    "Charging is automatic. The battery management system stops charging at 45 degrees Celsius and resumes\n"
    "when the robot\nhas cooled down. Clean the side brush every month."
)


def kept(*texts: str) -> list[RetrievedChunk]:
    chunks = [Chunk(f"d{i}-0000", f"d{i}", 0, t, f"doc{i}.pdf", page=i + 1) for i, t in enumerate(texts)]
    return [RetrievedChunk(c, 1.0, {}, {}) for c in chunks]


def test_a_sentence_the_page_cut_off_is_quoted_to_its_last_clause() -> None:
    evidence = evidence_for("Can I use the mop on carpets and rugs?", kept(CUT))
    assert evidence is not None
    assert evidence.quote == "The mop pad is washable at 60 degrees. Do not use the mop on carpets …"
    assert CUT.endswith(evidence.citation.highlights[0])  # the whole sentence is still marked in the passage
    assert quote("Do not use the mop on a very\ndark", "It is washable. Do not use the mop on a very\ndark") is None


def test_a_chinese_sentence_cut_off_ends_at_its_last_clause_or_sentence() -> None:
    passage = "拖布可以水洗。拖布不能用于地毯，也不能用于颜色很深的\n地板和"
    evidence = evidence_for("拖布能用于地毯吗？", kept(passage))
    assert evidence is not None and evidence.quote == "拖布可以水洗。拖布不能用于地毯…"
    assert quote(
        "电池续航九十分钟。充电需要两个小时\n请在使用前充满", "电池续航九十分钟。充电需要两个小时\n请在使用前充满"
    ) == ("电池续航九十分钟。…")


def test_a_supporting_sentence_set_over_line_breaks_is_quoted_whole() -> None:
    reply = "The battery management system stops charging at 45 degrees Celsius [1]."
    answer = checked_answer("When does the battery stop charging?", reply, kept(WRAPPED))
    (citation,) = answer.citations
    whole = WRAPPED[WRAPPED.index("The battery") : WRAPPED.index("down.") + 5]
    assert citation.highlights == (whole,)  # not cut at its first line break
    view = TurnView()
    view.apply(EvidenceEvent("Charging is automatic.", Citation(1, citation.chunk, None, ("Charging is automatic.",))))
    view.apply(AnswerEvent(answer.text, answer.citations, grounded=True, support=answer.support))
    above = str(english(view.messages())[0].content)
    assert above.startswith("📌 From the documents")
    assert above.endswith(f"<mark>{' '.join(whole.split())}</mark>")


def test_a_long_sentence_is_shortened_at_a_boundary_never_mid_phrase() -> None:
    clauses = [f"the {n}th setting changes how the robot cleans the {n}th room" for n in range(4, 20)]
    sentence = "When it starts, " + ", ".join(clauses) + "."
    evidence = evidence_for("How does the 7th setting change the cleaning?", kept(sentence))
    assert evidence is not None and len(evidence.quote) <= 402 and evidence.quote.endswith(" …")
    assert sentence.startswith(evidence.quote.removesuffix(" …") + ",")  # the cut is where a clause ended
    assert quote("It lasts 90 minutes.", "It lasts 90 minutes.") == "It lasts 90 minutes."
    assert quote("- Clean the side brush", "Monthly care.\n- Clean the side brush") == "- Clean the side brush"
