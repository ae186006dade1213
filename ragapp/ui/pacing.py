"""A streamed answer redrawn at a reader's pace: the engine's events gathered into batches, at most one batch every
``REDRAW_S`` while they come faster, and none held longer than that.

A model writes 20 to 100 tokens a second. Drawn one by one, each token makes Gradio compare the whole chat with the
last one sent on the server, and the browser redraw the chat: half a core of Chromium at 20 tokens a second, a
little over half of that at five redraws a second (docs/lab-log.md, "A streamed answer's redraws"), which still
read as the answer being written.

Gradio has no such setting for an event's outputs (its ``stream_every`` paces streamed inputs), so the events are
read here, in a thread of their own: a batch is sent when its time comes even if the model stalls just after a
token, which reading them in the request's own thread could not do.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeVar, cast

T = TypeVar("T")

REDRAW_S = 0.2
"""The least time between two redraws of a streamed answer (seconds); an event waits at most this long."""

_END = object()


@dataclass(frozen=True)
class _Raised:
    error: BaseException


def paced(events: Iterator[T], every_s: float = REDRAW_S) -> Iterator[list[T]]:
    """The items of ``events`` in batches: the first at once, then at most one batch every ``every_s`` seconds,
    an item never held longer than ``every_s``, and the last at once when ``events`` ends. An error of ``events``
    is raised here after the items before it. Closing this iterator stops reading ``events`` at its next item and
    closes it (a model call under way finishes its piece first, as it would if the request's thread read it)."""
    box: queue.SimpleQueue[object] = queue.SimpleQueue()
    stop = threading.Event()

    def pump() -> None:
        try:
            for item in events:
                if stop.is_set():
                    break
                box.put(item)
        except BaseException as exc:  # handed to the reader, which raises it in the request's thread
            box.put(_Raised(exc))
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()
            box.put(_END)

    # The context goes along: a traced request's spans and Gradio's toasts find their request through it.
    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(pump,), name="ui-paced", daemon=True).start()
    sent = float("-inf")
    try:
        while True:
            batch: list[object] = [box.get()]
            due = max(time.monotonic(), sent + every_s)
            while batch[-1] is not _END and not isinstance(batch[-1], _Raised):
                try:
                    batch.append(box.get(timeout=max(0.0, due - time.monotonic())))
                except queue.Empty:
                    break
            last = batch[-1]
            items = [cast(T, item) for item in batch if item is not _END and not isinstance(item, _Raised)]
            if items:
                sent = time.monotonic()
                yield items
            if isinstance(last, _Raised):
                raise last.error
            if last is _END:
                return
    finally:
        stop.set()
