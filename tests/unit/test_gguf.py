"""Assembling packaged GGUF files, with small fake part packages standing in for the real wheels."""

from __future__ import annotations

import hashlib
import os
import sys
import types
from pathlib import Path

import pytest

from ragapp.core.errors import ModelError
from ragapp.models import gguf

PARTS = (b"GGUF-first-slice|", b"second-slice|", b"third")
FAKE = "fake-model"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> gguf.PackagedGGUF:
    """Install three fake part 'packages' (modules with get_part_path) and a table entry for them."""
    part_dir = tmp_path / "site-packages"
    part_dir.mkdir()
    for n, data in enumerate(PARTS, start=1):
        path = part_dir / f"part{n:02d}.bin"
        path.write_bytes(data)
        module = types.ModuleType(f"fake_model_part{n}")
        module.get_part_path = lambda p=path: str(p)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
    whole = b"".join(PARTS)
    spec = gguf.PackagedGGUF(
        name=FAKE,
        description="test double",
        filename="fake.gguf",
        distribution="fake-model-part",
        module="fake_model_part",
        version="1.0.0",
        sha256=_sha(whole),
        size=len(whole),
        part_sha256=tuple(_sha(p) for p in PARTS),
        licence="test",
    )
    monkeypatch.setitem(gguf.GGUF_MODELS, FAKE, spec)
    return spec


def _forbid_rehash(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: object) -> None:
        raise AssertionError("should not read or hash anything")

    monkeypatch.setattr(gguf, "file_sha256", fail)
    monkeypatch.setattr(gguf, "_locate_parts", fail)
    monkeypatch.setattr(gguf, "_assemble", fail)


def test_assembles_parts_in_order(fake_parts: gguf.PackagedGGUF, tmp_path: Path) -> None:
    models_dir = tmp_path / "models"  # does not exist yet: ensure_gguf creates it
    path = gguf.ensure_gguf(FAKE, models_dir)
    assert path == models_dir / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert (models_dir / "fake.gguf.verified.json").is_file()
    assert sorted(p.name for p in models_dir.iterdir()) == ["fake.gguf", "fake.gguf.verified.json"]


def test_marker_fast_path_skips_hashing(
    fake_parts: gguf.PackagedGGUF, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = gguf.ensure_gguf(FAKE, tmp_path)
    _forbid_rehash(monkeypatch)
    assert gguf.ensure_gguf(FAKE, tmp_path) == first


def test_changed_file_is_not_trusted(fake_parts: gguf.PackagedGGUF, tmp_path: Path) -> None:
    path = gguf.ensure_gguf(FAKE, tmp_path)
    # Same size, different bytes, newer mtime: the marker no longer vouches for it.
    path.write_bytes(b"X" * fake_parts.size)
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert gguf.ensure_gguf(FAKE, tmp_path).read_bytes() == b"".join(PARTS)


def test_existing_file_without_marker_is_verified_in_place(
    fake_parts: gguf.PackagedGGUF, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "fake.gguf").write_bytes(b"".join(PARTS))
    monkeypatch.setattr(gguf, "_locate_parts", lambda spec: pytest.fail("parts not needed"))
    assert gguf.ensure_gguf(FAKE, tmp_path).read_bytes() == b"".join(PARTS)
    assert (tmp_path / "fake.gguf.verified.json").is_file()


def test_hash_mismatch_raises_names_the_package_and_leaves_nothing(
    fake_parts: gguf.PackagedGGUF, tmp_path: Path
) -> None:
    corrupt = Path(sys.modules["fake_model_part2"].get_part_path())  # type: ignore[attr-defined]
    corrupt.write_bytes(b"second-slicE|")  # same length, one byte flipped
    with pytest.raises(ModelError) as err:
        gguf.ensure_gguf(FAKE, tmp_path)
    message = str(err.value)
    assert "fake-model-part2==1.0.0" in message
    assert "fake-model-part1" not in message and "fake-model-part3" not in message
    assert "--force-reinstall" in message
    assert list(tmp_path.iterdir()) == [tmp_path / "site-packages"]  # no target, no temp file


def test_missing_part_package_says_make_setup(
    fake_parts: gguf.PackagedGGUF, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "fake_model_part3")
    with pytest.raises(ModelError, match="make setup") as err:
        gguf.ensure_gguf(FAKE, tmp_path / "models")
    assert "fake-model-part3==1.0.0" in str(err.value)
    assert not (tmp_path / "models" / "fake.gguf").exists()


def test_unknown_model_lists_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"qwen2\.5-coder-1\.5b"):
        gguf.ensure_gguf("no-such-model", tmp_path)


def test_cli_assembles(fake_parts: gguf.PackagedGGUF, tmp_path: Path) -> None:
    assert gguf.main([FAKE, "--models-dir", str(tmp_path / "m")]) == 0
    assert (tmp_path / "m" / "fake.gguf").read_bytes() == b"".join(PARTS)


def test_packaged_table_is_consistent() -> None:
    for name, spec in gguf.GGUF_MODELS.items():
        assert spec.name == name
        assert len(spec.sha256) == 64 and all(len(h) == 64 for h in spec.part_sha256)
        assert spec.requirements()[0] == f"{spec.distribution}1=={spec.version}"
