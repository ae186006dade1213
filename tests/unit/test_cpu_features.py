"""Which instruction sets llama.cpp is compiled for, decided from sample /proc/cpuinfo flag sets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragapp.models.cpu_features import LEFT_OUT, PORTABLE, choose_build, cpu_flags

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "llama_cmake_args.py"

AVX2_ONLY = "fpu sse sse2 ssse3 fma f16c avx avx2 bmi1 bmi2"  # an AMD EPYC (Zen 2/3) or a Haswell..Skylake desktop
AVX512 = AVX2_ONLY + " avx512f avx512dq avx512cd avx512bw avx512vl avx512vbmi avx512_vnni avx512_bf16 avx_vnni"
SAPPHIRE_RAPIDS = AVX512 + " amx_bf16 amx_tile amx_int8"  # what this kind of CI machine reports
KNIGHTS_LANDING = AVX2_ONLY + " avx512f avx512cd avx512er avx512pf"  # AVX-512F without BW/VL/DQ


def _flags(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _cpuinfo(flags: str) -> str:
    return f"processor\t: 0\nmodel name\t: a CPU\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: sse\n"


def test_flags_come_from_the_first_processor() -> None:
    assert cpu_flags(_cpuinfo("avx2 fma")) == {"avx2", "fma"}
    assert cpu_flags("processor : 0\nFeatures : fp asimd\n") == frozenset()  # an ARM machine has no flags line


def test_an_avx2_cpu_gets_the_avx2_build_and_never_native() -> None:
    args = choose_build(_flags(AVX2_ONLY)).args
    assert args == PORTABLE
    assert "-DGGML_NATIVE=ON" not in args


def test_avx512_variants_follow_the_flags() -> None:
    args = choose_build(_flags(AVX512)).args
    assert set(PORTABLE) <= set(args)
    for option in ("AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16", "AVX_VNNI"):
        assert f"-DGGML_{option}=ON" in args
    assert not any("AMX" in a for a in args)
    without_bf16 = choose_build(_flags(AVX512) - {"avx512_bf16"}).args
    assert "-DGGML_AVX512=ON" in without_bf16 and "-DGGML_AVX512_BF16=ON" not in without_bf16


def test_avx512_needs_all_five_base_parts() -> None:
    choice = choose_build(_flags(KNIGHTS_LANDING))
    assert "-DGGML_AVX512=ON" not in choice.args
    assert "avx512bw" in " ".join(choice.reasons)


def test_no_amx_unless_asked_for_since_gcc_12_builds_of_it_die() -> None:
    choice = choose_build(_flags(SAPPHIRE_RAPIDS), amx_granted=True)
    assert not any("AMX" in a for a in choice.args)
    assert "-DGGML_AVX512_VNNI=ON" in choice.args
    assert "LLAMA_CPU=amx" in " ".join(choice.reasons)


def test_amx_when_asked_for_only_when_the_kernel_grants_it() -> None:
    granted = choose_build(_flags(SAPPHIRE_RAPIDS), mode="amx", amx_granted=True).args
    assert {"-DGGML_AMX_TILE=ON", "-DGGML_AMX_INT8=ON", "-DGGML_AMX_BF16=ON"} <= set(granted)
    refused = choose_build(_flags(SAPPHIRE_RAPIDS), mode="amx", amx_granted=False)
    assert not any("AMX" in a for a in refused.args)
    assert "-DGGML_AVX512_VNNI=ON" in refused.args
    assert "does not grant" in " ".join(refused.reasons)


def test_amx_needs_avx512_vnni_too() -> None:
    args = choose_build(_flags(SAPPHIRE_RAPIDS) - {"avx512_vnni"}, mode="amx", amx_granted=True).args
    assert not any("AMX" in a for a in args)


def test_modes_force_the_portable_build_or_leave_amx_out() -> None:
    assert choose_build(_flags(SAPPHIRE_RAPIDS), mode="avx2", amx_granted=True).args == PORTABLE
    avx512 = choose_build(_flags(SAPPHIRE_RAPIDS), mode="avx512", amx_granted=True).args
    assert "-DGGML_AVX512=ON" in avx512 and not any("AMX" in a for a in avx512)
    assert choose_build(_flags(AVX2_ONLY), mode="amx", amx_granted=True).args == PORTABLE  # nothing to add
    with pytest.raises(ValueError, match="LLAMA_CPU"):
        choose_build(_flags(AVX2_ONLY), mode="native")


def test_a_cpu_without_avx2_is_not_given_it() -> None:
    args = choose_build(_flags("fpu sse sse2 ssse3 sse4_1 sse4_2 popcnt")).args
    assert "-DGGML_AVX2=OFF" in args and "-DGGML_AVX=OFF" in args and "-DGGML_NATIVE=OFF" in args


def test_no_flags_means_the_portable_build() -> None:
    assert choose_build(frozenset()).args == PORTABLE


def _script(tmp_path: Path, flags: str, *extra: str, mode: str | None = None) -> subprocess.CompletedProcess[str]:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(_cpuinfo(flags), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "LLAMA_CPU"} | ({"LLAMA_CPU": mode} if mode else {})
    # -I: the script must stand on its own (no virtualenv, no PYTHONPATH), as the Makefile runs it
    return subprocess.run(
        [sys.executable, "-I", str(SCRIPT), "--cpuinfo", str(cpuinfo), *extra],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip


def test_the_script_prints_the_options_for_a_cpuinfo(tmp_path: Path) -> None:
    done = _script(tmp_path, SAPPHIRE_RAPIDS, "--no-amx-grant", "--explain", mode="amx")
    assert done.returncode == 0, done.stderr
    args = done.stdout.split()
    assert "-DGGML_AVX512_BF16=ON" in args and not any("AMX" in a for a in args)
    assert "does not grant" in done.stderr
    assert _script(tmp_path, AVX2_ONLY).stdout.split() == [*PORTABLE, *LEFT_OUT]


def test_the_script_honours_llama_cpu_and_refuses_nonsense(tmp_path: Path) -> None:
    assert _script(tmp_path, SAPPHIRE_RAPIDS, mode="avx2").stdout.split() == [*PORTABLE, *LEFT_OUT]
    bad = _script(tmp_path, SAPPHIRE_RAPIDS, mode="native")
    assert bad.returncode == 2 and bad.stdout == "" and "LLAMA_CPU" in bad.stderr


@pytest.mark.parametrize("mode", ["auto", "avx2"])
def test_the_multimodal_library_is_never_compiled(tmp_path: Path, mode: str) -> None:
    # ragapp never loads llama-cpp-python's mtmd library; compiling it was a quarter of the build's CPU time
    assert LEFT_OUT == ("-DLLAVA_BUILD=OFF",)
    assert choose_build(_flags(SAPPHIRE_RAPIDS), mode=mode).cmake_args.endswith(" -DLLAVA_BUILD=OFF")
    assert _script(tmp_path, SAPPHIRE_RAPIDS, mode=mode).stdout.split()[-1] == "-DLLAVA_BUILD=OFF"


def _dry_run(tmp_path: Path, *targets: str) -> str:
    """What `make` would run for ``targets`` with a virtualenv at ``tmp_path`` that does not exist yet, with the
    options the CPU decides (not a ``CMAKE_ARGS`` or ``LLAMA_CPU`` of the caller, nor an outer make's flags)."""
    outer = {"CMAKE_ARGS", "LLAMA_CPU", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", "-C", str(ROOT), f"VENV={tmp_path / 'venv'}", *targets],
        capture_output=True, text=True, check=False, env={k: v for k, v in os.environ.items() if k not in outer},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.replace("\\\n", " ")  # a recipe line continued with a backslash, as the shell reads it


def test_llama_cpp_compiles_without_its_common_library(tmp_path: Path) -> None:
    # llama-cpp-python forces llama.cpp's common library on and never loads it; the hook turns it off again
    hook = ROOT / "scripts" / "llama_without_common.cmake"
    assert "set(LLAMA_BUILD_COMMON OFF CACHE BOOL" in hook.read_text("utf-8")
    assert hook.read_text("utf-8").rstrip().endswith("FORCE)")
    compile_line = next(
        line for line in _dry_run(tmp_path, f"{tmp_path / 'venv'}/.llama").splitlines() if "--no-deps" in line
    )
    assert f"-DCMAKE_PROJECT_llama.cpp_INCLUDE={hook}" in compile_line
    assert "-DLLAVA_BUILD=OFF" in compile_line


def test_the_setup_installs_the_other_packages_while_llama_cpp_compiles(tmp_path: Path) -> None:
    # the compile needs only the virtualenv, not the other packages: `make -j2` runs it beside their install
    plan = _dry_run(tmp_path, "setup-python")
    lines = plan.splitlines()
    compile_at = next(i for i, line in enumerate(lines) if "--no-deps" in line)
    packages_at = next(i for i, line in enumerate(lines) if "requirements-but-llama.txt -c" in line)
    check_at = next(i for i, line in enumerate(lines) if "install -r requirements.txt -c" in line)
    assert max(compile_at, packages_at) < check_at  # the whole set is checked once both are in
