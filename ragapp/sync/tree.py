"""A followed folder, read without ever leaving it: the root is opened once, and every folder and file below it
is opened relative to its parent's descriptor with ``O_NOFOLLOW``, so a symbolic link swapped in at any moment
(between the walk and the read, or mid-path) is refused instead of followed. A file is opened without blocking
(a FIFO swapped in would hold ``open()`` for ever), checked on its descriptor to be a regular file, then hashed
and copied from that one descriptor: what is indexed, and the hash the sync records, are the bytes actually read.

Hand-written on ``os.open(..., dir_fd=...)``: no library walks a tree through descriptors with a depth limit, and
``os.walk`` recurses (a tree 10,000 folders deep raised RecursionError on Python 3.11)."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import BinaryIO

from ragapp.core.said import Said
from ragapp.sync.sources import Refusal, SyncError

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _CLOEXEC
_BLOCK = 1 << 20
_LINK_ERRORS = {errno.ELOOP, errno.EMLINK}  # O_NOFOLLOW on a link: ELOOP on Linux and macOS, EMLINK on FreeBSD
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
SHOWN_PATH_CHARS = 300  # a refused folder's path in a report is cut to this (a deep one can be kilobytes long)


@dataclass(frozen=True)
class Seen:
    """A file found by the walk, as it stood then."""

    rel_path: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Read:
    """A file as it was read: the hash of the bytes read, and its size and time on the descriptor they came from."""

    content_hash: str
    size: int
    mtime_ns: int


class FileProblem(Exception):
    """A file the sync could not read as planned. ``retry``: it is gone or was being written (reported as
    retrying, tried again at the next sync); else it is refused with ``reason`` (tried again next time too)."""

    def __init__(self, reason: str, retry: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry = retry


def shown(rel: str) -> str:
    """``rel`` as a report shows it: cut in the middle past ``SHOWN_PATH_CHARS``."""
    if len(rel) <= SHOWN_PATH_CHARS:
        return rel
    return rel[: SHOWN_PATH_CHARS // 2] + "…" + rel[-SHOWN_PATH_CHARS // 3 :]


def _kind(mode: int) -> str:
    kinds = {stat.S_ISFIFO: "a FIFO", stat.S_ISSOCK: "a socket", stat.S_ISCHR: "a device", stat.S_ISBLK: "a device",
             stat.S_ISDIR: "a folder", stat.S_ISLNK: "a symbolic link"}  # fmt: skip
    return next((word for test, word in kinds.items() if test(mode)), "special")


def _not_regular(mode: int) -> FileProblem:
    return FileProblem(f"skipped: not a regular file now ({_kind(mode)}); only regular files are read")


def _problem(exc: OSError) -> FileProblem:
    if isinstance(exc, FileNotFoundError):
        return FileProblem("gone while the sync ran; tried again at the next sync", retry=True)
    if exc.errno in _LINK_ERRORS:
        return FileProblem("skipped: it became a symbolic link after the sync found it (links are not followed)")
    if exc.errno == errno.ENOTDIR:
        return FileProblem("skipped: a folder on its path became a link or a file (links are not followed)")
    if exc.errno == errno.ENXIO:
        return FileProblem("skipped: not a regular file now (a socket); only regular files are read")
    return FileProblem(f"not readable: {exc.strerror or exc}")


def real_path(fd: int, opened_as: Path) -> Path:
    """Where the folder open at ``fd`` really is: the kernel's name for the descriptor where there is one
    (``/proc``), else ``opened_as`` resolved, either checked to be that very folder (device and inode).

    Raises:
        SyncError: the folder moved while it was opened.
    """
    held = os.fstat(fd)
    for candidate in (f"/proc/self/fd/{fd}", None):
        try:
            path = Path(os.readlink(candidate)) if candidate else Path(os.path.realpath(opened_as))
            now = os.stat(path)
        except OSError:
            continue
        if path.is_absolute() and (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino):
            return path
    raise SyncError(f"{opened_as} moved while it was being opened; the next sync tries again.")


def check_allowed(real: Path, allowed: Sequence[Path], what: str) -> None:
    """Refuse ``real`` (a resolved path) when it is outside every folder of ``allowed`` (empty: anywhere).

    Raises:
        SyncError: it is outside them; the message names them and the setting.
    """
    if not allowed:
        return
    roots = [Path(os.path.realpath(root)) for root in allowed]
    if not any(real == root or real.is_relative_to(root) for root in roots):
        names = ", ".join(str(root) for root in roots)
        raise SyncError(said=Said("source.outside_roots", {"what": str(what), "roots": names}))


class Tree:
    """A folder opened for one sync (``Tree.open``), read only through its descriptor; close it after."""

    def __init__(self, fd: int, real: Path) -> None:
        self._fd = fd
        self.real = real  # where it really is

    @classmethod
    def open(cls, location: Path, allowed: Sequence[Path] = ()) -> Tree:
        """Open the folder at ``location`` (links on the way to it are followed: it was set by an admin), refusing
        it when its real place is outside ``allowed``.

        Raises:
            SyncError: not a folder this server can read, or outside ``allowed``.
        """
        try:
            fd = os.open(location, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
        except OSError as exc:
            raise SyncError(
                f"{location} is not a folder this server can read ({exc.strerror or exc}); check the source's location."
            ) from None
        try:
            real = real_path(fd, location)
            check_allowed(real, allowed, str(location))
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, real)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Tree:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    # -- one file --------------------------------------------------------------------------------

    def _parent(self, rel: str) -> tuple[int, str]:
        """A new descriptor of ``rel``'s folder, each folder on the way opened with ``O_NOFOLLOW``, and its name."""
        parts = PurePosixPath(rel).parts
        if not parts or any(p in ("", ".", "..") for p in parts) or PurePosixPath(rel).is_absolute():
            raise FileProblem(f"skipped: {rel!r} is not a path inside the folder")
        fd = os.dup(self._fd)
        try:
            for part in parts[:-1]:
                child = os.open(part, _DIR, dir_fd=fd)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]

    def lstat(self, rel: str) -> os.stat_result | None:
        """``rel``'s own stat (a link's, not its target's); None when it cannot be had."""
        try:
            parent, name = self._parent(rel)
        except (OSError, FileProblem):
            return None
        try:
            return os.stat(name, dir_fd=parent, follow_symlinks=False)
        except OSError:
            return None
        finally:
            os.close(parent)

    def _open(self, rel: str) -> int:
        """A blocking descriptor of the regular file ``rel``, opened without following a link or waiting on a FIFO.

        Raises:
            FileProblem: gone, a link, not a regular file, or not readable.
        """
        try:
            parent, name = self._parent(rel)
            try:
                before = os.stat(name, dir_fd=parent, follow_symlinks=False)
                if not stat.S_ISREG(before.st_mode):  # not even opened: opening a device can do things
                    raise _not_regular(before.st_mode)
                fd = os.open(name, _FILE, dir_fd=parent)
            finally:
                os.close(parent)
        except OSError as exc:
            raise _problem(exc) from None
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped between the stat and the open
            os.close(fd)
            raise _not_regular(mode)
        os.set_blocking(fd, True)
        return fd

    def read(self, rel: str, into: BinaryIO | None = None, check: Callable[[int], None] | None = None) -> Read:
        """Hash ``rel`` (and copy its bytes ``into`` a file), from one descriptor; ``check(size)`` runs first and
        may raise to leave the file unread (one over the size limit).

        Raises:
            FileProblem: it cannot be read as a regular file of the folder, or it changed while read (retry).
        """
        fd = self._open(rel)
        try:
            before = os.fstat(fd)
            if check is not None:
                check(before.st_size)
            digest, total = hashlib.sha256(), 0
            while block := os.read(fd, _BLOCK):
                digest.update(block)
                total += len(block)
                if into is not None:
                    into.write(block)
            after = os.fstat(fd)
        except OSError as exc:
            raise _problem(exc) from None
        finally:
            os.close(fd)
        if total != before.st_size or (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            raise FileProblem("written to while it was read; tried again at the next sync", retry=True)
        return Read(digest.hexdigest(), before.st_size, before.st_mtime_ns)

    def copy(self, rel: str, target: Path, check: Callable[[int], None] | None = None) -> Read:
        """``read`` into a new private file ``target`` (the bytes the ingest then parses)."""
        with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, 0o600), "wb") as out:
            return self.read(rel, out, check)

    # -- the walk --------------------------------------------------------------------------------

    def walk(
        self, wants: Callable[[str], bool], extensions: Collection[str], max_depth: int
    ) -> tuple[list[Seen], int, list[Refusal]]:
        """The regular files ``wants`` takes (by relative path), the count of those of a type not read, and the
        folders left out: unreadable, or deeper than ``max_depth`` below the root. Links are not followed and
        ``.git`` is left out. Depth first, one descriptor per level open at a time, no recursion."""
        found: list[Seen] = []
        refused: list[Refusal] = []
        ignored = 0
        frames: list[tuple[int, str, int, list[str]]] = []  # (folder's descriptor, its path/, depth, subfolders left)

        def enter(fd: int, prefix: str, depth: int) -> None:
            nonlocal ignored
            try:
                with os.scandir(fd) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError as exc:
                os.close(fd)
                refused.append(Refusal(shown(prefix or "./"), f"folder not readable: {exc.strerror or exc}"))
                return
            folders: list[str] = []
            frames.append((fd, prefix, depth, folders))
            for entry in entries:
                rel = prefix + entry.name
                try:
                    if entry.is_symlink():
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIPPED_DIRS:
                            folders.append(entry.name)
                        continue
                except OSError:
                    continue  # gone since listed
                if not wants(rel):
                    continue
                if PurePosixPath(entry.name).suffix.lower() not in extensions:
                    ignored += 1
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError as exc:
                    refused.append(Refusal(rel, f"not readable: {exc.strerror or exc}"))
                    continue
                if stat.S_ISREG(st.st_mode):
                    found.append(Seen(rel, st.st_size, st.st_mtime_ns))
            folders.reverse()  # popped from the end: in name order

        try:
            enter(os.dup(self._fd), "", 0)
            while frames:
                fd, prefix, depth, folders = frames[-1]
                if not folders:
                    os.close(fd)
                    frames.pop()
                    continue
                name = folders.pop()
                rel = f"{prefix}{name}/"
                if depth + 1 > max_depth:
                    reason = f"folder more than {max_depth} folders deep: not read (RAGAPP_SYNC__MAX_DEPTH)"
                    refused.append(Refusal(shown(rel), reason))
                    continue
                try:
                    child = os.open(name, _DIR, dir_fd=fd)
                except OSError as exc:
                    if exc.errno not in _LINK_ERRORS | {errno.ENOENT, errno.ENOTDIR}:  # else: not a folder now
                        refused.append(Refusal(shown(rel), f"folder not readable: {exc.strerror or exc}"))
                    continue
                enter(child, rel, depth + 1)
        finally:
            for fd, *_rest in frames:
                os.close(fd)
        return found, ignored, refused
