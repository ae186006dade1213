"""What real files say about themselves (``ragapp.ingest.file_meta``): PDF, DOCX, PPTX, HTML and EPUB built here
with their own libraries, and files whose properties are broken, which give nothing and never raise."""

from __future__ import annotations

import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from ragapp.ingest.file_meta import HTML_HEAD_BYTES, file_meta, parse_date


def test_pdf_document_info(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.add_metadata({
        "/Title": "Leave Policy 2024", "/Author": "Ana Ruiz",
        "/CreationDate": "D:20240105120000+01'00'", "/ModDate": "D:20240301080000Z",
    })  # fmt: skip
    path = tmp_path / "leave.pdf"
    with path.open("wb") as handle:
        writer.write(handle)
    assert file_meta(path, "pdf") == {
        "title": "Leave Policy 2024",
        "author": "Ana Ruiz",
        "created": "2024-01-05 11:00:00",  # in UTC
        "modified": "2024-03-01 08:00:00",
    }


def test_docx_and_pptx_core_properties(tmp_path: Path) -> None:
    import docx
    import pptx

    document = docx.Document()
    document.add_paragraph("Body text.")
    props = document.core_properties
    props.title, props.author = "Onboarding Guide", "Li Wei"
    props.created, props.modified = datetime(2023, 6, 1, 9, 30), datetime(2024, 2, 2, 10, 0)
    document.save(str(tmp_path / "guide.docx"))
    deck = pptx.Presentation()
    deck.core_properties.title, deck.core_properties.author = "Quarterly Review", "Sam Doe"
    deck.core_properties.modified = datetime(2024, 4, 1, 12, 0)
    deck.save(str(tmp_path / "review.pptx"))

    assert file_meta(tmp_path / "guide.docx", "docx") == {
        "title": "Onboarding Guide", "author": "Li Wei",
        "created": "2023-06-01 09:30:00", "modified": "2024-02-02 10:00:00",
    }  # fmt: skip
    slides = file_meta(tmp_path / "review.pptx", "pptx")
    assert slides["title"] == "Quarterly Review"
    assert slides["author"] == "Sam Doe"
    assert slides["modified"] == "2024-04-01 12:00:00"


def test_html_title_and_meta_tags(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        "<!doctype html><html><head><title>Returns &amp; Refunds</title>"
        "<meta name='author' content='Support Team'>"
        '<meta property="article:modified_time" content="2024-05-06T07:08:09Z"></head>'
        "<body><p>Text</p></body></html>",
        "utf-8",
    )
    assert file_meta(path, "html") == {
        "title": "Returns & Refunds", "author": "Support Team", "modified": "2024-05-06 07:08:09",
    }  # fmt: skip


def test_html_reads_only_the_head_of_a_big_page(tmp_path: Path) -> None:
    path = tmp_path / "big.html"
    path.write_text("<html><head></head><body>" + "x" * HTML_HEAD_BYTES + "<title>Too late</title></body>", "utf-8")
    assert file_meta(path, "html") == {}


def _epub(path: Path, opf: str) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        archive.writestr("OEBPS/content.opf", opf)
    return path


def test_epub_opf_metadata(tmp_path: Path) -> None:
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>河流的故事</dc:title>'
        "<dc:creator>Wang Fang</dc:creator><dc:creator>Jo Kim</dc:creator><dc:date>2019</dc:date>"
        '<meta property="dcterms:modified">2021-03-04T05:06:07Z</meta></metadata></package>'
    )
    assert file_meta(_epub(tmp_path / "book.epub", opf), "epub") == {
        "title": "河流的故事", "author": "Wang Fang, Jo Kim",
        "created": "2019-01-01 00:00:00", "modified": "2021-03-04 05:06:07",
    }  # fmt: skip


@pytest.mark.parametrize("kind", ["pdf", "docx", "pptx", "epub", "html"])
def test_a_file_with_broken_properties_gives_nothing(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"broken.{kind}"
    path.write_bytes(b"\x00\xffnot a real file" * 10)
    assert file_meta(path, kind) == {}


def test_broken_xml_in_a_real_zip_gives_nothing(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "odd.docx", "w") as archive:
        archive.writestr("docProps/core.xml", "<cp:coreProperties>unclosed")
    assert file_meta(tmp_path / "odd.docx", "docx") == {}
    assert file_meta(tmp_path / "odd.docx", "txt") == {}  # no reader for the type: nothing read


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("D:20240105", "2024-01-05 00:00:00"),
        ("2024-01-05T10:00:00-05:00", "2024-01-05 15:00:00"),
        ("2024-02", "2024-02-01 00:00:00"),
        ("yesterday", None),
        ("", None),
    ],
)
def test_dates_as_files_write_them(text: str, expected: str | None) -> None:
    assert parse_date(text) == expected
