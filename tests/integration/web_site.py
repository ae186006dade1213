"""A real website on loopback for the website-source tests: Python's own HTTP server over a folder (Debian's
installed HTML manuals, or pages a test writes), with an ETag per file (``If-None-Match`` answered 304), the
standard ``If-Modified-Since`` handling, a log of every request, and routes a test adds to make a path misbehave
(hang, drip, redirect, answer 503...)."""

from __future__ import annotations

import hashlib
import shutil
import ssl
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# The held-out documents of the answer sets: never served to a test.
HELD_OUT = ("python-policy", "zlib_how", "valgrind")
MANUALS = Path("/usr/share/doc")

Route = Callable[[SimpleHTTPRequestHandler], None]


class Site:
    """The server's state a test reads and changes: the requests made (path with query, in order), and the
    routes that replace the folder for some paths."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.times: list[float] = []  # when each request came (time.monotonic)
        self.routes: dict[str, Route] = {}
        self.lock = threading.Lock()
        self.url = ""
        self.closing = threading.Event()  # set when the server stops: routes that hang end then

    def counts(self) -> Counter[str]:
        with self.lock:
            return Counter(self.requests)

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()
            self.headers.clear()
            self.times.clear()


def _handler(site: Site) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(site.root), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            with site.lock:
                site.requests.append(self.path)
                site.times.append(time.monotonic())
                site.headers.append({k.lower(): v for k, v in self.headers.items()})
            route = site.routes.get(self.path.split("?", 1)[0]) or site.routes.get(self.path)
            if route is not None:
                route(self)
                return
            path = Path(self.translate_path(self.path))
            if path.is_file():
                tag = '"' + hashlib.sha256(path.read_bytes()).hexdigest()[:16] + '"'
                if self.headers.get("If-None-Match") == tag:
                    self.send_response(304)
                    self.send_header("ETag", tag)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self._etag = tag
            super().do_GET()

        def end_headers(self) -> None:
            tag = getattr(self, "_etag", None)
            if tag is not None:
                self.send_header("ETag", tag)
            super().end_headers()

    return Handler


@contextmanager
def serving(root: Path, tls: ssl.SSLContext | None = None) -> Iterator[Site]:
    """Serve ``root`` on 127.0.0.1 (a free port) in a thread per request, until the block ends; with ``tls``,
    over https."""
    site = Site(root)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    scheme = "https" if tls is not None else "http"
    site.url = f"{scheme}://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.closing.set()
        server.shutdown()
        server.server_close()


def reply(status: int, body: bytes = b"", content_type: str = "text/html", **headers: str) -> Route:
    """A route answering ``status`` with ``body`` (and ``headers``, ``_`` for ``-`` in their names)."""

    def answer(handler: SimpleHTTPRequestHandler) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        if "Content_Length" not in headers:
            handler.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            handler.send_header(name.replace("_", "-"), value)
        handler.end_headers()
        handler.wfile.write(body)

    return answer


def manual_copy(package_folder: str, target: Path, limit: int | None = None) -> list[str]:
    """Copy the HTML pages of an installed Debian manual (``/usr/share/doc/<package_folder>``) under ``target``;
    the relative paths copied, sorted. None there: an empty list (the caller skips)."""
    source = MANUALS / package_folder
    pages = sorted(p for p in source.rglob("*.htm*") if p.is_file() and not any(h in str(p) for h in HELD_OUT))
    copied = []
    for page in pages[:limit]:
        rel = page.relative_to(source)
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(page, target / rel)
        copied.append(str(rel))
    return copied
