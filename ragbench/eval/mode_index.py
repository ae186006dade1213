"""The engine state the mode comparison asks over: a BEIR corpus indexed once, reused, or copied from a store
that ``python -m ragbench.eval`` already embedded."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ragapp.config import Settings
from ragapp.core.errors import ConfigError
from ragbench.eval.beir import BeirDataset
from ragbench.eval.corpus import IndexReport, build_index, content_hash, corpus_key, passage_chunks


def store_matches(folder: Path, dataset: BeirDataset, settings: Settings) -> bool:
    """The catalog under ``folder`` holds exactly this corpus, chunked as ``settings`` chunk it."""
    from ragapp.store.catalog import Catalog

    catalog = Catalog(folder / "catalog.sqlite3").start()
    try:
        documents = {d.doc_id: d.content_hash for d in catalog.documents()}
        if documents != {p.doc_id: content_hash(p) for p in dataset.corpus}:
            return False
        have = {(c.chunk_id, c.text, c.source) for c in catalog.all_chunks()}
    finally:
        catalog.close()
    want = {(c.chunk_id, c.text, c.source) for p in dataset.corpus for c in passage_chunks(p, settings)}
    return have == want


def _candidates(roots: Sequence[Path], corpus_name: str, exclude: Path) -> list[Path]:
    found = []
    for root in roots:
        if root.is_dir():
            for folder in sorted(root.iterdir()):
                if (
                    folder.name.startswith(f"{corpus_name}-")
                    and (folder / "catalog.sqlite3").is_file()
                    and folder.resolve() != exclude.resolve()
                ):
                    found.append(folder)
    return found


def state_folder(corpus_file: Path, settings: Settings, cache: Path) -> Path:
    """The engine state for this corpus file, chunking and embedder (named as ``ragbench.eval`` names its
    stores, with an ``engine-`` prefix so the two never share a folder)."""
    from ragapp.models.embedders import load_embedder

    key = corpus_key(corpus_file, settings, load_embedder(settings).name)  # the embedder loads lazily: cheap
    return cache / f"engine-{corpus_file.parent.name}-{key}"


def prepare_state(
    dataset: BeirDataset, corpus_file: Path, settings: Settings, cache: Path, index_from: Sequence[Path]
) -> tuple[IndexReport, str]:
    """The indexed corpus as an engine state under ``cache`` (``state_folder``): reused when there, else
    copied from a store in ``index_from`` or ``cache`` (``python -m ragbench.eval --cache``) that holds the same
    corpus chunked the same way (vectors it lacks for this embedder are then embedded), else built. Returns
    the report and how the state came to be."""
    folder = state_folder(corpus_file, settings, cache)
    cache.mkdir(parents=True, exist_ok=True)
    how = "reused"
    if not (folder / "catalog.sqlite3").is_file():
        how = "built"
        for source in _candidates([*index_from, cache], corpus_file.parent.name, folder):
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=cache))
            shutil.copytree(source, staging, dirs_exist_ok=True)
            if store_matches(staging, dataset, settings):
                staging.rename(folder)
                how = f"copied from {source}"
                break
            shutil.rmtree(staging, ignore_errors=True)
    store, report = build_index(dataset.corpus, corpus_file, settings, cache, folder.name.rsplit("-", 1)[0])
    store.catalog.close()
    if report.folder != folder:  # build_index and state_folder name folders the same way
        raise ConfigError(f"the index was built in {report.folder}, not in {folder}")
    if how == "reused" and not report.reused:
        how = "finished"  # an interrupted build, resumed
    return report, how
