"""A Word file's and an EPUB's figures: a real plot (GNU Octave's manual, Debian's octave-doc) in a .docx written by
python-docx and in an EPUB written as the zip of XHTML it is, each kept with its caption, alt text, words and the
text around it, and found again inside the file to be drawn; decoration and broken pictures left out, said, and
the text kept."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from PIL import Image

from ragapp.core.types import Section
from ragapp.ingest.parse_context import ParseOptions
from ragapp.ingest.parsing import parse_file
from tests.unit.test_figures import _plot_png

CAPTION = "Figure 1: Simple Two-Dimensional Plot of sin(x)."
BROKEN = b"\x89PNG\r\n\x1a\n" + b"not a picture after all" * 20  # a PNG's signature, then nothing of one
BROKEN_SAID = "1 pictures that would not open (corrupt, missing, or of a kind not read)"


def _figures(sections: tuple[Section, ...]) -> list[Section]:
    return [s for s in sections if s.figure is not None]


def _png(size: tuple[int, int], color: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def _size(png: bytes) -> tuple[int, int]:
    width, height = Image.open(io.BytesIO(png)).size
    return width, height


def plot_report(folder: Path, broken: bool = False) -> Path:
    """A real Word file (python-docx) holding the plot with its alt text and caption; ``broken``: its picture's
    bytes replaced inside the .docx by a corrupt file, as a damaged upload would hold."""
    import docx
    from docx.shared import Inches

    document = docx.Document()
    document.add_heading("Plotting", level=1)
    document.add_paragraph("The plot below shows the sine over four periods.")
    document.add_picture(str(_plot_png(folder / "plot.png")), width=Inches(4))
    document.paragraphs[-1]._p.xpath(".//wp:docPr")[0].set("descr", "A sine curve from -10 to 10")
    document.add_paragraph(CAPTION, style="Caption")
    document.add_paragraph("Call plot (x, y) to draw it.")
    path = folder / "report.docx"
    document.save(str(path))
    if broken:
        with zipfile.ZipFile(path) as whole:
            parts = {info.filename: whole.read(info) for info in whole.infolist()}
        with zipfile.ZipFile(path, "w") as damaged:
            for name, data in parts.items():
                damaged.writestr(name, BROKEN if name.startswith("word/media/") else data)
    return path


CONTAINER = '<container><rootfiles><rootfile full-path="OEBPS/content.opf"/></rootfiles></container>'
PAGE = '<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title></head><body>{body}</body></html>'


def plot_book(folder: Path) -> Path:
    """A real EPUB (the zip of XHTML files it is): chapter 1 holds the plot in a ``<figure>`` with its caption
    and alt text, an icon and a picture that will not open; chapter 2 the plot once more (the same figure: not
    twice) and a copy of it, its caption a paragraph under it; chapters 2 to 4 the same ornament each; chapter 4
    pictures in its navigation and hidden (not shown, so not figures); chapter 5 a picture the book does not
    hold."""
    chapters = {
        "one": "<h1>Plotting</h1><p>The plot below shows the sine over four periods.</p>"
        '<figure><img src="../images/plot%20one.png" alt="A sine curve from -10 to 10"/>'
        f"<figcaption>{CAPTION}</figcaption></figure><p>Call plot (x, y) to draw it.</p>"
        '<p>Save it with print. <img src="../images/icon.png" alt="tip"/></p>'
        '<p><img src="../images/scan.png" alt="A scanned table of results"/></p><p>The end of plotting.</p>',
        "two": "<h1>Again</h1><p>The same plot, smaller.</p>"
        '<p><img src="../images/plot%20one.png" alt="shown again"/>'
        '<img src="../images/plot-small.png" width="300" height="200"/></p><p>Figure 2: The sine again.</p>'
        '<p><img src="../images/ornament.png"/></p>',
        "three": '<h1>Three</h1><p>Text of three.</p><p><img src="../images/ornament.png"/></p>',
        "four": '<h1>Four</h1><p>Text of four.</p><p><img src="../images/ornament.png"/></p>'
        '<nav><img src="../images/menu.png" alt="Menu"/></nav><p hidden=""><img src="../images/x.png"/></p>',
        "five": '<h1>Five</h1><p>Text of five.</p><p><img src="../images/gone.png" alt="Lost diagram"/></p>',
    }
    path = folder / "plots.epub"
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr("META-INF/container.xml", CONTAINER)
        items = "".join(f'<item id="{n}" href="text/{n}.xhtml" media-type="application/xhtml+xml"/>' for n in chapters)
        spine = "".join(f'<itemref idref="{n}"/>' for n in chapters)
        book.writestr("OEBPS/content.opf", f"<package><manifest>{items}</manifest><spine>{spine}</spine></package>")
        for name, body in chapters.items():
            book.writestr(f"OEBPS/text/{name}.xhtml", PAGE.format(title=name, body=body))
        book.write(_plot_png(folder / "plot.png"), "OEBPS/images/plot one.png")
        book.write(folder / "plot.png", "OEBPS/images/plot-small.png")
        book.writestr("OEBPS/images/icon.png", _png((40, 40), (200, 30, 30)))
        book.writestr("OEBPS/images/ornament.png", _png((400, 300), (20, 60, 160)))
        book.writestr("OEBPS/images/scan.png", BROKEN)
    return path


def test_a_word_figure_keeps_its_picture_name_and_is_drawn_from_it(tmp_path: Path) -> None:
    from ragapp.ingest.page_images import render_zip_figure

    path = plot_report(tmp_path)
    (figure,) = _figures(parse_file(path, options=ParseOptions(ocr=False)).sections)
    assert figure.figure is not None and figure.figure.caption == CAPTION
    assert figure.figure.part == "word/media/image1.png"  # the picture's file inside the .docx
    width, height = _size(render_zip_figure(path, None, figure.figure, 400))
    assert width == 400 and width / height > 1.3  # the plot, wider than tall


def test_a_corrupt_word_picture_is_left_out_said_and_the_text_kept(tmp_path: Path) -> None:
    doc = parse_file(plot_report(tmp_path, broken=True), options=ParseOptions(ocr=False))
    assert _figures(doc.sections) == [] and doc.report.figures == 0
    assert BROKEN_SAID in doc.report.left_out
    text = "\n".join(s.text for s in doc.sections)
    assert "four periods" in text and CAPTION in text  # the document's words are all there


def test_an_epub_picture_is_a_passage_with_its_caption_alt_text_words_and_file(tmp_path: Path) -> None:
    from ragapp.ingest.page_images import render_zip_figure

    book = plot_book(tmp_path)
    doc = parse_file(book, options=ParseOptions(pdf_tables=False))
    first, second = _figures(doc.sections)
    assert first.figure is not None and first.figure.caption == CAPTION  # its <figcaption>
    assert (first.page, first.heading, first.figure.part) == (1, "Plotting", "OEBPS/images/plot one.png")
    assert "A sine curve from -10 to 10" in first.text  # its alt text
    assert "Simple 2-D Plot" in first.text  # read inside the picture by OCR
    assert "four periods" in first.text and "plot (x, y)" in first.text  # the paragraphs around it
    assert second.figure is not None and second.figure.caption == "Figure 2: The sine again."  # the line under it
    assert (second.page, second.heading) == (2, "Again") and "smaller" in second.text
    assert second.figure.part == "OEBPS/images/plot-small.png"
    assert not any("shown again" in f.text for f in _figures(doc.sections))  # the plot shown again: one figure
    # the icon (small) and the ornament in three chapters are decoration; the scan and the missing file are
    # broken; the chapters' words stay
    assert doc.report.figures == 2
    assert "4 pictures as decoration (small, thin, or repeated on many pages)" in doc.report.left_out
    assert "2 pictures that would not open (corrupt, missing, or of a kind not read)" in doc.report.left_out
    text = "\n".join(s.text for s in doc.sections if s.figure is None)
    assert "The end of plotting." in text and "Text of five." in text
    width, height = _size(render_zip_figure(book, 1, first.figure, 400))
    assert width == 400 and width / height > 1.3
    off = parse_file(book, options=ParseOptions(figures=False, ocr=False))  # figures off: none looked for
    assert _figures(off.sections) == [] and off.report.figures == 0
    assert not any("picture" in what for what in off.report.left_out)
