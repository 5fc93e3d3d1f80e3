#!/usr/bin/env python3
"""Robustness to reader-comment threads of older templates: each AEB page with a thread
put right after its story, in five layouts, F1 beside the page as served, in one run.

The gold bodies leave comments out, and few of the 181 pages show a thread in their HTML
(most load it with a script), while the news pages of 2005–2015 printed it below the
story. This script inserts one after the element that holds the gold body's last line
(``--limit`` pages; a page whose last line is not found in one element is passed over),
wrapped in a ``<div>`` of its own, in each layout (:data:`LAYOUTS`):

* ``list``: ``ol > li`` per comment, author link, date, the comment's paragraphs (a blog
  engine's list);
* ``dl``: ``dt`` author line and ``dd`` text per comment, the lines of a comment
  separated by ``<br><br>``;
* ``flat``: an author line and the comment's paragraphs, then an ``<hr>``, all siblings;
* ``table``: a row per comment, author and date in one cell, the text in the next;
* ``divs``: a ``div`` per comment, with header, text and a "Reply" link.

Six comments per thread; each is one to three sentences drawn (seeded, the same every
run) from :data:`OPENINGS` and :data:`SENTENCES`, written here in a reader's voice; the
author names and dates are drawn the same way. The gold body is unchanged, so what a
thread costs is precision. For each method: F1 (the benchmark's shingle F1) as served
and with each layout's thread.

    CEPR_BENCHMARK_DIR=… PYTHONPATH=$PWD python benchmarks/comment_threads.py \\
        [--methods cepr-typed,cepr-article,trafilatura,readability] [--limit N]

``--methods`` may name the peers of ``benchmarks/compare.py``; every extractor reads the
page as a ``str``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections import Counter, defaultdict

from compare import body_runner, probe_extractors
from lxml import html as lxml_html

from scrapy_cepr.core.page import decode_html
from scrapy_cepr.evaluation import CORPUS_ENV, benchmark_counts, benchmark_summary, load_corpus

#: A comment's first sentence.
OPENINGS = (
    "Great article, thanks for writing it.", "I completely disagree with this.", "Interesting read.",
    "Thanks for sharing!", "Not sure I agree with the author here.", "This is exactly what I have been saying for years.",
    "Wow.", "Can anyone explain what this actually means for ordinary people?", "Finally someone says it.",
    "I live near there and this is not the whole story.", "Well said.", "Sad news, my thoughts are with the families.",
)
#: Its further sentences (none to two).
SENTENCES = (
    "The real problem is that nobody in charge ever listens to people like us.",
    "My brother works in this field and he says it will take years to fix.",
    "Why is nobody talking about the cost of all this?", "Same thing happened in our town last year and nothing changed.",
    "I would like to see the numbers before I believe any of it.",
    "The comments here are getting out of hand, please keep it civil.",
    "People should read the whole article before commenting.", "It is about time they did something about it.",
    "Let us wait and see what happens next week.",
    "I have been following this story since the beginning and it keeps getting worse.",
    "Does anyone know where to find the full report?", "You cannot trust any of them, they are all the same.",
)
AUTHORS = ("jsmith", "Mary K.", "old_reader", "Tom from Leeds", "Anonymous", "K. Weber", "rob1977")
#: The layouts of :func:`thread_html`.
LAYOUTS = ("list", "dl", "flat", "table", "divs")


def comments(rng: random.Random, k: int = 6) -> list[tuple[str, str, list[str]]]:
    """*k* comments ``(author, date, paragraphs)`` drawn from *rng*."""
    out = []
    for _ in range(k):
        date = f"March {rng.randint(1, 28)}, 2008 at {rng.randint(1, 12)}:{rng.randint(0, 59):02d} pm"
        paragraphs = [" ".join([rng.choice(OPENINGS), *rng.sample(SENTENCES, rng.randint(0, 2))])
                      for _ in range(rng.randint(1, 3))]
        out.append((rng.choice(AUTHORS), date, paragraphs))
    return out


def thread_html(layout: str, thread: list[tuple[str, str, list[str]]]) -> str:
    """The HTML of *thread* in *layout* (one of :data:`LAYOUTS`), in a ``<div>``."""
    k = len(thread)
    if layout == "list":
        items = "".join(f'<li><cite><a href="/u{i}">{a}</a></cite> says:<br><small><a href="#c{i}">{d}</a></small>'
                        + "".join(f"<p>{t}</p>" for t in ts) + "</li>" for i, (a, d, ts) in enumerate(thread))
        body = f"<h3>{k} Responses</h3><ol>{items}</ol>"
    elif layout == "dl":
        items = "".join(f'<dt><a href="/u{i}">{a}</a> wrote on {d}:</dt><dd>' + "<br><br>".join(ts) + "</dd>"
                        for i, (a, d, ts) in enumerate(thread))
        body = f"<b>Reader comments</b><dl>{items}</dl>"
    elif layout == "flat":
        body = "<p><b>Comments</b></p>" + "".join(f"<p><b>{a}</b> wrote on {d}:</p>" + "".join(f"<p>{t}</p>" for t in ts)
                                                  + "<hr>" for a, d, ts in thread)
    elif layout == "table":
        rows = "".join(f'<tr><td><a href="/u{i}">{a}</a><br>{d}</td><td>' + "<br><br>".join(ts) + "</td></tr>"
                       for i, (a, d, ts) in enumerate(thread))
        body = f'<table width="100%"><tr><td colspan="2"><b>Your views</b></td></tr>{rows}</table>'
    elif layout == "divs":
        body = f"<div><h4>Comments ({k})</h4>" + "".join(
            f'<div><div><a href="/u{i}">{a}</a> | {d}</div><div>' + "<br><br>".join(ts)
            + f'</div><div><a href="/r{i}">Reply</a></div></div>' for i, (a, d, ts) in enumerate(thread)) + "</div>"
    else:
        raise ValueError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    return f"<div>{body}</div>"


def with_thread(html: str | bytes, gold: str, thread_markup: str) -> str | None:
    """*html* with *thread_markup* inserted after the smallest element that holds the gold
    body's last line (its first 40 characters), or None when no element holds it."""
    lines = [line for line in gold.split("\n") if len(line) > 40]
    if not lines:
        return None
    root = lxml_html.fromstring(decode_html(html))
    needle, limit = lines[-1][:40], 4 * len(lines[-1]) + 200
    target = None
    for el in root.iter("p", "div", "td", "li"):
        if needle in el.text_content() and len(el.text_content()) < limit:
            target = el  # the last one in document order: the innermost
    if target is None or target.getparent() is None:
        return None
    target.addnext(lxml_html.fragment_fromstring(thread_markup))
    return lxml_html.tostring(root, encoding="unicode")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"AEB directory (default ${CORPUS_ENV})")
    parser.add_argument("--methods", default="cepr-typed,cepr-article,trafilatura,readability")
    parser.add_argument("--limit", type=int, default=0, help="first N pages")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"no corpus: set {CORPUS_ENV} or pass --corpus")
    methods = args.methods.split(",")
    methods, peers = probe_extractors(methods)
    run = body_runner(peers, Counter())  # a failing peer is scored as empty

    rng = random.Random(2008)
    counts: dict[tuple[str, str], list] = defaultdict(list)
    used = skipped = 0
    for n, s in enumerate(load_corpus(args.corpus)):
        if args.limit and n >= args.limit:
            break
        thread = comments(rng)
        pages = {layout: with_thread(s.html, s.gold_body, thread_html(layout, thread)) for layout in LAYOUTS}
        if any(page is None for page in pages.values()):
            skipped += 1
            continue
        used += 1
        pages["served"] = decode_html(s.html)
        for m in methods:
            for how, page in pages.items():
                counts[(m, how)].append(benchmark_counts(run(m, page or ""), s.gold_body))
    print(f"AEB, {used} pages ({skipped} passed over: the gold's last line is in no one element), shingle F1")
    print("| method | as served | " + " | ".join(f"thread: {layout}" for layout in LAYOUTS) + " |")
    print("|---|---|" + "---|" * len(LAYOUTS))
    for m in methods:
        cells = [benchmark_summary(counts[(m, how)])["f1"] for how in ("served", *LAYOUTS)]
        print(f"| {m} | " + " | ".join(f"{c:.4f}" for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
