"""Each parser on each fixture file (see tests/fixtures/README.md for what they hold)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragapp.core.errors import EmptyDocumentError, IngestError, UnsupportedFileError
from ragapp.ingest.parsing import decode_text, parse_file, supported_extensions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_pdf_sections_carry_page_numbers() -> None:
    parsed = parse_file(FIXTURES / "sample.pdf")
    assert parsed.file_type == "pdf"
    assert parsed.pages == 2
    assert [(s.page, s.text.strip()) for s in parsed.sections] == [
        (1, "Page one talks about apples."),
        (2, "Page two talks about bananas."),
    ]


def test_docx_groups_paragraphs_under_headings_and_keeps_the_table() -> None:
    parsed = parse_file(FIXTURES / "sample.docx")
    assert parsed.file_type == "docx"
    assert [s.heading for s in parsed.sections] == ["Installation", "Requirements"]
    assert parsed.sections[0].text == "Download the installer and run it with administrator rights."
    requirements = parsed.sections[1].text.splitlines()
    assert requirements == [
        "The application needs a 64-bit operating system and 8 GB of memory.",
        "| Component | Version |",
        "| --- | --- |",
        "| Python | 3.11 |",
    ]
    assert parsed.sections[1].has_table and parsed.report.tables == 1


def test_markdown_headings_are_not_taken_from_code_fences() -> None:
    parsed = parse_file(FIXTURES / "sample.md")
    assert parsed.file_type == "md"
    assert [s.heading for s in parsed.sections] == ["Getting Started", "Configuration"]
    first, second = (s.text for s in parsed.sections)
    assert first.startswith("This section explains how to start the service.")
    assert "# This line is a shell comment, not a heading." in first
    assert "./run.sh --port 8080" in first
    assert second == "Settings are stored in config.toml next to the program."


def test_markdown_heading_path_follows_levels(tmp_path: Path) -> None:
    path = tmp_path / "guide.md"
    path.write_text("# Guide\nIntro.\n## Setup\nInstall it.\n### Linux\nUse apt.\n## Usage\nRun it.\n", "utf-8")
    parsed = parse_file(path)
    assert [(s.heading, s.text) for s in parsed.sections] == [
        ("Guide", "Intro."),
        ("Guide > Setup", "Install it."),
        ("Guide > Setup > Linux", "Use apt."),
        ("Guide > Usage", "Run it."),
    ]


def test_markdown_without_top_level_heading_keeps_sibling_sections_apart(tmp_path: Path) -> None:
    # Many READMEs start at "##". Sibling "##" sections must not nest under each other.
    path = tmp_path / "notes.md"
    path.write_text("## Install\nRun it.\n## Usage\nUse it.\n### Flags\nSome flags.\n## FAQ\nAsk.\n", "utf-8")
    parsed = parse_file(path)
    assert [s.heading for s in parsed.sections] == ["Install", "Usage", "Usage > Flags", "FAQ"]


def test_txt_is_read_whole() -> None:
    parsed = parse_file(FIXTURES / "sample.txt")
    assert parsed.file_type == "txt"
    assert len(parsed.sections) == 1
    assert parsed.sections[0].text.splitlines() == [
        "This is a plain UTF-8 text file used by the parser tests.",
        "The quick brown fox jumps over the lazy dog.",
        "It has exactly three lines.",
    ]


def test_gbk_txt_is_decoded() -> None:
    raw = (FIXTURES / "sample_gbk.txt").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # the fixture really is not UTF-8
    parsed = parse_file(FIXTURES / "sample_gbk.txt")
    assert parsed.sections[0].text.splitlines() == [
        "这是一个使用GBK编码保存的中文测试文件，不是UTF-8。",
        "流明机器人的总部位于杭州，主要产品是家用扫地机器人。",
        "解析器应当正确识别编码，并完整读出这三行文字。",
    ]


def test_decode_text_strips_a_utf8_bom() -> None:
    assert decode_text("\ufeffhello 你好".encode()) == "hello 你好"


def test_html_keeps_visible_text_without_script_or_style() -> None:
    parsed = parse_file(FIXTURES / "sample.html")
    assert parsed.file_type == "html"
    assert [(s.heading, s.text) for s in parsed.sections] == [
        ("Main Heading", "The first paragraph talks about cherries."),
        ("Sub Heading", "The second paragraph talks about grapes."),
    ]
    everything = " ".join(f"{s.heading} {s.text}" for s in parsed.sections)
    assert "STYLE_CONTENT_SHOULD_NOT_APPEAR" not in everything
    assert "SCRIPT_CONTENT_SHOULD_NOT_APPEAR" not in everything
    assert "{" not in everything


def test_display_name_decides_the_parser(tmp_path: Path) -> None:
    # Uploads arrive under temporary names; the user's file name picks the parser and names the document.
    upload = tmp_path / "upload-1234.bin"
    shutil.copy(FIXTURES / "sample.md", upload)
    parsed = parse_file(upload, "readme.md")
    assert (parsed.name, parsed.file_type) == ("readme.md", "md")


def test_corrupt_pdf_raises_ingest_error_naming_the_file() -> None:
    with pytest.raises(IngestError) as info:
        parse_file(FIXTURES / "corrupt.pdf")
    assert type(info.value) is IngestError
    assert "corrupt.pdf" in str(info.value)
    assert "corrupt" in str(info.value).replace("corrupt.pdf", "")


def test_empty_file_raises_empty_document_error() -> None:
    with pytest.raises(EmptyDocumentError, match=r"empty\.txt: the file is empty"):
        parse_file(FIXTURES / "empty.txt")


def test_blank_pdf_raises_empty_document_error() -> None:
    with pytest.raises(EmptyDocumentError, match=r"blank\.pdf: no text found"):
        parse_file(FIXTURES / "blank.pdf")


def test_whitespace_only_txt_is_empty(tmp_path: Path) -> None:
    path = tmp_path / "spaces.txt"
    path.write_text("  \n\n\t \n", "utf-8")
    with pytest.raises(EmptyDocumentError, match=r"spaces\.txt"):
        parse_file(path)


@pytest.mark.parametrize("name", ["image.gif", "Makefile"])
def test_unsupported_extension_lists_supported_types(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"not text")
    with pytest.raises(UnsupportedFileError) as info:
        parse_file(path)
    message = str(info.value)
    assert name in message
    for ext in (".pdf", ".docx", ".md", ".txt", ".html"):
        assert ext in message
    assert set(supported_extensions()) >= {".pdf", ".docx", ".md", ".markdown", ".txt", ".html", ".htm"}


def test_extension_match_ignores_case(tmp_path: Path) -> None:
    path = tmp_path / "LOUD.TXT"
    shutil.copy(FIXTURES / "sample.txt", path)
    assert parse_file(path).file_type == "txt"
