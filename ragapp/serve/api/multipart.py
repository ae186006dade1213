"""Reading an upload: a multipart body with one or several files and a ``kb`` field, each file refused as soon
as it passes the size limit (before the rest of it is read, and before anything reaches the knowledge base),
a body that is not well-formed multipart refused with the parser's reason."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from ragapp.core.types import DEFAULT_KB
from ragapp.serve.api.errors import ApiError

MAX_FILES = 20  # per request
MAX_FIELDS = 10
_HOW = "Send multipart/form-data: one or more file fields (e.g. files=@report.pdf) and optionally kb=NAME."


class FileTooLarge(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _LimitedParser(MultiPartParser):
    """Starlette's parser, stopping at the first file part over ``max_file_bytes``."""

    def __init__(self, request: Request, max_file_bytes: int) -> None:
        super().__init__(request.headers, request.stream(), max_files=MAX_FILES, max_fields=MAX_FIELDS)
        self._max_file_bytes = max_file_bytes
        self._file_bytes = 0

    def on_part_begin(self) -> None:
        super().on_part_begin()
        self._file_bytes = 0

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        part = self._current_part
        if part.file is not None:
            self._file_bytes += end - start
            if self._file_bytes > self._max_file_bytes:
                raise FileTooLarge(part.file.filename or "a file")
        super().on_part_data(data, start, end)


@dataclass(frozen=True)
class Upload:
    kb: str
    files: list[UploadFile]


async def read_upload(request: Request, max_file_mb: float) -> Upload:
    """The request's files and knowledge base (``DEFAULT_KB`` when none is named). Raises ``ApiError``: 413 for a
    file over ``max_file_mb``, 400 for a body that is not multipart or holds no file."""
    limit = int(max_file_mb * 1024 * 1024)
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise ApiError(400, f"Not a multipart upload. {_HOW}", "not_multipart")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_FILES * limit + 1024 * 1024:
        raise ApiError(413, _too_large(f"this upload ({int(declared) / 1e6:.0f} MB)", max_file_mb), "file_too_large")
    parser = _LimitedParser(request, limit)
    try:
        form = await parser.parse()
    except FileTooLarge as exc:
        raise ApiError(413, _too_large(repr(exc.name), max_file_mb), "file_too_large") from None
    except MultiPartException as exc:
        raise ApiError(400, f"Malformed multipart body: {exc.message} {_HOW}", "malformed_multipart") from None
    files = [v for _k, v in form.multi_items() if isinstance(v, UploadFile)]
    if not files:
        for _k, v in form.multi_items():
            if isinstance(v, UploadFile):
                await v.close()
        raise ApiError(400, f"The upload holds no file. {_HOW}", "no_file")
    kb = form.get("kb")
    return Upload(kb.strip() if isinstance(kb, str) and kb.strip() else DEFAULT_KB, files)


def _too_large(what: str, max_file_mb: float) -> str:
    return (
        f"{what} is larger than the {max_file_mb:g} MB limit (RAGAPP_INGEST__MAX_FILE_MB); nothing was stored. "
        "Split it, or raise the limit."
    )


def safe_name(name: str | None) -> str:
    """A file name to show and to store under: its last part, never a path."""
    base = Path((name or "").replace("\\", "/")).name.strip()
    return base if base not in ("", ".", "..") else "upload"


async def save(files: list[UploadFile], folder: Path) -> list[tuple[Path, str]]:
    """Each file under a folder of its own in ``folder`` (two files may share a name): (path, name) pairs."""

    def write() -> list[tuple[Path, str]]:
        saved = []
        for i, upload in enumerate(files):
            name = safe_name(upload.filename)
            path = folder / str(i) / name
            path.parent.mkdir(parents=True)
            upload.file.seek(0)
            with path.open("wb") as out:
                shutil.copyfileobj(upload.file, out)
            saved.append((path, name))
        return saved

    try:
        return await run_in_threadpool(write)
    finally:
        for upload in files:
            await upload.close()
