"""The calibrator applied as shipped: coefficients -> probability -> level, with no scikit-learn at run time."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragapp.core.errors import ConfigError
from ragapp.qa.calibrator import SHIPPED, Calibrator, Logistic, load_calibrator

TWO = Logistic(("on_topic", "fits"), (0.5, 0.0), (0.25, 1.0), (2.0, 1.0), -0.5, 0.6, 0.9)


def test_the_probability_is_the_logistic_of_the_standardised_signals() -> None:
    z = -0.5 + 2.0 * (0.9 - 0.5) / 0.25 + 1.0 * 1.0
    assert TWO.probability({"on_topic": 0.9, "fits": 1.0}) == pytest.approx(1 / (1 + math.exp(-z)))
    assert TWO.probability({}) == pytest.approx(1 / (1 + math.exp(-(-0.5 - 4.0))))  # a missing signal reads 0


def test_the_level_follows_the_thresholds_and_they_can_be_overridden() -> None:
    calibrator = Calibrator({"free": TWO})
    assert calibrator.level({}, 0.95) == "high"
    assert calibrator.level({}, 0.7) == "medium"
    assert calibrator.level({}, 0.59) == "low"
    assert calibrator.level({}, 0.59, stated_from=0.5) == "medium"
    assert calibrator.level({}, 0.7, high_from=0.65) == "high"


def test_answers_with_and_without_a_selection_have_their_own_model() -> None:
    other = Logistic(("pick_probability",), (0.0,), (1.0,), (4.0,), -2.0, 0.5, 0.9)
    calibrator = Calibrator({"free": TWO, "selected": other})
    assert calibrator.probability({"selected": 1.0, "pick_probability": 1.0}) == pytest.approx(1 / (1 + math.exp(-2)))
    assert calibrator.model({"selected": 0.0}) is TWO
    assert Calibrator({"selected": other}).model({}) is other  # one model only: used for both


def test_it_reads_back_what_it_writes_and_refuses_a_broken_file(tmp_path: Path) -> None:
    calibrator = Calibrator({"free": TWO})
    assert Calibrator.of(json.loads(json.dumps(calibrator.as_json()))) == calibrator
    broken = calibrator.as_json()
    broken["models"]["free"]["coef"] = [1.0]  # type: ignore[index]
    with pytest.raises(ConfigError, match="differ in length"):
        Calibrator.of(broken)
    path = tmp_path / "c.json"
    path.write_text("{not json", "utf-8")
    with pytest.raises(ConfigError, match=str(path.name)):
        load_calibrator(path)


def test_the_shipped_calibrator_loads_and_reads_every_signal_the_pipeline_gives() -> None:
    from ragapp.qa.confidence import NO_CLUES, answer_signals

    calibrator = load_calibrator(SHIPPED)
    signals = answer_signals("How big is the header?", "100 bytes [1].", (), (), 0.8, None, None, NO_CLUES)
    for model in calibrator.models.values():
        assert set(model.features) <= set(signals)  # a feature the pipeline never gives would always read 0
    assert 0.0 < calibrator.probability(signals) < 1.0
