"""The catalogue's words for an answer (``ragapp.core.said``)."""

from __future__ import annotations

# code: (English, Chinese)
ANSWER: dict[str, tuple[str, str]] = {}
# value name: {value: (English, Chinese)}
ANSWER_TERMS: dict[str, dict[str, tuple[str, str]]] = {}
