"""Our sign-in page over HTTP (the served app on a loopback port, called with httpx): a signed-out browser opening
the page is sent to /signin and a signed-in one is not, the API keeps answering 401, a refused sign-in says
whether the name or password was wrong or the name waits after too many, the root path is in every address, and
with accounts off there is no sign-in page. The page in a real browser: tests/e2e/test_signin_browser.py."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from ragapp.serve.headers import CONTENT_SECURITY_POLICY
from ragapp.ui.signin import REFUSED_HEADER
from tests.integration.api_helpers import Served

pytestmark = pytest.mark.integration


def _sign_in(client: httpx.Client, name: str, password: str) -> httpx.Response:
    return client.post("/login", data={"username": name, "password": password})


def test_a_signed_out_browser_is_sent_to_the_sign_in_page_and_the_api_still_says_401(
    serve_api: Callable[..., Served],
) -> None:
    served = serve_api(accounts=True)
    with httpx.Client(base_url=served.url, timeout=30) as browser:
        sent = {"/": "/signin", "/?lang=zh": "/signin?lang=zh", "/gradio_api/runs": "/signin"}
        for path, to in sent.items():
            reply = browser.get(path)
            assert (reply.status_code, reply.headers["location"]) == (302, to), path
        page = browser.get("/signin", headers={"Accept-Language": "zh-CN,zh;q=0.9"})
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY  # the page is under it too
        assert '<html lang="zh">' in page.text and '<form id="signin"' in page.text
        assert "auth_required" not in page.text  # not Gradio's page
        assert '<html lang="en">' in browser.get("/signin?lang=en", headers={"Accept-Language": "zh-CN"}).text
        script = browser.get("/signin.js")
        assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
        # What is not a page answers as before: Gradio's routes and the API refuse, they do not redirect.
        assert browser.get("/config").status_code == 401
        assert browser.get("/v1/documents").status_code == 401
        assert browser.get("/gradio_api/info").status_code == 401
        assert browser.get("/static/fonts/SourceSansPro/SourceSansPro-Regular.woff2").status_code == 200  # its font

    with httpx.Client(base_url=served.url, timeout=30) as rita:
        assert _sign_in(rita, "rita", "rita password").status_code == 200
        page = rita.get("/?lang=zh")
        assert page.status_code == 200 and "gradio_config" in page.text
        assert rita.get("/signin?lang=zh").headers["location"] == "/?lang=zh"  # signed in: the app


def test_a_refused_sign_in_says_why(serve_api: Callable[..., Served]) -> None:
    served = serve_api(accounts=True, auth={"max_failed_logins": 2})
    with httpx.Client(base_url=served.url, timeout=30) as browser:
        for _ in range(2):
            wrong = _sign_in(browser, "rita", "wrong password")
            assert wrong.status_code == 400 and wrong.headers[REFUSED_HEADER] == "wrong"
        nobody = _sign_in(browser, "mallory", "guess")  # the address is over the limit now, whatever the name
        assert nobody.status_code == 400 and nobody.headers[REFUSED_HEADER] == "throttled"
        waits = _sign_in(browser, "rita", "rita password")  # even the right password waits
        assert waits.status_code == 400 and waits.headers[REFUSED_HEADER] == "throttled"
        assert not any(cookie.name.startswith("access-token") for cookie in browser.cookies.jar)
        assert REFUSED_HEADER.lower() not in {name.lower() for name in browser.get("/signin").headers}


def test_every_address_starts_with_the_root_path(serve_api: Callable[..., Served]) -> None:
    served = serve_api(accounts=True, ui={"root_path": "/ragapp/"})
    with httpx.Client(base_url=served.url, timeout=30) as browser:
        assert browser.get("/?lang=en").headers["location"] == "/ragapp/signin?lang=en"
        page = browser.get("/signin").text
        for address in ('src="/ragapp/signin.js"', 'action="/ragapp/login"', 'data-home="/ragapp/"'):
            assert address in page
        assert "/ragapp/static/fonts/" in page
        assert _sign_in(browser, "eddie", "eddie password").status_code == 200
        assert browser.get("/signin").headers["location"] == "/ragapp/"


def test_with_accounts_off_there_is_no_sign_in_page(serve_api: Callable[..., Served]) -> None:
    served = serve_api()
    with httpx.Client(base_url=served.url, timeout=30) as browser:
        page = browser.get("/")
        assert page.status_code == 200 and "gradio_config" in page.text
        assert browser.get("/signin?lang=zh").headers["location"] == "/?lang=zh"
