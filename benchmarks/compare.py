#!/usr/bin/env python3
"""Side-by-side comparison on the article-extraction-benchmark corpus (181 pages):
quality (the benchmark's shingle P/R/F1, spec §6) and speed (median ms per page) of

* ``parse``: ``lxml.html.fromstring(html)`` alone, the speed floor (no output, no F1);
* each of our methods (:data:`scrapy_cepr.METHOD_NAMES`), end to end from the HTML
  ``str`` to an :class:`~scrapy_cepr.Extraction`;
* ``trafilatura``: ``trafilatura.extract(html)``;
* ``readability``: readability-lxml ``Document(html).summary()``, then its text;
* ``justext``: ``justext.justext(html, stoplist("English"))``, non-boilerplate
  paragraphs joined by newlines;
* ``fulltext``: the whole page's text, the quality floor (``html_text.extract_text`` when
  html-text is installed, else lxml ``text_content()`` of ``<body>``).

Every page is decoded to ``str`` once, before any timing (w3lib, as
:func:`scrapy_cepr.extract` does). The extractors are interleaved per page, back to back
in one fixed order with the parse first, after a warm-up on the first pages, so that a
noisy machine slows all of them alike (rotating the order from page to page flattered the
ratio to the parse: 2.38× against 2.75× back to back for the same code). An extractor that is not installed (or one of our methods that
cannot be imported) is skipped with a note.

Usage::

    python benchmarks/compare.py [--corpus DIR] [--methods a,b,…] [--json FILE] [--chart PNG] [--per-page FILE]

``--per-page FILE`` writes one tab-separated line per page (id, url, the page's shingle F1
per extractor, :func:`scrapy_cepr.evaluation.page_f1`), the pages where the worst of our
methods scores lowest first (:func:`write_per_page`, shared with ``benchmarks/wcxb.py``).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lxml.html

from scrapy_cepr import METHOD_NAMES, extract, get_method
from scrapy_cepr.core.page import decode_html
from scrapy_cepr.evaluation import CORPUS_ENV, benchmark_counts, benchmark_summary, load_corpus, page_f1

logger = logging.getLogger("compare")

Extractor = Callable[[str], str]
OURS = set(METHOD_NAMES)


def _html_to_text() -> tuple[Callable[[str], str], str]:
    """A function HTML str -> plain text with blocks on separate lines, and its name."""
    try:
        import html_text
    except ImportError:

        def body_text(html: str) -> str:
            root = lxml.html.fromstring(html)
            body = root.find(".//body")
            return (body if body is not None else root).text_content()

        return body_text, "lxml text_content of <body>"
    return html_text.extract_text, "html-text"


def build_extractors(names: list[str] | None) -> tuple[dict[str, Extractor | None], list[str]]:
    """``{name: function}`` in report order (``parse`` maps to None: timed, not scored) and
    the notes on skipped extractors."""
    notes: list[str] = []
    out: dict[str, Extractor | None] = {"parse": None}
    for name in METHOD_NAMES:
        try:
            get_method(name)
        except ImportError as exc:
            notes.append(f"{name}: skipped, cannot be imported ({exc})")
            continue
        out[name] = lambda html, _m=name: extract(html, method=_m).body
    to_text, to_text_name = _html_to_text()
    try:
        import trafilatura

        out["trafilatura"] = lambda html: trafilatura.extract(html) or ""
    except ImportError:
        notes.append("trafilatura: skipped, not installed (pip install trafilatura)")
    try:
        from readability import Document

        out["readability"] = lambda html: to_text(Document(html).summary())
    except ImportError:
        notes.append("readability: skipped, not installed (pip install readability-lxml)")
    try:
        import justext

        stoplist = justext.get_stoplist("English")

        def run_justext(html: str) -> str:
            paragraphs = justext.justext(html, stoplist)
            return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

        out["justext"] = run_justext
    except ImportError:
        notes.append("justext: skipped, not installed (pip install justext)")
    out["fulltext"] = to_text
    notes.append(f"fulltext: {to_text_name}")
    if names:
        unknown = [
            n for n in names if n not in out and n not in OURS | {"trafilatura", "readability", "justext"}
        ]
        if unknown:
            raise SystemExit(f"compare.py: error: unknown method {unknown[0]!r}; known: {', '.join(out)}")
        out = {k: v for k, v in out.items() if k in names or k == "parse"}
    return out, notes


def probe_extractors(names: list[str]) -> tuple[list[str], dict[str, Extractor | None]]:
    """For the robustness probes (``plain_pages.py``, ``stored_pages.py``,
    ``comment_threads.py``): the methods of *names* that can run, in order (ours, and the
    peers that are installed; a note for each skipped one on stderr), and the peers'
    functions (:func:`build_extractors`)."""
    peers, notes = build_extractors([m for m in names if m not in OURS] or ["fulltext"])
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return [m for m in names if m in OURS or m in peers], peers


def body_runner(peers: dict[str, Extractor | None], failures: Counter[str]) -> Callable[..., str]:
    """``run(method, html, url=None)``: the body of *html* by one of our methods (given the
    URL) or by a peer of *peers* (which reads the page as it reads any page); a peer that
    raises gives ``""`` and is counted in *failures*."""

    def run(method: str, html: str | bytes, url: str | None = None) -> str:
        if method in OURS:
            return extract(html, url=url, method=method).body
        try:
            return peers[method](html) or ""  # type: ignore[misc, arg-type]
        except Exception:  # noqa: BLE001 - a failing peer is scored as empty, and counted
            failures[method] += 1
            return ""

    return run


def write_per_page(path: str | Path, rows: list[dict[str, Any]], columns: list[str], names: list[str]) -> None:
    """Write a per-page report: a tab-separated file with a header line, one line per row:
    the row's *columns* (e.g. id, url), then its F1 (3 decimals) for each of *names*
    (``rows[i]["f1"][name]``; empty when missing), then ``worst_ours``, the lowest F1 among
    our methods (:data:`OURS`) in *names*. Sorted by ``worst_ours`` ascending (the pages
    that most need a look first), then by the first column. Tabs and newlines inside a
    value become spaces."""
    ours = [n for n in names if n in OURS]

    def worst(row: dict[str, Any]) -> float:
        vals = [row["f1"][n] for n in ours if n in row["f1"]]
        return min(vals) if vals else 1.0

    def cell(value: Any) -> str:
        return " ".join(str(value if value is not None else "").split())

    lines = ["\t".join([*columns, *names, "worst_ours"])]
    for row in sorted(rows, key=lambda r: (worst(r), str(r.get(columns[0], "")))):
        f1 = [f"{row['f1'][n]:.3f}" if n in row["f1"] else "" for n in names]
        lines.append("\t".join([*(cell(row.get(c)) for c in columns), *f1, f"{worst(row):.3f}" if ours else ""]))
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def run(
    corpus: Path, extractors: dict[str, Extractor | None], warmup: int = 5, per_page: list[dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Time and score every extractor on every page; returns per-name results. With a
    *per_page* list, appends ``{"id", "url", "f1": {name: page F1}}`` for each page."""
    pages = []
    for sample in load_corpus(corpus):
        html = sample.html if isinstance(sample.html, str) else decode_html(sample.html)
        pages.append((sample.id, html, sample.gold_body, sample.url))
    names = list(extractors)
    times: dict[str, list[float]] = {n: [] for n in names}
    counts: dict[str, list] = {n: [] for n in names if extractors[n] is not None}
    failures: dict[str, int] = {n: 0 for n in names}

    def call(name: str, html: str) -> str:
        fn = extractors[name]
        if fn is None:
            lxml.html.fromstring(html)
            return ""
        return fn(html)

    for _, html, _, _ in pages[:warmup]:
        for name in names:
            try:
                call(name, html)
            except Exception as exc:  # noqa: BLE001 - a failing extractor is scored as empty below
                logger.info("warm-up: %s failed: %s", name, exc)
    for i, (pid, html, gold, url) in enumerate(pages):
        gc.collect()
        page_scores: dict[str, float] = {}
        for name in names:  # back to back, parse first, the same order on every page
            start = time.perf_counter()
            try:
                text = call(name, html)
            except Exception as exc:  # noqa: BLE001
                text = ""
                failures[name] += 1
                logger.info("%s failed on %s: %s", name, pid, exc)
            times[name].append((time.perf_counter() - start) * 1000.0)
            if name in counts:
                counts[name].append(benchmark_counts(text, gold))
                page_scores[name] = page_f1(counts[name][-1])
        if per_page is not None:
            per_page.append({"id": pid, "url": url, "f1": {n: page_scores[n] for n in names if n in page_scores}})
        if sys.stderr.isatty():
            print(f"\r{i + 1}/{len(pages)} pages", end="", file=sys.stderr)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    parse_ms = statistics.median(times["parse"])
    results: dict[str, dict[str, Any]] = {}
    for name in names:
        med = statistics.median(times[name])
        per_page = [t / p for t, p in zip(times[name], times["parse"])]
        row: dict[str, Any] = {
            "median_ms": med,
            "mean_ms": statistics.fmean(times[name]),
            "x_parse": med / parse_ms,  # ratio of the medians
            "x_parse_per_page": statistics.median(per_page),  # median of each page's ratio
            "failures": failures[name],
            "ours": name in OURS,
        }
        if name in counts:
            s = benchmark_summary(counts[name])
            row.update(f1=s["f1"], precision=s["precision"], recall=s["recall"], accuracy=s["accuracy"])
        results[name] = row
    return results


def markdown(results: dict[str, dict[str, Any]]) -> str:
    """The results as a markdown table, sorted by F1 (the parse row first). "× parse" is the
    ratio of the medians (median ms of the extractor / median ms of the lxml parse);
    "× parse per page" is the median over pages of each page's own ratio."""
    lines = [
        "| extractor | F1 | precision | recall | median ms/page | × parse | × parse per page | failures |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = sorted(results.items(), key=lambda kv: (kv[0] != "parse", -kv[1].get("f1", 0.0)))
    for name, r in rows:
        label = f"**{name}**" if r["ours"] else name
        if "f1" in r:
            q = f"{r['f1']:.3f} | {r['precision']:.3f} | {r['recall']:.3f}"
        else:
            q = "— | — | —"
            label = "lxml parse only"
        lines.append(
            f"| {label} | {q} | {r['median_ms']:.2f} | {r['x_parse']:.2f} | {r['x_parse_per_page']:.2f} "
            f"| {r['failures']} |"
        )
    return "\n".join(lines)


def chart(results: dict[str, dict[str, Any]], path: str, pages: int) -> None:
    """F1 against median ms per page (log x), one labelled point per extractor."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import math

    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    fig, ax = plt.subplots(figsize=(9, 6))
    placed: list[tuple[float, float]] = []  # labelled points in (log10 ms, F1)
    for name, r in sorted(results.items(), key=lambda kv: kv[1]["median_ms"]):
        if "f1" not in r:
            ax.axvline(r["median_ms"], color="#888888", linestyle=":", linewidth=1)
            ax.text(
                r["median_ms"] * 1.04,
                0.02,
                "lxml parse",
                rotation=90,
                color="#666666",
                transform=ax.get_xaxis_transform(),
                va="bottom",
                fontsize=9,
            )
            continue
        color = "#1f77b4" if r["ours"] else "#ff7f0e"
        ax.scatter(r["median_ms"], r["f1"], s=50, color=color, zorder=3)
        x, y = math.log10(r["median_ms"]), r["f1"]
        crowded = sum(1 for px, py in placed if abs(px - x) < 0.15 and abs(py - y) < 0.012)
        placed.append((x, y))
        offset = [(6, 4), (6, -13), (-6, 4)][min(crowded, 2)]
        ax.annotate(
            name,
            (r["median_ms"], r["f1"]),
            xytext=offset,
            textcoords="offset points",
            fontsize=9,
            ha="right" if crowded >= 2 else "left",
        )
    lo = min(r["median_ms"] for r in results.values())
    hi = max(r["median_ms"] for r in results.values())
    ax.set_xscale("log")
    ax.set_xlim(lo / 1.3, hi * 1.6)
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000) if lo / 1.3 <= t <= hi * 1.6]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.scatter([], [], color="#1f77b4", label="scrapy-cepr methods")
    ax.scatter([], [], color="#ff7f0e", label="other extractors / full text")
    ax.set_xlabel("median time per page, ms (log scale; from HTML str, one core)")
    ax.set_ylabel("F1 (article-extraction-benchmark shingle metric)")
    ax.set_title(f"Quality against speed on the article-extraction-benchmark ({pages} pages)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        default=os.environ.get(CORPUS_ENV),
        help=f"article-extraction-benchmark directory (default: ${CORPUS_ENV})",
    )
    parser.add_argument("--methods", help="comma list to restrict to (parse is always timed)")
    parser.add_argument("--warmup", type=int, default=5, help="pages run untimed first (default 5)")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON")
    parser.add_argument("--chart", metavar="PNG", help="draw F1 against ms per page")
    parser.add_argument("--per-page", metavar="FILE", help="write each page's F1 per extractor (TSV, worst of ours first)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="compare.py: %(message)s")
    if not args.corpus:
        parser.error(f"no corpus: set {CORPUS_ENV} or pass --corpus")
    names = [n.strip() for n in args.methods.split(",")] if args.methods else None
    extractors, notes = build_extractors(names)
    start = time.perf_counter()
    per_page: list[dict[str, Any]] | None = [] if args.per_page else None
    results = run(Path(args.corpus), extractors, warmup=args.warmup, per_page=per_page)
    elapsed = time.perf_counter() - start
    pages = sum(1 for _ in load_corpus(args.corpus))
    print(f"corpus: {args.corpus} ({pages} pages), {elapsed:.0f} s in all\n")
    print(markdown(results))
    for note in notes:
        print(f"\n- {note}", end="")
    print()
    if args.json:
        meta = {"corpus": str(args.corpus), "pages": pages, "notes": notes, "python": sys.version.split()[0]}
        Path(args.json).write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    if args.chart:
        chart(results, args.chart, pages)
    if args.per_page and per_page is not None:
        scored = [n for n in extractors if extractors[n] is not None]
        write_per_page(args.per_page, per_page, ["id", "url"], scored)
    return 0


if __name__ == "__main__":
    sys.exit(main())
