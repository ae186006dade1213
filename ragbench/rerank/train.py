"""``python -m ragbench.rerank.train``: fine-tune the shipped cross-encoder on (query, positive, hard negatives) rows.

    python -m ragbench.rerank.train --data ../shared/data/train/reranker-pairs.jsonl.gz --out ragapp/rerank/weights

Reproducible (fixed seed: same sample, same held-out slice, same initialisation, same batches), fits in about an
hour on 2 CPU cores with the defaults, uses a GPU when there is one. Each step scores groups of one question with
its positive and its hard negatives; the loss adds a pointwise term (each pair's logit against relevant /
irrelevant, so sigmoid(score) is a probability that ``min_rerank_score`` can threshold) and a listwise term
(the positive must win its group, which is what ranking needs). A held-out slice of the file is scored every
``--eval-every`` steps; the best state is kept and training stops early when it no longer improves.
Writes the compact weights (see ``ragapp.rerank.compact``), ``training.json`` (settings, sizes, held-out
figures) and ``training_log.jsonl`` (loss per logged step, held-out figures per evaluation).
"""

from __future__ import annotations

import argparse
import copy
import functools
import gzip
import json
import math
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragapp.core.errors import RagAppError
from ragapp.rerank.compact import (
    BASE_NAME,
    FORMATS,
    SHIPPED_DIR,
    added_vocabulary,
    build_tokenizer,
    is_cjk,
    load_compact,
    new_model,
    save_compact,
)
from ragbench.cli import run_command

GROUP = 3  # the positive and two hard negatives per question


@dataclass(frozen=True)
class Row:
    query: str
    positive: str
    negatives: tuple[str, ...]
    lang: str
    source: str


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ragbench.rerank.train", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=Path("../shared/data/train/reranker-pairs.jsonl.gz"))
    p.add_argument("--out", type=Path, default=SHIPPED_DIR, help="folder for the weights (default: the shipped one)")
    p.add_argument("--queries", type=int, default=10000, help="training questions sampled from the file")
    p.add_argument("--init", type=Path, help="continue from weights written by this command (keeps their vocabulary)")
    p.add_argument("--skip", type=int, default=0, help="skip this many questions of the seeded order (already seen)")
    p.add_argument("--holdout", type=int, default=300, help="questions held out for early stopping")
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch", type=int, default=8, help="questions per step (each with its group of passages)")
    p.add_argument("--max-length", type=int, default=160, help="tokens per (question, passage) pair")
    p.add_argument("--layers", type=int, default=6, help="encoder layers kept from the base")
    p.add_argument("--lr", type=float, default=5e-5, help="learning rate of the encoder")
    p.add_argument("--head-lr", type=float, default=1e-3, help="learning rate of the head and the added rows")
    p.add_argument("--min-char-count", type=int, default=2, help="add a Chinese character seen this often")
    p.add_argument("--eval-every", type=int, default=200, help="steps between held-out evaluations")
    p.add_argument("--patience", type=int, default=3, help="evaluations without improvement before stopping")
    p.add_argument("--max-minutes", type=float, default=55.0, help="stop (keeping the best state) after this long")
    p.add_argument("--max-steps", type=int, help="stop after this many steps (quick checks)")
    p.add_argument("--format", choices=FORMATS, default="int8-delta", help="how the weights are stored")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    return p


def load_rows(path: Path) -> list[Row]:
    if not path.exists():
        raise RagAppError(f"no training file at {path} (see ../shared/data/README.md)")
    rows: list[Row] = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("query") and r.get("positive"):  # rows without negatives get random ones (see ``groups``)
                negatives = tuple(n for n in r.get("negatives") or () if n and n != r["positive"])
                rows.append(Row(r["query"], r["positive"], negatives, r.get("lang", "en"), r.get("source", "")))
    return rows


def split_rows(rows: list[Row], holdout: int, queries: int, seed: int, skip: int = 0) -> tuple[list[Row], list[Row]]:
    """A seeded shuffle: the first ``holdout`` rows are held out, and after ``skip`` more (questions an earlier
    stage trained on) the next ``queries`` are trained on. The held-out slice depends only on the seed, so a
    continued stage is judged on the same questions as the first."""
    order = list(rows)
    random.Random(seed).shuffle(order)
    return order[holdout + skip : holdout + skip + queries], order[:holdout]


def added_characters(rows: list[Row], min_count: int, base_vocab: set[str]) -> list[str]:
    counts: Counter[str] = Counter()
    for r in rows:
        if r.lang == "zh":
            for text in (r.query, r.positive, *r.negatives):
                counts.update(ch for ch in text if is_cjk(ch))
    chosen = [ch for ch, n in counts.items() if n >= min_count and ch not in base_vocab]
    return sorted(chosen, key=lambda ch: (-counts[ch], ch))


def groups(rows: list[Row], rng: random.Random, pool: list[Row]) -> list[tuple[str, str, float]]:
    """(query, passage, label) triples, GROUP per row: the positive first, then hard negatives (topped up with
    a random passage of the same language when a row has only one)."""
    out: list[tuple[str, str, float]] = []
    for r in rows:
        negatives = list(r.negatives[: GROUP - 1])
        while len(negatives) < GROUP - 1:
            negatives.append(_random_negative(r, rng, pool))
        out.append((r.query, r.positive, 1.0))
        out.extend((r.query, n, 0.0) for n in negatives)
    return out


def _random_negative(row: Row, rng: random.Random, pool: list[Row], tries: int = 1000) -> str:
    """Another row's positive in the same language (drawn until one fits, as the shipped weights were
    trained); a pool too small to hold one (a test slice) gives any other passage, or the row's own negative."""
    for _ in range(tries):
        other = rng.choice(pool)
        if other.positive != row.positive and other.lang == row.lang:
            return other.positive
    others = [o.positive for o in pool if o.positive != row.positive]
    return rng.choice(others) if others else (row.negatives or (row.query,))[0]


def main(argv: list[str] | None = None) -> int:
    return run_command(_run, _parser().parse_args(argv))


def _run(args: argparse.Namespace) -> int:
    import torch
    from tqdm import tqdm

    torch.set_num_threads(max(1, args.threads))
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    started = time.perf_counter()

    rows = load_rows(args.data)
    train, held = split_rows(rows, args.holdout, args.queries, args.seed, args.skip)
    base_vocab = set(build_tokenizer([]).get_vocab())
    if args.init:  # a later stage: the vocabulary (and so the embedding rows) stay those of the first
        added = added_vocabulary(args.init)
        model, tokenizer, _ = load_compact(args.init)
    else:
        added = added_characters(train, args.min_char_count, base_vocab)
        model, tokenizer = new_model(added, args.layers, args.seed)
    print(
        f"{len(rows)} rows; training on {len(train)} questions ({_mix(train)}), holding out {len(held)}; "
        f"{len(added)} Chinese characters added to the vocabulary; device {device}",
        file=sys.stderr,
    )
    model.to(device)
    base_rows = len(base_vocab)
    word = model.bert.embeddings.word_embeddings.weight
    word.register_hook(lambda g: torch.cat([torch.zeros_like(g[:base_rows]), g[base_rows:]]))  # base rows frozen

    fast = {id(p) for p in (word, *model.classifier.parameters())}
    optimiser = torch.optim.AdamW(
        [
            {"params": [p for p in model.parameters() if id(p) not in fast], "lr": args.lr, "weight_decay": 0.01},
            {"params": [p for p in model.parameters() if id(p) in fast], "lr": args.head_lr, "weight_decay": 0.0},
        ]
    )
    rng = random.Random(args.seed)
    steps_per_epoch = math.ceil(len(train) / args.batch)
    total = max(1, math.ceil(steps_per_epoch * args.epochs))
    if args.max_steps:
        total = min(total, args.max_steps)
    warmup = max(1, total // 16)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (total - s) / max(1, total - warmup))
    )
    held_triples = groups(held, random.Random(args.seed + 1), held)

    loss_of = functools.partial(group_loss, model, tokenizer, max_length=args.max_length, device=device)

    log_path = args.out / "training_log.jsonl"
    args.out.mkdir(parents=True, exist_ok=True)
    log_file = log_path.open("w", encoding="utf-8")
    best: dict[str, Any] = {"mrr": -1.0}
    best_state: dict[str, Any] | None = None
    stale, step, running = 0, 0, 0.0
    stop_reason = "finished the planned steps"
    bar = tqdm(total=total, desc="training", unit="step", file=sys.stderr)
    while step < total:
        order = list(train)
        rng.shuffle(order)
        for start in range(0, len(order), args.batch):
            if step >= total:
                break
            model.train()
            loss, _ = loss_of(groups(order[start : start + args.batch], rng, train))
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            value = loss.item()
            running = 0.9 * running + 0.1 * value if step > 1 else value
            bar.update(1)
            bar.set_postfix(loss=f"{running:.3f}", best_mrr=f"{best['mrr']:.3f}")
            if step % 10 == 0:
                log_file.write(json.dumps({"step": step, "loss": round(value, 4), "smoothed": round(running, 4)}))
                log_file.write("\n")
                log_file.flush()
            minutes = (time.perf_counter() - started) / 60
            due = step % args.eval_every == 0 or step == total or minutes > args.max_minutes
            if not due:
                continue
            figures = evaluate(model, loss_of, held_triples) | {"step": step, "minutes": round(minutes, 1)}
            log_file.write(json.dumps({"eval": figures}) + "\n")
            log_file.flush()
            bar.write(f"step {step}: held-out {figures}")
            if figures["mrr"] > best["mrr"]:
                best, stale = figures, 0
                best_state = copy.deepcopy({k: v.detach().cpu() for k, v in model.state_dict().items()})
            else:
                stale += 1
            if stale >= args.patience:
                stop_reason = f"no held-out improvement in {args.patience} evaluations"
                step = total
            elif minutes > args.max_minutes:
                stop_reason = f"time budget of {args.max_minutes:g} minutes reached"
                step = total
    bar.close()
    log_file.close()
    if best_state is not None:
        model.load_state_dict(best_state)
    model.to("cpu")
    size = save_compact(model, added, args.out, args.format, args.max_length)
    formats = compare_formats(model, added, args, held_triples, best)
    summary = {
        "command": "python -m ragbench.rerank.train " + " ".join(sys.argv[1:]),
        "base": BASE_NAME,
        "seed": args.seed,
        "train_questions": len(train),
        "train_mix": dict(Counter(r.source for r in train)),
        "holdout_questions": len(held),
        "added_characters": len(added),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "steps_run": best.get("step"),
        "stopped": stop_reason,
        "best_holdout": best,
        "minutes": round((time.perf_counter() - started) / 60, 1),
        "weights_bytes": size,
        "formats": formats,
        "device": device,
    }
    if args.init:
        summary["init"] = _earlier_stage(args.init)
    (args.out / "training.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"best held-out {best}; {stop_reason}; wrote {args.out} ({size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


def _earlier_stage(folder: Path) -> dict[str, Any]:
    """What the weights a stage continued from say of themselves (their own ``training.json``)."""
    try:
        earlier = json.loads((folder / "training.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {"folder": str(folder)}
    keep = ("command", "train_questions", "steps_run", "best_holdout", "minutes", "init")
    return {"folder": str(folder)} | {k: earlier[k] for k in keep if k in earlier}


def compare_formats(
    model: Any, added: list[str], args: argparse.Namespace, triples: list[tuple[str, str, float]], best: dict[str, Any]
) -> dict[str, Any]:
    """Size and held-out quality of each way to store the weights, each reloaded the way the app loads it."""
    import tempfile

    out: dict[str, Any] = {"fp32 (in memory)": {"bytes": sum(v.numel() * 4 for v in model.state_dict().values())}}
    out["fp32 (in memory)"] |= {k: best.get(k) for k in ("loss", "accuracy", "mrr")}
    for fmt in FORMATS:
        with tempfile.TemporaryDirectory() as tmp:
            size = save_compact(model, added, Path(tmp), fmt, args.max_length)
            loaded, tokenizer, _ = load_compact(Path(tmp))

            loss_of = functools.partial(group_loss, loaded, tokenizer, max_length=args.max_length)
            out[fmt] = {"bytes": size} | evaluate(loaded, loss_of, triples)
    return out


def group_loss(
    model: Any, tokenizer: Any, batch: list[tuple[str, str, float]], max_length: int, device: str = "cpu"
) -> tuple[Any, Any]:
    """Pointwise (BCE on each pair) plus listwise (the positive must win its group) loss, and the logits."""
    import torch

    enc = tokenizer(
        [q for q, _, _ in batch],
        [p for _, p, _ in batch],
        truncation="only_second",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )
    logits = model(**{k: v.to(device) for k, v in enc.items()}).logits.view(-1)
    labels = torch.tensor([label for _, _, label in batch], device=device)
    pointwise = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
    listwise = torch.nn.functional.cross_entropy(
        logits.view(-1, GROUP), torch.zeros(len(batch) // GROUP, dtype=torch.long, device=device)
    )
    return pointwise + listwise, logits


def evaluate(model: Any, loss_of: Any, triples: list[tuple[str, str, float]], batch: int = 16) -> dict[str, float]:
    """Held-out loss, accuracy (the positive beats both negatives) and MRR of the positive in its group."""
    import torch

    model.eval()
    losses, scores = [], []
    with torch.inference_mode():
        for start in range(0, len(triples), batch * GROUP):
            part = triples[start : start + batch * GROUP]
            loss, logits = loss_of(part)
            losses.append(float(loss) * len(part))
            scores.extend(logits.view(-1, GROUP).tolist())
    ranks = [1 + sum(s > row[0] for s in row[1:]) for row in scores]
    return {
        "loss": round(sum(losses) / max(1, len(triples)), 4),
        "accuracy": round(sum(r == 1 for r in ranks) / max(1, len(ranks)), 4),
        "mrr": round(sum(1 / r for r in ranks) / max(1, len(ranks)), 4),
    }


def _mix(rows: list[Row]) -> str:
    langs = Counter(r.lang for r in rows)
    return ", ".join(f"{n} {lang}" for lang, n in langs.most_common())


if __name__ == "__main__":
    raise SystemExit(main())
