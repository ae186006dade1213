"""The README must stay true: its two commands, and a configuration table that matches the settings."""

from __future__ import annotations

from pathlib import Path

from ragapp.config import settings_table

README = (Path(__file__).resolve().parents[2] / "README.md").read_text("utf-8")


def test_readme_documents_every_setting_with_its_default() -> None:
    missing = [line for line in settings_table().splitlines() if line not in README]
    assert not missing, "README configuration table is stale; regenerate with `python -m ragapp.config`:\n" + "\n".join(
        missing
    )


def test_readme_opens_with_the_two_commands() -> None:
    head = README[:1200]
    assert "make run" in head and "make test" in head


def test_ci_runs_the_readme_test_command() -> None:
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text("utf-8")
    assert "make test" in ci
