"""Tune keyword search: tokenizer variants and BM25 parameters, measured on SciFact and XQuAD.

Builds bm25s indexes directly, over (a) whole documents (title + " " + text) and (b) the app's chunks
(``chunk_document`` at 400/60 characters, indexed through ``index_text``; a document ranks at its best
chunk). Prints nDCG@10 and Recall@100 for SciFact test (en), XQuAD zh->zh and en->en.

Tokenizer variants are re-implemented here (the shipped v1 rules plus knobs), so the comparison stays
valid after ``ragapp/store/tokenize.py`` changes; the variant ``app`` is whatever ``tokenize()`` does now.

    .venv/bin/python -m ragbench.tune_keywords                      # all tokenizer variants, bm25s defaults
    .venv/bin/python -m ragbench.tune_keywords --variants app,v1 --grid  # + k1/b/method grid for each
    .venv/bin/python -m ragbench.tune_keywords --bench              # tokens/s of each variant on SciFact

Data: BEIR folders under ../shared/data (or $RAGAPP_EVAL_DATA); nothing is copied into the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ragapp.core.chunks import index_text
from ragapp.core.types import ParsedDocument, Section
from ragapp.ingest.chunking import chunk_document
from ragapp.store import tokenize as app_tokenize
from ragapp.testcases.metrics import ndcg_at_k, recall_at_k
from ragbench.eval.beir import BeirDataset, load_beir

Tokenizer = Callable[[str], list[str]]

# ----------------------------------------------------------------------------------------------------------
# Tokenizer variants
# ----------------------------------------------------------------------------------------------------------

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_ASCII_V1 = re.compile(rf"([{_CJK}]+)|([a-z0-9]+(?:\.[0-9]+)?)")  # the v1 rule: "2.5.0" -> "2.5", "0"
_ASCII_DOTTED = re.compile(rf"([{_CJK}]+)|([a-z0-9]+(?:\.[0-9]+)*)")  # "2.5.0" whole
_UNI_V1 = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+(?:\.[0-9]+)?)")  # any letters/digits: é, α, β ...
_UNI_DOTTED = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+(?:\.[0-9]+)*)")


def _stopword_set(name: str) -> frozenset[str]:
    from bm25s import stopwords as bs

    zh = app_tokenize._ZH_STOP
    sets = {
        "none": frozenset(),
        "app": app_tokenize._EN_STOP | zh,  # the v1 list (English ~130 words + Chinese)
        "lucene": frozenset(bs.STOPWORDS_EN) | zh,  # Lucene/Anserini's 33 English words
        "enplus": frozenset(bs.STOPWORDS_EN_PLUS) | zh,  # bm25s's 179-word (NLTK-like) list
        "app+enplus": app_tokenize._EN_STOP | frozenset(bs.STOPWORDS_EN_PLUS) | zh,
    }
    return sets[name]


@dataclass(frozen=True)
class Variant:
    name: str
    stem: bool = False  # Snowball english (PyStemmer) on non-CJK words
    stem_digits: bool = False  # also stem words with digits in them ("5s" -> "5"); default: letters only
    stop: str = "app"
    # Dotted numbers. "v1": "2.5.0" -> "2.5", "0"; "parts": whole + parts ("2.5.0", "2", "5", "0"; decimals too);
    # "prefix": whole + its dotted prefixes ("2.5.0", "2.5"), a decimal "2.5" stays one token.
    versions: str = "v1"
    unicode_words: bool = False  # NFKC + Unicode letters (é, α, β) instead of [a-z0-9]
    min_len: int = 1  # drop shorter non-CJK tokens (bm25s's default pattern is \w\w+)


VARIANTS = [
    Variant("v1"),
    Variant("v1-nostop", stop="none"),
    Variant("v1-lucene33", stop="lucene"),
    Variant("stem", stem=True),
    Variant("stem-nostop", stem=True, stop="none"),
    Variant("stem-lucene33", stem=True, stop="lucene"),
    Variant("stem-enplus", stem=True, stop="enplus"),
    Variant("stem-app+enplus", stem=True, stop="app+enplus"),
    Variant("stem-digits", stem=True, stem_digits=True),
    Variant("stem-min2", stem=True, min_len=2),
    Variant("stem-ver-parts", stem=True, versions="parts"),
    Variant("stem-ver-prefix", stem=True, versions="prefix"),
    Variant("stem-uni", stem=True, unicode_words=True),
    # The rules tokenize() ships since TOKENIZER_VERSION 2 (same tokens as "app" on every eval text).
    Variant("v2", stem=True, unicode_words=True, versions="prefix"),
    Variant("v2-enplus", stem=True, unicode_words=True, versions="prefix", stop="app+enplus"),
]


def make_tokenizer(v: Variant) -> Tokenizer:
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    stem = lru_cache(maxsize=1 << 17)(stemmer.stemWord)
    stop = _stopword_set(v.stop)
    if v.unicode_words:
        pattern = _UNI_V1 if v.versions == "v1" else _UNI_DOTTED
    else:
        pattern = _ASCII_V1 if v.versions == "v1" else _ASCII_DOTTED
    jieba = app_tokenize._jieba()

    def tokenize(text: str) -> list[str]:
        if v.unicode_words:
            text = unicodedata.normalize("NFKC", text)
        tokens: list[str] = []
        for cjk, word in pattern.findall(text.lower()):
            if cjk:
                tokens.extend(p for p in jieba.lcut_for_search(cjk) if p.strip() and p not in stop)
                continue
            if word in stop or len(word) < v.min_len:
                continue
            if "." in word:  # a dotted number: whole, and maybe its parts or prefixes as well
                tokens.append(word)
                parts = word.split(".")
                if v.versions == "parts":
                    tokens.extend(parts)
                elif v.versions == "prefix":
                    tokens.extend(".".join(parts[:n]) for n in range(len(parts) - 1, 1, -1))
            elif v.stem and (v.stem_digits or word.isalpha()):
                tokens.append(stem(word))
            else:
                tokens.append(word)
        return tokens

    return tokenize


def variant_tokenizer(name: str) -> Tokenizer:
    if name == "app":
        return app_tokenize.tokenize
    for v in VARIANTS:
        if v.name == name:
            return make_tokenizer(v)
    raise SystemExit(f"unknown variant {name!r}; known: app, {', '.join(v.name for v in VARIANTS)}")


# ----------------------------------------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------------------------------------


@dataclass
class Task:
    name: str
    data: BeirDataset
    doc_ids: list[str]
    doc_texts: list[str]
    chunk_doc_ids: list[str]
    chunk_texts: list[str]


def load_task(name: str, folder: Path, chunk_size: int, chunk_overlap: int) -> Task:
    data = load_beir(folder, "test")
    doc_ids = [p.doc_id for p in data.corpus]
    doc_texts = [f"{p.title} {p.text}".strip() for p in data.corpus]
    chunk_doc_ids: list[str] = []
    chunk_texts: list[str] = []
    for p in data.corpus:
        # The title stands in for the file name, which index_text puts in front of every chunk.
        parsed = ParsedDocument(name=f"{p.title}.txt", file_type="txt", sections=(Section(p.text),))
        for chunk in chunk_document(parsed, p.doc_id, chunk_size, chunk_overlap):
            chunk_doc_ids.append(p.doc_id)
            chunk_texts.append(index_text(chunk))
    return Task(name, data, doc_ids, doc_texts, chunk_doc_ids, chunk_texts)


# ----------------------------------------------------------------------------------------------------------
# Evaluation
# ----------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Params:
    k1: float = 1.5  # bm25s defaults
    b: float = 0.75
    method: str = "lucene"

    def __str__(self) -> str:
        return f"{self.method} k1={self.k1:g} b={self.b:g}"


def rank_docs(
    corpus_tokens: list[list[str]], unit_doc_ids: Sequence[str], queries: list[list[str]], params: Params, depth: int
) -> list[list[str]]:
    """Ranked doc ids per query; with several units (chunks) per doc a doc ranks at its best unit."""
    import bm25s

    retriever = bm25s.BM25(k1=params.k1, b=params.b, method=params.method)
    retriever.index([t or ["\u2400"] for t in corpus_tokens], show_progress=False)
    vocab = retriever.vocab_dict
    rows = [[t for t in q if t in vocab] for q in queries]
    asked = [i for i, q in enumerate(rows) if q]
    ranked: list[list[str]] = [[] for _ in queries]
    if not asked:
        return ranked
    k = min(len(corpus_tokens), depth)
    docs, scores = retriever.retrieve([rows[i] for i in asked], k=k, show_progress=False, n_threads=1)
    for i, d_row, s_row in zip(asked, np.asarray(docs), np.asarray(scores), strict=True):
        seen: dict[str, None] = {}
        for d, s in zip(d_row, s_row, strict=True):
            if s <= 0:  # zero-score rows are not matches (the app drops them too)
                break
            seen.setdefault(unit_doc_ids[int(d)], None)
        ranked[i] = list(seen)
    return ranked


def evaluate(
    task: Task, tok: Tokenizer, params_list: Sequence[Params], units: Sequence[str]
) -> dict[tuple[Params, str], tuple[float, float]]:
    queries = [tok(q.text) for q in task.data.queries]
    corpora = {}
    if "docs" in units:
        corpora["docs"] = ([tok(t) for t in task.doc_texts], task.doc_ids, 100)
    if "chunks" in units:
        # Deep enough that 100 distinct docs survive the best-chunk merge.
        corpora["chunks"] = ([tok(t) for t in task.chunk_texts], task.chunk_doc_ids, 1000)
    out = {}
    for unit, (corpus, ids, depth) in corpora.items():
        for params in params_list:
            ranked = rank_docs(corpus, ids, queries, params, depth)
            qrels = [task.data.qrels[q.query_id] for q in task.data.queries]
            ndcg = float(np.mean([ndcg_at_k(r, g, 10) for r, g in zip(ranked, qrels, strict=True)]))
            rec = float(np.mean([recall_at_k(r, g, 100) for r, g in zip(ranked, qrels, strict=True)]))
            out[(params, unit)] = (ndcg, rec)
    return out


def grid() -> list[Params]:
    ps = [Params(k1, b) for k1 in (0.9, 1.2, 1.5, 2.0) for b in (0.5, 0.75, 0.9)]
    ps += [Params(k1, 0.75, m) for m in ("robertson", "atire", "bm25+", "bm25l") for k1 in (1.2, 1.5)]
    return ps


def bench(names: Sequence[str], texts: list[str], repeats: int) -> None:
    sys.stdout.write(f"\n| variant | tokens | tokens/s (best of {repeats}) |\n|---|---:|---:|\n")
    for name in names:
        tok = variant_tokenizer(name)
        tok("warm up 中文")
        best, n = float("inf"), 0
        for _ in range(repeats):
            t0 = time.perf_counter()
            n = sum(len(tok(t)) for t in texts)
            best = min(best, time.perf_counter() - t0)
        sys.stdout.write(f"| {name} | {n:,} | {n / best:,.0f} |\n")


def main(argv: Sequence[str] | None = None) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    here = Path(__file__).resolve().parent
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--data-dir", type=Path, default=Path(os.environ.get("RAGAPP_EVAL_DATA", here.parents[1] / "shared" / "data"))
    )
    p.add_argument("--variants", default="app," + ",".join(v.name for v in VARIANTS), help="comma list")
    p.add_argument("--tasks", default="scifact,xquad-zh,xquad-en", help="comma list")
    p.add_argument("--units", default="docs,chunks", help="docs, chunks or both")
    p.add_argument("--grid", action="store_true", help="k1/b/method grid instead of bm25s defaults")
    p.add_argument("--k1", type=float, default=1.5)
    p.add_argument("--b", type=float, default=0.75)
    p.add_argument("--method", default="lucene")
    p.add_argument("--chunk-size", type=int, default=400)
    p.add_argument("--chunk-overlap", type=int, default=60)
    p.add_argument("--bench", action="store_true", help="only time the tokenizers on the SciFact corpus")
    p.add_argument("--json", type=Path, help="also write the results here")
    args = p.parse_args(argv)

    names = [n for n in args.variants.split(",") if n]
    folders = {
        "scifact": args.data_dir / "scifact",
        "xquad-zh": args.data_dir / "xquad" / "zh",
        "xquad-en": args.data_dir / "xquad" / "en",
    }
    if args.bench:
        texts = [json.loads(line) for line in (folders["scifact"] / "corpus.jsonl").open(encoding="utf-8")]
        bench(names, [f"{r['title']} {r['text']}" for r in texts], repeats=3)
        return

    units = [u for u in args.units.split(",") if u]
    t0 = time.perf_counter()
    tasks = [load_task(t, folders[t], args.chunk_size, args.chunk_overlap) for t in args.tasks.split(",") if t]
    summary = ", ".join(
        f"{t.name}: {len(t.doc_ids)} docs/{len(t.chunk_texts)} chunks/{len(t.data.queries)} queries" for t in tasks
    )
    sys.stderr.write(f"loaded {summary} in {time.perf_counter() - t0:.1f}s\n")
    params_list = grid() if args.grid else [Params(args.k1, args.b, args.method)]

    cols = [(t.name, u) for t in tasks for u in units]
    head = " | ".join(f"{t} {u} nDCG@10 | R@100" for t, u in cols)
    sys.stdout.write(f"| variant | bm25 | {head} |\n|---|---|{'---:|' * 2 * len(cols)}\n")
    records = []
    for name in names:
        tok = variant_tokenizer(name)
        t1 = time.perf_counter()
        results = {t.name: evaluate(t, tok, params_list, units) for t in tasks}
        for params in params_list:
            cells, rec = [], {"variant": name, "params": str(params)}
            for t, u in cols:
                ndcg, r100 = results[t][(params, u)]
                cells.append(f"{ndcg:.4f} | {r100:.4f}")
                rec[f"{t}/{u}"] = {"ndcg@10": ndcg, "recall@100": r100}
            records.append(rec)
            sys.stdout.write(f"| {name} | {params} | {' | '.join(cells)} |\n")
        sys.stdout.flush()
        sys.stderr.write(f"  {name}: {time.perf_counter() - t1:.1f}s\n")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1), "utf-8")


if __name__ == "__main__":
    main()
