"""Procedural memory's settings (``Settings.procedural``, env ``RAGAPP_PROCEDURAL__ENABLED`` etc.).

Procedural memory is experience: which way of answering (workflow or agent, and which agent tools) led to answers
people kept, per kind of question. Off by default: on the answer set it did not choose the mode better than the
rule alone (docs/agent.md, "Procedural memory").
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class ProceduralSettings(BaseModel):
    enabled: bool = Field(
        False,
        description="Learn from feedback (thumbs up: kept; thumbs down or the same question asked again right after: "
        "not kept) which mode and which agent tools answer each kind of question (Auto's classes) well, and let "
        "Auto mode and the agent's tool order follow it. Off: nothing is learned and nothing changes.",
    )
    min_answers: int = Field(
        5,
        ge=1,
        description="Answers with feedback a mode (or a tool) needs for a kind of question before procedural memory "
        "acts on it.",
    )
    margin: float = Field(
        0.2,
        ge=0,
        le=1,
        description="How much more often (share of answers kept, each smoothed as (kept+1)/(answers+2)) the other "
        "mode must be kept before Auto leaves its rule for it.",
    )
    reask_minutes: float = Field(
        10.0,
        ge=0,
        description="A question asked again (same words, or mostly the same words) within this many minutes of the "
        "last answer counts that answer as not kept; 0: re-asks are not counted.",
    )
    max_outcomes: int = Field(5000, ge=10, description="Outcomes kept (all users together); the oldest go first.")
