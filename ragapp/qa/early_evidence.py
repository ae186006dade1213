"""Evidence before routing's model call ends: the quote from the general search, and how it is settled.

When the intent tree cannot decide without the model, routing's classifier call takes 2.5-5 s on 2 cores, and
the quote meant to be on screen within a second waited behind it. The pipeline now searches the user's whole
scope (the knowledge bases they may read and picked, the documents their filter admits) on its own thread
while that call runs, and shows the best sentence at once, marked ``early``. What routing decides then settles
it: the answer's own quote (from the narrowed search) replaces it when it differs, and when the answer holds
no quote at all (the app asks back, replies directly, or finds nothing in the narrowed scope) an
``EvidenceWithdrawnEvent`` takes it back before the first token. Where the tree decides without the model no
early search runs: the answer's search comes as soon, and a second one would be wasted work.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ragapp.core.events import AnswerEvent, EngineEvent, EvidenceEvent, EvidenceWithdrawnEvent, TokenEvent
from ragapp.core.types import Docs


@dataclass
class EarlyEvidence:
    """One question's early quote: searched once (for its first part that routing sends to the model)."""

    docs: Docs  # the documents the question's filter admits (None: no filter)
    searched: bool = False
    shown: EvidenceEvent | None = None
    settled: bool = False

    def withdrawn(self, reason: str) -> Iterator[EngineEvent]:
        """Take the early quote back (once), when the answer will not stand on it."""
        if self.shown is not None and not self.settled:
            self.settled = True
            yield EvidenceWithdrawnEvent(reason)

    def settling(self, events: Iterable[EngineEvent]) -> Iterator[EngineEvent]:
        """``events`` (the answer's), with the early quote settled: the answer's quote passes when it differs
        (it replaces the early one), not when it is the same; before a first token or answer that came without
        a quote, the early one is withdrawn."""
        for event in events:
            if self.shown is not None and not self.settled:
                if isinstance(event, EvidenceEvent):
                    self.settled = True
                    if (event.quote, event.citation) == (self.shown.quote, self.shown.citation):
                        continue  # already on screen, with the same number
                elif isinstance(event, TokenEvent | AnswerEvent):
                    yield from self.withdrawn("the narrowed search holds no quote")
            yield event
