"""Running on a Hugging Face Space: recognised from the variables every Space sets, it changes the defaults a
Space needs (listen on all interfaces at 7860, let huggingface.co frame the page, keep the state on attached
storage, size the threads to the Space's cores). A ``RAGAPP_`` variable the owner set always wins: these
defaults enter ``Settings`` as its last source (``SpaceDefaults``).

The functions take the environment, the storage folder and the core count as arguments, so that tests can
describe any Space; only ``available_cores`` and ``SpaceDefaults`` read this machine.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from ragapp.config.system import EmbeddingSettings

# Where a Space mounts attached storage (a storage bucket mounted at /data, or the older persistent storage):
# the only folder of a Space that outlives a restart.
SPACE_DATA_DIR = Path("/data")
# The port a Gradio Space's proxy forwards to.
SPACE_PORT = 7860
# The Space's page on huggingface.co shows the app (served from <owner>-<name>.hf.space, its 'self') in a
# frame. Not *.hf.space: that would let every other Space frame this one.
SPACE_FRAME_ANCESTORS = "'self' https://huggingface.co"
_STATE_DIR_VARIABLE = "RAGAPP_PATHS__STATE_DIR"


@dataclass(frozen=True)
class Space:
    """The Space the app runs on."""

    space_id: str  # owner/name
    cores: int  # CPU cores it may use
    storage: Path | None  # the attached storage folder (writable), None when the Space has none
    state_dir_set: bool = False  # the owner chose the state dir (RAGAPP_PATHS__STATE_DIR): none of our business


def detect_space(environ: Mapping[str, str], data_dir: Path = SPACE_DATA_DIR, cores: int | None = None) -> Space | None:
    """The Space described by ``environ`` (None: not on a Space). ``SPACE_ID`` is set on every Space, Gradio
    or Docker (``SYSTEM=spaces`` on Gradio ones only). ``data_dir`` counts as storage when it is a writable
    folder; ``cores`` (default: ``available_cores(environ)``) is what the threads are sized to."""
    space_id = environ.get("SPACE_ID", "").strip()
    if not space_id:
        return None
    storage = data_dir if data_dir.is_dir() and os.access(data_dir, os.W_OK | os.X_OK) else None
    state_dir_set = any(key.upper() == _STATE_DIR_VARIABLE for key in environ)
    return Space(space_id, cores if cores is not None else available_cores(environ), storage, state_dir_set)


def settings_defaults(space: Space) -> dict[str, dict[str, Any]]:
    """The settings a Space changes, as a nested mapping of ``Settings`` fields."""
    # Without storage the state is lost on restart, unless the owner put it somewhere we know nothing about.
    paths: dict[str, Any] = {"ephemeral": space.storage is None and not space.state_dir_set}
    if space.storage is not None:
        paths["state_dir"] = space.storage / "ragapp"
    return {
        "paths": paths,
        # A Space's proxy reaches the app from outside its container, on the port it forwards to.
        "ui": {"host": "0.0.0.0", "port": SPACE_PORT, "frame_ancestors": SPACE_FRAME_ANCESTORS},
        # llama.cpp's default (os.cpu_count()) counts the host's cores, not the Space's share of them.
        "llm": {"threads": space.cores},
        # The embedder's measured default, unless the Space has fewer cores.
        "embedding": {"threads": min(EmbeddingSettings().threads, space.cores)},
    }


def process_env_defaults(space: Space) -> dict[str, str]:
    """Variables the OpenMP runtimes under the models (torch's, llama.cpp's) read once, when first loaded: set
    them before importing any of those, and only where they are not set already."""
    return {
        # torch sizes its pool to the host's cores otherwise, many more threads than the Space may run.
        "OMP_NUM_THREADS": str(space.cores),
        # A free Space shares its cores with other busy processes: waiting threads that spin steal them from
        # the ones working (a question's embedding went from ~17 ms to over a second); sleeping ones do not.
        "OMP_WAIT_POLICY": "PASSIVE",
    }


def count_cores(affinity: int, cpu_max: str | None = None, cpu_cores: str | None = None) -> int:
    """The cores a process may use: the CPUs it may run on (``affinity``), fewer when the cgroup's quota
    (``cpu_max``, cgroup v2's "QUOTA PERIOD" or "max PERIOD") allows less time, or the Space says fewer
    (``cpu_cores``: its CPU_CORES variable). A fractional quota counts as a whole core; never less than 1."""
    counts = [affinity]
    if cpu_max:
        quota, _, period = cpu_max.strip().partition(" ")
        if quota.isdigit() and period.isdigit() and int(period) > 0:
            counts.append(math.ceil(int(quota) / int(period)))
    if cpu_cores:
        with contextlib.suppress(ValueError, OverflowError):  # a malformed value says nothing
            counts.append(math.ceil(float(cpu_cores)))
    return max(1, min(counts))


def available_cores(environ: Mapping[str, str]) -> int:
    """``count_cores`` for this process: its CPU affinity, its cgroup's CPU quota and the CPU_CORES variable."""
    return count_cores(len(os.sched_getaffinity(0)), _cgroup_cpu_max(), environ.get("CPU_CORES"))


def _cgroup_cpu_max() -> str | None:
    """The cgroup's CPU quota as cgroup v2 writes it ("QUOTA PERIOD"), from v2's cpu.max or v1's two files."""
    root = Path("/sys/fs/cgroup")
    try:
        return (root / "cpu.max").read_text("ascii")
    except OSError:
        pass
    try:
        quota = (root / "cpu" / "cpu.cfs_quota_us").read_text("ascii").strip()
        period = (root / "cpu" / "cpu.cfs_period_us").read_text("ascii").strip()
    except OSError:
        return None
    return None if quota == "-1" else f"{quota} {period}"


class SpaceDefaults(PydanticBaseSettingsSource):
    """The settings source of a Space's defaults; ``Settings`` puts it after the environment, so any
    ``RAGAPP_`` variable (or argument) wins. Off a Space it adds nothing."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        environ: Mapping[str, str] | None = None,
        data_dir: Path = SPACE_DATA_DIR,
    ) -> None:
        super().__init__(settings_cls)
        self._environ = os.environ if environ is None else environ
        self._data_dir = data_dir

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ gives the whole mapping at once

    def __call__(self) -> dict[str, Any]:
        space = detect_space(self._environ, self._data_dir)
        return {} if space is None else settings_defaults(space)
