"""Intent classification: the LLM scores every eligible leaf of the tree in one call.

The prompt lists each candidate leaf with a short numeric id, its full path, kind, description and a few
examples; the model replies with JSON scores. Only ids from this call's candidate list are accepted, so a
model that invents an id or names a group cannot route anywhere. An LLM error, a timeout or a reply with
no readable scores gives an empty classification (and the reason), never an exception.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragapp.core.errors import LLMError
from ragapp.core.lang import is_chinese
from ragapp.core.types import ChatTurn, LeafScore
from ragapp.models.json_reply import json_candidates
from ragapp.models.llm import LLM, stream_within
from ragapp.router.tree import IntentNode, IntentTree

__all__ = ["Classification", "IntentClassifier", "LeafScore", "parse_scores"]

log = logging.getLogger(__name__)

MAX_EXAMPLES = 3  # per leaf in the prompt: enough to show the idea, cheap enough for a small local model
_MAX_REPLY_TOKENS = 200


@dataclass(frozen=True)
class Classification:
    question: str
    scores: tuple[LeafScore, ...]  # accepted scores, best first; leaves the model did not name are absent
    candidates: tuple[LeafScore, ...] = ()  # every leaf offered, score 0 (for "see every leaf's score")
    ignored: tuple[str, ...] = ()  # ids in the reply that were not candidates
    error: str | None = None  # why there are no scores (LLM failure, unreadable reply)
    reply: str = ""
    duration_s: float = 0.0
    by: Literal["model", "embedder"] = "model"  # who scored: the model's call, or the embedder alone (its cosines)

    def score_of(self, code: str) -> float:
        return next((s.score for s in self.scores if s.code == code), 0.0)


# Tried on the demo tree with the packaged 1.5B model (`make routing-eval`): numeric ids and "list only
# scores >= 0.2" made it copy the example scores; leaf codes as ids and a fixed score scale did much better;
# the SYSTEM sentence and "never pick the closest topic" took accuracy on the labelled set from 0.69 to 0.76
# (messages to the assistant 0.3 -> 0.8). A "none of these" candidate did not help: the model never picks it.
SYSTEM_PROMPT = """You are an intent classifier for a help desk. Below is a list of topics, one per line:
id | path | kind | description | examples.
Read the user's message and decide which topics it is about. Give each matching topic a score:
1.0 = certainly this topic, 0.7 = probably, 0.4 = maybe. If the message could belong to several topics
equally (for example it does not name the product), list all of them with the same score.
Messages to the assistant itself (hello, thanks, goodbye, who are you, what can you do, comments on its
previous answer) belong to the SYSTEM topics only, never to a product or service topic.
Answer with JSON: {"matches": [{"id": "<topic id>", "score": <score>}]}, best match first, at most 4.
If the message is about none of these topics (general knowledge, other companies and their products,
programming, cooking, weather...), answer {"matches": []}. Never pick the closest topic only because
nothing else fits."""


def candidate_lines(tree: IntentTree, leaves: Sequence[IntentNode]) -> str:
    lines = []
    for leaf in leaves:
        examples = " / ".join(leaf.examples[:MAX_EXAMPLES])
        parts = [leaf.code, tree.full_path(leaf.code), leaf.kind or "", leaf.description, examples]
        lines.append(" | ".join(p.replace("\n", " ").strip() for p in parts))
    return "\n".join(lines)


def classification_messages(question: str, tree: IntentTree, leaves: Sequence[IntentNode]) -> list[ChatTurn]:
    label = "用户消息" if is_chinese(question) else "Message"
    # The candidate list sits in the system turn and stays identical between questions, so a local model
    # that caches prompt prefixes only processes the question.
    system = f"{SYSTEM_PROMPT}\n\nCandidates:\n{candidate_lines(tree, leaves)}"
    return [ChatTurn("system", system), ChatTurn("user", f"{label}: {question}")]


class IntentClassifier:
    def __init__(self, llm: LLM, timeout_s: float) -> None:
        self._llm = llm
        self._timeout_s = timeout_s

    def classify(self, question: str, tree: IntentTree) -> Classification:
        leaves = tree.leaves()
        offered = tuple(_score(tree, leaf, 0.0) for leaf in leaves)
        if not leaves:
            return Classification(question, (), offered, error="the intent tree has no leaves")
        messages = classification_messages(question, tree, leaves)
        start = time.perf_counter()
        try:
            pieces = stream_within(
                lambda: self._llm.stream_chat(
                    messages, max_tokens=_MAX_REPLY_TOKENS, temperature=0.0, json=True, prefix_slot="intents"
                ),
                self._timeout_s,
            )
            reply = "".join(pieces)
        except LLMError as exc:
            return Classification(question, (), offered, error=str(exc), duration_s=time.perf_counter() - start)
        except Exception as exc:  # a backend bug means "no intent", never a failed question
            log.exception("intent classification failed")
            error = f"the model failed ({type(exc).__name__}: {exc})"
            return Classification(question, (), offered, error=error, duration_s=time.perf_counter() - start)
        duration = time.perf_counter() - start
        raw = parse_scores(reply)
        if raw is None:
            error = "the model's reply held no readable scores"
            return Classification(question, (), offered, error=error, reply=reply, duration_s=duration)
        by_code = {leaf.code: leaf for leaf in leaves}
        by_tail = _unique_tails(leaves)
        best: dict[str, float] = {}
        ignored: list[str] = []
        for key, score in raw:
            leaf = by_code.get(key) or by_tail.get(key)
            if leaf is None:
                ignored.append(key)
                continue
            best[leaf.code] = max(score, best.get(leaf.code, 0.0))
        scores = sorted((_score(tree, by_code[code], score) for code, score in best.items()), key=lambda s: -s.score)
        return Classification(question, tuple(scores), offered, tuple(ignored), None, reply, duration)


def _unique_tails(leaves: Sequence[IntentNode]) -> dict[str, IntentNode]:
    """Small models sometimes shorten 'assistant.greeting' to 'greeting': accept a last segment that names
    exactly one candidate (it still refers to this call's list; anything else is ignored)."""
    tails: dict[str, list[IntentNode]] = {}
    for leaf in leaves:
        tails.setdefault(leaf.code.rsplit(".", 1)[-1], []).append(leaf)
    return {tail: found[0] for tail, found in tails.items() if len(found) == 1}


def _score(tree: IntentTree, leaf: IntentNode, score: float) -> LeafScore:
    assert leaf.kind is not None
    return LeafScore(leaf.code, tree.full_path(leaf.code), leaf.kind, leaf.parent, score)


# -- reading the reply ---------------------------------------------------------------------------


def parse_scores(reply: str) -> list[tuple[str, float]] | None:
    """(id, score) pairs from a reply, or None when nothing readable is there.

    Accepts {"matches": [{"id": "a.b", "score": 0.9}]}, {"a.b": 0.9}, [{"id": "a.b", "score": "0.9"}], fenced or
    surrounded by prose. Scores on a 0-10 or 0-100 scale are brought to 0-1; the rest are clamped.
    """
    for data in json_candidates(reply):
        pairs = _pairs(data)
        if pairs is not None:
            return pairs
    return None


def _pairs(data: object) -> list[tuple[str, float]] | None:
    if isinstance(data, dict):
        for key in ("matches", "intents", "scores", "results"):
            if isinstance(data.get(key), list | dict):
                return _pairs(data[key])
        if ("id" in data or "code" in data) and "score" in data:
            return _pairs([data])
        pairs = [(str(k).strip(), s) for k, v in data.items() if (s := _number(v)) is not None]
        return pairs if pairs or not data else None
    if isinstance(data, list):
        out = []
        for item in data:
            if isinstance(item, dict):
                ident = item.get("id", item.get("code"))
                score = _number(item.get("score"))
                if ident is not None and score is not None:
                    out.append((str(ident).strip(), score))
        return out if out or not data else None
    return None


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip().rstrip("%"))
        except ValueError:
            return None
    if not isinstance(value, int | float) or value != value:  # NaN
        return None
    score = float(value)
    if 1.0 < score <= 10.0:
        score /= 10.0
    elif 10.0 < score <= 100.0:
        score /= 100.0
    return min(1.0, max(0.0, score))
