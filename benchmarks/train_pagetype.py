"""Train the 7-type page classifier (:mod:`scrapy_cepr.core.pagetype`) and export it to
``scrapy_cepr/models/pagetype.json``.

Data: WCXB's development pages (``CEPR_WCXB_DIR`` or ``--wcxb``; 1,358 pages, 7 types,
CC-BY-4.0, Foley 2026) and, with ``--with-aeb``, the 181 article pages of the
article-extraction benchmark (``CEPR_BENCHMARK_DIR``). Features come from
:func:`~scrapy_cepr.core.pagetype.page_features` on the parsed page (cached with
``--cache DIR``, not in the repository).

Reports, with folds grouped by domain (sklearn ``GroupKFold``, 5 folds, on
``WcxbSample.domain``; AEB pages grouped by URL host): the cross-validated 7x7 confusion
matrix and accuracy on WCXB, how many AEB pages are classified ``article`` (held out
when the model is trained on WCXB alone, cross-validated with ``--with-aeb``), and the
types of the project's own fixtures (``tests/fixtures/pagetype_*.html`` and
``index_*.html``). Then trains on all pages and writes the model (``--out``; nothing is
written with ``--no-export``).

Plain pages: every page is also rewritten by :func:`scrapy_cepr.evaluation.plain_page`
(no declarations, no HTML5 sectioning elements) and read without its URL; the
out-of-fold accuracy on these *real* plain copies is reported beside the one on the
feature-row copies of :func:`as_plain_page` (each copy is scored by the fold model that
did not see its page). ``--augment-plain`` also trains on the real plain copies (weight
:data:`PLAIN_PAGE_WEIGHT`, in the fold of their page), besides the feature-row copies.
Heading-free pages: every page is also rewritten by
:func:`scrapy_cepr.evaluation.font_heading_page` (the plain page with its paragraphs as
``<font>`` and ``<br><br>`` and its headings as ``<font size=N><b>``, as pages of the
1990s and 2000s wrote them), read without its URL, and trained on with weight
:data:`HEADING_FREE_WEIGHT`; each copy is scored by the fold model that did not see its
page (``--no-heading-free``: scored, not trained on).
``--seed`` sets LightGBM's seed (default: the shipped one); ``--bag K`` trains K boosters
(seeds SEED … SEED + K − 1) and averages their raw scores, in the folds and in the
exported file (default 1).

LightGBM parameters are small and deterministic (``deterministic=True``,
``num_threads=1``, fixed seed), so two runs write the same file.

    pip install -e ".[train]"
    CEPR_WCXB_DIR=/path/to/wcxb-dev CEPR_BENCHMARK_DIR=/path/to/aeb \\
        python benchmarks/train_pagetype.py --with-aeb --cache /tmp/pagetype-cache
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from treemodel import lightgbm_to_spec, write_spec

from scrapy_cepr.core.page import Page
from scrapy_cepr.core.pagetype import FEATURE_NAMES, PAGE_TYPES, page_features, small_page_type
from scrapy_cepr.evaluation import CORPUS_ENV, WCXB_ENV, font_heading_page, load_corpus, load_wcxb, plain_page

ROOT = Path(__file__).resolve().parents[1]
#: LightGBM parameters (small trees, deterministic).
PARAMS = {
    "objective": "multiclass",
    "num_class": len(PAGE_TYPES),
    "learning_rate": 0.12,
    "num_leaves": 4,
    "max_depth": 2,
    "min_data_in_leaf": 8,
    "extra_trees": True,
    "feature_fraction": 0.3,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "deterministic": True,
    "num_threads": 1,
    "seed": 4,
    "verbose": -1,
}
ROUNDS = 180
#: Boosters per model (``--bag``; seeds ``seed`` … ``seed + BAG - 1``, raw scores
#: averaged). One: a bag of three measured +0.001 against the single boosters of the
#: same first seeds for three times the file (docs/measurements.md, "Page type: seed
#: bags"); ``--bag 3`` is for comparing changes with less seed noise.
BAG = 1
FOLDS = 5


def fixture_pages() -> list[tuple[str, str, str, str | None]]:
    """``(name, expected type, html, url)`` of the project's own page-type fixtures: the
    type is the file name's second part (``pagetype_forum_*.html``), the URL the page's
    ``<link rel="canonical">`` (a crawl always knows the URL); ``index_*.html`` (news
    index pages, no URL) are listings."""
    out = []
    fixtures = ROOT / "tests" / "fixtures"
    for path in sorted(fixtures.glob("pagetype_*.html")):
        html = path.read_text(encoding="utf-8")
        m = re.search(r'<link rel="canonical" href="([^"]+)"', html)
        out.append((path.name, path.name.split("_")[1], html, m.group(1) if m else None))
    for path in sorted(fixtures.glob("index_*.html")):
        out.append((path.name, "listing", path.read_text(encoding="utf-8"), None))
    return out


def _features(html: bytes | str, url: str | None) -> tuple[np.ndarray, float]:
    page = Page.from_html(html, url=url)
    start = time.perf_counter()
    x = page_features(page)
    return x, time.perf_counter() - start


#: The rewritten copies of the pages that training reads (:func:`load_rows`'s *copy*):
#: the plain page and the heading-free page (the br page with its headings as
#: ``<font size=N><b>``, :func:`~scrapy_cepr.evaluation.font_heading_page`), each given
#: without its URL.
COPIES = {"plain": plain_page, "heading-free": font_heading_page}


def _cache_key(plain: bool) -> str:
    code = [ROOT / "scrapy_cepr" / "core" / f"{name}.py" for name in ("pagetype", "page", "parse", "text")]
    if plain:
        code.append(ROOT / "scrapy_cepr" / "evaluation.py")
    return hashlib.sha256(repr(FEATURE_NAMES).encode() + b"".join(p.read_bytes() for p in code)).hexdigest()[:16]


def load_rows(wcxb: Path, aeb: Path | None, cache: Path | None, *,
              copy: str | None = None) -> tuple[np.ndarray, list[dict]]:
    """Feature rows and ``{"source", "id", "type", "group"}`` per page (cached by a hash
    of the feature names and the code of the page type, the page model and the text
    lengths). *copy* (a key of :data:`COPIES`): the rows of the pages so rewritten and
    given without their URL, in the same order."""
    rewrite = COPIES[copy] if copy else None
    key = _cache_key(rewrite is not None)
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        stem = f"pagetype{'-' + copy if copy else ''}-{key}-{bool(aeb)}"
        fx, fm = cache / f"{stem}.npy", cache / f"{stem}.json"
        if fx.is_file() and fm.is_file():
            return np.load(fx), json.loads(fm.read_text())
    rows, meta = [], []
    for s in load_wcxb(wcxb):
        x, _ = _features(rewrite(s.html), None) if rewrite else _features(s.html, s.url)
        rows.append(x)
        meta.append({"source": "wcxb", "id": s.id, "type": s.page_type, "group": s.domain or s.id})
    if aeb is not None:
        for s in load_corpus(aeb):
            x, _ = _features(rewrite(s.html), None) if rewrite else _features(s.html, s.url)
            rows.append(x)
            host = urlsplit(s.url).hostname if s.url else None
            meta.append({"source": "aeb", "id": s.id, "type": "article", "group": host or s.id})
    X = np.array(rows)
    if cache is not None:
        np.save(fx, X)
        fm.write_text(json.dumps(meta))
    return X, meta


def confusion(truth: list[str], predicted: list[str]) -> np.ndarray:
    """7x7 counts: rows = true type, columns = predicted type (order of PAGE_TYPES)."""
    m = np.zeros((len(PAGE_TYPES), len(PAGE_TYPES)), dtype=int)
    for t, p in zip(truth, predicted, strict=True):
        m[PAGE_TYPES.index(t), PAGE_TYPES.index(p)] += 1
    return m


def format_confusion(m: np.ndarray) -> str:
    short = [t[:5] for t in PAGE_TYPES]
    lines = ["| true \\ predicted | " + " | ".join(short) + " | recall |", "|---" * (len(short) + 2) + "|"]
    for i, t in enumerate(PAGE_TYPES):
        recall = m[i, i] / m[i].sum() if m[i].sum() else 0.0
        lines.append(f"| {t} | " + " | ".join(str(v) for v in m[i]) + f" | {recall:.3f} |")
    precision = [m[j, j] / m[:, j].sum() if m[:, j].sum() else 0.0 for j in range(len(PAGE_TYPES))]
    lines.append("| precision | " + " | ".join(f"{p:.3f}" for p in precision) + " | |")
    return "\n".join(lines)


URL_COLUMNS = [i for i, name in enumerate(FEATURE_NAMES) if name.startswith("url_")]


def without_url(X: np.ndarray) -> np.ndarray:
    """*X* with the URL features missing (NaN), as for a page given without its URL."""
    X = X.copy()
    X[:, URL_COLUMNS] = np.nan
    return X


#: What a page written before schema.org and HTML5 lacks: its declarations (JSON-LD,
#: microdata, Open Graph and ``<meta>`` names: absent is 0) and HTML5's sectioning
#: elements (no text under them: share 0, no link share: -1).
DECLARATION_COLUMNS = [i for i, name in enumerate(FEATURE_NAMES)
                       if name.startswith(("declared_", "og_", "meta_", "ld_")) or name == "itemtypes"]
HTML5_SHARE_COLUMNS = [FEATURE_NAMES.index(f"share_{g}") for g in ("article", "main", "time", "section", "figure", "chrome")]
HTML5_LINK_COLUMNS = [FEATURE_NAMES.index(f"link_share_{g}") for g in ("main", "article", "chrome")]
#: Counts of HTML5's elements (``time``, ``article``, links in ``nav``): none on such a page.
HTML5_COUNT_COLUMNS = [FEATURE_NAMES.index(n) for n in ("count_time", "count_article", "nav_links")]


#: The weight of the plain-page copy of each training page (the page itself and its
#: copy without URL weigh 1).
PLAIN_PAGE_WEIGHT = 0.5


def as_plain_page(X: np.ndarray) -> np.ndarray:
    """*X* as the same pages would be without their declarations, without HTML5's
    sectioning elements and without their URL: a page of a template older than
    schema.org and HTML5 (or one that declares nothing), given to ``extract(html)``.
    The text features are those of the page."""
    X = without_url(X)
    X[:, DECLARATION_COLUMNS] = 0.0
    X[:, HTML5_SHARE_COLUMNS] = 0.0
    X[:, HTML5_LINK_COLUMNS] = -1.0
    X[:, HTML5_COUNT_COLUMNS] = 0.0
    return X


#: The weight of the heading-free copy of each training page (``COPIES["heading-free"]``,
#: no URL), trained on by default: a page whose headings are not heading elements keeps
#: its type (docs/measurements.md, "Page type of pages without heading elements").
HEADING_FREE_WEIGHT = 0.25

#: Each training page weighs (largest class's pages / its class's pages) ** this
#: (``--class-weight-power``). 0: the square root (0.5) raised the accuracy without a
#: URL (0.822 -> 0.833, seeds 3-5) but read fewer plain AEB pages as articles (173 ->
#: 165 of 181, seed 4): docs/measurements.md, "Page type: what did not hold".
CLASS_WEIGHT_POWER = 0.0


def class_weights(y: np.ndarray, power: float = CLASS_WEIGHT_POWER) -> np.ndarray:
    """The weight of each page of labels *y* (indices of PAGE_TYPES): (largest class's
    count / its class's count) ** *power*, from the counts in *y* (a fold's training
    pages); shape ``(len(y),)``, 1 for the largest class."""
    counts = np.bincount(y, minlength=len(PAGE_TYPES)).astype(float)
    per_class = (counts.max() / np.maximum(counts, 1.0)) ** power
    return per_class[y]


class Bag:
    """*k* boosters of the same data and parameters with seeds *seed* … *seed* + *k* − 1,
    read as one model: the softmax of their mean raw score (what the exported file
    computes, :func:`bag_spec`)."""

    def __init__(self, boosters: list) -> None:
        self.boosters = boosters

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Class probabilities, shape ``(len(X), len(PAGE_TYPES))``."""
        raw = np.mean([b.predict(X, raw_score=True) for b in self.boosters], axis=0)
        raw = raw - raw.max(axis=1, keepdims=True)
        e = np.exp(raw)
        return e / e.sum(axis=1, keepdims=True)

    def feature_importance(self, kind: str) -> np.ndarray:
        return np.sum([b.feature_importance(kind) for b in self.boosters], axis=0)


def bag_spec(bag: Bag) -> dict:
    """One tree file for the bag: every booster's trees, leaf values divided by the
    number of boosters (the raw score is their mean)."""
    specs = [lightgbm_to_spec(b, feature_names=list(FEATURE_NAMES), class_names=list(PAGE_TYPES), leaf_digits=4)
             for b in bag.boosters]
    k = len(specs)
    spec = specs[0]
    spec["trees"] = [{**t, "leaf": [float(f"{v / k:.4g}") for v in t["leaf"]]} for sp in specs for t in sp["trees"]]
    return spec


def train(X: np.ndarray, y: np.ndarray, rounds: int = ROUNDS, plain: np.ndarray | None = None,
          seed: int | None = None, bag: int = BAG, class_power: float | None = None,
          heading_free: np.ndarray | None = None) -> Bag:
    """A :class:`Bag` of *bag* boosters (seeds *seed*, *seed* + 1 …) trained on *X*, on a
    copy of *X* without URLs (the page type must
    work for ``extract(html)`` without a URL as well) and on a copy as plain pages
    (:func:`as_plain_page`: the type must not rest on what only modern templates
    declare). *plain*: the rows of the same pages rewritten as plain pages
    (``load_rows(..., copy="plain")``), trained on too with weight
    :data:`PLAIN_PAGE_WEIGHT`; *heading_free*: the rows of the same pages'
    heading-free copies (``load_rows(..., copy="heading-free")``), with weight
    :data:`HEADING_FREE_WEIGHT`. Every row is also weighted by its class
    (:func:`class_weights`, power *class_power*, default :data:`CLASS_WEIGHT_POWER`). *seed*: LightGBM's first seed (default ``PARAMS["seed"]``)."""
    import lightgbm as lgb

    parts, weights = [X, without_url(X), as_plain_page(X)], [1.0, 1.0, PLAIN_PAGE_WEIGHT]
    if plain is not None:
        parts.append(plain)
        weights.append(PLAIN_PAGE_WEIGHT)
    if heading_free is not None:
        parts.append(heading_free)
        weights.append(HEADING_FREE_WEIGHT)
    weight = np.concatenate([np.full(len(y), w) for w in weights]) * np.tile(
        class_weights(y, CLASS_WEIGHT_POWER if class_power is None else class_power), len(parts))
    X, y = np.vstack(parts), np.concatenate([y] * len(parts))
    dataset = lgb.Dataset(X, y, weight=weight, feature_name=list(FEATURE_NAMES), free_raw_data=False)
    first = PARAMS["seed"] if seed is None else seed
    return Bag([lgb.train({**PARAMS, "seed": first + i}, dataset, num_boost_round=rounds) for i in range(bag)])


def cross_validate(X: np.ndarray, y: np.ndarray, groups: list[str], rounds: int = ROUNDS,
                   plain: np.ndarray | None = None, augment: bool = False,
                   seed: int | None = None, bag: int = BAG,
                   class_power: float | None = None,
                   heading_free: np.ndarray | None = None) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Out-of-fold class probabilities, folds grouped by *groups*. With *plain* (rows of
    the same pages as plain pages): ``(proba, proba of the plain rows)``, each plain row
    scored by the model of its page's fold; *augment*: the fold models are trained on
    the plain rows of their training pages too; *heading_free*: the fold models are
    trained on these rows of their training pages too (:func:`train`)."""
    from sklearn.model_selection import GroupKFold

    proba = np.zeros((len(y), len(PAGE_TYPES)))
    proba_plain = np.zeros((len(y), len(PAGE_TYPES)))
    for train_idx, test_idx in GroupKFold(n_splits=FOLDS).split(X, y, groups):
        extra = plain[train_idx] if plain is not None and augment else None
        booster = train(X[train_idx], y[train_idx], rounds, plain=extra, seed=seed, bag=bag,
                        class_power=class_power,
                        heading_free=None if heading_free is None else heading_free[train_idx])
        proba[test_idx] = booster.predict(X[test_idx])
        if plain is not None:
            proba_plain[test_idx] = booster.predict(plain[test_idx])
    return proba if plain is None else (proba, proba_plain)


def cross_validate_both(X: np.ndarray, y: np.ndarray, groups: list[str], rounds: int = ROUNDS,
                        plain: np.ndarray | None = None, augment: bool = False, seed: int | None = None,
                        bag: int = BAG, class_power: float | None = None,
                        heading_free: np.ndarray | None = None, train_free: bool = True):
    """Out-of-fold probabilities with the URL features, without them, of the pages as
    plain pages by :func:`as_plain_page`, with *plain*, of the real plain copies and,
    with *heading_free*, of the heading-free copies (zeros without); *augment* as in
    :func:`cross_validate`; *train_free*: the fold models are trained on the
    heading-free rows of their training pages too."""
    from sklearn.model_selection import GroupKFold

    with_url, no_url, proxy, real, free = (np.zeros((len(y), len(PAGE_TYPES))) for _ in range(5))
    for train_idx, test_idx in GroupKFold(n_splits=FOLDS).split(X, y, groups):
        extra = plain[train_idx] if plain is not None and augment else None
        booster = train(X[train_idx], y[train_idx], rounds, plain=extra, seed=seed, bag=bag,
                        class_power=class_power,
                        heading_free=None if heading_free is None or not train_free else heading_free[train_idx])
        with_url[test_idx] = booster.predict(X[test_idx])
        no_url[test_idx] = booster.predict(without_url(X[test_idx]))
        proxy[test_idx] = booster.predict(as_plain_page(X[test_idx]))
        if plain is not None:
            real[test_idx] = booster.predict(plain[test_idx])
        if heading_free is not None:
            free[test_idx] = booster.predict(heading_free[test_idx])
    return with_url, no_url, proxy, real, free


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", default=os.environ.get(WCXB_ENV), help=f"WCXB dev directory (default ${WCXB_ENV})")
    parser.add_argument("--aeb", default=os.environ.get(CORPUS_ENV), help=f"AEB directory (default ${CORPUS_ENV})")
    parser.add_argument("--with-aeb", action="store_true", help="train on the AEB pages too (cross-validated)")
    parser.add_argument("--cache", type=Path, help="directory for the feature cache (outside the repository)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"boosting rounds (default {ROUNDS})")
    parser.add_argument("--out", type=Path, default=ROOT / "scrapy_cepr" / "models" / "pagetype.json")
    parser.add_argument("--no-export", action="store_true", help="only cross-validate")
    parser.add_argument("--augment-plain", action="store_true",
                        help="also train on every page rewritten as a plain page (evaluation.plain_page, no URL)")
    parser.add_argument("--no-heading-free", action="store_true",
                        help="do not train on the heading-free copies (evaluation.font_heading_page, no URL)")
    parser.add_argument("--seed", type=int, default=PARAMS["seed"],
                        help=f"LightGBM's first seed (default {PARAMS['seed']})")
    parser.add_argument("--bag", type=int, default=BAG,
                        help=f"boosters per model, seeds SEED, SEED+1 ... (default {BAG}; 1: one booster)")
    parser.add_argument("--class-weight-power", type=float, default=CLASS_WEIGHT_POWER,
                        help="weight each page by (largest class / its class) ** this "
                             f"(default {CLASS_WEIGHT_POWER}: unweighted)")
    args = parser.parse_args(argv)
    if not args.wcxb:
        parser.error(f"no WCXB directory: set {WCXB_ENV} or pass --wcxb")
    aeb = Path(args.aeb) if args.aeb else None
    X, meta = load_rows(Path(args.wcxb), aeb, args.cache)
    X_plain, meta_plain = load_rows(Path(args.wcxb), aeb, args.cache, copy="plain")
    X_free, meta_free = load_rows(Path(args.wcxb), aeb, args.cache, copy="heading-free")
    if [m["id"] for m in meta_plain] != [m["id"] for m in meta] or [m["id"] for m in meta_free] != [m["id"] for m in meta]:
        raise SystemExit("copies' rows and rows are not the same pages")
    free_rows = None if args.no_heading_free else X_free
    y = np.array([PAGE_TYPES.index(m["type"]) for m in meta])
    groups = [m["group"] for m in meta]
    is_wcxb = np.array([m["source"] == "wcxb" for m in meta])
    is_aeb = ~is_wcxb

    train_rows = np.ones(len(y), bool) if args.with_aeb else is_wcxb
    proba = np.zeros((len(y), len(PAGE_TYPES)))
    proba_no_url = np.zeros((len(y), len(PAGE_TYPES)))
    proba_plain = np.zeros((len(y), len(PAGE_TYPES)))
    proba_real = np.zeros((len(y), len(PAGE_TYPES)))
    proba_free = np.zeros((len(y), len(PAGE_TYPES)))
    (proba[train_rows], proba_no_url[train_rows], proba_plain[train_rows], proba_real[train_rows],
     proba_free[train_rows]) = cross_validate_both(
        X[train_rows], y[train_rows], [g for g, k in zip(groups, train_rows) if k], args.rounds,
        plain=X_plain[train_rows], augment=args.augment_plain, seed=args.seed, bag=args.bag,
        class_power=args.class_weight_power,
        heading_free=X_free[train_rows], train_free=not args.no_heading_free)
    if not args.with_aeb and is_aeb.any():
        booster = train(X[is_wcxb], y[is_wcxb], args.rounds, plain=X_plain[is_wcxb] if args.augment_plain else None,
                        seed=args.seed, bag=args.bag, class_power=args.class_weight_power,
                        heading_free=None if free_rows is None else free_rows[is_wcxb])
        proba[is_aeb] = booster.predict(X[is_aeb])
        proba_real[is_aeb] = booster.predict(X_plain[is_aeb])
        proba_free[is_aeb] = booster.predict(X_free[is_aeb])
    predicted = [PAGE_TYPES[i] for i in proba.argmax(axis=1)]
    truth = [m["type"] for m in meta]
    w = np.flatnonzero(is_wcxb)
    m = confusion([truth[i] for i in w], [predicted[i] for i in w])
    print(f"WCXB dev, {len(w)} pages, {FOLDS}-fold CV grouped by domain, {args.rounds} rounds:")
    print(format_confusion(m))
    print(f"accuracy {np.trace(m) / m.sum():.3f}; article vs. not-article accuracy "
          f"{np.mean([(truth[i] == 'article') == (predicted[i] == 'article') for i in w]):.3f}")
    no_url = [PAGE_TYPES[i] for i in proba_no_url.argmax(axis=1)]
    print(f"without URLs: accuracy {np.mean([truth[i] == no_url[i] for i in w]):.3f}")
    plain = [PAGE_TYPES[i] for i in proba_plain.argmax(axis=1)]
    print(f"as plain pages (no declarations, no HTML5 sectioning, no URL): accuracy "
          f"{np.mean([truth[i] == plain[i] for i in w]):.3f}, article recall "
          f"{np.mean([plain[i] == 'article' for i in w if truth[i] == 'article']):.3f}")
    real = [PAGE_TYPES[i] for i in proba_real.argmax(axis=1)]
    print(f"real plain copies (evaluation.plain_page, no URL): accuracy "
          f"{np.mean([truth[i] == real[i] for i in w]):.3f}, article recall "
          f"{np.mean([real[i] == 'article' for i in w if truth[i] == 'article']):.3f}")
    print(format_confusion(confusion([truth[i] for i in w], [real[i] for i in w])))
    free = [PAGE_TYPES[i] for i in proba_free.argmax(axis=1)]
    print(f"heading-free copies (evaluation.font_heading_page, no URL; "
          f"{'not ' if args.no_heading_free else ''}trained on): accuracy "
          f"{np.mean([truth[i] == free[i] for i in w]):.3f}, article recall "
          f"{np.mean([free[i] == 'article' for i in w if truth[i] == 'article']):.3f}")
    if is_aeb.any():
        a = np.flatnonzero(is_aeb)
        wrong = [(meta[i]["id"][:12], predicted[i]) for i in a if predicted[i] != "article"]
        how = "cross-validated, grouped by host" if args.with_aeb else "held out (model trained on WCXB)"
        print(f"AEB ({how}): {len(a) - len(wrong)} of {len(a)} classified article; others: {wrong}")
        if args.with_aeb:
            print(f"AEB as plain pages: {sum(plain[i] == 'article' for i in a)} of {len(a)} classified article")
        print(f"AEB as real plain copies: {sum(real[i] == 'article' for i in a)} of {len(a)} classified article")
        print(f"AEB as heading-free copies: {sum(free[i] == 'article' for i in a)} of {len(a)} classified article")

    final = train(X[train_rows], y[train_rows], args.rounds,
                  plain=X_plain[train_rows] if args.augment_plain else None, seed=args.seed, bag=args.bag,
                  class_power=args.class_weight_power,
                  heading_free=None if free_rows is None else free_rows[train_rows])
    importance = final.feature_importance("gain")
    top = sorted(zip(importance, FEATURE_NAMES), reverse=True)
    print("top features by gain:", ", ".join(f"{n} {g / importance.sum():.3f}" for g, n in top[:15]))
    print("unused features:", ", ".join(n for g, n in top if g == 0) or "none")
    spec = bag_spec(final)
    from scrapy_cepr.core.trees import load_trees

    model = load_trees(spec)
    fixtures = fixture_pages()
    if fixtures:
        rows = np.array([_features(html, url)[0] for _, _, html, url in fixtures])
        # As page_type_proba: pages under MIN_MODEL_CHARS get the rule, not the model.
        got = [small_page_type(row) or PAGE_TYPES[int(p.argmax())] for row, p in zip(rows, model.predict(rows))]
        ok = sum(g == t for g, (_, t, _, _) in zip(got, fixtures, strict=True))
        print(f"fixtures (final model, small pages by the rule as in page_type_proba): {ok} of {len(fixtures)} right")
        for (name, t, _, _), g in zip(fixtures, got, strict=True):
            print(f"  {name}: expected {t}, got {g}{'' if g == t else '  <-- wrong'}")
        print(format_confusion(confusion([t for _, t, _, _ in fixtures], got)))
    if not args.no_export:
        write_spec(spec, str(args.out))
        print(f"wrote {args.out} ({args.out.stat().st_size / 1024:.0f} KB, {model.num_trees} trees)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
