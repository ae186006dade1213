"""Choosing the OCR engine per page and re-spacing PP-OCRv4's English lines with Tesseract's reading of the same
place (no model: the readings are written here); WER and identifier counting of the OCR benchmark."""

from __future__ import annotations

from ragapp.models.ocr import OcrLine, OcrText, is_latin, respace
from ragapp.models.tesseract import TessLine, TessPage
from ragbench.ocr import identifier_share, wer, words


def test_a_confident_page_without_doubtful_words_is_latin() -> None:
    line = TessLine("The record moves back.", (0, 0, 100, 10), 0.9)
    assert is_latin(TessPage((line,), 0.88, 0.02))
    assert not is_latin(TessPage((line,), 0.45, 0.6))  # Chinese read as English
    assert not is_latin(TessPage((line,), 0.8, 0.3))  # confident on average, a third of it doubtful
    assert not is_latin(TessPage((), 0.0, 1.0))  # nothing read


def test_english_lines_take_tesseracts_spacing_and_chinese_lines_stay() -> None:
    read = OcrText(
        "第四章借阅与归还\nTheclerkscansthelabel.\nRuncatalogue-sync--full",
        0.97,
        (
            OcrLine("第四章借阅与归还", (10, 10, 300, 40)),
            OcrLine("Theclerkscansthelabel.", (10, 50, 400, 80)),
            OcrLine("Runcatalogue-sync--full", (10, 90, 400, 120)),
        ),
    )
    tess = TessPage(
        (
            TessLine("HERE SHEA", (10, 12, 300, 38), 0.3),
            TessLine("The clerk scans", (10, 52, 200, 78), 0.9),
            TessLine("the label.", (210, 52, 400, 78), 0.9),
            TessLine("Something else entirely", (10, 92, 400, 118), 0.9),  # not the same letters: kept as read
        ),
        0.6,
        0.4,
    )
    out = respace(read, tess)
    assert out.text.splitlines() == ["第四章借阅与归还", "The clerk scans the label.", "Runcatalogue-sync--full"]
    assert [line.box for line in out.lines] == [line.box for line in read.lines]
    assert out.confidence == read.confidence


def test_word_error_rate_counts_run_together_words() -> None:
    truth = "pointer to the structure that you want"
    assert wer(truth, truth) == 0
    assert wer("pointertothestructure that you want", truth) == 4 / 7  # one wrong word for four
    assert words("“quoted” — • expres-\nsions 第四章") == ['"quoted"', "expressions", "第", "四", "章"]


def test_identifiers_count_only_when_read_whole() -> None:
    truth = "Call asn1_create_element(node) in version 1.5.23 of LoanPolicy.maxRenewals."
    assert identifier_share(truth, truth) == (3, 3)
    assert identifier_share("Call asnl_create_element(node) in version 1.5.23 of LoanPolicy.max Renewals.", truth) == (
        1,
        3,
    )


def test_a_fact_quoted_right_is_found_in_a_passage_ocr_misread() -> None:
    from ragapp.qa.grounding import check_support

    passage = "Deletes the structure. Call asnl_delete_structure(asnl node *structure) at the end of the program."
    answer = "Call asn1_delete_structure on asn1_node [1]."
    (as_text,) = check_support(answer, [passage])
    (as_scan,) = check_support(answer, [passage], ocr=[True])
    assert as_text.status == "unsupported"  # a text layer says asnl: the answer's asn1 is not in it
    assert as_scan.status == "supported" and as_scan.passages == (1,)
