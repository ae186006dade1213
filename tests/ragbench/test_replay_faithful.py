"""The replay of a finished answer run (``python -m ragbench.answers.replay``) reproduces the run: with the build
unchanged, every question gets the confidence (probability and signals) and the outcome the live run gave it.

The run is real (the app's pipeline over a tiny manual: real embedder, BM25, reranker and the shipped
calibrator); only the model is scripted, and its replies carry token log-probabilities as the local model's do.
The questions reach what the replay once got wrong: the log-probabilities the calibrator reads, the model's
check of its own answer (a call of its own, not the answer's), a question answered part by part, a Chinese
question whose passages came by a translated search (they keep the scores of the search that passed them on),
and a follow-up the run rewrote before answering."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from ragapp.config import Settings
from ragapp.core.types import ChatTurn, Chunk
from ragapp.models.llm import LLMS, ScoredPiece
from ragapp.qa.prompts import PART_EN
from ragapp.qa.rewrite import SYSTEM_EN as REWRITE_EN
from ragapp.qa.rewrite import SYSTEM_ZH as REWRITE_ZH
from ragapp.qa.translate import SYSTEM
from ragapp.qa.verify import VERIFY_SYSTEM
from ragapp.tracing.model import Trace
from ragapp.tracing.records import CandidateRecord, ChunkRef
from ragbench.answers.__main__ import main as run
from ragbench.answers.replay import _logprobs_of, prompt_passages
from ragbench.answers.replay import main as replay

BACKEND = "scripted-replayed-run"
MAX_PARTS = Settings().workflow.max_sub_questions

MANUAL = """# Marrow Point Lighthouse

## The lamp

The lamp of Marrow Point Lighthouse shines green and turns once every twelve seconds.

## Keepers

The last keeper of Marrow Point Lighthouse was Elena Brandt, who kept the light until 1987.

## Visiting

The tower is open to visitors on Saturdays from May to September; tickets cost four euros.
"""

SET = """name: tiny-replay
documents:
  - {id: manual, package: tiny-doc, path: manual.md, kb: manuals}
questions:
  - {id: lamp, type: fact, lang: en, question: "What colour does the Marrow Point lighthouse lamp shine?",
     must_contain: [green], evidence: [{doc: manual, section: "The lamp"}]}
  - {id: both, type: multi-hop, lang: en,
     question: "How often does the Marrow Point lamp turn, and who was the last keeper of the lighthouse?",
     must_contain: [twelve, Brandt], evidence: [{doc: manual, section: "The lamp"}, {doc: manual, section: Keepers}]}
  - {id: zh-lamp, type: fact, lang: zh, question: "马罗角灯塔的灯是什么颜色？",
     must_contain: [[green, 绿]], evidence: [{doc: manual, section: "The lamp"}]}
  - {id: tickets, type: multi-turn, lang: en, question: "How much does it cost?",
     turns: [{user: "When can I visit Marrow Point Lighthouse?", assistant: "On Saturdays from May to September."}],
     must_contain: [four], evidence: [{doc: manual, section: Visiting}]}
"""


def _scored(text: str, *logprobs: float) -> list[str]:
    """``text`` streamed word by word, each word a scored piece with its own log-probability (as the local
    model streams with scores), the last ones at the given values."""
    words = text.split(" ")
    pieces = [w if i == 0 else f" {w}" for i, w in enumerate(words)]
    values = [-0.05] * (len(pieces) - len(logprobs)) + list(logprobs)
    return [ScoredPiece(p, ((p, lp), ("x", lp - 1.0))) for p, lp in zip(pieces, values, strict=True)]


def _reply(messages: list[ChatTurn]) -> Any:
    """The scripted model: a reply by what the call asks."""
    system, last = messages[0].content, messages[-1].content.rsplit("\n", 1)[-1]  # the question's line
    if system == VERIFY_SYSTEM:  # the model's check of its answer: yes, more or less sure by the answer
        sure = 0.9 if "green" in messages[-1].content else 0.4
        return [ScoredPiece("yes", (("yes", math.log(sure)), ("no", math.log(1 - sure))))]
    if system in SYSTEM.values():
        return "What colour is the lamp of Marrow Point Lighthouse?"
    if system in (REWRITE_EN.format(n=MAX_PARTS), REWRITE_ZH.format(n=MAX_PARTS)):
        return json.dumps({"question": "How much does a ticket to Marrow Point Lighthouse cost?"})
    if PART_EN in last:
        part = last.rsplit(PART_EN, 1)[-1]
        return _scored("Elena Brandt [1].", -1.9) if "keeper" in part else _scored("Every twelve seconds [1].", -0.2)
    if "马罗角" in last:
        return _scored("绿色 [1]。", -0.7)
    if "cost" in last:
        return _scored("Four euros [1].", -2.5)
    if "colour" in last:
        return _scored("The lamp shines green [1].", -0.3)
    return "OK"


def _factory(settings: Settings) -> Any:
    llm = LLMS.get("scripted")(settings)  # conftest's ScriptedLLM
    return llm.reply_with(_reply)  # type: ignore[attr-defined]


if BACKEND not in LLMS:
    LLMS.register(BACKEND)(_factory)


def _quiet(command: Any, argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.upper().startswith("RAGAPP_"):
                mp.delenv(key)
        mp.setenv("RAGAPP_LLM__BACKEND", BACKEND)
        mp.setenv("RAGAPP_WORKFLOW__ROUTE", "false")
        mp.setenv("RAGAPP_WORKFLOW__VERIFY", "true")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = command(argv)
    return code, out.getvalue()


@pytest.mark.integration
@pytest.mark.slow
def test_a_replay_of_an_unchanged_build_gives_every_answer_its_live_confidence(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(MANUAL, "utf-8")
    (tmp_path / "tiny.yaml").write_text(SET, "utf-8")
    cache, live_file, replayed_file = tmp_path / "cache", tmp_path / "live.json", tmp_path / "replayed.json"
    code, text = _quiet(run, ["--set", str(tmp_path / "tiny.yaml"), "--mode", "workflow", "--cache", str(cache),
                              "--output", str(live_file)])  # fmt: skip
    assert code == 0, text
    live = {r["id"]: r for r in json.loads(live_file.read_text("utf-8"))["rows"]}
    assert all(r["signals"]["logprob_missing"] == 0.0 for r in live.values()), text
    assert live["both"]["signals"]["part"] == 1.0  # answered part by part
    assert live["both"]["signals"]["verified_missing"] == 1.0  # parts are not checked again
    assert live["lamp"]["signals"]["verified"] == 0.9 and live["tickets"]["signals"]["verified"] == 0.4
    assert "translate" in text or live["zh-lamp"]["signals"]["cross_language"] == 1.0

    code, text = _quiet(replay, ["--set", str(tmp_path / "tiny.yaml"), "--cache", str(cache),
                                 "--output", str(replayed_file)])  # fmt: skip
    assert code == 0, text
    assert "4 of 4 questions have a trace" in text and "no outcome changed" in text
    replayed = {r["id"]: r for r in json.loads(replayed_file.read_text("utf-8"))["rows"]}
    for qid, row in live.items():
        again = replayed[qid]
        assert (again["probability"], again["confidence"], again["not_sure"]) == (
            row["probability"], row["confidence"], row["not_sure"],
        ), qid  # fmt: skip
        assert again["signals"] == row["signals"], qid
        assert (again["answer"], again["correct"], again["abstained"]) == (
            row["answer"],
            row["correct"],
            row["abstained"],
        )


def _candidate(chunk_id: str, rerank: float | None, in_prompt: bool = True) -> dict[str, Any]:
    return CandidateRecord(chunk_id, "d", "a.md", "", "", 1, 0.5, {"vector": 1}, {"vector": 0.8}, {}, rerank, 1,
                           in_prompt).to_dict()  # fmt: skip


def test_an_older_trace_gives_a_passage_the_scores_of_the_first_search_that_passed_it_on() -> None:
    """A trace written before the prompt's passages kept their scores: a Chinese question's passage found by
    its own search (the reranker judged nothing across languages) and by its translation keeps the first's, as
    the pipeline merges them; one only the translation found, the translation's."""
    own = {"query": "灯是什么颜色？", "candidates": [_candidate("d-1", None), _candidate("d-2", 0.9, False)]}
    translated = {"query": "What colour is the lamp?", "candidates": [_candidate("d-1", 0.97), _candidate("d-2", 0.9)]}
    trace = Trace.from_dict({"retrievals": [own, translated]})
    trace.context = [ChunkRef("d-1", "d", "a.md", "", ""), ChunkRef("d-2", "d", "a.md", "", "")]
    chunks = {c: Chunk(c, "d", 0, "The lamp shines green.", "a.md") for c in ("d-1", "d-2")}
    assert [p.rerank_score for p in prompt_passages(trace, chunks)] == [None, 0.9]


def test_an_older_run_s_row_stands_in_for_its_log_probabilities() -> None:
    """What the calibrator reads of the log-probabilities is their mean and minimum: a row's give both back."""
    found = _logprobs_of({"logprob_mean": -0.4, "logprob_min": -1.5, "logprob_missing": 0.0})
    assert found is not None and min(found) == -1.5 and sum(found) / len(found) == pytest.approx(-0.4)
    assert _logprobs_of({"logprob_mean": 0.0, "logprob_min": 0.0, "logprob_missing": 1.0}) is None
    assert _logprobs_of({}) is None
