"""``python -m ragbench.llama_build``: llama.cpp compiled for AVX2, for AVX-512 and with AMX, side by side.

    python -m ragbench.llama_build --build --variants avx2,avx512,amx --rounds 4 \\
        --output results/bench/llama-build.json

Each variant is compiled from llama-cpp-python's source with the CMake options ``ragapp/models/cpu_features.py``
gives it (``pip wheel --no-cache-dir``, timed: the compile time) and installed into its own folder under
``--work``; the virtualenv's own llama-cpp-python is left alone. Then the packaged model reads the same prompt and
generates the same number of tokens in a fresh child process per run, with the variant's folder first on
PYTHONPATH, the variants interleaved (A B C, B C A, C A B, ...) so a machine that gets busier or quieter favours
none. Prefill and generation speeds are llama.cpp's own counters (``llama_perf_context``); each child first reads
a few tokens to warm up, so page faults and one-time set-up are not counted. Prints a table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ragapp.config import REPO_ROOT, Settings
from ragapp.models.cpu_features import PORTABLE, choose_build, kernel_grants_amx, read_cpu_flags
from ragapp.models.gguf import ensure_gguf

log = logging.getLogger("ragbench.llama_build")

VARIANTS = ("avx2", "avx512", "amx")
# A passage of a demo manual with a question after it: the shape of an answer's prompt.
PROMPT_SOURCE = REPO_ROOT / "data" / "demo" / "lumen_care_plus_terms.md"
WARM_UP_TOKENS = 16


def cmake_args(variant: str) -> str | None:
    """The options ``make setup`` would pass for this variant on this machine; None when this CPU cannot run it."""
    if variant == "avx2":
        return " ".join(PORTABLE)
    mode = "amx" if variant == "amx" else "auto"
    choice = choose_build(read_cpu_flags(), mode=mode, amx_granted=kernel_grants_amx())
    wanted = "-DGGML_AMX_INT8=ON" if variant == "amx" else "-DGGML_AVX512=ON"
    if wanted not in choice.args:
        log.info("no %s build here: %s", variant, "; ".join(choice.reasons))
        return None
    return choice.cmake_args


def requirement() -> str:
    for line in (REPO_ROOT / "requirements.txt").read_text("utf-8").splitlines():
        if line.lower().startswith("llama-cpp-python=="):
            return line.split("#", 1)[0].strip()
    raise SystemExit("requirements.txt pins no llama-cpp-python")


def build(variant: str, args: str, work: Path, source: str) -> dict[str, Any]:
    """Compile one variant into ``work/variant/wheel`` and install it into ``work/variant/site``."""
    folder = work / variant
    wheels = folder / "wheel"
    log.info("compiling %s: CMAKE_ARGS=%s", variant, args)
    started, children = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(wheels), source],
        env=os.environ | {"CMAKE_ARGS": args},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"compiling {variant} failed:\n{done.stderr[-3000:]}")
    # CPU seconds (the compilers' user + system time) do not count what else the machine was doing; wall does.
    cpu_s = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    record = {"variant": variant, "cmake_args": args, "compile_s": round(seconds, 1), "compile_cpu_s": round(cpu_s, 1)}
    (folder / "build.json").write_text(json.dumps(record), "utf-8")
    install(folder)
    log.info("compiled %s in %.0f s", variant, seconds)
    return record


def install(folder: Path) -> None:
    wheel = next((folder / "wheel").glob("llama_cpp_python-*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--upgrade", "--target", str(folder / "site"),
         str(wheel)],
        check=True,
    )  # fmt: skip


def prompt_text() -> str:
    passage = PROMPT_SOURCE.read_text("utf-8")[:1200]
    return f"Answer from the passage below.\n\n{passage}\n\nQuestion: What does the plan cover, and for how long?\n"


def run_once(folder: Path, model: Path, generate: int, threads: int) -> dict[str, Any]:
    """One fresh child with this variant first on the path: load, warm up, read the prompt, generate."""
    env = os.environ | {"PYTHONPATH": os.pathsep.join([str(folder / "site"), str(REPO_ROOT)])}
    command = [sys.executable, "-P", "-m", "ragbench.llama_build", "--worker", "--model", str(model),
               "--generate", str(generate), "--threads", str(threads)]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False, cwd=REPO_ROOT)
    if done.returncode != 0:
        how = "SIGILL (illegal instruction)" if done.returncode == -signal.SIGILL else f"exit {done.returncode}"
        return {"error": f"{how}: {done.stderr[-1500:]}"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def worker(model: Path, generate: int, threads: int) -> None:
    """The child's side: prints one JSON line of llama.cpp's counters."""
    import llama_cpp

    started = time.monotonic()
    llama = llama_cpp.Llama(
        model_path=str(model), n_ctx=2048, n_batch=512, n_threads=threads, n_threads_batch=threads, verbose=False
    )
    load_s = time.monotonic() - started
    tokens = llama.tokenize(prompt_text().encode("utf-8"))
    llama.eval(tokens[:WARM_UP_TOKENS])
    llama.reset()
    llama._ctx.kv_cache_clear()  # private: llama-cpp-python has no public call that empties the KV cache
    ctx = llama._ctx.ctx
    llama_cpp.llama_perf_context_reset(ctx)
    cpu_started = time.process_time()
    llama.eval(tokens)
    prefill_cpu_s = time.process_time() - cpu_started
    produced = []
    cpu_started = time.process_time()
    for _ in range(generate):  # greedy, and on past an end-of-text token: the same count for every variant
        token = llama.sample(top_k=1, temp=0.0)
        produced.append(token)
        llama.eval([token])
    generation_cpu_s = time.process_time() - cpu_started
    perf = llama_cpp.llama_perf_context(ctx)
    print(
        json.dumps({
            "library": llama_cpp.__file__,
            "system_info": llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip(),
            "load_s": round(load_s, 2),
            "prompt_tokens": perf.n_p_eval,
            "prefill_tps": round(perf.n_p_eval / (perf.t_p_eval_ms / 1000), 2),
            "generated_tokens": perf.n_eval,
            "generation_tps": round(perf.n_eval / (perf.t_eval_ms / 1000), 2),
            # Per second of CPU time: on a shared machine the wall clock counts other people's work too
            "prefill_cpu_tps": round(len(tokens) / prefill_cpu_s, 2),
            "generation_cpu_tps": round(generate / generation_cpu_s, 2),
            "text": llama.detokenize(produced).decode("utf-8", "replace"),
        })
    )  # fmt: skip


SPEEDS = ("prefill_cpu_tps", "generation_cpu_tps", "prefill_tps", "generation_tps")


def summarise(
    variants: list[str], builds: dict[str, dict[str, Any]], runs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per variant: the median of each speed over its runs, its range, and its ratio to the AVX2 build's."""
    rows = []
    for variant in variants:
        good = [r for r in runs if r["variant"] == variant and "error" not in r]
        build = builds.get(variant, {})
        failed = [r["error"].split(":", 1)[0] for r in runs if r["variant"] == variant and "error" in r]
        row: dict[str, Any] = {
            "variant": variant,
            "runs": len(good),
            "failed": sorted(set(failed)),
            "compile_s": build.get("compile_s"),
            "compile_cpu_s": build.get("compile_cpu_s"),
        }
        for key in (*SPEEDS, "load_s"):
            values = [r[key] for r in good]
            row[key] = round(statistics.median(values), 2) if values else None
            row[f"{key}_range"] = [min(values), max(values)] if values else None
        rows.append(row)
    base = next((r for r in rows if r["variant"] == "avx2"), None)
    for row in rows:
        for key in SPEEDS:
            ok = base is not None and base[key] and row[key]
            row[f"{key}_vs_avx2"] = round(row[key] / base[key], 3) if ok and base else None
    return rows


def _cell(row: dict[str, Any], key: str) -> str:
    if row[key] is None:
        return f"dies: {', '.join(row['failed'])}" if row.get("failed") else "–"
    low, high = row[f"{key}_range"]
    return f"{row[key]:.1f} ({low:.1f}–{high:.1f})"


def _ratio(row: dict[str, Any], key: str) -> str:
    return f"{row[f'{key}_vs_avx2']:.2f}×" if row[f"{key}_vs_avx2"] else "–"


def render(rows: list[dict[str, Any]]) -> str:
    """A Markdown table: speeds per CPU-second (what the build changes), then the wall-clock ones."""
    lines = [
        "| build | compile: wall / CPU | prefill tok/CPU-s | vs AVX2 | generation tok/CPU-s | vs AVX2 "
        "| prefill tok/s wall | generation tok/s wall | model load |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        wall, cpu = r["compile_s"], r["compile_cpu_s"]
        compile_cell = f"{wall / 60:.1f} / {cpu / 60:.1f} min" if wall and cpu else "–"
        load = f"{r['load_s']:.1f} s" if r["load_s"] is not None else "–"
        lines.append(
            f"| {r['variant']} | {compile_cell} | {_cell(r, 'prefill_cpu_tps')} | {_ratio(r, 'prefill_cpu_tps')} "
            f"| {_cell(r, 'generation_cpu_tps')} | {_ratio(r, 'generation_cpu_tps')} | {_cell(r, 'prefill_tps')} "
            f"| {_cell(r, 'generation_tps')} | {load} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ragbench.llama_build", description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", default=",".join(VARIANTS), help="of avx2, avx512, amx (default: %(default)s)")
    p.add_argument("--work", type=Path, default=REPO_ROOT / ".cache" / "llama-builds", help="builds go here")
    p.add_argument("--build", action="store_true", help="compile the variants not compiled in --work yet")
    p.add_argument("--source", default=None, help="sdist or requirement to compile (default: requirements.txt's pin)")
    p.add_argument("--rounds", type=int, default=4, help="runs of each variant, interleaved (default: 4)")
    p.add_argument("--generate", type=int, default=32, help="tokens generated per run (default: 64)")
    p.add_argument(
        "--threads", type=int, default=1,
        help="llama.cpp threads (default: 1, so that per-CPU-second speeds are the kernels' own: with more, "
        "OpenMP's waiting threads spin and count as CPU time)",
    )  # fmt: skip
    p.add_argument("--output", type=Path, default=REPO_ROOT / "results" / "bench" / "llama-build.json")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(args.model, args.generate, args.threads)
        return 0
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    asked = [v for v in args.variants.split(",") if v]
    unknown = set(asked) - set(VARIANTS)
    if unknown:
        raise SystemExit(f"unknown variants {', '.join(sorted(unknown))}: choose from {', '.join(VARIANTS)}")
    options = {variant: cmake_args(variant) for variant in asked}
    variants = [variant for variant in asked if options[variant] is not None]
    builds: dict[str, dict[str, Any]] = {}
    for variant in variants:
        record = args.work / variant / "build.json"
        if args.build and not record.is_file():
            builds[variant] = build(variant, str(options[variant]), args.work, args.source or requirement())
        elif record.is_file():
            builds[variant] = json.loads(record.read_text("utf-8"))
            if not (args.work / variant / "site" / "llama_cpp").is_dir():
                install(args.work / variant)
        else:
            raise SystemExit(f"{variant} is not compiled in {args.work}: add --build")
    settings = Settings()
    model = settings.llm.gguf_path or ensure_gguf(settings.llm.local_model, settings.paths.models_dir)
    runs: list[dict[str, Any]] = []
    args.output.parent.mkdir(parents=True, exist_ok=True)
    for round_ in range(args.rounds):
        order = variants[round_ % len(variants) :] + variants[: round_ % len(variants)]
        for variant in order:
            result = {"variant": variant, "round": round_ + 1} | run_once(
                args.work / variant, model, args.generate, args.threads
            )
            runs.append(result)
            log.info("%s", {k: v for k, v in result.items() if k not in ("text", "system_info", "library")})
            rows = summarise(variants, builds, runs)
            report = {
                "machine": {
                    "cpu": _cpu_model(),
                    "cores": os.cpu_count(),
                    "flags": sorted(read_cpu_flags() & {"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_int8"}),
                    "amx_granted": kernel_grants_amx(),
                    "kernel": platform.release(),
                    "note": "measured on a machine shared with other work: compare ratios within one run",
                },
                "model": model.name,
                "threads": args.threads,
                "generate": args.generate,
                "builds": builds,
                "summary": rows,
                "runs": runs,
            }
            args.output.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", "utf-8")  # as it goes
    print(render(summarise(variants, builds, runs)))
    return 0


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text("utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


if __name__ == "__main__":
    sys.exit(main())
