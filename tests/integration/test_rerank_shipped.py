"""The shipped reranker (ragapp/rerank/weights): loads offline from the packaged base plus the shipped
differences, judges fixed English and Chinese pairs sensibly, leaves cross-language passages where fusion put
them, and is what a default engine uses. Its training command runs end to end on a tiny slice."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragapp.config import Settings
from ragapp.core.types import Chunk, RetrievedChunk
from ragapp.engine.build import load_builtins
from ragapp.rerank.base import RERANKERS, passage_text
from ragapp.rerank.builtin import CompactReranker
from ragapp.rerank.compact import SHIPPED_DIR, is_compact, load_compact

pytestmark = pytest.mark.integration

PAIRS = [  # (question, relevant passage, irrelevant passage)
    (
        "How long does the battery of the robot vacuum last?",
        "The battery lasts about 120 minutes on a full charge in standard suction mode.",
        "Our offices are closed on public holidays; orders placed then ship the next working day.",
    ),
    (
        "Who painted the Mona Lisa?",
        "The Mona Lisa is a half-length portrait painting by the Italian artist Leonardo da Vinci.",
        "The Great Wall of China is a series of fortifications built across northern China.",
    ),
    (
        "扫地机器人的电池能用多久？",
        "电池充满电后，在标准吸力模式下可连续工作约120分钟。",
        "我们的办公室在法定节假日休息，期间的订单将在下一个工作日发货。",
    ),
    (
        "长城位于哪个国家？",
        "长城是中国古代修建的军事防御工程，横跨中国北方多个省份。",
        "蒙娜丽莎是意大利艺术家达·芬奇创作的一幅肖像画。",
    ),
]


@pytest.fixture(scope="module")
def shipped() -> CompactReranker:
    reranker = CompactReranker(SHIPPED_DIR, max_length=160, batch_size=16)
    reranker.load()
    return reranker


def test_the_shipped_weights_are_compact_and_load_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert is_compact(SHIPPED_DIR)
    assert (SHIPPED_DIR / "weights.safetensors").stat().st_size < 20_000_000
    assert (SHIPPED_DIR / "MODEL_CARD.md").is_file()
    model, tokenizer, config = load_compact(SHIPPED_DIR)
    assert config.added > 3000 and model.config.num_hidden_layers == config.num_layers
    ids = tokenizer("扫地机器人", "电池")["input_ids"]
    assert tokenizer.unk_token_id not in ids  # Chinese characters are known, not [UNK]


@pytest.mark.parametrize(("question", "relevant", "irrelevant"), PAIRS)
def test_a_relevant_passage_scores_above_an_irrelevant_one(
    shipped: CompactReranker, question: str, relevant: str, irrelevant: str
) -> None:
    good, bad = shipped.score(question, [relevant, irrelevant])
    assert good > bad, (good, bad)
    assert 0.0 <= bad <= good <= 1.0  # probabilities, so min_rerank_score can threshold them


def _candidate(chunk_id: str, text: str, fused: float) -> RetrievedChunk:
    return RetrievedChunk(Chunk(chunk_id, "doc", 0, text, "doc.md"), fused, {"vector": 1}, {"vector": 0.9})


def test_passages_in_another_language_keep_their_fused_slot(shipped: CompactReranker) -> None:
    question, relevant, irrelevant = PAIRS[2]
    english = _candidate("en-0000", "The battery lasts about 120 minutes on a full charge.", 0.9)
    candidates = [
        _candidate("zh-bad-0000", irrelevant, 0.8),
        english,
        _candidate("zh-good-0000", relevant, 0.7),
    ]
    out = shipped.rerank(question, candidates)
    assert [c.chunk.chunk_id for c in out] == ["zh-good-0000", "en-0000", "zh-bad-0000"]
    assert out[1].rerank_score is None  # not judged: the gate uses its channel scores


def test_a_chunk_is_judged_under_its_heading(shipped: CompactReranker) -> None:
    question = "Which firmware version added pet mode?"
    item = "- New: pet mode. The robot cleans around pet bowls and litter boxes that you mark in the app."
    bare = RetrievedChunk(Chunk("c-0000", "doc", 0, item, "notes.md"), 1.0, {}, {})
    heading = "Release notes > Version 2.5.0"
    placed = RetrievedChunk(Chunk("c-0000", "doc", 0, item, "notes.md", heading=heading), 1.0, {}, {})
    assert passage_text(placed.chunk) == f"Release notes > Version 2.5.0\n{item}"
    (with_heading,) = shipped.rerank(question, [placed])
    (without,) = shipped.rerank(question, [bare])
    assert with_heading.rerank_score is not None and without.rerank_score is not None
    assert with_heading.rerank_score > max(without.rerank_score, Settings().retrieval.min_rerank_score)


def test_a_default_engine_reranks_with_the_shipped_model(make_engine: Callable[..., Any], tmp_path: Path) -> None:
    rig = make_engine(rerank={"backend": "builtin"})
    assert (rig.engine.status().reranker, rig.engine.status().reranking_enabled) == ("ragapp-minilm-zh-en", True)
    assert Settings().rerank.backend == "builtin"
    path = tmp_path / "manual.md"
    path.write_text(
        "# Manual\n\nThe battery lasts about 120 minutes on a full charge.\n\n"
        "## Shipping\n\nOrders placed on public holidays ship the next working day.\n",
        "utf-8",
    )
    rig.engine.library.ingest([(path, path.name)])
    result = rig.engine.chat.retrieve("How long does the battery last?")
    assert result.chunks and "120 minutes" in result.chunks[0].chunk.text
    assert all(c.rerank_score is not None for c in result.candidates)


def test_a_training_folder_plugs_in_as_a_cross_encoder_path(tmp_path: Path) -> None:
    settings = Settings(rerank={"backend": "cross_encoder", "model": str(SHIPPED_DIR)})
    load_builtins()
    reranker = RERANKERS.get("cross_encoder")(settings)
    assert isinstance(reranker, CompactReranker)


# Behind `slow` (make test-slow, which CI runs after make test): one of the longest tests of the default run,
# which must stay under 10 minutes on 2 cores; faster tests in the default run cover the same code paths.
@pytest.mark.slow
def test_the_training_command_runs_end_to_end_on_a_tiny_slice(tmp_path: Path) -> None:
    from ragbench.rerank.train import main

    rows = [
        {"query": q, "positive": good, "negatives": [bad], "lang": "zh" if "？" in q else "en", "source": "test"}
        for q, good, bad in PAIRS * 3
    ]
    data = tmp_path / "pairs.jsonl.gz"
    with gzip.open(data, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    out = tmp_path / "model"
    args = ["--data", str(data), "--out", str(out), "--queries", "8", "--holdout", "4", "--batch", "2"]
    assert main([*args, "--max-steps", "3", "--eval-every", "2", "--max-length", "48", "--threads", "1"]) == 0

    summary = json.loads((out / "training.json").read_text("utf-8"))
    assert summary["steps_run"] in {2, 3} and summary["added_characters"] > 10
    assert set(summary["formats"]) == {"fp32 (in memory)", "int8-delta", "fp16"}
    log = [json.loads(line) for line in (out / "training_log.jsonl").read_text("utf-8").splitlines()]
    assert [e["eval"]["step"] for e in log if "eval" in e] == [2, 3]
    trained = CompactReranker(out, max_length=48, batch_size=4)
    scores = trained.score(PAIRS[0][0], [PAIRS[0][1], PAIRS[0][2]])
    assert len(scores) == 2 and all(0.0 <= s <= 1.0 for s in scores)

    # a second stage continues from those weights, on questions the first did not see, with the same vocabulary
    later = tmp_path / "stage2"
    again = ["--data", str(data), "--out", str(later), "--init", str(out), "--skip", "4", "--queries", "4"]
    assert main([*again, "--holdout", "4", "--batch", "2", "--max-steps", "1", "--max-length", "48"]) == 0
    assert (later / "vocab_added.txt").read_text("utf-8") == (out / "vocab_added.txt").read_text("utf-8")
    stage2 = json.loads((later / "training.json").read_text("utf-8"))
    assert stage2["train_questions"] == 4 and stage2["init"]["steps_run"] == summary["steps_run"]
