"""Every answer set under data/eval/answers keeps the structural rules a blind set relies on (no documents needed):
it loads, its questions are well-formed, a split set is split in halves with kinds and reasons for its unanswerable
questions, no set reuses another's documents or touches the held-out manuals. Also ``ragbench.answers.check`` on
hand-built parsed text: a needle off its evidence, a missing page or heading, an absent term that is present."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragapp.core.errors import ConfigError
from ragapp.core.types import Section
from ragbench.answers.answer_set import load_set
from ragbench.answers.check import DocText, problems_of

SETS = sorted((Path(__file__).resolve().parents[2] / "data" / "eval" / "answers").glob("*.yaml"))
# Manuals kept out of every set: the held-out check of issue 29's work and issue 50's "new user" documents.
HELD_OUT = ("libtasn1-doc", "shared-mime-info", "zlib_how.html", "python-policy", "valgrind")


def rule_breaks(path: Path) -> list[str]:
    """What in the set at ``path`` breaks the rules (empty when nothing does)."""
    try:
        answer_set = load_set(path)
    except ConfigError as exc:
        return [f"does not load: {exc}"]
    raw = {q["id"]: q for q in yaml.safe_load(path.read_text("utf-8"))["questions"]}
    out = []
    for doc in answer_set.documents:
        if not doc.package or not doc.version:
            out.append(f"document {doc.id}: needs package and version (to install it)")
        if any(name in f"{doc.package} {doc.path}" for name in HELD_OUT):
            out.append(f"document {doc.id}: a held-out manual")
        pdf = doc.path.suffix.lower() == ".pdf"
        for q in answer_set.questions:
            for ev in q.evidence:
                if ev.doc == doc.id and (ev.page is None) == pdf:
                    out.append(f"{q.id}: evidence in {doc.id} by {'section' if pdf else 'page'}")
    splits = Counter(q.split for q in answer_set.questions)
    if "" in splits and len(splits) > 1:
        out.append("some questions have a split and some do not")
    for q in answer_set.questions:
        if "near-miss" in q.tags and not q.trap:
            out.append(f"{q.id}: a near-miss question names its trap")
        if q.trap and "near-miss" not in q.tags:
            out.append(f"{q.id}: a trap belongs to a near-miss question")
        if q.split and not q.answerable and not (q.kind and raw[q.id].get("why")):
            out.append(f"{q.id}: an unanswerable question of a split set says its kind and why")
    if "" not in splits and abs(splits["dev"] - splits["test"]) > 2:
        out.append(f"dev and test are not halves: {dict(splits)}")
    return out


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_every_answer_set_keeps_the_rules(path: Path) -> None:
    assert rule_breaks(path) == []


def test_no_two_sets_share_a_document() -> None:
    paths = [d.path for path in SETS for d in load_set(path).documents]
    assert len(paths) == len(set(paths)), [p for p, n in Counter(paths).items() if n > 1]


GOOD: dict[str, Any] = {
    "name": "tiny",
    "documents": [{"id": "m", "package": "m-doc", "version": "1", "path": "/usr/share/doc/m/m.pdf", "kb": "x"}],
    "questions": [
        {"id": "a", "type": "fact", "lang": "en", "question": "Q?", "must_contain": ["x"],
         "evidence": [{"doc": "m", "page": 1}], "tags": ["near-miss"], "trap": ["y"], "split": "dev"},
        {"id": "u", "type": "unanswerable", "kind": "not-given", "lang": "zh", "question": "Q？", "why": "not said",
         "absent": ["z"], "split": "test"},
    ],
}  # fmt: skip


def _break(change: dict[str, Any], question: int = 0) -> dict[str, Any]:
    data = yaml.safe_load(yaml.safe_dump(GOOD))
    data["questions"][question].update(change)
    return data


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (_break({"trap": []}), "names its trap"),
        (_break({"tags": []}), "belongs to a near-miss"),
        (_break({"evidence": [{"doc": "m", "section": "Intro"}]}), "by section"),
        (_break({"evidence": [{"doc": "other", "page": 1}]}), "does not load"),
        (_break({"why": ""}, 1), "kind and why"),
        (_break({"split": ""}, 1), "some questions have a split"),
        (_break({"absent": ["x"]}), "does not load"),
        (_break({"must_contain": ["y"]}), "does not load"),  # the trap is also the answer
    ],
)
def test_a_broken_set_breaks_the_rules(tmp_path: Path, data: dict[str, Any], said: str) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(GOOD, allow_unicode=True), "utf-8")
    assert rule_breaks(good) == []
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data, allow_unicode=True), "utf-8")
    assert any(said in line for line in rule_breaks(bad)), rule_breaks(bad)


def test_the_check_reads_must_contain_on_the_evidence_and_absent_terms_everywhere(tmp_path: Path) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump(GOOD, allow_unicode=True), "utf-8")
    answerable, unanswerable = load_set(path).questions
    texts = {"m": DocText((Section("the value\nx here", page=1), Section("y and z", page=2)))}
    assert problems_of(answerable, texts) == []  # "x" is on page 1
    assert problems_of(unanswerable, texts) == ["u: 'z' occurs in a document"]
    off_page = {"m": DocText((Section("nothing", page=1), Section("x", page=2)))}
    assert problems_of(answerable, off_page) == ["a: must_contain ['x'] not on its evidence"]
    no_page = {"m": DocText((Section("x", page=2),))}
    assert problems_of(answerable, no_page)[0] == "a: no page 1 in m"
    scan = {"m": DocText((Section("x", page=5),), first_page=5)}  # a scan's page 1 is the original's page 5
    assert problems_of(answerable, scan) == []
