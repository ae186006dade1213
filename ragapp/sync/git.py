"""A git source's working copy: cloned once under the app's state folder, then fetched and checked out at the
followed branch before each sync (the ``git`` command line; no library).

Only the transports a deployment allows are used (``GIT_ALLOW_PROTOCOL``: git itself refuses the others, in
redirects too); a location naming another one (``fd::17`` reads a descriptor of the process, ``ext::`` runs a
command) is refused before git runs. Every git command runs in a process group of its own, bounded in time and
killed with its helpers (``git-remote-https``, ``ssh``) when it runs over or the sync is stopped."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragapp.core.said import Said
from ragapp.sync.sources import SyncError
from ragapp.sync.tree import check_allowed

# No prompt for a password (a sync runs unattended); no hooks of the copy run.
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true"}
_SAFE = ("-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null")
_POLL_S = 0.2  # how often a running git command looks at the stop signal
_HELPER = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)::")  # <transport>::<address> (a remote helper)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_SSH_ALIASES = {"git+ssh": "ssh", "ssh+git": "ssh"}
NEVER = frozenset({"ext", "fd"})  # run a command, read the process's descriptors: never allowed


class SyncStopped(SyncError):
    """The sync was stopped (the app closing) while git ran; git and its helpers were ended."""


def transport(location: str) -> str:
    """The git transport ``location`` uses, as ``GIT_ALLOW_PROTOCOL`` names it: a remote helper's name
    (``fd::17`` -> fd), a URL's scheme, ``ssh`` for ``host:path``, else ``file`` (a path)."""
    if match := _HELPER.match(location):
        return match.group(1).lower()
    if match := _SCHEME.match(location):
        scheme = match.group(1).lower()
        return _SSH_ALIASES.get(scheme, scheme)
    colon, slash = location.find(":"), location.find("/")
    if colon > 0 and (slash < 0 or colon < slash):  # git's own rule: a colon before any slash is scp-like ssh
        return "ssh"
    return "file"


def check_location(location: str, protocols: Sequence[str], allowed_roots: Sequence[Path] = ()) -> None:
    """Refuse a git location git should not be asked to reach: one that reads like an option, one whose
    transport is not in ``protocols``, or a local repository outside ``allowed_roots``.

    Raises:
        SyncError: the message says which rule and the setting that holds it.
    """
    if location.startswith("-"):
        raise SyncError(said=Said("source.git_option", {"location": location}))
    used = transport(location)
    if used in NEVER or used not in protocols:
        allowed = ", ".join(protocols) or "none"
        raise SyncError(said=Said("source.git_transport", {"transport": used, "allowed": allowed}))
    if used == "file" and allowed_roots:
        path = location.removeprefix("file://") if location.startswith("file://") else location
        check_allowed(Path(os.path.realpath(path)), allowed_roots, location)


@dataclass(frozen=True)
class Git:
    """How git runs for one sync: ``timeout_s`` per command, only ``protocols``, ended when ``stop`` is set."""

    timeout_s: float
    protocols: tuple[str, ...]
    stop: threading.Event = field(default_factory=threading.Event)

    def __call__(self, *args: str, cwd: Path | None = None) -> str:
        """Run ``git args`` and return its output.

        Raises:
            SyncError: git is missing, failed (its message included) or took longer than ``timeout_s``.
            SyncStopped: ``stop`` was set meanwhile.
        """
        binary = shutil.which("git")
        if binary is None:
            raise SyncError(said=Said("source.no_git"))
        env = {**os.environ, **_ENV, "GIT_ALLOW_PROTOCOL": ":".join(self.protocols)}
        process = subprocess.Popen(
            [binary, *_SAFE, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, process_group=0,
        )  # fmt: skip
        deadline = time.monotonic() + self.timeout_s
        try:
            while True:
                try:
                    out, err = process.communicate(timeout=_POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    if self.stop.is_set():
                        raise SyncStopped(f"git {args[0]} was stopped: the sync was stopped.") from None
                    if time.monotonic() > deadline:
                        took = {"command": args[0], "s": self.timeout_s}
                        raise SyncError(said=Said("source.git_slow", took)) from None
        finally:
            if process.returncode is None:  # ran over, stopped, or the caller is going away: all of it ends
                _end_group(process)
        if process.returncode != 0:
            message = (err or out).strip().splitlines()
            said = {"command": args[0], "error": message[-1] if message else f"exit status {process.returncode}"}
            raise SyncError(said=Said("source.git_failed", said))
        return out.strip()


def _end_group(process: subprocess.Popen[str]) -> None:
    """Kill ``process`` and everything in its process group (git's transport helpers, ssh), then reap it."""
    with contextlib.suppress(ProcessLookupError):  # all of it ended on its own meanwhile
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


def checkout(git: Git, location: str, branch: str, folder: Path) -> str:
    """Bring ``folder`` to the tip of ``branch`` (empty: the remote's default branch) of the repository at
    ``location`` (a path or a URL git can reach), cloning it the first time; returns the commit checked out.
    Local changes in ``folder`` are thrown away: it is the app's copy, never edited by hand."""
    if not (folder / ".git").is_dir():
        if folder.exists():
            shutil.rmtree(folder)  # a clone that died half-way
        folder.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "--quiet", "--no-checkout", "--", location, str(folder))
    else:
        git("remote", "set-url", "origin", "--", location, cwd=folder)
        git("fetch", "--quiet", "--prune", "--force", "origin", "+refs/heads/*:refs/remotes/origin/*", cwd=folder)
    if not branch:
        git("remote", "set-head", "origin", "--auto", cwd=folder)
        branch = git("symbolic-ref", "--short", "refs/remotes/origin/HEAD", cwd=folder).removeprefix("origin/")
    try:
        git("rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{branch}", cwd=folder)
    except SyncStopped:
        raise
    except SyncError:
        raise SyncError(said=Said("source.no_branch", {"location": location, "branch": branch})) from None
    git("checkout", "--quiet", "--force", "-B", branch, f"refs/remotes/origin/{branch}", cwd=folder)
    git("clean", "--quiet", "-ffdx", cwd=folder)
    return git("rev-parse", "HEAD", cwd=folder)
