"""ragbench holds living benchmarks only (STYLE.md, rule 17): every module is run by a make target or imported by
one that is, and every make target that runs one is named in the manual. A one-off experiment goes once its
figure is in the docs with the commit that measured it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = (ROOT / "Makefile").read_text("utf-8")


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] in ("__init__", "__main__"):
        parts.pop()
    return ".".join(parts)


MODULES = {path: _module(path) for path in sorted((ROOT / "ragbench").rglob("*.py")) if path.name != "__init__.py"}


def _imports(path: Path) -> set[str]:
    """The ragbench modules ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ragbench."))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ragbench"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)  # `from ragbench import scale`
    return found & set(MODULES.values())


def _make_targets() -> dict[str, str]:
    """Each make target's recipe, with the variables it uses (``$(EVAL)``) written out."""
    variables = dict(re.findall(r"^(\w+)\s*:?=\s*(.*(?:\\\n.*)*)", MAKEFILE, re.MULTILINE))
    targets: dict[str, str] = {}
    for name, recipe in re.findall(r"^([\w-]+):[^=\n]*\n((?:\t.*\n)+)", MAKEFILE, re.MULTILINE):
        for _ in range(3):  # variables that name variables
            recipe = re.sub(r"\$\((\w+)\)", lambda m: variables.get(m.group(1), m.group(0)), recipe)
        targets[name] = recipe
    return targets


def _run_by(recipe: str) -> set[str]:
    return set(re.findall(r"-m (ragbench(?:\.\w+)*)", recipe))


def test_every_ragbench_module_is_reached_from_a_make_target() -> None:
    reached = {m for recipe in _make_targets().values() for m in _run_by(recipe)}
    by_name = {name: path for path, name in MODULES.items()}
    todo = list(reached)
    while todo:
        path = by_name.get(todo.pop())
        for name in _imports(path) if path else ():
            if name not in reached:
                reached.add(name)
                todo.append(name)
    unreached = sorted(set(MODULES.values()) - reached)
    assert not unreached, (
        f"ragbench modules no make target runs or imports: {unreached}. Give a living benchmark a make target and a "
        "docs section; a one-off experiment goes once its figure is in the docs with the commit that measured it."
    )


def test_every_benchmark_target_is_named_in_the_manual() -> None:
    manual = "\n".join(page.read_text("utf-8") for page in (ROOT / "docs").glob("*.md"))
    benchmarks = [name for name, recipe in _make_targets().items() if _run_by(recipe)]
    assert "bench" in benchmarks and "answer-eval" in benchmarks
    unnamed = [name for name in benchmarks if f"make {name}" not in manual]
    assert not unnamed, f"make targets that run a benchmark but no docs page names: {unnamed}"


def test_every_ragbench_command_is_run_by_a_make_target() -> None:
    """A module that runs as ``python -m`` is a command: a make target runs it, or it is not a command (imported
    only, its functions shared)."""
    run = {m for recipe in _make_targets().values() for m in _run_by(recipe)}
    commands = {name for path, name in MODULES.items() if 'if __name__ == "__main__"' in path.read_text("utf-8")}
    orphans = sorted(commands - run)
    assert not orphans, f"ragbench commands no make target runs: {orphans}"
