#!/usr/bin/env python3
"""The cost of each body format and of the metadata per page, as a ratio to the lxml
parse, on the article-extraction-benchmark corpus (181 pages); and the check that the
formats leave the body, hence F1, unchanged.

Per page (decoded to ``str`` once, before any timing; steps interleaved per page after a
warm-up), timed with ``time.perf_counter``:

* ``parse``: ``lxml.html.fromstring(html)``, the unit of the ratios (as in compare.py);
* ``extract``: :func:`scrapy_cepr.extract` (text body), for scale;
* ``html (crawl)``: :func:`scrapy_cepr.core.formats.body_html` on the page the method
  has just run on, what the worker adds with ``CEPR_BODY_FORMATS`` holding ``"html"``;
* ``html (lazy)``: the first access to :attr:`Extraction.body_html`, which parses the
  page again (the API keeps only the decoded HTML, not the tree);
* ``markdown``: :func:`scrapy_cepr.core.formats.html_to_markdown` of that HTML (added
  on top of ``html``);
* ``metadata``: :func:`scrapy_cepr.core.metadata.extract_metadata` (its own parse with the
  scripts kept, extruct, htmldate).

Reported: the median ms of each step and the median over pages of its per-page ratio to
the parse. A step above 0.3x the parse stays opt-in (the default ``CEPR_BODY_FORMATS``
is text only, ``CEPR_METADATA`` False).

The F1 check runs :func:`scrapy_cepr.worker.extract_page` with every format and
the metadata on, and scores its body against the plain :func:`extract` body.

Usage::

    python benchmarks/formats_cost.py [--corpus DIR] [--method setpr] [--limit N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import lxml.html

from scrapy_cepr import extract, get_method
from scrapy_cepr.core.formats import body_html, html_to_markdown
from scrapy_cepr.core.metadata import extract_metadata
from scrapy_cepr.core.page import Page, decode_html
from scrapy_cepr.evaluation import CORPUS_ENV, benchmark_counts, benchmark_summary, load_corpus
from scrapy_cepr.options import ExtractOptions
from scrapy_cepr.worker import extract_page

STEPS = ("parse", "extract", "html (crawl)", "html (lazy)", "markdown", "metadata")
OPT_IN_ABOVE = 0.3


def measure(pages: list[tuple[str, str | None]], method: str, warmup: int = 3) -> dict[str, list[float]]:
    """Per step, the seconds of every page (after *warmup* untimed pages)."""
    spec = get_method(method)
    params = spec.make_params()
    times: dict[str, list[float]] = {s: [] for s in STEPS}
    for i, (html, url) in enumerate(pages[:warmup] + pages):
        t = time.perf_counter
        t0 = t()
        lxml.html.fromstring(html)
        t1 = t()
        extraction = extract(html, url=url, method=method)
        t2 = t()
        page = Page.from_html(html, url=url)
        result = spec.run(page, params)
        t3 = t()
        nodes = result.nodes
        html_out = body_html(page, nodes.keep) if nodes is not None and result.body else ""
        t4 = t()
        lazy = extraction.body_html
        t5 = t()
        html_to_markdown(lazy)
        t6 = t()
        extract_metadata(html, url=url, headline=extraction.title)
        t7 = t()
        if lazy != html_out:
            raise AssertionError(f"lazy and crawl body_html differ on {url}")
        if i < warmup:
            continue
        for step, seconds in zip(STEPS, (t1 - t0, t2 - t1, t4 - t3, t5 - t4, t6 - t5, t7 - t6)):
            times[step].append(seconds)
    return times


def summary(times: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    parse = times["parse"]
    out = {}
    for step, values in times.items():
        ratios = [v / p for v, p in zip(values, parse) if p > 0]
        ratio = statistics.median(ratios)
        out[step] = {"median_ms": statistics.median(values) * 1000, "median_x_parse": ratio,
                     "opt_in": step not in ("parse", "extract") and ratio > OPT_IN_ABOVE}
    return out


def f1_unchanged(samples: list, method: str) -> dict[str, float]:
    plain, formatted, same = [], [], 0
    for s in samples:
        body = extract(s.html, url=s.url, method=method).body
        full = extract_page(s.html, s.url, ExtractOptions(method, formats=("html", "markdown"), metadata=True))[0]
        same += full.body == body
        plain.append(benchmark_counts(body, s.gold_body))
        formatted.append(benchmark_counts(full.body, s.gold_body))
    return {"f1_text_only": benchmark_summary(plain)["f1"], "f1_with_formats": benchmark_summary(formatted)["f1"],
            "identical_bodies": same, "pages": len(samples)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus dir (default ${CORPUS_ENV})")
    parser.add_argument("--method", default="setpr")
    parser.add_argument("--limit", type=int, default=0, help="first N pages only (0: all)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"no corpus: set {CORPUS_ENV} or pass --corpus")
    samples = list(load_corpus(Path(args.corpus)))
    if args.limit:
        samples = samples[: args.limit]
    pages = [(decode_html(s.html), s.url) for s in samples]
    rows = summary(measure(pages, args.method))
    print(f"{len(pages)} pages, method {args.method}\n")
    print("| step | median ms/page | median × parse | opt-in (> 0.3× parse) |")
    print("|---|---|---|---|")
    for step, r in rows.items():
        flag = "" if step in ("parse", "extract") else ("yes" if r["opt_in"] else "no")
        print(f"| {step} | {r['median_ms']:.2f} | {r['median_x_parse']:.2f} | {flag} |")
    check = f1_unchanged(samples, args.method)
    print(f"\nF1 text only {check['f1_text_only']:.4f}, with html+markdown+metadata on "
          f"{check['f1_with_formats']:.4f}; identical bodies on {check['identical_bodies']}/{check['pages']} pages")
    if args.json:
        Path(args.json).write_text(json.dumps({"steps": rows, "f1": check, "method": args.method}, indent=2))
    return 0 if check["identical_bodies"] == check["pages"] else 1


if __name__ == "__main__":
    sys.exit(main())
