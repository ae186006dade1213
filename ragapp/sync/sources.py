"""What a synced source is, which of its files count, and what a sync reports."""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from ragapp.core.errors import RagAppError
from ragapp.core.types import Said
from ragapp.ingest.pipeline import MAX_NAME_CHARS

Kind = Literal["folder", "git", "web"]
KINDS: tuple[Kind, ...] = ("folder", "git", "web")

# What a source is doing or did last, as the surfaces show it.
State = Literal["new", "idle", "running", "busy elsewhere", "paused", "failed"]


class SyncError(RagAppError):
    """A sync request that cannot be done (an unknown source, a folder that is not there); the message says why.
    ``said``: the reason as a code and values, where the UI has words for it (a website's problems)."""

    def __init__(self, message: str = "", said: Said | None = None) -> None:
        super().__init__(message, said)


@dataclass(frozen=True)
class Source:
    """A folder, a git repository or a website a knowledge base follows. ``include``/``exclude`` are globs
    matched against a file's path relative to the root (a page's path below the site's prefix, with its query;
    ``*`` crosses ``/``); a pattern without ``/`` also matches the file name alone. No ``include`` means every
    file."""

    name: str
    kind: Kind
    location: str
    kb: str
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    interval_s: float = 300.0
    branch: str = ""  # git: the branch followed; empty: the remote's default branch
    paused: bool = False

    def wants(self, rel_path: str) -> bool:
        """Whether the file at ``rel_path`` (relative, ``/``-separated) belongs to this source."""
        if self.include and not _any_match(rel_path, self.include):
            return False
        return not _any_match(rel_path, self.exclude)


def _any_match(rel_path: str, patterns: Sequence[str]) -> bool:
    name = PurePosixPath(rel_path).name
    return any(fnmatch.fnmatchcase(rel_path, p) or ("/" not in p and fnmatch.fnmatchcase(name, p)) for p in patterns)


def display_name(rel_path: str) -> str:
    """The document name of a synced file: its path relative to the source's root. A path longer than a
    document name may be is cut in the middle and marked with a digest of the whole path, so two long paths
    never end up with one name (the same name in a base would replace each other)."""
    if len(rel_path) <= MAX_NAME_CHARS:
        return rel_path
    suffix = PurePosixPath(rel_path).suffix[:16]
    mark = "~" + hashlib.sha1(rel_path.encode()).hexdigest()[:10]
    keep = MAX_NAME_CHARS - len(suffix) - len(mark)
    return rel_path[:keep] + mark + suffix


@dataclass(frozen=True)
class Refusal:
    """A file left out of a sync, and why (``said``: the reason as a code and values, where the UI has words
    for it; ``reason`` is its English, for logs, the command line and the HTTP API)."""

    path: str
    reason: str
    said: Said | None = None


@dataclass
class SyncReport:
    """What one sync did. ``hashed`` and ``ingested`` count the work: a re-sync after a few changes should show
    numbers near the changes, not near the tree."""

    started_at: str = ""
    finished_at: str = ""
    commit: str = ""  # git: the commit synced
    seen: int = 0  # files of the source (after the patterns)
    ignored: int = 0  # files the patterns take but of a type the app does not read
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    retrying: list[str] = field(default_factory=list)  # still being written: tried again next time
    unchanged: int = 0
    hashed: int = 0
    ingested: int = 0
    error: str = ""  # the whole sync failed (the folder is gone, git refused): why
    stopped: str = ""  # it stopped early (paused, shutting down): why
    error_said: Said | None = None  # ``error`` and ``stopped`` as codes and values, where there are some
    stopped_said: Said | None = None
    requests: int = 0  # a website: the HTTP requests made (robots.txt and redirects included)
    downloaded: int = 0  # a website: the bytes read

    def summary(self) -> str:
        """One line for logs and the CLI."""
        if self.error:
            return f"failed: {self.error}"
        counts = {"added": len(self.added), "updated": len(self.updated), "renamed": len(self.renamed),
                  "removed": len(self.removed), "refused": len(self.refused), "unchanged": self.unchanged}  # fmt: skip
        parts = [f"{n} {what}" for what, n in counts.items()]
        if self.retrying:
            parts.append(f"{len(self.retrying)} retrying")
        if self.requests:
            parts.append(f"{self.requests} requests")
        line = ", ".join(parts)
        return f"{line} (stopped: {self.stopped})" if self.stopped else line

    def to_json(self) -> dict[str, Any]:
        """As JSON: a refusal without a code is ``{path, reason}`` alone, as before codes were kept."""
        data = asdict(self)
        data["refused"] = [{k: v for k, v in r.items() if k != "said" or v is not None} for r in data["refused"]]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SyncReport:
        data = dict(data)
        data["refused"] = [Refusal(r["path"], r["reason"], _said(r.get("said"))) for r in data.get("refused", [])]
        data["error_said"] = _said(data.get("error_said"))
        data["stopped_said"] = _said(data.get("stopped_said"))
        data["renamed"] = [tuple(r) for r in data.get("renamed", [])]
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


def _said(data: dict[str, Any] | None) -> Said | None:
    """A record stored by a report, read back as it was written."""
    return Said(data["code"], dict(data.get("values") or {})) if data else None


@dataclass(frozen=True)
class SourceStatus:
    """A source with where it stands: its state, the progress of a sync under way, its last report."""

    source: Source
    state: State
    last_run_at: str
    report: SyncReport | None
    done: int = 0
    total: int = 0
    commit: str = ""
