"""Long-term memory's settings (``Settings.memory``, env ``RAGAPP_MEMORY__ENABLED`` etc.).

What a user asked the assistant to remember ("remember that I use the V2 Pro") or accepted when it offered, kept
per user and recalled by relevance into its own part of the prompt (``ragapp.engine.memories``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class MemorySettings(BaseModel):
    enabled: bool = Field(
        True,
        description='Keep what users ask the assistant to remember ("remember that I use the V2 Pro") or accept '
        "when it offers, and recall it into a separate part of the prompt when relevant. Off: nothing is kept, "
        "recalled or offered, and the Memory panel says so (each user can also turn it off for themselves).",
    )
    min_similarity: float = Field(
        0.75,
        ge=0,
        le=1,
        description="A memory is recalled for a question when the embedder scores the two at least this similar "
        "(cosine). Chosen on a small set of memories and questions (docs/memory.md).",
    )
    min_question_words: int = Field(
        3,
        ge=0,
        description="A message recalls memories only when it holds at least this many content words (stop words "
        'aside): the embedder scores short messages such as "hello" or "thanks" most similar to every '
        "memory, though they name nothing a memory could matter to. Chosen with min_similarity on a small set of "
        "memories and questions (docs/memory.md); 0: the similarity alone decides.",
    )
    max_recalled: int = Field(3, ge=1, le=20, description="At most this many memories go into one prompt.")
    max_tokens: int = Field(
        200, ge=20, description="The memories' part of the prompt is cut to about this many tokens (best first)."
    )
    max_per_user: int = Field(200, ge=1, description="Memories kept per user; adding one more past it is refused.")
    max_chars: int = Field(500, ge=20, description="The longest memory kept, in characters; a longer one is refused.")
    propose: bool = Field(
        True,
        description="After an answer, offer to remember a preference or a fact about the user's setting found in "
        'the user\'s own message (a rule, no model call); kept only when the user clicks "Remember this".',
    )
