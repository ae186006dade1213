"""The child side of the start-up check that the built llama.cpp runs on this CPU (``llama_cpu_check``).

Run as a script in a child process (``python llama_probe.py``), never imported by the app: a library compiled for
instructions this CPU lacks dies here by SIGILL, not in the server. It loads llama-cpp-python's own libraries and
multiplies a small Q4_K matrix (the packaged model's main weight type) by one row and by four rows, on the plain CPU
buffer and on every extra buffer type the build offers (AMX's tile kernels and the repacked layouts take over only
there), then compares each product with the same sum done in Python. It prints one JSON line: llama.cpp's
``system_info`` (which instruction sets the build uses), the buffer types tried, and the worst relative error.

llama-cpp-python exposes ggml only partly, so the few ggml calls are declared here with ctypes (stdlib only).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import math
import random
import sys
from pathlib import Path
from typing import Any

GGML_TYPE_F32 = 0
GGML_TYPE_Q4_K = 12
# Shapes the AMX kernels accept (rows a multiple of 32, columns of 256) and both of their paths: one row (the
# vector kernel, as in generation) and several (the tile kernel, as in reading a prompt).
COLUMNS, ROWS, BATCHES = 256, 32, (1, 4)
# Q4_K keeps 4 bits a weight: on these uniform random numbers the product lands about 6% from the exact one;
# a wrong kernel lands 100% or more away.
TOLERANCE = 0.25


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


def _library_dir() -> Path:
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        raise SystemExit("llama_cpp is not installed")
    return Path(spec.origin).parent / "lib"


def _declare(lib: ctypes.CDLL, name: str, result: Any, *args: Any) -> Any:
    function = getattr(lib, name)
    function.restype = result
    function.argtypes = list(args)
    return function


def main() -> int:
    # Importing llama_cpp loads its libraries as the app does (static initialisers run here, in the child).
    import llama_cpp

    system_info = llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip()
    libs = _library_dir()
    base = ctypes.CDLL(str(libs / "libggml-base.so"))
    cpu = ctypes.CDLL(str(libs / "libggml-cpu.so"))
    p = ctypes.c_void_p
    init = _declare(base, "ggml_init", p, InitParams)
    free = _declare(base, "ggml_free", None, p)
    new_2d = _declare(base, "ggml_new_tensor_2d", p, p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64)
    mul_mat = _declare(base, "ggml_mul_mat", p, p, p, p)
    new_graph = _declare(base, "ggml_new_graph", p, p)
    expand = _declare(base, "ggml_build_forward_expand", None, p, p)
    overhead = _declare(base, "ggml_graph_overhead", ctypes.c_size_t)
    tensor_overhead = _declare(base, "ggml_tensor_overhead", ctypes.c_size_t)
    quantize = _declare(
        base, "ggml_quantize_chunk", ctypes.c_size_t, ctypes.c_int, p, p, ctypes.c_int64, ctypes.c_int64,
        ctypes.c_int64, p,
    )  # fmt: skip
    alloc = _declare(base, "ggml_backend_alloc_ctx_tensors_from_buft", p, p, p)
    tensor_set = _declare(base, "ggml_backend_tensor_set", None, p, p, ctypes.c_size_t, ctypes.c_size_t)
    tensor_get = _declare(base, "ggml_backend_tensor_get", None, p, p, ctypes.c_size_t, ctypes.c_size_t)
    buffer_free = _declare(base, "ggml_backend_buffer_free", None, p)
    buft_name = _declare(base, "ggml_backend_buft_name", ctypes.c_char_p, p)
    compute = _declare(base, "ggml_backend_graph_compute", ctypes.c_int, p, p)
    backend_free = _declare(base, "ggml_backend_free", None, p)
    reg_dev_get = _declare(base, "ggml_backend_reg_dev_get", p, p, ctypes.c_size_t)
    proc_address = _declare(base, "ggml_backend_reg_get_proc_address", p, p, ctypes.c_char_p)
    cpu_buft = _declare(base, "ggml_backend_cpu_buffer_type", p)()
    cpu_init = _declare(cpu, "ggml_backend_cpu_init", p)
    set_threads = _declare(cpu, "ggml_backend_cpu_set_n_threads", None, p, ctypes.c_int)
    cpu_reg = _declare(cpu, "ggml_backend_cpu_reg", p)()

    # The extra buffer types (AMX, the repacked layouts) the build offers on this machine, NULL-terminated.
    bufts = [cpu_buft]
    address = proc_address(cpu_reg, b"ggml_backend_dev_get_extra_bufts")
    if address:
        extra = ctypes.CFUNCTYPE(ctypes.POINTER(ctypes.c_void_p), p)(address)(reg_dev_get(cpu_reg, 0))
        i = 0
        while extra and extra[i]:
            bufts.append(extra[i])
            i += 1

    rng = random.Random(7)
    weights = [rng.uniform(-1, 1) for _ in range(ROWS * COLUMNS)]
    weights_c = (ctypes.c_float * len(weights))(*weights)
    inputs = {m: [rng.uniform(-1, 1) for _ in range(m * COLUMNS)] for m in BATCHES}
    expected = {
        m: [
            math.fsum(weights[r * COLUMNS + k] * inputs[m][b * COLUMNS + k] for k in range(COLUMNS))
            for b in range(m)
            for r in range(ROWS)
        ]
        for m in BATCHES
    }
    quantized = ctypes.create_string_buffer(ROWS * COLUMNS)  # Q4_K needs ~0.56 bytes a weight: room to spare
    size = quantize(GGML_TYPE_Q4_K, weights_c, quantized, 0, ROWS, COLUMNS, None)

    backend = cpu_init()
    set_threads(backend, 2)
    tried: list[str] = []
    worst = 0.0
    for buft in bufts:
        meta = InitParams(tensor_overhead() * 8 + overhead(), None, True)
        weight_ctx, work_ctx = init(meta), init(meta)
        weight = new_2d(weight_ctx, GGML_TYPE_Q4_K, COLUMNS, ROWS)
        weight_buffer = alloc(weight_ctx, buft)
        if not weight_buffer:  # this buffer type does not take such a tensor: nothing to try
            free(weight_ctx)
            free(work_ctx)
            continue
        tensor_set(weight, quantized, 0, size)
        xs = {m: new_2d(work_ctx, GGML_TYPE_F32, COLUMNS, m) for m in BATCHES}
        ys = {m: mul_mat(work_ctx, weight, xs[m]) for m in BATCHES}
        graph = new_graph(work_ctx)
        for m in BATCHES:
            expand(graph, ys[m])
        work_buffer = alloc(work_ctx, cpu_buft)
        for m in BATCHES:
            data = (ctypes.c_float * len(inputs[m]))(*inputs[m])
            tensor_set(xs[m], data, 0, ctypes.sizeof(data))
        if compute(backend, graph) != 0:
            raise SystemExit(f"ggml could not compute on {buft_name(buft).decode()}")
        for m in BATCHES:
            got = (ctypes.c_float * (ROWS * m))()
            tensor_get(ys[m], got, 0, ctypes.sizeof(got))
            error = math.dist(got, expected[m]) / max(math.hypot(*expected[m]), 1e-9)
            worst = max(worst, error)
        tried.append(buft_name(buft).decode())
        buffer_free(work_buffer)
        buffer_free(weight_buffer)
        free(weight_ctx)
        free(work_ctx)
    backend_free(backend)
    sys.stdout.write(json.dumps({"system_info": system_info, "buffer_types": tried, "worst_error": worst}) + "\n")
    return 0 if worst <= TOLERANCE else 3


if __name__ == "__main__":
    sys.exit(main())
