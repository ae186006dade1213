"""Write a folder that is a Hugging Face Space of the app, ready to push: ``make space`` (``dist/space``).

    python scripts/make_space.py [--out DIR] [--cmake-args "-DGGML_NATIVE=OFF ..."]

The folder holds what the app reads at run time and nothing else: app.py, the ragapp package, the demo
documents and intent tree, the example questions, the licences; a README.md whose front matter configures the
Space; and a requirements.txt that a Space can install as it is.

A Gradio Space builds with ``pip install -r requirements.txt`` and nothing beside it: the file is mounted
alone (so a ``-c constraints.txt`` line could not be read), and the Space's variables do not reach the build
(so CMAKE_ARGS cannot be set there). Hence requirements.txt here is requirements.txt with every package it
pulls in pinned from constraints.txt, the CPU build of torch named by its index, and llama-cpp-python given
the Makefile's CMAKE_ARGS as a per-requirement ``--config-settings`` (pip 23.1 or later reads those;
pre-requirements.txt asks for such a pip before the rest).

What the closure holds is read from the installed packages' metadata, so run this with the app's virtualenv
(``make space`` does).

A folder that is a clone of the Space (it has a ``.git``) is refreshed in place, its ``.git`` kept: then
``git add -A && git commit && git push`` publishes it.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

log = logging.getLogger("make_space")

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "dist" / "space"
# What the app reads at run time, beside the ragapp package: paths relative to the repository.
RUNTIME_FILES = ("app.py", "ragapp", "data/demo", "data/intents", "assets/examples.json", "LICENSES")
# The first line of the README written here: a folder that starts with it may be overwritten.
MARKER = "<!-- written by scripts/make_space.py (make space): edit the script, not this file -->"
# The Hub refuses files of 10 MB or more unless Git LFS carries them.
LFS_THRESHOLD = 10 * 1024 * 1024
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
LLAMA_CPP = "llama-cpp-python"
# A Gradio Space's build installs these in the same pip command as requirements.txt: gradio (at sdk_version)
# with these extras, and the two below.
BUILDER_EXTRAS = frozenset({"oauth", "mcp"})
BUILDER_ALSO = ("uvicorn>=0.14.0", "websockets>=10.4")
# First builds compile llama.cpp (5-10 minutes on two cores); the first start then assembles the model and
# indexes the demo documents. The Space's default timeout for starting is 30 minutes.
FRONT_MATTER = {
    "title": "ragapp",
    "emoji": "📚",
    "colorFrom": "blue",
    "colorTo": "green",
    "sdk": "gradio",
    "sdk_version": None,  # the gradio pinned in requirements.txt
    "python_version": '"3.11"',
    "app_file": "app.py",
    "suggested_hardware": "cpu-basic",
    "startup_duration_timeout": "1h",
    "license": "apache-2.0",
    "short_description": "Cited answers from your documents, local models on CPU",
}


def pinned(requirements: Path) -> dict[str, str]:
    """``name: version`` of each ``name==version`` line (names canonical; per-requirement options aside)."""
    pins: dict[str, str] = {}
    for line in requirements.read_text("utf-8").splitlines():
        text = line.split("#", 1)[0].split(" --", 1)[0].strip()
        if text and not text.startswith("-"):
            requirement = Requirement(text)
            (spec,) = requirement.specifier  # every line is pinned: name==version
            pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def closure(names: Iterable[str]) -> set[str]:
    """The canonical names of ``names`` and of every package they need on this platform, as installed here."""
    seen: set[str] = set()
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset()) for name in names]
    expanded: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, extras = todo.pop()
        key = canonicalize_name(name)
        if (key, extras) in expanded:
            continue
        expanded.add((key, extras))
        seen.add(key)
        try:
            requires = importlib.metadata.distribution(key).requires or []
        except importlib.metadata.PackageNotFoundError:
            raise SystemExit(
                f"{name} is not installed: run this with the app's virtualenv (make space does), after make setup"
            ) from None
        for text in requires:
            requirement = Requirement(text)
            if _wanted(requirement.marker, extras):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return seen


def _wanted(marker: Marker | None, extras: frozenset[str]) -> bool:
    if marker is None:
        return True
    return any(marker.evaluate({"extra": extra}) for extra in (extras or {""}))


def _requires(name: str) -> list[Requirement]:
    """What the installed ``name`` needs on this platform (its extras aside)."""
    texts = importlib.metadata.distribution(name).requires or []
    return [r for r in map(Requirement, texts) if _wanted(r.marker, frozenset())]


def builder_specifiers() -> dict[str, SpecifierSet]:
    """What the Space's build asks for beside requirements.txt, per package: gradio's requirements with its
    ``BUILDER_EXTRAS`` (read from the gradio installed here, which is sdk_version) and ``BUILDER_ALSO``."""
    texts = importlib.metadata.distribution("gradio").requires or []
    wanted = [r for r in map(Requirement, texts) if _wanted(r.marker, BUILDER_EXTRAS)]
    specifiers: dict[str, SpecifierSet] = {}
    for requirement in [*wanted, *map(Requirement, BUILDER_ALSO)]:
        name = canonicalize_name(requirement.name)
        specifiers[name] = specifiers.get(name, SpecifierSet()) & requirement.specifier
    return specifiers


def _ceiling(specifier: SpecifierSet | None) -> Version | None:
    """The highest version a specifier spells out as allowed (its <= and == bounds), if it has one."""
    bounds = [Version(s.version) for s in specifier or () if s.operator in ("<=", "==") and "*" not in s.version]
    return min(bounds) if bounds else None


def left_to_the_space(pins: dict[str, str], builder: dict[str, SpecifierSet]) -> set[str]:
    """The pins the Space's build would contradict, to leave to its resolver: a version the builder's own
    packages rule out, a package that needs more than the builder allows of one left out, and what a package
    left out pins exactly (pydantic-core follows pydantic). Errs towards leaving more out."""
    left = {name for name, version in pins.items() if name in builder and not builder[name].contains(version, True)}
    changed = bool(left)
    while changed:
        changed = False
        for name in sorted(set(pins) - left):
            for requirement in _requires(name):
                dep = canonicalize_name(requirement.name)
                ceiling = _ceiling(builder.get(dep))
                if dep in left and ceiling is not None and not requirement.specifier.contains(ceiling, True):
                    left.add(name)
                    changed = True
                    break
        for name in sorted(left):
            for requirement in _requires(name):
                dep = canonicalize_name(requirement.name)
                if dep in pins and dep not in left and any(s.operator == "==" for s in requirement.specifier):
                    left.add(dep)
                    changed = True
    return left


def space_requirements(requirements: Path, constraints: Path, cmake_args: str) -> str:
    """requirements.txt for the Space: ours as written (llama-cpp-python given ``cmake_args``), then every
    package they pull in at its constraints.txt version, but those the Space's build would contradict."""
    ours = pinned(requirements)
    if importlib.metadata.version("gradio") != ours["gradio"]:
        raise SystemExit("the gradio installed here is not the one requirements.txt pins: run make setup first")
    fixed = pinned(constraints)
    pulled = sorted(closure(ours) - set(ours))
    unlisted = [name for name in pulled if name not in fixed]
    if unlisted:
        log.warning("not in constraints.txt (pinned as installed here; regenerate it): %s", ", ".join(unlisted))
    builder = builder_specifiers()
    versions = {name: fixed.get(name) or importlib.metadata.version(name) for name in pulled} | ours
    left = left_to_the_space(versions, builder)
    if left & set(ours):
        raise SystemExit(
            f"requirements.txt pins {', '.join(sorted(left & set(ours)))} at versions a Gradio Space's build "
            f"contradicts (it installs gradio[{','.join(sorted(BUILDER_EXTRAS))}]): the Space would not build"
        )
    lines = [
        "# Written by scripts/make_space.py from requirements.txt and constraints.txt: a Space installs this file",
        "# alone, so what constraints.txt fixes is folded in.",
        "# torch: the CPU build (PyPI's pulls in gigabytes of CUDA libraries).",
        f"--extra-index-url {TORCH_CPU_INDEX}",
        "",
    ]
    for line in requirements.read_text("utf-8").splitlines():
        text = line.split("#", 1)[0].strip()
        if text and canonicalize_name(Requirement(text).name) == LLAMA_CPP and cmake_args.strip():
            # Compiled on install; a Space builds on one machine and may run on another, so not -march=native.
            line = f'{text} --config-settings="cmake.args={";".join(cmake_args.split())}"'
        lines.append(line)
    lines += ["", "# What the packages above pull in, at the versions CI passed with (constraints.txt)."]
    lines += [f"{name}=={fixed[name]}" for name in pulled if name in fixed and name not in left]
    if unlisted:
        lines += ["# Missing from constraints.txt: the versions installed where this file was written."]
        lines += [f"{name}=={versions[name]}" for name in unlisted if name not in left]
    if left:
        needs = ", ".join(f"{name}{builder[name]}" for name in sorted(left) if name in builder)
        lines += [
            f"# Left to the Space's resolver: its build installs gradio[{','.join(sorted(BUILDER_EXTRAS))}] "
            f"beside this file ({needs}), so not pinned:",
            f"# {', '.join(sorted(left))}.",
        ]
    return "\n".join(lines) + "\n"


def readme(sdk_version: str) -> str:
    """The Space's README.md: its configuration (front matter), then a few words for its visitors."""
    fields = FRONT_MATTER | {"sdk_version": sdk_version}
    head = "\n".join(f"{key}: {value}" for key, value in fields.items())
    return f"""---
{head}
---
{MARKER}

# ragapp

Ask questions about your documents and get answers that cite them, with small models that run on the CPU
(Qwen2.5-Coder-1.5B through llama.cpp, multilingual-e5-small embeddings), in English and Chinese. A few demo
documents are indexed on the first start; upload your own in the Knowledge tab.

The first build compiles llama.cpp (5-10 minutes); the first start assembles the model from its packages and
indexes the demo documents (a few minutes more).

On a Space the app listens on 0.0.0.0:7860, lets huggingface.co show it in a frame and sizes its threads to
the Space's cores by itself. Attach a storage bucket at `/data` to keep uploads across restarts (the state goes
to `/data/ragapp`); without one the page says that they are lost. Any `RAGAPP_` variable set in the Space's
settings wins over these defaults; a public Space lets anybody upload and delete documents unless accounts are
turned on (`RAGAPP_AUTH__ENABLED=true`).
"""


def runtime_files(root: Path) -> list[Path]:
    """Files under ``RUNTIME_FILES`` (relative to ``root``), without caches."""
    files: list[Path] = []
    for entry in RUNTIME_FILES:
        path = root / entry
        candidates = sorted(path.rglob("*")) if path.is_dir() else [path]
        files += [
            p.relative_to(root)
            for p in candidates
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".pyc", ".pyo"}
        ]
    return files


def gitattributes(out: Path, files: Sequence[Path]) -> str:
    """Git LFS for every file the Hub would refuse as a plain blob, and for safetensors anyway."""
    lines = ["*.safetensors filter=lfs diff=lfs merge=lfs -text"]
    for path in files:
        if path.suffix != ".safetensors" and (out / path).stat().st_size >= LFS_THRESHOLD:
            lines.append(f"{path.as_posix()} filter=lfs diff=lfs merge=lfs -text")
    return "\n".join(lines) + "\n"


def _clear(out: Path) -> None:
    """Empty ``out`` for a fresh copy, keeping a clone's ``.git``; refuse a folder this script did not write."""
    if not out.exists():
        return
    entries = [p for p in out.iterdir() if p.name != ".git"]
    ours = (out / "README.md").is_file() and MARKER in (out / "README.md").read_text("utf-8", errors="replace")
    if entries and not ours and not (out / ".git").is_dir():
        raise SystemExit(f"{out} holds files this script did not write: pick another --out, or empty it first")
    for path in entries:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def build_space(out: Path, cmake_args: str, root: Path = ROOT) -> list[Path]:
    """Write the Space into ``out``; returns the files written, relative to ``out``."""
    _clear(out)
    out.mkdir(parents=True, exist_ok=True)
    files = runtime_files(root)
    for path in files:
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / path, out / path)
    pins = pinned(root / "requirements.txt")
    written = {
        "README.md": readme(pins["gradio"]),
        "requirements.txt": space_requirements(root / "requirements.txt", root / "constraints.txt", cmake_args),
        # Installed before requirements.txt: a pip that reads --config-settings on a requirement line.
        "pre-requirements.txt": "pip>=23.1\n",
        ".gitattributes": gitattributes(out, files),
    }
    for name, text in written.items():
        (out / name).write_text(text, "utf-8")
    return sorted([*files, *map(Path, written)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make_space.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the folder to write (default: dist/space)")
    parser.add_argument(
        "--cmake-args",
        default=os.environ.get("CMAKE_ARGS", ""),
        help="CMake options llama-cpp-python is compiled with on the Space (default: $CMAKE_ARGS, which the "
        "Makefile sets)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not args.cmake_args.strip():
        log.warning("no CMAKE_ARGS: llama.cpp will be built for the build machine's CPU (-march=native)")
    files = build_space(args.out, args.cmake_args)
    size = sum((args.out / path).stat().st_size for path in files)
    log.info("wrote %d files (%.1f MB) to %s", len(files), size / 1e6, args.out)
    large = [p for p in files if (args.out / p).stat().st_size >= LFS_THRESHOLD]
    if large:
        log.info(
            "Git LFS carries %s (.gitattributes): run `git lfs install` before committing", ", ".join(map(str, large))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
