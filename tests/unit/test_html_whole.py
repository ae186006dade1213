"""Every word of an HTML page reaches the chunks, whatever tags hold it: text directly in <body>, <div> soup, an
unclosed <p>, prose around <pre> blocks, nested sections. Each page is parsed and chunked as an upload is; a
sentence missing from the chunks fails the test by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.parsing import parse_file

SENTENCES = [
    "We often get questions about how the deflate function should be used.",
    "The buffer size of sixteen kilobytes was chosen for speed.",
    "Loose text after the code explains what the call returns.",
    "A closing remark sits directly in the body element.",
]
A, B, C, D = SENTENCES

PAGES = {
    "bare body text": f"<html><body><h1>Usage</h1>{A}<pre>int x = 1;\nreturn x;</pre>{B}<p>{C}</p>{D}</body></html>",
    "div soup": f"<p>Intro.</p><div><div><span>{A}</span></div><div>{B}<div>{C}</div></div></div><div><b>{D}</b></div>",
    "unclosed p": f"<h2>Notes</h2><p>{A}<p>{B}<ul><li>one item</ul><p>{C}\n<p>{D}",
    "text around pre": f"<h1>Example</h1><pre>z_stream strm;</pre>\n{A}\n<pre>deflateInit(&strm);</pre>{B} {C}<hr>{D}",
    "nested sections": (
        f"<main><article><section><h2>Start</h2><p>Intro.</p>{A}<section><h3>Inner</h3><div>{B}</div>{C}</section></section>"
        f"</article><aside>{D}</aside></main>"
    ),
}


@pytest.mark.parametrize("shape", list(PAGES))
def test_every_sentence_of_the_page_is_in_the_chunks(tmp_path: Path, shape: str) -> None:
    page = tmp_path / "page.html"
    page.write_text(PAGES[shape], "utf-8")
    chunks = chunk_document(parse_file(page), "d1", chunk_size=200, chunk_overlap=20)
    indexed = " ".join(" ".join(c.text.split()) for c in chunks)
    missing = [s for s in SENTENCES if s not in indexed]
    assert not missing, f"{shape}: not in the chunks: {missing}"


def test_code_keeps_its_lines_and_sentences_follow_their_heading(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(PAGES["bare body text"], "utf-8")
    (section,) = parse_file(page).sections
    assert section.heading == "Usage"
    assert "int x = 1;\nreturn x;" in section.text  # the code block's line break kept
    assert section.text.index(A) < section.text.index("int x") < section.text.index(B)  # in document order


def test_markup_inside_a_word_adds_no_space_and_navigation_is_left_out_by_rule(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<nav><a href='/'>Home</a> · <a href='/buy'>Purchase</a></nav>"
        "<h2>7.7. 什么是<em>必需</em>软件包？</h2><p>Build <code>foo</code>.orig.tar.gz first.<br>Then upload.</p>"
        "<p hidden>Hidden text.</p><div style='display: none'>Also hidden.</div>",
        "utf-8",
    )
    parsed = parse_file(page)
    (section,) = parsed.sections
    assert section.heading == "7.7. 什么是必需软件包？"
    assert section.text == "Build foo.orig.tar.gz first.\nThen upload."
    assert "Purchase" not in section.text and parsed.report.left_out == ("navigation (1 block)",)


def test_the_page_header_and_footer_are_left_out_and_an_articles_own_are_kept(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<header><a href='/'>Acme docs</a> Search Support</header>"
        f"<article><header><h1>Kettle care</h1><p>Posted by the service team.</p></header><p>{A}</p>"
        f"<footer>Filed under kettles.</footer></article><div role='contentinfo'>Copyright Acme 2024</div>"
        f"<div role=banner>Sign in</div><footer>Imprint · Privacy</footer><p>{B}</p>",
        "utf-8",
    )
    parsed = parse_file(page)
    text = " ".join(s.text for s in parsed.sections)
    for kept in ("Posted by the service team.", A, "Filed under kettles.", B):
        assert kept in text
    for left in ("Acme docs", "Copyright", "Sign in", "Imprint"):
        assert left not in text
    assert parsed.report.left_out == ("header (2 blocks)", "footer (2 blocks)")


def test_a_page_that_marks_its_main_content_is_read_there_only(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<div class='sidebar'><ul><li>Modules</li><li>Buffers</li></ul></div>Stray text beside the layout."
        f"<div id='column1'><div role='main'><h2>Buffers</h2><p>{A}</p><nav>Prev · Next</nav></div></div>"
        f"<div>Version picker 21.x 20.x</div>",
        "utf-8",
    )
    parsed = parse_file(page)
    (section,) = parsed.sections
    assert (section.heading, section.text) == ("Buffers", A)
    assert parsed.report.left_out == ("outside the page's main content", "navigation (1 block)")


def test_a_page_nested_thousands_deep_parses_in_linear_time(tmp_path: Path) -> None:
    page = tmp_path / "deep.html"
    page.write_text("<div>" * 20_000 + "Deep sentence." + "</div>" * 20_000, "utf-8")
    (section,) = parse_file(page).sections  # no RecursionError: the walk keeps its own stack
    assert section.text == "Deep sentence."


def test_a_prose_table_and_a_framed_cell_are_read_as_text_not_cut(tmp_path: Path) -> None:
    answer = "Valgrind is the name of the main entrance to Valhalla. " * 12  # a FAQ answer laid out in a cell
    page = tmp_path / "faq.html"
    page.write_text(
        f"<table><tr><td><b>Q:</b></td><td>Where does the name come from?</td></tr>"
        f"<tr><td><b>A:</b></td><td><p>{answer}</p></td></tr></table>"
        "<table><tr><td>libxslt Reference Manual</td></tr></table>"
        "<table><tr><th>Option</th><th>Meaning</th></tr><tr><td>-v</td><td>verbose</td></tr></table>",
        "utf-8",
    )
    parsed = parse_file(page)
    text = "\n".join(s.text for s in parsed.sections)
    assert " ".join(answer.split()) in text  # whole, not cut at a cell limit
    assert "libxslt Reference Manual" in text  # one framed cell: no table, but its text stays
    assert "| Option | Meaning |\n| --- | --- |\n| -v | verbose |" in text and parsed.report.tables == 1


def test_a_space_written_inside_a_headings_markup_is_kept(tmp_path: Path) -> None:
    # SQLite's pages number their headings as "<span>1.2. </span>Pages": read as "1.2.Pages" it matched no
    # section of the answer set, and the keyword channel saw one word
    page = tmp_path / "fileformat.html"
    page.write_text("<h2 id='pages'><span>1.2. </span>Pages</h2><p>The file is one or more pages.</p>")
    (section,) = parse_file(page).sections
    assert section.heading == "1.2. Pages"


def test_a_heading_with_no_text_of_its_own_leads_the_next_one(tmp_path: Path) -> None:
    page = tmp_path / "api.html"
    page.write_text("<h2>Description</h2><h2>Details</h2><h3>xsltInit ()</h3><p>Initializes the processor.</p>")
    (section,) = parse_file(page).sections
    assert section.heading == "Description > Details > xsltInit ()"


def test_a_heading_left_open_by_a_stray_end_tag_does_not_swallow_the_page(tmp_path: Path) -> None:
    page = tmp_path / "index.html"
    page.write_text("<h2 align=center>Keyword Index</h1><ul><li>Categorical Document List<li>Books</ul><p>Last.")
    (section,) = parse_file(page).sections
    assert section.heading == "Keyword Index"
    assert section.text == "Categorical Document List\nBooks\nLast."
    page.write_text("<h1>Chapter 1<br>Getting <em>started</em></h1><p>Body.</p>")
    assert parse_file(page).sections[0].heading == "Chapter 1 Getting started"
