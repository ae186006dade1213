"""The context budget's table (``Settings.budget``, env ``RAGAPP_BUDGET__HISTORY`` etc.): how the model's window,
less the answer's ``max_tokens``, is shared between the parts of a prompt.

It starts from the usual RAG-to-agent context split (20% instructions, 30% history, 40% retrieved passages, 10% tool
descriptions, history compressed first), with a share of the history's for long-term memories. A part that needs
less than its share (no memories, no tools in Workflow mode, short instructions) leaves the rest to the passages;
shares adding up to less than 1 leave the difference free. How the split was chosen: docs/benchmarks.md ("Context
budget").
"""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

PARTS = ("instructions", "history", "memories", "passages", "tools")


class BudgetSettings(BaseModel):
    instructions: float = Field(
        0.2,
        ge=0,
        le=1,
        description="Share of the prompt (the window less the answer) for the answering rules and the question. "
        "They are never cut: longer ones take it from the passages; what they leave goes to the passages.",
    )
    history: float = Field(
        0.25,
        ge=0,
        le=1,
        description="Share for the conversation (its summary and the recent turns kept verbatim). Over it, more "
        "turns are folded into the summary and the summary is shortened, before any passage is condensed.",
    )
    memories: float = Field(
        0.05,
        ge=0,
        le=1,
        description="Share for what the user said in earlier conversations (long-term memories); without "
        "memories it goes to the passages.",
    )
    passages: float = Field(
        0.4,
        ge=0,
        le=1,
        description="Share for the retrieved passages, plus what the other parts leave. Over it, the passages "
        "after the best one are condensed to fewer sentences, and only then are the last ones dropped.",
    )
    tools: float = Field(
        0.1,
        ge=0,
        le=1,
        description="Share for the tool descriptions in Agent mode's instructions; over it, the descriptions "
        "are shortened to their first sentence. In Workflow mode it goes to the passages.",
    )

    @model_validator(mode="after")
    def _at_most_the_window(self) -> BudgetSettings:
        shares = self.shares()
        total = sum(shares.values())
        if total > 1.0 + 1e-9:
            listed = " + ".join(f"{name} {share:g}" for name, share in shares.items())
            raise ValueError(
                f"the budget's shares add up to {total:g} ({listed}); they must add up to at most 1: "
                "lower one of them (RAGAPP_BUDGET__PASSAGES etc.)"
            )
        return self

    def shares(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in PARTS}
