"""The llama.cpp build comparison's arithmetic: medians, ranges and ratios to the AVX2 build, on hand-built runs."""

from __future__ import annotations

from typing import Any

from ragbench.llama_build import VARIANTS, cmake_args, render, summarise


def _run(variant: str, prefill: float, generation: float, *, error: bool = False) -> dict[str, Any]:
    if error:
        return {"variant": variant, "round": 1, "error": "SIGILL (illegal instruction): tilezero"}
    return {
        "variant": variant,
        "prefill_cpu_tps": prefill,
        "generation_cpu_tps": generation,
        "prefill_tps": prefill / 2,
        "generation_tps": generation / 2,
        "load_s": 1.0,
    }


def test_medians_and_ratios_to_the_avx2_build() -> None:
    builds = {"avx2": {"compile_s": 600.0, "compile_cpu_s": 1000.0}, "avx512": {"compile_s": 660.0}}
    runs = [
        _run("avx2", 40, 10),
        _run("avx512", 50, 11),
        _run("avx2", 44, 12),
        _run("avx512", 54, 12),
        _run("avx2", 42, 11),
        _run("avx512", 0, 0, error=True),  # a failed run counts for nothing
        _run("avx512", 52, 11.5),
    ]
    rows = {row["variant"]: row for row in summarise(["avx2", "avx512"], builds, runs)}
    assert rows["avx2"]["prefill_cpu_tps"] == 42 and rows["avx2"]["prefill_cpu_tps_range"] == [40, 44]
    assert rows["avx512"]["runs"] == 3 and rows["avx512"]["prefill_cpu_tps"] == 52
    assert rows["avx512"]["prefill_cpu_tps_vs_avx2"] == round(52 / 42, 3)
    assert rows["avx512"]["generation_cpu_tps_vs_avx2"] == round(11.5 / 11, 3)
    table = render(list(rows.values()))
    assert "| avx2 | 10.0 / 16.7 min | 42.0 (40.0–44.0) | 1.00× |" in table
    assert "| avx512 | – | 52.0 (50.0–54.0) | 1.24× |" in table  # no CPU time recorded: no compile cell


def test_a_build_that_dies_says_how() -> None:
    rows = summarise(["avx2", "amx"], {}, [_run("avx2", 40, 10), _run("amx", 0, 0, error=True)])
    assert rows[1]["runs"] == 0 and rows[1]["failed"] == ["SIGILL (illegal instruction)"]
    assert "| amx | – | dies: SIGILL (illegal instruction) | – |" in render(rows)


def test_the_avx2_variant_is_the_portable_build_on_any_machine() -> None:
    assert set(VARIANTS) == {"avx2", "avx512", "amx"}
    args = cmake_args("avx2")
    assert args is not None and "-DGGML_AVX2=ON" in args and "AVX512" not in args and "NATIVE=ON" not in args
