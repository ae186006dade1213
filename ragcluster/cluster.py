"""The local cluster: PostgreSQL, a Chroma server, one LLM server, N app replicas and the balancer, on loopback.

The same layout as on real hosts (docs/deployment.md, "Several replicas"): the replicas keep nothing of their
own that matters. The catalog, intent tree, traces, test cases, chats and accounts are in PostgreSQL; the vectors
on the Chroma server; the uploaded originals and the signing secret in one shared folder; each replica's
state dir only holds its keyword index, rebuilt from the catalog whenever the catalog's version moves. One
``llama_cpp.server`` serves the model to every replica (loaded once, not once per replica).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from ragcluster.services import (
    REPO,
    ChromaServer,
    PostgresServer,
    Replica,
    _Service,
    free_port,
    stop_process,
    wait_http,
)

MODEL_ALIAS = "qwen-local"
MARKER = ".ragcluster"


class LlmServer(_Service):
    """``llama_cpp.server`` with the packaged GGUF (``python -m ragapp.models.gguf`` assembles it)."""

    def __init__(self, folder: Path, threads: int = 2) -> None:
        from ragapp.config import Settings
        from ragapp.models.gguf import ensure_gguf

        settings = Settings()
        model = ensure_gguf(settings.llm.local_model, settings.paths.models_dir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = folder / "llm.log"
        self._out = self.log.open("wb")
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", "4096",
            "--n_threads", str(threads), "--n_threads_batch", str(threads),
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=self._out, stderr=subprocess.STDOUT)
        wait_http(f"{self.url}/models", self.process, self.log, 180)

    def stop(self) -> None:
        stop_process(self.process)
        self._out.close()


class Cluster:
    """Start with ``start()``; ``replicas[name]`` are the running app processes; ``stop()`` ends everything.

    ``env``: more settings for every replica (e.g. ``RAGAPP_PATHS__LOAD_DEMO``); ``llm_threads``: the LLM server's
    CPU threads (a test run on several workers gives it its worker's share of the cores)."""

    def __init__(
        self,
        folder: Path,
        names: tuple[str, ...] = ("a", "b"),
        env: Mapping[str, str] | None = None,
        llm_threads: int = 2,
    ):
        self.folder = folder
        self.names = names
        self.extra = dict(env or {})
        self.llm_threads = llm_threads
        self.shared = folder / "shared"
        self.services: list[_Service] = []
        self.replicas: dict[str, Replica] = {}
        self.proxy: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self, *, proxy_port: int | None = None, say: Callable[[str], None] = lambda _text: None) -> Cluster:
        """Everything, in order; on any failure what started is stopped again. ``say`` hears each step."""
        if self.folder.exists() and any(self.folder.iterdir()):
            if not (self.folder / MARKER).exists():
                raise FileExistsError(f"{self.folder} is not empty and not a cluster's folder: pick another")
            shutil.rmtree(self.folder)  # throwaway: every start begins with empty servers
        self.shared.mkdir(parents=True, exist_ok=True)
        (self.folder / MARKER).write_text("made by ragcluster; emptied at its next start\n", "utf-8")
        try:
            say("starting PostgreSQL …")
            self.postgres = PostgresServer(self.folder / "postgres")
            self.services.append(self.postgres)
            say(f"PostgreSQL: {self.postgres.url}")
            say("starting the Chroma server …")
            self.chroma = ChromaServer(self.folder / "chroma")
            self.services.append(self.chroma)
            say(f"Chroma: {self.chroma.url}")
            say("starting the LLM server (loads the model once) …")
            self.llm = LlmServer(self.folder, self.llm_threads)
            self.services.append(self.llm)
            say(f"LLM: {self.llm.url}")
            self._make_admin()
            say(f"admin: user 'admin', password and API key in {self.shared / 'admin.txt'}")
            secret = self.shared / "secret.key"
            if not secret.exists():
                secret.write_bytes(secrets.token_bytes(32))
                secret.chmod(0o600)
            # One after the other: the first loads the demo documents into the shared catalog, the next sees them.
            for name in self.names:
                say(f"starting replica {name} …")
                self.start_replica(name)
                say(f"replica {name}: {self.replicas[name].url}")
            port = proxy_port or free_port()
            upstreams = [r.url for r in self.replicas.values()]
            proxy_log = (self.folder / "proxy.log").open("wb")
            self.proxy = subprocess.Popen(
                [sys.executable, "-m", "ragcluster.proxy", *upstreams, "--port", str(port)],
                stdout=proxy_log, stderr=subprocess.STDOUT,
            )  # fmt: skip
            self.url = f"http://127.0.0.1:{port}"
            wait_http(f"{self.url}/healthz", self.proxy, self.folder / "proxy.log", 30)
        except BaseException:
            self.stop()
            raise
        return self

    def _make_admin(self) -> None:
        """Accounts are on, as a team runs it: one admin with a random password and an API key (the API of an
        app behind a proxy always wants a key), written to ``shared/admin.txt`` for the person who started it."""
        users = self.shared / "users.json"
        env = {**os.environ, "RAGAPP_AUTH__USERS_FILE": str(users), "RAGAPP_STORE__DATABASE_URL": self.postgres.url}
        self.admin_password = secrets.token_urlsafe(12)
        command = [sys.executable, "-m", "ragapp.users"]
        subprocess.run([*command, "add", "admin", "--role", "admin", "--password-stdin"], input=self.admin_password,
                       text=True, env=env, cwd=REPO, check=True, capture_output=True)  # fmt: skip
        made = subprocess.run([*command, "key", "admin"], text=True, env=env, cwd=REPO, check=True, capture_output=True)
        self.api_key = made.stdout.strip()
        note = self.shared / "admin.txt"
        note.write_text(f"user: admin\npassword: {self.admin_password}\napi key: {self.api_key}\n", "utf-8")
        note.chmod(0o600)

    def replica_env(self, name: str) -> dict[str, str]:
        state = self.folder / name
        state.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):  # every replica signs browser ids with the same secret
            shutil.copy2(self.shared / "secret.key", state / "secret.key")
        return {
            "RAGAPP_PATHS__STATE_DIR": str(state),
            "RAGAPP_STORE__DATABASE_URL": self.postgres.url,
            "RAGAPP_STORE__CHROMA_URL": self.chroma.url,
            "RAGAPP_STORE__FILES_DIR": str(self.shared / "files"),
            "RAGAPP_LLM__BACKEND": "openai",
            "RAGAPP_LLM__BASE_URL": self.llm.url,
            "RAGAPP_LLM__MODEL": MODEL_ALIAS,
            "RAGAPP_AUTH__ENABLED": "true",
            "RAGAPP_UI__TRUST_PROXY": "true",
            "RAGAPP_UI__PROXY_IPS": "127.0.0.1",
            **self.extra,
        }

    def start_replica(self, name: str) -> Replica:
        replica = Replica(name, self.folder / "logs", self.replica_env(name))
        self.replicas[name] = replica
        return replica

    def stop(self) -> None:
        if self.proxy is not None:
            stop_process(self.proxy)
        for replica in self.replicas.values():
            replica.stop()
        for service in reversed(self.services):
            service.stop()
        self.services.clear()
