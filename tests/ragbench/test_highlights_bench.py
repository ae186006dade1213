"""``python -m ragbench.highlights`` end to end on PDFs the test writes: every chunk and quote asked for, the
shares in the table and the JSON, the held-out documents left out of a folder."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ragbench.coverage import HELD_OUT
from ragbench.highlights import main, pdfs


@pytest.mark.integration
def test_the_benchmark_asks_for_every_chunk_and_quote(tmp_path: Path, make_documents: Any) -> None:
    docs = tmp_path / "pdfs"
    (docs / HELD_OUT[0]).mkdir(parents=True)
    pages = [
        ["The battery manage-", "ment system stops charging at 45 degrees.", "Clean the ﬁlter every week."],
        ["The Alpha robot battery lasts 90 minutes", "on a full charge. Charge it for two hours."],
    ]
    make_documents.text_pages_pdf(docs / "manual.pdf", pages)
    make_documents.text_pdf(docs / HELD_OUT[0] / "secret.pdf", ["Never measured in a folder."])
    assert [p.name for p in pdfs([docs])] == ["manual.pdf"]
    output = tmp_path / "highlights.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main([str(docs), "--output", str(output)]) == 0
    assert "manual.pdf" in out.getvalue()
    (row,) = json.loads(output.read_text("utf-8"))["rows"]
    assert row["chunks"] == 2 and row["quotes"] == 4
    assert row["chunks_highlighted"] == 1.0 and row["quotes_highlighted"] == 1.0 and row["missed"] == []
