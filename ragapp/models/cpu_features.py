"""Which instruction sets llama.cpp is compiled for: the CMake options for this CPU, decided from its flags.

``make setup`` compiles llama-cpp-python from source, and ``scripts/llama_cmake_args.py`` prints the options it
passes (CMAKE_ARGS), using this module before any virtualenv exists, so it is standard library only.

Never ``GGML_NATIVE``: ``-march=native`` also switches on what the CPU advertises but a virtual machine may not
enable (AMX, whose tile state the kernel must grant a process), and a native build crashed with "Illegal
instruction" (tilezero). Instead each family is named: AVX2 + FMA + F16C + BMI2 as before; the AVX-512 variants
the CPU reports (llama.cpp's AVX-512 Q4_K kernels read prompts 1.47x as fast here, docs/benchmarks.md). AMX only
when asked for (``LLAMA_CPU=amx``; see ``AMX_BROKEN``) and when the kernel grants this process the tile state,
which is what llama.cpp itself asks before it uses AMX. ``LLAMA_CPU=avx2`` forces the portable build (for a
wheel built on one machine and run on another: a Space).
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# Never compiled: llama-cpp-python's multimodal library (mtmd: image and audio chat), which ragapp never loads
# (llama_cpp imports it only inside its multimodal chat handlers). Left out, the compiler's CPU time on the CI's
# kind of machine fell from 618 s to 473 s (docs/lab-log.md, "Tests"), minutes off every fresh setup.
LEFT_OUT = ("-DLLAVA_BUILD=OFF",)
# The build every x86-64 machine from the last decade runs, and the one a wheel for other machines gets.
PORTABLE = ("-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_BMI2=ON")
# llama.cpp's GGML_AVX512 compiles with -mavx512f -mavx512cd -mavx512vl -mavx512dq -mavx512bw: all five, or none.
AVX512_BASE = frozenset({"avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"})
# The optional AVX-512 and AVX variants: /proc/cpuinfo flag -> llama.cpp 0.3.36's option (ggml/CMakeLists.txt).
AVX512_VARIANTS = {
    "avx512vbmi": "GGML_AVX512_VBMI",
    "avx512_vnni": "GGML_AVX512_VNNI",
    "avx512_bf16": "GGML_AVX512_BF16",
}
# llama.cpp's AMX kernels need AMX-INT8 and AVX512-VNNI (ggml-cpu/amx/amx.h); they cover Q4_0, Q4_1, Q8_0, Q4_K,
# Q5_K, Q6_K and IQ4_XS, so the packaged model's Q4_K_M weights.
AMX_FLAGS = frozenset({"amx_tile", "amx_int8", "avx512_vnni"})
MODES = ("auto", "avx2", "avx512", "amx")
# Why AMX is left out unless asked for: measured on the CI's kind of machine (docs/benchmarks.md), where the kernel
# grants AMX and hand-written AMX code runs, llama.cpp's AMX build (GCC 12, Debian 12) dies by SIGILL at its first
# prompt: GCC drops the stores that fill the tile configuration before ldtilecfg, so tiles stay unconfigured and
# the first tilezero is an illegal instruction. That is the crash the old Makefile blamed on a VM.
AMX_BROKEN = "llama.cpp 0.3.36's AMX kernels compiled by GCC 12 die by SIGILL (tilezero, unconfigured tiles)"

# Linux's arch_prctl: ask for the AMX tile data state (arch/x86/include/uapi/asm/prctl.h, Linux 5.16+).
_SYS_ARCH_PRCTL = 158  # x86-64
_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18


@dataclass(frozen=True)
class BuildChoice:
    """The CMake options, and why: one line per decision, for ``--explain`` and the docs."""

    args: tuple[str, ...]
    reasons: tuple[str, ...]

    @property
    def cmake_args(self) -> str:
        """The instruction-set options, then what is never built (``LEFT_OUT``)."""
        return " ".join((*self.args, *LEFT_OUT))


def cpu_flags(cpuinfo: str) -> frozenset[str]:
    """The first processor's flags from the text of /proc/cpuinfo (empty when it has none: not Linux on x86)."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def read_cpu_flags(path: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    try:
        return cpu_flags(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return frozenset()


def kernel_grants_amx() -> bool:
    """True when the kernel gives this process AMX's tile state: llama.cpp asks the same before using AMX, and a
    CPU inside a VM may advertise AMX that the kernel (or the hypervisor beneath it) does not enable."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, _XFEATURE_XTILEDATA)) == 0
    except (OSError, AttributeError):
        return False


def choose_build(flags: Iterable[str], *, mode: str = "auto", amx_granted: bool = False) -> BuildChoice:
    """Decide llama.cpp's CMake options from the CPU's flags.

    Args:
        flags: the CPU's flags as /proc/cpuinfo spells them.
        mode: ``auto`` (AVX2 and the AVX-512 variants this CPU reports), ``avx2`` (the portable build),
            ``avx512`` (the same as auto) or ``amx`` (auto, and AMX where the CPU and kernel offer it).
        amx_granted: whether the kernel grants AMX's tile state (``kernel_grants_amx``).
    """
    if mode not in MODES:
        raise ValueError(f"LLAMA_CPU={mode!r} is not one of {', '.join(MODES)}")
    have = frozenset(flags)
    if mode == "avx2":
        return BuildChoice(PORTABLE, ("LLAMA_CPU=avx2: the portable AVX2 build",))
    if not have:
        return BuildChoice(PORTABLE, ("no CPU flags to read (not Linux on x86-64): the portable AVX2 build",))
    args = ["-DGGML_NATIVE=OFF"]
    reasons = []
    for flag, option in (("avx", "AVX"), ("avx2", "AVX2"), ("fma", "FMA"), ("f16c", "F16C"), ("bmi2", "BMI2")):
        args.append(f"-DGGML_{option}={'ON' if flag in have else 'OFF'}")
    if "avx_vnni" in have:
        args.append("-DGGML_AVX_VNNI=ON")
    if not have >= AVX512_BASE:
        missing = ", ".join(sorted(AVX512_BASE - have))
        reasons.append(f"no AVX-512 (the CPU lacks {missing})")
        return BuildChoice(tuple(args), tuple(reasons))
    args.append("-DGGML_AVX512=ON")
    variants = [option for flag, option in AVX512_VARIANTS.items() if flag in have]
    args += [f"-D{option}=ON" for option in variants]
    reasons.append("AVX-512 F/CD/VL/DQ/BW" + "".join(f" + {o[len('GGML_AVX512_') :]}" for o in variants))
    if mode != "amx":
        reasons.append(f"no AMX: {AMX_BROKEN} (LLAMA_CPU=amx to try it)")
    elif not have >= AMX_FLAGS:
        reasons.append("no AMX (the CPU lacks " + ", ".join(sorted(AMX_FLAGS - have)) + ")")
    elif not amx_granted:
        reasons.append("no AMX: the CPU advertises it, but the kernel does not grant the tile state")
    else:
        args += ["-DGGML_AMX_TILE=ON", "-DGGML_AMX_INT8=ON"]
        if "amx_bf16" in have:
            args.append("-DGGML_AMX_BF16=ON")
        reasons.append(f"AMX: the CPU has it and the kernel grants it (LLAMA_CPU=amx; beware: {AMX_BROKEN})")
    return BuildChoice(tuple(args), tuple(reasons))
