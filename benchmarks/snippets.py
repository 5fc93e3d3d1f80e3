#!/usr/bin/env python3
"""Trafilatura's evaluation metric (``with``/``without`` snippets) on WCXB's dev pages, for
our methods and the peers, per page type and overall, with a diagnosis of our misses.

The metric (:func:`scrapy_cepr.evaluation.snippet_counts`, summed by
:func:`~scrapy_cepr.evaluation.snippet_summary`): each page has a few ``with`` snippets
(text that must appear in the extraction) and ``without`` snippets (boilerplate that must
not); a snippet is found when it is an exact substring of the extracted text. ``with``
found = TP, missing = FN; ``without`` found = FP, missing = TN; summed over all pages
(micro); P = TP/(TP+FP), R = TP/(TP+FN), F = their harmonic mean. WCXB's ground truth
carries the same kind of snippets (``with``, ``without``), so this is a proxy for
trafilatura's own multilingual suite, which we do not have.

Besides the exact score, the table gives the score with both texts whitespace-normalised
(every whitespace run, newlines and no-break spaces included, one space; trimmed): the
difference sizes the part of the gap that is only serialisation.

Diagnosis (our methods, ``--diagnose``, on by default): each missed ``with`` snippet is

* a *serialisation* miss when its ``\\w+`` words appear in our output as a contiguous word
  sequence but the exact substring does not; sub-classified by the first normalisation
  that finds it: ``whitespace`` (whitespace runs), ``invisible`` (soft hyphen, zero-width
  characters removed as well), ``spacing`` (all whitespace removed from both: a space
  added or lost between inline elements), ``quotes`` (typographic quotes and apostrophes
  read as ASCII ones: the page and the annotation spell them differently), else ``other``
  (entities, case, dashes, …);
* a *recall* miss otherwise (the text was not extracted).

Each found ``without`` snippet is located: the tag of the text node it starts in, whether
that node is inside a link, and where it lies relative to the found ``with`` snippets
(``before``, ``between``, ``after``, or ``no-with`` when none was found).

Usage::

    python benchmarks/snippets.py [--corpus DIR] [--methods cepr-typed,cepr-article]
        [--peers trafilatura,readability] [--limit N] [--types article,forum]
        [--examples N] [--json FILE]

The corpus is ``--corpus``, else ``$CEPR_WCXB_DIR``, else ``../shared/data/wcxb-dev``.
The Markdown tables go to stdout, progress to stderr every 200 pages.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wcxb import DEFAULT_CORPUS, WCXB_ENV, build_extractors, pages  # noqa: E402

from scrapy_cepr import extract  # noqa: E402
from scrapy_cepr.core.page import decode_html  # noqa: E402
from scrapy_cepr.evaluation import PAGE_TYPES, SnippetCounts, snippet_counts, snippet_summary  # noqa: E402

logger = logging.getLogger("snippets")

_WORD = re.compile(r"\w+")
_INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")
# Typographic quotes and apostrophes to their ASCII forms (only to classify a miss).
_QUOTES = str.maketrans("\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u201f\u2033", "\'\'\'\'\'\"\"\"\"\"")


def _ws(text: str) -> str:
    return " ".join(text.split())


def _words_in(snippet: str, words_text: str) -> bool:
    """Whether the ``\\w+`` words of *snippet* are a contiguous sequence of *words_text*
    (the output's words joined by single spaces, padded with a space on each side)."""
    words = _WORD.findall(snippet)
    return bool(words) and f" {' '.join(words)} " in words_text


def miss_kind(snippet: str, text: str, words_text: str) -> str:
    """``recall`` or the serialisation sub-kind of a missed ``with`` *snippet* (see the
    module docstring)."""
    if not _words_in(snippet, words_text):
        return "recall"
    if _ws(snippet) in _ws(text):
        return "whitespace"
    if _ws(_INVISIBLE.sub("", snippet)) in _ws(_INVISIBLE.sub("", text)):
        return "invisible"
    if "".join(_INVISIBLE.sub("", snippet).split()) in "".join(_INVISIBLE.sub("", text).split()):
        return "spacing"
    if _ws(snippet.translate(_QUOTES)) in _ws(text.translate(_QUOTES)):
        return "quotes"
    return "other"


def context(snippet: str, text: str, width: int = 40) -> str:
    """The part of *text* where *snippet*'s words are (words apart by any non-word
    characters), with *width* characters either side, or ``""``."""
    words = _WORD.findall(snippet)
    if not words:
        return ""
    m = re.search(r"\W*".join(map(re.escape, words)), text)
    if m is None:
        return ""
    return text[max(0, m.start() - width): m.end() + width]


def locate(snippet: str, extraction: Any, text: str, must_found: list[str]) -> tuple[str, str]:
    """``(node kind, position)`` of a found ``without`` *snippet* in our *extraction*: the
    last tag of the path of the first kept text node that the snippet starts in (with
    ``+link`` inside a link), and ``before``/``between``/``after``/``no-with`` relative to
    the found ``with`` snippets of the page."""
    nodes = extraction.nodes
    kind = "?"
    if nodes is not None:
        keep = nodes.keep.nonzero()[0].tolist()
        for i in keep:
            node = nodes.texts[i]
            if node and (snippet.startswith(node) or node in snippet or snippet[: max(12, len(snippet) // 2)] in node
                         or snippet in node):
                path = nodes.paths[nodes.path_ids[i]].split(".")
                kind = path[-1] + ("+link" if "a" in path else "")
                break
    at = text.find(snippet)
    spans = [text.find(s) for s in must_found]
    if not spans:
        where = "no-with"
    elif at < min(spans):
        where = "before"
    elif at > max(spans):
        where = "after"
    else:
        where = "between"
    return kind, where


def run(corpus: Path, methods: list[str], peers: list[str], types: set[str] | None, limit: int | None,
        examples: int) -> dict[str, Any]:
    """Score every extractor on every page; diagnose our methods' misses."""
    extractors, notes = build_extractors([], peers)
    names = [*methods, *extractors]
    counts: dict[str, list[tuple[str, SnippetCounts, SnippetCounts]]] = {n: [] for n in names}
    misses: dict[str, Counter] = {m: Counter() for m in methods}
    miss_examples: dict[str, dict[str, list[str]]] = {m: defaultdict(list) for m in methods}
    leaks: dict[str, Counter] = {m: Counter() for m in methods}
    leak_where: dict[str, Counter] = {m: Counter() for m in methods}
    failures = Counter()
    start = time.perf_counter()
    n = 0
    for sample in pages(corpus, types, limit):
        n += 1
        html = decode_html(sample.html) if isinstance(sample.html, bytes) else sample.html
        must_ws = [_ws(s) for s in sample.must]
        not_ws = [_ws(s) for s in sample.must_not]
        for name in names:
            extraction = None
            try:
                if name in methods:
                    extraction = extract(html, url=sample.url, method=name)
                    text = extraction.body
                else:
                    text = extractors[name](html, sample.url) or ""
            except Exception as exc:  # noqa: BLE001 - a failing extractor scores an empty text
                failures[name] += 1
                logger.info("%s failed on %s: %s", name, sample.id, exc)
                text = ""
            exact = snippet_counts(text, sample.must, sample.must_not)
            normal = snippet_counts(_ws(text), must_ws, not_ws)
            counts[name].append((sample.page_type, exact, normal))
            if extraction is None:
                continue
            words_text = f" {' '.join(_WORD.findall(text))} "
            for snippet in sample.must:
                if snippet in text:
                    continue
                kind = miss_kind(snippet, text, words_text) if text else "recall"
                misses[name][kind] += 1
                if kind != "recall" and len(miss_examples[name][kind]) < examples:
                    miss_examples[name][kind].append(f"{sample.id}: {snippet!r}\n    ours: {context(snippet, text)!r}")
            found = [s for s in sample.must if s in text]
            for snippet in sample.must_not:
                if text and snippet in text:
                    kind, where = locate(snippet, extraction, text, found)
                    leaks[name][kind] += 1
                    leak_where[name][where] += 1
        if n % 200 == 0:
            print(f"snippets.py: {n} pages, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    return {"pages": n, "counts": counts, "misses": misses, "examples": miss_examples, "leaks": leaks,
            "leak_where": leak_where, "failures": failures, "notes": notes, "seconds": time.perf_counter() - start}


def summary(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per extractor: the micro scores over all pages, per page type, and whitespace-normalised."""
    result: dict[str, dict[str, Any]] = {}
    for name, rows in out["counts"].items():
        result[name] = {
            "all": snippet_summary(c for _, c, _ in rows),
            "normalised": snippet_summary(c for _, _, c in rows),
            "by_type": {t: snippet_summary(c for tt, c, _ in rows if tt == t)
                        for t in PAGE_TYPES if any(tt == t for tt, _, _ in rows)},
        }
    return result


def markdown(result: dict[str, dict[str, Any]], out: dict[str, Any], methods: list[str]) -> str:
    """The score table, then the diagnosis of each of our methods."""
    rows = next(iter(out["counts"].values()), [])
    types = [t for t in PAGE_TYPES if any(tt == t for tt, _, _ in rows)]
    n_type = Counter(tt for tt, _, _ in rows)
    head = ["extractor", "F", "P", "R", "F ws-normalised", *(f"{t} ({n_type[t]})" for t in types)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, r in result.items():
        a = r["all"]
        label = f"**{name}**" if name in methods else name
        cells = [f"{a['f1']:.3f}", f"{a['precision']:.3f}", f"{a['recall']:.3f}", f"{r['normalised']['f1']:.3f}",
                 *(f"{r['by_type'][t]['f1']:.3f}" for t in types)]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    first = next(iter(result.values()))["all"]
    lines.append(f"\n{out['pages']} pages, {first['tp'] + first['fn']} `with` and {first['fp'] + first['tn']} "
                 f"`without` snippets; {out['seconds']:.0f} s.")
    for name in methods:
        miss = out["misses"][name]
        total = sum(miss.values())
        lines.append(f"\n### {name}: {total} missed `with` snippets")
        lines.append(", ".join(f"{k} {v}" for k, v in miss.most_common()))
        for kind, exs in out["examples"][name].items():
            lines.append(f"\n{kind}:")
            lines.extend(f"- {e}" for e in exs)
        leaks = out["leaks"][name]
        lines.append(f"\n{name}: {sum(leaks.values())} found `without` snippets, by the tag they start in: "
                     + ", ".join(f"{k} {v}" for k, v in leaks.most_common(12)))
        lines.append("by position: " + ", ".join(f"{k} {v}" for k, v in out["leak_where"][name].most_common()))
    for note in out["notes"]:
        lines.append(f"- {note}")
    for name, k in out["failures"].items():
        lines.append(f"- {name}: {k} pages failed (scored as empty)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=None,
                        help=f"WCXB split directory (default: ${WCXB_ENV}, else {DEFAULT_CORPUS})")
    parser.add_argument("--methods", default="cepr-typed,cepr-article", help="our methods, comma-separated")
    parser.add_argument("--peers", default="trafilatura,readability", help="peers, comma-separated ('' for none)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N pages (after --types)")
    parser.add_argument("--types", default=None, help=f"only these page types ({', '.join(PAGE_TYPES)})")
    parser.add_argument("--examples", type=int, default=5, help="examples printed per kind of serialisation miss")
    parser.add_argument("--json", metavar="FILE", help="write the scores as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="snippets.py: %(message)s")
    logging.getLogger("trafilatura").setLevel(logging.ERROR)
    corpus = args.corpus or Path(os.environ.get(WCXB_ENV) or DEFAULT_CORPUS)
    if not (corpus / "metadata.json").is_file():
        parser.error(f"{corpus}: not a WCXB split directory (no metadata.json); pass --corpus or set ${WCXB_ENV}")
    types = {t.strip() for t in args.types.split(",") if t.strip()} if args.types else None
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    out = run(corpus, methods, peers, types, args.limit, args.examples)
    if not out["pages"]:
        parser.error("no page selected (check --types and --limit)")
    result = summary(out)
    print(markdown(result, out, methods))
    if args.json:
        data = {"pages": out["pages"], "results": result,
                "misses": {m: dict(out["misses"][m]) for m in methods},
                "leaks": {m: dict(out["leaks"][m]) for m in methods}}
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
