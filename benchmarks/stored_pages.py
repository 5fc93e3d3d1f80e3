#!/usr/bin/env python3
"""Robustness to how pages are stored: the corpus pages as an archive, a corpus or a
saved page may hold them, F1 beside the pages as served, in one run.

Three ways of storing a page change its bytes but not what a browser shows:

* **a stale charset declaration** (:func:`scrapy_cepr.evaluation.stale_charset_page`):
  the page transcoded to UTF-8 while its ``<meta charset>`` still names the legacy
  encoding it was served in (windows-1252, windows-1251, GBK, Shift_JIS …), once per
  charset of ``--charsets``; an extractor that believes the declaration reads mojibake;
* **the HTTP response head first** (:func:`scrapy_cepr.evaluation.http_head_page`): the
  status line and headers before ``<html>``, as a crawler that stores whole responses
  writes them; that text starts the body, and the page's ``<title>`` and ``<meta>`` land
  in the body after it;
* **legacy bytes without a declaration** (:func:`scrapy_cepr.evaluation.legacy_page`):
  the page in the legacy encoding a browser expects of its script (windows-1252 for
  Latin, windows-1251 for Cyrillic …), its declarations removed, as a page of the 2000s
  whose charset was only in the HTTP header, saved without it; the decoder must find
  the encoding.

Each extractor gets the page's bytes, with the URL, as it would read a stored page. For
each method: F1 as served and for each stored copy. AEB is scored with the benchmark's
shingle F1, WCXB with its word F1 (all pages). Nothing is written; the pages are read in
place.

    CEPR_BENCHMARK_DIR=… PYTHONPATH=$PWD python benchmarks/stored_pages.py \\
        [--methods cepr-typed,cepr-article,trafilatura,readability] \\
        [--charsets windows-1252,windows-1251,gbk,shift_jis] [--wcxb $CEPR_WCXB_DIR] [--limit N]

``--methods`` may name the peers of ``benchmarks/compare.py`` (``trafilatura``,
``readability``, ``justext``); they read the same bytes (on the AEB pages only; ``--wcxb``
scores ours). A peer that raises on a page is scored as empty there, and counted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter, defaultdict

from compare import body_runner, probe_extractors

from scrapy_cepr import METHOD_NAMES
from scrapy_cepr.evaluation import (
    CORPUS_ENV,
    benchmark_counts,
    benchmark_summary,
    http_head_page,
    legacy_page,
    load_corpus,
    load_wcxb,
    stale_charset_page,
    word_f1,
)

#: The legacy encodings declared by default: western European, Cyrillic, Chinese and
#: Japanese pages' most common ones before UTF-8.
CHARSETS = ("windows-1252", "windows-1251", "gbk", "shift_jis")
#: The column of the copy with the HTTP response head first.
HTTP_HEAD = "HTTP head first"
#: The column of the copy in a legacy encoding without a declaration.
LEGACY = "legacy bytes, undeclared"


def stored_copies(html: str | bytes, charsets: list[str]) -> dict[str, str | bytes]:
    """The page as served and its stored copies, by column name."""
    return {"served": html, **{c: stale_charset_page(html, c) for c in charsets}, HTTP_HEAD: http_head_page(html),
            LEGACY: legacy_page(html)[0]}


def _header(copies: list[str]) -> str:
    names = ["as served", *(f"`{c}` declared" for c in copies[1:-2]), HTTP_HEAD, LEGACY]
    return "| method | " + " | ".join(names) + " |\n|---|" + "---|" * len(names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"AEB directory (default ${CORPUS_ENV})")
    parser.add_argument("--wcxb", help="also WCXB dev pages (directory)")
    parser.add_argument("--methods", default="cepr-typed,cepr-article,trafilatura,readability")
    parser.add_argument("--charsets", default=",".join(CHARSETS), help="legacy charsets to declare")
    parser.add_argument("--limit", type=int, default=0, help="first N pages of each corpus")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"no corpus: set {CORPUS_ENV} or pass --corpus")
    methods = args.methods.split(",")
    charsets = [c for c in args.charsets.split(",") if c]
    methods, peers = probe_extractors(methods)
    ours = [m for m in methods if m in METHOD_NAMES]
    copies = ["served", *charsets, HTTP_HEAD, LEGACY]
    failures: Counter[str] = Counter()
    run = body_runner(peers, failures)  # a peer reads the bytes as it reads any page

    def scores(samples, names: list[str], score) -> dict[tuple[str, str], list]:
        """``{(method, copy): [score(body, gold) per page]}`` over the first ``--limit`` samples."""
        out: dict[tuple[str, str], list] = defaultdict(list)
        for n, sample in enumerate(samples):
            if args.limit and n >= args.limit:
                break
            pages = stored_copies(sample.html, charsets)
            for m in names:
                for how in copies:
                    out[(m, how)].append(score(run(m, pages[how], sample.url), sample.gold_body))
            if (n + 1) % 200 == 0:
                print(f"  {n + 1} pages", file=sys.stderr)
        return out

    counts = scores(load_corpus(args.corpus), methods, benchmark_counts)
    print(f"AEB, {len(counts[(methods[0], 'served')])} pages (shingle F1), bytes in")
    print(_header(copies))
    for m in methods:
        print(f"| {m} | " + " | ".join(f"{benchmark_summary(counts[(m, h)])['f1']:.4f}" for h in copies) + " |")
    if failures:
        print("failed (scored as empty): " + ", ".join(f"{m} {n} pages" for m, n in failures.items()))

    if args.wcxb and ours:
        f1 = scores(load_wcxb(args.wcxb), ours, lambda body, gold: word_f1(body, gold)[2])
        print(f"\nWCXB dev, {len(f1[(ours[0], 'served')])} pages (word F1, all pages), bytes in")
        print(_header(copies))
        for m in ours:
            print(f"| {m} | " + " | ".join(f"{sum(v) / len(v):.4f}" for v in (f1[(m, h)] for h in copies)) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
