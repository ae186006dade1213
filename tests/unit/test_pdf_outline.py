"""A PDF's outline (bookmarks) gives its chunks their section headings: a page splits where a section begins,
each part under its heading path with the number the text gives it, and a part too short to stand alone goes
with the next."""

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


def test_without_an_outline_a_page_is_one_section_without_a_heading(make_documents: Any, tmp_path: Path) -> None:
    doc = parse_file(_manual(make_documents, tmp_path, outline=False))
    assert [(s.page, s.heading) for s in doc.sections] == [(1, None), (2, None)]
