#!/usr/bin/env python3
"""How the methods hold up when the page's text has no spaces between words: the 181 AEB
pages rewritten in a CJK-like script, scored against their gold rewritten the same way.

Our two corpora have no Chinese or Japanese page, and every word count in the pipeline
splits at spaces; the held-out sets do have such pages. This script rewrites each page
(read in place, nothing is stored) so that its *structure* stays and only its text
changes:

* every run of Latin letters (a word) becomes 1–3 CJK ideographs (1 for words of up to 3
  letters, 2 up to 7, else 3), chosen by an MD5 hash of the lowercased word among
  U+4E00–U+9E1F: the same word gives the same ideographs on every page, so the
  vocabulary keeps its size and its frequencies (a character set of 26 letters would
  make every block look alike to the comment step's word sets);
* ``. , ? ! : ;`` become the full-width ``。，？！：；``, and the spaces between two
  ideographs (or after a full-width mark) are dropped;
* the same is done to ``<meta content>`` (titles, descriptions) and to the string values
  of JSON-LD (its keys, ``@type`` and URLs are kept), so that the title sources still
  agree with the headline;
* scripts and styles are left alone.

Score: F1 of the multisets of character 4-grams of the text without its non-word
characters (``\\W``), on both versions of each page, so that the two columns use one
metric (the AEB's word shingles do not apply to text without spaces). Read the drop
from the first column to the second, not the levels.

Usage::

    python benchmarks/cjk_stress.py [--methods cepr-typed cepr-article trafilatura readability]
        [--worst 8] [--json FILE]

Our methods run through :func:`scrapy_cepr.extract` (with the page type of the rewritten
page in the last column); the peers as in ``benchmarks/compare.py``.

The corpus is read from ``$CEPR_BENCHMARK_DIR``.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import statistics
import sys

import lxml.html
from compare import build_extractors

from scrapy_cepr import METHOD_NAMES, extract
from scrapy_cepr.evaluation import load_corpus

_LETTERS = re.compile(r"[A-Za-z]+")
_FULL_WIDTH = str.maketrans({".": "。", ",": "，", "?": "？", "!": "！", ":": "：", ";": "；"})
_GAP = re.compile(r"(?<=[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef])[ \t]+(?=[\u4e00-\u9fff])")
_NOT_WORD = re.compile(r"\W+")
_KEPT_KEYS = {"@type", "@context", "@id", "url"}


def _ideographs(word: str) -> str:
    digest = hashlib.md5(word.encode()).digest()
    n = 1 if len(word) <= 3 else 2 if len(word) <= 7 else 3
    return "".join(chr(0x4E00 + int.from_bytes(digest[2 * i : 2 * i + 2], "big") % 20000) for i in range(n))


def rewrite_text(text: str | None) -> str | None:
    """*text* in the CJK-like script (module docstring); None stays None.

    >>> rewrite_text("It rains. It pours!") == rewrite_text("it rains. it pours!")
    True
    >>> " " in rewrite_text("It rains. It pours!")
    False
    """
    if not text:
        return text
    return _GAP.sub("", _LETTERS.sub(lambda m: _ideographs(m.group(0).lower()), text).translate(_FULL_WIDTH))


def _rewrite_json(value):
    if isinstance(value, str):
        return value if value.startswith(("http", "/")) else rewrite_text(value)
    if isinstance(value, list):
        return [_rewrite_json(v) for v in value]
    if isinstance(value, dict):
        return {k: (v if k in _KEPT_KEYS else _rewrite_json(v)) for k, v in value.items()}
    return value


def rewrite_page(html: str) -> str:
    """The page *html* with its text, ``<meta content>`` and JSON-LD strings rewritten."""
    doc = lxml.html.fromstring(html)
    for meta in doc.iter("meta"):
        content = meta.get("content")
        if content and not content.startswith("http"):
            meta.set("content", rewrite_text(content))
    for script in doc.iter("script"):
        if (script.get("type") or "").strip().lower() == "application/ld+json" and script.text:
            try:
                script.text = json.dumps(_rewrite_json(json.loads(script.text)), ensure_ascii=False)
            except ValueError:
                pass
    for el in doc.iter():
        if isinstance(el.tag, str) and el.tag not in ("script", "style"):
            el.text = rewrite_text(el.text)
        el.tail = rewrite_text(el.tail)
    return lxml.html.tostring(doc, encoding="unicode")


def char_f1(predicted: str, gold: str, n: int = 4) -> float:
    """F1 of the multisets of character *n*-grams of the two texts without ``\\W``.

    >>> char_f1("abcde", "abcde"), char_f1("abcd", "wxyz"), char_f1("", "abcd")
    (1.0, 0.0, 0.0)
    """

    def grams(text: str) -> collections.Counter:
        t = _NOT_WORD.sub("", text)
        return collections.Counter(t[i : i + n] for i in range(max(len(t) - n + 1, 0)))

    p, g = grams(predicted), grams(gold)
    common = sum((p & g).values())
    if not common:
        return 0.0
    precision, recall = common / sum(p.values()), common / sum(g.values())
    return 2 * precision * recall / (precision + recall)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--methods", nargs="+", default=["cepr-typed", "cepr-article", "trafilatura", "readability"])
    ap.add_argument("--worst", type=int, default=8, help="pages with the largest drop to list per method")
    ap.add_argument("--json", help="write the per-page scores here")
    args = ap.parse_args(argv)
    corpus = os.environ.get("CEPR_BENCHMARK_DIR")
    if not corpus:
        print("set CEPR_BENCHMARK_DIR to the article-extraction-benchmark directory", file=sys.stderr)
        return 2
    peers, notes = build_extractors([m for m in args.methods if m not in METHOD_NAMES] or ["fulltext"])
    for note in notes:
        if "skipped" in note:
            print(note, file=sys.stderr)
    args.methods = [m for m in args.methods if m in METHOD_NAMES or m in peers]
    scores: dict[str, dict[str, list]] = {m: {"ids": [], "as_served": [], "no_spaces": []} for m in args.methods}
    types: dict[str, collections.Counter] = {m: collections.Counter() for m in args.methods}
    for number, sample in enumerate(load_corpus(corpus), 1):
        html = sample.html if isinstance(sample.html, str) else sample.html.decode("utf-8", "replace")
        rewritten, gold = rewrite_page(html), rewrite_text(sample.gold_body) or ""
        for method in args.methods:
            if method in METHOD_NAMES:
                before = extract(html, url=sample.url, method=method).body
                after_page = extract(rewritten, url=sample.url, method=method)
                after = after_page.body
                types[method][after_page.page_type or "-"] += 1
            else:
                run = peers[method]
                assert run is not None
                before, after = run(html), run(rewritten)
            row = scores[method]
            row["ids"].append(sample.id[:8])
            row["as_served"].append(char_f1(before, sample.gold_body))
            row["no_spaces"].append(char_f1(after, gold))
        if number % 50 == 0:
            print(f"... {number} pages", file=sys.stderr)
    print("| method | as served | without spaces | drop | pages −0.1 or worse | page types without spaces |")
    print("|---|---|---|---|---|---|")
    for method, row in scores.items():
        a, b = statistics.mean(row["as_served"]), statistics.mean(row["no_spaces"])
        worse = sum(y - x <= -0.1 for x, y in zip(row["as_served"], row["no_spaces"]))
        kinds = ", ".join(f"{k} {v}" for k, v in types[method].most_common()) or "-"
        print(f"| {method} | {a:.4f} | {b:.4f} | {b - a:+.4f} | {worse} | {kinds} |")
    for method, row in scores.items():
        drops = sorted(zip((y - x for x, y in zip(row["as_served"], row["no_spaces"])), row["ids"]))[: args.worst]
        print(f"{method}, largest drops: " + ", ".join(f"{i} {d:+.3f}" for d, i in drops))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(scores, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
