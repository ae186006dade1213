"""Putting files in the Knowledge tab's upload box as a person does, for every browser test that uploads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ATTEMPTS = 4  # a run's first upload lost its files twice in a row once (docs/lab-log.md, "Tests")


def choose_files(page: Any, *paths: Path, shown: str = "") -> None:
    """Put ``paths`` in the upload box and wait until it lists them (by ``shown``; the first file's name unless
    given). Tried up to four times: files set before the page's scripts have hydrated the box are lost, and on a
    loaded runner that window can last seconds."""
    box = page.locator("#upload")
    box.wait_for()
    listed = box.get_by_text(shown or paths[0].name).first
    for attempt in range(ATTEMPTS):
        box.locator("input[type=file]").set_input_files([str(p) for p in paths])
        try:
            listed.wait_for(timeout=20_000)
            return
        except Exception:
            if attempt == ATTEMPTS - 1:
                raise
