"""Render, label and train the ``wang2009`` models; evaluate them; write the model file.

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark \\
        python benchmarks/train_wang2009.py [--write scrapy_cepr/models/wang2009.json] [--json out.json]

Steps (Wang et al., KDD 2009, Secs. 3–5):

1. **Render** every corpus page once with :class:`scrapy_cepr.render.Renderer` (offline:
   no network, no scripts, 1024×768). Renders are cached in ``$TMPDIR/cepr-wang2009/``
   (never in the repository).
2. **Label.** Body: every body candidate (:func:`~scrapy_cepr.methods.wang2009.body_candidates`)
   is scored by the benchmark's shingle F1 of its visible text against the gold body; the
   best one is the positive example (``T_BODY``); candidates within 0.05 F1 of it (its
   wrappers and near-copies) are left out; the rest are negatives (at most 60 per page,
   drawn with a fixed seed). Pages whose best block scores below 0.5 are not used for the
   body. Title: the reference is the JSON-LD ``headline``, else ``og:title``; the title
   candidate (computed against the labelled body) whose text matches it best (rapidfuzz
   ``ratio`` ≥ 90, also against the reference without a site name) is the positive one.
3. **Train** RBF SVMs (scikit-learn ``SVC``, C = 1, γ = "scale", balanced classes) on
   standardised features, with Platt's sigmoid fitted on out-of-fold decision values
   (``CalibratedClassifierCV(method="sigmoid", ensemble=False)``, folds grouped by site).
4. **Evaluate** with 5 folds grouped by site (the corpus has at most 2 pages per site, so
   the paper's single-training-site protocol cannot be run on it alone; with
   ``--single-site`` the models are also trained on 40 pages of one site written from the
   demo site's legacy template, :func:`single_site_pages`, and tested on the corpus): per test page, the
   most probable body, then the most probable title, exactly as the method does. Reports
   the benchmark P/R/F1, the paper's accuracy (title and body both correct; body correct =
   shingle F1 ≥ 0.8 against the gold body; title correct = ratio ≥ 90 with the reference),
   for the paper's and the extended body features, with and without the first-screen
   filter.
5. **Write** the final models, trained on all pages, as JSON (``--write``): rounded to 10
   significant digits, keys sorted: the same bytes on every run.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import json
import logging
import os
import re
import sys
import tempfile
import time
from copy import deepcopy
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
from lxml import etree
from rapidfuzz import fuzz

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrapy_cepr.core.page import Page, decode_html  # noqa: E402
from scrapy_cepr.core.sitename import strip_site_name  # noqa: E402
from scrapy_cepr.evaluation import CORPUS_ENV, _shingles, benchmark_counts, benchmark_summary, load_corpus  # noqa: E402
from scrapy_cepr.methods import wang2009 as w  # noqa: E402
from scrapy_cepr.render import Geometry, Renderer  # noqa: E402

logger = logging.getLogger("train_wang2009")

CACHE = Path(tempfile.gettempdir()) / "cepr-wang2009"
MAX_NEGATIVES = 60
NEAR_BEST = 0.05
MIN_BEST = 0.5
BODY_CORRECT_F1 = 0.8
TITLE_MATCH = 90.0
SVM_C = 1.0


@dataclass
class PageData:
    """One rendered, labelled page."""

    id: str
    site: str
    gold: str
    ref_title: str | None
    layout: w.Layout
    body_ids: dict[bool, np.ndarray]  # first_screen -> candidate ids
    body_x: dict[bool, dict[str, np.ndarray]]
    body_f1: dict[bool, np.ndarray]
    render_ms: float


def f1_of(pred: str, gold: str) -> float:
    c = benchmark_counts(pred, gold)
    return 2 * c.tp / (2 * c.tp + c.fp + c.fn) if (c.tp + c.fp + c.fn) > 0 else 0.0


def _f1_shingles(pred, true) -> float:
    tp = sum((pred & true).values())
    total = sum(pred.values()) + sum(true.values())
    return 2 * tp / total if total else 0.0


def render_cached(renderer: Renderer, source: str) -> tuple[str, Geometry, float]:
    key = hashlib.sha1(source.encode("utf-8", "surrogatepass")).hexdigest()
    path = CACHE / f"{key}.json.gz"
    if path.is_file():
        d = json.loads(gzip.decompress(path.read_bytes()))
        return d["html"], Geometry.from_json(d["geometry"]), d["ms"]
    r = renderer.render(source)
    CACHE.mkdir(parents=True, exist_ok=True)
    ms = r.load_ms + r.capture_ms
    path.write_bytes(gzip.compress(json.dumps({"html": r.html, "geometry": r.geometry.to_json(), "ms": ms}).encode()))
    return r.html, r.geometry, ms


def reference_title(source: str) -> str | None:
    """JSON-LD ``headline`` (first one found), else ``og:title``."""
    root = etree.fromstring(source, etree.HTMLParser()) if source.strip() else None
    if root is None:
        return None
    for s in root.iter("script"):
        if (s.get("type") or "").lower() != "application/ld+json" or not s.text:
            continue
        try:
            data = json.loads(s.text)
        except ValueError:
            continue
        stack = [data]
        while stack:
            d = stack.pop(0)
            if isinstance(d, list):
                stack.extend(d)
            elif isinstance(d, dict):
                if isinstance(d.get("headline"), str) and d["headline"].strip():
                    return " ".join(html.unescape(d["headline"]).split())
                stack.extend(v for v in d.values() if isinstance(v, (dict, list)))
    for m in root.iter("meta"):
        if m.get("property") == "og:title" and m.get("content"):
            return " ".join(html.unescape(m.get("content")).split())
    return None


def title_ok(pred: str | None, ref: str) -> bool:
    if not pred:
        return False
    a = " ".join(pred.casefold().split())
    return max(fuzz.ratio(a, ref.casefold()), fuzz.ratio(a, strip_site_name(ref).casefold())) >= TITLE_MATCH


def site_of(url: str | None, pid: str) -> str:
    host = urlsplit(url or "").hostname or pid
    parts = host.split(".")
    return ".".join(parts[-3:] if len(parts) > 2 and len(parts[-2]) <= 3 else parts[-2:])


def load_pages(corpus: Path, limit: int | None) -> list[PageData]:
    renderer = Renderer()
    out = []
    try:
        for i, s in enumerate(load_corpus(corpus)):
            if limit and i >= limit:
                break
            source = decode_html(s.html)
            try:
                dom, geo, ms = render_cached(renderer, source)
            except Exception as exc:  # noqa: BLE001 - report and go on
                logger.warning("render failed for %s: %s", s.id, exc)
                continue
            pd = _page_data(s.id, site_of(s.url, s.id), dom, geo, ms, s.gold_body, reference_title(source), s.url)
            if pd is not None:
                out.append(pd)
    finally:
        renderer.close()
    return out


DEMO_SITE = Path(__file__).resolve().parents[1] / "example_project" / "site"


def single_site_pages(n: int = 40) -> list[tuple[str, str, str, str]]:
    """The paper's protocol needs about 40 labelled pages of one site. We write them: the
    demo site's legacy template (``articles/harbour-storm.html``, with
    ``static/legacy.css`` inlined since renders fetch nothing), each with a headline and
    3–8 paragraphs drawn with a fixed seed from the demo site's own article texts (written
    for this project).

    :returns: ``(id, html, gold body, headline)`` per page; the body is the ``storytext``
        block, the title the ``headline`` block (known by construction).
    """
    template = (DEMO_SITE / "articles" / "harbour-storm.html").read_text(encoding="utf-8")
    css = (DEMO_SITE / "static" / "legacy.css").read_text(encoding="utf-8")
    template = re.sub(r'<link rel="stylesheet"[^>]*>', lambda m: f"<style>{css}</style>", template)
    paragraphs, headlines = [], []
    for path in sorted((DEMO_SITE / "articles").glob("*.html")):
        page = Page.from_html(path.read_bytes())
        if page.root is None:
            continue
        texts = (" ".join("".join(p.itertext()).split()) for p in page.root.iter("p"))
        paragraphs += [t for t in texts if len(t) >= 120]
        if page.html_title:
            headlines.append(strip_site_name(page.html_title))
    rng = np.random.default_rng(2009)
    root0 = etree.fromstring(template, etree.HTMLParser())
    out = []
    for i in range(n):
        root = deepcopy(root0)
        story = next(el for el in root.iter("div") if el.get("class") == "storytext")
        head = next(el for el in root.iter("div") if el.get("class") == "headline")
        title = headlines[i % len(headlines)]
        head.text = title
        for p in [el for el in story if el.tag == "p"]:
            story.remove(p)
        for j in rng.choice(len(paragraphs), int(rng.integers(3, 9)), replace=False).tolist():
            etree.SubElement(story, "p").text = paragraphs[j]
        gold = "\n".join(t for t in (" ".join(x.split()) for x in story.itertext()) if t)
        out.append((f"single-site-{i:02d}", etree.tostring(root, encoding="unicode", method="html"), gold, title))
    return out


def load_single_site(n: int = 40) -> list[PageData]:
    renderer = Renderer()
    out = []
    try:
        for pid, source, gold, title in single_site_pages(n):
            dom, geo, ms = render_cached(renderer, source)
            # One site; for the Platt folds every page is its own group.
            pd = _page_data(pid, pid, dom, geo, ms, gold, title, None)
            if pd is not None:
                out.append(pd)
    finally:
        renderer.close()
    return out


def _page_data(pid: str, site: str, dom: str, geo: Geometry, ms: float, gold_body: str, ref: str | None,
               url: str | None) -> PageData | None:
    page = Page.from_html(dom, url=url)
    if page.root is None or not len(page):
        return None
    layout = w.Layout(page, geo)
    ids, xs, f1s = {}, {}, {}
    gold = _shingles(gold_body)
    known: dict[int, float] = {}
    for fs in (False, True):
        cid, feats = w.body_candidates(layout, w.Wang2009Params(first_screen=fs))
        ids[fs], xs[fs] = cid, feats
        for e in cid.tolist():
            if e not in known:
                known[e] = _f1_shingles(_shingles(layout.text(e)), gold)
        f1s[fs] = np.array([known[e] for e in cid.tolist()])
    return PageData(pid, site, gold_body, ref, layout, ids, xs, f1s, ms)


def body_examples(pages: list[PageData], fs: bool, features: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ys, groups = [], [], []
    for pd in pages:
        f1 = pd.body_f1[fs]
        if f1.size == 0 or f1.max() < MIN_BEST:
            continue
        best = _best(pd, fs)
        x = pd.body_x[fs][features]
        neg = np.flatnonzero(f1 < f1[best] - NEAR_BEST)
        rng = np.random.default_rng(int(hashlib.sha1(pd.id.encode()).hexdigest()[:8], 16))
        if neg.size > MAX_NEGATIVES:
            neg = np.sort(rng.choice(neg, MAX_NEGATIVES, replace=False))
        xs.append(x[[best]])
        ys.append([1])
        groups.append([pd.site])
        xs.append(x[neg])
        ys.append([0] * neg.size)
        groups.append([pd.site] * neg.size)
    return np.vstack(xs), np.concatenate(ys).astype(int), np.concatenate(groups)


def _best(pd: PageData, fs: bool) -> int:
    f1 = pd.body_f1[fs]
    top = f1.max()
    tied = np.flatnonzero(f1 >= top - 1e-9)
    chars = pd.layout.chars[pd.body_ids[fs][tied]]
    return int(tied[np.argmin(chars)])  # the smallest subtree holding the best text


def title_examples(pages: list[PageData]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ys, groups = [], [], []
    params = w.Wang2009Params()
    for pd in pages:
        if not pd.ref_title or pd.body_f1[False].size == 0 or pd.body_f1[False].max() < MIN_BEST:
            continue
        body = int(pd.body_ids[False][_best(pd, False)])
        tids, tx = w.title_candidates(pd.layout, body, params)
        if tids.size == 0:
            continue
        scores = np.array([max(fuzz.ratio(_n(pd.layout.text(e)), _n(pd.ref_title)),
                               fuzz.ratio(_n(pd.layout.text(e)), _n(strip_site_name(pd.ref_title))))
                           for e in tids.tolist()])
        if scores.max() < TITLE_MATCH:
            continue
        pos = int(np.argmax(scores))
        y = np.zeros(tids.size, int)
        y[pos] = 1
        keep = (scores < TITLE_MATCH) | (np.arange(tids.size) == pos)
        xs.append(tx[keep])
        ys.append(y[keep])
        groups.append([pd.site] * int(keep.sum()))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(groups)


def _n(s: str) -> str:
    return " ".join(s.casefold().split())


def train_svm(x: np.ndarray, y: np.ndarray, groups: np.ndarray, names: tuple[str, ...]) -> dict:
    """Fit the SVM and Platt's sigmoid; return the JSON-ready model (numbers rounded)."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    splits = list(GroupKFold(n_splits=5).split(x, y, groups))
    est = make_pipeline(StandardScaler(), SVC(kernel="rbf", C=SVM_C, gamma="scale", class_weight="balanced"))
    cal = CalibratedClassifierCV(est, method="sigmoid", ensemble=False, cv=splits).fit(x, y)
    pipe = cal.calibrated_classifiers_[0].estimator
    scaler, svc = pipe[0], pipe[1]
    sig = cal.calibrated_classifiers_[0].calibrators[0]
    model = {
        "features": list(names),
        "mean": scaler.mean_.tolist(),
        "scale": scaler.scale_.tolist(),
        "gamma": float(svc._gamma),
        "sv": svc.support_vectors_.tolist(),
        "coef": svc.dual_coef_[0].tolist(),
        "intercept": float(svc.intercept_[0]),
        # sklearn: P = expit(-(a f + b)) = 1 / (1 + exp(a f + b)), f = decision_function
        "prob_a": float(sig.a_),
        "prob_b": float(sig.b_),
    }
    model = _round(model)
    ours = w.SVMModel.from_dict(model).probability(x)
    theirs = cal.predict_proba(x)[:, 1]
    model_err = float(np.abs(ours - theirs).max())
    if model_err > 1e-6:
        raise AssertionError(f"numpy SVM differs from scikit-learn by {model_err}")
    return model


def _round(obj):
    if isinstance(obj, float):
        return float(f"{obj:.10g}")
    if isinstance(obj, list):
        return [_round(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _round(v) for k, v in obj.items()}
    return obj


def dump_models(models: dict) -> str:
    """The model file's text: sorted keys, compact rows; the same bytes for the same
    models."""
    return json.dumps(models, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n"


def predict_page(pd: PageData, body_model: w.SVMModel, title_model: w.SVMModel, fs: bool, features: str) -> tuple[str, str | None]:
    """Body text and title as :func:`wang2009.run` would produce them."""
    ids = pd.body_ids[fs]
    if ids.size == 0:
        return "", None
    body = int(ids[int(np.argmax(body_model.probability(pd.body_x[fs][features])))])
    params = w.Wang2009Params(first_screen=fs, features=features)
    tids, tx = w.title_candidates(pd.layout, body, params)
    title_el = int(tids[int(np.argmax(title_model.probability(tx)))]) if tids.size else -1
    lay, tab = pd.layout, pd.layout.table
    keep = np.zeros(len(lay.page), bool)
    keep[int(tab.first_text[body]) : int(tab.last_text[body]) + 1] = True
    if title_el >= 0 and body <= title_el < tab.end[body]:
        keep[int(tab.first_text[title_el]) : int(tab.last_text[title_el]) + 1] = False
    keep &= lay.visible
    from scrapy_cepr.core.result import assemble_body

    return assemble_body(lay.page.texts, lay.page.blocks, keep), (lay.text(title_el) if title_el >= 0 else None)


def score(rows: list[tuple[PageData, str, str | None]]) -> dict:
    counts = [benchmark_counts(body, pd.gold) for pd, body, _ in rows]
    s = benchmark_summary(counts)
    body_ok = [f1_of(body, pd.gold) >= BODY_CORRECT_F1 for pd, body, _ in rows]
    with_ref = [(pd, t, b) for (pd, _, t), b in zip(rows, body_ok) if pd.ref_title]
    title_acc = sum(title_ok(t, pd.ref_title) for pd, t, _ in with_ref) / max(len(with_ref), 1)
    both = sum(title_ok(t, pd.ref_title) and b for pd, t, b in with_ref) / max(len(with_ref), 1)
    return {"f1": round(s["f1"], 4), "precision": round(s["precision"], 4), "recall": round(s["recall"], 4),
            "body_accuracy": round(sum(body_ok) / len(rows), 4), "title_accuracy": round(title_acc, 4),
            "accuracy": round(both, 4), "pages": len(rows), "pages_with_title_reference": len(with_ref)}


def cross_validate(pages: list[PageData], fs: bool, features: str, folds: int = 5) -> dict:
    from sklearn.model_selection import GroupKFold

    sites = np.array([p.site for p in pages])
    rows = []
    for train_idx, test_idx in GroupKFold(n_splits=folds).split(np.zeros(len(pages)), groups=sites):
        train = [pages[i] for i in train_idx]
        bx, by, bg = body_examples(train, fs, features)
        tx, ty, tg = title_examples(train)
        bm = w.SVMModel.from_dict(train_svm(bx, by, bg, w.BODY_FEATURES[features]))
        tm = w.SVMModel.from_dict(train_svm(tx, ty, tg, w.TITLE_FEATURES))
        for i in test_idx:
            body, title = predict_page(pages[i], bm, tm, fs, features)
            rows.append((pages[i], body, title))
    return score(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=os.environ.get(CORPUS_ENV))
    ap.add_argument("--write", help="write the model file here")
    ap.add_argument("--json", help="write the evaluation here")
    ap.add_argument("--limit", type=int, help="first N pages only (a quick trial)")
    ap.add_argument("--no-cv", action="store_true")
    ap.add_argument("--single-site", action="store_true",
                    help="also the paper's protocol: train on 40 pages of one site (written from the demo site), test on the corpus")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if not args.corpus:
        ap.error(f"give the corpus path or set {CORPUS_ENV}")
    t = time.perf_counter()
    pages = load_pages(Path(args.corpus), args.limit)
    logger.info("%d pages rendered and labelled in %.1f s", len(pages), time.perf_counter() - t)
    best = [p.body_f1[False].max() if p.body_f1[False].size else 0.0 for p in pages]
    report = {"pages": len(pages), "sites": len({p.site for p in pages}),
              "ceiling_mean_best_block_f1": round(float(np.mean(best)), 4),
              "pages_with_title_reference": sum(1 for p in pages if p.ref_title),
              "candidates_per_page_median": float(np.median([p.body_ids[False].size for p in pages]))}
    if not args.no_cv:
        report["cv"] = {}
        for fs in (False, True):
            for features in ("paper", "extended"):
                name = f"{features}{', first screen' if fs else ''}"
                report["cv"][name] = cross_validate(pages, fs, features)
                logger.info("CV %-26s %s", name, report["cv"][name])
    if args.single_site:
        train = load_single_site(40)
        report["single_site"] = {"training_pages": len(train)}
        tm = w.SVMModel.from_dict(train_svm(*title_examples(train), w.TITLE_FEATURES))
        for features in ("paper", "extended"):
            bm = w.SVMModel.from_dict(train_svm(*body_examples(train, False, features), w.BODY_FEATURES[features]))
            rows = [(pd, *predict_page(pd, bm, tm, False, features)) for pd in pages]
            report["single_site"][features] = score(rows)
            logger.info("single site -> corpus, %-8s %s", features, report["single_site"][features])
    bx = {f: body_examples(pages, False, f) for f in ("paper", "extended")}
    tx, ty, tg = title_examples(pages)
    models = {
        "version": 1,
        "paper": "Wang et al., KDD 2009",
        "constants": {"screen_width": w.SCREEN_WIDTH, "screen_height": w.SCREEN_HEIGHT,
                      "two_screens_height": w.TWO_SCREENS_HEIGHT, "max_word_num": w.MAX_WORD_NUM,
                      "min_area": w.Wang2009Params().min_area},
        "training": {"corpus": "article-extraction-benchmark (181 pages, offline renders)", "pages": len(pages),
                     "body_examples": {f: [int(v[1].sum()), int((v[1] == 0).sum())] for f, v in bx.items()},
                     "title_examples": [int(ty.sum()), int((ty == 0).sum())], "svm": {"C": SVM_C, "gamma": "scale",
                     "class_weight": "balanced", "platt": "sigmoid on out-of-fold decisions, 5 folds grouped by site"}},
        "body": {f: train_svm(*v, w.BODY_FEATURES[f]) for f, v in bx.items()},
        "title": train_svm(tx, ty, tg, w.TITLE_FEATURES),
    }
    if args.write:
        Path(args.write).write_text(dump_models(models), encoding="utf-8")
        logger.info("wrote %s (%d bytes)", args.write, Path(args.write).stat().st_size)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
