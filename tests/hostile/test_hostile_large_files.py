"""Large hostile files under the 50 MB upload limit, each parsed in a child process held to 60 s and 2 GB
(``tests/hostile/bounded.py``): a page of millions of tiny paragraphs. Each must end in a clear message or in
the part that fits, said so."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragapp.config import IngestSettings
from ragapp.core.errors import IngestError
from ragapp.ingest.boilerplate import split_boilerplate
from ragapp.ingest.parsing import parse_file
from ragapp.ingest.pipeline import check_chunk_floor
from tests.hostile.big_files import repeated_html
from tests.hostile.bounded import bounded


def _up_to_the_chunk_floor(path: Path) -> None:
    """What ingest does with the file until it refuses one sure to make too many chunks."""
    parsed = parse_file(path, path.name)
    check_chunk_floor(split_boilerplate(parsed, "d").doc, path.name, IngestSettings())


def test_a_49_mb_page_of_tiny_paragraphs_is_refused_as_too_many_chunks(tmp_path: Path) -> None:
    # 2.5 million <p>: BeautifulSoup's tree of it took 4.8 GB and 2 minutes before the refusal.
    path = repeated_html(tmp_path / "hello.html")
    with pytest.raises(IngestError, match=r"^hello\.html: it makes at least 77,\d+ chunks, over the 20,000"):
        bounded(_up_to_the_chunk_floor, path)
