"""The README and the manual must stay true: the README's two commands and its size, a configuration page that
matches the settings, and a site whose nav lists every page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import yaml

from ragapp.config import settings_table

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")
DOCS = ROOT / "docs"
README_MAX_LINES = 300


def test_configuration_page_documents_every_setting_with_its_default() -> None:
    page = (DOCS / "configuration.md").read_text("utf-8")
    missing = [line for line in settings_table().splitlines() if line not in page]
    assert not missing, "docs/configuration.md's table is stale; regenerate it with `python -m ragapp.config`:\n" + (
        "\n".join(missing)
    )


def test_readme_opens_with_the_two_commands() -> None:
    head = README[:1200]
    assert "make run" in head and "make test" in head


def test_readme_stays_short() -> None:
    lines = len(README.splitlines())
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines, more than {README_MAX_LINES}: move the detail to a page under docs/ "
        "and link to it"
    )


def _nav_pages(nav: object) -> Iterator[str]:
    """Every page file named in mkdocs' ``nav`` (entries are "page.md", {"Title": "page.md"} or a section)."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for entry in nav:
            yield from _nav_pages(entry)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


def test_every_docs_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    listed = {page for page in _nav_pages(config["nav"]) if page.endswith(".md")}
    pages = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
    assert not pages - listed, f"pages missing from mkdocs.yml's nav: {sorted(pages - listed)}"
    assert not listed - pages, f"mkdocs.yml's nav names pages that do not exist: {sorted(listed - pages)}"


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "make test" in ci
