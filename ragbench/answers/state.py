"""The engine state an answer set is asked over: its documents ingested once into their knowledge bases, kept
in a folder keyed by the documents' content, the ingest settings and the embedder, and reused after. A scanned
document is rendered first: its pages as images in an image-only PDF, which the app reads by OCR."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import ragapp.ingest as ingest_package
from ragapp.config import Settings
from ragapp.core.errors import IngestError
from ragbench import scans
from ragbench.answers.answer_set import AnswerSet, Document, documents_key

if TYPE_CHECKING:
    from ragapp.core.types import DocumentRecord
    from ragapp.engine.build import Parts
    from ragapp.engine.engine import Engine

OWNER = "ragbench"  # whose traces the set's questions leave
READY = "ready.json"  # written once every document is ingested


def state_folder(answer_set: AnswerSet, settings: Settings, cache: Path) -> Path:
    """Where the set's state lives under ``cache``: every ingest setting (chunking, boilerplate pages), the
    embedder and the code that reads files into chunks decide what it holds (a parser fix builds it anew)."""
    from ragapp.models.embedders import load_embedder

    extra = [settings.ingest.model_dump_json(), load_embedder(settings).name, _reading_code()]
    return cache / f"{answer_set.name}-{documents_key(answer_set, extra)}"


def _reading_code() -> str:
    """A digest of ragapp's parsers, chunker and OCR, the code that decides what the documents' chunks hold, and
    of the scanner that renders scanned documents."""
    ingest = Path(ingest_package.__file__).parent
    models = ingest.parent / "models"
    digest = hashlib.sha256()
    ocr = [models / "ocr.py", models / "tesseract.py", Path(scans.__file__)]
    for path in [*sorted([*ingest.glob("*.py"), *ingest.glob("parsers/*.py")]), *ocr]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def scanned_copy(doc: Document, folder: Path) -> Path:
    """``doc``'s scan pages rendered at its dpi as a scanner gives them, saved as an image-only PDF in ``folder``
    under the document's name (no text layer: only OCR reads it); or, for a text copy (``scan.image`` False),
    the same pages with their text layer."""
    import pypdfium2 as pdfium

    assert doc.scan is not None
    out = folder / doc.name
    if out.is_file():
        return out
    pdf = pdfium.PdfDocument(str(doc.path))
    try:
        if doc.scan.last > len(pdf):
            raise IngestError(f"{doc.path}: has {len(pdf)} pages, the scan asks for {doc.scan.first}-{doc.scan.last}")
        pages = range(doc.scan.first, doc.scan.last + 1)
        if not doc.scan.image:
            copy = pdfium.PdfDocument.new()
            copy.import_pages(pdf, [n - 1 for n in pages])
            folder.mkdir(parents=True, exist_ok=True)
            copy.save(str(out.with_suffix(".part")))
            copy.close()
            out.with_suffix(".part").replace(out)
            return out
        images = [scans.scan_image(pdf[n - 1], doc.scan.dpi) for n in pages]
    finally:
        pdf.close()
    return scans.save_image_pdf(images, out, doc.scan.dpi)


def prepare_state(answer_set: AnswerSet, engine_of: Callable[[Path], Engine], folder: Path) -> tuple[Engine, str]:
    """An engine over ``folder`` holding the set's documents: reused when a finished build is there, else
    (re)built by ingesting each document into its knowledge base."""
    ready = folder / READY
    how = "reused"
    if not ready.is_file():
        how = "built"
        shutil.rmtree(folder, ignore_errors=True)  # an interrupted build: start again
    engine = engine_of(folder)
    if how == "built":
        for doc in answer_set.documents:
            source = scanned_copy(doc, folder / "scans") if doc.scan else doc.path
            # Inline: the questions are asked of a fully indexed base (not one still embedding in the background).
            (result,) = engine.library.ingest([(source, doc.name)], kb=doc.kb, owner=OWNER, inline=True)
            if result.status == "failed":
                engine.close()
                raise IngestError(f"{doc.path}: {result.message}")
        ready.write_text(json.dumps({d.id: str(d.path) for d in answer_set.documents}), "utf-8")
    return engine, how


def engine_over(settings: Settings, parts: Parts | None = None) -> Callable[[Path], Engine]:
    """What ``prepare_state`` builds with: an engine over a state folder, with ``settings`` (no demo documents)
    and ready ``parts`` (a model to share)."""
    from ragapp.engine.build import build_engine

    def build(state: Path) -> Engine:
        paths = settings.paths.model_copy(update={"state_dir": state, "load_demo": False})
        return build_engine(settings.model_copy(update={"paths": paths}), parts)

    return build


def set_doc_ids(documents: Iterable[DocumentRecord], answer_set: AnswerSet) -> dict[str, str]:
    """The stored ``documents``' ids (an engine's library, or a state's catalog) -> the set's, matched by file
    name."""
    return {d.doc_id: doc.id for d in documents for doc in answer_set.documents if d.name == doc.name}
