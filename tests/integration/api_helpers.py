"""What the HTTP API tests share (imported by name; fixtures are in conftest.py)."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import httpx

KETTLE = "# Orion Kettle K9\n\nThe Orion Kettle K9 boils 1.7 litres of water in 3 minutes.\n"
LAMP = "# Lumen Desk Lamp\n\n## Battery\n\nThe Lumen desk lamp runs 14 hours on one charge of its battery.\n"


T = TypeVar("T")


def run_async(function: Callable[..., Awaitable[T]], *args: Any) -> T:
    """``function(*args)`` run to its end on an event loop of its own, in a thread of its own: the browser tests'
    Playwright keeps a loop running in the main thread for the whole session, where ``anyio.run`` refuses."""
    done: list[T] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            done.append(anyio.run(function, *args))
        except BaseException as exc:
            failed.append(exc)

    thread = threading.Thread(target=work, name="test-async")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return done[0]


@dataclass
class Served:
    """A served engine: its rig (engine and scripted LLM), URL, API keys by user name and ingested doc ids."""

    rig: Any
    url: str
    keys: dict[str, str] = field(default_factory=dict)
    docs: dict[str, str] = field(default_factory=dict)
    server: Any = None  # the running server: ``server.close()`` takes the app down (the fixture's teardown too)

    def client(self, user: str | None = None, timeout: float = 30) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.keys[user]}"} if user else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=timeout)
