"""The start-up check that the installed llama.cpp runs on this CPU: the real library in a real child process,
and a child that executes a real illegal instruction (x86's ud2) standing in for a library built for another CPU."""

from __future__ import annotations

import json
import platform
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ragapp.config import Settings
from ragapp.core.errors import LLMError
from ragapp.models import llama_cpu_check
from ragapp.models.llama_cpu_check import VERDICT_FILE, check_llama_runs

pytestmark = pytest.mark.integration

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make setup)")

# Executes ud2, the instruction x86 CPUs define as invalid: the kernel kills the process with SIGILL, exactly as
# it kills one that runs an AVX-512 or AMX instruction the CPU lacks or the kernel does not enable.
UD2 = """
import ctypes, mmap
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(b"\\x0f\\x0b")
ctypes.CFUNCTYPE(None)(ctypes.addressof(ctypes.c_char.from_buffer(page)))()
"""
ILLEGAL = [sys.executable, "-c", UD2]
x86_only = pytest.mark.skipif(platform.machine() != "x86_64", reason="ud2 is an x86 instruction")


def test_the_installed_library_runs_here_and_the_verdict_is_kept(tmp_path: Path) -> None:
    verdict = check_llama_runs(tmp_path)
    assert verdict.status == "runs", verdict.detail
    probed = json.loads(verdict.detail)
    assert "AVX2 = 1" in probed["system_info"]
    assert "CPU" in probed["buffer_types"]
    assert probed["worst_error"] < 0.25
    assert json.loads((tmp_path / VERDICT_FILE).read_text())["status"] == "runs"
    # A restart reads the kept verdict: a probe that would die is not run again.
    assert check_llama_runs(tmp_path, command=ILLEGAL).status == "runs"


@x86_only
def test_an_illegal_instruction_stops_with_the_rebuild_command_in_both_languages(tmp_path: Path) -> None:
    with pytest.raises(LLMError) as caught:
        check_llama_runs(tmp_path, command=ILLEGAL)
    message = str(caught.value)
    assert "Illegal instruction" in message and "非法指令" in message
    assert message.count("make rebuild-llama") == 4  # both commands, in both languages
    assert json.loads((tmp_path / VERDICT_FILE).read_text())["status"] == "illegal-instruction"
    # Kept too: the next start says the same without probing.
    with pytest.raises(LLMError):
        check_llama_runs(tmp_path, command=[sys.executable, "-c", "pass"])


@x86_only
def test_other_cpu_flags_mean_probing_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_llama_runs(tmp_path, command=[sys.executable, "-c", "print('{}')"]).status == "runs"
    monkeypatch.setattr(llama_cpu_check, "read_cpu_flags", lambda: frozenset({"sse2", "avx2"}))
    with pytest.raises(LLMError):
        check_llama_runs(tmp_path, command=ILLEGAL)


def test_a_probe_that_fails_otherwise_neither_stops_the_app_nor_is_kept(tmp_path: Path) -> None:
    verdict = check_llama_runs(tmp_path, command=[sys.executable, "-c", "raise SystemExit('no ggml here')"])
    assert verdict.status == "inconclusive"
    assert "no ggml here" in verdict.detail
    assert not (tmp_path / VERDICT_FILE).exists()


def test_an_engine_on_the_local_model_will_not_start_on_a_library_that_died_here(
    make_settings: Callable[..., Settings],
) -> None:
    from ragapp.engine.build import build_engine
    from ragapp.models.cpu_features import kernel_grants_amx, read_cpu_flags

    lib_dir = llama_cpu_check.library_dir()
    assert lib_dir is not None
    # The verdict a start on a CPU the library was not built for leaves behind (this CPU runs it, so it is written).
    key = llama_cpu_check.verdict_key(lib_dir, read_cpu_flags(), kernel_grants_amx())
    verdict = {"status": "illegal-instruction", "detail": "", "key": key}
    settings = make_settings(llm={"backend": "llama_cpp"})
    settings.paths.state_dir.mkdir(parents=True)
    (settings.paths.state_dir / VERDICT_FILE).write_text(json.dumps(verdict), encoding="utf-8")
    with pytest.raises(LLMError, match="make rebuild-llama"):
        build_engine(settings)
