"""``python -m ragbench.answers.check``: an answer set checked against the text ragapp's parser extracts from its
documents, before any question is asked (no engine, no model).

    python -m ragbench.answers.check --set data/eval/answers/debian-fresh.yaml

For each answerable question: every evidence page exists (a PDF page as the parser numbers pages; for a scanned
document, the page of the original it was rendered from) or every evidence section is a heading the parser gives
(or ends one), and every ``must_contain`` entry (one of its alternatives) occurs in the text of the evidence pages
or sections, case-insensitive, line breaks read as spaces. For each unanswerable question: none of its ``absent``
terms occurs in any document. Prints each problem and the counts; exits 1 when there is a problem.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ragapp.core.types import Section
from ragapp.ingest.parsing import parse_file
from ragbench.answers.answer_set import AnswerSet, Document, Evidence, Question, load_set, missing_documents


def _flat(text: str) -> str:
    return " ".join(text.split()).casefold()


def _heading_key(heading: str | None) -> str:
    return "".join((heading or "").split()).casefold()  # as ragbench.answers.scoring matches headings


@dataclass(frozen=True)
class DocText:
    """One document's parsed sections, looked up by page or by heading."""

    sections: tuple[Section, ...]
    first_page: int = 1  # a scan's page 1 is this page of the original

    def pages(self) -> set[int]:
        return {s.page - self.first_page + 1 for s in self.sections if s.page is not None}

    def text_of(self, ev: Evidence) -> str | None:
        """The text under ``ev`` (None when that page or heading does not exist)."""
        if ev.page is not None:
            found = [s.text for s in self.sections if s.page == ev.page + self.first_page - 1]
        else:
            key = _heading_key(ev.section)
            found = [s.text for s in self.sections if _heading_key(s.heading).endswith(key)]
        return "\n".join(found) if found else None

    def all_text(self) -> str:
        return "\n".join(s.text for s in self.sections)


def read_documents(answer_set: AnswerSet) -> dict[str, DocText]:
    """Each document's sections as ragapp's parser gives them (a scan's born-digital original)."""

    def one(doc: Document) -> DocText:
        parsed = parse_file(doc.path)
        return DocText(parsed.sections, doc.scan.first if doc.scan else 1)

    return {doc.id: one(doc) for doc in answer_set.documents}


def problems_of(question: Question, texts: dict[str, DocText]) -> list[str]:
    """What is wrong with ``question`` against the documents' text (empty when nothing is)."""
    out = []
    if not question.answerable:
        everything = _flat("\n".join(t.all_text() for t in texts.values()))
        out += [f"{question.id}: '{t}' occurs in a document" for t in question.absent if _flat(t) in everything]
        return out
    evidence_text = []
    for ev in question.evidence:
        text = texts[ev.doc].text_of(ev)
        if text is None:
            where = f"page {ev.page}" if ev.page is not None else f"section {ev.section!r}"
            out.append(f"{question.id}: no {where} in {ev.doc}")
        else:
            evidence_text.append(text)
    flat = _flat("\n".join(evidence_text))
    for needle in question.must_contain:
        if not any(_flat(alt) in flat for alt in needle):
            out.append(f"{question.id}: must_contain {list(needle)} not on its evidence")
    return out


def check(answer_set: AnswerSet, texts: dict[str, DocText]) -> list[str]:
    return [p for q in answer_set.questions for p in problems_of(q, texts)]


def _summary(questions: Iterable[Question]) -> str:
    qs = list(questions)
    unanswerable = [q for q in qs if not q.answerable]
    with_terms = sum(bool(q.absent) for q in unanswerable)
    return (
        f"{len(qs)} questions: {len(qs) - len(unanswerable)} answerable checked on their evidence, "
        f"{len(unanswerable)} unanswerable ({with_terms} with absent terms checked)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragbench.answers.check", description=__doc__.split("\n")[0])
    parser.add_argument("--set", dest="set_file", type=Path, required=True)
    args = parser.parse_args(argv)
    answer_set = load_set(args.set_file)
    if missing := missing_documents(answer_set):
        print(f"missing documents: {', '.join(str(d.path) for d in missing)}", file=sys.stderr)
        return 1
    found = check(answer_set, read_documents(answer_set))
    for line in found:
        print(line)
    print(_summary(answer_set.questions) + f"; {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
