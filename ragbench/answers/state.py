"""The engine state an answer set is asked over: its documents ingested once into their knowledge bases, kept
in a folder keyed by the documents' content, the ingest settings and the embedder, and reused after."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ragapp.config import Settings
from ragapp.core.errors import IngestError
from ragbench.answers.answer_set import AnswerSet, documents_key

if TYPE_CHECKING:
    from ragapp.engine.engine import Engine

OWNER = "ragbench"  # whose traces the set's questions leave
READY = "ready.json"  # written once every document is ingested


def state_folder(answer_set: AnswerSet, settings: Settings, cache: Path) -> Path:
    """Where the set's state lives under ``cache``: every ingest setting (chunking, boilerplate pages) and the
    embedder decide what it holds."""
    from ragapp.models.embedders import load_embedder

    extra = [settings.ingest.model_dump_json(), load_embedder(settings).name]
    return cache / f"{answer_set.name}-{documents_key(answer_set, extra)}"


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
            (result,) = engine.library.ingest([(doc.path, doc.name)], kb=doc.kb, owner=OWNER)
            if result.status == "failed":
                engine.close()
                raise IngestError(f"{doc.path}: {result.message}")
        ready.write_text(json.dumps({d.id: str(d.path) for d in answer_set.documents}), "utf-8")
    return engine, how
