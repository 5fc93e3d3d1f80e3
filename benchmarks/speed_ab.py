#!/usr/bin/env python3
"""Speed of two checkouts of scrapy-cepr side by side, page by page, as a ratio to the
lxml parse: for comparing a speed change with the code before it on a shared machine.

One worker process per checkout (``PYTHONPATH`` set to it) loads the same pages; for each
page in turn the driver asks every worker to time it, so that both checkouts see the same
moments of a noisy machine. A worker times, per page, ``lxml.html.fromstring(html)`` and
then each method's :func:`scrapy_cepr.extract` back to back (after ``gc.collect()``), in
CPU time of its thread (``time.thread_time``: another process's load does not count),
``--repeat`` times, and keeps the least of each. The report gives, per checkout and
method, the median over pages of each page's ratio to its own parse and the median
milliseconds.

Usage::

    python benchmarks/speed_ab.py --before /tmp/speed-before --after . \\
        [--methods cepr-typed,cepr-article] [--corpus aeb|wcxb] [--every N] [--repeat 3]

The AEB corpus is read from ``$CEPR_BENCHMARK_DIR``, WCXB dev from ``$CEPR_WCXB_DIR``
(``--every 3``: every third page).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

WORKER = r"""
import gc, json, os, sys, time
import lxml.html
from scrapy_cepr import extract
from scrapy_cepr.core.page import decode_html
from scrapy_cepr.evaluation import load_corpus, load_wcxb
corpus, every, repeat, methods = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
if corpus == "aeb":
    samples = load_corpus(os.environ["CEPR_BENCHMARK_DIR"])
else:
    samples = load_wcxb(os.environ["CEPR_WCXB_DIR"])
pages = [(decode_html(s.html) if isinstance(s.html, bytes) else s.html, s.url)
         for i, s in enumerate(samples) if i % every == 0]
for html, url in pages[:3]:
    for m in methods:
        extract(html, url=url, method=m)
clock = time.thread_time
print(len(pages), flush=True)
for line in sys.stdin:
    html, url = pages[int(line)]
    best = {name: float("inf") for name in ["parse", *methods]}
    gc.collect()
    for _ in range(repeat):
        t0 = clock(); lxml.html.fromstring(html); best["parse"] = min(best["parse"], clock() - t0)
        for m in methods:
            t0 = clock()
            try:
                extract(html, url=url, method=m)
            except Exception:
                pass
            best[m] = min(best[m], clock() - t0)
    print(json.dumps(best), flush=True)
"""


def start(checkout: str, args: argparse.Namespace) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(Path(checkout).resolve()))
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, args.corpus, str(args.every), str(args.repeat), args.methods],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=checkout,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="checkout of the code before the change")
    parser.add_argument("--after", default=".", help="checkout of the code after it (default: here)")
    parser.add_argument("--methods", default="cepr-typed,cepr-article")
    parser.add_argument("--corpus", choices=("aeb", "wcxb"), default="aeb")
    parser.add_argument("--every", type=int, default=1, help="every N-th page (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="timings per page, the least kept (default 3)")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    workers = {"before": start(args.before, args), "after": start(args.after, args)}
    sizes = {name: int(w.stdout.readline()) for name, w in workers.items()}  # type: ignore[union-attr]
    if len(set(sizes.values())) != 1:
        raise SystemExit(f"the checkouts see different corpora: {sizes}")
    times: dict[str, list[dict[str, float]]] = {name: [] for name in workers}
    for i in range(next(iter(sizes.values()))):
        order = list(workers) if i % 2 == 0 else list(reversed(workers))  # who goes first alternates
        for name in order:
            w = workers[name]
            w.stdin.write(f"{i}\n")  # type: ignore[union-attr]
            w.stdin.flush()  # type: ignore[union-attr]
            times[name].append(json.loads(w.stdout.readline()))  # type: ignore[union-attr]
    for w in workers.values():
        w.stdin.close()  # type: ignore[union-attr]
        w.wait()
    print(f"{args.corpus}, every {args.every} page(s): {len(times['before'])} pages, CPU time, least of "
          f"{args.repeat}; median over pages of the ratio to the page's lxml parse")
    print("| checkout | method | × parse | median ms | parse ms |")
    print("|---|---|---:|---:|---:|")
    for m in methods:
        for name, rows in times.items():
            ratio = statistics.median(r[m] / r["parse"] for r in rows)
            print(f"| {name} | {m} | {ratio:.2f} | {statistics.median(r[m] for r in rows) * 1e3:.2f} | "
                  f"{statistics.median(r['parse'] for r in rows) * 1e3:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
