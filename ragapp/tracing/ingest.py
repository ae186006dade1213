"""An upload's progress messages -> spans: one per file, a child per phase."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragapp.tracing.builder import TraceBuilder


class IngestPhases:
    """Progress messages ("report.pdf: parsing", "report.pdf: embedded 32/90 chunks") -> a span per file, a
    child span per phase (parse, chunk, embed, store)."""

    def __init__(self, builder: TraceBuilder, files: Sequence[str]) -> None:
        self._builder = builder
        self._files = list(files)
        self._file: tuple[str, int] | None = None
        self._phase: tuple[str, int] | None = None

    def progress(self, _fraction: float, message: str) -> None:
        try:
            name = next((f for f in self._files if message.startswith(f + ": ")), "")
            what = message[len(name) + 2 :] if name else message
            phase = _phase_of(what)
            b = self._builder
            if not name:  # a message about the whole batch (the keyword index) belongs to no file
                self._end_file()
            elif self._file is None or self._file[0] != name:
                self._end_file()
                self._file = (name, b.open(name, "file"))
            if self._phase is None or self._phase[0] != phase:
                self._end_phase()
                self._phase = (phase, b.open(phase, "stage", {"message": what}))
        except Exception:
            self._builder._failed("ingest progress")

    def _end_phase(self) -> None:
        if self._phase is not None:
            self._builder.close(self._phase[1])
            self._phase = None

    def _end_file(self) -> None:
        self._end_phase()
        if self._file is not None:
            self._builder.close(self._file[1])
            self._file = None

    def done(self) -> None:
        try:
            self._end_file()
        except Exception:
            self._builder._failed("ingest end")


def _phase_of(message: str) -> str:
    """The ingestor reports "parsing", then "N chunks" once chunked (embedding starts), "embedded i/n" per
    batch, then "updating keyword index"."""
    lowered = message.lower()
    if "pars" in lowered:
        return "parse + chunk"
    if "chunk" in lowered:
        return "embed"
    if "keyword" in lowered:
        return "index"
    return "store"
