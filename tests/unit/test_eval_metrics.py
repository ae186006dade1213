"""Ranking metrics on hand-built rankings, and the BEIR reader on a tiny folder written here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragapp.eval.beir import DatasetError, load_beir
from ragapp.eval.metrics import all_found_at_k, mrr_at_k, ndcg_at_k, recall_at_k


def test_ndcg_perfect_and_graded() -> None:
    qrels = {"a": 2, "b": 1}
    assert ndcg_at_k(["a", "b", "x"], qrels) == pytest.approx(1.0)
    # b first, a second: DCG = 1/log2(2) + 2/log2(3); ideal = 2/log2(2) + 1/log2(3)
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ndcg_at_k(["b", "a"], qrels) == pytest.approx(expected)


def test_ndcg_cut_off_duplicates_and_empty() -> None:
    assert ndcg_at_k(["x", "y", "a"], {"a": 1}, k=2) == 0.0
    assert ndcg_at_k(["a", "a", "b"], {"a": 1, "b": 1}, k=2) == pytest.approx(1.0)  # duplicate counted once
    assert ndcg_at_k([], {"a": 1}) == 0.0
    assert ndcg_at_k(["a"], {}) == 0.0


def test_recall_mrr_and_all_found() -> None:
    qrels = {"a": 1, "b": 1, "c": 0}
    ranked = ["x", "b", "c", "a"]
    assert recall_at_k(ranked, qrels, k=2) == 0.5
    assert recall_at_k(ranked, qrels, k=4) == 1.0
    assert mrr_at_k(ranked, qrels, k=10) == 0.5
    assert mrr_at_k(ranked, qrels, k=1) == 0.0
    assert all_found_at_k(ranked, qrels, k=4) is True
    assert all_found_at_k(ranked, qrels, k=3) is False
    assert all_found_at_k(ranked, {}, k=3) is False


def _write(folder: Path) -> None:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "\n".join(json.dumps(r) for r in [{"_id": "d1", "title": "T", "text": "one"}, {"_id": "d2", "text": "two"}]),
        "utf-8",
    )
    queries = [{"_id": "q1", "text": "first?", "metadata": {"answers": ["one"]}}, {"_id": "q9", "text": "unjudged"}]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries), "utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", "utf-8")


def test_load_beir_keeps_judged_queries(tmp_path: Path) -> None:
    _write(tmp_path / "tiny")
    data = load_beir(tmp_path / "tiny")
    assert [p.doc_id for p in data.corpus] == ["d1", "d2"]
    assert [q.query_id for q in data.queries] == ["q1"]
    assert data.queries[0].metadata == {"answers": ["one"]}
    assert data.qrels == {"q1": {"d1": 1}}


def test_load_beir_errors_say_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="qrels"):
        load_beir(tmp_path)
    _write(tmp_path / "tiny")
    with pytest.raises(DatasetError, match="split"):
        load_beir(tmp_path / "tiny", split="dev")
    with pytest.raises(DatasetError, match="no field 'question_zh'"):
        load_beir(tmp_path / "tiny", query_field="question_zh")


# The evaluation sets live beside the repository (../shared/data), never inside it (licences).
SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.mark.skipif(not (SHARED_DATA / "xquad").is_dir(), reason="../shared/data is not beside this checkout")
def test_reads_the_shared_xquad_zh_over_the_english_corpus() -> None:
    data = load_beir(SHARED_DATA / "xquad" / "zh", corpus_folder=SHARED_DATA / "xquad" / "en")
    assert len(data.corpus) == 240
    assert len(data.queries) == 1190
    assert all(q.query_id in data.qrels for q in data.queries)
