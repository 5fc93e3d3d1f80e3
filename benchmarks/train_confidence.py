"""Train the confidence model (:mod:`scrapy_cepr.core.confidence`) and export it to
``scrapy_cepr/models/confidence.json``: one command that recomputes everything from the
corpora.

    PYTHONPATH=$PWD CEPR_BENCHMARK_DIR=/work/shared/data/article-extraction-benchmark \\
        python benchmarks/train_confidence.py [--cache DIR] [--no-export]

Data: the WCXB dev pages (``/work/shared/data/wcxb-dev`` or ``$CEPR_WCXB_DIR``) and the
181 pages of the article-extraction benchmark (``$CEPR_BENCHMARK_DIR``). Each page is
parsed once; ``cepr-typed`` (the method the model is for) and the fallback candidates
(:data:`CANDIDATES`) run on it; for each result the script keeps the confidence features
(:func:`scrapy_cepr.core.confidence.features`) and the word F1 of its body against the
gold (WCXB's ``word_f1``, for both corpora). The cache (``--cache``, default
``/work/tmp/conf``) is keyed by a hash of ``scrapy_cepr/models/*.json`` (but
``confidence.json``), of ``core/confidence.py`` and of the methods' code, so a retrained
page-type or block model invalidates it.

The target is cepr-typed's F1 on the page. LightGBM (regression, small and deterministic)
is cross-validated with ``GroupKFold(5)`` on domains (WCXB ``domain``; AEB: URL host);
the out-of-fold predictions are saved beside the cache (``oof-<key>.npz``) for
``benchmarks/confidence.py``. Then one model is trained on all pages and written.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from treemodel import lightgbm_to_spec, write_spec

from scrapy_cepr.core.confidence import FEATURES, features
from scrapy_cepr.core.page import Page
from scrapy_cepr.evaluation import load_corpus, load_wcxb, word_f1
from scrapy_cepr.methods import get_method

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "scrapy_cepr" / "models" / "confidence.json"
#: The method the model is trained on (the crawl's default), then the fallback candidates.
PRIMARY = "cepr-typed"
CANDIDATES = ("cepr-article", "setpr", "nce")
LGB_PARAMS = {
    "objective": "regression", "n_estimators": 200, "num_leaves": 15, "max_depth": 5, "learning_rate": 0.04,
    "min_child_samples": 20, "subsample": 0.8, "subsample_freq": 1, "colsample_bytree": 0.7, "reg_lambda": 1.0,
    "deterministic": True, "force_row_wise": True, "n_jobs": 1, "random_state": 17, "verbose": -1,
}
FOLDS = 5


def cache_key() -> str:
    """Hash of what the cached features depend on: the packaged models (not the
    confidence model itself), the features' code and the methods' code."""
    h = hashlib.sha256()
    files = sorted(p for p in (ROOT / "scrapy_cepr" / "models").glob("*.json") if p.name != MODEL.name)
    files += [ROOT / "scrapy_cepr" / "core" / "confidence.py"]
    files += sorted((ROOT / "scrapy_cepr" / "methods").glob("*.py")) + sorted((ROOT / "scrapy_cepr" / "core").glob("*.py"))
    for p in files:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _pages(wcxb_dir: str, aeb_dir: str):
    for s in load_wcxb(wcxb_dir):
        yield "wcxb", s.id, s.html, s.url, s.gold_body, s.page_type, s.domain
    for s in load_corpus(aeb_dir):
        yield "aeb", s.id, s.html, s.url, s.gold_body, "article", "aeb:" + (urlsplit(s.url or "").hostname or s.id)


def build_cache(wcxb_dir: str, aeb_dir: str, cache_dir: Path) -> list[dict]:
    """One row per page: ``corpus, id, type, group`` and per method (:data:`PRIMARY` and
    :data:`CANDIDATES`) ``x`` (features or None) and ``f1``."""
    path = cache_dir / f"cache-{cache_key()}.pkl"
    if path.is_file():
        with path.open("rb") as fh:
            return pickle.load(fh)
    rows = []
    t0 = time.time()
    methods = (PRIMARY, *CANDIDATES)
    specs = {m: (get_method(m), get_method(m).make_params()) for m in methods}
    for k, (corpus, pid, html, url, gold, ptype, group) in enumerate(_pages(wcxb_dir, aeb_dir)):
        page = Page.from_html(html, url=url)
        row = {"corpus": corpus, "id": pid, "type": ptype, "group": group}
        types = None
        for m in methods:
            spec, params = specs[m]
            try:
                res = spec.run(page, params)
            except Exception as exc:  # a method failing on a page: no body
                print(f"  {m} failed on {pid}: {exc!r}", file=sys.stderr)
                row[m] = {"x": None, "f1": word_f1("", gold)[2], "body": ""}
                continue
            if m == PRIMARY:
                types = res.page_types
            x = features(page, res.nodes, res.body, types if types is not None else res.page_types, res.tau)
            row[m] = {"x": x, "f1": word_f1(res.body, gold)[2], "body": res.body}
        rows.append(row)
        if k % 200 == 0:
            print(f"  cached {k} pages, {time.time() - t0:.0f}s", file=sys.stderr)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        pickle.dump(rows, fh)
    return rows


def design(rows: list[dict], method: str = PRIMARY) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, has)``: features (NaN rows where *method* has no body), F1, and the mask of
    pages with features."""
    X = np.full((len(rows), len(FEATURES)), np.nan)
    y = np.array([r[method]["f1"] for r in rows])
    has = np.zeros(len(rows), bool)
    for i, r in enumerate(rows):
        if r[method]["x"] is not None:
            X[i] = r[method]["x"]
            has[i] = True
    return X, y, has


def fit(X: np.ndarray, y: np.ndarray):
    import lightgbm as lgb

    model = lgb.LGBMRegressor(**LGB_PARAMS)
    model.fit(X, y)
    return model


def folds(rows: list[dict]):
    from sklearn.model_selection import GroupKFold

    groups = np.array([r["group"] for r in rows])
    return list(GroupKFold(n_splits=FOLDS).split(np.zeros(len(rows)), groups=groups))


def oof(rows: list[dict], methods=(PRIMARY, *CANDIDATES)) -> dict[str, np.ndarray]:
    """Out-of-fold confidence of each method's result on every page (0.0 where the
    method has no body), from models trained on :data:`PRIMARY`'s results of the other
    folds."""
    X, y, has = design(rows)
    out = {m: np.zeros(len(rows)) for m in methods}
    designs = {m: design(rows, m) for m in methods}
    for tr, te in folds(rows):
        tr = tr[has[tr]]
        model = fit(X[tr], y[tr])
        for m in methods:
            Xm, _, hm = designs[m]
            sel = te[hm[te]]
            if sel.size:
                out[m][sel] = np.clip(model.predict(Xm[sel]), 0.0, 1.0)
    return out


def auc_low(conf: np.ndarray, f1: np.ndarray, cut: float = 0.5) -> float:
    """ROC AUC of ``1 - conf`` for detecting the pages with ``f1 < cut``."""
    from sklearn.metrics import roc_auc_score

    low = f1 < cut
    if low.all() or not low.any():
        return float("nan")
    return float(roc_auc_score(low, -conf))


def auc_cell(conf: np.ndarray, f1: np.ndarray, cut: float = 0.5) -> str:
    """:func:`auc_low` for a table cell: 4 decimals, or "—" (with no page below *cut*, or
    none above it, the AUC is undefined)."""
    auc = auc_low(conf, f1, cut)
    return "—" if np.isnan(auc) else f"{auc:.4f}"


def top_share_f1(conf: np.ndarray, f1: np.ndarray, share: float = 0.8) -> float:
    """Mean F1 of the ``share`` most confident pages (ties broken by page order)."""
    order = np.argsort(-conf, kind="stable")
    k = int(round(share * len(conf)))
    return float(f1[order[:k]].mean())


def report(rows: list[dict], pred: dict[str, np.ndarray]) -> None:
    """The confidence table (out of fold) per corpus."""
    corpus = np.array([r["corpus"] for r in rows])
    f1 = np.array([r[PRIMARY]["f1"] for r in rows])
    conf = pred[PRIMARY]
    print(f"Confidence of {PRIMARY}, out of fold (GroupKFold({FOLDS}) by domain)")
    print("| corpus | pages | mean F1 | pages F1 < 0.5 | ROC AUC (F1 < 0.5) | mean F1, top 80 % | Spearman |")
    print("|---|---|---|---|---|---|---|")
    from scipy.stats import spearmanr

    for name, sel in (("WCXB dev", corpus == "wcxb"), ("AEB", corpus == "aeb"), ("both", np.ones(len(rows), bool))):
        print(f"| {name} | {sel.sum()} | {f1[sel].mean():.4f} | {(f1[sel] < 0.5).sum()} | {auc_cell(conf[sel], f1[sel])} "
              f"| {top_share_f1(conf[sel], f1[sel]):.4f} | {spearmanr(conf[sel], f1[sel]).statistic:.3f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default="/work/tmp/conf")
    ap.add_argument("--wcxb", default=os.environ.get("CEPR_WCXB_DIR", "/work/shared/data/wcxb-dev"))
    ap.add_argument("--aeb", default=os.environ.get("CEPR_BENCHMARK_DIR", "/work/shared/data/article-extraction-benchmark"))
    ap.add_argument("--no-export", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.time()
    rows = build_cache(args.wcxb, args.aeb, Path(args.cache))
    t1 = time.time()
    pred = oof(rows)
    np.savez(Path(args.cache) / f"oof-{cache_key()}.npz", **{m: v for m, v in pred.items()})
    report(rows, pred)
    if not args.no_export:
        X, y, has = design(rows)
        model = fit(X[has], y[has])
        spec = lightgbm_to_spec(model.booster_, feature_names=list(FEATURES), leaf_digits=6)
        write_spec(spec, str(MODEL))
        print(f"wrote {MODEL.relative_to(ROOT)} ({MODEL.stat().st_size / 1024:.0f} KB)")
    print(f"time: cache {t1 - t0:.0f} s, training and report {time.time() - t1:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
