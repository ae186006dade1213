"""The served app while the LDAP directory is slow to answer: Gradio's POST /login waits for the directory, and
everything else goes on (a sign-in's wait must not hold the server's event loop, where Gradio calls the check)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable

import httpx
import pytest

from ragapp.ui.signin import REFUSED_HEADER
from tests.integration.api_helpers import Served
from tests.slapd import PEOPLE

pytestmark = pytest.mark.integration


def test_a_sign_in_waiting_for_the_directory_holds_nobody_else_up(serve_api: Callable[..., Served]) -> None:
    with socket.socket() as directory:  # takes the call and says nothing until the test lets go
        directory.bind(("127.0.0.1", 0))
        directory.listen(1)
        ldap = {"enabled": True, "url": f"ldap://127.0.0.1:{directory.getsockname()[1]}", "timeout_s": 120,
                "user_dn_template": f"uid={{name}},{PEOPLE}"}  # fmt: skip
        served = serve_api(accounts=True, ldap=ldap)
        answers: list[httpx.Response] = []

        def sign_in() -> None:
            with httpx.Client(base_url=served.url, timeout=300) as client:
                answers.append(client.post("/login", data={"username": "alice", "password": "alice in ldap"}))

        waiting = threading.Thread(target=sign_in)
        waiting.start()
        call, _ = directory.accept()  # the sign-in is now waiting for the directory's answer
        with call, httpx.Client(base_url=served.url, timeout=300) as other:
            assert other.get("/signin").status_code == 200  # another browser is served meanwhile ...
            signed_in = other.post("/login", data={"username": "rita", "password": "rita password"})
            assert signed_in.status_code == 200  # ... and a local account signs in
            assert waiting.is_alive() and not answers  # while the first still waits
        waiting.join()  # the directory hung up: the sign-in ends, refused as unanswered
    (answer,) = answers
    assert answer.status_code == 400 and answer.headers[REFUSED_HEADER] == "unavailable"
