"""Uploads run as jobs: each in a background thread, up to ``AT_ONCE`` together (a slow one never holds the
others up: they share the embedder, and only their writes to the stores take turns), with their progress
readable while they run.

Jobs live in memory only, the last ``KEPT_PER_OWNER`` of each owner: a restart forgets them (the documents
they added stay, of course). A job's files sit in a folder of their own until it ends, then go.
"""

from __future__ import annotations

import logging
import secrets
import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ragapp.core.errors import RagAppError
from ragapp.core.types import IngestProgress, IngestResult
from ragapp.engine.engine import Engine
from ragapp.serve.api.auth import Caller
from ragapp.serve.api.schemas import IngestResultOut, JobOut, JobProgressOut

log = logging.getLogger(__name__)

KEPT_PER_OWNER = 50
AT_ONCE = 4  # as many as the page runs uploads and answers at once (ragapp.ui.mount)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class Job:
    id: str
    owner: str
    kb: str
    files: list[str]
    status: str = "queued"
    fraction: float = 0.0
    message: str = "waiting for the uploads before it"
    progress: IngestProgress | None = None  # the latest report
    results: list[IngestResult] = field(default_factory=list)
    error: str | None = None
    created: str = field(default_factory=_now)
    finished: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)

    def view(self) -> JobOut:
        return JobOut(
            id=self.id, status=self.status, kb=self.kb, files=list(self.files), fraction=round(self.fraction, 4),
            message=self.message, progress=_progress_out(self.progress), error=self.error, created=self.created,
            finished=self.finished,
            results=[IngestResultOut(name=r.name, status=r.status, message=r.message, doc_id=r.doc_id,
                                     chunks=r.chunks) for r in self.results],
        )  # type: ignore[arg-type]  # fmt: skip


def _progress_out(update: IngestProgress | None) -> JobProgressOut | None:
    if update is None:
        return None
    return JobProgressOut(
        file=update.file, file_index=update.index, file_count=update.count, stage=update.phase, done=update.done,
        total=update.total,
    )  # fmt: skip


class Jobs:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._lock = threading.Lock()
        self._by_owner: dict[str, OrderedDict[str, Job]] = {}
        self._turns = threading.BoundedSemaphore(AT_ONCE)

    def start(self, caller: Caller, kb: str, files: list[tuple[Path, str]], folder: Path) -> Job:
        """Ingest ``files`` (path, name to show) into ``kb`` for ``caller``; ``folder`` (theirs) is removed after."""
        job = Job(secrets.token_hex(8), caller.owner, kb, [name for _path, name in files])
        with self._lock:
            jobs = self._by_owner.setdefault(caller.owner, OrderedDict())
            jobs[job.id] = job
            for old in [j for j in jobs.values() if j.done.is_set()][: max(0, len(jobs) - KEPT_PER_OWNER)]:
                del jobs[old.id]
        worker = threading.Thread(target=self._run, args=(job, caller, files, folder), name=f"api-job-{job.id}")
        worker.daemon = True
        worker.start()
        return job

    def get(self, owner: str, job_id: str) -> Job | None:
        with self._lock:
            return self._by_owner.get(owner, OrderedDict()).get(job_id)

    def owned(self, owner: str) -> list[Job]:
        with self._lock:
            return list(reversed(self._by_owner.get(owner, OrderedDict()).values()))

    def close(self) -> None:
        """Stop every job (at a clean point: the file in flight leaves nothing behind)."""
        with self._lock:
            for jobs in self._by_owner.values():
                for job in jobs.values():
                    job.cancel.set()

    def _run(self, job: Job, caller: Caller, files: list[tuple[Path, str]], folder: Path) -> None:
        def progress(update: IngestProgress) -> None:
            job.fraction, job.message, job.progress = update.fraction, update.text, update

        try:
            with self._turns:
                if job.cancel.is_set():
                    job.status, job.message = "cancelled", "cancelled before it started"
                    return
                job.status, job.message = "running", "starting"
                job.results = self._engine.library.ingest(
                    files, progress, job.kb, caller.owner, actor=caller.actor, cancel=job.cancel
                )
                job.status = "cancelled" if job.cancel.is_set() else "done"
                job.fraction, job.message = (job.fraction, "cancelled") if job.cancel.is_set() else (1.0, "done")
        except Exception as exc:
            job.status = "failed"
            if isinstance(exc, RagAppError):
                job.error = str(exc)
            else:
                log.exception("upload job %s failed", job.id)
                job.error = f"Something went wrong ({type(exc).__name__}). The details are in the server log."
            job.message = job.error
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            job.finished = _now()
            job.done.set()
