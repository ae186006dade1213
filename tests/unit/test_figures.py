"""Figures read as passages of their own: on a real manual's pages (GNU Octave's, which Debian's octave-doc
ships: its plots are drawings with "Figure 15.1: …" captions under them), the caption found, the words inside
kept, and decoration left out by the stated rule; and a Word report and a PowerPoint deck with that plot pasted in,
its caption and alt text kept."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ragapp.core.types import Section
from ragapp.ingest.chunking import chunk_document
from ragapp.ingest.parse_context import ParseOptions
from ragapp.ingest.parsers.pdf_figures import MAX_ASPECT, MIN_SIDE_PT, decorative, is_caption
from ragapp.ingest.parsing import parse_file

OCTAVE_PDF = Path("/usr/share/doc/octave/octave.pdf")
PLOT_PAGES = range(331, 338)  # pages 332 to 338: "Figure 15.1: Simple Two-Dimensional Plot." on 332, 15.2 on 337


def octave_pages(target: Path, pages: list[int]) -> Path:
    """The manual's ``pages`` (0-based, in that order, a page named twice copied twice) as a PDF at ``target``."""
    if not OCTAVE_PDF.exists():
        pytest.skip(f"{OCTAVE_PDF} is not installed (apt-get install octave-doc)")
    import pypdfium2 as pdfium  # not pypdf: reading the 1,000-page manual's page tree took it 1.5 s a call

    manual, cut = pdfium.PdfDocument(OCTAVE_PDF), pdfium.PdfDocument.new()
    try:
        cut.import_pages(manual, pages)
        cut.save(target)
    finally:
        cut.close()
        manual.close()
    return target


@pytest.fixture(scope="module")
def plots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return octave_pages(tmp_path_factory.mktemp("octave") / "octave-plotting.pdf", list(PLOT_PAGES))


def _figures(sections: tuple[Section, ...]) -> list[Section]:
    return [s for s in sections if s.figure is not None]


def test_a_plot_is_a_passage_with_its_caption_its_words_and_its_place(plots: Path) -> None:
    doc = parse_file(plots, options=ParseOptions(ocr=False, pdf_tables=False))
    figures = _figures(doc.sections)
    assert [(f.page, f.figure.caption if f.figure else "") for f in figures] == [
        (1, "Figure 15.1: Simple Two-Dimensional Plot."),
        (6, "Figure 15.2: Histogram."),
    ]
    first = figures[0]
    assert first.text.startswith("Figure 15.1: Simple Two-Dimensional Plot.")
    assert "Simple 2-D Plot" in first.text and "sin (x)" in first.text  # the plot's own title and axis label
    assert "plot (x, y)" in first.text  # the text under the caption
    box = first.figure
    assert box is not None and 0 < box.x0 < box.x1 < 1 and 0 < box.y0 < box.y1 < 1
    assert 0.3 < box.x1 - box.x0 < 0.6 and 0.15 < box.y1 - box.y0 < 0.4  # the plot, not the page
    assert doc.report.figures == 2


def test_each_figure_is_one_chunk_that_says_it_is_a_figure(plots: Path) -> None:
    doc = parse_file(plots, options=ParseOptions(ocr=False, pdf_tables=False))
    chunks = chunk_document(doc, "doc", chunk_size=400, chunk_overlap=50)
    figures = [c for c in chunks if c.figure is not None]
    assert len(figures) == 2 and all(len(c.text) <= 400 for c in figures)
    assert figures[0].location == "p. 1 · 🖼 Figure 15.1: Simple Two-Dimensional Plot."


def test_with_figures_off_no_figure_is_looked_for(plots: Path) -> None:
    doc = parse_file(plots, options=ParseOptions(ocr=False, pdf_tables=False, figures=False))
    assert not _figures(doc.sections) and doc.report.figures == 0


def test_the_same_picture_on_three_pages_is_decoration(tmp_path: Path) -> None:
    # page 332 three times: its plot at the same place with the same words, as a letterhead's logo would be
    same = octave_pages(tmp_path / "thrice.pdf", [331, 331, 331])
    doc = parse_file(same, options=ParseOptions(ocr=False, pdf_tables=False))
    assert not _figures(doc.sections)
    assert any("3 pictures as decoration" in what for what in doc.report.left_out)
    twice = octave_pages(tmp_path / "twice.pdf", [331, 331])
    assert len(_figures(parse_file(twice, options=ParseOptions(ocr=False, pdf_tables=False)).sections)) == 2


def test_small_thin_and_whole_page_pictures_are_decoration() -> None:
    page = (612.0, 792.0)
    assert decorative((100, 100, 100 + MIN_SIDE_PT - 1, 300), page)  # an icon's width
    assert decorative((50, 400, 560, 400 + 510 / (MAX_ASPECT + 1)), page)  # a rule across the page
    assert decorative((0, 0, 612, 792), page)  # the page itself: a scan
    assert not decorative((162, 471, 450, 672), page)  # Figure 15.1's plot


@pytest.mark.parametrize(
    ("line", "caption"),
    [
        ("Figure 15.1: Simple Two-Dimensional Plot.", True),
        ("Fig. 3 The loop", True),
        ("图 3 系统结构", True),
        ("图3-1 流程", True),
        ("Figures show the data", False),
        ("The figure 3 shows", False),
    ],
)
def test_a_caption_starts_with_a_word_for_figure_and_its_number(line: str, caption: bool) -> None:
    assert is_caption(line) is caption


def test_a_word_picture_is_a_passage_with_its_caption_alt_text_and_words(tmp_path: Path) -> None:
    import docx
    import pypdfium2 as pdfium
    from docx.shared import Inches

    if not OCTAVE_PDF.exists():
        pytest.skip(f"{OCTAVE_PDF} is not installed (apt-get install octave-doc)")
    pdf = pdfium.PdfDocument(str(OCTAVE_PDF))  # the real plot of page 332, as a picture pasted into a report
    plot, logo = tmp_path / "plot.png", tmp_path / "logo.png"
    pdf[331].render(scale=2, crop=(162, 471, 612 - 450, 792 - 672)).to_pil().save(plot)
    pdf.close()
    from PIL import Image

    Image.new("RGB", (40, 40), (200, 30, 30)).save(logo)
    document = docx.Document()
    document.add_heading("Plotting", level=1)
    document.add_paragraph("The plot below shows the sine over four periods.")
    document.add_picture(str(plot), width=Inches(4))
    document.paragraphs[-1]._p.xpath(".//wp:docPr")[0].set("descr", "A sine curve from -10 to 10")
    document.add_paragraph("Figure 1: Simple Two-Dimensional Plot of sin(x).", style="Caption")
    document.add_paragraph("Call plot (x, y) to draw it.")
    document.add_picture(str(logo), width=Inches(0.4))  # an icon: decoration
    path = tmp_path / "report.docx"
    document.save(str(path))

    doc = parse_file(path, options=ParseOptions(pdf_tables=False))
    (figure,) = _figures(doc.sections)
    assert figure.figure is not None and figure.figure.caption == "Figure 1: Simple Two-Dimensional Plot of sin(x)."
    assert figure.heading == "Plotting" and figure.page is None
    assert "A sine curve from -10 to 10" in figure.text  # its alt text
    assert "Simple 2-D Plot" in figure.text  # read inside the picture by OCR
    assert "four periods" in figure.text and "plot (x, y)" in figure.text  # the paragraphs around it
    assert doc.report.figures == 1 and any("1 pictures as decoration" in what for what in doc.report.left_out)


def _plot_png(target: Path) -> Path:
    """The real plot of the manual's page 332, as a picture file at ``target``."""
    import pypdfium2 as pdfium

    if not OCTAVE_PDF.exists():
        pytest.skip(f"{OCTAVE_PDF} is not installed (apt-get install octave-doc)")
    pdf = pdfium.PdfDocument(str(OCTAVE_PDF))
    pdf[331].render(scale=2, crop=(162, 471, 612 - 450, 792 - 672)).to_pil().save(target)
    pdf.close()
    return target


def plot_deck(folder: Path) -> Path:
    """A real deck (python-pptx): slide 1 holds the plot with its alt text, its caption under it, a line of text
    and an icon; slides 2-4 the same logo each; slide 5 the plot again, in a group, without caption."""
    from PIL import Image
    from pptx import Presentation
    from pptx.util import Inches

    plot, logo, icon = _plot_png(folder / "plot.png"), folder / "logo.png", folder / "icon.png"
    Image.new("RGB", (300, 200), (20, 60, 160)).save(logo)
    Image.new("RGB", (40, 40), (200, 30, 30)).save(icon)
    deck = Presentation()
    layout = deck.slide_layouts[5]  # title only
    slide = deck.slides.add_slide(layout)
    slide.shapes.title.text = "Plotting"
    slide.shapes.add_textbox(
        Inches(0.5), Inches(1.4), Inches(9), Inches(0.5)
    ).text_frame.text = "The plot below shows the sine over four periods."
    picture = slide.shapes.add_picture(str(plot), Inches(2), Inches(2), width=Inches(5))
    picture._element.xpath("./p:nvPicPr/p:cNvPr")[0].set("descr", "A sine curve from -10 to 10")
    under = picture.top + picture.height + Inches(0.1)
    slide.shapes.add_textbox(
        Inches(2), under, Inches(5), Inches(0.4)
    ).text_frame.text = "Figure 1: Simple Two-Dimensional Plot of sin(x)."
    slide.shapes.add_picture(str(icon), Inches(9), Inches(0.2), width=Inches(0.4))  # an icon: decoration
    for number in (2, 3, 4):  # the company's logo on three slides: decoration
        other = deck.slides.add_slide(layout)
        other.shapes.title.text = f"Results {number}"
        other.shapes.add_picture(str(logo), Inches(8), Inches(6), width=Inches(1.5))
    grouped = deck.slides.add_slide(layout)
    grouped.shapes.title.text = "Grouped"
    group = grouped.shapes.add_group_shape()
    group.shapes.add_picture(str(plot), Inches(1), Inches(2), width=Inches(4))
    path = folder / "plots.pptx"
    deck.save(str(path))
    return path


def test_a_slide_picture_is_a_passage_with_its_caption_alt_text_words_and_place(tmp_path: Path) -> None:
    from PIL import Image

    from ragapp.ingest.page_images import render_pptx_figure

    deck = plot_deck(tmp_path)
    doc = parse_file(deck, options=ParseOptions(pdf_tables=False))
    first, grouped = _figures(doc.sections)
    assert first.figure is not None and first.figure.caption == "Figure 1: Simple Two-Dimensional Plot of sin(x)."
    assert (first.page, first.heading) == (1, "Plotting")
    assert "A sine curve from -10 to 10" in first.text  # its alt text
    assert "Simple 2-D Plot" in first.text  # read inside the picture by OCR
    assert "four periods" in first.text  # the slide's text around it
    box = first.figure  # 2 in from the left of a 10 in slide, 5 in wide
    assert abs(box.x0 - 0.2) < 0.01 and abs(box.x1 - 0.7) < 0.01
    assert grouped.page == 5 and grouped.figure is not None and grouped.figure.caption == ""
    assert grouped.figure is not None and abs(grouped.figure.x0 - 0.1) < 0.01  # placed through its group
    assert doc.report.figures == 2 and any("4 pictures as decoration" in what for what in doc.report.left_out)
    png = render_pptx_figure(deck, 1, box, 400)  # the picture itself, found again at its place
    width, height = Image.open(io.BytesIO(png)).size
    assert width == 400 and width / height > 1.3
