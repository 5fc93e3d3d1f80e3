"""The pre-parse bounds of :func:`scrapy_cepr.core.parse.check_bounds` on real pages and
on attribute bombs (issue 18, item 4).

``--corpus``: on every page of the article-extraction benchmark (``CEPR_BENCHMARK_DIR``)
and of the WCXB dev split (``--wcxb``), the counts of
:func:`~scrapy_cepr.core.parse.count_markup` (largest per page: elements, attributes,
most attributes on one element), a check that they are never below the tree libxml2
builds (nor the cheap bounds of :func:`~scrapy_cepr.core.parse.markup_bounds` below
them), and the cost of the check before each parse (:func:`check_bounds`) against the
parse (:func:`parse_html` without the check): each page timed alone, best of
``--repeat`` runs; the medians over the pages, their ratio, the median of the per-page
ratios and the ratio of the sums. "tokenizer pass" counts the pages whose cheap bounds
were not enough (the exact count ran).

``--bombs``: parse time (libxml2 alone) against the number of attributes on one element
and against the number of elements and attributes of flat pages.

    python benchmarks/parse_bounds.py --corpus --wcxb /work/shared/data/wcxb-dev
    python benchmarks/parse_bounds.py --bombs
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import time
from pathlib import Path

from lxml import etree

from scrapy_cepr.core import parse as parse_module
from scrapy_cepr.core.page import decode_html
from scrapy_cepr.core.parse import count_markup, encode_source


def _pages(folder: Path) -> list[bytes]:
    out = []
    for path in sorted(folder.rglob("*.htm*")):
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        out.append(encode_source(decode_html(raw)))
    return out


def _tree_counts(data: bytes) -> tuple[int, int, int]:
    root = etree.fromstring(data, etree.HTMLParser(huge_tree=True, remove_comments=True))
    if root is None:
        return 0, 0, 0
    sizes = [len(el.attrib) for el in root.iter() if isinstance(el.tag, str)]
    return len(sizes), sum(sizes), max(sizes, default=0)


def corpus(name: str, pages: list[bytes], repeat: int) -> None:
    worst = [0, 0, 0]
    below = 0
    for data in pages:
        counts = count_markup(data)
        tree = _tree_counts(data)
        worst = [max(a, b) for a, b in zip(worst, counts)]
        # libxml2 may add html, head and body; it drops duplicate attributes.
        if counts[0] + 3 < tree[0] or counts[1] < tree[1] or counts[2] < tree[2]:
            below += 1
            print("  below the tree:", counts, tree)
    cheap = getattr(parse_module, "markup_bounds", None)
    limits = (parse_module.MAX_ELEMENTS, parse_module.MAX_ATTRIBUTES, parse_module.MAX_ATTRIBUTES_PER_ELEMENT)
    exact = 0
    if cheap is not None:
        for data in pages:
            bounds, counts = cheap(data, *limits), count_markup(data)
            if any(bound < count for bound, count in zip(bounds, counts)):
                below += 1
                print("  cheap bound below the count:", bounds, counts)
            exact += any(bound > limit for bound, limit in zip(bounds, limits))
    saved = parse_module.check_bounds
    scans, parses = [], []
    for data in pages:
        scans.append(_best(lambda data=data: saved(data), repeat))
        parse_module.check_bounds = lambda data, **_: (0, 0, 0)
        try:
            parses.append(_best(lambda data=data: parse_module.parse_html(data), repeat))
        finally:
            parse_module.check_bounds = saved
    scan, parse = statistics.median(scans), statistics.median(parses)
    print(f"{name}: {len(pages)} pages, {sum(map(len, pages)) / 1e6:.1f} MB; largest elements {worst[0]:,}, "
          f"attributes {worst[1]:,}, attributes on one element {worst[2]:,}; pages counted below the tree: {below}")
    print(f"  median check {scan * 1e3:.3f} ms, median parse {parse * 1e3:.3f} ms, ratio {scan / parse:.3f}; "
          f"median of the per-page ratios {statistics.median(s / p for s, p in zip(scans, parses)):.3f}; "
          f"sums {sum(scans) * 1e3:.0f} / {sum(parses) * 1e3:.0f} ms = {sum(scans) / sum(parses):.3f}"
          + (f"; tokenizer pass on {exact} pages" if cheap is not None else ""))


def _best(run, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def bombs() -> None:
    parser = etree.HTMLParser(huge_tree=True)
    print("attributes on one element -> libxml2 parse seconds")
    for n in (500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000):
        data = ("<html><body><div " + " ".join(f"a{i}=x" for i in range(n)) + ">t</div></body></html>").encode()
        start = time.perf_counter()
        etree.fromstring(data, parser)
        print(f"  {n:>7,}  {time.perf_counter() - start:8.3f} s   ({len(data) / 1e3:,.0f} KB)")
    print("elements x attributes each (flat) -> libxml2 parse seconds")
    for n, k in ((100_000, 0), (100_000, 2), (200, 1_000), (2_000, 100), (1_000_000, 0)):
        tag = "<i " + " ".join(f"a{i}" for i in range(k)) + ">x</i>" if k else "<i>x</i>"
        data = ("<html><body>" + tag * n + "</body></html>").encode()
        start = time.perf_counter()
        etree.fromstring(data, parser)
        print(f"  {n:>9,} x {k:>5,}  {time.perf_counter() - start:8.3f} s   ({len(data) / 1e6:,.1f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", action="store_true")
    parser.add_argument("--wcxb", type=Path, help="the WCXB folder (its dev/html pages)")
    parser.add_argument("--bombs", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.corpus:
        aeb = os.environ.get("CEPR_BENCHMARK_DIR")
        if aeb:
            corpus("AEB", _pages(Path(aeb) / "html"), args.repeat)
        if args.wcxb:
            corpus("WCXB dev", _pages(args.wcxb / "dev" / "html"), args.repeat)
    if args.bombs:
        bombs()


if __name__ == "__main__":
    main()
