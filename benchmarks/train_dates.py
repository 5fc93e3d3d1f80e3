#!/usr/bin/env python3
"""Train the date gate (``scrapy_cepr/models/dates.json``, :mod:`scrapy_cepr.core.dates`)
on WCXB dev and report its out-of-fold numbers.

Per page, :func:`scrapy_cepr.core.metadata._read_metadata` without the gate gives the
declared date (JSON-LD, microdata, OpenGraph, ``<meta>``, the URL, a confirmed
``WebPage`` date) and, where there is none, the *candidate* read from the page's text
(the date next to the headline, else htmldate's search of the whole page) with its
features. A candidate's label is 1 when it is the gold's day. The gate is a LightGBM
binary model; it is cross-validated with 5 folds grouped by domain (the same folds as
``metadata_wcxb.py --folds``: a stable hash of ``WcxbSample.domain``), and every number
printed is out of fold: each page's candidate is judged by the model trained on the
other four folds. The whole-page scores combine the declared dates (not learned) with
the gated candidates, scored as ``metadata_wcxb.py`` does (same day; spurious = a date
on a page whose gold has none).

The threshold: for each held-out fold, the lowest threshold whose same-day score on the
other four folds (their out-of-fold probabilities, from an inner cross-validation) keeps
the spurious rate at or under ``--max-spurious`` (default 0.12: no more spurious dates than
the rules alone give on WCXB dev, 12.2 %, since a wrong date is worse than none); the curve of threshold → (same day,
spurious) pooled out of fold is printed too. The shipped model is trained on all pages;
its threshold is the median of the folds' choices.

Usage::

    python benchmarks/train_dates.py [--wcxb DIR] [--cache FILE] [--write] [--max-spurious 0.12]

``--cache`` keeps the per-page candidates (JSON; no page text) so that a second run trains
without reading the pages again. ``--write`` writes the model file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scrapy_cepr import extract  # noqa: E402
from scrapy_cepr.core.dates import FEATURE_NAMES, SOURCES  # noqa: E402
from scrapy_cepr.core.metadata import _read_metadata  # noqa: E402
from scrapy_cepr.core.page import decode_html  # noqa: E402
from scrapy_cepr.evaluation import load_wcxb  # noqa: E402

DEFAULT_WCXB = "/work/shared/data/wcxb-dev"
MODEL_PATH = Path(__file__).resolve().parent.parent / "scrapy_cepr" / "models" / "dates.json"
PARAMS = {"objective": "binary", "learning_rate": 0.05, "num_leaves": 7, "min_data_in_leaf": 10,
          "feature_fraction": 0.8, "bagging_fraction": 0.8, "bagging_freq": 1, "lambda_l2": 1.0,
          "seed": 7, "deterministic": True, "force_row_wise": True, "verbose": -1, "num_threads": 1}
ROUNDS = 150
K = 5


def fold_of(domain: str, k: int = K) -> int:
    """The fold of *domain* (as ``metadata_wcxb.folds_of``)."""
    return int(hashlib.sha1(domain.encode()).hexdigest(), 16) % k


def page_row(sample) -> dict:
    """One page's declared date, candidate and gold (no page text kept)."""
    r = extract(sample.html, url=sample.url, method="cepr-article")
    meta, cand = _read_metadata(decode_html(sample.html), url=sample.url, headline=r.title, gate=False)
    source = meta["sources"].get("date_published")
    declared = (meta["date_published"] or "")[:10] if source not in (None, "page text") else ""
    return {"url": sample.url, "domain": sample.domain, "gold": sample.date[:10],
            "declared": declared, "declared_source": source if declared else None,
            "cand": None if cand is None else {"source": cand.source, "day": cand.day,
                                                "x": [None if np.isnan(v) else float(v) for v in cand.features]}}


def collect(wcxb: str, workers: int) -> list[dict]:
    samples = list(load_wcxb(wcxb))
    with Pool(workers) as pool:
        return pool.map(page_row, samples, chunksize=8)


def matrix(rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
    """Features, labels and fold of the rows that have a candidate."""
    with_c = [r for r in rows if r["cand"]]
    x = np.array([[np.nan if v is None else v for v in r["cand"]["x"]] for r in with_c], dtype=float)
    y = np.array([int(bool(r["gold"]) and r["cand"]["day"] == r["gold"]) for r in with_c])
    folds = np.array([fold_of(r["domain"]) for r in with_c])
    return x, y, folds, with_c


def fit(x: np.ndarray, y: np.ndarray):
    import lightgbm as lgb

    return lgb.train(PARAMS, lgb.Dataset(x, y, feature_name=list(FEATURE_NAMES)), num_boost_round=ROUNDS)


def oof(x: np.ndarray, y: np.ndarray, folds: np.ndarray) -> np.ndarray:
    p = np.zeros(len(y))
    for f in sorted(set(folds)):
        test = folds == f
        p[test] = fit(x[~test], y[~test]).predict(x[test])
    return p


def scores(rows: list[dict], accept: dict[int, bool]) -> tuple[float, float, int, int, int, int]:
    """Same day, spurious share, right, n with gold, spurious, n without gold; *accept*
    maps ``id(row)`` of a row with a candidate to whether its candidate is kept."""
    right = n = spur = none = 0
    for r in rows:
        ours = r["declared"] or (r["cand"]["day"] if r["cand"] and accept.get(id(r)) else "")
        if r["gold"]:
            n += 1
            right += ours == r["gold"]
        else:
            none += 1
            spur += bool(ours)
    return right / max(n, 1), spur / max(none, 1), right, n, spur, none


def choose_threshold(rows: list[dict], with_c: list[dict], p: np.ndarray, max_spurious: float) -> float:
    """The lowest threshold (of a grid) with at most *max_spurious* spurious dates and the
    best same-day score among those."""
    best = (-1.0, 1.0)
    for t in np.arange(0.05, 0.96, 0.025):
        same, spur, *_ = scores(rows, {id(r): bool(q >= t) for r, q in zip(with_c, p, strict=True)})
        if spur <= max_spurious and same > best[0]:
            best = (same, float(t))
    return best[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", default=os.environ.get("CEPR_WCXB_DIR", DEFAULT_WCXB))
    parser.add_argument("--cache", metavar="FILE")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-spurious", type=float, default=0.12)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    t0 = time.time()
    if args.cache and Path(args.cache).exists():
        rows = json.loads(Path(args.cache).read_text())
    else:
        rows = collect(args.wcxb, args.workers)
        if args.cache:
            Path(args.cache).write_text(json.dumps(rows))
    x, y, folds, with_c = matrix(rows)
    print(f"{len(rows)} pages, {len(with_c)} with a candidate ({int(y.sum())} right), read in {time.time() - t0:.0f} s")
    base = scores(rows, {id(r): r["cand"]["source"] == "near" for r in with_c})
    print(f"rules alone (date next to the headline kept): same day {base[0]:.3f} ({base[2]}/{base[3]}), "
          f"spurious {base[1]:.1%} ({base[4]}/{base[5]})")
    allc = scores(rows, {id(r): True for r in with_c})
    print(f"every candidate kept: same day {allc[0]:.3f} ({allc[2]}/{allc[3]}), spurious {allc[1]:.1%} ({allc[4]}/{allc[5]})")
    p = oof(x, y, folds)
    print("\nOut of fold, pooled: threshold -> same day, spurious")
    for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        s = scores(rows, {id(r): bool(q >= t) for r, q in zip(with_c, p, strict=True)})
        print(f"  {t:.1f}: {s[0]:.3f} ({s[2]}/{s[3]}), {s[1]:.1%} ({s[4]}/{s[5]})")
    # Nested: the threshold of each held-out fold is chosen on the other folds' own
    # out-of-fold probabilities.
    accept: dict[int, bool] = {}
    chosen = []
    print(f"\nPer fold (threshold chosen on the other folds, spurious <= {args.max_spurious:.0%}):")
    print("| fold | threshold | same day | spurious | gated kept: right / wrong / spurious |")
    print("|---|---|---|---|---|")
    for f in range(K):
        train = folds != f
        inner = oof(x[train], y[train], np.array([fold_of(r["domain"] + "#") for r in np.array(with_c)[train]]))
        train_rows = [r for r in rows if fold_of(r["domain"]) != f]
        t = choose_threshold(train_rows, [r for r, m in zip(with_c, train, strict=True) if m], inner, args.max_spurious)
        chosen.append(t)
        fold_rows = [r for r in rows if fold_of(r["domain"]) == f]
        fold_acc = {id(r): bool(q >= t) for r, q, m in zip(with_c, p, folds == f, strict=True) if m}
        accept.update(fold_acc)
        s = scores(fold_rows, fold_acc)
        kept = [r for r in with_c if accept.get(id(r)) and fold_of(r["domain"]) == f]
        ok = sum(r["gold"] == r["cand"]["day"] for r in kept)
        sp = sum(not r["gold"] for r in kept)
        print(f"| {f} | {t:.3f} | {s[0]:.3f} | {s[1]:.1%} | {ok} / {len(kept) - ok - sp} / {sp} |")
    s = scores(rows, accept)
    kept = [r for r in with_c if accept.get(id(r))]
    ok = sum(r["gold"] == r["cand"]["day"] for r in kept)
    with_gold = sum(bool(r["gold"]) for r in kept)
    print(f"\nOut of fold, pooled, nested thresholds: same day {s[0]:.3f} ({s[2]}/{s[3]}), spurious {s[1]:.1%} "
          f"({s[4]}/{s[5]}); gated dates kept {len(kept)}, right {ok}, precision where the gold has a date "
          f"{ok / max(with_gold, 1):.2f}, over all kept {ok / max(len(kept), 1):.2f}")
    for src in SOURCES:
        ks = [r for r in kept if r["cand"]["source"] == src]
        g = [r for r in ks if r["gold"]]
        print(f"  {src}: kept {len(ks)}, right {sum(r['gold'] == r['cand']['day'] for r in g)}, wrong "
              f"{sum(r['gold'] != r['cand']['day'] for r in g)}, spurious {len(ks) - len(g)}")
    threshold = float(np.median(chosen))
    print(f"thresholds chosen: {', '.join(f'{t:.3f}' for t in chosen)}; shipped {threshold:.3f}")
    if args.write:
        from treemodel import lightgbm_to_spec, write_spec

        spec = lightgbm_to_spec(fit(x, y), feature_names=list(FEATURE_NAMES), leaf_digits=6)
        write_spec(spec, str(MODEL_PATH))
        print(f"wrote {MODEL_PATH} (threshold {threshold:.3f}: set _GATE_THRESHOLD in core/metadata.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
