"""``make space`` (scripts/make_space.py): the Space's folder holds the app and what it reads at run time, a README
whose front matter configures the Space, and a requirements.txt that installs on its own; nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scripts.make_space import LFS_THRESHOLD, MARKER, build_space, builder_specifiers, pinned

ROOT = Path(__file__).resolve().parents[2]
CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON"


@pytest.fixture(scope="module")
def space(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("space") / "space"
    return out, build_space(out, CMAKE_ARGS)


def _front_matter(readme: str) -> dict[str, object]:
    assert readme.startswith("---\n")
    head, _, _body = readme[4:].partition("\n---\n")
    matter = yaml.safe_load(head)
    assert isinstance(matter, dict)
    return matter


def test_the_readme_configures_a_gradio_space(space: tuple[Path, list[Path]]) -> None:
    out, _files = space
    readme = (out / "README.md").read_text("utf-8")
    matter = _front_matter(readme)
    assert matter["sdk"] == "gradio"
    assert matter["sdk_version"] == pinned(ROOT / "requirements.txt")["gradio"]  # the Space installs this gradio
    assert matter["app_file"] == "app.py"
    assert matter["python_version"] == "3.11"  # a string: 3.10 written bare would read as 3.1
    assert matter["startup_duration_timeout"] == "1h"
    assert matter["suggested_hardware"] == "cpu-basic"
    assert matter["title"] and matter["emoji"]
    assert MARKER in readme


def test_the_folder_holds_the_app_and_its_run_time_files_only(space: tuple[Path, list[Path]]) -> None:
    out, files = space
    names = {path.as_posix() for path in files}
    on_disk = {path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()}
    assert names == on_disk
    for needed in (
        "app.py",
        "ragapp/__init__.py",
        "ragapp/config/space.py",
        "ragapp/rerank/weights/weights.safetensors",
        "data/intents/demo.yaml",
        "assets/examples.json",
        "requirements.txt",
        "pre-requirements.txt",
        ".gitattributes",
    ):
        assert needed in names, needed
    demo = sorted(p.name for p in (ROOT / "data" / "demo").iterdir() if p.is_file())
    assert sorted(p.name for p in (out / "data" / "demo").iterdir()) == demo
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {
        "app.py",
        "ragapp",
        "data",
        "assets",
        "LICENSES",
        "README.md",
        "requirements.txt",
        "pre-requirements.txt",
        ".gitattributes",
    }
    assert {name.split("/")[1] for name in names if name.startswith("data/")} == {"demo", "intents"}
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def test_requirements_install_on_their_own(space: tuple[Path, list[Path]]) -> None:
    out, _files = space
    lines = [line.split("#", 1)[0].strip() for line in (out / "requirements.txt").read_text("utf-8").splitlines()]
    lines = [line for line in lines if line]
    assert not [line for line in lines if line.startswith(("-c", "--constraint", "-r"))]  # mounted alone
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in lines  # torch's CPU build
    ours = pinned(ROOT / "requirements.txt")
    fixed = pinned(ROOT / "constraints.txt")
    llama = [line for line in lines if line.startswith("llama-cpp-python==")]
    assert llama == [
        f'llama-cpp-python=={ours["llama-cpp-python"]} --config-settings="cmake.args=-DGGML_NATIVE=OFF;-DGGML_AVX2=ON"'
    ]
    listed = pinned(out / "requirements.txt")  # the per-requirement option aside, every line is name==version
    for name, version in ours.items():
        assert listed[name] == version, name
    # What they pull in, at the versions of constraints.txt; the test and lint tools stay out.
    for name in ("numpy", "starlette", "httpx", "onnxruntime", "safetensors"):
        assert listed[name] == fixed[name], name
    for tool in ("pytest", "mypy", "ruff", "playwright", "import-linter"):
        assert tool not in listed, tool
    assert (out / "pre-requirements.txt").read_text("utf-8").split() == ["pip>=23.1"]


def test_no_pin_contradicts_what_the_space_s_build_installs_beside_it(space: tuple[Path, list[Path]]) -> None:
    out, _files = space
    listed = pinned(out / "requirements.txt")
    builder = builder_specifiers()  # gradio[oauth,mcp] at sdk_version, uvicorn, websockets
    assert "mcp" in builder and "authlib" in builder
    for name, version in listed.items():
        assert name not in builder or builder[name].contains(version, True), (name, version, str(builder[name]))
    # gradio's mcp extra caps pydantic below constraints.txt's: pydantic and what pins or needs it go unpinned.
    fixed = pinned(ROOT / "constraints.txt")
    if not builder["pydantic"].contains(fixed["pydantic"]):
        assert "pydantic" not in listed and "pydantic-core" not in listed
        assert "pydantic, pydantic-core" in (out / "requirements.txt").read_text("utf-8")


def test_git_lfs_carries_every_file_the_hub_would_refuse(space: tuple[Path, list[Path]]) -> None:
    out, files = space
    attributes = (out / ".gitattributes").read_text("utf-8")
    large = [path for path in files if (out / path).stat().st_size >= LFS_THRESHOLD]
    assert large, "the reranker's weights are over 10 MB"
    for path in large:
        assert path.suffix == ".safetensors" or f"{path.as_posix()} filter=lfs" in attributes
    assert "*.safetensors filter=lfs diff=lfs merge=lfs -text" in attributes.splitlines()


def test_a_clone_of_the_space_is_refreshed_with_its_git_kept(tmp_path: Path) -> None:
    out = tmp_path / "space"
    (out / ".git").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (out / "stale.py").write_text("removed by the refresh")
    build_space(out, CMAKE_ARGS)
    assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert not (out / "stale.py").exists() and (out / "app.py").is_file()


def test_a_folder_it_did_not_write_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(SystemExit, match="did not write"):
        build_space(tmp_path, CMAKE_ARGS)
    assert (tmp_path / "precious.txt").read_text() == "keep me"
