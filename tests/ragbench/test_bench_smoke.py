"""``python -m ragbench.bench`` end to end on a tiny BEIR corpus: every stage and size lands in the JSON.

Figures from such a run mean nothing; only the shape of the output is checked, never a timing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragbench.bench.__main__ import main

# Slow (make test-slow, run by CI): 164 s on the busy shared 2-core machine, the longest test of `make test`, and it
# checks a benchmark's output, not the app; what the benchmark runs (ingest, search) is tested in tests/integration.
pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOPICS = ["battery", "warranty", "filter", "pump", "sensor", "valve"]
PARTS = ["cleaning", "safety", "installation", "storage", "repair", "charging"]


def _write_corpus(folder: Path, passages: int = 36) -> None:
    (folder / "qrels").mkdir(parents=True)
    rows = []
    for i in range(passages):
        topic, part = TOPICS[i % len(TOPICS)], PARTS[(i // len(TOPICS)) % len(PARTS)]
        text = f"The {topic} needs care during {part}. Step {i}: check the {topic} before {part} and log it."
        rows.append({"_id": f"d{i}", "title": f"{topic} {part} {i}", "text": text})
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    queries = [
        {"_id": f"q{i}", "text": f"how do I look after the {t} during {p}?"}
        for i, (t, p) in enumerate(zip(TOPICS, PARTS, strict=True))
    ]
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries[:5]) + "\n", "utf-8")
    qrels = ["query-id\tcorpus-id\tscore", *(f"q{i}\td{i}\t1" for i in range(5))]
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", "utf-8")


def test_bench_reports_every_stage_at_every_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset, output, cache = tmp_path / "tiny", tmp_path / "bench.json", tmp_path / "cache"
    _write_corpus(dataset)
    argv = ["--dataset", str(dataset), "--sizes", "20,60", "--queries", "5", "--cache", str(cache)]
    assert main([*argv, "--output", str(output), "--compare-llamaindex"]) == 0

    payload = json.loads(output.read_text("utf-8"))
    assert payload["embed_sample"]["chunks"] == 20 and not payload["embed_sample"]["cached"]
    assert [s["target"] for s in payload["sizes"]] == [20, 60]
    for size in payload["sizes"]:
        ingest = size["ingest"]
        assert ingest["chunks"] >= size["target"]
        assert set(ingest["seconds"]) == {"parse", "chunk", "embed", "index", "total"}
        assert set(ingest["share"]) == {"parse", "chunk", "embed", "index"}
        assert set(ingest["index_seconds"]) == {"chroma", "catalog", "bm25"}
        assert ingest["chunks_per_s"] > 0
        ms = size["query"]["ms"]
        for stage in ("channel:vector:embed", "channel:vector:search", "channel:keyword", "fusion", "total"):
            assert set(ms[stage]) == {"p50", "p95"}
        assert size["query"]["queries"] == 5 and size["query"]["reranker"] == "ragapp-minilm-zh-en"  # the default
        assert set(ms["rerank"]) == {"p50", "p95"}
        assert size["memory_mb"]["peak_rss"] > 0
        assert size["disk_mb"]["total"] > 0 and size["disk_mb"]["chroma"] > 0
    small, large = payload["sizes"]
    assert small["ingest"]["embed_measured"] and small["copied_documents"] == 0
    assert not large["ingest"]["embed_measured"] and large["copied_documents"] == 60 - 36
    compare = payload["llamaindex"]
    assert compare["llamaindex"]["nodes_indexed"] == compare["ragapp"]["chunks"] == 20
    assert compare["ratio"] > 0

    table = capsys.readouterr().out
    assert "query embedding" in table and "LlamaIndex" in table and "larger sizes reuse perturbed vectors" in table
    assert list(cache.glob("bench-embed-*.npy"))
