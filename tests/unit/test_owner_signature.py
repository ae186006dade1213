"""Signed browser ids: the server's own come back as they were; forged, altered or unsigned ones are not
believed, and the secret is made once per state dir, readable by its owner only."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ragapp.store.owner_signature import SECRET_FILE, Signer


def test_a_signed_value_comes_back_and_an_altered_one_does_not(tmp_path: Path) -> None:
    signer = Signer.in_folder(tmp_path)
    token = signer.sign("browser:abc123")
    assert signer.unsign(token) == "browser:abc123"
    value, mac = token.rsplit("~", 1)
    for forged in ("browser:abc123", "browser:other~" + mac, value + "~" + "0" * len(mac), "", None, "~"):
        assert signer.unsign(forged) is None
    assert Signer.in_folder(tmp_path / "elsewhere").unsign(token) is None  # another server's secret


def test_the_secret_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = Signer.in_folder(tmp_path).sign("browser:x")
    assert Signer.in_folder(tmp_path).unsign(first) == "browser:x"  # a restart keeps the browser's id
    assert stat.S_IMODE(os.stat(tmp_path / SECRET_FILE).st_mode) == 0o600
    (tmp_path / SECRET_FILE).write_bytes(b"short")
    with pytest.raises(ValueError, match="damaged"):
        Signer.in_folder(tmp_path)
