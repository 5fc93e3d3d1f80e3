#!/usr/bin/env python3
"""Metadata coverage and date accuracy on the article-extraction-benchmark corpus.

Coverage: the share of pages where :func:`scrapy_cepr.core.metadata.extract_metadata` finds
a publication date, at least one author, a language and a lead image, and where each
value came from (JSON-LD, microdata, OpenGraph, meta, htmldate, page text).

Date accuracy, against the page's own JSON-LD ``datePublished`` (of its first article
item, read by extruct; placeholders before 1995 such as ``0001-01-01`` do not count)
where it has one, compared by day (``YYYY-MM-DD`` as written; JSON-LD often gives UTC
while the URL and the page show the local day, so "within a day" is shown as well):

* ``htmldate (page)``: htmldate's own date on the whole page (fast mode, as our metadata
  runs it). Not fully independent: htmldate reads ``<meta>`` first and then JSON in
  scripts itself;
* ``htmldate (no JSON-LD)``: htmldate on the page with its ``application/ld+json``
  scripts removed: the honest accuracy of the fallback;
* ``metadata``: our ``date_published``; trivial where JSON-LD has the date (JSON-LD wins
  in our precedence), shown for completeness.

Usage::

    python benchmarks/metadata_coverage.py [--corpus DIR] [--limit N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from datetime import date
from pathlib import Path

from scrapy_cepr.core.metadata import _article, _iso, _parse, _structured, extract_metadata, htmldate_date
from scrapy_cepr.core.page import decode_html
from scrapy_cepr.evaluation import CORPUS_ENV, load_corpus

_LD_SCRIPT = re.compile(r"<script[^>]*application/ld\+json[^>]*>.*?</script\s*>", re.IGNORECASE | re.DOTALL)


def json_ld_date(source: str, url: str | None) -> str | None:
    """``datePublished`` of the page's first JSON-LD article item, as written (ISO)."""
    tree = _parse(source)
    if tree is None:
        return None
    item = _article(_structured(tree, url)["json-ld"])
    return _iso(item.get("datePublished")) if item else None


def run(samples: list) -> dict:
    n = len(samples)
    found = Counter()
    sources: dict[str, Counter] = {k: Counter() for k in ("date_published", "authors", "language", "image")}
    compared = Counter()
    for s in samples:
        source = decode_html(s.html)
        m = extract_metadata(source, url=s.url)
        for key in sources:
            if m[key]:
                found[key] += 1
                sources[key][m["sources"][key]] += 1
        gold = json_ld_date(source, s.url)
        if gold is None:
            continue
        compared["pages"] += 1
        day = gold[:10]
        guesses = {
            "htmldate (page)": htmldate_date(source, s.url),
            "htmldate (no JSON-LD)": htmldate_date(_LD_SCRIPT.sub("", source), s.url),
            "metadata": m["date_published"],
        }
        for name, guess in guesses.items():
            compared[name + " found"] += guess is not None
            compared[name + " same day"] += bool(guess) and guess[:10] == day
            compared[name + " within a day"] += bool(guess) and abs((date.fromisoformat(guess[:10])
                                                                     - date.fromisoformat(day)).days) <= 1
    return {
        "pages": n,
        "coverage": {k: found[k] / n for k in sources},
        "sources": {k: dict(v.most_common()) for k, v in sources.items()},
        "date_accuracy": {
            "pages_with_json_ld_date": compared["pages"],
            **{name: {"found": compared[name + " found"], "same_day": compared[name + " same day"],
                      "within_a_day": compared[name + " within a day"],
                      "accuracy": compared[name + " same day"] / compared["pages"] if compared["pages"] else 0.0}
               for name in ("htmldate (page)", "htmldate (no JSON-LD)", "metadata")},
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus dir (default ${CORPUS_ENV})")
    parser.add_argument("--limit", type=int, default=0, help="first N pages only (0: all)")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"no corpus: set {CORPUS_ENV} or pass --corpus")
    samples = list(load_corpus(Path(args.corpus)))
    if args.limit:
        samples = samples[: args.limit]
    r = run(samples)
    print(f"{r['pages']} pages\n")
    print("| field | pages with a value | sources |")
    print("|---|---|---|")
    for key, share in r["coverage"].items():
        src = ", ".join(f"{k} {v}" for k, v in r["sources"][key].items())
        print(f"| {key} | {share:.1%} | {src} |")
    d = r["date_accuracy"]
    print(f"\nDate vs the page's own JSON-LD datePublished ({d['pages_with_json_ld_date']} pages have one), same day:\n")
    print("| date from | found | same day | accuracy (same day) | within ±1 day (time zones) |")
    print("|---|---|---|---|---|")
    for name in ("htmldate (page)", "htmldate (no JSON-LD)", "metadata"):
        x = d[name]
        within = x["within_a_day"] / d["pages_with_json_ld_date"] if d["pages_with_json_ld_date"] else 0.0
        print(f"| {name} | {x['found']} | {x['same_day']} | {x['accuracy']:.1%} | {within:.1%} |")
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
