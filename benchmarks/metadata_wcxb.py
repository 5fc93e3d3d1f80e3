#!/usr/bin/env python3
"""Title, author and publication date against WCXB's gold (dev split), ours beside
trafilatura's in the same run.

WCXB (``evaluate.py``, ``README.md``) scores the main content only; its gold ``title``,
``author`` and ``publish_date`` come without a scoring rule, so ours is defined here:

* **title exact**: our item's ``title`` (:attr:`Extraction.title
  <scrapy_cepr.core.result.Extraction.title>`, i.e. :func:`scrapy_cepr.core.title.pick_title`
  for the default method) equals the gold after Unicode NFC and collapsing whitespace,
  case kept, curly quotes read as straight ones and zero-width characters dropped (the
  gold's annotators typed ``'`` for the page's ``’`` on some pages and not on others); the
  column "quotes as written" skips that last step; over the pages whose gold has a title;
* **author**: the set of lowercased ``\\w+`` tokens of all our authors equals that of the
  gold author string, the word ``and`` left out (the gold joins names with it); over the
  pages whose gold has an author;
* **date same day**: the first 10 characters (``YYYY-MM-DD``) of ``date_published`` equal
  the gold's; over the pages whose gold has a date;
* **spurious**: the share of the pages whose gold has *no* value where a value is given
  (date and author). A wrong date in a corpus is worse than none.

trafilatura 2.3.1 runs as ``trafilatura.extract_metadata(html, default_url=url)`` (its
defaults: extensive date search on); its ``author`` string is split the same way.

The ``--folds`` option reports the same scores per group of domains (5 folds grouped by
``WcxbSample.domain``): no threshold of ours is fitted on this corpus, the spread shows
how much the numbers move from one set of sites to another.

Usage::

    python benchmarks/metadata_wcxb.py [--wcxb DIR] [--limit N] [--json FILE] [--no-trafilatura]
        [--method cepr-article] [--folds 5] [--errors FIELD] [--by-source] [--date-evidence]

``--date-evidence`` asks which of two dates the gold takes when a page declares a
publication and a modification date on different days: per page, whether each day is
*shown* in the page's visible text (scripts, styles and ``noscript`` removed, whitespace
collapsed, lower case) within 300 characters before and 700 after the start of our
headline, in one of the usual written forms (``September 28, 2025``, ``Sep 28, 2025``,
``28 September 2025``, ``2025-09-28``, ``09/28/2025``, ``28.09.2025`` … with and without
leading zeros; English month names only), and the counts of (gold = published, modified
or another day) × (published shown, modified shown).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path

import lxml.html

from scrapy_cepr import extract
from scrapy_cepr.core.metadata import extract_metadata
from scrapy_cepr.core.page import decode_html
from scrapy_cepr.evaluation import load_wcxb

DEFAULT_WCXB = "/work/shared/data/wcxb-dev"
FIELDS = ("title", "author", "date")


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                         "\ufeff": None, "\u200b": None, "\u00ad": None})


def norm_title(value: str | None, *, quotes: bool = True) -> str:
    """NFC, whitespace collapsed, case kept; with *quotes*, curly quotes made straight and
    zero-width characters dropped (the gold writes ``'`` where many pages write ``’``)."""
    text = " ".join(unicodedata.normalize("NFC", value or "").split())
    return " ".join(text.translate(_QUOTES).split()) if quotes else text


def name_tokens(value: str | list[str] | None) -> frozenset[str]:
    """Lowercased ``\\w+`` tokens of the names, without ``and`` (the gold joins several
    names with it: "A, B, and C")."""
    if isinstance(value, list):
        value = " ".join(value)
    return frozenset(re.findall(r"\w+", (value or "").lower())) - {"and"}


def day(value: str | None) -> str:
    return (value or "")[:10]


def ours(sample, method: str) -> dict[str, str]:
    r = extract(sample.html, url=sample.url, method=method)
    m = extract_metadata(decode_html(sample.html), url=sample.url, headline=r.title)
    return {"title": r.title or "", "author": " ; ".join(m["authors"]), "date": day(m["date_published"]),
            "modified": day(m["date_modified"]), "sources": m["sources"], "confidence": m.get("confidence", {})}


#: strftime forms of a day as pages write it (leading zeros also tried without).
_DAY_FORMS = ("%B %d, %Y", "%b %d, %Y", "%b. %d, %Y", "%B %d %Y", "%b %d %Y", "%d %B %Y", "%d %b %Y",
              "%d %B, %Y", "%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%d/%m/%Y", "%m/%d/%y", "%d/%m/%y",
              "%d.%m.%Y", "%m.%d.%Y")


def day_forms(iso: str) -> set[str]:
    """The lower-case written forms of the day *iso* (``YYYY-MM-DD``); empty if invalid."""
    try:
        d = datetime.date.fromisoformat(iso)
    except ValueError:
        return set()
    out = set()
    for f in _DAY_FORMS:
        text = d.strftime(f).lower()
        out.update((text, re.sub(r"\b0(\d)", r"\1", text)))
    return out


def dates_shown(sample, row: dict) -> dict[str, bool] | None:
    """Whether the published and the modified day of *row* are shown near the headline
    (module docstring, ``--date-evidence``); None unless both are known, on different days."""
    pub, mod = row["date"], row["modified"]
    if not (pub and mod and pub != mod and row["title"]):
        return None
    root = lxml.html.fromstring(decode_html(sample.html))
    for el in root.xpath("//script|//style|//noscript|//template"):
        el.drop_tree()
    body = root.find("body")
    text = " ".join((body if body is not None else root).text_content().split()).lower()
    at = text.find(" ".join(row["title"].split()).lower()[:40])
    if at < 0:
        return None
    zone = text[max(0, at - 300):at + 700]
    return {"published": any(f in zone for f in day_forms(pub)),
            "modified": any(f in zone for f in day_forms(mod))}


def print_date_evidence(rows: list[dict]) -> None:
    """The ``--date-evidence`` table."""
    c: Counter = Counter()
    for row in rows:
        shown, gold = row.get("shown"), row["gold"]["date"]
        if shown is None or not gold:
            continue
        took = ("published" if gold == row["ours"]["date"] else
                "modified" if gold == row["ours"]["modified"] else "another day")
        c[took, shown["published"], shown["modified"]] += 1
    print("\nPages declaring a published and a modified day (different), with a gold date:\n")
    print("| gold takes | both shown | published shown | modified shown | neither |")
    print("|---|---|---|---|---|")
    for took in ("published", "modified", "another day"):
        print(f"| {took} | {c[took, True, True]} | {c[took, True, False]} | {c[took, False, True]} "
              f"| {c[took, False, False]} |")


def theirs(sample) -> dict[str, str]:
    import trafilatura

    doc = trafilatura.extract_metadata(decode_html(sample.html), default_url=sample.url)
    if doc is None:
        return {"title": "", "author": "", "date": ""}
    return {"title": doc.title or "", "author": doc.author or "", "date": day(doc.date)}


def score(rows: list[dict], who: str) -> dict[str, float]:
    c = Counter()
    for row in rows:
        gold, pred = row["gold"], row[who]
        if gold["title"]:
            c["title n"] += 1
            c["title ok"] += norm_title(pred["title"]) == norm_title(gold["title"])
            c["title strict"] += norm_title(pred["title"], quotes=False) == norm_title(gold["title"], quotes=False)
        for f, same in (("author", lambda a, b: name_tokens(a) == name_tokens(b)), ("date", lambda a, b: a == b)):
            if gold[f]:
                c[f + " n"] += 1
                c[f + " found"] += bool(pred[f])
                c[f + " ok"] += bool(pred[f]) and same(pred[f], gold[f])
            else:
                c[f + " none"] += 1
                c[f + " spurious"] += bool(pred[f])
    out = {"title exact": c["title ok"] / max(c["title n"], 1), "title strict": c["title strict"] / max(c["title n"], 1)}
    for f in ("author", "date"):
        out[f] = c[f + " ok"] / max(c[f + " n"], 1)
        out[f + " found"] = c[f + " found"] / max(c[f + " n"], 1)
        out[f + " spurious"] = c[f + " spurious"] / max(c[f + " none"], 1)
    out["pages"] = len(rows)
    out.update({k: c[k] for k in ("title n", "author n", "date n", "author none", "date none")})
    return out


def folds_of(rows: list[dict], k: int) -> list[list[dict]]:
    """*k* groups of rows, each domain wholly in one (by a stable hash of the domain)."""
    groups: list[list[dict]] = [[] for _ in range(k)]
    for row in rows:
        h = int(hashlib.sha1(row["domain"].encode()).hexdigest(), 16)
        groups[h % k].append(row)
    return groups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", default=os.environ.get("CEPR_WCXB_DIR", DEFAULT_WCXB))
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--method", default="cepr-article")
    parser.add_argument("--no-trafilatura", action="store_true")
    parser.add_argument("--trafilatura-cache", metavar="FILE", help="read/write trafilatura's answers here")
    parser.add_argument("--folds", type=int, default=0)
    parser.add_argument("--errors", choices=FIELDS, help="print our wrong values for this field")
    parser.add_argument("--by-source", action="store_true", help="precision of each source of ours")
    parser.add_argument("--date-evidence", action="store_true",
                        help="published or modified: which day the gold takes, by what the page shows")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    cache: dict[str, dict] = {}
    if args.trafilatura_cache and Path(args.trafilatura_cache).is_file():
        cache = json.loads(Path(args.trafilatura_cache).read_text())
    rows = []
    t0 = time.perf_counter()
    timing = Counter()
    for i, s in enumerate(load_wcxb(args.wcxb)):
        if args.limit and i >= args.limit:
            break
        row = {"id": s.id, "domain": s.domain, "url": s.url, "page_type": s.page_type,
               "gold": {"title": s.title, "author": s.author, "date": day(s.date)}}
        t = time.perf_counter()
        row["ours"] = ours(s, args.method)
        timing["ours"] += time.perf_counter() - t
        if args.date_evidence:
            row["shown"] = dates_shown(s, row["ours"])
        if not args.no_trafilatura:
            if s.id not in cache:
                t = time.perf_counter()
                cache[s.id] = theirs(s)
                timing["trafilatura"] += time.perf_counter() - t
            row["trafilatura"] = cache[s.id]
        rows.append(row)
    if args.trafilatura_cache and not args.no_trafilatura:
        Path(args.trafilatura_cache).write_text(json.dumps(cache))
    who = ["ours"] + ([] if args.no_trafilatura else ["trafilatura"])
    results = {w: score(rows, w) for w in who}
    r0 = results["ours"]
    print(f"WCXB dev: {len(rows)} pages ({r0['title n']} with a gold title, {r0['author n']} with an author, "
          f"{r0['date n']} with a date; {r0['author none']} without an author, {r0['date none']} without a date); "
          f"method {args.method}; {time.perf_counter() - t0:.0f} s\n")
    print("| | title exact | title exact, quotes as written | author (same name tokens) | date (same day) | a date where the gold has none "
          "| an author where the gold has none | author found | date found |")
    print("|---|---|---|---|---|---|---|---|---|")
    for w in who:
        x = results[w]
        print(f"| {w} | {x['title exact']:.3f} | {x['title strict']:.3f} | {x['author']:.3f} | {x['date']:.3f} | {x['date spurious']:.0%} "
              f"| {x['author spurious']:.0%} | {x['author found']:.0%} | {x['date found']:.0%} |")
    if args.folds:
        print(f"\nPer fold ({args.folds} folds grouped by domain), ours:\n")
        print("| fold | pages | title exact | author | date | date spurious |")
        print("|---|---|---|---|---|---|")
        per = []
        for j, g in enumerate(folds_of(rows, args.folds)):
            x = score(g, "ours")
            per.append(x)
            print(f"| {j} | {len(g)} | {x['title exact']:.3f} | {x['author']:.3f} | {x['date']:.3f} "
                  f"| {x['date spurious']:.0%} |")
        for key in ("title exact", "author", "date", "date spurious"):
            vals = [x[key] for x in per]
            print(f"{key}: min {min(vals):.3f} max {max(vals):.3f}")
        results["folds"] = per
    if args.by_source:
        print("\nOurs by source (share of right values where the gold has one; values given where it has none):\n")
        print("| field | source | right | wrong | spurious | precision |")
        print("|---|---|---|---|---|---|")
        for f, key in (("author", "authors"), ("date", "date_published")):
            c = Counter()
            for row in rows:
                src = row["ours"]["sources"].get(key)
                g, p = row["gold"][f], row["ours"][f]
                if not p:
                    continue
                ok = name_tokens(g) == name_tokens(p) if f == "author" else g == p
                c[src, "right" if g and ok else "wrong" if g else "spurious"] += 1
            for src in sorted({s for s, _ in c}):
                r, w, sp = c[src, "right"], c[src, "wrong"], c[src, "spurious"]
                print(f"| {f} | {src} | {r} | {w} | {sp} | {r / max(r + w + sp, 1):.2f} |")
    if args.date_evidence:
        print_date_evidence(rows)
    if args.errors:
        f = args.errors
        for row in rows:
            g, p = row["gold"][f], row["ours"][f]
            ok = (norm_title(g) == norm_title(p) if f == "title" else
                  name_tokens(g) == name_tokens(p) if f == "author" else g == p)
            if not ok and (g or p):
                src = row["ours"]["sources"].get({"author": "authors", "date": "date_published"}.get(f, ""), "")
                print(f"{row['id']} {row['domain']} [{src}] gold={g!r} ours={p!r} traf={row.get('trafilatura', {}).get(f)!r}")
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results, "rows": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
