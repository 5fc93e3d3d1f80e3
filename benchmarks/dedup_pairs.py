#!/usr/bin/env python3
"""Near-duplicate stories: precision and recall of ``CEPR_DEDUP`` on pairs built from the
article-extraction-benchmark's gold bodies, the cost of dedup per page against the
extraction, and the size of the state file (issue 22).

The pairs (built here from the gold bodies, read in place; nothing is written out). Each
article is laid out as a page of a news-site template A (navigation, headline, one ``<p>``
per gold paragraph, footer) and **cleaned by the extraction** (``scrapy_cepr.extract``,
the default method): the *base* body. The same story:

* ``headline``: the same page with another headline;
* ``reorder``: the second paragraph moved to the end;
* ``correction``: a correction paragraph appended;
* ``template``: the same body in another template B (menu, byline, sidebar of related
  headlines, newsletter box, comments teaser, footer), then extracted;
* ``original``: the article's own page in the corpus (its real site template) extracted,
  against the base.

Different stories on the same topic: for each article, the other article of the corpus
whose gold body shares the most word 3-shingles (Jaccard; the nearest pair), both laid out
in template A (so that the same boilerplate can leak into both bodies): ``different``;
and ``follow-up``: that nearest article with a recap of this one appended (this one's
first paragraph, at most 60 words), against this one.

Reported apart (not in the precision and recall): ``trimmed``, the story cut to its first
60 % of paragraphs, as newspapers trim a wire story from the bottom: a same-story pair
whose Jaccard is about 0.6, to show what the threshold gives up. Besides, every
base body is indexed in one :class:`~scrapy_cepr.dedup.DedupIndex`: any duplicate found
among the 181 different articles is a false positive ("corpus FP").

A pair is predicted "same story" when the real index finds it: index the first body,
then ``find_or_add`` the second (LSH candidates, then the estimated Jaccard ≥ threshold).
Precision = TP / (TP + FP) over all pairs (each article contributes 5 positive and 1
negative pair), recall = TP / positives, for each threshold.

Sizes (``--size-pages N``, random signatures): the state file per story, the in-memory
index per story (``tracemalloc``) and, when ``redis-server`` is installed, the Redis index
per story (``used_memory``, a throw-away server on a free port).

Cost: per page, best of 3, the extraction of the article's own page against the signature
and the index lookup (``signature`` + ``find_or_add`` in an index of the corpus), summed
over the corpus.

Usage::

    python benchmarks/dedup_pairs.py [--corpus DIR] [--limit N] [--size-pages N] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from scrapy_cepr import extract
from scrapy_cepr.dedup import DedupIndex, jaccard, shingles, signature
from scrapy_cepr.evaluation import CORPUS_ENV, load_corpus

KINDS = ("headline", "reorder", "correction", "template", "original")
NEGATIVE = ("different", "follow-up")
EXTRA = ("trimmed",)
THRESHOLDS = tuple(round(t, 2) for t in np.arange(0.2, 0.95, 0.05))

CORRECTION = ("Correction: an earlier version of this article gave a wrong date for the announcement and "
              "misspelled the name of a spokesperson. Both have been corrected.")

RELATED = ["Council approves new budget after long debate", "Five things to watch in the markets this week",
           "Opinion: why the city needs more buses", "Weather: rain expected for the weekend",
           "Local team wins the regional cup final", "How to save on your energy bill this winter"]


def template_a(headline: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{_esc(p)}</p>" for p in paragraphs)
    return (f"<html><head><title>{_esc(headline)} | Daily Courier</title></head><body>"
            '<div class="nav"><a href="/">Home</a> <a href="/news">News</a> <a href="/world">World</a> '
            '<a href="/sport">Sport</a></div>'
            f'<h1>{_esc(headline)}</h1><div class="story">{body}</div>'
            '<div class="footer"><a href="/about">About us</a> <a href="/contact">Contact</a> '
            "<p>© Daily Courier. All rights reserved.</p></div></body></html>")


def template_b(headline: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{_esc(p)}</p>" for p in paragraphs)
    related = "".join(f'<li><a href="/r{i}">{t}</a></li>' for i, t in enumerate(RELATED))
    return (f"<html><head><title>{_esc(headline)} - The Evening Post</title></head><body>"
            '<header><ul class="menu"><li><a href="/">Front page</a></li><li><a href="/local">Local</a></li>'
            '<li><a href="/business">Business</a></li><li><a href="/opinion">Opinion</a></li></ul></header>'
            f'<main><article><h2 class="headline">{_esc(headline)}</h2><p class="byline">By our staff reporter, '
            f"with agencies</p>{body}</article>"
            '<section class="newsletter"><p>Get the morning briefing in your inbox.</p>'
            '<form><input name="email"><button>Sign up</button></form></section>'
            '<section class="comments"><h3>Comments</h3><p>Join the conversation: 12 comments.</p></section></main>'
            f'<aside><h3>Most read</h3><ul>{related}</ul></aside>'
            "<footer><p>The Evening Post Ltd, registered in England.</p><a href=\"/privacy\">Privacy</a> "
            '<a href="/terms">Terms</a></footer></body></html>')


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _body(html: str | bytes, url: str | None = None) -> str:
    return extract(html, url=url).body or ""


def build_pairs(samples: list) -> tuple[list[tuple[str, str, str, str]], dict[str, str], dict[str, float]]:
    """``(kind, id, first body, second body)`` for every pair; the base bodies by id;
    the extraction seconds of each article's own page."""
    pairs = []
    bases: dict[str, str] = {}
    extraction: dict[str, float] = {}
    golds = {s.id: s.gold_body for s in samples}
    gold_shingles = {pid: shingles(g) for pid, g in golds.items()}
    for s in samples:
        paragraphs = [p.strip() for p in s.gold_body.split("\n") if p.strip()]
        words = " ".join(paragraphs).split()
        headline = " ".join(words[:9]).rstrip(".,;:")
        other_headline = "Update: " + " ".join(words[4:12]).rstrip(".,;:") + ", officials say"
        base = bases[s.id] = _body(template_a(headline, paragraphs))
        moved = [paragraphs[0], *paragraphs[2:], paragraphs[1]] if len(paragraphs) > 2 else paragraphs[::-1]
        variants = {
            "headline": _body(template_a(other_headline, paragraphs)),
            "reorder": _body(template_a(headline, moved)),
            "correction": _body(template_a(headline, [*paragraphs, CORRECTION])),
            "template": _body(template_b(headline, paragraphs)),
        }
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            original = _body(s.html, s.url)
            best = min(best, time.perf_counter() - started)
        extraction[s.id] = best
        variants["original"] = original
        pairs += [(kind, s.id, base, variants[kind]) for kind in KINDS]
        kept = paragraphs[:max(1, round(0.6 * len(paragraphs)))]
        pairs.append(("trimmed", s.id, base, _body(template_b(headline, kept))))
    by_id = {s.id: s for s in samples}
    for s in samples:  # the nearest other article by gold shingles: same topic, other story
        nearest = max((p for p in golds if p != s.id), key=lambda p: jaccard(gold_shingles[s.id], gold_shingles[p]))
        pairs.append((f"different:{nearest}", s.id, bases[s.id], bases[nearest]))
        other = [p.strip() for p in by_id[nearest].gold_body.split("\n") if p.strip()]
        recap = " ".join(next(p for p in s.gold_body.split("\n") if p.strip()).split()[:60])
        words = " ".join(other).split()
        follow_up = _body(template_a(" ".join(words[:9]), [*other, "Background: " + recap]))
        pairs.append((f"follow-up:{nearest}", s.id, bases[s.id], follow_up))
    return pairs, bases, extraction


def _sign(text: str) -> np.ndarray | None:
    try:
        return signature(text)
    except ValueError:  # a body without words: never compared
        return None


def found(a: np.ndarray | None, b: np.ndarray | None, threshold: float) -> bool:
    """Whether the index, holding signature *a*, finds *b* a duplicate of it."""
    if a is None or b is None:
        return False
    index = DedupIndex(threshold)
    index.find_or_add("first", a)
    return index.find_or_add("second", b) == "first"


def state_size(pages: int) -> dict[str, float]:
    """Bytes per page of ``dedup.sqlite`` with *pages* stories (random signatures, URLs of
    60 characters), seconds per insert, and the seconds to reopen it (LSH rebuild)."""
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "dedup.sqlite"
        index = DedupIndex(0.5, path)
        started = time.perf_counter()
        for n in range(pages):
            sig = rng.integers(0, 2**32, size=128, dtype=np.uint64).astype(np.uint32)
            index.find_or_add(f"https://www.example-news-site.com/2026/11/25/story-{n:012d}.html", sig)
        insert = (time.perf_counter() - started) / pages
        index.close()
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
        started = time.perf_counter()
        reopened = DedupIndex(0.5, path)
        reopen = time.perf_counter() - started
        assert len(reopened) == pages
        reopened.close()
    return {"pages": pages, "bytes_per_page": size / pages, "gb_per_million": size / pages * 1e6 / 1e9,
            "insert_ms": insert * 1e3, "reopen_s": reopen, "reopen_s_per_million": reopen / pages * 1e6}


def memory_per_story(pages: int, redis_pages: int) -> dict[str, float]:
    """Bytes per story of the in-memory index (``tracemalloc``, *pages* random stories) and,
    with ``redis-server`` installed and *redis_pages* > 0, of the Redis index
    (``used_memory``) and its milliseconds per new story."""
    import tracemalloc

    rng = np.random.default_rng(1)
    url = "https://www.example-news-site.com/2026/11/25/story-{:012d}.html"
    sigs = [rng.integers(0, 2**32, size=128, dtype=np.uint64).astype(np.uint32) for _ in range(pages)]
    tracemalloc.start()
    index = DedupIndex(0.5)
    for n, sig in enumerate(sigs):
        index.find_or_add(url.format(n), sig)
    out = {"memory_bytes_per_story": tracemalloc.get_traced_memory()[0] / pages}
    tracemalloc.stop()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from redis_fixture import RedisServer, redis_server_binary

    if redis_pages and redis_server_binary() is not None:
        import redis

        from scrapy_cepr.dedup import RedisDedupIndex

        with RedisServer() as server:
            client = redis.Redis.from_url(server.url)
            before = client.info("memory")["used_memory"]
            shared = RedisDedupIndex(client, "bench:dedup", 0.5)
            started = time.perf_counter()
            for n, sig in enumerate(sigs[:redis_pages]):
                shared.find_or_add(url.format(n), sig)
            out["redis_ms_per_story"] = (time.perf_counter() - started) / redis_pages * 1e3
            out["redis_bytes_per_story"] = (client.info("memory")["used_memory"] - before) / redis_pages
            client.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV))
    parser.add_argument("--limit", type=int, default=0, help="first N articles only")
    parser.add_argument("--size-pages", type=int, default=20000, help="stories in the state-size test (0: skip)")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"give --corpus or set {CORPUS_ENV}")
    samples = [s for s in load_corpus(args.corpus) if len(s.gold_body.split()) >= 20]
    if args.limit:
        samples = samples[:args.limit]
    print(f"{len(samples)} articles with a gold body of at least 20 words")
    pairs, bases, extraction = build_pairs(samples)

    exact: dict[str, list[float]] = {}
    for kind, _, a, b in pairs:
        exact.setdefault(kind.split(":")[0], []).append(jaccard(shingles(a), shingles(b)))
    print("\nexact Jaccard of the pairs (word 3-shingles of the extracted bodies): min / median / max")
    for kind, values in exact.items():
        print(f"  {kind:11s} {len(values):4d} pairs  {min(values):.3f} / {np.median(values):.3f} / {max(values):.3f}")

    signed = [(kind.split(":")[0], _sign(a), _sign(b)) for kind, _, a, b in pairs]
    base_sigs = [sig for sig in (_sign(body) for body in bases.values()) if sig is not None]
    rows = []
    for t in THRESHOLDS:
        tp = fp = fn = 0
        per_kind: dict[str, int] = {}
        for kind, a, b in signed:
            hit = found(a, b, t)
            per_kind[kind] = per_kind.get(kind, 0) + hit
            if kind in NEGATIVE:
                fp += hit
            elif kind in KINDS:
                tp += hit
                fn += not hit
        corpus = DedupIndex(t)
        corpus_fp = sum(corpus.find_or_add(str(n), sig) is not None for n, sig in enumerate(base_sigs))
        precision = tp / (tp + fp) if tp + fp else 1.0
        rows.append({"threshold": t, "precision": precision, "recall": tp / (tp + fn), "tp": tp, "fp": fp,
                     "fn": fn, "corpus_fp": corpus_fp, "found": per_kind})
    print(f"\nper threshold ({len(samples)} articles: {len(samples) * len(KINDS)} same-story pairs, "
          f"{2 * len(samples)} different-story pairs (nearest, follow-up); corpus FP among the {len(bases)} bases)")
    print("  t     precision recall  FP  corpus-FP  found per kind (" + ", ".join((*KINDS, *NEGATIVE, *EXTRA)) + ")")
    for r in rows:
        kinds = " ".join(str(r["found"].get(k, 0)) for k in (*KINDS, *NEGATIVE, *EXTRA))
        print(f"  {r['threshold']:.2f}  {r['precision']:.4f}    {r['recall']:.4f}  {r['fp']:3d}  {r['corpus_fp']:5d}"
              f"      {kinds}")

    # Cost: dedup (signature + lookup in an index of the corpus) against the extraction, per page.
    originals = {pid: body for kind, pid, _, body in pairs if kind == "original"}
    dedup_s = {}
    for _ in range(3):
        index = DedupIndex(0.5)
        for pid, body in bases.items():
            index.find_or_add(pid, signature(body))
        for pid, body in originals.items():
            if not body.strip():
                continue
            started = time.perf_counter()
            index.find_or_add("x" + pid, signature(body))
            dedup_s[pid] = min(dedup_s.get(pid, float("inf")), time.perf_counter() - started)
    total_dedup = sum(dedup_s.values())
    total_extract = sum(extraction[pid] for pid in dedup_s)
    cost = {"pages": len(dedup_s), "dedup_ms_per_page": 1e3 * total_dedup / len(dedup_s),
            "extraction_ms_per_page": 1e3 * total_extract / len(dedup_s), "ratio": total_dedup / total_extract}
    print(f"\ncost per page over {cost['pages']} pages (best of 3): dedup {cost['dedup_ms_per_page']:.2f} ms, "
          f"extraction {cost['extraction_ms_per_page']:.2f} ms: ratio {cost['ratio']:.3f}")

    size = state_size(args.size_pages) if args.size_pages else None
    if size:
        print(f"\nstate file: {size['pages']} stories, {size['bytes_per_page']:.0f} bytes per page "
              f"= {size['gb_per_million']:.2f} GB per million pages; insert {size['insert_ms']:.3f} ms; reopen "
              f"{size['reopen_s']:.2f} s ({size['reopen_s_per_million']:.0f} s per million)")
        memory = memory_per_story(args.size_pages, min(args.size_pages, 5000))
        size.update(memory)
        print(f"in-memory index: {memory['memory_bytes_per_story']:.0f} bytes per story" + (
            f"; Redis: {memory['redis_bytes_per_story']:.0f} bytes per story, {memory['redis_ms_per_story']:.2f} ms "
            "per new story" if "redis_bytes_per_story" in memory else "; Redis: redis-server not installed"))
    if args.json:
        Path(args.json).write_text(json.dumps({"thresholds": rows, "exact": {k: sorted(v) for k, v in exact.items()},
                                               "cost": cost, "state": size}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
