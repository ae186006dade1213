"""Values the server hands a browser to keep and send back (its owner id), signed so that a client cannot
send another browser's id: an HMAC-SHA256 under a secret made once per state dir (``secret.key``, readable by
its owner only; replicas sharing the state dir share it)."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SECRET_FILE = "secret.key"
_SEP = "~"  # not in the values signed here ("browser:<session hash>")


class Signer:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    @classmethod
    def in_folder(cls, folder: Path) -> Signer:
        """The signer of ``folder``'s secret, made on first use (a second process racing to make it reads the
        one that won)."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / SECRET_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(secrets.token_bytes(32))
        secret = path.read_bytes()
        if len(secret) < 32:  # an empty or cut file: a weak secret would make ids guessable
            raise ValueError(f"{path} is damaged (under 32 bytes); delete it to make a new one")
        return cls(secret)

    def derive(self, purpose: str) -> str:
        """A secret of its own for ``purpose``, made from this one: the same in every process that shares the
        secret file (Gradio's browser storage is encrypted with it, so a restart or another replica can still
        read what a browser keeps)."""
        return hmac.new(self._secret, f"derive:{purpose}".encode(), hashlib.sha256).hexdigest()

    def sign(self, value: str) -> str:
        return f"{value}{_SEP}{self._mac(value)}"

    def unsign(self, token: str | None) -> str | None:
        """The value ``token`` was made from, or None when it was not made here (forged, altered, or unsigned)."""
        if not token or _SEP not in token:
            return None
        value, mac = token.rsplit(_SEP, 1)
        return value if hmac.compare_digest(mac, self._mac(value)) else None

    def _mac(self, value: str) -> str:
        return hmac.new(self._secret, value.encode("utf-8"), hashlib.sha256).hexdigest()[:32]
