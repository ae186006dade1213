"""Putting files in the Knowledge tab's upload box as a person does, for every browser test that uploads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

LISTED_MS = 60_000  # the box uploads the files to the server before it lists them; a busy runner takes seconds


def choose_files(page: Any, *paths: Path) -> None:
    """Put ``paths`` in the upload box and wait until it lists every one of them.

    The box lists a file as a table row whose cell is labelled with the file's name and shows the name's stem and
    suffix in two spans (``broken`` and ``.pdf``), so the whole name is found by that label, not as text: a wait
    for the text only saw the "Uploading 1 file... broken.pdf" shown while the upload ran, and missed it when the
    upload was quicker than the wait's first look (docs/lab-log.md, "Tests")."""
    box = page.locator("#upload")
    box.wait_for()
    box.locator("input[type=file]").set_input_files([str(p) for p in paths])
    for path in paths:
        box.locator("td.filename").and_(box.get_by_label(path.name, exact=True)).wait_for(timeout=LISTED_MS)
