"""``python -m ragbench.procedural`` on hand-built runs: memory learned on dev changes the choice for a kind of
question only where dev showed the other mode clearly better, and test is scored with it."""

from __future__ import annotations

import json
from pathlib import Path

from ragbench.procedural import main

# Single questions (the rule: workflow): on dev the agent answers all six right, the workflow two.
SINGLE = [f"How long does battery {i} last?" for i in range(10)]
COMPARE = "Which battery lasts longer, one or two?"  # the rule: agent


def write(path: Path, rows: list[tuple[str, bool]], answerable: bool = True) -> Path:
    body = {"rows": [{"id": qid, "correct": ok, "answerable": answerable, "abstained": False} for qid, ok in rows]}
    path.write_text(json.dumps(body), "utf-8")
    return path


def test_memory_learned_on_dev_is_scored_on_test(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    questions = [{"id": f"s{i}", "question": q, "split": "dev" if i < 6 else "test"} for i, q in enumerate(SINGLE)]
    questions.append({"id": "c0", "question": COMPARE, "split": "test"})
    answer_set = tmp_path / "set.yaml"
    answer_set.write_text(json.dumps({"questions": questions}), "utf-8")  # JSON is YAML
    workflow = write(tmp_path / "wf.json", [(f"s{i}", i < 2 or i == 6) for i in range(10)] + [("c0", True)])
    agent = write(tmp_path / "ag.json", [(f"s{i}", i != 6) for i in range(10)] + [("c0", False)])
    output = tmp_path / "out.json"

    code = main(["--set", str(answer_set), "--workflow", str(workflow), "--agent", str(agent), "--output", str(output)])

    assert code == 0
    report = json.loads(output.read_text("utf-8"))
    assert report["memory"]["single"]["modes"] == [
        {"name": "workflow", "kept": 2, "answers": 6},
        {"name": "agent", "kept": 6, "answers": 6},
    ]
    test = report["splits"]["test"]
    # s6: only the workflow right; s7-s9: only the agent; c0 (a comparison, no evidence, so the rule: the
    # agent): only the workflow. The rule gets s6 right, the learned choice (the agent for single questions) s7-s9.
    assert test["questions"] == 5 and test["decisive"] == 5 and test["changed"] == 4
    assert test["rule_right"] == 0.2 and test["learned_right"] == 0.6
    assert "learned" in capsys.readouterr().out
