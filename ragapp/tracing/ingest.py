"""An upload's progress reports -> spans: one per file, a child per phase."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragapp.core.types import IngestPhase, IngestProgress

if TYPE_CHECKING:
    from ragapp.tracing.builder import TraceBuilder

# The span each phase is recorded under: parsing and chunking run back to back and share one.
PHASE_SPANS: dict[IngestPhase, str] = {
    "parse": "parse + chunk",
    "figures": "parse + chunk",
    "tables": "parse + chunk",
    "ocr": "ocr",
    "chunk": "parse + chunk",
    "embed": "embed",
    "store": "store",
    "index": "index",
}


class IngestPhases:
    """Progress reports -> a span per file (reports without a file, the keyword index, belong to none), a child
    span per phase, opened at the phase's first report with its message."""

    def __init__(self, builder: TraceBuilder) -> None:
        self._builder = builder
        self._file: tuple[str, int] | None = None
        self._phase: tuple[str, int] | None = None

    def progress(self, update: IngestProgress) -> None:
        try:
            b = self._builder
            if update.file is None:
                if self._file is not None:
                    self._end_file()
            elif self._file is None or self._file[0] != update.file:
                self._end_file()
                self._file = (update.file, b.open(update.file, "file"))
            phase = PHASE_SPANS[update.phase]
            if self._phase is None or self._phase[0] != phase:
                self._end_phase()
                self._phase = (phase, b.open(phase, "stage", {"message": update.message}))
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
