"""Print the CMake options llama-cpp-python is compiled with on this machine (the Makefile's CMAKE_ARGS).

    python3 scripts/llama_cmake_args.py [--explain] [--cpuinfo FILE]

Runs with the system python3 before the virtualenv exists (standard library only); the decision lives in
ragapp/models/cpu_features.py. LLAMA_CPU=avx2 prints the portable build, LLAMA_CPU=amx adds AMX (see there).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ragapp.models.cpu_features import MODES, choose_build, kernel_grants_amx, read_cpu_flags  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="llama_cmake_args.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--explain", action="store_true", help="say why, on stderr")
    parser.add_argument("--cpuinfo", type=Path, default=Path("/proc/cpuinfo"), help="read the CPU's flags here")
    parser.add_argument("--no-amx-grant", action="store_true", help="decide as if the kernel did not grant AMX")
    args = parser.parse_args(argv)
    mode = os.environ.get("LLAMA_CPU", "").strip().lower() or "auto"
    if mode not in MODES:
        sys.stderr.write(f"LLAMA_CPU={mode!r} is not one of {', '.join(MODES)}\n")
        return 2
    granted = not args.no_amx_grant and kernel_grants_amx()
    choice = choose_build(read_cpu_flags(args.cpuinfo), mode=mode, amx_granted=granted)
    if args.explain:
        sys.stderr.write("".join(f"llama.cpp build: {reason}\n" for reason in choice.reasons))
    sys.stdout.write(choice.cmake_args + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
