"""Throwaway servers on loopback: PostgreSQL (initdb + pg_ctl), a Chroma server (``chroma run``) and app replicas.

Each starts on a free port with its data in a folder of its own and stops with ``stop()``. Used by
``make cluster``, the cluster and PostgreSQL tests, and the scale benchmark.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import httpx

REPO = Path(__file__).resolve().parents[1]
PG_BIN_DIRS = ("/usr/local/bin", *sorted(str(p) for p in Path("/usr/lib/postgresql").glob("*/bin")))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pg_tool(name: str) -> str:
    """The path of a PostgreSQL server program (initdb, pg_ctl): on PATH, or where Debian installs it."""
    found = shutil.which(name)
    if found:
        return found
    for folder in PG_BIN_DIRS:
        if (Path(folder) / name).exists():
            return str(Path(folder) / name)
    raise FileNotFoundError(
        f"{name} not found: install PostgreSQL's server (Debian: apt-get install postgresql) or put it on PATH"
    )


class _Service:
    def stop(self) -> None:
        raise NotImplementedError


def stop_process(process: subprocess.Popen[bytes], timeout: float = 10) -> None:
    """Ask ``process`` to stop (SIGTERM), and kill it if it has not within ``timeout`` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def wait_http(url: str, process: subprocess.Popen[bytes], log: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}; see {log}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"nothing answered on {url} within {seconds:.0f} s; see {log}")


class PostgresServer(_Service):
    """A PostgreSQL cluster of its own (trust auth on 127.0.0.1 only), with database ``ragapp`` created.

    initdb refuses to run as root: as root the cluster belongs to the ``postgres`` user (Debian's package
    creates it) and lives in a folder under /tmp that user can reach."""

    def __init__(self, folder: Path | None = None) -> None:
        self.port = free_port()
        as_root = os.geteuid() == 0
        self._owner = pwd.getpwnam("postgres") if as_root else None
        self.folder = Path(tempfile.mkdtemp(prefix="ragapp-pg-")) if folder is None or as_root else folder
        self.data = self.folder / "data"
        self.log = self.folder / "postgres.log"
        if self._owner is not None:
            os.chown(self.folder, self._owner.pw_uid, self._owner.pw_gid)
        self._run(pg_tool("initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                  "--locale=C.UTF-8", "--no-sync")  # fmt: skip
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        pg_ctl = pg_tool("pg_ctl")
        self._run(pg_ctl, "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        self.admin_url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.url = self.create_database("ragapp")

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if self._owner is not None else []
        done = subprocess.run([*prefix, *command], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stderr.strip() or done.stdout.strip()}")

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        if self.data.exists():
            with contextlib.suppress(RuntimeError):
                self._run(pg_tool("pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


class ChromaServer(_Service):
    """``chroma run`` with its data under ``folder``, answering its heartbeat (about 2 s on an idle machine)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "chroma.log"
        chroma = Path(sys.executable).with_name("chroma")
        command = [str(chroma), "run", "--path", str(folder / "data"), "--host", "127.0.0.1", "--port", str(self.port)]
        self._out: IO[bytes] = self.log.open("wb")
        self.process = subprocess.Popen(command, stdout=self._out, stderr=subprocess.STDOUT)
        wait_http(f"{self.url}/api/v2/heartbeat", self.process, self.log, 90)

    def stop(self) -> None:
        stop_process(self.process)
        self._out.close()


class Replica(_Service):
    """``python app.py`` with ``env`` over the current environment, on a free port, its log in ``folder``.
    ``kill()`` is kill -9: no shutdown code runs."""

    def __init__(self, name: str, folder: Path, env: Mapping[str, str], *, wait_s: float = 300) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / f"{name}.log"
        environment = {**os.environ, **env, "RAGAPP_UI__HOST": "127.0.0.1", "RAGAPP_UI__PORT": str(self.port)}
        self._out: IO[bytes] = self.log.open("ab")
        self.process: subprocess.Popen[bytes] = subprocess.Popen(
            [sys.executable, str(REPO / "app.py")], cwd=REPO, env=environment, stdout=self._out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        wait_http(f"{self.url}/readyz", self.process, self.log, wait_s)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        stop_process(self.process, timeout=30)
        self._out.close()


def wait_until(check: Any, seconds: float, what: str) -> None:
    """Call ``check()`` until it returns something true, for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise TimeoutError(f"{what}: not within {seconds:.0f} s")
