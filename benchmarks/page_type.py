"""Measure the page-type classifier (:mod:`scrapy_cepr.core.pagetype`, seven types) on
pages whose type is known, and its cost against the lxml parse.

Pages: the 181 article pages of the article-extraction benchmark (``CEPR_BENCHMARK_DIR``;
all articles), the demo site (``example_project/site``: 11 articles and a listing), the
page-type fixtures written for this project (``tests/fixtures/pagetype_<type>_*.html``,
with the URL of their ``<link rel="canonical">``) and the news index fixtures
(``tests/fixtures/index_*.html``, listings). The cross-validated 7x7 confusion matrix on
WCXB's pages is ``benchmarks/train_pagetype.py``'s.

Cost: per AEB page, ``lxml.html.fromstring`` (the parse) and then, back to back,
:func:`~scrapy_cepr.core.pagetype.page_type` on the page model already built (features
and prediction), both as medians and as the median of each page's ratio; "warm" means
the text-node character counts were already computed (the extraction methods compute
them).

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark python benchmarks/page_type.py
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import statistics
import sys
import time
from pathlib import Path

import lxml.html

from scrapy_cepr.core.page import Page
from scrapy_cepr.core.pagetype import PAGE_TYPES, load_model, page_type
from scrapy_cepr.evaluation import CORPUS_ENV, load_corpus

ROOT = Path(__file__).resolve().parents[1]


def pages(corpus: Path | None) -> list[tuple[str, str, bytes | str, str | None]]:
    """``(name, true type, html, url)`` of every page measured."""
    out: list[tuple[str, str, bytes | str, str | None]] = []
    if corpus is not None:
        out += [(f"corpus/{s.id}", "article", s.html, s.url) for s in load_corpus(corpus)]
    site = ROOT / "example_project" / "site"
    out += [(f"demo/{p.name}", "article", p.read_bytes(), None) for p in sorted((site / "articles").glob("*.html"))]
    out.append(("demo/index.html", "listing", (site / "index.html").read_bytes(), None))
    fixtures = ROOT / "tests" / "fixtures"
    for p in sorted(fixtures.glob("pagetype_*.html")):
        html = p.read_text(encoding="utf-8")
        m = re.search(r'<link rel="canonical" href="([^"]+)"', html)
        out.append((f"fixtures/{p.name}", p.name.split("_")[1], html, m.group(1) if m else None))
    out += [(f"fixtures/{p.name}", "listing", p.read_bytes(), None) for p in sorted(fixtures.glob("index_*.html"))]
    return out


def cost(corpus: Path) -> dict[str, float]:
    """Median ms of the parse and of page_type (cold and warm), and per-page ratios."""
    load_model()
    parse, cold, warm = [], [], []
    gc.disable()
    try:
        for s in load_corpus(corpus):
            start = time.perf_counter()
            lxml.html.fromstring(s.html)
            parse.append(time.perf_counter() - start)
            page = Page.from_html(s.html, url=s.url)
            start = time.perf_counter()
            page_type(page)
            cold.append(time.perf_counter() - start)
            page = Page.from_html(s.html, url=s.url)
            page.char_counts  # noqa: B018 (computed by every extraction method)
            start = time.perf_counter()
            page_type(page)
            warm.append(time.perf_counter() - start)
    finally:
        gc.enable()
    med = statistics.median
    return {
        "parse_ms": med(parse) * 1000,
        "cold_ms": med(cold) * 1000,
        "warm_ms": med(warm) * 1000,
        "cold_x": med(cold) / med(parse),
        "warm_x": med(warm) / med(parse),
        "cold_x_per_page": med([c / p for c, p in zip(cold, parse, strict=True)]),
        "warm_x_per_page": med([w / p for w, p in zip(warm, parse, strict=True)]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus directory (default ${CORPUS_ENV})")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus) if args.corpus else None
    if corpus is None:
        print(f"warning: no corpus ({CORPUS_ENV} unset): no AEB pages, no cost", file=sys.stderr)
    data = pages(corpus)
    predicted = [page_type(Page.from_html(html, url=url)) for _, _, html, url in data]
    print("| pages | right | predicted types |")
    print("|---|---|---|")
    for group in ("corpus/", "demo/", "fixtures/pagetype_", "fixtures/index_"):
        rows = [(t, p) for (name, t, _, _), p in zip(data, predicted, strict=True) if name.startswith(group)]
        if not rows:
            continue
        counts = {k: sum(p == k for _, p in rows) for k in PAGE_TYPES}
        shown = ", ".join(f"{k} {v}" for k, v in counts.items() if v)
        print(f"| {group}* ({len(rows)}) | {sum(t == p for t, p in rows)} | {shown} |")
    wrong = [f"{name} ({t} -> {p})" for (name, t, _, _), p in zip(data, predicted, strict=True) if t != p]
    print(f"\nwrong: {', '.join(wrong) or 'none'}")
    if corpus is not None:
        c = cost(corpus)
        print(f"\ncost on {CORPUS_ENV} pages: parse median {c['parse_ms']:.3f} ms; page_type cold "
              f"{c['cold_ms']:.3f} ms ({c['cold_x']:.3f}x parse, per-page median {c['cold_x_per_page']:.3f}x), warm "
              f"{c['warm_ms']:.3f} ms ({c['warm_x']:.3f}x, per page {c['warm_x_per_page']:.3f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
