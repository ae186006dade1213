"""One-off (issue 50, the Chinese question kinds' fix): stored dev rows checked with the fixed kinds.

    python -m ragbench.answers.kinds_recheck rows OLD_FIT.py SOURCE.json TARGET.json
    python -m ragbench.answers.kinds_recheck oof OLD.json[,OLD2.json] NEW.json[,NEW2.json] THRESHOLD

``rows``: the text-only signals (``fits``, ``asks_value``, ``bare_fact``) of a run's one-part rows recomputed
with today's question kinds, where recomputing them with the kinds before (``OLD_FIT.py``: ``git show
a10ee2d^:ragapp/qa/answer_fit.py``) reproduces what the row logged; a row of several parts keeps what it logged
(its signals are one part's, its reply not split), and says so where a part's kind moved. ``oof``: out of fold
as ``ragbench.answers.calibrate`` reads it (same folds), the fold models fitted on the OLD rows' signals and read
on the NEW rows (the same rows, signals recomputed) at the shipped threshold: the shipped calibrator meeting the
fixed kinds. Dev rows only.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

from ragapp.core.lang import is_chinese
from ragapp.qa import answer_fit
from ragapp.qa.rewrite import split_parts
from ragapp.qa.select import _FACT_EN, _FACT_ZH
from ragbench.answers.answer_set import TYPES
from ragbench.answers.calibrate import COMMON, FOLDS, calibratable, gated, right
from ragbench.answers.scoring import summarize
from ragbench.answers.truth import load_rows


def _module(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("answer_fit_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def text_signals(fit: ModuleType, question: str, reply: str) -> dict[str, float]:
    """The signals ``ragapp.qa.confidence`` computes from the question and reply alone, with ``fit``'s kinds."""
    kind = fit.asked_kind(question)
    fits = not fit.leaves_slot(reply) and (kind is None or fit.has_kind(reply, kind, question))
    fact = _FACT_ZH if is_chinese(question) else _FACT_EN
    bare = kind in ("number", "version", "year") or bool(fact.search(question))
    return {"fits": float(fits), "asks_value": float(kind is not None), "bare_fact": float(bare)}


def rows(old_fit: str, source: str, target: str) -> None:
    old = _module(old_fit)
    data = json.loads(Path(source).read_text("utf-8"))
    if any(r["split"] != "dev" for r in data["rows"]):
        raise SystemExit("dev rows only")
    counts = dict.fromkeys(("changed", "unchanged", "not reproduced", "parts", "parts moved"), 0)
    for row in data["rows"]:
        signals = row.get("signals") or {}
        if not signals:
            continue
        question, reply = row["question"], row["answer"]
        pieces = split_parts(question, 3)
        if signals.get("part") or len(pieces) > 1:
            moved = any(old.asked_kind(p) != answer_fit.asked_kind(p) for p in pieces)
            counts["parts moved" if moved else "parts"] += 1
            if moved:
                print("several parts, a kind moved, kept as logged:", row["id"], file=sys.stderr)
            continue
        before = text_signals(old, question, reply)
        if any(signals.get(k) != v for k, v in before.items()):
            counts["not reproduced"] += 1
            print("not reproduced, kept as logged:", row["id"], file=sys.stderr)
            continue
        after = text_signals(answer_fit, question, reply)
        counts["changed" if after != before else "unchanged"] += 1
        if after != before:
            print("changed:", row["id"], before, "->", after, file=sys.stderr)
        signals.update(after)
    data["rechecked"] = "fits, asks_value, bare_fact of one-part rows recomputed with the question kinds of a10ee2d"
    Path(target).write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(f"{source}: {counts}", file=sys.stderr)


def oof(old_files: str, new_files: str, threshold: float) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    old_rows = [r for p in old_files.split(",") for r in load_rows(Path(p))]
    new_rows = [r for p in new_files.split(",") for r in load_rows(Path(p))]
    new_of = {r.id: r for r in new_rows}
    those = [r for r in old_rows if calibratable(r) and not r.signals.get("selected")]
    x = np.array([[float(r.signals.get(f, 0.0)) for f in COMMON] for r in those])
    xn = np.array([[float(new_of[r.id].signals.get(f, 0.0)) for f in COMMON] for r in those])
    y = np.array([right(r) for r in those], dtype=int)
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z, zn = (x - mean) / scale, (xn - mean) / scale
    p_old, p_new = np.zeros(len(those)), np.zeros(len(those))
    folds = StratifiedKFold(n_splits=min(FOLDS, int(y.sum()), int((1 - y).sum())), shuffle=True, random_state=50)
    for train, held in folds.split(z, y):
        model = LogisticRegression(C=0.5, max_iter=2000).fit(z[train], y[train])
        p_old[held] = model.predict_proba(z[held])[:, 1]
        p_new[held] = model.predict_proba(zn[held])[:, 1]
    for name, scored, p in (("old signals", old_rows, p_old), ("fixed signals", new_rows, p_new)):
        probability = {r.id: float(v) for r, v in zip(those, p, strict=True)}
        s = summarize(gated(scored, probability, threshold), TYPES)
        figures = [s["overall"], s["by_lang"]["en"], s["by_lang"]["zh"]]
        print(name, "all / en / zh:", " / ".join(f"{f['truthfulness']:+.2f}" for f in figures))


if __name__ == "__main__":
    if sys.argv[1:2] == ["rows"]:
        rows(*sys.argv[2:5])
    else:
        oof(sys.argv[2], sys.argv[3], float(sys.argv[4]))
