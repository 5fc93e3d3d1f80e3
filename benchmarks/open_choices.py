"""Measure the effect of CEPR's [open] choices (spec §1) on the real corpus, in one run.

* smoothing boundaries: the authors' code leaves the first and last r nodes unsmoothed
  (``edges="keep"``, our default) versus padding with zeros (``edges="pad"``);
* the punctuation set: Unicode category P* (our default) versus the authors' first code,
  ASCII ``, . ; ' "`` plus the CJK marks ``，。；：？！、``;
* λ (0 = plain Gaussian smoothing, 1 = paper) and the radius r (1 = paper, 2, 3).

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark python benchmarks/open_choices.py

Prints a markdown table of benchmark-metric P/R/F1 for each variant (CEPR-ETPR and
CEPR-SETPR rows for the punctuation set, which both use puncNum).
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import contextmanager

import numpy as np
from tqdm import tqdm

from scrapy_cepr import extract
from scrapy_cepr.core import text as text_module
from scrapy_cepr.evaluation import CORPUS_ENV, benchmark_counts, benchmark_summary, load_corpus

#: The punctuation of the authors' first code (hfut-dmic/ContentExtractor, via spec §1).
AUTHORS_PUNCTUATION = ",.;'\"，。；：？！、"


@contextmanager
def punctuation_set(chars: str | None):
    """Temporarily count only *chars* as punctuation (None: the default P* table).

    An experiment hook for this script only: it swaps the module-level table function.
    """
    if chars is None:
        yield
        return
    original = text_module.punctuation_table
    table = np.zeros_like(original())
    table[[ord(c) for c in chars]] = True
    text_module.punctuation_table = lambda: table
    try:
        yield
    finally:
        text_module.punctuation_table = original


def score(samples, method: str, **params) -> dict[str, float]:
    """Benchmark-metric summary of *method* with *params* over *samples*."""
    counts = [benchmark_counts(extract(s.html, method=method, **params).body, s.gold_body) for s in samples]
    return benchmark_summary(counts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus directory (default ${CORPUS_ENV})")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"give --corpus or set {CORPUS_ENV}")
    samples = list(load_corpus(args.corpus))
    variants = [
        ("setpr, edges=keep (default)", None, "setpr", {}),
        ("setpr, edges=pad", None, "setpr", {"edges": "pad"}),
        ("setpr, λ=0 (plain Gaussian)", None, "setpr", {"lambda_": 0.0}),
        ("setpr, λ=2", None, "setpr", {"lambda_": 2.0}),
        ("setpr, r=2", None, "setpr", {"radius": 2}),
        ("setpr, r=3", None, "setpr", {"radius": 3}),
        ("etpr, punctuation P* (default)", None, "etpr", {}),
        ("etpr, authors' ASCII+CJK punctuation", AUTHORS_PUNCTUATION, "etpr", {}),
        ("setpr, authors' ASCII+CJK punctuation", AUTHORS_PUNCTUATION, "setpr", {}),
    ]
    print("| variant | P | R | F1 |\n|---|---|---|---|")
    for name, punct, method, params in tqdm(variants, file=sys.stderr, disable=not sys.stderr.isatty()):
        with punctuation_set(punct):
            s = score(samples, method, **params)
        print(f"| {name} | {s['precision']:.4f} | {s['recall']:.4f} | {s['f1']:.4f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
