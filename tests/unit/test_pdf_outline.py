"""A PDF's outline (bookmarks) gives its chunks their section headings: a page splits where a section begins,
each part under its heading path with the number the text gives it, and a part too short to stand alone goes
with the next. Without an outline, the text's own numbered headings do the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragapp.ingest.parsing import parse_file

PAGE_1 = [
    "Chapter 1: Care 1",
    "1 Care",
    "Keep the robot dry and store it between five and thirty degrees at all times.",
    "1.1 Cleaning",
    "Wipe the cliff sensors with a dry cloth once a week, and never use water on them.",
]
PAGE_2 = [
    "Chapter 1: Care 2",
    "1.2 Battery",
    "The battery lasts ninety minutes on a full charge and takes two hours to charge.",
    "2 Repairs",
    "Only a service centre may open the case; doing so yourself ends the warranty for good.",
]


def _manual(make_documents: Any, tmp_path: Path, outline: bool) -> Path:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for number, lines in enumerate((PAGE_1, PAGE_2), start=1):
        writer.add_page(PdfReader(make_documents.text_pdf(tmp_path / f"p{number}.pdf", lines)).pages[0])
    if outline:
        care = writer.add_outline_item("Care", 0)
        writer.add_outline_item("Cleaning", 0, parent=care)
        writer.add_outline_item("Battery", 1, parent=care)
        writer.add_outline_item("Repairs", 1)
    path = tmp_path / "manual.pdf"
    with path.open("wb") as out:
        writer.write(out)
    return path


def test_the_outline_gives_each_part_of_a_page_its_heading(make_documents: Any, tmp_path: Path) -> None:
    doc = parse_file(_manual(make_documents, tmp_path, outline=True))
    shown = [(s.page, s.heading, s.text.strip().splitlines()[0]) for s in doc.sections]
    assert shown == [
        (1, "1 Care", "Chapter 1: Care 1"),  # the running header goes with the section under it
        (1, "1 Care > 1.1 Cleaning", "1.1 Cleaning"),
        (2, "1 Care > 1.2 Battery", "Chapter 1: Care 2"),
        (2, "2 Repairs", "2 Repairs"),
    ]
    assert "ninety minutes" in doc.sections[2].text and "warranty" in doc.sections[3].text


def test_without_an_outline_the_texts_own_numbered_headings_give_them(make_documents: Any, tmp_path: Path) -> None:
    doc = parse_file(_manual(make_documents, tmp_path, outline=False))
    shown = [(s.page, s.heading, s.text.strip().splitlines()[0]) for s in doc.sections]
    assert shown == [
        (1, "1 Care", "Chapter 1: Care 1"),
        (1, "1 Care > 1.1 Cleaning", "1.1 Cleaning"),
        (2, "1 Care > 1.2 Battery", "Chapter 1: Care 2"),
        (2, "2 Repairs", "2 Repairs"),
    ]


def test_only_numbers_that_follow_on_make_headings() -> None:
    """A numbered list, a table of contents, a figure's axis and a sentence that starts with a number are
    text: a heading's number follows the last one taken, and its title is short, capitalised, without a page."""
    from ragapp.ingest.parsers.pdf import NumberedHeadings

    headings = NumberedHeadings()
    contents = "Contents\n1 Care 3\n2 Repairs 9\n10 20 30 40\n"  # pages at the ends: not headings
    assert headings.turn(1, contents) == [(None, contents)]
    page = (
        "1 Care\nKeep it dry, always, and store it somewhere cool and out of the sun.\n"
        "3 Remove the case\n1.25 the query length is used unless set otherwise by the user\n"
        "1.1 Cleaning\nWipe the cliff sensors with a dry cloth once a week, never with water.\n"
        "1.3 Battery\n2 Repairs\nOnly a service centre may open the case for any reason at all.\n"
    )
    parts = headings.turn(2, page)
    assert [h for h, _text in parts] == ["1 Care", "1 Care > 1.1 Cleaning", "2 Repairs"]
    assert "3 Remove the case" in parts[0][1] and "1.3 Battery" in parts[1][1]  # not next: text
    assert headings.heading() == "2 Repairs"  # the next page starts under it
