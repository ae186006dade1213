"""Before the local model loads: does the llama.cpp library installed here run on this CPU at all?

llama-cpp-python is compiled on install for the instruction sets ``make setup`` saw (``cpu_features``). A wheel
built elsewhere (copied in, or reused from a pip cache filled on another machine) or a virtual machine that
advertises more than it enables makes the library die by SIGILL, "Illegal instruction", taking the server with
it and saying nothing useful. So a child process (``llama_probe.py``) loads the library and multiplies a small
Q4_K matrix with every kernel the build offers here; if the child dies by SIGILL, the app stops with a message
in English and Chinese that names the rebuild command. The verdict is kept in the state dir, keyed by the
library files and the CPU's flags, so a restart does not pay the probe (about a second) again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from ragapp.core.errors import LLMError
from ragapp.models.cpu_features import kernel_grants_amx, read_cpu_flags

logger = logging.getLogger(__name__)

VERDICT_FILE = "llama-cpu-check.json"
PROBE = Path(__file__).with_name("llama_probe.py")
# Loading the library and two tiny products take about a second; a machine under load may take longer.
_PROBE_TIMEOUT_S = 120.0

REBUILD_MESSAGE = (
    'The llama.cpp library installed here ({library}) stops with "Illegal instruction" on this CPU: it was '
    "compiled for instructions this machine does not have or does not enable (a wheel built on another machine, "
    "or taken from a pip cache filled there). Rebuild it for this CPU with `make rebuild-llama` (or "
    "`LLAMA_CPU=avx2 make rebuild-llama` for the portable AVX2 build), or use a model server "
    "(RAGAPP_LLM__BACKEND=openai).\n"
    "此处安装的 llama.cpp 库（{library}）在本机 CPU 上因“非法指令”（Illegal instruction）而退出：它是为本机没有"
    "或未启用的指令集编译的（例如在另一台机器上构建的 wheel，或来自那里的 pip 缓存）。请运行 `make rebuild-llama` "
    "为本机 CPU 重新编译（或运行 `LLAMA_CPU=avx2 make rebuild-llama` 编译通用的 AVX2 版本），或改用模型服务器"
    "（RAGAPP_LLM__BACKEND=openai）。"
)


@dataclass(frozen=True)
class Verdict:
    """What the probe found: ``runs``, ``illegal-instruction``, or ``inconclusive`` (the probe itself failed)."""

    status: str
    detail: str
    key: str = ""


def library_dir() -> Path | None:
    """Where llama-cpp-python keeps its compiled libraries, without loading them."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "lib"


def verdict_key(lib_dir: Path, flags: frozenset[str], amx_granted: bool) -> str:
    """A digest of the library files' contents and of what this CPU and kernel offer: either changing means
    probing again."""
    digest = hashlib.sha256()
    for path in sorted({p.resolve() for p in lib_dir.glob("*.so*") if p.is_file()}):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    digest.update(" ".join(sorted(flags)).encode() + f"\0amx={amx_granted}".encode())
    return digest.hexdigest()


def run_probe(command: list[str], timeout_s: float = _PROBE_TIMEOUT_S) -> Verdict:
    """Run the probe in a child process and read how it ended."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return Verdict("inconclusive", f"the probe did not finish within {timeout_s:.0f} s")
    except OSError as exc:
        return Verdict("inconclusive", f"the probe could not start: {exc}")
    if done.returncode == -signal.SIGILL:
        return Verdict("illegal-instruction", done.stderr.strip()[-500:])
    if done.returncode != 0:
        why = f"signal {-done.returncode}" if done.returncode < 0 else f"exit status {done.returncode}"
        return Verdict("inconclusive", f"the probe ended with {why}: {done.stderr.strip()[-500:]}")
    return Verdict("runs", done.stdout.strip()[-2000:])


def check_llama_runs(state_dir: Path, *, command: list[str] | None = None) -> Verdict:
    """Raise ``LLMError`` (English and Chinese, with the rebuild command) when the installed llama.cpp dies by an
    illegal instruction on this CPU; otherwise return the verdict, probing only when the library or CPU changed.

    An inconclusive probe (it failed for another reason) is logged and not kept: the model load that follows
    reports its own errors.
    """
    lib_dir = library_dir()
    if lib_dir is None or not lib_dir.is_dir():
        return Verdict("inconclusive", "llama_cpp is not installed")
    key = verdict_key(lib_dir, read_cpu_flags(), kernel_grants_amx())
    stored = state_dir / VERDICT_FILE
    verdict = _read(stored)
    if verdict is None or verdict.key != key:
        # Without -P, Python would put the probe's folder (ragapp/models) first on the path, shadowing packages.
        verdict = run_probe(command or [sys.executable, "-P", str(PROBE)])
        verdict = Verdict(verdict.status, verdict.detail, key)
        if verdict.status == "inconclusive":
            logger.warning("Could not check that llama.cpp runs on this CPU: %s", verdict.detail)
        else:
            _write(stored, verdict)
            logger.info("llama.cpp on this CPU: %s %s", verdict.status, verdict.detail)
    if verdict.status == "illegal-instruction":
        raise LLMError(REBUILD_MESSAGE.format(library=lib_dir.parent))
    return verdict


def _read(path: Path) -> Verdict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Verdict(str(data["status"]), str(data["detail"]), str(data["key"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write(path: Path, verdict: Verdict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(verdict)), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:  # a read-only state dir costs a probe per start, nothing else
        logger.warning("Could not keep the llama.cpp check's verdict in %s: %s", path, exc)
