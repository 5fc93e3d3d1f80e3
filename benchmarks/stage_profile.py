#!/usr/bin/env python3
"""Where the time of one method goes, stage by stage, as a ratio to the lxml parse.

Each stage is a function of the pipeline (page model, CEPR-Article's steps, the page
type, CEPR-Typed's block features and classifier, the confidence) wrapped by a timer of
the thread's CPU time (``time.thread_time``: another process's load does not count); a
stage's time is *exclusive* (the wrapped stages it calls are counted in their own rows).
For each page: ``gc.collect()``, then ``lxml.html.fromstring(html)`` and the method's
:func:`scrapy_cepr.extract` back to back, as ``benchmarks/compare.py`` does. The report
gives, per stage, its total over the pages divided by the parses' total (``sum``) and the
median over the pages of its ratio to the page's own parse (``median``); ``(rest)`` is
what no wrapped stage holds (``extract`` itself, freeing the page). The timers cost about
1 µs per wrapped call (some 40 a page, a few hundredths of the parse), so the total is a
little above an unwrapped run.

Usage::

    python benchmarks/stage_profile.py [--method cepr-typed] [--corpus aeb|wcxb] [--every N]

The AEB corpus is read from ``$CEPR_BENCHMARK_DIR``, WCXB dev from ``$CEPR_WCXB_DIR``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib
import os
import statistics
import sys
import time
from collections import defaultdict
from typing import Any

import lxml.html

from scrapy_cepr import extract
from scrapy_cepr.core.page import decode_html
from scrapy_cepr.evaluation import load_corpus, load_wcxb

#: (module, function or Class.method, label). A function is wrapped where the module that
#: calls it looks it up (``from x import f`` makes a name of its own); one that the
#: checkout does not have is left out (so that two versions can be compared).
STAGES = [
    ("scrapy_cepr.core.page", "Page.from_html", "page: decode, sniff, encode"),
    ("scrapy_cepr.core.parse", "check_bounds", "page: bound check"),
    ("scrapy_cepr.core.parse", "_parse_once", "page: libxml2 parse"),
    ("scrapy_cepr.core.page", "parse_html", "page: repairs, JSON-LD, strip"),
    ("scrapy_cepr.core.page", "drop_hidden_microdata", "page: hidden microdata"),
    ("scrapy_cepr.core.page", "read_layout_tables", "page: layout tables"),
    ("scrapy_cepr.core.page", "promote_displayed_headline", "page: displayed headline"),
    ("scrapy_cepr.core.page", "_text_nodes", "page: walk"),
    ("scrapy_cepr.core.page", "Page._walk", "page: walk arrays"),
    ("scrapy_cepr.core.page", "_itemtypes", "page: microdata scan"),
    ("scrapy_cepr.core.page", "_microdata", "page: microdata scan"),
    ("scrapy_cepr.core.article", "analyse", "article: other steps"),
    ("scrapy_cepr.core.article", "pick_title", "article: title"),
    ("scrapy_cepr.core.pagetype", "_page_type_proba", "page type"),
    ("scrapy_cepr.core.article", "histogram", "article: SETPR histogram"),
    ("scrapy_cepr.core.article", "DomTable", "article: element table"),
    ("scrapy_cepr.core.article", "_step_comment_records", "article: comment records"),
    ("scrapy_cepr.core.article", "_step_chrome", "article: chrome masks"),
    ("scrapy_cepr.core.article", "_step_region", "article: region"),
    ("scrapy_cepr.core.article", "_step_release_records", "article: released records"),
    ("scrapy_cepr.core.article", "comment_start", "article: NCE comment phase"),
    ("scrapy_cepr.core.article", "_step_orphans", "article: orphan headings"),
    ("scrapy_cepr.core.article", "_step_duplicates", "article: repeated lines"),
    ("scrapy_cepr.core.article", "text_node_extraction", "article: extraction"),
    ("scrapy_cepr.methods.typed", "block_features", "typed: block features"),
    ("scrapy_cepr.core.blocks", "dialog_nodes", "typed: dialog nodes"),
    ("scrapy_cepr.methods.typed", "dialog_nodes", "typed: dialog nodes"),
    ("scrapy_cepr.methods.typed", "ancestor_ranges", "typed: region chain"),
    ("scrapy_cepr.methods.typed", "predict_blocks", "typed: block classifier"),
    ("scrapy_cepr.methods.typed", "assemble", "typed: assembly"),
    ("scrapy_cepr.methods.typed", "drop_repeated", "typed: repeated lines"),
    ("scrapy_cepr.methods.typed", "text_node_extraction", "typed: extraction"),
    ("scrapy_cepr.methods.typed", "run", "typed: other"),
    ("scrapy_cepr.api", "with_confidence", "confidence"),
    ("scrapy_cepr.core.confidence", "features", "confidence: features"),
    ("scrapy_cepr.core.pagetype", "page_features", "page type: features"),
    ("scrapy_cepr.core.trees", "TreeEnsemble.predict", "tree ensembles (3 models)"),
]


def _install(totals: dict[str, float], clock: Any) -> None:
    """Wrap every stage of :data:`STAGES` with an exclusive timer adding to *totals*."""
    inner: list[float] = []

    def wrap(fn: Any, label: str) -> Any:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            inner.append(0.0)
            try:
                return fn(*args, **kwargs)
            finally:
                spent = clock() - start
                totals[label] += spent - inner.pop()
                if inner:
                    inner[-1] += spent

        return timed

    for module_name, name, label in STAGES:
        module = importlib.import_module(module_name)
        if not hasattr(module, name.split(".")[0]):
            continue
        if "." in name:
            cls_name, attr = name.split(".")
            cls = getattr(module, cls_name)
            raw = cls.__dict__[attr]
            if isinstance(raw, classmethod):
                setattr(cls, attr, classmethod(wrap(raw.__func__, label)))
            else:
                setattr(cls, attr, wrap(raw, label))
        else:
            setattr(module, name, wrap(getattr(module, name), label))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--method", default="cepr-typed")
    parser.add_argument("--corpus", choices=("aeb", "wcxb"), default="aeb")
    parser.add_argument("--every", type=int, default=1, help="every N-th page (default 1)")
    args = parser.parse_args(argv)
    samples = load_corpus(os.environ["CEPR_BENCHMARK_DIR"]) if args.corpus == "aeb" \
        else load_wcxb(os.environ["CEPR_WCXB_DIR"])
    pages = [(decode_html(s.html) if isinstance(s.html, bytes) else s.html, s.url)
             for i, s in enumerate(samples) if i % args.every == 0]
    clock = time.thread_time
    totals: dict[str, float] = defaultdict(float)
    _install(totals, clock)
    for html, url in pages[:3]:  # warm up: models loaded, caches filled
        extract(html, url=url, method=args.method)
    totals.clear()
    parses: list[float] = []
    runs: list[float] = []
    per_page: list[dict[str, float]] = []
    for html, url in pages:
        gc.collect()
        start = clock()
        lxml.html.fromstring(html)
        parses.append(clock() - start)
        before = dict(totals)
        start = clock()
        extract(html, url=url, method=args.method)
        runs.append(clock() - start)
        per_page.append({k: v - before.get(k, 0.0) for k, v in totals.items()})
    parse_sum = sum(parses)
    print(f"{args.method} on {len(pages)} {args.corpus} pages, CPU time, wrapped stages; parse total "
          f"{parse_sum * 1e3:.1f} ms; extract {sum(runs) / parse_sum:.2f}x the parse (sum), "
          f"{statistics.median(r / p for r, p in zip(runs, parses)):.2f}x (median of the pages)")
    print("| stage | sum (x parse) | median (x parse) |")
    print("|---|---:|---:|")
    for label in sorted(totals, key=lambda k: -totals[k]):
        median = statistics.median(row.get(label, 0.0) / p for row, p in zip(per_page, parses))
        print(f"| {label} | {totals[label] / parse_sum:.3f} | {median:.3f} |")
    rest = [r - sum(row.values()) for r, row in zip(runs, per_page)]
    print(f"| (rest) | {sum(rest) / parse_sum:.3f} | {statistics.median(x / p for x, p in zip(rest, parses)):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
