"""Pictures embedded in a document's zip (a Word file, a deck, an EPUB): opened with bounds, read by OCR, and found
again by their file's name inside the zip to be shown (``ragapp.ingest.page_images.render_zip_figure``).

A picture is bytes from the upload: one that will not open (corrupt, truncated, of a kind Pillow cannot read such
as an EMF) or would unpack into more than ``MAX_PICTURE_PIXELS`` raises ``PictureError``, and its figure is left
out with that reason; the document's text is never lost for it.
"""

from __future__ import annotations

import io
import logging
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from ragapp.ingest.parse_context import ParseOptions

if TYPE_CHECKING:
    from PIL.Image import Image

log = logging.getLogger(__name__)

MAX_PICTURE_PIXELS = 40_000_000  # a larger picture is not decoded (a decompression bomb)
MAX_PICTURE_MB = 50  # a picture file larger than this unpacked is not read out of its zip


class PictureError(ValueError):
    """A picture that will not open: corrupt, of a kind not read, too large, or not in the file."""


def opened_picture(blob: bytes) -> Image:
    """The picture ``blob`` decoded whole, as RGB. Raises ``PictureError`` for one that will not open or is
    larger than ``MAX_PICTURE_PIXELS``."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(blob)) as opened:
            if opened.width * opened.height > MAX_PICTURE_PIXELS:
                raise PictureError(f"{opened.width}x{opened.height} pixels is too large to decode")
            return opened.convert("RGB")  # decodes every pixel: a truncated file fails here, not when shown
    except PictureError:
        raise
    except Exception as exc:  # Pillow raises many kinds for a broken file (OSError, SyntaxError, ValueError...)
        raise PictureError(f"the picture will not open: {exc!r}") from None


def picture_words(image: Image, settings: ParseOptions) -> str:
    """The words in a decoded picture, by OCR (``ragapp.models.ocr``); "" when OCR fails."""
    import numpy as np

    from ragapp.models.ocr import read_image

    try:
        words = read_image(np.asarray(image), latin=settings.ocr_latin, threads=settings.ocr_threads).text
        return " ".join(words.split())
    except Exception as exc:  # one unreadable picture costs its words, never the document
        log.info("OCR of a picture failed: %r", exc)
        return ""


def read_picture(blob: bytes, settings: ParseOptions) -> str:
    """The words in a picture's bytes, by OCR; "" for one that will not open (an EMF, a broken file)."""
    try:
        return picture_words(opened_picture(blob), settings)
    except PictureError as exc:
        log.info("a picture was not read: %s", exc)
        return ""


def zip_picture(path: Path, part: str) -> bytes:
    """The bytes of the picture file ``part`` inside the zip at ``path`` (a .docx, an .epub). Raises
    ``PictureError`` when it is not there, or is larger than ``MAX_PICTURE_MB`` unpacked."""
    try:
        with zipfile.ZipFile(path) as archive:
            return part_bytes(archive, part)
    except zipfile.BadZipFile as exc:
        raise PictureError(f"{path.name} is not a zip: {exc}") from None


def part_bytes(archive: zipfile.ZipFile, part: str) -> bytes:
    """The bytes of the file ``part`` inside the open zip ``archive``; ``PictureError`` as ``zip_picture``."""
    try:
        info = archive.getinfo(part)
        if info.file_size > MAX_PICTURE_MB * 1024 * 1024:
            raise PictureError(f"{part} is larger than {MAX_PICTURE_MB} MB")
        return archive.read(info)
    except PictureError:
        raise
    except Exception as exc:  # absent (KeyError), a bad deflate stream (zlib.error), a CRC mismatch, encrypted
        raise PictureError(f"{part} could not be read from the file: {exc!r}") from None
