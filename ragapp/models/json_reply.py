"""Reading JSON out of a model's reply: bare, fenced, or surrounded by prose."""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def json_candidates(reply: str) -> list[object]:
    """Every JSON value found in ``reply``: the whole reply, fenced blocks, the outermost {...} and [...]."""
    texts = [reply.strip(), *(m.group(1).strip() for m in _FENCE.finditer(reply))]
    spans = []
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = reply.find(opener), reply.rfind(closer)
        if 0 <= start < end:
            spans.append((start, reply[start : end + 1]))
    texts += [text for _start, text in sorted(spans)]  # the outermost value first
    out: list[object] = []
    for text in texts:
        try:
            out.append(json.loads(text))
        except ValueError:
            continue
    return out
