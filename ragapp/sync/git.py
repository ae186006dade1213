"""A git source's working copy: cloned once under the app's state folder, then fetched and checked out at the
followed branch before each sync (the ``git`` command line; no library)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ragapp.sync.sources import SyncError

GIT_TIMEOUT_S = 600.0
# No prompt for a password (a sync runs unattended) and no transport that runs commands (``ext::``).
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true"}
_SAFE = ("-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null")


def git(*args: str, cwd: Path | None = None) -> str:
    """Run ``git args`` and return its output.

    Raises:
        SyncError: git is missing, failed (its message included) or took longer than ``GIT_TIMEOUT_S``.
    """
    binary = shutil.which("git")
    if binary is None:
        raise SyncError("git is not installed on this server; install it to follow a git repository.")
    try:
        done = subprocess.run(
            [binary, *_SAFE, *args], cwd=cwd, env={**os.environ, **_ENV}, capture_output=True, text=True,
            timeout=GIT_TIMEOUT_S, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise SyncError(f"git {args[0]} took over {GIT_TIMEOUT_S:.0f} s; check the repository's address.") from None
    if done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise SyncError(f"git {args[0]} failed: {message[-1] if message else f'exit status {done.returncode}'}")
    return done.stdout.strip()


def checkout(location: str, branch: str, folder: Path) -> str:
    """Bring ``folder`` to the tip of ``branch`` (empty: the remote's default branch) of the repository at
    ``location`` (a path or a URL git can reach), cloning it the first time; returns the commit checked out.
    Local changes in ``folder`` are thrown away: it is the app's copy, never edited by hand."""
    if not (folder / ".git").is_dir():
        if folder.exists():
            shutil.rmtree(folder)  # a clone that died half-way
        folder.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "--quiet", "--no-checkout", "--", location, str(folder))
    else:
        git("remote", "set-url", "origin", location, cwd=folder)
        git("fetch", "--quiet", "--prune", "--force", "origin", "+refs/heads/*:refs/remotes/origin/*", cwd=folder)
    if not branch:
        git("remote", "set-head", "origin", "--auto", cwd=folder)
        branch = git("symbolic-ref", "--short", "refs/remotes/origin/HEAD", cwd=folder).removeprefix("origin/")
    try:
        git("rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{branch}", cwd=folder)
    except SyncError:
        raise SyncError(f"{location} has no branch {branch!r}; check the source's branch.") from None
    git("checkout", "--quiet", "--force", "-B", branch, f"refs/remotes/origin/{branch}", cwd=folder)
    git("clean", "--quiet", "-ffdx", cwd=folder)
    return git("rev-parse", "HEAD", cwd=folder)
