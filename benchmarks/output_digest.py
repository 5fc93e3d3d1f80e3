#!/usr/bin/env python3
"""A digest of what :func:`scrapy_cepr.extract` returns, to show that a speed change
changed no output.

For each method and page (the AEB pages of ``$CEPR_BENCHMARK_DIR``, then the WCXB dev
pages of ``$CEPR_WCXB_DIR``, in id order, each decoded to ``str`` as the benchmarks do),
it hashes the JSON of ``[id, title, body, page_type, repr(confidence)]`` into one SHA-1
per method and corpus (``exact``). A second digest (``rounded``) uses the confidence
rounded to 9 decimals, to tell float noise from a changed body; ``--per-page FILE``
writes one line per page (the SHA-1 of each page's record) so that two runs can be
diffed page by page.

Usage::

    python benchmarks/output_digest.py [--methods cepr-typed,cepr-article] [--limit N] [--per-page FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from scrapy_cepr import extract
from scrapy_cepr.core.page import decode_html
from scrapy_cepr.evaluation import CORPUS_ENV, load_corpus, load_wcxb


def corpora(limit: int | None) -> Iterator[tuple[str, Iterator[tuple[str, str, str | None]]]]:
    """``(corpus name, iterator of (id, html str, url))`` for each corpus whose
    environment variable is set."""
    aeb = os.environ.get(CORPUS_ENV)
    wcxb = os.environ.get("CEPR_WCXB_DIR")
    if aeb:
        yield "aeb", islice(((s.id, s.html, s.url) for s in load_corpus(aeb)), limit)
    if wcxb:
        yield "wcxb", islice(((s.id, s.html, s.url) for s in load_wcxb(wcxb)), limit)


def record(pid: str, html: str | bytes, url: str | None, method: str) -> tuple[list, list]:
    """The exact and the rounded record of one page."""
    text = decode_html(html) if isinstance(html, bytes) else html
    try:
        r = extract(text, url=url, method=method)
    except Exception as exc:  # noqa: BLE001 - a failure is part of the output
        out = [pid, "error", type(exc).__name__, str(exc)]
        return out, out
    conf = r.confidence
    exact = [pid, r.title, r.body, r.page_type, repr(conf)]
    rounded = [pid, r.title, r.body, r.page_type, None if conf is None else round(conf, 9)]
    return exact, rounded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default="cepr-typed,cepr-article")
    parser.add_argument("--limit", type=int, default=None, help="at most N pages per corpus")
    parser.add_argument("--per-page", default=None, help="write one SHA-1 per page and method here")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    lines: list[str] = []
    for corpus, pages in corpora(args.limit):
        pages_list = list(pages)
        for method in methods:
            exact, rounded = hashlib.sha1(), hashlib.sha1()
            for pid, html, url in pages_list:
                e, r = record(pid, html, url, method)
                ej = json.dumps(e, ensure_ascii=False).encode("utf-8", "surrogatepass")
                exact.update(ej + b"\n")
                rounded.update(json.dumps(r, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n")
                if args.per_page:
                    lines.append(f"{corpus}\t{method}\t{pid}\t{hashlib.sha1(ej).hexdigest()}")
            print(f"{corpus}\t{method}\t{len(pages_list)} pages\texact {exact.hexdigest()}\t"
                  f"rounded {rounded.hexdigest()}", flush=True)
    if args.per_page:
        Path(args.per_page).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
