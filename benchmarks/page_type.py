"""Measure the page-type detector (:mod:`scrapy_cepr.core.pagetype`): article pages
against list (home, index, section, tag, search) pages.

Pages: the 181 article pages of the article-extraction benchmark (``CEPR_BENCHMARK_DIR``;
all articles), the list pages written for this project (``tests/fixtures/index_*.html``)
and the demo site's index page (``example_project/site/index.html``), plus the demo
site's 11 article pages. "list" is the positive class. Reported twice: with the page's
own metadata (JSON-LD ``@type``, ``og:type``) and with the text rule alone (metadata
ignored), since most corpus pages declare ``og:type=article``.

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark python benchmarks/page_type.py
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from scrapy_cepr.core.page import Page
from scrapy_cepr.core.pagetype import classify_features, page_features
from scrapy_cepr.evaluation import CORPUS_ENV, load_corpus

ROOT = Path(__file__).resolve().parents[1]


def pages(corpus: Path | None) -> list[tuple[str, str, bytes | str]]:
    """``(name, true type, html)`` of every page measured."""
    out: list[tuple[str, str, bytes | str]] = []
    if corpus is not None:
        out += [(f"corpus/{s.id}", "article", s.html) for s in load_corpus(corpus)]
    out += [(f"demo/{p.name}", "article", p.read_bytes())
            for p in sorted((ROOT / "example_project" / "site" / "articles").glob("*.html"))]
    out += [(f"fixtures/{p.name}", "list", p.read_bytes()) for p in sorted((ROOT / "tests" / "fixtures").glob("index_*.html"))]
    out.append(("demo/index.html", "list", (ROOT / "example_project" / "site" / "index.html").read_bytes()))
    return out


def scores(truth: list[str], predicted: list[str]) -> dict[str, float]:
    """Accuracy, and precision/recall/F1 of the class "list"."""
    tp = sum(t == p == "list" for t, p in zip(truth, predicted, strict=True))
    fp = sum(t == "article" and p == "list" for t, p in zip(truth, predicted, strict=True))
    fn = sum(t == "list" and p != "list" for t, p in zip(truth, predicted, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "accuracy": sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(truth),
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus directory (default ${CORPUS_ENV})")
    args = parser.parse_args(argv)
    corpus = Path(args.corpus) if args.corpus else None
    if corpus is None:
        print(f"warning: no corpus ({CORPUS_ENV} unset): article pages are the demo site's only", file=sys.stderr)
    data = pages(corpus)
    features = [page_features(Page.from_html(html)) for _, _, html in data]
    truth = [t for _, t, _ in data]
    print(f"{len(data)} pages: {truth.count('article')} articles, {truth.count('list')} list pages")
    print("| rule | accuracy | list precision | list recall | list F1 | errors |")
    print("|---|---|---|---|---|---|")
    for label, feats in (("metadata, then text", features),
                         ("text only", [dataclasses.replace(f, metadata=None) for f in features])):
        predicted = [classify_features(f) for f in feats]
        s = scores(truth, predicted)
        errors = [name for (name, t, _), p in zip(data, predicted, strict=True) if t != p]
        print(f"| {label} | {s['accuracy']:.3f} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | "
              f"{', '.join(errors) or 'none'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
