"""How far a knowledge base's enrichment has got, step by step: what the Knowledge tab and the API show."""

from __future__ import annotations

from dataclasses import dataclass

from ragapp.core.said import Said


@dataclass(frozen=True)
class StepProgress:
    """One step over one base: ``done`` of ``total`` chunks, at ``per_minute`` (0: not measured yet)."""

    step: str
    done: int
    total: int
    per_minute: float = 0.0

    @property
    def finished(self) -> bool:
        return self.done >= self.total


@dataclass(frozen=True)
class KbProgress:
    """A base's enrichment: paused or not, and each registered step in the order they run."""

    kb: str
    paused: bool
    steps: tuple[StepProgress, ...]
    background: bool = True  # False: this base is indexed inline at upload (``enrich.background``, ``enrich.kbs``)

    @property
    def indexing(self) -> bool:
        """Some step has chunks still to do."""
        return any(not s.finished for s in self.steps)

    def said(self) -> tuple[Said, ...]:
        """The progress line as records: one per unfinished step, or "fully indexed"."""
        lines = []
        for s in self.steps:
            if s.finished:
                continue
            values = {"kb": self.kb, "step": s.step, "done": s.done, "total": s.total}
            if self.paused:
                lines.append(Said("enrich.progress_paused", values))
            elif s.per_minute > 0:
                lines.append(Said("enrich.progress", values | {"pace": s.per_minute}))
            else:
                lines.append(Said("enrich.progress_starting", values))
        return tuple(lines) or (Said("enrich.done", {"kb": self.kb}),)
