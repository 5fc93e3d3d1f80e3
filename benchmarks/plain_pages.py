#!/usr/bin/env python3
"""Robustness to older templates: the corpus pages as *plain pages*, F1 beside the pages
as served, in one run.

Pages of the 2000s and 2010s, and many templates since, declare nothing about themselves
and predate HTML5's sectioning elements. Our corpora are recent, so an extractor tuned on
them may lean on what only modern templates carry. This script rewrites every page of
the article-extraction-benchmark (and, with ``--wcxb``, of WCXB dev) as such a page and
scores it again (:func:`scrapy_cepr.evaluation.plain_page`):

* declarations removed: JSON-LD ``<script>``, every ``<meta>`` but the charset ones, the
  microdata attributes (``itemscope``, ``itemtype``, ``itemprop``);
* HTML5's sectioning and grouping elements renamed: ``article``, ``main``, ``section``,
  ``nav``, ``aside``, ``header``, ``footer``, ``figure``, ``figcaption`` become ``div``,
  ``time`` becomes ``span`` (their text stays where it was);
* no URL given to the extractor.

A third copy, the *br page* (:func:`scrapy_cepr.evaluation.br_page`), is the plain page
with its paragraphs written the 1990s–2000s way: each ``<p>`` a ``<font>`` followed by
``<br><br>``, the same lines in a browser. A fourth, the *table page*
(:func:`scrapy_cepr.evaluation.table_page`), is the plain page laid out in tables: each
``div`` a one-cell ``table > tr > td``, the same lines in a browser. Two more have no
heading element: the plain page with its headings in ``div`` boxes
(:func:`scrapy_cepr.evaluation.heading_free_page`, column ``divhead``), and the br page
with its headings written ``<font size=N><b>…</b></font>`` on a line of their own
(:func:`scrapy_cepr.evaluation.font_heading_page`, column ``fonthead``).

For each method: F1 as served (with the URL) and for each copy, and for
``cepr-typed`` the page types it gives to the plain pages. AEB is scored with the benchmark's shingle
F1, WCXB with its word F1 (all pages and articles). Nothing is written; the pages are
read in place.

    CEPR_BENCHMARK_DIR=… PYTHONPATH=$PWD python benchmarks/plain_pages.py \\
        [--methods cepr-typed,cepr-article] [--wcxb $CEPR_WCXB_DIR] [--limit N] [--per-page FILE]

``--methods`` may also name the peers of ``benchmarks/compare.py`` (``trafilatura``,
``readability``, ``justext``): they read the plain page's HTML as they read any page,
without the URL (on the AEB pages only; ``--wcxb`` scores ours).

``--per-page FILE`` also writes one row per page and method (TSV: corpus, page id, page
type, method, F1 as served and for each copy, in the order above), for paired before/after
comparisons.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter, defaultdict

from compare import probe_extractors

from scrapy_cepr import METHOD_NAMES, extract
from scrapy_cepr.evaluation import (
    CORPUS_ENV,
    benchmark_counts,
    benchmark_summary,
    br_page,
    font_heading_page,
    heading_free_page,
    load_corpus,
    load_wcxb,
    plain_page,
    table_page,
    word_f1,
)

COPIES = ("served", "plain", "br", "table", "divhead", "fonthead")


def _copies(html, url: str | None) -> dict[str, tuple]:
    """The page's copies (:data:`COPIES`), each ``(html, url)``: as served (with its URL),
    as a plain page, a br page, a table page, a plain page with its headings in ``div``
    boxes, and a br page with its headings in ``<font>`` (no URL)."""
    return {"served": (html, url), "plain": (plain_page(html), None), "br": (br_page(html), None),
            "table": (table_page(html), None), "divhead": (heading_free_page(html), None),
            "fonthead": (font_heading_page(html), None)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"AEB directory (default ${CORPUS_ENV})")
    parser.add_argument("--wcxb", help="also WCXB dev pages (directory)")
    parser.add_argument("--methods", default="cepr-typed,cepr-article")
    parser.add_argument("--limit", type=int, default=0, help="first N pages of each corpus")
    parser.add_argument("--per-page", help="write per-page F1 (TSV) to this file")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"no corpus: set {CORPUS_ENV} or pass --corpus")
    methods = args.methods.split(",")
    methods, peers = probe_extractors(methods)
    ours = [m for m in methods if m in METHOD_NAMES]

    def run(method: str, html: str, url: str | None) -> tuple[str, str | None]:
        """The body and (ours only) the page type."""
        if method in METHOD_NAMES:
            got = extract(html, url=url, method=method)
            return got.body, got.page_type
        return peers[method](html) or "", None  # a peer reads the page as it reads any page

    counts: dict[tuple[str, str], list] = defaultdict(list)
    rows: list[tuple] = []
    types: Counter[str] = Counter()
    for n, s in enumerate(load_corpus(args.corpus)):
        if args.limit and n >= args.limit:
            break
        pages = _copies(s.html, s.url)
        for m in methods:
            for how in COPIES:
                body, ptype = run(m, *pages[how])
                counts[(m, how)].append(benchmark_counts(body, s.gold_body))
                if m == "cepr-typed" and how == "plain":
                    types[ptype or "none"] += 1
            rows.append(("aeb", s.id, "article", m,
                         *(benchmark_summary(counts[(m, h)][-1:])["f1"] for h in COPIES)))
    print(f"AEB, {len(counts[(methods[0], 'served')])} pages (shingle F1)")
    print("| method | as served | as plain pages | as br pages | as table pages | headings as div | headings as font |"
          "\n|---|---|---|---|---|---|---|")
    for m in methods:
        print(f"| {m} | " + " | ".join(f"{benchmark_summary(counts[(m, h)])['f1']:.4f}" for h in COPIES) + " |")
    if types:
        print(f"cepr-typed's page types of the plain AEB pages: {dict(types.most_common())}")

    if args.wcxb and ours:
        f1: dict[tuple[str, str, str], list[float]] = defaultdict(list)
        for n, w in enumerate(load_wcxb(args.wcxb)):
            if args.limit and n >= args.limit:
                break
            pages = _copies(w.html, w.url)
            for m in ours:
                for how in COPIES:
                    html, url = pages[how]
                    score = word_f1(run(m, html, url)[0], w.gold_body)[2]
                    f1[(m, how, "all")].append(score)
                    if w.page_type == "article":
                        f1[(m, how, "article")].append(score)
                rows.append(("wcxb", w.id, w.page_type, m, *(f1[(m, h, "all")][-1] for h in COPIES)))
        print(f"\nWCXB dev, {len(f1[(ours[0], 'served', 'all')])} pages (word F1)")
        print("| method | " + " | ".join(f"{k}, {h}" for k in ("all", "articles") for h in COPIES) + " |\n|"
              + "---|" * (1 + 2 * len(COPIES)))
        for m in ours:
            cells = [sum(v) / len(v) for v in (f1[(m, h, k)] for k in ("all", "article") for h in COPIES)]
            print(f"| {m} | " + " | ".join(f"{c:.4f}" for c in cells) + " |")
    if args.per_page:
        with open(args.per_page, "w", encoding="utf-8") as out:
            out.write("corpus\tpage\tpage_type\tmethod\t" + "\t".join(f"{h}_f1" for h in COPIES) + "\n")
            for row in rows:
                out.write("\t".join(row[:4]) + "".join(f"\t{v:.4f}" for v in row[4:]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
