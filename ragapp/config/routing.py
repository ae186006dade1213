"""The weights that turn what the router knows about a leaf into the probability that it is the right one."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RouteCalibration(BaseModel):
    """A logistic model: probability = 1 / (1 + exp(-(intercept + similarity·s + margin·m + model·p + no_model·e))),
    where s is the embedder's cosine between the question and the leaf (its best text), m is how far s stands
    above the closest leaf that is not its twin (negative when another leaf is closer), p is the model's score for
    the leaf (0 when it did not name it) and e is 1 when the embedder decided alone (no model call; p is 0 then).
    Fitted on the dev half of the labelled routing questions with the packaged model and embedder
    (`python -m ragbench.routing.fit`, results/routing/calibration-fit.json, docs/workflow.md "What the scores
    mean"); another model or embedder needs its own fit."""

    intercept: float = Field(-16.5994, description="The logistic model's intercept.")
    similarity: float = Field(17.1607, description="Weight of the embedder's cosine between the question and the leaf.")
    margin: float = Field(
        30.1852, description="Weight of the leaf's cosine minus the best cosine of a leaf that is not its twin."
    )
    model: float = Field(1.9132, description="Weight of the model's score for the leaf (0 when it did not name it).")
    no_model: float = Field(0.4509, description="Added when the embedder decided alone, without a model call.")
