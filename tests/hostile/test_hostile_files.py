"""Hostile files through the real engine (real Chroma, BM25, catalog; scripted model): a DOCX that inflates past
the limits, names with control characters, and afterwards the catalog, the vectors and the keywords agree and
what was stored before is still there."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import pytest

from ragapp.ingest.parsing import ZIP_MAX_MEMBERS, ZIP_MAX_UNPACKED_MB, parse_file
from ragapp.ingest.pipeline import MAX_NAME_CHARS
from tests.hostile.bounded import bounded
from tests.hostile.test_hostile_text import finishes

KEPT = "The Orion Kettle K9 boils 1.7 litres in 3 minutes and 40 seconds."


def _docx(path: Path, text: str = "A small Word file about the Orion Kettle.") -> Path:
    document = docx.Document()
    document.add_paragraph(text)
    document.save(str(path))
    return path


Snapshot = Callable[[Any], Any]


def _with_kept_document(make_engine: Callable[..., Any], tmp_path: Path) -> Any:
    rig = make_engine()
    kept = tmp_path / "kettle.md"
    kept.write_text(f"# Kettle\n\n{KEPT}\n", "utf-8")
    (result,) = rig.engine.library.ingest([(kept, kept.name)])
    assert result.status == "added"
    return rig


def test_a_docx_that_inflates_past_the_limit_is_refused_and_nothing_is_lost(
    make_engine: Callable[..., Any], tmp_path: Path, store_snapshot: Snapshot
) -> None:
    rig = _with_kept_document(make_engine, tmp_path)
    bomb = _docx(tmp_path / "bomb.docx")
    block = bytes(1024 * 1024)
    with (
        zipfile.ZipFile(bomb, "a", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("word/media/image1.png", "w") as member,
    ):
        for _ in range(ZIP_MAX_UNPACKED_MB + 1):
            member.write(block)
    assert bomb.stat().st_size < 5 * 1024 * 1024  # small on disk: the upload limit does not catch it
    (result,) = finishes(lambda: rig.engine.library.ingest([(bomb, bomb.name)]))
    assert result.status == "failed" and "over the limits" in result.message
    assert [d.name for d in rig.engine.library.documents()] == ["kettle.md"]
    assert store_snapshot(rig).agree()  # catalog = vectors = keywords, as a restart reads them


def test_a_docx_of_too_many_parts_is_refused(
    make_engine: Callable[..., Any], tmp_path: Path, store_snapshot: Snapshot
) -> None:
    rig = make_engine()
    parts = _docx(tmp_path / "parts.docx")
    with zipfile.ZipFile(parts, "a") as archive:
        for i in range(ZIP_MAX_MEMBERS + 1):
            archive.writestr(f"filler/part{i}.xml", "<a/>")
    (result,) = finishes(lambda: rig.engine.library.ingest([(parts, parts.name)]))
    assert result.status == "failed" and "parts" in result.message
    assert store_snapshot(rig).agree()  # catalog = vectors = keywords, as a restart reads them


def test_names_lose_control_characters_and_are_bounded(
    make_engine: Callable[..., Any], tmp_path: Path, store_snapshot: Snapshot
) -> None:
    rig = make_engine()
    first, second = tmp_path / "a.md", tmp_path / "b.md"
    first.write_text("# A\n\nThe first file mentions the filter.\n", "utf-8")
    second.write_text("# B\n\nThe second file mentions the lid.\n", "utf-8")
    results = rig.engine.library.ingest([(first, "evil\x00name\n.md"), (second, "x" * 5000 + ".md")])
    assert [r.status for r in results] == ["added", "added"]
    names = sorted(d.name for d in rig.engine.library.documents())
    assert names[0] == "evil name .md"
    assert len(names[1]) <= MAX_NAME_CHARS and names[1].endswith("….md")
    assert store_snapshot(rig).agree()  # catalog = vectors = keywords, as a restart reads them


def test_a_document_of_too_many_chunks_is_refused_before_embedding(
    make_engine: Callable[..., Any], tmp_path: Path, store_snapshot: Snapshot
) -> None:
    rig = make_engine(ingest={"max_chunks": 50})
    many = tmp_path / "headings.md"
    many.write_text("".join(f"# Heading {i}\n\nSection {i} says something.\n\n" for i in range(30_000)), "utf-8")
    (result,) = finishes(lambda: rig.engine.library.ingest([(many, many.name)]))
    assert result.status == "failed" and "over the 50 a document may have" in result.message
    assert rig.engine.library.documents() == []
    assert store_snapshot(rig).agree()


def test_a_49_mb_text_file_is_refused_at_once_with_the_reason(
    make_engine: Callable[..., Any], tmp_path: Path, store_snapshot: Snapshot
) -> None:
    # Under the 50 MB upload limit, but sure to make over 20,000 chunks: refused from its length, before the
    # splitter runs (splitting it took 81 s; the old refusal came from a regex time limit after 13 s).
    rig = _with_kept_document(make_engine, tmp_path)
    big = tmp_path / "big.txt"
    sentence = "The kettle filter is rinsed every fourteen days and the lamp charges over USB. "
    big.write_text(sentence * (49_000_000 // len(sentence)), "utf-8")
    (result,) = finishes(lambda: rig.engine.library.ingest([(big, big.name)]))
    assert result.status == "failed"
    assert "at least 122," in result.message and "over the 20,000 a document may have" in result.message
    assert [d.name for d in rig.engine.library.documents()] == ["kettle.md"]
    assert store_snapshot(rig).agree()


def _flooded(path: Path, body: bytes) -> Path:
    """A Word file whose body's XML is ``body`` (one small paragraph's file, its document.xml rewritten)."""
    plain = _docx(path.with_suffix(".plain.docx"))
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as flooded:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/document.xml":
                head, _, _rest = data.partition(b"<w:body>")
                data = head + b"<w:body>" + body + b"<w:sectPr/></w:body></w:document>"
            flooded.writestr(item, data)
    return path


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"<w:p><w:r><w:t>a</w:t></w:r></w:p>" * 3_000_000, "more than 1,000,000 XML elements"),
        (b"<w:p>" + b"<w:r>" * 300 + b"</w:r>" * 300 + b"</w:p>", "deeper than 256 levels"),
        (b"<w:p><w:r><w:t>" + b"a" * 30_000_000 + b"</w:t></w:r></w:p>", "one run of text over 10 MB"),
    ],
    ids=["3M-paragraphs", "300-deep", "30MB-text-run"],
)
def test_a_docx_whose_xml_is_a_flood_is_refused_as_what_it_is(
    make_engine: Callable[..., Any], tmp_path: Path, store_snapshot: Snapshot, body: bytes, said: str
) -> None:
    rig = _with_kept_document(make_engine, tmp_path)
    flood = _flooded(tmp_path / "flood.docx", body)
    assert flood.stat().st_size < 5 * 1024 * 1024  # far under the upload limit, and under the unpacked one
    (result,) = finishes(lambda: rig.engine.library.ingest([(flood, flood.name)]))
    assert result.status == "failed" and said in result.message and "flood" in result.message
    assert "corrupt or password-protected" not in result.message
    assert result.said is not None and result.said.code.startswith("ingest.flood_")
    assert [d.name for d in rig.engine.library.documents()] == ["kettle.md"]
    assert store_snapshot(rig).agree()


def test_a_long_word_file_reads_in_seconds(tmp_path: Path) -> None:
    # python-docx looked each paragraph's style up by scanning every style: 28 times slower on these. The paragraphs
    # are written as python-docx's add_paragraph writes them, without its 4 s of adding them one by one.
    body = "".join(f"<w:p><w:r><w:t>Paragraph {i} of a long report.</w:t></w:r></w:p>" for i in range(20_000))
    long = _flooded(tmp_path / "long.docx", body.encode())
    parsed = bounded(parse_file, long, within_s=20)
    assert sum(s.text.count("of a long report") for s in parsed.sections) == 20_000


def test_a_file_that_is_mostly_repetition_is_refused_before_it_is_embedded(
    make_engine: Callable[..., Any], tmp_path: Path, store_snapshot: Snapshot
) -> None:
    rig = _with_kept_document(make_engine, tmp_path)
    digits = tmp_path / "digits.csv"  # 5,000 rows of 200 cells of one digit: 5,000 chunks of the same row
    digits.write_text(",".join(f"c{i}" for i in range(200)) + "\n" + ("7," * 199 + "7\n") * 5_000, "utf-8")
    # Refused in seconds; embedding it took a quarter of an hour
    (result,) = finishes(lambda: rig.engine.library.ingest([(digits, digits.name)]), within_s=60)
    assert result.status == "failed" and "mostly repetition" in result.message
    assert result.said is not None and result.said.code == "ingest.repetition"
    assert [d.name for d in rig.engine.library.documents()] == ["kettle.md"]
    assert store_snapshot(rig).agree()


def test_a_refused_upload_is_not_read_again_to_measure_its_coverage(
    make_engine: Callable[..., Any], tmp_path: Path
) -> None:
    """The refusals for too many chunks and for repetition come before the file is read a second time for its
    coverage (a sheet of 20 million cells: twice its parse, spent on a file refused anyway). Markdown files under
    an add-on's extension, whose reference text says when it is read."""
    from ragapp.ingest.parsers.base import PARSERS, REFERENCES

    read: list[str] = []

    def reference(path: Path, report: Any) -> str:
        read.append(path.read_text("utf-8")[:12])
        return str(REFERENCES.get(".md")(path, report))

    files = {
        "sections.tally": "".join(f"# Part {i}\n\nPart {i} holds one line.\n\n" for i in range(200)),  # 200 chunks
        "digits.tally": "# Digits\n\n" + "\n\n".join("7 " * 180 for _ in range(140)),  # 140 chunks of one row
        "kettle.tally": f"# Kettle\n\n{KEPT}\n",
    }
    rig = make_engine(ingest={"max_chunks": 150})
    with PARSERS.registered(".tally", PARSERS.get(".md")), REFERENCES.registered(".tally", reference):
        results = {}
        for name, text in files.items():
            path = tmp_path / name
            path.write_text(text, "utf-8")
            (results[name],) = rig.engine.library.ingest([(path, name)])
    assert "over the 150 a document may have" in results["sections.tally"].message
    assert "mostly repetition" in results["digits.tally"].message
    assert results["kettle.tally"].status == "added", results["kettle.tally"].message
    assert read == ["# Kettle\n\nTh"]  # the kept file's coverage only
