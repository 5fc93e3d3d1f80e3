#!/usr/bin/env python3
"""Ablation of CEPR-Article (:mod:`scrapy_cepr.methods.article`) and CEPR-Typed
(:mod:`scrapy_cepr.methods.typed`, in-sample rows) on the
article-extraction-benchmark corpus: benchmark P/R/F1 (spec §6) of the full method, of
the method with each step switched off by its parameter, and of CEPR-SETPR (the
content score it starts from). The difference to the full method is what each seed
idea brings (the README's claims table).

Each page is parsed once; every variant runs on the same :class:`Page`.

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark python benchmarks/ablation.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from scrapy_cepr.core.errors import NotHTMLError
from scrapy_cepr.core.page import Page
from scrapy_cepr.evaluation import CORPUS_ENV, benchmark_counts, benchmark_summary, load_corpus
from scrapy_cepr.methods import get_method

#: (label, seed idea, method, parameters)
VARIANTS: list[tuple[str, str, str, dict]] = [
    ("cepr-article (all steps)", "", "cepr-article", {}),
    ("- headline anchor", "Wang et al. 2009, body near the title", "cepr-article", {"anchor": False}),
    ("- sentence anchor", "Wang et al. 2009: the body, not the dateline, starts below the title", "cepr-article", {"anchor_sentence": False}),
    ("- body subtree", "Wang et al. 2009 T_BODY / NCE separator node", "cepr-article", {"region": False}),
    ("- story path (step 3b)", "CEPR: one article, one paragraph path", "cepr-article", {"story_path_weight": 1.0}),
    ("- drop text before the headline", "Wang et al. 2009, body below the title", "cepr-article", {"pre_title": False}),
    ("- in-region boilerplate", "CEDST hyperlink evidence, NCE link density, HTML semantics", "cepr-article", {"boilerplate": False}),
    ("- figure captions dropped", "gold convention", "cepr-article", {"captions": True}),
    ("- repeated blocks", "repeated caption/teaser text", "cepr-article", {"duplicates": False}),
    ("- comment removal (all)", "NCE Phase 2 + comment records", "cepr-article", {"comments": False}),
    ("- story-continues guard on the NCE cut", "NCE Assumption 2 (comments after the body)", "cepr-article", {"story_continues": 0.0}),
    ("- orphan headings", "a heading goes with its section", "cepr-article", {"orphan_chars": 0}),
    ("- log-scale evidence (SETPR's H' >= tau)", "CEPR threshold as published", "cepr-article", {"content_level": 1.0}),
    ("setpr", "Wu et al. 2013", "setpr", {}),
    # CEPR-Typed (methods/typed.py). Its block classifier was trained on these pages too, so
    # these rows are in-sample; the out-of-fold ablation is train_blocks.py --ablation.
    ("cepr-typed (all steps, in-sample)", "block classifier over CEPR features + CEPR-Article's region", "cepr-typed", {}),
    ("cepr-typed - region growth", "Wang et al. 2009 T_BODY grown by block scores", "cepr-typed", {"region_threshold": 1.0}),
    ("cepr-typed, page type forced to service", "learned alone: threshold assembly, and the classifier told 'service'", "cepr-typed", {"page_type": "service"}),
    ("cepr-typed - classifier's drops in the region", "", "cepr-typed", {"article_floor": 0.0}),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus directory (default: ${CORPUS_ENV})")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"no corpus: pass --corpus or set {CORPUS_ENV}")
    runs = [(label, idea, get_method(m), get_method(m).make_params(**p)) for label, idea, m, p in VARIANTS]
    counts: list[list] = [[] for _ in runs]
    for sample in load_corpus(args.corpus):
        try:
            page = Page.from_html(sample.html, url=sample.url)
        except NotHTMLError:
            page = None
        for k, (_, _, method, params) in enumerate(runs):
            body = method.run(page, params).body if page is not None else ""
            counts[k].append(benchmark_counts(body, sample.gold_body))
    full = benchmark_summary(counts[0])["f1"]
    rows = []
    print("| variant | seed idea | F1 | P | R | ΔF1 vs all steps |")
    print("|---|---|---|---|---|---|")
    for (label, idea, _, _), c in zip(runs, counts):
        s = benchmark_summary(c)
        rows.append({"variant": label, "idea": idea, **{k: s[k] for k in ("f1", "precision", "recall")}})
        print(f"| {label} | {idea} | {s['f1']:.4f} | {s['precision']:.4f} | {s['recall']:.4f} | {s['f1'] - full:+.4f} |")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
