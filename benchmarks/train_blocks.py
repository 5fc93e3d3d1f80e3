"""Train CEPR-Typed's block classifier and print its cross-validated table.

    PYTHONPATH=$PWD CEPR_BENCHMARK_DIR=/work/shared/data/article-extraction-benchmark \\
        python benchmarks/train_blocks.py [--cache DIR] [--types cv|gold] [--ablation] [--no-export]
    python benchmarks/train_blocks.py --speed   # ms/page against the lxml parse, no training

Data: the WCXB dev pages (``/work/shared/data/wcxb-dev`` or ``$CEPR_WCXB_DIR``) and the 181
pages of the article-extraction benchmark (``$CEPR_BENCHMARK_DIR``). Each page is parsed,
CEPR-Article runs once, and its display blocks get the features of
:mod:`scrapy_cepr.core.blocks` (cached in ``--cache``, outside the repository). A block's
label is "content" when most of its words are in the gold main text (word trigrams for
blocks of 3 words or more; a shorter block counts only when its words occur in the gold
in that order *and* a longer content block lies within 2 blocks, so that "Home" or
"Share" is not content because the word occurs somewhere in the story).

LightGBM (100 trees, ≤ 31 leaves, depth ≤ 6, every feature in every tree, deterministic, one thread) is trained with folds
grouped by domain (WCXB ``domain``; AEB: the URL's host), GroupKFold(5). Out-of-fold block
probabilities are assembled into page texts by :func:`scrapy_cepr.methods.typed.assemble`
exactly as the method does, and scored with WCXB's word F1 per page type and the AEB
benchmark's shingle F1. The page type column is the gold type (``--types gold``) or
out-of-fold predictions of the page-type classifier (``--types cv``, the honest number).
The final model is trained on all pages and written to ``scrapy_cepr/models/blocks.json``
(byte-for-byte reproducible: fixed seeds, deterministic LightGBM, sorted JSON).

Plain pages (``--report-plain``, ``--augment-plain``): every page is also rewritten by
:func:`scrapy_cepr.evaluation.plain_page` (no declarations, HTML5's sectioning elements as
``div``/``span``) and analysed without its URL (a second cache beside ``--cache``). Each
plain copy is in the fold of its page (the folds are those of the pages as served, so the
served rows of the table do not move with the option), gets the out-of-fold page type of
its own features, and its out-of-fold text is scored in a second table.
``--augment-plain`` also trains the block classifier (fold models and the exported one)
on the plain copies; the page type is trained as ``train_pagetype.py`` trains it by
default (its feature-row plain copies and its heading-free copies; its ``--augment-plain``
is not used; ``--pagetype-no-heading-free``: without the heading-free copies).
``--pagetype-seed`` sets
the page-type model's LightGBM seed for its out-of-fold types (the block classifier's
seed stays fixed).

Models trained on another page model (``--train-cache DIR``): *DIR* is the cache
directory of an earlier checkout (its ``cache.pkl`` and page-type feature file, as that
checkout's ``train_blocks.py --cache DIR/cache.pkl`` left them). The fold models of the
page type and of the block classifier are fitted on *DIR*'s rows and score this
checkout's rows of the same pages out of fold: what the models shipped from that
checkout give on this code, for a change of the page model that ships without a
retrain. Only the served table is printed (no ablation, no export).
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import sys
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from treemodel import lightgbm_to_spec, write_spec

from scrapy_cepr.core.blocks import FEATURES, PAGE_TYPES, with_page_type
from scrapy_cepr.core.page import Page
from scrapy_cepr.evaluation import (
    benchmark_counts,
    benchmark_summary,
    load_corpus,
    load_wcxb,
    plain_page,
    word_f1,
)
from scrapy_cepr.methods import typed

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "scrapy_cepr" / "models" / "blocks.json"
WORD = re.compile(r"\w+")

LGB_PARAMS = {
    "objective": "binary", "n_estimators": 100, "num_leaves": 31, "max_depth": 6, "learning_rate": 0.1, "min_child_samples": 40,
    "subsample": 1.0, "colsample_bytree": 1.0, "reg_lambda": 1.0, "deterministic": True, "force_row_wise": True,
    "n_jobs": 1, "random_state": 17, "verbose": -1,
}
FOLDS = 5


def labels(lines: list[str], gold: str) -> tuple[np.ndarray, np.ndarray]:
    """``(label, words)`` per block: bool content label and the block's word count."""
    gtok = WORD.findall(gold.lower())
    tri = set(zip(gtok, gtok[1:], gtok[2:]))
    joined = " " + " ".join(gtok) + " "
    toks = [WORD.findall(line.lower()) for line in lines]
    n = len(lines)
    lab = np.zeros(n, bool)
    short = np.zeros(n, bool)
    for i, t in enumerate(toks):
        if len(t) >= 3:
            grams = list(zip(t, t[1:], t[2:]))
            lab[i] = sum(g in tri for g in grams) >= 0.5 * len(grams)
        elif t:
            short[i] = (" " + " ".join(t) + " ") in joined
    longc = lab.copy()
    for i in np.flatnonzero(short):
        lo, hi = max(0, i - 2), min(n, i + 3)
        lab[i] = bool(longc[lo:hi].any())
    return lab, np.array([len(t) for t in toks], np.float64)


def _pages(wcxb_dir: str, aeb_dir: str):
    for s in load_wcxb(wcxb_dir):
        yield "wcxb", s.id, s.html, s.url, s.gold_body, s.page_type, s.domain
    for s in load_corpus(aeb_dir):
        yield "aeb", s.id, s.html, s.url, s.gold_body, "article", "aeb:" + (urlsplit(s.url or "").hostname or s.id)


def plain_cache_path(path: Path) -> Path:
    """The cache of the plain copies beside the cache *path* of the pages."""
    return path.with_name(f"{path.stem}-plain{path.suffix}")


def build_cache(wcxb_dir: str, aeb_dir: str, path: Path, plain: bool = False) -> list[dict]:
    """One row per page (``plain=True``: per page rewritten by
    :func:`~scrapy_cepr.evaluation.plain_page`, analysed without its URL), pickled at
    *path*."""
    if path.is_file():
        with path.open("rb") as fh:
            return pickle.load(fh)
    rows = []
    params = typed.TypedParams().article_params()  # CEPR-Article's parameters as cepr-typed runs it
    t0 = time.time()
    for k, (corpus, pid, html, url, gold, ptype, group) in enumerate(_pages(wcxb_dir, aeb_dir)):
        page = Page.from_html(plain_page(html), url=None) if plain else Page.from_html(html, url=url)
        state, art, feats, anc = typed._analyse(page, params)
        if feats is None or len(feats) == 0:
            lines, x = [], np.zeros((0, len(FEATURES)), np.float32)
            starts = ends = np.zeros(0, np.int64)
            thread = np.zeros(0, bool)
            paths = np.zeros(0, np.int64)
        else:
            starts, ends, x = feats.starts, feats.ends, feats.x
            lines = [" ".join(page.texts[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
            thread = typed._thread_blocks(page, state, art, feats, params)
            paths = page.path_ids[starts]
        lab, words = labels(lines, gold)
        rows.append({"corpus": corpus, "id": pid, "type": ptype, "group": group, "gold": gold, "lines": lines, "x": x,
                     "y": lab, "words": words, "article": art.body, "anc": anc, "thread": thread, "paths": paths})
        if k % 200 == 0:
            print(f"  cached {k} pages, {time.time() - t0:.0f}s", file=sys.stderr)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        pickle.dump(rows, fh)
    return rows


def one_hot(ptype: str) -> np.ndarray:
    out = np.zeros(len(PAGE_TYPES), np.float32)
    out[PAGE_TYPES.index(ptype)] = 1.0
    return out


def design(rows, proba):
    xs, ys, ws, gs, page_of = [], [], [], [], []
    for i, r in enumerate(rows):
        if len(r["lines"]) == 0:
            continue
        xs.append(with_page_type(r["x"], proba[i]))
        ys.append(r["y"])
        ws.append(r["words"])
        gs.extend([r["group"]] * len(r["lines"]))
        page_of.extend([i] * len(r["lines"]))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(ws), np.array(gs), np.array(page_of)


def fit(x, y, w):
    import lightgbm as lgb

    model = lgb.LGBMClassifier(**LGB_PARAMS)
    model.fit(x, y, sample_weight=np.sqrt(w) + 0.1)
    return model


def oof_probs(x, y, w, groups, folds=FOLDS, n_served=None, train_mask=None):
    """Out-of-fold content probabilities of the blocks. The folds are ``GroupKFold`` over
    the first *n_served* blocks (default all); a later block (a plain copy's) is in the
    fold of its group. *train_mask*: the blocks the fold models may train on (default
    all)."""
    from sklearn.model_selection import GroupKFold

    n_served = len(y) if n_served is None else n_served
    fold = np.full(len(y), -1)
    for k, (_, te) in enumerate(GroupKFold(n_splits=folds).split(x[:n_served], y[:n_served], groups[:n_served])):
        fold[te] = k
    fold_of = dict(zip(groups[:n_served].tolist(), fold[:n_served].tolist()))
    fold[n_served:] = [fold_of[g] for g in groups[n_served:].tolist()]
    train_mask = np.ones(len(y), bool) if train_mask is None else train_mask
    out = np.zeros(len(y))
    for k in range(folds):
        tr, te = (fold != k) & train_mask, fold == k
        out[te] = fit(x[tr], y[tr], w[tr]).predict_proba(x[te])[:, 1]
    return out


#: Assembly variants of the ablation: (label, forced assembly type or None, TypedParams overrides).
ABLATION = [
    ("cepr-typed (all steps)", None, {}),
    ("- assembly by type (threshold on every page)", "service", {}),
    ("- type (article assembly on every page)", "article", {}),
    ("- region growth (CEPR-Article's subtree only)", None, {"region_threshold": 1.0}),
    ("- comment records' boilerplate free in the article subtree", None, {"region_free_records": False}),
    ("- classifier's additions in the region", None, {"article_threshold": 1.0}),
    ("- classifier's drops in the region", None, {"article_floor": 0.0, "article_loose_floor": 0.0}),
    ("- loose lines need the classifier's word too", None, {"article_loose_floor": 0.0}),
    ("- dropping repeated lines (non-article types)", None, {"drop_repeats": False}),
    ("- dropping wrapped comment threads (articles)", None, {"drop_threads": False}),
    ("- dropping dated, unwrapped comment threads (articles)", None, {"drop_dated_threads": False}),
    ("- dropping a story's second copy (articles, documentation)", None, {"copy_share": 1.0}),
]


def score(rows, proba, block_p, page_of, label="", assembly=None, params=None, quiet=False):
    """Per-type WCXB word F1 and AEB F1 of the assembled texts (and CEPR-Article's)."""
    params = params or typed.TypedParams()
    per_type = defaultdict(list)
    base = defaultdict(list)
    aeb, aeb_base = [], []
    starts = np.searchsorted(page_of, np.arange(len(rows)))
    ends = np.searchsorted(page_of, np.arange(len(rows)), side="right")
    for i, r in enumerate(rows):
        p = block_p[starts[i]:ends[i]]
        if len(r["lines"]):
            predicted = PAGE_TYPES[int(np.argmax(proba[i]))]
            if assembly:
                keep, used = typed.assemble(p, r["x"], assembly, r["anc"], params), assembly
            else:
                keep, used = typed.assemble_page(p, r["x"], predicted, float(proba[i][0]), r["anc"], params)
            keep = typed.after_assembly(keep, r["x"], r["lines"].__getitem__, used, predicted,
                                        lambda r=r: r["thread"], params, r.get("paths"))
            text = "\n".join(line for line, k in zip(r["lines"], keep) if k)
        else:
            text = ""
        if r["corpus"] == "wcxb":
            per_type[r["type"]].append(word_f1(text, r["gold"])[2])
            base[r["type"]].append(word_f1(r["article"], r["gold"])[2])
        else:
            aeb.append(benchmark_counts(text, r["gold"]))
            aeb_base.append(benchmark_counts(r["article"], r["gold"]))
    allp = [v for t in per_type for v in per_type[t]]
    allb = [v for t in base for v in base[t]]
    row = {"all": float(np.mean(allp)), **{t: float(np.mean(per_type[t])) for t in PAGE_TYPES},
           "aeb": benchmark_summary(aeb)["f1"]}
    if not quiet:
        print(f"| {label} | " + " | ".join(f"{row[k]:.3f}" for k in ("all", *PAGE_TYPES)) + f" | {row['aeb']:.4f} |")
        print(f"| cepr-article | {np.mean(allb):.3f} | " + " | ".join(f"{np.mean(base[t]):.3f}" for t in PAGE_TYPES)
              + f" | {benchmark_summary(aeb_base)['f1']:.4f} |")
    return row


def page_type_oof(rows, wcxb_dir, aeb_dir, cache_dir, plain: bool = False,
                  seed: int | None = None, heading_free: bool = True) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Out-of-fold page-type probabilities of the page-type classifier
    (``benchmarks/train_pagetype.py``'s features, LightGBM parameters and training rows,
    *seed*; *heading_free*: trained on the heading-free copies too, as by default), with the same domain
    groups as the block classifier; with *plain*, also those of the plain copies (``[]``
    without), each from the model of its page's fold."""
    import train_pagetype as tp

    X, meta = tp.load_rows(Path(wcxb_dir), Path(aeb_dir), Path(cache_dir))
    X_free = tp.load_rows(Path(wcxb_dir), Path(aeb_dir), Path(cache_dir), copy="heading-free")[0] if heading_free else None
    if [m["id"] for m in meta] != [r["id"] for r in rows]:
        raise SystemExit("page-type rows and block rows are not the same pages")
    y = np.array([PAGE_TYPES.index(r["type"]) for r in rows])
    groups = [r["group"] for r in rows]
    wc = np.array([r["corpus"] == "wcxb" for r in rows])
    proba_plain: np.ndarray | None = None
    if plain:
        X_plain, _ = tp.load_rows(Path(wcxb_dir), Path(aeb_dir), Path(cache_dir), copy="plain")
        proba, proba_plain = tp.cross_validate(X, y, groups, plain=X_plain, seed=seed, heading_free=X_free)
    else:
        proba = tp.cross_validate(X, y, groups, seed=seed, heading_free=X_free)
    for label, pr in (("", proba), (" of the plain copies", proba_plain)):
        if pr is not None:
            pred = pr.argmax(axis=1)
            print(f"page type{label} (out of fold): WCXB accuracy {np.mean(pred[wc] == y[wc]):.3f}, "
                  f"AEB pages read as article {np.mean(pred[~wc] == 0):.3f}")
    return ([row.astype(np.float32) for row in proba],
            [] if proba_plain is None else [row.astype(np.float32) for row in proba_plain])


def _pagetype_rows(cache_dir: Path, copy: str = "") -> tuple[np.ndarray, list[str]]:
    """The page-type feature rows a checkout's ``train_pagetype.load_rows`` cached in
    *cache_dir* (the served pages, AEB included; *copy*: its copies of that name, e.g.
    ``"heading-free"``), whatever that checkout's cache key, and the pages' ids."""
    import json

    found = sorted(cache_dir.glob(f"pagetype-{copy + '-' if copy else ''}[0-9a-f]*-True.npy"))
    if len(found) != 1:
        raise SystemExit(f"{cache_dir}: expected one pagetype-<key>-True.npy, found {len(found)}")
    meta = json.loads(found[0].with_suffix(".json").read_text())
    return np.load(found[0]), [m["id"] for m in meta]


def trained_elsewhere(rows, train_dir: Path, cache_dir: Path, seed: int | None = None) -> int:
    """``--train-cache``: the fold models (page type, then blocks) fitted on *train_dir*'s
    rows, scored on *rows* (this checkout's, same pages and folds)."""
    import train_pagetype as tp

    with (train_dir / "cache.pkl").open("rb") as fh:
        train_rows = pickle.load(fh)
    ids = [r["id"] for r in rows]
    x_train, train_ids = _pagetype_rows(train_dir)
    x_here, here_ids = _pagetype_rows(cache_dir)
    if [r["id"] for r in train_rows] != ids or train_ids != ids or here_ids != ids:
        raise SystemExit("the two caches do not hold the same pages in the same order")
    y = np.array([PAGE_TYPES.index(r["type"]) for r in rows])
    # The page-type fold models as that checkout trains them: with its heading-free
    # copies when it cached them (checkouts before they were trained on did not).
    free = sorted(train_dir.glob("pagetype-heading-free-[0-9a-f]*-True.npy"))
    x_free = _pagetype_rows(train_dir, "heading-free")[0] if free else None
    proba_train, proba_here = tp.cross_validate(x_train, y, [r["group"] for r in rows], plain=x_here, seed=seed,
                                                heading_free=x_free)
    wc = np.array([r["corpus"] == "wcxb" for r in rows])
    for label, pr in (("trained and scored there", proba_train), ("trained there, scored here", proba_here)):
        print(f"page type {label} (out of fold): WCXB accuracy {np.mean(pr.argmax(1)[wc] == y[wc]):.3f}")
    proba_train = [row.astype(np.float32) for row in proba_train]
    proba_here = [row.astype(np.float32) for row in proba_here]
    xt, yt, wt, gt, page_of_t = design(train_rows, proba_train)
    xh, yh, wh, gh, page_of_h = design(rows, proba_here)
    n = len(yt)
    p_all = oof_probs(np.vstack([xt, xh]), np.concatenate([yt, yh]), np.concatenate([wt, wh]),
                      np.concatenate([gt, gh]), n_served=n, train_mask=np.arange(n + len(yh)) < n)
    print(f"\nOut-of-fold word F1 on WCXB dev (macro per page type) and AEB shingle F1, fold models fitted on {train_dir}")
    print("| variant | all | " + " | ".join(PAGE_TYPES) + " | AEB F1 |")
    print("|---" * (len(PAGE_TYPES) + 3) + "|")
    score(train_rows, proba_train, p_all[:n], page_of_t, "cepr-typed, there")
    score(rows, proba_here, p_all[n:], page_of_h, "cepr-typed, here")
    return 0


def speed(wcxb_dir: str, aeb_dir: str, wcxb_step: int = 3) -> None:
    """Per page, back to back, parse first (after ``gc.collect()``): ``lxml.html.fromstring``,
    then ``extract(html, method=m)``, for cepr-article and cepr-typed; prints the median ms
    and the median of the per-page ratios to the parse (all AEB pages, every
    *wcxb_step*-th WCXB page)."""
    import gc
    import statistics

    import lxml.html

    from scrapy_cepr import extract
    from scrapy_cepr.core.page import decode_html

    methods = ["cepr-article", "cepr-typed"]
    for name, samples in (("AEB", list(load_corpus(aeb_dir))), ("WCXB dev", list(load_wcxb(wcxb_dir))[::wcxb_step])):
        pages = [s.html if isinstance(s.html, str) else decode_html(s.html) for s in samples]
        for html in pages[:5]:
            for m in methods:
                extract(html, method=m)
        ratio = {m: [] for m in methods}
        ms = {m: [] for m in ["parse", *methods]}
        for html in pages:
            for m in methods:
                gc.collect()
                t0 = time.perf_counter()
                lxml.html.fromstring(html)
                t1 = time.perf_counter()
                extract(html, method=m)
                t2 = time.perf_counter()
                ratio[m].append((t2 - t1) / (t1 - t0))
                ms[m].append((t2 - t1) * 1e3)
                ms["parse"].append((t1 - t0) * 1e3)
        print(f"{name} ({len(pages)} pages): median ms " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in ms.items())
              + "; × parse (median per page) " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in ratio.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default="/work/tmp/q-blocks/cache.pkl")
    ap.add_argument("--wcxb", default=os.environ.get("CEPR_WCXB_DIR", "/work/shared/data/wcxb-dev"))
    ap.add_argument("--aeb", default=os.environ.get("CEPR_BENCHMARK_DIR", "/work/shared/data/article-extraction-benchmark"))
    ap.add_argument("--types", choices=["gold", "cv"], default="cv",
                    help="page-type columns: gold types, or out-of-fold predictions (default; also used to train "
                         "the exported model)")
    ap.add_argument("--no-export", action="store_true")
    ap.add_argument("--ablation", action="store_true", help="also print the assembly ablation")
    ap.add_argument("--speed", action="store_true", help="only time cepr-article and cepr-typed against the parse")
    ap.add_argument("--report-plain", action="store_true",
                    help="also score every page's plain copy (evaluation.plain_page, no URL) out of fold")
    ap.add_argument("--augment-plain", action="store_true",
                    help="train the block classifier on the plain copies too (implies --report-plain)")
    ap.add_argument("--trees", type=int, default=LGB_PARAMS["n_estimators"],
                    help=f"boosting rounds of the block classifier (default {LGB_PARAMS['n_estimators']})")
    ap.add_argument("--learning-rate", type=float, default=LGB_PARAMS["learning_rate"],
                    help=f"its learning rate (default {LGB_PARAMS['learning_rate']})")
    ap.add_argument("--train-cache", type=Path, metavar="DIR",
                    help="fit the fold models on another checkout's cache directory and score this one's rows")
    ap.add_argument("--pagetype-seed", type=int, default=None,
                    help="LightGBM seed of the page-type model's out-of-fold types (default: train_pagetype's)")
    ap.add_argument("--pagetype-no-heading-free", action="store_true",
                    help="train the page-type fold models without the heading-free copies (train_pagetype --no-heading-free)")
    args = ap.parse_args(argv)
    LGB_PARAMS.update(n_estimators=args.trees, learning_rate=args.learning_rate)
    if args.speed:
        speed(args.wcxb, args.aeb)
        return 0
    plain = args.report_plain or args.augment_plain
    rows = build_cache(args.wcxb, args.aeb, Path(args.cache))
    if args.train_cache:
        return trained_elsewhere(rows, args.train_cache, Path(args.cache).parent, seed=args.pagetype_seed)
    prows = build_cache(args.wcxb, args.aeb, plain_cache_path(Path(args.cache)), plain=True) if plain else []
    if args.types == "gold":
        proba = [one_hot(r["type"]) for r in rows]
        pproba = [one_hot(r["type"]) for r in prows]
    else:
        proba, pproba = page_type_oof(rows, args.wcxb, args.aeb, Path(args.cache).parent, plain=plain,
                                      seed=args.pagetype_seed, heading_free=not args.pagetype_no_heading_free)
    x, y, w, groups, page_of = design(rows, proba)
    n_served = len(y)
    if plain:
        px, py, pw, pgroups, ppage_of = design(prows, pproba)
        x, y, w, groups = np.vstack([x, px]), np.concatenate([y, py]), np.concatenate([w, pw]), np.concatenate([groups, pgroups])
        print(f"{len(prows)} plain copies, {len(py)} blocks, {py.mean():.3f} content", file=sys.stderr)
    print(f"{len(rows)} pages, {n_served} blocks, {y[:n_served].mean():.3f} content", file=sys.stderr)
    train_mask = np.arange(len(y)) < n_served if plain and not args.augment_plain else None
    p_all = oof_probs(x, y, w, groups, n_served=n_served, train_mask=train_mask)
    p = p_all[:n_served]
    np.savez(Path(args.cache).with_name(f"oof-{args.types}.npz"), p=p, page_of=page_of, proba=np.array(proba))
    print(f"\nOut-of-fold word F1 on WCXB dev (macro per page type) and AEB shingle F1, page types: {args.types}"
          + (", block classifier trained with the plain copies" if args.augment_plain else ""))
    print("| variant | all | " + " | ".join(PAGE_TYPES) + " | AEB F1 |")
    print("|---" * (len(PAGE_TYPES) + 3) + "|")
    score(rows, proba, p, page_of, "cepr-typed")
    if plain:
        score(prows, pproba, p_all[n_served:], ppage_of, "cepr-typed, plain copies")
    if args.ablation:
        print("\nAssembly ablation (same out-of-fold block probabilities)")
        for label, assembly, over in ABLATION:
            row = score(rows, proba, p, page_of, assembly=assembly, params=typed.TypedParams(**over), quiet=True)
            print(f"| {label} | " + " | ".join(f"{row[k]:.3f}" for k in ("all", *PAGE_TYPES)) + f" | {row['aeb']:.4f} |")
    if not args.no_export:
        if plain and not args.augment_plain:
            x, y, w = x[:n_served], y[:n_served], w[:n_served]
        model = fit(x, y, w)
        spec = lightgbm_to_spec(model.booster_, feature_names=list(typed.MODEL_FEATURES))
        write_spec(spec, str(MODEL))
        print(f"wrote {MODEL.relative_to(ROOT)} ({MODEL.stat().st_size / 1024:.0f} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
