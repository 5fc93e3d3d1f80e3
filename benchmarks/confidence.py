"""How well ``Extraction.confidence`` ranks pages, and which fallback method gains most on
the low-confidence ones; all numbers out of fold.

    PYTHONPATH=$PWD CEPR_BENCHMARK_DIR=/work/shared/data/article-extraction-benchmark \\
        python benchmarks/confidence.py [--cache DIR]
    python benchmarks/confidence.py --speed   # ms of the confidence against cepr-typed

Reads (or builds) the cache of ``benchmarks/train_confidence.py``: cepr-typed and the
fallback candidates run on the WCXB dev pages and the 181 pages of the
article-extraction benchmark (AEB), with the confidence features and the word F1 of each
result. Confidence models are trained on cepr-typed's results of 4 folds of domains and
predict the 5th (``GroupKFold(5)``; WCXB ``domain``, AEB URL host), so no page is scored
by a model that saw its domain.

Prints:

1. per corpus: pages, mean F1, pages with F1 < 0.5, the ROC AUC of ``1 - confidence``
   for "F1 < 0.5", the mean F1 of the 80 % most confident pages, Spearman's rho. Pages
   where cepr-typed finds no body have no confidence and count as confidence 0;
2. the same on each method's output (the model is trained on cepr-typed's);
3. the fallback: for each threshold and candidate method, the pages below the threshold,
   their mean F1 with cepr-typed, after the fallback (the result with the higher
   out-of-fold confidence kept, as the crawl does), and with an oracle choice.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_confidence as tc


def fallback_table(rows: list[dict], pred: dict[str, np.ndarray], thresholds=(0.5, 0.6, 0.7)) -> None:
    """Mean F1 on the low-confidence pages before and after each candidate's fallback."""
    f1 = {m: np.array([r[m]["f1"] for r in rows]) for m in (tc.PRIMARY, *tc.CANDIDATES)}
    has = np.array([r[tc.PRIMARY]["x"] is not None for r in rows])
    corpus = np.array([r["corpus"] for r in rows])
    print("\nFallback on the pages whose cepr-typed confidence is below the threshold (out of fold)")
    print("| threshold | corpus | fallback | pages | F1 before | F1 after | fell back (kept) | oracle |")
    print("|---|---|---|---|---|---|---|---|")
    for t in thresholds:
        for name, csel in (("WCXB dev", corpus == "wcxb"), ("AEB", corpus == "aeb")):
            low = csel & has & (pred[tc.PRIMARY] < t)
            if not low.any():  # no page below the threshold: nothing to average
                print(f"| {t} | {name} | {', '.join(tc.CANDIDATES)} | 0 | — | — | 0 | — |")
                continue
            for m in tc.CANDIDATES:
                keep = pred[m] > pred[tc.PRIMARY]
                after = np.where(keep, f1[m], f1[tc.PRIMARY])
                oracle = np.maximum(f1[m], f1[tc.PRIMARY])
                print(f"| {t} | {name} | {m} | {low.sum()} | {f1[tc.PRIMARY][low].mean():.4f} | "
                      f"{after[low].mean():.4f} | {(keep & low).sum()} | {oracle[low].mean():.4f} |")


def speed(wcxb_dir: str, aeb_dir: str, step: int = 10, repeats: int = 3) -> None:
    """Per page (every *step*-th page of both corpora, parsed once), the best of *repeats*
    times of the method and of :func:`scrapy_cepr.api.with_confidence` on its result (the
    features, the model, and for a method without page-type probabilities the page-type
    classifier), for cepr-typed and cepr-article; prints the medians and the ratio of the
    sums."""
    import statistics
    import time
    from dataclasses import replace
    from itertools import islice

    from scrapy_cepr.api import with_confidence
    from scrapy_cepr.core.confidence import load_model
    from scrapy_cepr.core.page import Page
    from scrapy_cepr.methods import get_method

    load_model()
    pages = [Page.from_html(html, url=url) for _, _, html, url, *_ in islice(tc._pages(wcxb_dir, aeb_dir), 0, None, step)]
    for method in (tc.PRIMARY, "cepr-article"):
        spec = get_method(method)
        params = spec.make_params()
        method_s = [float("inf")] * len(pages)
        conf_s = [float("inf")] * len(pages)
        for _ in range(repeats):
            for i, page in enumerate(pages):
                t0 = time.perf_counter()
                result = spec.run(page, params)
                t1 = time.perf_counter()
                with_confidence(page, replace(result, confidence=None))
                t2 = time.perf_counter()
                method_s[i] = min(method_s[i], t1 - t0)
                conf_s[i] = min(conf_s[i], t2 - t1)
        print(f"{len(pages)} parsed pages: {method} median {statistics.median(method_s) * 1e3:.2f} ms, its confidence "
              f"median {statistics.median(conf_s) * 1e3:.3f} ms, confidence / method (sums) "
              f"{sum(conf_s) / sum(method_s):.3f}")


def methods_table(rows: list[dict], pred: dict[str, np.ndarray]) -> None:
    """How the model (trained on cepr-typed's output) ranks each method's output."""
    corpus = np.array([r["corpus"] for r in rows])
    print("\nThe same models on each method's output (out of fold; no body = confidence 0)")
    print("| method | corpus | mean F1 | pages F1 < 0.5 | ROC AUC (F1 < 0.5) | mean F1, top 80 % |")
    print("|---|---|---|---|---|---|")
    for m in (tc.PRIMARY, *tc.CANDIDATES):
        f1 = np.array([r[m]["f1"] for r in rows])
        for name, sel in (("WCXB dev", corpus == "wcxb"), ("AEB", corpus == "aeb")):
            print(f"| {m} | {name} | {f1[sel].mean():.4f} | {(f1[sel] < 0.5).sum()} | "
                  f"{tc.auc_cell(pred[m][sel], f1[sel])} | {tc.top_share_f1(pred[m][sel], f1[sel]):.4f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default="/work/tmp/conf")
    ap.add_argument("--wcxb", default=os.environ.get("CEPR_WCXB_DIR", "/work/shared/data/wcxb-dev"))
    ap.add_argument("--aeb", default=os.environ.get("CEPR_BENCHMARK_DIR", "/work/shared/data/article-extraction-benchmark"))
    ap.add_argument("--speed", action="store_true", help="only time the confidence against cepr-typed")
    args = ap.parse_args(argv)
    if args.speed:
        speed(args.wcxb, args.aeb)
        return 0
    rows = tc.build_cache(args.wcxb, args.aeb, Path(args.cache))
    pred = tc.oof(rows)
    tc.report(rows, pred)
    methods_table(rows, pred)
    fallback_table(rows, pred)
    return 0


if __name__ == "__main__":
    sys.exit(main())
