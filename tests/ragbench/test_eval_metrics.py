"""Ranking metrics on hand-built rankings, and the BEIR reader on a tiny folder written here."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragapp.testcases.metrics import all_found_at_k, mrr_at_k, ndcg_at_k, recall_at_k
from ragbench.eval.beir import BeirDataset, DatasetError, Passage, Query, load_beir
from ragbench.eval.runner import percentiles, score

TINY_BEIR = Path(__file__).resolve().parents[1] / "data" / "tiny-beir"


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


# One query's ranking, worked through by hand below (log2(3) = 1.58496, log2(5) = 2.32193, log2(6) = 2.58496).
GRADED = {"a": 3, "b": 2, "c": 1, "m": 1, "z": 0}  # "m" is never retrieved; "z" is judged not relevant
RANKED = ["z", "b", "a", "y", "c"]


def test_ndcg_graded_by_hand() -> None:
    # DCG@10 = 2/log2(3) + 3/log2(4) + 1/log2(6) = 1.26186 + 1.5 + 0.38685 = 3.14871   (b, a, c at ranks 2, 3, 5)
    # IDCG@10 = 3/1 + 2/log2(3) + 1/log2(4) + 1/log2(5) = 3 + 1.26186 + 0.5 + 0.43068 = 5.19254   (3, 2, 1, 1)
    assert ndcg_at_k(RANKED, GRADED, k=10) == pytest.approx(3.14871 / 5.19254, abs=1e-5)  # 0.60639
    # @3: DCG = 1.26186 + 1.5 = 2.76186; IDCG = 3 + 1.26186 + 0.5 = 4.76186 -> 0.58000
    assert ndcg_at_k(RANKED, GRADED, k=3) == pytest.approx(0.58000, abs=1e-5)
    # @1: "z" (grade 0) gains nothing -> 0
    assert ndcg_at_k(RANKED, GRADED, k=1) == 0.0
    # Grades count, not just relevance: swapping a (3) and b (2) changes the score.
    swapped = ["z", "a", "b", "y", "c"]  # DCG = 3/log2(3) + 2/2 + 1/log2(6) = 1.89279 + 1 + 0.38685 = 3.27964
    assert ndcg_at_k(swapped, GRADED, k=10) == pytest.approx(3.27964 / 5.19254, abs=1e-5)


def test_recall_mrr_all_found_by_hand() -> None:
    # Relevant (grade > 0): a, b, c, m. Found in the top 3: b, a -> 2/4; top 5: b, a, c -> 3/4.
    assert recall_at_k(RANKED, GRADED, k=3) == 0.5
    assert recall_at_k(RANKED, GRADED, k=5) == 0.75
    assert recall_at_k(RANKED, GRADED, k=100) == 0.75  # m is never found
    # First relevant id at rank 2 ("z" at rank 1 has grade 0).
    assert mrr_at_k(RANKED, GRADED, k=10) == 0.5
    assert mrr_at_k(RANKED, GRADED, k=1) == 0.0
    assert all_found_at_k(RANKED, GRADED, k=5) is False  # m is missing
    assert all_found_at_k(RANKED, {"a": 2, "c": 1, "z": 0}, k=5) is True  # z need not be found
    assert all_found_at_k(RANKED, {"a": 2, "c": 1}, k=4) is False  # c is 5th


def test_score_averages_over_queries_and_adds_all_found_for_multi_hop_sets() -> None:
    corpus = tuple(Passage(d, "", d) for d in "abcdx")
    queries = (Query("q1", "one"), Query("q2", "two"), Query("q3", "three"))
    qrels = {"q1": {"a": 1}, "q2": {"b": 2, "c": 1}, "q3": {"d": 1}}
    data = BeirDataset("hand", corpus, queries, qrels)
    per_query = {"q1": ["a"], "q2": ["x", "c", "b"]}  # q3 returned nothing (or never ran)
    # q1: ndcg 1, recall 1, mrr 1, all found.
    # q2: DCG = 1/log2(3) + 2/log2(4) = 0.63093 + 1 = 1.63093; IDCG = 2 + 1/log2(3) = 2.63093 -> 0.61991;
    #     recall 1, mrr 1/2, both found by rank 3.
    # q3: all zeros.
    metrics = score(per_query, data)
    assert metrics["ndcg@10"] == pytest.approx((1 + 1.63093 / 2.63093) / 3, abs=1e-4)  # 0.5400
    assert metrics["recall@10"] == metrics["recall@100"] == pytest.approx(2 / 3, abs=1e-4)
    assert metrics["mrr@10"] == pytest.approx(0.5, abs=1e-4)  # (1 + 0.5 + 0) / 3
    assert metrics["all_found@5"] == metrics["all_found@10"] == pytest.approx(2 / 3, abs=1e-4)
    # No query with two relevant documents: no all-found columns.
    single = BeirDataset("hand", corpus, queries[:1], {"q1": {"a": 1}})
    assert set(score({"q1": ["a"]}, single)) == {"ndcg@10", "recall@10", "recall@100", "mrr@10"}


def test_percentiles_are_nearest_rank_in_milliseconds() -> None:
    seconds = [(i + 1) / 1000 for i in range(21)]  # 1 .. 21 ms, shuffled below
    seconds = seconds[10:] + seconds[:10]
    # p50: index round(0.5 * 20) = 10 -> 11 ms; p95: index round(0.95 * 20) = 19 -> 20 ms.
    assert percentiles(seconds) == {"p50": 11.0, "p95": 20.0}
    assert percentiles([]) == {"p50": 0.0, "p95": 0.0}
    assert percentiles([0.25]) == {"p50": 250.0, "p95": 250.0}


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


def test_load_beir_missing_corpus_or_queries(tmp_path: Path) -> None:
    _write(tmp_path / "tiny")
    (tmp_path / "tiny" / "corpus.jsonl").unlink()
    with pytest.raises(DatasetError, match=r"corpus\.jsonl is missing: a BEIR folder holds corpus\.jsonl, queries"):
        load_beir(tmp_path / "tiny")
    _write(tmp_path / "other")
    (tmp_path / "other" / "queries.jsonl").unlink()
    with pytest.raises(DatasetError, match=r"queries\.jsonl is missing"):
        load_beir(tmp_path / "other")
    # A corpus taken from a folder that lacks one names that folder's file.
    with pytest.raises(DatasetError, match=r"elsewhere.corpus\.jsonl is missing"):
        load_beir(tmp_path / "tiny", corpus_folder=tmp_path / "elsewhere")


def test_load_beir_bad_json_line_names_file_and_line(tmp_path: Path) -> None:
    _write(tmp_path / "tiny")
    corpus = tmp_path / "tiny" / "corpus.jsonl"
    corpus.write_text(corpus.read_text("utf-8") + '\n\n{"_id": "d3", "text": "three"\n', "utf-8")  # line 4
    with pytest.raises(DatasetError, match=r"corpus\.jsonl:4 is not valid JSON"):
        load_beir(tmp_path / "tiny")


def test_load_beir_missing_split_names_the_split_file(tmp_path: Path) -> None:
    _write(tmp_path / "tiny")
    with pytest.raises(DatasetError, match=r"qrels.dev\.tsv is missing: pick a split that exists under qrels/"):
        load_beir(tmp_path / "tiny", split="dev")


def test_qrels_without_a_header_are_read_too(tmp_path: Path) -> None:
    _write(tmp_path / "tiny")
    (tmp_path / "tiny" / "qrels" / "test.tsv").write_text("q1\td1\t2\nq1\td2\t0\n", "utf-8")
    assert load_beir(tmp_path / "tiny").qrels == {"q1": {"d1": 2, "d2": 0}}


def test_the_tiny_beir_fixture_reads_as_written() -> None:
    data = load_beir(TINY_BEIR)
    assert len(data.corpus) == 12
    assert [q.query_id for q in data.queries] == ["q1", "q2", "q3", "q4", "q5", "q6", "q8"]  # q7 is unjudged
    assert data.qrels["q5"] == {"d12": 2, "d02": 1}  # the two-document (multi-hop) query, graded
    zh = load_beir(TINY_BEIR / "zh")
    assert [p.doc_id for p in zh.corpus] == ["z1", "z2", "z3"]
    assert len(zh.queries) == 2


# The evaluation sets live beside the repository (../shared/data), never inside it (licences).
SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


@pytest.mark.skipif(not (SHARED_DATA / "xquad").is_dir(), reason="../shared/data is not beside this checkout")
def test_reads_the_shared_xquad_zh_over_the_english_corpus() -> None:
    data = load_beir(SHARED_DATA / "xquad" / "zh", corpus_folder=SHARED_DATA / "xquad" / "en")
    assert len(data.corpus) == 240
    assert len(data.queries) == 1190
    assert all(q.query_id in data.qrels for q in data.queries)
