"""An answer's confidence from its checks, on hand-made passages: a neighbouring fact, a bare value, a citation
with no answer, a yes/no, a paraphrase. The sentence scorer here is a fixed table (the reranker's own scores
are tested with the shipped model in tests/integration/test_answer_confidence.py), and the calibrator a
hand-set one that weighs the checks (the shipped one is fitted: tests/unit/test_calibrator.py)."""

from __future__ import annotations

from collections.abc import Sequence

from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.qa.answer_check import checked_answer, composed
from ragapp.qa.calibrator import Calibrator, Logistic
from ragapp.qa.confidence import assess
from ragapp.qa.grounding import check_support

PASSAGE = (
    "The default pointer kind is unique. "
    "A pointer of kind ptr is mapped to Com.opaque. "
    "Version 2.4 added big arrays; version 2.5 added the fortran attribute."
)
ON_TOPIC = {"The default pointer kind is unique.": 0.9}  # what the question is about; every other sentence: 0.01


# P(right) from the checks alone: on the asked sentence, agreeing with the quote and fitting the question.
WEIGHTS = {"on_topic": 4.0, "agrees": 2.0, "fits": 3.0, "unsupported": -3.0, "echoed": -6.0}
CALIBRATOR = Calibrator(
    {"free": Logistic(tuple(WEIGHTS), (0.0,) * 5, (1.0,) * 5, tuple(WEIGHTS.values()), -5.0, 0.5, 0.9)}
)


def scorer(question: str, sentences: Sequence[str]) -> list[float | None]:
    return [ON_TOPIC.get(s.strip(), 0.01) for s in sentences]


def confidence(question: str, reply: str, quote: str | None = None) -> tuple[str, dict[str, bool]]:
    support = check_support(reply, [PASSAGE])
    result = assess(question, reply, support, [PASSAGE], quote, scorer, CALIBRATOR)
    return result.level, {c.check: c.passed for c in result.checks}


def test_a_supported_fitting_answer_on_the_asked_sentence_is_high() -> None:
    level, checks = confidence(
        "Which pointer kind is assumed by default?", "It is unique [1].", quote="The default pointer kind is unique."
    )
    assert level == "high" and checks == {"supported": True, "fits": True, "agrees": True, "on_topic": True}


def test_the_neighbouring_fact_disagrees_with_the_quote_and_rests_off_topic() -> None:
    level, checks = confidence(
        "Which pointer kind is assumed by default?",
        "A ptr pointer becomes Com.opaque [1].",  # true, in the passage, and not the answer
        quote="The default pointer kind is unique.",
    )
    assert level == "low" and not checks["agrees"] and not checks["on_topic"] and checks["supported"]


def test_the_other_version_from_the_same_line_disagrees_with_the_quote() -> None:
    level, checks = confidence(
        "Which version added the fortran attribute?",
        "Version 2.4 [1].",
        quote="version 2.5 added the fortran attribute.",
    )
    assert not checks["agrees"] and level != "high"


def test_a_citation_where_the_value_belongs_is_low() -> None:
    level, checks = confidence("Which type is a ptr pointer mapped to?", "A ptr pointer is mapped to [1].")
    assert level == "low" and not checks["fits"]


def test_a_bare_value_of_the_wrong_kind_is_low() -> None:
    level, checks = confidence("How many pointer kinds are there?", "Com.opaque [1]")
    assert level == "low" and not checks["fits"]


def test_a_yes_no_question_needs_a_yes_or_no() -> None:
    assert not confidence("Is unique the default pointer kind?", "Com.opaque [1]")[1]["fits"]
    assert confidence("Is unique the default pointer kind?", "Yes, the default is unique [1].")[1]["fits"]


def test_a_chinese_what_question_asks_no_yes_or_no() -> None:
    """The 么 of "叫什么？" is no yes/no particle: a name answers it, and no reason says a yes/no is missing."""
    passage = "这个别名使用的配置文件是 ~/.quiltrc-dpkg。"
    reply = "~/.quiltrc-dpkg [1]"
    result = assess("这个别名用的配置文件叫什么？", reply, check_support(reply, [passage]), [passage])
    fits = next(c for c in result.checks if c.check == "fits")
    assert fits.passed and not any(s.code == "confidence.kind_missing" for s in fits.said)


def test_a_paraphrased_question_is_judged_on_the_sentence_the_answer_rests_on() -> None:
    # Few words shared with the question; the scorer, not word overlap, says the sentence is the one asked about.
    level, checks = confidence("If I say nothing about it, what kind do my pointers get?", "unique [1]")
    assert checks["on_topic"] and checks["fits"]
    assert level == "medium"  # no quote to agree with: short of high


def test_the_answer_event_carries_its_confidence_and_an_echo_is_low() -> None:
    kept = [RetrievedChunk(Chunk("d1-0", "d1", 0, PASSAGE, "idl.pdf", page=9), 1.0, {}, {})]
    asked = "Which pointer kind is assumed by default?"
    event = checked_answer(asked, "unique [1]", kept, scorer=scorer, calibrator=CALIBRATOR)
    assert event.confidence is not None and event.confidence.level in ("medium", "high")
    assert event.confidence.probability is not None and dict(event.confidence.signals)["on_topic"] == 0.9
    echo = checked_answer(asked, "The pointer kind [1]", kept, scorer=scorer, calibrator=CALIBRATOR)
    assert echo.confidence is not None and echo.confidence.level == "low"
    refused = checked_answer(asked, "It is 42 [1].", kept, scorer=scorer, calibrator=CALIBRATOR)
    assert refused.abstained and refused.confidence is None  # a refusal carries no confidence


def checked(question: str, reply: str) -> object:
    kept = [RetrievedChunk(Chunk("c1", "d", 0, PASSAGE, "idl.html"), 0.5, {}, {})]
    return checked_answer(question, reply, kept, scorer=scorer, calibrator=CALIBRATOR)


def test_parts_answered_one_by_one_are_put_together_in_order_with_their_citations() -> None:
    parts = ["Which pointer kind is assumed by default?", "Which version added big arrays?"]
    answers = [checked(parts[0], "The default is unique [1]."), checked(parts[1], "Version 2.4 added them [1].")]
    answer = composed(" ".join(parts), parts, answers)  # type: ignore[arg-type]

    assert answer.text == "The default is unique [1].\n\nVersion 2.4 added them [1]."
    assert not answer.abstained and answer.grounded
    (citation,) = answer.citations  # both parts cite passage 1: one citation, both sentences highlighted
    assert citation.number == 1 and len(citation.highlights) == 2
    levels = [a.confidence.level for a in answers]  # type: ignore[attr-defined]
    assert levels == ["medium", "low"] and answer.confidence is not None and answer.confidence.level == "low"
    assert {c.detail.split(":")[0] for c in answer.confidence.checks} == {"part 1", "part 2"}


def test_a_part_not_in_the_passages_is_named_and_only_all_parts_refused_is_a_refusal() -> None:
    parts = ["Which pointer kind is assumed by default?", "Which version added the cuda attribute?"]
    answered = checked(parts[0], "The default is unique [1].")
    refused = checked(parts[1], "Version 3.1 added it [1].")
    assert refused.abstained  # type: ignore[attr-defined]

    answer = composed("both?", parts, [answered, refused])  # type: ignore[list-item]
    assert answer.text == "The default is unique [1].\n\nThe documents do not say: " + parts[1]
    assert not answer.abstained and answer.confidence is not None and answer.confidence.level == "low"
    assert composed("both?", parts, [refused, refused]) is refused  # type: ignore[list-item]


def test_a_part_answered_with_an_earlier_parts_words_is_not_sure() -> None:
    """The small model copies its last answer for the next part ("file-rc [1]" twice): the copy answers nothing
    of its own, so that part is "not sure" and the whole answer low, whatever each check said of it alone."""
    parts = ["Which pointer kind is assumed by default?", "Which pointer kind does the IDL use for outputs?"]
    first, copy = checked(parts[0], "The default is unique [1]."), checked(parts[1], "The default is  Unique [1]")
    assert not copy.not_sure  # type: ignore[attr-defined]
    answer = composed(" ".join(parts), parts, [first, copy])  # type: ignore[list-item]
    assert answer.text == "The default is unique [1].\n\nNot sure: " + parts[1]
    assert answer.confidence is not None and answer.confidence.level == "low"


def test_a_low_answer_is_withheld_as_not_sure_the_likeliest_passage_first() -> None:
    from ragapp.qa.answer_check import withheld
    from ragapp.qa.citations import renumbered
    from ragapp.qa.prompts import NOT_SURE_EN
    from ragapp.qa.select import Candidate, Pick

    other = RetrievedChunk(Chunk("c0", "d", 0, "Com.opaque is an abstract type.", "idl.html"), 0.9, {}, {})
    kept = [other, RetrievedChunk(Chunk("c1", "d", 1, PASSAGE, "idl.html"), 0.5, {}, {})]
    asked = "How many pointer kinds are there?"
    reply = "A ptr pointer is mapped to Com.opaque [2]."  # no number where "how many" asks for one: low
    low = checked_answer(asked, reply, kept, scorer=scorer, calibrator=CALIBRATOR)
    assert low.confidence is not None and low.confidence.level == "low"

    said = withheld(asked, low, kept, None)
    assert said.not_sure and said.text == NOT_SURE_EN and said.guess == low.text
    assert said.citations[0].number == 2  # the passage the guess cites, as none was picked
    picked = withheld(asked, low, kept, Pick(Candidate(1, "Com.opaque is an abstract type.")))
    assert [c.number for c in picked.citations] == [1, 2]  # the picked sentence's passage first, then the guess's
    assert renumbered(picked).guess == "A ptr pointer is mapped to Com.opaque [2]."  # its markers follow them

    default = "Which pointer kind is assumed by default?"
    fine = checked_answer(default, "It is unique [2].", kept, scorer=scorer, calibrator=CALIBRATOR)
    assert withheld(default, fine, kept, None) is fine  # stated as it is
