#!/usr/bin/env python3
"""Speed of CEPR-Article (:mod:`scrapy_cepr.methods.article`) against the lxml parse of
the same page, on the article-extraction-benchmark corpus (181 pages).

Issue 9 asks for the new default's median time to be at most 2.5× the lxml parse of the
same page, taken as the **median over pages of each page's ratio** (SETPR: ≤ 2.0×).
This script measures exactly that, on a noisy shared machine:

* every page is decoded to ``str`` once, before any timing (as in ``compare.py``);
* per page, each timed call runs ``--repeat`` times (default 3), interleaved, and the
  minimum is kept (the least disturbed run);
* ``parse`` is the parser call :class:`~scrapy_cepr.core.page.Page` makes
  (``etree.fromstring(html, etree.HTMLParser(**_PARSER_OPTIONS))``); ``lxml.html`` is
  ``lxml.html.fromstring(html)``, the floor that ``compare.py`` reports;
* ``setpr`` and ``cepr-article`` are :func:`scrapy_cepr.extract` end to end (str →
  :class:`~scrapy_cepr.Extraction`); ``page model`` is :meth:`Page.from_html` alone and
  ``article steps`` is :func:`scrapy_cepr.methods.article.run` on a fresh page
  (cepr-article's own cost on top of the page model, lazy per-node counts included).

Ratios are per page (``t_method / t_parse``), then the median over pages. With
``--profile``, one extra cProfile pass over the pages breaks cepr-article down by
function: milliseconds per page (total / pages) and that time over the total parse time,
for the functions of the method's steps (cProfile adds overhead to Python-heavy code, so
read its shares, not its absolute times).

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark \\
        python benchmarks/article_speed.py [--repeat 3] [--profile] [--json FILE]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lxml.html
from lxml import etree

from scrapy_cepr import extract
from scrapy_cepr.core import article
from scrapy_cepr.core.page import Page, decode_html
from scrapy_cepr.core.parse import _PARSER_OPTIONS
from scrapy_cepr.evaluation import CORPUS_ENV, load_corpus

#: Functions reported by ``--profile`` (module file suffix, function name) and a label.
PROFILED: list[tuple[str, str, str]] = [
    ("core/page.py", "from_html", "page model (Page.from_html)"),
    ("core/page.py", "_parse", "  lxml parse + strip (page._parse)"),
    ("core/article.py", "run", "cepr-article run (after the page model)"),
    ("core/title.py", "pick_title", "  title (pick_title)"),
    ("core/setpr.py", "histogram", "  SETPR histogram H, H'"),
    ("core/page.py", "punct_counts", "    punctuation counts"),
    ("core/region.py", "__init__", "  DomTable"),
    ("core/article.py", "record_lists", "  comment records (record_lists)"),
    ("core/region.py", "covered", "  DomTable.covered"),
    ("core/article.py", "body_subtree", "  body subtree (step 3)"),
    ("core/article.py", "_sentence_anchor", "  sentence anchor (step 2)"),
    ("core/region.py", "descendants_tagged", "  non-article tags (steps 5-6)"),
    ("core/comments.py", "comment_start", "  NCE comment phase (step 8)"),
    ("core/article.py", "orphan_headings", "  orphan headings (step 9)"),
    ("core/result.py", "text_node_extraction", "  body assembly (text_node_extraction)"),
]


def _page_parse(html: str) -> None:
    etree.fromstring(html, etree.HTMLParser(**_PARSER_OPTIONS))


def _article_steps(html: str) -> Callable[[], Any]:
    """A call that runs cepr-article's own steps on a fresh page (built untimed)."""
    params = article.ArticleParams()
    page = Page.from_html(html)
    return lambda: article.run(page, params)


CALLS: dict[str, Callable[[str], Any]] = {
    "parse": _page_parse,
    "lxml.html": lxml.html.fromstring,
    "page model": Page.from_html,
    "setpr": lambda html: extract(html, method="setpr"),
    "cepr-article": lambda html: extract(html, method="cepr-article"),
}


def load_pages(corpus: str, limit: int | None) -> list[tuple[str, str]]:
    pages = []
    for sample in load_corpus(corpus):
        html = sample.html if isinstance(sample.html, str) else decode_html(sample.html)
        pages.append((sample.id, html))
        if limit and len(pages) >= limit:
            break
    return pages


def time_pages(pages: list[tuple[str, str]], repeat: int) -> dict[str, list[float]]:
    """Per call name, the min-of-*repeat* milliseconds of every page (runs interleaved)."""
    names = list(CALLS) + ["article steps"]
    best: dict[str, list[float]] = {n: [] for n in names}
    for _, html in pages[:3]:  # warm-up: imports, caches
        for fn in CALLS.values():
            fn(html)
    for k, (_, html) in enumerate(pages):
        gc.collect()
        mins = {n: float("inf") for n in names}
        for r in range(repeat):
            order = names[(k + r) % len(names) :] + names[: (k + r) % len(names)]
            for name in order:
                if name == "article steps":
                    fn = _article_steps(html)
                    start = time.perf_counter()
                    fn()
                else:
                    call = CALLS[name]
                    start = time.perf_counter()
                    call(html)
                mins[name] = min(mins[name], (time.perf_counter() - start) * 1000.0)
        for name in names:
            best[name].append(mins[name])
        if sys.stderr.isatty():
            print(f"\r{k + 1}/{len(pages)} pages", end="", file=sys.stderr)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    return best


def ratios(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Per call: median ms, median per-page ratio to ``parse`` and to ``lxml.html``."""
    out = {}
    for name, ms in times.items():
        out[name] = {
            "median_ms": statistics.median(ms),
            "x_parse": statistics.median(m / p for m, p in zip(ms, times["parse"])),
            "x_lxml_html": statistics.median(m / p for m, p in zip(ms, times["lxml.html"])),
        }
    return out


def profile(pages: list[tuple[str, str]], parse_total_ms: float) -> list[tuple[str, float, float]]:
    """cProfile of ``extract(html, method="cepr-article")`` over all pages:
    ``(label, ms per page, ms / parse ms)`` for :data:`PROFILED` (cumulative times)."""
    prof = cProfile.Profile()
    for _, html in pages:
        prof.runcall(extract, html, method="cepr-article")
    stats = pstats.Stats(prof).stats  # {(file, line, func): (cc, nc, tt, ct, callers)}
    rows = []
    for suffix, func, label in PROFILED:
        ct = sum(v[3] for (f, _, fn), v in stats.items() if fn == func and f.replace(os.sep, "/").endswith(suffix))
        rows.append((label, ct * 1000.0 / len(pages), ct * 1000.0 / parse_total_ms))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus directory (default: ${CORPUS_ENV})")
    parser.add_argument("--repeat", type=int, default=3, help="runs per page and call, the minimum is kept (default 3)")
    parser.add_argument("--limit", type=int, help="only the first N pages (sorted by id)")
    parser.add_argument("--profile", action="store_true", help="add a cProfile breakdown of cepr-article")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"no corpus: pass --corpus or set {CORPUS_ENV}")
    pages = load_pages(args.corpus, args.limit)
    times = time_pages(pages, max(1, args.repeat))
    summary = ratios(times)
    print(f"{len(pages)} pages, min of {args.repeat} runs per page; ratios are medians of per-page ratios\n")
    print("| call | median ms/page | × parse (Page's parser) | × lxml.html.fromstring |")
    print("|---|---:|---:|---:|")
    for name, row in summary.items():
        print(f"| {name} | {row['median_ms']:.2f} | {row['x_parse']:.2f} | {row['x_lxml_html']:.2f} |")
    result: dict[str, Any] = {"pages": len(pages), "repeat": args.repeat, "summary": summary}
    if args.profile:
        rows = profile(pages, sum(times["parse"]))
        print("\ncProfile of cepr-article (cumulative; ms per page = total / pages; × parse = total / total parse)\n")
        print("| step | ms/page | × parse |")
        print("|---|---:|---:|")
        for label, ms, x in rows:
            print(f"| {label} | {ms:.2f} | {x:.2f} |")
        result["profile"] = [{"step": label.strip(), "ms_per_page": ms, "x_parse": x} for label, ms, x in rows]
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
