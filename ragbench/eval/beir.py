"""Read a BEIR-format folder: corpus.jsonl ({_id, title, text}), queries.jsonl ({_id, text, metadata}) and
qrels/<split>.tsv (header, then query-id, corpus-id, score)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragapp.core.errors import RagAppError


class DatasetError(RagAppError):
    """The folder is not a readable BEIR dataset."""


@dataclass(frozen=True)
class Query:
    query_id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Passage:
    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class BeirDataset:
    name: str
    corpus: tuple[Passage, ...]
    queries: tuple[Query, ...]  # only queries that have judgements in the split
    qrels: dict[str, dict[str, int]]  # query id -> {doc id -> grade}


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"{path} is missing: a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/<split>.tsv.")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(f"{path}:{number} is not valid JSON ({exc.msg}).") from exc


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    if not path.is_file():
        raise DatasetError(f"{path} is missing: pick a split that exists under qrels/.")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
        if rows and rows[0][:1] == ["query-id"]:
            rows = rows[1:]  # the header line; some exports have none
        for row in rows:
            if len(row) >= 3:
                qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    return qrels


def load_beir(
    folder: Path, split: str = "test", corpus_folder: Path | None = None, query_field: str = "text"
) -> BeirDataset:
    """Load ``folder``; ``corpus_folder`` takes the corpus from elsewhere (e.g. Chinese questions over the
    English xquad corpus); ``query_field`` reads the question from another field of queries.jsonl."""
    qrels = read_qrels(folder / "qrels" / f"{split}.tsv")
    corpus = tuple(
        Passage(str(row["_id"]), str(row.get("title") or ""), str(row.get("text") or ""))
        for row in _jsonl((corpus_folder or folder) / "corpus.jsonl")
    )
    queries = []
    for row in _jsonl(folder / "queries.jsonl"):
        query_id = str(row["_id"])
        if query_id in qrels:
            text = row.get(query_field) or (row.get("metadata") or {}).get(query_field)
            if not text:
                raise DatasetError(f"query {query_id} has no field {query_field!r}.")
            queries.append(Query(query_id, str(text), dict(row.get("metadata") or {})))
    return BeirDataset(folder.name, corpus, tuple(queries), qrels)
