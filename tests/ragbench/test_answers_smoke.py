"""``python -m ragbench.answers`` end to end on a tiny Markdown manual the test writes: real embedder, Chroma,
bm25s and engine; the scripted LLM (conftest's, behind a factory that enqueues this module's replies) stands in
for the model. Also: the shipped Debian-manuals set loads and validates, and the scoring rules on their own."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ragapp.config import Settings
from ragapp.core.errors import ConfigError, IngestError
from ragapp.core.types import Chunk
from ragapp.ingest.parsing import parse_file
from ragapp.models.llm import LLMS
from ragapp.qa.prompts import NOT_FOUND_EN
from ragbench.answers.__main__ import by_split, main
from ragbench.answers.answer_set import KINDS, Evidence, load_set, pdfs_as
from ragbench.answers.replay import main as replay
from ragbench.answers.scoring import Row, abstained, contains_all, on_evidence
from ragbench.answers.state import scanned_copy

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data" / "eval" / "answers" / "debian-manuals.yaml"
BLIND = REPO / "data" / "eval" / "answers" / "debian-blind.yaml"
BACKEND = "scripted-answer-set"
CHECKS = REPO / "tests" / "fixtures" / "calibrator-checks.json"  # the tests' calibrator: levels by the checks
SCRIPT: list[str] = []


def _factory(settings: Settings) -> Any:
    llm = LLMS.get("scripted")(settings)  # conftest's ScriptedLLM
    llm.enqueue(*SCRIPT)  # type: ignore[attr-defined]
    SCRIPT.clear()
    return llm


if BACKEND not in LLMS:
    LLMS.register(BACKEND)(_factory)

MANUAL = """# Marrow Point Lighthouse

## The lamp

The lamp of Marrow Point Lighthouse shines green and turns once every twelve seconds.

## Keepers

The last keeper of Marrow Point Lighthouse was Elena Brandt, who kept the light until 1987.
"""

SET = """
name: tiny
documents:
  - {id: manual, package: tiny-doc, path: manual.md, kb: manuals}
questions:
  - {id: lamp, type: fact, lang: en, question: "What colour does the Marrow Point lighthouse lamp shine?",
     must_contain: [green], evidence: [{doc: manual, section: "The lamp"}]}
  - {id: keeper, type: multi-turn, lang: en, question: "Who was its last keeper?",
     turns: [{user: "Tell me about Marrow Point Lighthouse.", assistant: "It is a lighthouse with a green lamp."}],
     must_contain: [[Elena Brandt, Brandt]], evidence: [{doc: manual, section: "Keepers"}]}
  - {id: moon, type: unanswerable, lang: en, question: "How much does a return ticket to the Moon cost in euros?"}
"""

REPLIES = [
    "OK",  # the one-token test call
    "The lamp shines green [1].",
    "The last keeper was Tom Hale [1].",  # wrong on purpose
    "The passages do not mention ticket prices.",  # used only if the gate lets passages through
]


def run_main(*argv: str | Path) -> tuple[int, str]:
    SCRIPT[:] = REPLIES
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.upper().startswith("RAGAPP_"):
                mp.delenv(key)
        mp.setenv("RAGAPP_LLM__BACKEND", BACKEND)
        mp.setenv("RAGAPP_WORKFLOW__REWRITE", "false")
        mp.setenv("RAGAPP_WORKFLOW__ROUTE", "false")
        mp.setenv("RAGAPP_RERANK__BACKEND", "none")
        mp.setenv("RAGAPP_WORKFLOW__CALIBRATOR", str(CHECKS))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in argv])
    SCRIPT.clear()
    return code, out.getvalue() + err.getvalue()


@pytest.mark.integration
def test_the_command_scores_a_tiny_set_end_to_end(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(MANUAL, "utf-8")
    (tmp_path / "tiny.yaml").write_text(SET, "utf-8")
    output = tmp_path / "results" / "tiny.json"
    code, text = run_main("--set", tmp_path / "tiny.yaml", "--mode", "workflow", "--cache", tmp_path / "cache",
                          "--output", output)  # fmt: skip
    assert code == 0, text
    assert "overall" in text and "fact" in text and "unanswerable" in text
    result = json.loads(output.read_text("utf-8"))
    rows = {r["id"]: r for r in result["rows"]}
    assert result["complete"] and result["model"] == "scripted" and result["state"]["how"] == "built"
    lamp, keeper, moon = rows["lamp"], rows["keeper"], rows["moon"]
    assert lamp["correct"] and not lamp["abstained"]
    assert lamp["citation_on_evidence"] and lamp["evidence_in_prompt"]
    assert lamp["ttft_s"] is not None and lamp["seconds"] >= lamp["ttft_s"]
    assert lamp["evidence_s"] is not None and lamp["evidence_s"] <= lamp["ttft_s"]  # the quote comes first
    assert "green" in lamp["quote"] and lamp["quote_correct"]  # the quoted sentence holds the answer
    assert not keeper["correct"] and not keeper["abstained"]
    assert moon["abstained"] and not moon["correct"] and not moon["citation_on_evidence"]
    overall = result["summary"]["overall"]
    assert overall["questions"] == 3 and overall["correct"] == 0.5 and overall["unanswerable_abstained"] == 1.0
    assert result["summary"]["by_type"]["fact"]["citation_on_evidence"] == 1.0
    # Truthfulness as CRAG scores it: lamp right, the Moon refused (accurate), the keeper wrong (hallucinated).
    assert (overall["accurate"], overall["missing"], overall["hallucinated"]) == (2, 0, 1)
    assert overall["truthfulness"] == pytest.approx(1 / 3)
    assert result["summary"]["by_lang"]["en"]["truthfulness"] == pytest.approx(1 / 3)
    truth = [line.split() for line in text.splitlines() if line.startswith("overall")][1]
    assert truth == ["overall", "3", "2", "67%", "0", "0%", "1", "33%", "+0.33"]

    # The replay reads the run's traces back and, with the check unchanged, reproduces its figures.
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out), pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGAPP_WORKFLOW__CALIBRATOR", str(CHECKS))
        assert replay(["--set", str(tmp_path / "tiny.yaml"), "--cache", str(tmp_path / "cache")]) == 0
    replayed = out.getvalue()
    assert "3 of 3 questions have a trace" in replayed and "no outcome changed" in replayed
    # as stored, checked again, the truthfulness checked again, and the two side by side
    overall = [line for line in replayed.splitlines() if line.startswith("overall")]
    assert len(overall) == 4 and overall[0] == overall[1] and " 50%" in overall[0]
    assert overall[2].split()[-1] == "+0.33" and "+0.33→+0.33 (+0.00)" in overall[3]
    assert "better (0):" in replayed and "worse (0):" in replayed

    # A second run reuses the state (the documents' content did not change), compared with the first.
    first = tmp_path / "first.json"
    first.write_text(output.read_text("utf-8"), "utf-8")
    code, text = run_main("--set", tmp_path / "tiny.yaml", "--cache", tmp_path / "cache", "--limit", "1",
                          "--output", output, "--compare", first)  # fmt: skip
    assert code == 0, text
    again = json.loads(output.read_text("utf-8"))
    assert again["state"]["how"] == "reused"
    assert again["compared_with"]["before"]["truthfulness"] == pytest.approx(1 / 3)
    assert again["compared_with"]["better"] == again["compared_with"]["worse"] == []
    assert "first.json → this run" in text and "only in first.json: 2 questions" in text


@pytest.mark.integration
def test_resume_keeps_the_rows_done_and_asks_only_the_rest(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(MANUAL, "utf-8")
    (tmp_path / "tiny.yaml").write_text(SET, "utf-8")
    output = tmp_path / "tiny.json"
    base = ("--set", tmp_path / "tiny.yaml", "--mode", "workflow", "--cache", tmp_path / "cache", "--output", output)
    assert run_main(*base)[0] == 0
    interrupted = json.loads(output.read_text("utf-8"))
    interrupted["rows"] = [r for r in interrupted["rows"] if r["id"] == "moon"]  # as if stopped after one
    interrupted["rows"][0]["answer"] = "kept from before"
    output.write_text(json.dumps(interrupted), "utf-8")

    code, text = run_main(*base, "--resume")
    assert code == 0, text
    assert "1 rows kept, 2 to ask" in text
    result = json.loads(output.read_text("utf-8"))
    rows = {r["id"]: r for r in result["rows"]}
    assert [r["id"] for r in result["rows"]] == ["lamp", "keeper", "moon"]  # the set's order
    assert rows["moon"]["answer"] == "kept from before" and rows["lamp"]["correct"]
    assert result["complete"] and result["resumed"] == 1

    # Rows from a run with other settings are never mixed in: the run stops, and the file is left as it was.
    interrupted["settings"]["workflow"]["support_overlap"] = 0.9
    output.write_text(json.dumps(interrupted), "utf-8")
    code, text = run_main(*base, "--resume")
    assert code == 2 and "another 'settings'" in text and "[1/3]" not in text
    assert json.loads(output.read_text("utf-8")) == interrupted


def test_a_bad_file_to_compare_with_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    (tmp_path / "tiny.yaml").write_text(SET, "utf-8")
    (tmp_path / "manual.md").write_text(MANUAL, "utf-8")
    code, text = run_main("--set", tmp_path / "tiny.yaml", "--compare", tmp_path / "nothing.json")
    assert code == 2 and "nothing.json: not a result file" in text
    assert "questions over" not in text  # nothing was asked


def test_a_missing_document_names_the_package_to_install(tmp_path: Path) -> None:
    (tmp_path / "tiny.yaml").write_text(SET, "utf-8")
    code, text = run_main("--set", tmp_path / "tiny.yaml")
    assert code == 2 and "apt-get install -y tiny-doc" in text
    code, text = run_main("--set", tmp_path / "tiny.yaml", "--missing-packages")
    assert code == 0 and text.strip() == "tiny-doc"


def test_the_shipped_set_loads_and_validates() -> None:
    answer_set = load_set(SHIPPED)
    questions = answer_set.questions
    assert len(questions) >= 80
    assert sum(not q.answerable for q in questions) >= 15
    assert sum(q.lang == "zh" for q in questions) >= 10
    assert {q.type for q in questions} == {
        "fact", "identifier", "paraphrase", "multi-hop", "comparison", "multi-turn", "unanswerable"
    }  # fmt: skip
    declared = {d.id for d in answer_set.documents}
    for q in questions:
        if q.answerable:
            assert q.evidence and q.must_contain, q.id
            assert {e.doc for e in q.evidence} <= declared, q.id
    assert all(q.turns for q in questions if q.type == "multi-turn")
    # Not the held-out manuals.
    assert not {d.package for d in answer_set.documents} & {"libtasn1-doc", "shared-mime-info"}


def test_the_blind_set_is_split_once_and_meets_its_quotas() -> None:
    answer_set = load_set(BLIND)
    questions = answer_set.questions
    assert len(questions) >= 200 and all(q.split in ("dev", "test") for q in questions)
    dev = [q for q in questions if q.split == "dev"]
    assert abs(2 * len(dev) - len(questions)) <= 2  # half and half
    unanswerable = [q for q in questions if not q.answerable]
    assert len(unanswerable) >= 60 and {q.kind for q in unanswerable} == set(KINDS)
    assert sum(q.type == "multi-hop" for q in questions) >= 20 and sum(q.type == "comparison" for q in questions) >= 15
    assert sum(q.lang == "zh" for q in questions) >= 0.3 * len(questions)
    answerable = [q for q in questions if q.answerable]
    assert sum("paraphrased" in q.tags for q in answerable) >= len(answerable) / 2
    assert all(q.trap for q in questions if "near-miss" in q.tags)
    assert any(d.scan for d in answer_set.documents)
    held_out = {"libtasn1-doc", "shared-mime-info", "zlib1g-dev", "python3"}
    assert not {d.package for d in answer_set.documents} & held_out
    assert not {d.package for d in answer_set.documents} & {d.package for d in load_set(SHIPPED).documents}


def test_a_set_naming_an_undeclared_document_is_refused(tmp_path: Path) -> None:
    bad = SET.replace('{doc: manual, section: "Keepers"}', '{doc: other, section: "Keepers"}')
    (tmp_path / "bad.yaml").write_text(bad, "utf-8")
    with pytest.raises(ConfigError, match="other"):
        load_set(tmp_path / "bad.yaml")


def test_abstention_comes_from_the_engine_signal_or_an_uncited_refusal() -> None:
    assert abstained("anything", grounded=False)
    assert abstained(NOT_FOUND_EN, grounded=True)
    assert abstained("The passages do not mention the price.", grounded=True)
    assert abstained("资料中没有提到票价。", grounded=True)
    assert not abstained("The package does not include sequence libraries [1].", grounded=True, cited=True)
    assert not abstained("The lamp shines green [1].", grounded=True, cited=True)


def test_must_contain_is_case_insensitive_with_any_of_entries() -> None:
    assert contains_all("Use BLOSUM50 [1] or -s BP62 [2].", (("blosum50",), ("bp62", "bl62")))
    assert not contains_all("Use BLOSUM50.", (("blosum50",), ("bp62",)))
    assert not contains_all("anything", ())


def test_evidence_matches_a_page_or_a_heading_path() -> None:
    page = Chunk("c1", "d1", 0, "text", "m.pdf", page=3)
    html = Chunk("c2", "d2", 0, "text", "ch.html", heading="Chapter 3 > 3.2.1. The hostname")
    assert on_evidence(page, "pdf", [Evidence("pdf", page=3)])
    assert not on_evidence(page, "pdf", [Evidence("pdf", page=4)])
    assert not on_evidence(page, "other", [Evidence("pdf", page=3)])
    assert on_evidence(html, "html", [Evidence("html", section="3.2.1.  The hostname")])
    assert not on_evidence(html, "html", [Evidence("html", section="3.2. Systemd init")])


SPLIT_SET = """
name: split
documents:
  - {id: manual, package: tiny-doc, path: manual.md, kb: manuals}
  - {id: table-scan, package: tiny-doc, path: table.pdf, kb: manuals, scan: {pages: "2-3", dpi: 100}}
questions:
  - {id: lamp, type: fact, lang: en, question: "Which colour is the light?", must_contain: [green],
     evidence: [{doc: manual, section: "The lamp"}], tags: [paraphrased, near-miss], trap: [twelve], split: dev}
  - {id: ticket, type: unanswerable, kind: not-given, lang: en, question: "What does a visit cost?", split: test}
"""


def test_a_split_set_carries_tags_traps_kinds_and_scans(tmp_path: Path) -> None:
    (tmp_path / "split.yaml").write_text(SPLIT_SET, "utf-8")
    answer_set = load_set(tmp_path / "split.yaml")
    lamp, ticket = answer_set.questions
    assert lamp.tags == ("paraphrased", "near-miss") and lamp.trap == ("twelve",) and lamp.split == "dev"
    assert ticket.kind == "not-given" and ticket.split == "test" and not ticket.answerable
    scan = answer_set.document("table-scan")
    assert scan.scan is not None and (scan.scan.first, scan.scan.last, scan.scan.dpi) == (2, 3, 100)
    assert scan.name == "table-scan-p2-3.pdf"  # the scan is ingested under a name of its own

    for broken, match in [
        (SPLIT_SET.replace("trap: [twelve]", "trap: [Green]"), "trap"),  # the trap is the gold answer
        (SPLIT_SET.replace("kind: not-given", "kind: unknowable"), "kind"),
        (SPLIT_SET.replace("split: dev", "split: train"), "split"),
        (SPLIT_SET.replace("tags: [paraphrased, near-miss]", "tags: [easy]"), "tags"),
        (SPLIT_SET.replace('pages: "2-3"', 'pages: "3-2"'), "scan"),
    ]:
        (tmp_path / "broken.yaml").write_text(broken, "utf-8")
        with pytest.raises(ConfigError, match=match):
            load_set(tmp_path / "broken.yaml")


@pytest.mark.integration
def test_a_scanned_document_is_rendered_to_an_image_only_pdf(tmp_path: Path, make_documents: Any) -> None:
    pypdf = pytest.importorskip("pypdf")
    source = make_documents.scanned_pdf(tmp_path / "table.pdf", [["page one"], ["page two"], ["page three"]])
    (tmp_path / "split.yaml").write_text(SPLIT_SET, "utf-8")
    doc = load_set(tmp_path / "split.yaml").document("table-scan")
    doc = dataclasses.replace(doc, path=source)
    out = scanned_copy(doc, tmp_path / "scans")
    assert out.name == "table-scan-p2-3.pdf"
    reader = pypdf.PdfReader(str(out))
    assert len(reader.pages) == 2 and all(not page.extract_text().strip() for page in reader.pages)
    text = parse_file(out).sections
    assert "page two" in text[0].text.lower() and "page three" in text[-1].text.lower()  # read back by OCR

    too_far = dataclasses.replace(doc, scan=dataclasses.replace(doc.scan, last=9), path=source)
    with pytest.raises(IngestError, match="has 3 pages"):
        scanned_copy(too_far, tmp_path / "other")


@pytest.mark.integration
def test_the_pdfs_of_a_set_are_asked_as_scans_or_as_text(tmp_path: Path, make_documents: Any) -> None:
    pypdf = pytest.importorskip("pypdf")
    make_documents.text_pdf(tmp_path / "table.pdf", ["page one"])
    pages = pypdf.PdfWriter()
    for _ in range(3):
        pages.add_page(pypdf.PdfReader(str(tmp_path / "table.pdf")).pages[0])
    pages.write(str(tmp_path / "table.pdf"))
    set_file = tmp_path / "split.yaml"
    set_file.write_text(
        SPLIT_SET + '  - {id: cell, type: fact, lang: en, question: "Which page?", must_contain: [one], '
        "evidence: [{doc: table-scan, page: 1}], split: test}\n",
        "utf-8",
    )
    answer_set = load_set(set_file)
    scanned, text = pdfs_as(answer_set, "scan"), pdfs_as(answer_set, "text")
    # only the PDF, and only the answerable questions over it: the unanswerable ones need every document
    assert [d.id for d in scanned.documents] == ["table-scan"] and [q.id for q in scanned.questions] == ["cell"]
    assert scanned.documents[0].name == "table-scan-p2-3.pdf" and text.documents[0].name == "table-p2-3.pdf"
    copy = scanned_copy(text.documents[0], tmp_path / "copies")
    reader = pypdf.PdfReader(str(copy))
    assert len(reader.pages) == 2 and "page one" in reader.pages[0].extract_text()  # the text layer kept
    scan = scanned_copy(scanned.documents[0], tmp_path / "copies")
    assert not pypdf.PdfReader(str(scan)).pages[0].extract_text().strip()


def test_a_run_over_both_splits_reports_each() -> None:
    def row(qid: str, correct: bool, split: str) -> Row:
        return Row(qid, "fact", "en", "?", True, "", True, False, correct, False, False, False, (), (), None, 1.0,
                   split=split)  # fmt: skip

    rows = [row("a", True, "dev"), row("b", False, "test"), row("c", True, "test")]
    splits = by_split(rows)
    assert splits["dev"]["overall"]["correct"] == 1.0 and splits["test"]["overall"]["correct"] == 0.5
    assert by_split([row("a", True, "dev"), row("b", True, "dev")]) == {}  # one split: the overall figures say it
