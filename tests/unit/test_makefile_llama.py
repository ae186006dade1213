"""The Makefile's llama.cpp build options, as `make -n` (print, do not run) shows them: detected for this CPU,
forced portable by LLAMA_CPU=avx2, portable for the Space, and CMAKE_ARGS given by the user winning over both."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ragapp.models.cpu_features import PORTABLE, choose_build, read_cpu_flags

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("CMAKE_ARGS", "LLAMA_CPU", "MAKEFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "-n", *args], cwd=ROOT, env=clean | env, capture_output=True, text=True, check=False)


def _llama_build(**env: str) -> subprocess.CompletedProcess[str]:
    """What building llama-cpp-python would run, whether or not this venv has built it already (`-B`: a
    checkout that ran `make setup` has .venv/.llama, and `make -n rebuild-llama` cannot show its sub-make
    the file removed)."""
    return _make("-B", ".venv/.llama", **env)


def _options(printed: str, target: str) -> list[str]:
    """The CMake options in the line of `make -n` that records or passes them."""
    line = next(line for line in printed.splitlines() if target in line)
    return [word.strip('"') for word in line.split() if word.strip('"').startswith("-DGGML_")]


def test_the_build_is_the_one_this_cpu_gets() -> None:
    assert "rm -f .venv/.llama" in _make("rebuild-llama").stdout
    done = _llama_build()
    assert done.returncode == 0, done.stderr
    expected = list(choose_build(read_cpu_flags()).args)
    assert _options(done.stdout, "> .venv/.llama") == [a for a in expected if a.startswith("-DGGML_")]
    assert "--no-cache-dir" in done.stdout


def test_llama_cpu_avx2_and_the_space_get_the_portable_build() -> None:
    assert _options(_llama_build(LLAMA_CPU="avx2").stdout, "> .venv/.llama") == list(PORTABLE)
    assert _options(_make("space").stdout, "make_space.py") == list(PORTABLE)


def test_cmake_args_given_win() -> None:
    assert _options(_make("space", CMAKE_ARGS="-DGGML_CUDA=ON").stdout, "make_space.py") == ["-DGGML_CUDA=ON"]
    assert _options(_llama_build(CMAKE_ARGS="-DGGML_VULKAN=ON").stdout, "> .venv/.llama") == ["-DGGML_VULKAN=ON"]


def test_a_wrong_llama_cpu_stops_make_before_anything_is_built() -> None:
    done = _make("setup", LLAMA_CPU="native")
    assert done.returncode != 0
    assert "LLAMA_CPU" in done.stderr and "pip install" not in done.stdout
