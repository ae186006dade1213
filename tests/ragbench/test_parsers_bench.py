"""The parser benchmark's own arithmetic and its office-file runs (real files, made by the benchmark)."""

from __future__ import annotations

from pathlib import Path

from ragapp.config import Settings
from ragbench.parsers import bench_office, cer, edit_distance


def test_edit_distance_and_cer() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3 and edit_distance("same", "same") == 0
    assert cer("The  Alpha\nrobot", "The Alpha robot") == 0.0  # whitespace is not content
    assert cer("Tha Alpha", "The Alpha") == 1 / 8


def test_office_runs_report_items_and_chunks(tmp_path: Path) -> None:
    rows = {row["parser"]: row for row in bench_office(tmp_path, Settings())}
    assert set(rows) == {"pptx", "xlsx", "csv", "docx"}
    assert rows["pptx"]["slides"] == 50 and rows["pptx"]["tables"] == 50
    assert rows["xlsx"]["rows"] == 5000 and rows["xlsx"]["chunks"] > 100
    assert all(row["chunks_per_s"] > 0 for row in rows.values())
