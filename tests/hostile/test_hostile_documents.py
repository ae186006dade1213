"""Hostile files of the new kinds: each refused with a clear message, parsed in a child process held to the
limits of ``tests/hostile/bounded.py`` (60 s, 2 GB)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from ragapp.core.errors import IngestError
from ragapp.core.types import ParsedDocument
from ragapp.ingest.parsing import parse_file
from tests.hostile.bounded import bounded


def _parse(path: Path) -> ParsedDocument:
    """What the child runs: ``path`` through the parser, as an upload is."""
    return parse_file(path, path.name)


def _png_header(path: Path, width: int, height: int) -> Path:
    """A PNG that claims ``width`` × ``height`` pixels (a decompression bomb's header) with one tiny row."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 4)) + chunk(b"IEND", b"")
    )
    return path


@pytest.mark.parametrize("name", ["deck.pptx", "sheet.xlsx"])
def test_office_files_that_are_not_zips_are_refused(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"PK\x03\x04 this is not really a zip" * 10)
    with pytest.raises(IngestError, match=name.replace(".", r"\.")):
        bounded(_parse, path)


def test_an_image_claiming_billions_of_pixels_is_refused_before_decoding(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="megapixel limit"):
        bounded(_parse, _png_header(tmp_path / "bomb.png", 100_000, 100_000))


def test_a_csv_with_one_giant_field_is_refused_with_a_message(tmp_path: Path) -> None:
    path = tmp_path / "giant.csv"
    path.write_text('name,notes\nalpha,"' + "x" * 300_000 + '"\n', "utf-8")
    with pytest.raises(IngestError, match=r"giant\.csv"):
        bounded(_parse, path)


def test_a_csv_of_binary_junk_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "junk.csv"
    path.write_bytes(bytes(range(256)) * 200)
    with pytest.raises(IngestError, match="binary"):
        bounded(_parse, path)


def test_a_pdf_whose_pages_are_all_blank_images_says_no_text(tmp_path: Path) -> None:
    from PIL import Image

    path = tmp_path / "blank_scan.pdf"
    Image.new("RGB", (800, 1100), "white").save(path, "PDF", resolution=100)
    with pytest.raises(IngestError, match="no text found"):
        bounded(_parse, path)
