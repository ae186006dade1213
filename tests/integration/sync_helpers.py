"""Helpers of the sync tests: real folders and real git repositories on tmp_path."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
}  # fmt: skip


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def new_repo(path: Path, branch: str = "main") -> Path:
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch", branch)
    return path


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "--message", message)
    return git(repo, "rev-parse", "HEAD")


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


def aged(path: Path, seconds: float = 60.0) -> Path:
    """``path`` with its modification time ``seconds`` in the past: past the settle window, so the sync does
    not wait to see whether it is still being written."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))
    return path


def text(topic: str, n: int = 3) -> str:
    """A short document about ``topic``, distinct for every topic."""
    return "\n\n".join(f"Section {i} of the note on {topic}: {topic} matters for reason {i}." for i in range(n)) + "\n"


def wait_for(check: Callable[[], object], timeout: float = 120.0, what: str = "the condition") -> None:
    """Wait until ``check()`` is true (a generous bound: only a hang should ever reach it)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.05)
