"""``python -m ragbench.eval.compare_modes`` end to end on tests/data/tiny-hotpot: real embedder, Chroma, bm25s and
engine; the scripted LLM (conftest's, behind a factory that enqueues this module's replies) stands in for the
model. Three multi-hop questions, each asked in workflow and agent mode: a clean two-search agent run, an agent
whose replies are not steps (so it falls back to the workflow), and an agent whose first search names a
knowledge base that does not exist (as the local model often does). Timings are checked for shape only.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ragapp.config import Settings
from ragapp.models.llm import LLMS
from ragbench.eval.compare_modes import main

if TYPE_CHECKING:
    from conftest import ScriptedLLM

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "data" / "tiny-hotpot"
BACKEND = "scripted-answers"

# Replies for the next LLM the factory builds; every LLM it built, to check nothing was left over.
SCRIPT: list[str] = []
BUILT: list[ScriptedLLM] = []


def _factory(settings: Settings) -> Any:
    llm = LLMS.get("scripted")(settings)  # conftest's ScriptedLLM
    llm.enqueue(*SCRIPT)  # type: ignore[attr-defined]
    SCRIPT.clear()
    BUILT.append(llm)  # type: ignore[arg-type]
    return llm


if BACKEND not in LLMS:
    LLMS.register(BACKEND)(_factory)


def step(query: str, **extra: str) -> str:
    return json.dumps({"thought": "x", "tool": "search_knowledge", "arguments": {"query": query, **extra}})


READY = '{"thought": "y", "answer": true}'
T1_AGENT = [
    step("Marrow Point Lighthouse last keeper"),
    step("Elena Brandt novel"),
    READY,
    "The Quiet Lamp [2].",
]
FULL_SCRIPT = [
    "OK",  # the one-token test call
    "The Quiet Lamp [2].",  # t1 workflow
    *T1_AGENT,  # t1 agent: two searches, then the answer
    "He was born in Castlebury [1].",  # t2 workflow
    "I will look it up.",  # t2 agent: not a step...
    "Still no JSON here.",  # ...twice, with nothing found: the agent gives up
    "Castlebury [1].",  # ...and the workflow answers instead
    "Kestrel Run [1].",  # t3 workflow (wrong)
    step("Kestrel Run formed", knowledge_base="general"),  # t3 agent: a knowledge base that does not exist
    step("The Salt Hares band formed"),
    READY,
    "The Salt Hares were formed first, in 1998 [1].",
]


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def run_main(*argv: str | Path, script: list[str], env: dict[str, str] | None = None) -> Run:
    """``main(argv)`` in this process with ``script`` as the model's replies, output captured, no RAGAPP_*
    leaking in, and the workflow's rewriting and routing calls off (only the answer call is scripted)."""
    SCRIPT[:] = script
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.upper().startswith("RAGAPP_"):
                mp.delenv(key)
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("ANONYMIZED_TELEMETRY", "False")
        mp.setenv("RAGAPP_LLM__BACKEND", BACKEND)
        mp.setenv("RAGAPP_WORKFLOW__REWRITE", "false")
        mp.setenv("RAGAPP_WORKFLOW__ROUTE", "false")
        mp.setenv("RAGAPP_ANSWER_CACHE__ENABLED", "false")  # as importing ragbench sets it: every run answers anew
        for key, value in (env or {}).items():
            mp.setenv(key, value)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
    SCRIPT.clear()
    return Run(code, out.getvalue(), err.getvalue())


def assert_all_replies_used() -> None:
    for llm in BUILT:
        assert llm.pending == 0, f"{llm.pending} scripted replies were not asked for"
        assert llm.unscripted_calls == 0


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("compare-cache")


@pytest.fixture(scope="module")
def first(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, dict[str, Any], Path]:
    output = tmp_path_factory.mktemp("compare-out") / "results" / "tiny.json"
    run = run_main(
        "--dataset", TINY, "--modes", "workflow,agent", "--cache", cache, "--output", output, script=FULL_SCRIPT
    )  # fmt: skip
    assert run.code == 0, run.err
    assert_all_replies_used()
    return run, json.loads(output.read_text("utf-8")), output


def _rows(payload: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["query_id"], r["mode"]): r for r in payload["rows"]}


def test_the_json_holds_rows_summary_model_and_settings(first: tuple[Run, dict[str, Any], Path]) -> None:
    _, payload, _ = first
    assert (payload["dataset"], payload["questions"], payload["answered"], payload["complete"]) == (
        "tiny-hotpot",
        3,
        3,
        True,
    )
    assert payload["stopped"] is None
    assert payload["model"] == payload["name"] == "scripted"
    assert payload["modes"] == ["workflow", "agent"]
    assert payload["index"]["documents"] == payload["index"]["chunks"] == 8  # one chunk per paragraph
    assert payload["index"]["how"] == "built"
    assert payload["settings"]["llm"]["backend"] == BACKEND  # the tested backend, not the counting wrapper
    assert "api_key" not in payload["settings"]["llm"]
    assert payload["settings"]["agent"]["max_steps"] == 6
    assert [(r["query_id"], r["mode"]) for r in payload["rows"]] == [
        (q, m) for q in ("t1", "t2", "t3") for m in ("workflow", "agent")
    ]
    assert set(payload["summary"]["modes"]) == {"workflow", "agent"}


def test_answers_are_scored_against_the_gold_answers(first: tuple[Run, dict[str, Any], Path]) -> None:
    rows = _rows(first[1])
    assert (rows["t1", "workflow"]["em"], rows["t1", "workflow"]["f1"]) == (1.0, 1.0)  # "[2]" is stripped
    assert rows["t2", "workflow"]["em"] == 0.0
    assert rows["t2", "workflow"]["f1"] == pytest.approx(1 / 3, abs=1e-4)  # "he was born in castlebury" (rounded)
    assert rows["t2", "workflow"]["contains"] == 1.0
    assert (rows["t3", "workflow"]["f1"], rows["t3", "workflow"]["contains"]) == (0.0, 0.0)
    assert rows["t3", "agent"]["f1"] == pytest.approx(4 / 9, abs=1e-4)  # 2 of 7 words, both gold words
    assert rows["t2", "agent"]["em"] == 1.0  # the workflow's answer after the fallback


def test_agent_steps_calls_queries_and_replies(first: tuple[Run, dict[str, Any], Path]) -> None:
    rows = _rows(first[1])
    t1 = rows["t1", "agent"]
    assert (t1["steps"], t1["failed_steps"], t1["model_calls"], t1["fallback"]) == (2, 0, 4, False)
    assert t1["queries"] == ["Marrow Point Lighthouse last keeper", "Elena Brandt novel"]
    assert t1["replies"] == T1_AGENT  # the raw replies, in order
    assert t1["prompt_tokens"] > t1["completion_tokens"] > 0
    assert t1["answered_by"] == "agent"

    t2 = rows["t2", "agent"]
    assert (t2["steps"], t2["failed_steps"], t2["model_calls"], t2["fallback"]) == (2, 2, 3, True)
    assert t2["answered_by"] == "workflow"
    assert any("workflow" in n for n in t2["notices"])

    t3 = rows["t3", "agent"]
    assert t3["tool_calls"][0]["arguments"]["knowledge_base"] == "general"  # the arguments as the model gave them
    assert (t3["steps"], t3["model_calls"]) == (2, 4)

    for qid in ("t1", "t2", "t3"):
        workflow = rows[qid, "workflow"]
        assert (workflow["model_calls"], workflow["steps"], workflow["fallback"]) == (1, 0, False)
        assert workflow["seconds"] >= 0


def test_supporting_paragraphs_are_mapped_back_to_beir_ids(first: tuple[Run, dict[str, Any], Path]) -> None:
    rows = _rows(first[1])
    t1 = rows["t1", "agent"]
    assert t1["supports"] == ["h01", "h02"]
    assert {"h01", "h02"} <= set(t1["found_docs"])  # one search each, names mapped back to ids
    assert t1["both_supports"] and t1["supports_found"] == 2
    assert set(t1["prompt_docs"]) <= set(t1["found_docs"])
    for row in first[1]["rows"]:
        assert set(row["prompt_docs"]) <= {f"h0{n}" for n in range(1, 9)}
        assert row["both_supports"] == (set(row["supports"]) <= {*row["prompt_docs"], *row["found_docs"]})
        assert 0 <= row["supports_in_prompt"] <= row["supports_found"] <= 2


def test_the_summary_and_the_table(first: tuple[Run, dict[str, Any], Path]) -> None:
    run, payload, output = first
    summary = payload["summary"]
    rows = payload["rows"]
    workflow, agent = summary["modes"]["workflow"], summary["modes"]["agent"]
    assert workflow["questions"] == agent["questions"] == 3
    assert workflow["model_calls"] == 1.0 and agent["model_calls"] == pytest.approx(11 / 3)
    assert agent["fallbacks"] == 1 and agent["steps"] == 2.0
    assert workflow["f1"] == pytest.approx(sum(r["f1"] for r in rows if r["mode"] == "workflow") / 3, abs=1e-3)
    assert summary["paired"][0]["questions"] == 3

    lines = run.out.splitlines()
    assert lines[0] == "tiny-hotpot · scripted · 3 questions"
    header = lines[2].split()
    assert header[:3] == ["mode", "n", "both"] and header[-1] == "fallbacks"
    table = {line.split()[0]: line.split() for line in lines[4:6]}
    assert list(table) == ["workflow", "agent"]
    assert table["agent"][-1] == "1" and table["workflow"][-1] == "-"
    assert table["workflow"][5] == f"{workflow['f1']:.3f}"
    assert "agent vs workflow on 3 questions" in run.out
    assert f"wrote {output}" in run.err
    assert "[  3/3] agent" in run.err  # a progress line per answer


def test_a_second_run_reuses_the_indexed_corpus(first: tuple[Run, dict[str, Any], Path], cache: Path) -> None:
    run = run_main("--dataset", TINY, "--modes", "workflow", "--limit", "1", "--cache", cache, script=["OK", "x"])
    assert run.code == 0, run.err
    assert "tiny-hotpot: 1 questions, 8 documents (8 chunks)" in run.err
    assert "(reused" in run.err
    assert len([p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")]) == 1
    assert_all_replies_used()


def test_a_time_budget_stops_after_the_question_in_progress(
    first: tuple[Run, dict[str, Any], Path], cache: Path, tmp_path: Path
) -> None:
    output = tmp_path / "budget.json"
    run = run_main(
        "--dataset", TINY, "--modes", "workflow", "--max-minutes", "0.00001", "--cache", cache, "--output", output,
        script=["OK", "The Quiet Lamp [2]."],
    )  # fmt: skip
    assert run.code == 0, run.err
    assert run.out.splitlines()[0] == (
        "tiny-hotpot · scripted · 1 questions (stopped after 1 of 3: the 1e-05-minute budget ran out)"
    )
    payload = json.loads(output.read_text("utf-8"))
    assert (payload["questions"], payload["answered"], payload["complete"]) == (3, 1, False)
    assert payload["stopped"] == "the 1e-05-minute budget ran out"
    assert [r["em"] for r in payload["rows"]] == [1.0]
    assert_all_replies_used()


def test_a_store_from_the_retrieval_eval_is_copied_not_embedded_again(
    first: tuple[Run, dict[str, Any], Path], cache: Path, tmp_path: Path
) -> None:
    from ragapp.store.catalog import Catalog

    eval_cache = tmp_path / "eval-cache"
    built = next(p for p in cache.iterdir() if p.name.startswith("engine-tiny-hotpot-"))
    shutil.copytree(built, eval_cache / "tiny-hotpot-0123456789ab")  # as `python -m ragbench.eval` names it
    Catalog(eval_cache / "tiny-hotpot-000000000000" / "catalog.sqlite3").start().close()  # another corpus (empty)
    fresh = tmp_path / "fresh-cache"
    run = run_main(
        "--dataset", TINY, "--modes", "workflow", "--limit", "1", "--cache", fresh, "--index-from", eval_cache,
        script=["OK", "x"],
    )  # fmt: skip
    assert run.code == 0, run.err
    assert f"(copied from {eval_cache / 'tiny-hotpot-0123456789ab'}" in run.err
    assert [p.name for p in fresh.iterdir()] == [built.name]  # staging folders cleaned up
    assert_all_replies_used()


def test_a_server_that_is_not_there_fails_fast_before_indexing(tmp_path: Path) -> None:
    run = run_main(
        "--dataset", TINY, "--cache", tmp_path / "cache", "--output", tmp_path / "o.json", script=[],
        env={"RAGAPP_LLM__BACKEND": "openai", "RAGAPP_LLM__BASE_URL": "http://127.0.0.1:9/v1"},
    )  # fmt: skip
    assert run.code == 2
    assert "error: the model (openai · qwen2.5:1.5b) failed a one-token test call, so nothing was measured" in run.err
    assert "Cannot reach the model server at http://127.0.0.1:9/v1" in run.err
    assert not (tmp_path / "cache").exists() and not (tmp_path / "o.json").exists()


def test_questions_without_gold_answers_are_refused(tmp_path: Path) -> None:
    run = run_main("--dataset", REPO / "tests" / "data" / "tiny-beir", "--cache", tmp_path / "cache", script=[])
    assert run.code == 2
    assert "error: 7 of 7 questions have no metadata.answers (e.g. q1): this command needs gold answers" in run.err
    assert not (tmp_path / "cache").exists()


def test_an_unknown_mode_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--dataset", str(TINY), "--modes", "workflow,react"])
    assert stop.value.code == 2
    assert "--modes: unknown react; choose from workflow, agent, auto" in capsys.readouterr().err
