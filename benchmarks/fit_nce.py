"""Fit the NCE parameters by local search, as Laber et al. (CIKM 2009, Sec. 2) did on their
exploration corpus, and report development and test F1 (spec §3).

Split (deterministic): the corpus pages sorted by ``sha1(id)``; the first ``--dev`` (60)
are the development split, the rest the test split.

Procedure: coordinate descent. Starting from ``NCEParams()`` (or ``--start k=v ...``),
sweep the body parameters in :data:`BODY_GRID` order; for each, try every grid value with
the others fixed and keep the best one if it raises the development benchmark F1
(:func:`scrapy_cepr.evaluation.benchmark_summary`) by more than ``1e-4`` (ties keep the
current value). Repeat full sweeps until one changes nothing (at most ``--rounds``). The
title parameters do not change the body, so they are then fitted the same way on the
share of development pages whose title matches the page's ``og:title`` /
``twitter:title`` (:func:`title_matches`: equal up to a site name; pages without one are
left out). Finally the script prints the dev and test scores of the start and the fitted
parameters.

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark python3 benchmarks/fit_nce.py
    python3 benchmarks/fit_nce.py --corpus /path --dev 60 --rounds 4

Pages are parsed once (their :class:`~scrapy_cepr.methods.nce.ElementTable` too); the run
takes about two minutes on two cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import sys
import time
from collections.abc import Sequence

from rapidfuzz import fuzz

from scrapy_cepr.core.page import Page
from scrapy_cepr.evaluation import CORPUS_ENV, benchmark_counts, benchmark_summary, load_corpus
from scrapy_cepr.methods.nce import ElementTable, NCEParams, run

#: Grid of each body parameter, in sweep order.
BODY_GRID: dict[str, Sequence[float | int]] = {
    "link_density": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0),
    "min_leaf_chars": (25, 50, 75, 100, 150, 200, 300, 400),
    "min_separator_chars": (100, 200, 300, 500, 750, 1000, 1500, 2000, 3000),
    "min_sibling_chars": (25, 50, 100, 150, 200, 300, 500, 1000),
    "sibling_link_density": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0),
    "comment_similarity": (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    "comment_window": (1, 2, 3, 4, 6, 8, 12),
    "comment_min_words": (1, 2, 3, 4, 5, 6),
}
#: Grid of each title parameter, in sweep order.
TITLE_GRID: dict[str, Sequence[float | int]] = {
    "title_min_words": (1, 2, 3, 4, 5, 6),
    "title_max_words": (8, 10, 15, 20, 30, 50),
    "title_overlap": (0.0, 0.25, 0.5, 0.75, 1.0),
}
_MIN_GAIN = 1e-4
_TITLE_MATCH = 90.0


@dataclasses.dataclass
class Prepared:
    """One parsed page: id, gold body, reference title (or None), page and element table."""

    id: str
    gold: str
    ref_title: str | None
    page: Page
    table: ElementTable


def split_ids(ids: Sequence[str], n_dev: int) -> tuple[list[str], list[str]]:
    """``(dev, test)`` ids: sorted by sha1 of the id, the first *n_dev* are dev."""
    order = sorted(ids, key=lambda i: hashlib.sha1(i.encode()).hexdigest())
    return order[:n_dev], order[n_dev:]


def prepare(samples) -> list[Prepared]:
    """Parse every sample once."""
    out = []
    for s in samples:
        page = Page.from_html(s.html, url=s.url)
        out.append(Prepared(s.id, s.gold_body, page.meta_title, page, ElementTable(page)))
    return out


def body_f1(pages: Sequence[Prepared], params: NCEParams) -> float:
    """Benchmark F1 of NCE with *params* over *pages*."""
    counts = [benchmark_counts(run(p.page, params, p.table).body, p.gold) for p in pages]
    return benchmark_summary(counts)["f1"]


def title_accuracy(pages: Sequence[Prepared], params: NCEParams) -> float:
    """Share of the pages with a reference title whose NCE title matches it."""
    scored = [p for p in pages if p.ref_title]
    if not scored:
        return 0.0
    hits = 0
    for p in scored:
        title = run(p.page, params, p.table).title or ""
        hits += title_matches(title, p.ref_title)
    return hits / len(scored)


def title_matches(title: str, reference: str) -> bool:
    """True when *title* and *reference* agree up to a site name: rapidfuzz
    ``partial_ratio`` ≥ 90 (lowercased) and the shorter has ≥ 50 % of the longer's length.

    >>> title_matches("Storm hits the coast", "Storm hits the coast - Daily Planet")
    True
    >>> title_matches("Opinion", "Opinion | Republicans Are Following Trump to Nowhere")
    False
    """
    a, b = title.lower(), reference.lower()
    if not a or not b or min(len(a), len(b)) < 0.5 * max(len(a), len(b)):
        return False
    return fuzz.partial_ratio(a, b) >= _TITLE_MATCH


def local_search(pages, params: NCEParams, grid, score, label: str, rounds: int) -> NCEParams:
    """Coordinate descent of *score(pages, params)* over *grid* (see the module docstring)."""
    best = score(pages, params)
    print(f"[{label}] start {best:.4f} {params}", flush=True)
    for r in range(1, rounds + 1):
        changed = False
        for name, values in grid.items():
            current = getattr(params, name)
            for value in values:
                if value == current:
                    continue
                try:
                    trial = dataclasses.replace(params, **{name: value})
                except ValueError:  # e.g. title_max_words below title_min_words
                    continue
                s = score(pages, trial)
                if s > best + _MIN_GAIN:
                    best, params, changed = s, trial, True
            print(f"[{label}] round {r} {name}={getattr(params, name)} -> {best:.4f}", flush=True)
        if not changed:
            break
    return params


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus directory (default ${CORPUS_ENV})")
    ap.add_argument("--dev", type=int, default=60, help="number of development pages (default 60)")
    ap.add_argument("--rounds", type=int, default=4, help="maximum full sweeps (default 4)")
    ap.add_argument("--start", nargs="*", default=[], metavar="K=V", help="start values (default NCEParams())")
    args = ap.parse_args(argv)
    if not args.corpus:
        ap.error(f"give --corpus or set {CORPUS_ENV}")
    t0 = time.perf_counter()
    samples = list(load_corpus(args.corpus))
    dev_ids, test_ids = split_ids([s.id for s in samples], args.dev)
    by_id = {s.id: s for s in samples}
    dev = prepare(by_id[i] for i in dev_ids)
    test = prepare(by_id[i] for i in test_ids)
    print(f"parsed {len(dev)} dev + {len(test)} test pages in {time.perf_counter() - t0:.1f} s", flush=True)

    fields = {f.name: f.type for f in dataclasses.fields(NCEParams)}
    start_kw = {}
    for item in args.start:
        k, v = item.split("=", 1)
        start_kw[k] = float(v) if fields.get(k) == "float" else int(v)
    start = NCEParams(**start_kw)

    fitted = local_search(dev, start, BODY_GRID, body_f1, "body", args.rounds)
    fitted = local_search(dev, fitted, TITLE_GRID, title_accuracy, "title", args.rounds)

    print(f"done in {time.perf_counter() - t0:.1f} s")
    for label, params in (("start", start), ("fitted", fitted)):
        print(
            f"{label}: dev F1 {body_f1(dev, params):.4f}  test F1 {body_f1(test, params):.4f}  "
            f"dev title {title_accuracy(dev, params):.3f}  test title {title_accuracy(test, params):.3f}"
        )
    print("fitted:", {f: getattr(fitted, f) for f in fields})
    return 0


if __name__ == "__main__":
    sys.exit(main())
