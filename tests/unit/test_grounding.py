"""The support check and citation mapping on hand-made passages: no model, no store."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ragapp.core.facts import PassageFacts, key_facts
from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.qa.answer_check import checked_answer, echoes, evidence_for
from ragapp.qa.grounding import (
    check_support,
    core_unsupported,
    is_pointer,
    model_refused,
    split_sentences,
    strip_markers,
    without_stray_end,
)
from ragapp.qa.prompts import UNSUPPORTED_EN, UNSUPPORTED_ZH

PASSAGES = [
    "Error E07: a cliff sensor is blocked or dirty. Wipe the cliff sensors with a dry cloth.",
    "The Alpha battery lasts 90 minutes on a full charge. The Alpha robot weighs 2.1 kg.",
    "The Beta battery lasts 150 minutes. The Beta robot weighs 3.4 kg.",
    "流明 V1 充满电后最长可工作约 120 分钟。充电时间约 5 小时。",
]


def kept(texts: list[str] = PASSAGES) -> list[RetrievedChunk]:
    chunks = [Chunk(f"d{i}-0000", f"d{i}", 0, t, f"doc{i}.pdf", page=i + 1) for i, t in enumerate(texts)]
    return [RetrievedChunk(c, 1.0, {}, {}) for c in chunks]


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("E07 means the cliff sensor is dirty", ("e07",)),
        ("充满电后可工作约 １２０ 分钟", ("120",)),  # full-width digits
        ("It costs 1,200 dollars after v2.5.1", ("2.5.1", "1200")),
        (
            "Set --max-tokens in RAGAPP_LLM__N_CTX, then run ./run.sh",
            ("--max-tokens", "ragapp_llm__n_ctx", "run.sh", "./run.sh"),
        ),
        ("Call TraceBuilder from `make test` in “Kiss and Tell”", ("make test", "kiss and tell", "tracebuilder")),
        ("Sure, happy to help.", ()),
        ("Run fasta36 -z 21 or camlidl -thread; a non-zero value", ("fasta36", "-z", "21", "-thread")),
        ("FASTA is under the GPL; GPUs need CUDA. OK", ("fasta", "gpl", "gpu", "cuda")),  # acronyms, plural too
        ("1. Open the dock", ()),  # a list number is not a fact
    ],
)
def test_key_facts(sentence: str, facts: tuple[str, ...]) -> None:
    assert set(key_facts(sentence)) == set(facts)


def test_passage_numbers_are_normalised() -> None:
    found = PassageFacts.of("Firmware v2.5.0 costs 1,200; runs ９０ minutes")
    assert {"2.5", "2.5.0", "1200", "90"} <= found.numbers
    assert found.has("90") and not found.has("9")


def test_sentences_keep_their_markers_and_join_back() -> None:
    text = "Cliff sensors [2]. Version 2.5 is out [1].\n- step one\n续航120分钟[4]。保修一年【1】。"
    pieces = split_sentences(text)
    assert "".join(pieces) == text
    assert pieces == [
        "Cliff sensors [2]. ",
        "Version 2.5 is out [1].\n",
        "- step one\n",
        "续航120分钟[4]。",
        "保修一年【1】。",
    ]


def test_a_right_answer_with_a_wrong_marker_cites_the_passage_that_says_it() -> None:
    (sentence,) = check_support("E07 means a cliff sensor is blocked or dirty [2].", PASSAGES)
    assert sentence.status == "supported"
    assert (sentence.cited, sentence.passages) == ((2,), (1,))
    assert sentence.text == "E07 means a cliff sensor is blocked or dirty [1]."
    assert sentence.evidence == ("Error E07: a cliff sensor is blocked or dirty.",)


def test_a_missing_marker_is_added() -> None:
    (sentence,) = check_support("The Beta battery lasts 150 minutes.", PASSAGES)
    assert sentence.text == "The Beta battery lasts 150 minutes [3]."


def test_a_number_in_no_passage_is_unsupported_and_loses_its_marker() -> None:
    support = check_support("The Alpha battery lasts 90 minutes [2]. In eco mode it lasts 200 minutes [2].", PASSAGES)
    assert [s.status for s in support] == ["supported", "unsupported"]
    assert support[1].missing == ("200",) and support[1].text == "In eco mode it lasts 200 minutes."
    assert not core_unsupported(support)  # partly supported: the answer stands, the sentence is marked


def test_an_acronym_no_passage_names_is_unsupported() -> None:
    # the 1.5B model "knows" a licence the manual never states
    support = check_support("The Alpha robot is distributed under the GPL [2].", PASSAGES)
    assert support[0].status == "unsupported" and support[0].missing == ("gpl",)


def test_facts_spread_over_passages_are_supported_together() -> None:
    (sentence,) = check_support("Alpha lasts 90 minutes, Beta 150 minutes [1].", PASSAGES)
    assert sentence.status == "supported" and sentence.passages == (2, 3)
    assert sentence.text == "Alpha lasts 90 minutes, Beta 150 minutes [2][3]."


def test_a_fact_without_the_words_around_it_is_not_support() -> None:
    (sentence,) = check_support("The warranty covers 90 days of repairs [2].", PASSAGES)
    assert sentence.status == "unsupported" and sentence.missing == ()  # 90 is there, but not about a warranty


def test_an_initial_or_an_abbreviation_does_not_end_a_sentence() -> None:
    # "John M. Chambers [1]" cut at "M." came back as "John M [1]. Chambers [1]" (a marker fixed onto each half)
    assert split_sentences("John M. Chambers [1]. He won it, e.g. in 1998.") == [
        "John M. Chambers [1]. ",
        "He won it, e.g. in 1998.",
    ]
    support = check_support("S was designed by John M. Chambers [1].", ["S was designed by John M. Chambers."])
    assert [s.text for s in support] == ["S was designed by John M. Chambers [1]."]


def test_chinese_sentences_are_checked_with_chinese_words() -> None:
    support = check_support("充满电后最长可工作约 120 分钟 [1]。充电需要 8 小时 [4]。", PASSAGES)
    assert [s.status for s in support] == ["supported", "unsupported"]
    assert support[0].text == "充满电后最长可工作约 120 分钟[4]。"
    assert support[1].missing == ("8",)


def test_sentences_without_key_facts_are_neutral_and_kept_as_written() -> None:
    support = check_support("Sure. Clean them [1][2]; see also [1, 3]. [99] !!!", PASSAGES)
    assert {s.status for s in support} == {"neutral"}
    assert "".join(s.text for s in support) == "Sure. Clean them [1][2]; see also [1, 3]. [99] !!!"
    assert not core_unsupported(support)


def test_the_core_answer_unsupported_means_abstaining() -> None:
    assert core_unsupported(check_support("The battery lasts 300 minutes [2]. Charge it often.", PASSAGES))
    # the first factual sentence wrong, the only other right: at most half supported
    assert core_unsupported(check_support("It lasts 300 minutes [2]. The Alpha weighs 2.1 kg [2].", PASSAGES))
    assert not core_unsupported(check_support("The Alpha weighs 2.1 kg [2]. It lasts 300 minutes.", PASSAGES))


def test_the_model_saying_the_documents_do_not_say_counts_as_abstaining() -> None:
    assert model_refused(check_support("The knowledge base does not contain this information.", PASSAGES))
    assert model_refused(check_support("知识库中没有相关内容。", PASSAGES))
    assert not model_refused(check_support("The Alpha weighs 2.1 kg [2].", PASSAGES))


def test_checked_answer_refuses_an_unsupported_answer_and_shows_the_closest_passages() -> None:
    event = checked_answer("How long does it last?", "The battery lasts 300 minutes [2].", kept())
    assert (event.text, event.grounded, event.abstained) == (UNSUPPORTED_EN, False, True)
    assert [c.number for c in event.citations] == [1, 2, 3]
    assert event.citations[1].highlights == ("The Alpha battery lasts 90 minutes on a full charge.",)
    assert event.support[0].missing == ("300",)
    chinese = checked_answer("它能用多久？", "大约 300 分钟 [4]。", kept())
    assert (chinese.text, chinese.abstained) == (UNSUPPORTED_ZH, True)


def test_checked_answer_fixes_markers_and_highlights_the_supporting_sentence() -> None:
    reply = "The Alpha robot weighs 2.1 kg [3]. Eco mode adds 40 minutes [2]."
    event = checked_answer("How heavy is the Alpha?", reply, kept())
    assert event.text == "The Alpha robot weighs 2.1 kg [2]. Eco mode adds 40 minutes."
    assert (event.grounded, event.abstained) == (True, False)
    (citation,) = event.citations
    assert citation.number == 2 and citation.chunk.page == 2
    assert citation.highlights == ("The Alpha robot weighs 2.1 kg.",)
    assert [s.status for s in event.support] == ["supported", "unsupported"]


def test_a_fact_the_model_read_in_the_passage_heading_supports_the_answer() -> None:
    """The prompt shows each passage's heading beside its number; a list under "Version 2.5.0" never repeats
    the version, and the answer taken from the heading is not refused (nor highlighted: the text lacks it)."""
    notes = Chunk(
        "n-0001", "n", 1, "- New: pet mode. The robot cleans around pet bowls.", "notes.md", heading="Version 2.5.0"
    )
    other = Chunk("n-0002", "n", 2, "- New: quiet hours for the dock.", "notes.md", heading="Version 2.6.0")
    event = checked_answer(
        "Which version added pet mode?",
        "Version 2.5.0 [1]",
        [RetrievedChunk(notes, 1.0, {}, {}), RetrievedChunk(other, 0.5, {}, {})],
    )
    assert not event.abstained
    assert event.text == "Version 2.5.0 [1]"
    assert [c.chunk.chunk_id for c in event.citations] == ["n-0001"]
    assert event.citations[0].highlights == ()
    refused = checked_answer("Which version added pet mode?", "Version 2.7.0 [1]", [RetrievedChunk(notes, 1.0, {}, {})])
    assert refused.abstained


def test_a_chinese_answer_over_an_english_passage_is_judged_by_its_facts() -> None:
    """No Chinese word can occur in an English manual: the key facts decide, and a wrong one is still refused."""
    manual = Chunk("m-0001", "m", 1, "The default SSH port is 22; change it with the Port option.", "manual.pdf")
    kept = [RetrievedChunk(manual, 1.0, {}, {})]
    event = checked_answer("SSH 默认端口是多少？", "默认端口是 22 [1]。", kept)
    assert not event.abstained and event.support[0].status == "supported"
    assert checked_answer("SSH 默认端口是多少？", "默认端口是 2222 [1]。", kept).abstained


def test_a_reply_that_only_repeats_the_question_is_replaced_by_the_passage_sentence_quoted() -> None:
    manual = [
        "The Beta robot weighs 3.4 kg.",
        "val initialize : unit -> unit\nInitialize the COM library. Must be called once\nbefore using any "
        "function of this module.",
    ]
    question = "Which function of the Com module must be called once before using any other function?"
    event = checked_answer(question, "The function that must be called once before using any function is [2].",
                           kept(manual))  # fmt: skip
    assert event.text.startswith("The documents say: “val initialize : unit -> unit Initialize the COM library.")
    assert event.text.endswith("function of this module.” [2]")
    assert event.grounded and not event.abstained and [s.status for s in event.support] == ["supported"]
    (citation,) = event.citations
    assert citation.number == 2 and citation.highlights == (manual[1],)  # the passage's own text: it highlights
    # An answer that says something is left to the support check, as before.
    assert checked_answer(question, "Com.initialize [2].", kept(manual)).text == "Com.initialize [2]."


def test_a_chinese_echo_is_quoted_in_chinese_and_one_with_nothing_to_quote_is_kept() -> None:
    event = checked_answer("流明 V1 充满电后的工作时间是多少？", "流明 V1 充满电后的工作时间是 [4]。", kept())
    assert event.text.startswith("文档原文：“流明 V1 充满电后最长可工作约 120 分钟。") and event.text.endswith("[4]")
    # No passage shares two of the question's words: nothing better to show than the check's verdict.
    assert checked_answer("Who painted it?", "It was painted [1].", kept()).text == "It was painted [1]."


def test_only_a_reply_that_adds_nothing_counts_as_an_echo() -> None:
    question = "With enum e { A = 1, B = 2, C = 4 }, what ML value does the C integer 6 become?"
    assert echoes(question, "6 [1]") and echoes(question, "") and echoes(question, "The ML value is [1].")
    assert not echoes(question, "The ML value that the C integer 6 becomes is [B; C]. [1]")  # the question's words
    assert not echoes(question, "It becomes [B; C] [1].") and not echoes(question, "Xavier Leroy [1]")
    assert echoes("默认字体是哪一种？", "默认字体是 [1]。")
    assert not echoes("Which formed first, Kestrel Run or The Salt Hares?", "Kestrel Run [1].")  # a choice made


def test_sentences_that_only_point_at_the_passages_are_left_out() -> None:
    reply = "The Alpha battery lasts 90 minutes. This is stated in the passage [2] on page 7."
    support = check_support(reply, PASSAGES)
    assert [s.text for s in support] == ["The Alpha battery lasts 90 minutes [2]. "]
    assert is_pointer("这在段落 [4] 中有说明。") and is_pointer("This information can be found in passage [2].")
    assert is_pointer("This is stated in [2].") and not is_pointer("This is given in seconds.")
    assert not is_pointer("It is stated in the documents that the Alpha lasts 90 minutes.")  # a claim
    assert not is_pointer("According to passage [2], the Alpha lasts 90 minutes.")


def test_sentences_that_point_at_the_passages_in_other_words_are_left_out_too() -> None:
    # As a small model pads its answers (debian-blind dev and debian-manuals runs).
    for pointer in (
        "This is stated in both [1] and [2].",
        "It is defined in the context passage [2].",
        "This option is described in [3].",
        "The passage that provides this information is [3].",
    ):
        assert is_pointer(pointer), pointer
    assert not is_pointer("This option is recognized by camlidl and is set by default [5].")
    assert not is_pointer("It holds the value of the last element of the vector [2].")


def test_a_sentence_about_another_code_than_the_questions_is_left_out() -> None:
    """The demo's "What does error code E07 mean?" was answered with E07's meaning, then a quoted release note
    about E12 from a neighbouring passage."""
    passages = [*PASSAGES, "Fixed: the robot could report error E12 by mistake on cold mornings."]
    reply = (
        'Error E07 means a cliff sensor is blocked or dirty [1]. The passage states: "Fixed: the robot could '
        'report error E12 by mistake on cold mornings" [5]. " "'
    )
    question = "What does error code E07 mean on the Lumen V2 Pro?"
    answer = checked_answer(question, reply, kept(passages))
    assert answer.text == "Error E07 means a cliff sensor is blocked or dirty [1]."
    assert [c.number for c in answer.citations] == [1]
    # Kept: a later sentence naming the question's code, or naming no code; and any sentence when the question
    # names none.
    reply = "Error E07 means a cliff sensor is blocked [1]. Wipe the E07 cliff sensors with a dry cloth [1]."
    assert "Wipe the E07" in checked_answer(question, reply, kept()).text
    reply = "Error E07 means a cliff sensor is blocked [1]. Wipe the cliff sensors with a dry cloth [1]."
    assert "Wipe the cliff" in checked_answer(question, reply, kept()).text
    reply = "A cliff sensor is blocked [1]. Error E07 says so [1]."
    assert "E07 says so" in checked_answer("What does a blocked cliff sensor show?", reply, kept()).text


def test_a_stray_quote_at_the_end_is_taken_off() -> None:
    assert without_stray_end('It lasts 90 minutes [2]. " "') == "It lasts 90 minutes [2]."
    assert without_stray_end('It lasts 90 minutes [2]."') == "It lasts 90 minutes [2]."
    assert without_stray_end('The class is "ordered" [1].') == 'The class is "ordered" [1].'
    assert without_stray_end('It says "ordered"') == 'It says "ordered"'


def test_a_first_sentence_supported_by_its_words_is_the_core_too() -> None:
    # No key fact in the first sentence, a wrong one in the second: marked, not refused.
    support = check_support("The cliff sensor is blocked or dirty [1]. Clean it every 30 days.", PASSAGES)
    assert [s.status for s in support] == ["supported", "unsupported"]
    assert not core_unsupported(support)


def test_the_evidence_quote_prefers_the_line_about_what_was_asked_over_the_documents_name() -> None:
    manual = [
        "Troubleshooting and error codes. When a fault occurs, the app shows an error code.",
        "- E07 Cliff sensor error: the cliff sensors are dirty.\nWipe them with a dry cloth.",
        "Lumen V2 Pro User Manual - Page 4 of 4",
    ]
    chunks = [Chunk(f"m-{i:04d}", "m", i, t, "lumen_v2_pro_manual.pdf", page=4) for i, t in enumerate(manual)]
    passages = [RetrievedChunk(c, 1.0, {}, {}) for c in chunks]
    evidence = evidence_for("What does error code E07 mean on the Lumen V2 Pro?", passages)
    assert evidence is not None and evidence.citation.number == 2
    assert evidence.quote == "- E07 Cliff sensor error: the cliff sensors are dirty."
    assert evidence.citation.highlights == ("- E07 Cliff sensor error: the cliff sensors are dirty.",)

    # A scorer (the reranker in the app) chooses among the sentences sharing the question's words.
    def scorer(question: str, sentences: Sequence[str]) -> list[float | None]:
        return [1.0 if "fault" in s else None for s in sentences]

    picked = evidence_for("What does error code E07 mean?", passages, scorer)
    assert picked is not None and picked.citation.number == 1
    assert picked.quote == "Troubleshooting and error codes. When a fault occurs, the app shows an error code."


def test_a_long_quote_is_cut_and_still_highlights() -> None:
    table = "IDL type Caml type " + " ".join(f"row{i} int{i}" for i in range(200))
    evidence = evidence_for("Which IDL type maps to the Caml type int7?", kept([table]))
    assert evidence is not None and evidence.quote.endswith(" …") and len(evidence.quote) <= 402
    assert table.startswith(evidence.citation.highlights[0])


def test_a_new_name_built_from_the_questions_words_is_no_echo_and_an_empty_reply_abstains() -> None:
    question = "Which package contains all precompiled locale data?"
    assert not echoes(question, "locales-all [2]") and echoes(question, "locale data [2]")
    event = checked_answer("How long does the Alpha battery last?", "[2]", kept())
    assert event.abstained and not event.grounded


def test_filler_without_key_facts_does_not_carry_invented_facts() -> None:
    # The first sentence shares some words with passage 2 (0.4) but says nothing; the command is invented.
    reply = "The battery lasts long in every home [2]. Run `alpha --charge-fast` to charge it in 5 minutes."
    support = check_support(reply, PASSAGES)
    assert support[0].status == "neutral" and support[1].status == "unsupported"
    assert core_unsupported(support)


def test_a_sentence_of_plain_words_with_a_wrong_marker_cites_the_passage_that_holds_them() -> None:
    # The model cited [5] for a sentence of passage 1's words (a Chinese answer: no key fact to match); it was
    # left neutral with its wrong marker, so it counted as unsupported and was not judged on topic.
    passages = [
        "维护者：制作并维护软件包的人。正式开发者拥有向官方仓库上传的全部权限，而维护者只有部分上传权限。",
        "上传到仓库之前，请先设置上传工具。",
    ]
    reply = "正式开发者拥有向官方仓库上传的全部权限，而维护者只有部分上传权限 [2]。"
    assert key_facts(strip_markers(reply)) == ()
    (sentence,) = check_support(reply, passages)
    assert sentence.status == "supported" and (sentence.cited, sentence.passages) == ((2,), (1,))
    assert sentence.text == "正式开发者拥有向官方仓库上传的全部权限，而维护者只有部分上传权限[1]。"
    (english,) = check_support("Wipe the cliff sensors with a dry cloth [3].", PASSAGES)
    assert english.status == "supported" and english.passages == (1,)
    # a passage it cites that holds its words stays its citation
    (kept_marker,) = check_support("Wipe the cliff sensors with a dry cloth [1].", PASSAGES)
    assert kept_marker.passages == (1,)
