"""Fewer prompt tokens: the passages after the best one cut to the sentences that share the question's words.

On 2 CPU cores the model reads a prompt at ~40 tokens/s, so every 100 tokens cost ~2.5 s before the first word
(``python -m ragbench.bench answer``). The best passage stays whole (the answer is usually there, with its
context); each other one keeps its ``keep`` sentences that share the most of the question's words, in their
order, "…" where sentences were left out, so the model still sees where each fact comes from and its
[n] still names the same passage. Only the prompt is cut: citations, highlights and the support check use the
whole passages, so nothing the documents say is lost to the user.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragapp.core.types import RetrievedChunk
from ragapp.qa.grounding import prose_sentences
from ragapp.store.tokenize import tokenize

GAP = " … "


def condense(question: str, kept: Sequence[RetrievedChunk], keep: int) -> list[RetrievedChunk]:
    """``kept`` with every passage but the first cut to its best ``keep`` sentences (see the module docstring);
    a passage with no sentence sharing a word of the question keeps its first one. ``keep`` 0: unchanged."""
    if keep <= 0 or len(kept) < 2:
        return list(kept)
    asked = set(tokenize(question))
    out = [kept[0]]
    for item in kept[1:]:
        pieces = prose_sentences(item.chunk.text)
        if len(pieces) <= keep:
            out.append(item)
            continue
        scores = [len(asked & set(tokenize(piece))) for piece in pieces]
        ranked = sorted(range(len(pieces)), key=lambda i: (-scores[i], i))
        chosen = sorted(i for i in ranked[:keep] if scores[i] > 0) or [0]
        text = GAP.lstrip() if chosen[0] > 0 else ""
        for position, i in enumerate(chosen):
            if position and i != chosen[position - 1] + 1:
                text += GAP
            text += pieces[i].strip() + (" " if i + 1 in chosen else "")
        if chosen[-1] != len(pieces) - 1:
            text = text.rstrip() + GAP.rstrip()
        out.append(replace(item, chunk=replace(item.chunk, text=text.strip())))
    return out
