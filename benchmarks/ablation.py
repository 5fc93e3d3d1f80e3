#!/usr/bin/env python3
"""Ablation of CEPR-Article (:mod:`scrapy_cepr.methods.article`) and CEPR-Typed
(:mod:`scrapy_cepr.methods.typed`, in-sample rows) on both development
corpora, in one run: the article-extraction-benchmark's P/R/F1 (spec §6) on its 181
pages, and WCXB's word F1 (macro over pages; all pages, and per page type) on its dev
split, for the full method, for the method with each step switched off (or back to
its earlier form) by its parameter, and for CEPR-SETPR (the content score it starts
from). The difference to the full method is what each step brings.

Each page is parsed once; every variant runs on the same :class:`Page`.

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark python benchmarks/ablation.py \\
        [--wcxb /path/to/wcxb-dev] [--only LABEL ...] [--variant 'NAME={"param": value}' ...] \\
        [--json FILE] [--pages FILE]

``--variant`` adds a cepr-article run with the given parameters (JSON), ``--only`` keeps
the listed variants (by label prefix), ``--pages`` writes per-page scores (for loss
reports), ``--wcxb`` adds WCXB (default ``$CEPR_WCXB_DIR``; without it, AEB only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict

from scrapy_cepr.core.errors import NotHTMLError
from scrapy_cepr.core.page import Page
from scrapy_cepr.evaluation import (
    CORPUS_ENV,
    PAGE_TYPES,
    WCXB_ENV,
    benchmark_counts,
    benchmark_summary,
    load_corpus,
    load_wcxb,
    page_f1,
    word_f1,
)
from scrapy_cepr.methods import get_method

#: (label, step, method, parameters)
VARIANTS: list[tuple[str, str, str, dict]] = [
    ("cepr-article (all steps)", "", "cepr-article", {}),
    ("- headline anchor", "Wang et al. 2009, body near the title", "cepr-article", {"anchor": False}),
    ("- sentence anchor", "Wang et al. 2009: the body, not the dateline, starts below the title", "cepr-article", {"anchor_sentence": False}),
    ("- body subtree", "Wang et al. 2009 T_BODY / NCE separator node", "cepr-article", {"region": False}),
    ("- story path (step 3b)", "CEPR: one article, one paragraph path", "cepr-article", {"story_path_weight": 1.0}),
    ("- region growth (step 3c)", "text the later steps drop costs the region nothing", "cepr-article", {"grow": False}),
    ("- comment records free in steps 3, 3b", "step 8 drops them wherever they lie", "cepr-article", {"region_free_records": False}),
    ("- drop text before the headline", "Wang et al. 2009, body below the title", "cepr-article", {"pre_title": False}),
    ("- in-region boilerplate", "CEDST hyperlink evidence, NCE link density, HTML semantics", "cepr-article", {"boilerplate": False}),
    ("- figure captions dropped", "gold convention", "cepr-article", {"captions": True}),
    ("- repeated blocks", "repeated caption/teaser text", "cepr-article", {"duplicates": False}),
    ("- one copy of a repeated story", "a story printed twice is the story", "cepr-article", {"duplicate_story": 1.0, "duplicate_path": False}),
    ("- comment removal (all)", "NCE Phase 2 + comment records", "cepr-article", {"comments": False}),
    ("- comment records", "NCE Assumption 2 read on the DOM", "cepr-article", {"comment_records": False}),
    ("- NCE comment cut", "NCE Phase 2", "cepr-article", {"comment_cut": False}),
    ("- dated, unwrapped comment threads", "NCE Assumption 2: dates and one template, records wider than Phase 2's window", "cepr-article", {"comment_dated": False}),
    ("- records on the story path are story", "CEPR: one article, one paragraph path", "cepr-article", {"comment_evidence": False}),
    ("- records inside the story are story", "NCE Assumption 2 (comments after the body)", "cepr-article", {"comment_after_share": 0.0}),
    ("- records holding a heading are story", "sections and cards carry a heading", "cepr-article", {"comment_headed": False}),
    ("- cut needs the story before it", "NCE Assumption 2 (comments after the body)", "cepr-article", {"cut_min_before": 0.0}),
    ("- story-continues guard on the NCE cut", "NCE Assumption 2 (comments after the body)", "cepr-article", {"story_continues": 0.0}),
    ("- orphan headings", "a heading goes with its section", "cepr-article", {"orphan_chars": 0}),
    ("- log-scale evidence (SETPR's H' >= tau)", "CEPR threshold as published", "cepr-article", {"content_level": 1.0}),
    ("setpr", "Wu et al. 2013", "setpr", {}),
    # CEPR-Typed (methods/typed.py). Its models were trained on these pages too, so these
    # rows are in-sample; the out-of-fold ablation is benchmarks/train_blocks.py --ablation.
    ("cepr-typed (all steps, in-sample)", "block classifier over CEPR features + CEPR-Article's region", "cepr-typed", {}),
    ("cepr-typed - region growth", "Wang et al. 2009 T_BODY grown by block scores", "cepr-typed", {"region_threshold": 1.0}),
    ("cepr-typed, page type forced to service", "learned alone: threshold assembly, and the classifier told 'service'", "cepr-typed", {"page_type": "service"}),
    ("cepr-typed - classifier's drops in the region", "", "cepr-typed", {"article_floor": 0.0, "article_loose_floor": 0.0}),
    ("cepr-typed - loose lines need the classifier's word", "paragraph-level elements (HTML §4.4)", "cepr-typed", {"article_loose_floor": 0.0}),
    ("cepr-typed - dated, unwrapped comment threads", "NCE Assumption 2, read from the first kept block to the page's end", "cepr-typed", {"drop_dated_threads": False}),
]


def _parse(html, url):
    try:
        return Page.from_html(html, url=url)
    except NotHTMLError:
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"AEB directory (default: ${CORPUS_ENV})")
    parser.add_argument("--wcxb", default=os.environ.get(WCXB_ENV), help=f"WCXB split directory (default: ${WCXB_ENV})")
    parser.add_argument("--only", nargs="*", help="keep the variants whose label starts with one of these")
    parser.add_argument("--variant", action="append", default=[], help='extra cepr-article run: NAME={"param": value}')
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--pages", metavar="FILE", help="write per-page F1 of every variant as JSON")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"no corpus: pass --corpus or set {CORPUS_ENV}")
    variants = list(VARIANTS)
    if args.only:
        variants = [v for v in variants if any(v[0].startswith(p) for p in args.only)]
    for spec in args.variant:
        name, _, params = spec.partition("=")
        variants.append((name, "", "cepr-article", json.loads(params or "{}")))
    runs = [(label, idea, get_method(m), get_method(m).make_params(**p)) for label, idea, m, p in variants]
    counts: list[list] = [[] for _ in runs]
    per_page: dict[str, dict[str, list[float]]] = {"aeb": defaultdict(list), "wcxb": defaultdict(list)}
    ids: dict[str, list] = {"aeb": [], "wcxb": []}
    for sample in load_corpus(args.corpus):
        page = _parse(sample.html, sample.url)
        ids["aeb"].append(sample.id)
        for k, (label, _, method, params) in enumerate(runs):
            body = method.run(page, params).body if page is not None else ""
            c = benchmark_counts(body, sample.gold_body)
            counts[k].append(c)
            per_page["aeb"][label].append(page_f1(c))
    wcxb: list[dict[str, list[float]]] = [defaultdict(list) for _ in runs]
    if args.wcxb:
        for sample in load_wcxb(args.wcxb):
            page = _parse(sample.html, sample.url)
            ids["wcxb"].append((sample.id, sample.page_type))
            for k, (label, _, method, params) in enumerate(runs):
                body = method.run(page, params).body if page is not None else ""
                f = word_f1(body, sample.gold_body)[2]
                wcxb[k][sample.page_type].append(f)
                wcxb[k]["all"].append(f)
                per_page["wcxb"][label].append(f)
    full = benchmark_summary(counts[0])["f1"]
    types = [t for t in PAGE_TYPES if wcxb[0].get(t)]
    rows = []
    head = "| variant | step | AEB F1 | P | R | ΔF1 |"
    if args.wcxb:
        head += " WCXB all | Δall | " + " | ".join(types) + " |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    full_w = sum(wcxb[0]["all"]) / len(wcxb[0]["all"]) if args.wcxb and wcxb[0]["all"] else 0.0
    for (label, idea, _, _), c, w in zip(runs, counts, wcxb):
        s = benchmark_summary(c)
        row = {"variant": label, "idea": idea, **{k: s[k] for k in ("f1", "precision", "recall")}}
        line = f"| {label} | {idea} | {s['f1']:.4f} | {s['precision']:.4f} | {s['recall']:.4f} | {s['f1'] - full:+.4f} |"
        if args.wcxb:
            means = {t: sum(v) / len(v) for t, v in w.items() if v}
            row["wcxb"] = means
            line += f" {means['all']:.4f} | {means['all'] - full_w:+.4f} | " + " | ".join(f"{means[t]:.3f}" for t in types) + " |"
        rows.append(row)
        print(line)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)
    if args.pages:
        with open(args.pages, "w", encoding="utf-8") as fh:
            json.dump({"ids": ids, "f1": per_page}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
