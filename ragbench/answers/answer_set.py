"""A real-document answer set (YAML): the documents by Debian package and path, and the questions with their gold
answers (must-contain strings) and evidence (a PDF page as ragapp's parser numbers pages, or an HTML section
heading). ``load_set`` reads and validates one; ``missing_documents`` says which packages to install.

A document with ``scan: {pages: "5-14", dpi: 150}`` is asked as a scanned copy of those pages (an image-only PDF
rendered by ``ragbench.answers.state``; evidence pages count from 1 within the scan). A question may carry
``tags`` (``paraphrased``: few words shared with the evidence; ``near-miss``: a neighbouring fact would be wrong,
named in ``trap``), an unanswerable one its ``kind``, ``why`` and ``absent`` (terms that would answer it, which
``ragbench.answers.check`` confirms no document contains), and every question of a split set its ``split`` (dev:
tune on it; test: report only)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from ragapp.core.errors import ConfigError

TYPES = ("fact", "identifier", "paraphrase", "multi-hop", "comparison", "multi-turn", "unanswerable")
LANGS = ("en", "zh")
TAGS = ("paraphrased", "near-miss")
KINDS = ("false-premise", "not-given", "under-specified", "other-product", "nonsense")  # of unanswerable questions
SPLITS = ("dev", "test")

# One must_contain entry: a string that must appear, or a list of strings of which one must.
Needle = tuple[str, ...]


@dataclass(frozen=True)
class Scan:
    """Pages ``first``..``last`` (numbered from 1) of a PDF, rendered at ``dpi`` into an image-only PDF as a
    scanner gives them (``ragbench.scans``); with ``image`` False, the same pages copied with their text layer
    (the text version a scan is compared with)."""

    first: int
    last: int
    dpi: int = 150
    image: bool = True


@dataclass(frozen=True)
class Document:
    id: str
    package: str
    path: Path
    kb: str
    version: str = ""
    scan: Scan | None = None

    @property
    def name(self) -> str:
        """The name the document is ingested under: its file name, or for a scan the pages it holds."""
        if self.scan is None:
            return self.path.name
        kind = "scan-" if self.scan.image else ""
        return f"{self.path.stem}-{kind}p{self.scan.first}-{self.scan.last}.pdf"


@dataclass(frozen=True)
class Evidence:
    doc: str
    page: int | None = None
    section: str | None = None


@dataclass(frozen=True)
class Turn:
    user: str
    assistant: str


@dataclass(frozen=True)
class Question:
    id: str
    type: str
    lang: str
    question: str
    must_contain: tuple[Needle, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    turns: tuple[Turn, ...] = ()
    tags: tuple[str, ...] = ()
    trap: tuple[str, ...] = ()  # a near-miss question's neighbouring, wrong values
    kind: str = ""  # an unanswerable question's kind (KINDS)
    absent: tuple[str, ...] = ()  # an unanswerable question's answering terms, in no document's text
    split: str = ""  # dev or test; "" in a set that is not split

    @property
    def answerable(self) -> bool:
        return self.type != "unanswerable"


@dataclass(frozen=True)
class AnswerSet:
    name: str
    path: Path
    documents: tuple[Document, ...]
    questions: tuple[Question, ...] = field(default_factory=tuple)

    def document(self, doc_id: str) -> Document:
        return next(d for d in self.documents if d.id == doc_id)


def _needles(raw: Any, where: str) -> tuple[Needle, ...]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: must_contain must be a non-empty list")
    out: list[Needle] = []
    for item in raw:
        alternatives = item if isinstance(item, list) else [item]
        if not alternatives or any(not str(a).strip() for a in alternatives):
            raise ConfigError(f"{where}: empty must_contain entry")
        out.append(tuple(str(a) for a in alternatives))
    return tuple(out)


def _evidence(raw: Any, where: str, known: set[str]) -> tuple[Evidence, ...]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(
            f"{where}: an answerable question needs evidence (a list of {{doc, page}} or {{doc, section}})"
        )
    out = []
    for item in raw:
        doc = str(item.get("doc", ""))
        if doc not in known:
            raise ConfigError(f"{where}: evidence names document '{doc}', which is not under documents:")
        page, section = item.get("page"), item.get("section")
        if (page is None) == (section is None):
            raise ConfigError(f"{where}: each evidence entry gives a page or a section, not both or neither")
        out.append(Evidence(doc, int(page) if page is not None else None, str(section) if section else None))
    return tuple(out)


def _question(raw: dict[str, Any], known: set[str]) -> Question:
    qid = str(raw.get("id", ""))
    where = f"question {qid or '(no id)'}"
    kind, lang = raw.get("type"), raw.get("lang")
    if kind not in TYPES:
        raise ConfigError(f"{where}: type {kind!r} is not one of {', '.join(TYPES)}")
    if lang not in LANGS:
        raise ConfigError(f"{where}: lang {lang!r} is not one of {', '.join(LANGS)}")
    text = str(raw.get("question", "")).strip()
    if not qid or not text:
        raise ConfigError(f"{where}: needs an id and a question")
    turns = tuple(Turn(str(t["user"]), str(t["assistant"])) for t in raw.get("turns") or ())
    if kind == "multi-turn" and not turns:
        raise ConfigError(f"{where}: a multi-turn question needs turns: (user and assistant)")
    tags = tuple(str(tag) for tag in raw.get("tags") or ())
    trap = tuple(str(value) for value in raw.get("trap") or ())
    split = str(raw.get("split") or "")
    if unknown := set(tags) - set(TAGS):
        raise ConfigError(f"{where}: unknown tags {sorted(unknown)} (known: {', '.join(TAGS)})")
    if split and split not in SPLITS:
        raise ConfigError(f"{where}: split {split!r} is not one of {', '.join(SPLITS)}")
    if kind == "unanswerable":
        if raw.get("must_contain") or raw.get("evidence"):
            raise ConfigError(f"{where}: an unanswerable question has no must_contain or evidence")
        unanswerable_kind = str(raw.get("kind") or "")
        if unanswerable_kind and unanswerable_kind not in KINDS:
            raise ConfigError(f"{where}: kind {unanswerable_kind!r} is not one of {', '.join(KINDS)}")
        absent = tuple(str(term) for term in raw.get("absent") or ())
        return Question(
            qid, kind, lang, text, turns=turns, tags=tags, kind=unanswerable_kind, absent=absent, split=split
        )
    if raw.get("absent"):
        raise ConfigError(f"{where}: absent: is for unanswerable questions (terms no document may contain)")
    needles = _needles(raw.get("must_contain"), where)
    if any(value.lower() == alt.lower() for value in trap for needle in needles for alt in needle):
        raise ConfigError(f"{where}: a trap value is also a must_contain entry")
    evidence = _evidence(raw.get("evidence"), where, known)
    return Question(qid, kind, lang, text, needles, evidence, turns, tags, trap, split=split)


def _scan(raw: Any, where: str) -> Scan | None:
    if raw is None:
        return None
    try:
        first, _, last = str(raw["pages"]).partition("-")
        scan = Scan(int(first), int(last or first), int(raw.get("dpi", 150)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f'{where}: scan must look like {{pages: "5-14", dpi: 150}}') from exc
    if not 1 <= scan.first <= scan.last or not 72 <= scan.dpi <= 400:
        raise ConfigError(f"{where}: scan pages must run forward from 1 and dpi lie in 72..400")
    return scan


def load_set(path: Path) -> AnswerSet:
    """Read and validate an answer set; relative document paths are taken from the set file's folder."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such answer set file")
    data = yaml.safe_load(path.read_text("utf-8")) or {}
    documents = []
    for raw in data.get("documents") or ():
        doc_path = Path(str(raw["path"]))
        doc = Document(
            str(raw["id"]), str(raw.get("package", "")), doc_path if doc_path.is_absolute() else path.parent / doc_path,
            str(raw.get("kb", "default")), str(raw.get("version", "")), _scan(raw.get("scan"), f"document {raw['id']}"),
        )  # fmt: skip
        documents.append(doc)
    if not documents:
        raise ConfigError(f"{path}: no documents:")
    ids, names = [d.id for d in documents], [d.name for d in documents]
    if len(set(ids)) != len(ids) or len(set(names)) != len(names):
        raise ConfigError(f"{path}: document ids and file names must be unique")
    questions = tuple(_question(q, set(ids)) for q in data.get("questions") or ())
    qids = [q.id for q in questions]
    if len(set(qids)) != len(qids):
        raise ConfigError(f"{path}: question ids must be unique")
    return AnswerSet(str(data.get("name") or path.stem), path, tuple(documents), questions)


def pdfs_as(answer_set: AnswerSet, how: str) -> AnswerSet:
    """The set's PDF documents and the answerable questions over them alone, every PDF asked as a scan
    (``how="scan"``: all its pages, or the pages its ``scan:`` names) or as text (``how="text"``: a scanned
    document's pages copied with their text layer), so the two readings of the same pages compare."""
    documents = []
    for doc in answer_set.documents:
        if doc.path.suffix.lower() != ".pdf":
            continue
        if doc.scan is not None:
            scan: Scan | None = replace(doc.scan, image=how == "scan")
        else:
            scan = Scan(1, _page_count(doc.path), 150) if how == "scan" else None
        documents.append(replace(doc, scan=scan))
    kept = {d.id for d in documents}
    questions = tuple(
        q for q in answer_set.questions if q.answerable and all(e.doc in kept for e in q.evidence)
    )  # unanswerable ones are asked over every document; without the others they would be easy
    return replace(answer_set, name=f"{answer_set.name}-pdf-{how}", documents=tuple(documents), questions=questions)


def _page_count(path: Path) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return len(pdf)
    finally:
        pdf.close()


def missing_documents(answer_set: AnswerSet) -> list[Document]:
    return [d for d in answer_set.documents if not d.path.is_file()]


def install_command(documents: Sequence[Document]) -> str:
    """The ``apt-get install`` that provides ``documents`` (their packages, once each)."""
    return "apt-get install -y " + " ".join(dict.fromkeys(d.package for d in documents if d.package))


def documents_key(answer_set: AnswerSet, extra: Sequence[str]) -> str:
    """A key of the documents' content (and kb and name) plus ``extra`` (chunking, embedder): the same bytes
    installed elsewhere keep their index."""
    digest = hashlib.sha256()
    for doc in answer_set.documents:
        digest.update(f"{doc.id}\0{doc.name}\0{doc.kb}\0".encode() + (f"{doc.scan}\0".encode() if doc.scan else b""))
        digest.update(hashlib.sha256(doc.path.read_bytes()).digest())
    digest.update("\0".join(extra).encode())
    return digest.hexdigest()[:12]
