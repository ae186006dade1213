"""A real OpenID Connect provider on loopback for the tests (``provider.mjs``: node's ``oidc-provider``), and the
steps of its own sign-in pages driven over HTTP, for tests that need no browser."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

HERE = Path(__file__).parent
CLIENT_ID = "ragapp"
CLIENT_SECRET = "ragapp test secret"
PUBLIC_CLIENT_ID = "ragapp-public"


def clients(redirect_base: str | Sequence[str]) -> list[dict[str, Any]]:
    """A confidential client and a public one (PKCE alone), both coming back to ``redirect_base``'s callback (or to
    that of any of several apps' bases)."""
    bases = [redirect_base] if isinstance(redirect_base, str) else list(redirect_base)
    common = {
        "redirect_uris": [f"{base}/oidc/callback" for base in bases],
        "post_logout_redirect_uris": [f"{base}/signin" for base in bases],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
    }
    return [
        {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, **common},
        {"client_id": PUBLIC_CLIENT_ID, "token_endpoint_auth_method": "none", **common},
    ]


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the OpenID provider of these tests runs on node (apt install nodejs npm)")
    if not (HERE / "node_modules" / "oidc-provider").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed: it fetches the OpenID provider of these tests (apt install npm)")
        # what `make setup-dev` does; here too so that a test run alone finds it
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=HERE, check=True, capture_output=True, timeout=300)
    return node


@dataclass
class Provider:
    issuer: str
    process: subprocess.Popen[str]
    log: list[str]


@contextmanager
def running_provider(
    folder: Path, redirect_base: str | Sequence[str], accounts: dict[str, dict[str, Any]], id_token_claims: bool = False
) -> Iterator[Provider]:
    """``provider.mjs`` on a free loopback port, until the block ends."""
    node = _node()
    config = folder / "oidc-provider.json"
    config.write_text(
        json.dumps({"clients": clients(redirect_base), "accounts": accounts, "id_token_claims": id_token_claims})
    )
    process = subprocess.Popen(
        [node, str(HERE / "provider.mjs"), str(config)],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    log: list[str] = []
    issuer = None
    for line in process.stdout:  # until it says where it listens (or exits)
        log.append(line)
        if line.startswith("listening "):
            issuer = line.split()[1]
            break
    if issuer is None:
        process.wait(10)
        raise RuntimeError("the OpenID provider did not start:\n" + "".join(log))
    reader = threading.Thread(target=lambda: log.extend(process.stdout or ()), daemon=True)
    reader.start()  # its console is kept, and never fills the pipe
    try:
        yield Provider(issuer, process, log)
    finally:
        process.terminate()
        process.wait(10)


def provider_answer(client: httpx.Client, url: str, login: str | None) -> str:
    """Follow ``url`` (the app's /oidc/login) through the provider's development login and consent pages as a
    browser would, signing in as ``login`` (None: cancelling on the login page), up to the provider's answer: the
    app's callback address, returned, not opened."""
    reply = client.get(url)
    for _ in range(12):
        if reply.is_redirect:
            target = urljoin(str(reply.url), reply.headers["location"])
            if urlsplit(target).path.endswith("/oidc/callback"):
                return target
            reply = client.get(target)
            continue
        page = reply.text
        if login is None:  # the login page's "[ Cancel ]" link
            reply = client.get(urljoin(str(reply.url), page.split('href="', 1)[1].split('"', 1)[0]))
            continue
        action = _form_action(page)
        if action is None:
            raise AssertionError(f"the provider answered {reply.status_code}: {page[:500]}")
        fields = {"prompt": "login", "login": login, "password": "any"} if 'name="login"' in page else {}
        reply = client.post(urljoin(str(reply.url), action), data=fields or {"prompt": "consent"})
    raise AssertionError("the provider's pages did not come back to the app")


def sign_in_at_provider(client: httpx.Client, url: str, login: str) -> httpx.Response:
    """``provider_answer`` delivered: the app's reply to the provider's answer."""
    return client.get(provider_answer(client, url, login))


def _form_action(page: str) -> str | None:
    start = page.find("<form")
    if start < 0:
        return None
    tag = page[start : page.find(">", start)]
    action = tag.split('action="', 1)[1].split('"', 1)[0] if 'action="' in tag else None
    return action


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
