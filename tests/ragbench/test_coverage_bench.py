"""``python -m ragbench.coverage`` end to end on a folder the test writes: every format measured, a file that
loses text listed with what was not read, the held-out documents never opened."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from ragbench.coverage import HELD_OUT, files, main


@pytest.mark.integration
def test_the_benchmark_measures_each_format_and_lists_what_falls_short(tmp_path: Path, make_documents: Any) -> None:
    docs = tmp_path / "doc"
    (docs / "pkg").mkdir(parents=True)
    (docs / "pkg" / "how.html").write_text("<h1>Usage</h1>Text in the body.<pre>x = 1</pre><p>A paragraph.</p>")
    (docs / "pkg" / "notes.txt").write_text("Plain notes about the package and how it is configured.\n")
    (docs / "pkg" / "README.md").write_text("# Readme\n\nHow to build it from source, step by step.\n")
    (docs / "pkg" / "empty.txt").write_text("")
    make_documents.table_pdf(docs / "pkg" / "prices.pdf", "Price list", [["Model", "Price"], ["Alpha", "499"]])
    (docs / HELD_OUT[0]).mkdir()
    (docs / HELD_OUT[0] / "secret.html").write_text("<p>never read</p>")
    output = tmp_path / "coverage.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main([str(docs), "--output", str(output)]) == 0
    table = out.getvalue()
    assert all(fmt in table for fmt in ("html", "text", "markdown", "pdf"))
    result = json.loads(output.read_text("utf-8"))
    rows = {Path(r["file"]).name: r for r in result["rows"]}
    assert "secret.html" not in rows and not any(HELD_OUT[0] in str(p) for p in files([docs]))
    assert rows["how.html"]["coverage"] == 1.0 and rows["notes.txt"]["coverage"] == 1.0
    assert rows["prices.pdf"]["coverage"] >= 0.95
    assert rows["empty.txt"]["status"] == "not read" and "empty" in rows["empty.txt"]["reason"]
    assert result["summary"]["html"]["files"] >= 1 and result["summary"]["html"]["p5"] == 1.0
