"""The driver of tests/hostile/test_crash_ingest.py, run in a child process it kills with SIGKILL at one seam.

It ingests some documents, then wraps the function at one seam so that it kills its own process there and
ingests one more. The child is forked from the test process's forkserver (tests/hostile/bounded.py), which has
already imported this module and with it the engine: a case costs a fork, not a Python start and the app's imports.
Nothing here runs in the test process itself: the patches below are the child's.
"""

import json
import os
import shutil
import signal
import sys
import types
from pathlib import Path

from ragapp.config import Settings
from ragapp.engine.build import Parts, build_engine
from ragapp.ingest import pipeline
from ragapp.store import bm25 as bm25_module
from ragapp.store.catalog import Catalog
from ragapp.store.vectors import ChromaVectorIndex


class NoLLM:
    """Ingesting never calls the model; this one says so if anything does."""

    name = "no-llm"

    def stream_chat(self, messages, **kwargs):
        raise AssertionError("the model was called during an ingest")


def die():
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def kill_before(owner, attr, when=lambda *a, **k: True):
    real = getattr(owner, attr)

    def wrapper(*args, **kwargs):
        if when(*args, **kwargs):
            die()
        return real(*args, **kwargs)

    setattr(owner, attr, wrapper)


def kill_after(owner, attr):
    real = getattr(owner, attr)

    def wrapper(*args, **kwargs):
        result = real(*args, **kwargs)
        die()
        return result

    setattr(owner, attr, wrapper)


def kill_mid_embedding():
    """The second batch of passages never comes back: the first was embedded, nothing was written."""
    real = pipeline.embed_chunks

    def embed_chunks(embedder, chunks, progress, *args, **kwargs):
        assert len(chunks) > 32, f"the document must need two batches, it has {len(chunks)} chunks"
        calls = []

        class Dying:
            name = embedder.name

            def embed_queries(self, texts):
                return embedder.embed_queries(texts)

            def embed_passages(self, texts):
                calls.append(len(texts))
                if len(calls) == 2:
                    die()
                return embedder.embed_passages(texts)

        return real(Dying(), chunks, progress, *args, **kwargs)

    pipeline.embed_chunks = embed_chunks


def kill_mid_keyword_swap(live_dir):
    """Bm25Index.rebuild removes the live folder, then renames the new one in: die in between."""
    real = shutil.rmtree

    def rmtree(path, *args, **kwargs):
        real(path, *args, **kwargs)
        if Path(path) == live_dir:
            die()

    bm25_module.shutil = types.SimpleNamespace(rmtree=rmtree)


def install(point, state):
    if point == "mid-embedding":
        kill_mid_embedding()
    elif point == "vectors-written":
        kill_after(ChromaVectorIndex, "add")
    elif point == "catalog-uncommitted":
        kill_after(Catalog, "add_document")
    elif point == "catalog-committed":
        # After the catalog commit, ingest removes the replaced version's vectors (none for a new name).
        kill_before(ChromaVectorIndex, "delete")
    elif point == "keywords-mid-swap":
        kill_mid_keyword_swap(state / "bm25")
    elif point == "before-demo-mark":
        kill_before(Catalog, "set_meta", lambda self, key, value: key == "demo_loaded")
    else:
        raise SystemExit(f"unknown kill point {point!r}")


def stored(state):
    catalog = Catalog(state / "catalog.sqlite3").start()
    try:
        docs = {d.name: d.doc_id for d in catalog.documents()}
        chunks = sorted(c.chunk_id for c in catalog.all_chunks())
    finally:
        catalog.close()
    return {"documents": docs, "chunks": chunks}


def run(settings_path: str, plan_path: str, out_path: str) -> None:
    """The driver: its phases, one JSON line each, go to ``out_path`` (its errors to ``out_path``.err); reaching
    the end means the kill point was never hit (exit code 3)."""
    with open(out_path, "w", encoding="utf-8") as out, open(out_path + ".err", "w", encoding="utf-8") as err:
        # A forked child writes where its forkserver's output went (the test run's): to these files instead.
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
    settings = Settings.model_validate(json.loads(Path(settings_path).read_text("utf-8")))
    plan = json.loads(Path(plan_path).read_text("utf-8"))
    state = settings.paths.state_dir
    first = settings.model_copy(update={"paths": settings.paths.model_copy(update={"load_demo": False})})
    engine = build_engine(first, Parts(llm=NoLLM()))
    results = engine.library.ingest([(Path(p), n) for p, n in plan["before"]])
    assert all(r.status == "added" for r in results), [r.message for r in results]
    print(json.dumps({"phase": "before", **stored(state)}), flush=True)

    install(plan["point"], state)
    print(json.dumps({"phase": "armed", "point": plan["point"]}), flush=True)
    if settings.paths.load_demo:  # the demo is loaded by a fresh start, as on first run
        engine.close()
        engine = build_engine(settings, Parts(llm=NoLLM()))
    else:
        path, name = plan["target"]
        engine.library.ingest([(Path(path), name)])
    print(json.dumps({"phase": "survived"}), flush=True)
    sys.exit(3)
