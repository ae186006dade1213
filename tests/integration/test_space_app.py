"""The app as a Hugging Face Space runs it: ``python app.py`` with the variables a Space sets listens on every
interface and lets huggingface.co frame its page, with nothing set by hand but a state folder and a free port;
a state that does not outlive a restart is said in the page's header."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragapp.serve.server import start_server
from ragcluster.services import free_port, stop_process, wait_http

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0
# What a Gradio Space sets (see the Hub's docs, "Built-in environment variables"; SYSTEM on Gradio Spaces).
SPACE_ENV = {"SPACE_ID": "alice/ragapp", "SPACE_HOST": "alice-ragapp.hf.space", "SYSTEM": "spaces", "CPU_CORES": "2"}


def _listening_on(port: int) -> set[str]:
    """The IPv4 addresses a socket listens on at ``port``, as the kernel lists them (/proc/net/tcp)."""
    addresses = set()
    for line in Path("/proc/net/tcp").read_text("ascii").splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, _, hex_port = local.partition(":")
        if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
            addresses.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return addresses


@pytest.fixture
def space_app(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """``python app.py`` started as a Space starts it; yields its port and its log once it answers."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("OMP_")} | SPACE_ENV
    env |= {
        "RAGAPP_PATHS__STATE_DIR": str(tmp_path / "state"),
        "RAGAPP_PATHS__LOAD_DEMO": "false",  # indexing the demo takes longer than this test may
        "RAGAPP_UI__PORT": str(port),  # 7860 may be taken here; that the Space's default is 7860 is a unit test
        # Nothing here asks a question: a model server that is not there spares loading the local model.
        "RAGAPP_LLM__BACKEND": "openai",
        "RAGAPP_LLM__BASE_URL": "http://127.0.0.1:9/v1",
    }
    log_path = tmp_path / "app.log"
    with log_path.open("wb") as log:  # a file, not a pipe: a chatty app never blocks on a full pipe
        app = subprocess.Popen(
            [sys.executable, str(ROOT / "app.py")], cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", app, log_path, START_TIMEOUT_S)
        yield port, log_path
    finally:
        stop_process(app, 30)


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_on_a_space_the_app_listens_on_every_interface_and_huggingface_may_frame_it(
    space_app: tuple[int, Path],
) -> None:
    port, log_path = space_app
    assert _listening_on(port) == {"0.0.0.0"}
    # 127.0.0.2 is this machine too, but a socket bound to 127.0.0.1 (the default off a Space) never answers it.
    with httpx.Client(base_url=f"http://127.0.0.2:{port}", timeout=30) as client:
        page = client.get("/")
        assert page.status_code == 200 and "gradio_config" in page.text
        policy = page.headers["content-security-policy"]
        assert "frame-ancestors 'self' https://huggingface.co;" in policy + ";"
        assert "x-frame-options" not in page.headers  # SAMEORIGIN would forbid the Space's page its frame
        assert client.get("/healthz").json() == {"status": "ok"}
        # Reachable from outside the machine now, the HTTP API asks for a key.
        assert client.get("/v1/documents").status_code == 401
    log = log_path.read_text("utf-8", "replace")
    assert f"on the Hugging Face Space alice/ragapp: listening on 0.0.0.0:{port}" in log
    assert "threads for 2 CPU core(s)" in log


@pytest.mark.parametrize("ephemeral", [True, False])
def test_the_header_says_uploads_are_lost_when_the_state_does_not_outlive_a_restart(
    make_engine: Callable[..., Any], ephemeral: bool
) -> None:
    rig = make_engine(paths={"ephemeral": ephemeral})
    server = start_server(rig.engine, "127.0.0.1", 0)
    try:
        config = httpx.get(server.url + "/config", timeout=30).json()
    finally:
        server.close()
    notices = [c["props"] for c in config["components"] if c.get("props", {}).get("elem_id") == "ephemeral-notice"]
    if not ephemeral:
        assert notices == []
        return
    (notice,) = notices
    assert '"ragapp.header.ephemeral"' in notice["value"] and notice["visible"]  # the browser shows it translated
    english, chinese = (config["i18n_translations"][lang]["ragapp.header.ephemeral"] for lang in ("en", "zh"))
    assert "lost when the app restarts" in english and "重启后" in chinese
