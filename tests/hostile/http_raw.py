"""Requests whose headers go out and whose body need not: what a server answers before it reads a body.

httpx and the like send the whole body before they read an answer; a server that refuses from the headers
answers at once and closes, so the client sees a broken pipe, not the answer. Here the headers (and as much of
the body as the caller likes) go out on a raw socket and the answer is read as soon as it comes; a server that
waits for the body it was promised never answers, and the read times out.
"""

from __future__ import annotations

import json
import select
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    sent: int  # body bytes the server took before it answered

    def json(self) -> Any:
        return json.loads(self.body)


def answer(
    url: str,
    path: str,
    headers: dict[str, str],
    declared: int,
    body: bytes = b"",
    chunk: int = 1 << 20,
    timeout_s: float = 30.0,
) -> Answer:
    """POST ``path`` declaring ``declared`` body bytes and sending the bytes of ``body`` (repeated up to
    ``declared``; none if empty) while the server has not answered; then the server's answer."""
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=timeout_s)
    try:
        lines = [f"POST {path} HTTP/1.1", f"Host: {parts.netloc}", f"Content-Length: {declared}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        sent = 0
        deadline = time.monotonic() + timeout_s
        while body and sent < declared and time.monotonic() < deadline:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            piece = (body * (chunk // len(body) + 1))[: min(chunk, declared - sent)]
            try:
                sock.sendall(piece)
            except OSError:  # the server answered and closed: read what it said
                break
            sent += len(piece)
        return _read_answer(sock, sent, deadline)
    finally:
        sock.close()


def _read_answer(sock: socket.socket, sent: int, deadline: float) -> Answer:
    data = b""
    while b"\r\n\r\n" not in data:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        piece = sock.recv(65536)
        if not piece:
            raise ConnectionError(f"closed without an answer: {data[:200]!r}")
        data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        piece = sock.recv(65536)
        if not piece:
            break
        rest += piece
    return Answer(int(status_line.split()[1]), headers, rest[:length], sent)
