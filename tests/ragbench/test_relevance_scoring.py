"""``python -m ragbench.relevance``'s scoring on hand-built samples (no index, no model)."""

from __future__ import annotations

import runpy
import sys

import pytest

from ragapp.retrieval.relevance import Candidate, RelevanceRules
from ragbench.relevance import RuleSet, Sample, dump_sample, load_sample, score

RULES = RelevanceRules(min_rerank_score=0.2, cross_language_top_n=3, min_cross_language_similarity=0.8)


def _sample(relevant: frozenset[str] | None) -> Sample:
    candidates = (
        Candidate("a", 1, {"vector": 1}, {"vector": 0.9}, 0.9),
        Candidate("b", 2, {"vector": 2}, {"vector": 0.85}, 0.1),
        Candidate("x", 3, {"vector": 3}, {"vector": 0.82}, None, same_language=False),
    )
    return Sample(candidates, relevant, {"x": 0.01})


def test_rule_sets_are_scored_on_recall_in_prompt_empty_prompts_and_irrelevant_chunks() -> None:
    samples = [_sample(frozenset({"x"})), _sample(frozenset({"b"}))]
    by_vector = score(samples, RuleSet("vector", RULES), top_k=5)
    # kept: a and x in both; x is relevant in the first, b (dropped) in the second
    assert by_vector == {
        "recall_in_prompt": 0.5,
        "all_in_prompt": 0.5,
        "empty_prompt": 0.0,
        "irrelevant_kept": 1.5,
        "questions": 2.0,
    }
    by_reranker = score(samples, RuleSet("reranker", RULES, xlang_reranker=True), top_k=5)
    assert by_reranker["recall_in_prompt"] == 0.0  # x scores 0.01 with the reranker: dropped
    assert score(samples, RuleSet("no gate", None), top_k=1)["irrelevant_kept"] == 1.0


def test_a_question_without_an_answer_counts_only_towards_empty_prompts() -> None:
    unanswerable = score([_sample(None)], RuleSet("vector", RULES), top_k=5)
    assert unanswerable["unanswerable_empty"] == 0.0 and unanswerable["questions"] == 0.0
    assert unanswerable["irrelevant_kept"] == 2.0


def test_samples_survive_their_cache_file() -> None:
    sample = _sample(frozenset({"a"}))
    assert load_sample(dump_sample(sample)) == sample
    assert load_sample(dump_sample(_sample(None))).relevant is None


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_command_prints_its_usage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["ragbench.relevance", "--help"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_module("ragbench.relevance", run_name="__main__", alter_sys=True)
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith("usage:")
