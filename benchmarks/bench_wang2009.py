"""Quality and time per page of ``scrapy_cepr.extract(html, method="wang2009")`` on a corpus.

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark \\
        python benchmarks/bench_wang2009.py [--features extended|paper] [--first-screen] [--json out.json]

Every page goes through the public API, as a user's call would: decode, offline render
by this process's shared browser (started once, before the clock starts, on a warm-up
page), features, SVMs. Reported:

* the benchmark's P, R, F1 (:func:`scrapy_cepr.evaluation.benchmark_summary`);
* the paper's page-level accuracy (Wang et al. 2009, Sec. 5): a page is correct when both
  its title and its body are; body correct = shingle F1 ≥ 0.8 against the gold body;
  title correct = rapidfuzz ``ratio`` ≥ 90 with the JSON-LD ``headline`` (else
  ``og:title``), over the pages that have one;
* milliseconds per page, median and p95: ``render`` (loading the page + the capture
  ``evaluate``), ``features`` (element table, candidates, features), ``svm`` (both
  models), and ``total`` (the whole ``extract`` call, including parsing twice).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_wang2009 import BODY_CORRECT_F1, f1_of, reference_title, title_ok  # noqa: E402

import scrapy_cepr  # noqa: E402
from scrapy_cepr.core.page import decode_html  # noqa: E402
from scrapy_cepr.evaluation import CORPUS_ENV, benchmark_counts, benchmark_summary, load_corpus  # noqa: E402


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=os.environ.get(CORPUS_ENV))
    ap.add_argument("--features", default="extended", choices=("extended", "paper"))
    ap.add_argument("--first-screen", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--limit", type=int)
    args = ap.parse_args(argv)
    if not args.corpus:
        ap.error(f"give the corpus path or set {CORPUS_ENV}")
    params = {"features": args.features, "first_screen": args.first_screen}
    scrapy_cepr.extract("<html><body><p>Warm up the browser, one two three.</p></body></html>", method="wang2009")
    counts, body_ok, title_rows, failures = [], [], [], []
    times: dict[str, list[float]] = {"render": [], "features": [], "svm": [], "total": []}
    for i, s in enumerate(load_corpus(args.corpus)):
        if args.limit and i >= args.limit:
            break
        t0 = time.perf_counter()
        try:
            r = scrapy_cepr.extract(s.html, url=s.url, method="wang2009", **params)
        except scrapy_cepr.ExtractionError as exc:
            failures.append(f"{s.id}: {exc}")
            counts.append(benchmark_counts("", s.gold_body))
            body_ok.append(False)
            continue
        times["total"].append((time.perf_counter() - t0) * 1000)
        tm = r.timings
        if "load_ms" in tm:
            times["render"].append(tm["load_ms"] + tm["capture_ms"])
        times["features"].append(tm.get("features_ms", 0.0))
        times["svm"].append(tm.get("svm_ms", 0.0))
        counts.append(benchmark_counts(r.body, s.gold_body))
        ok = f1_of(r.body, s.gold_body) >= BODY_CORRECT_F1
        body_ok.append(ok)
        ref = reference_title(decode_html(s.html))
        if ref:
            title_rows.append((title_ok(r.title, ref), ok))
    summary = benchmark_summary(counts)
    report = {
        "method": "wang2009",
        "params": params,
        "pages": len(counts),
        "failures": failures,
        "benchmark": {k: round(v, 4) for k, v in summary.items() if k != "pages"},
        "paper_accuracy": {
            "body": round(sum(body_ok) / len(body_ok), 4),
            "title": round(sum(t for t, _ in title_rows) / max(len(title_rows), 1), 4),
            "title_and_body": round(sum(t and b for t, b in title_rows) / max(len(title_rows), 1), 4),
            "pages_with_title_reference": len(title_rows),
        },
        "ms_per_page": {k: {"median": round(statistics.median(v), 1), "p95": round(pct(v, 95), 1)}
                        for k, v in times.items() if v},
    }
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
