#!/usr/bin/env python3
"""What the ``process`` executor's transport alone costs per page, without any extraction.

Two transports, both driven exactly as the pipeline drives them (``await
executor.run(...)`` from an asyncio loop, at most 2 pages in flight per worker):

* ``pipes``: :class:`scrapy_cepr.executors.ProcessExecutor` (the default on POSIX):
  worker processes fed over pipes from the event loop, the page's bytes written as they
  are (:mod:`scrapy_cepr.transport`);
* ``futures``: :class:`scrapy_cepr.executors.PoolProcessExecutor` (the fallback, and the
  ``process`` executor before the pipes): a :class:`~concurrent.futures.ProcessPoolExecutor`
  (``spawn``), whose two helper threads pickle the call and read the results.

The worker function (:func:`no_extraction`) ignores the page and returns a
title-and-body sized result, so what is measured is the transport: encoding, the pipes,
helper threads, futures. Per page: the CPU of this process (the crawler's side: the loop
plus any helper thread), the CPU of the workers (psutil, read before and after, so their
start-up is excluded) and the wall time, for a page of ``--size`` bytes (default
150,000: about the mean corpus page) and for a tiny page, so that the share that grows
with the page is visible. Each (transport, size) cell is the median of ``--repeat`` runs
taken in turn (these machines are noisy).

Needs psutil (the ``bench`` extra).

Usage::

    python benchmarks/pool_overhead.py [--pages 2172] [--workers 2] [--size 150000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import time
from typing import Any

import psutil

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scrapy_cepr.executors import PoolProcessExecutor, ProcessExecutor
from scrapy_cepr.options import ExtractOptions, PageResult
from scrapy_cepr.transport import HtmlBytes

TRANSPORTS = {"pipes": ProcessExecutor, "futures": PoolProcessExecutor}


def _workers_cpu() -> float:
    """CPU seconds so far of this process's live child processes (the workers)."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            times = child.cpu_times()
            total += times.user + times.system
    return total


def no_extraction(html: Any, url: Any, options: Any) -> tuple[PageResult, float]:
    """The worker function: ignores the page, returns a result of typical size (the
    signature of :func:`scrapy_cepr.worker.extract_page`)."""
    return PageResult("t" * 80, "b" * 5000, "article"), 0.0


async def measure(transport: str, pages: int, workers: int, size: int) -> dict[str, float]:
    """ms per page: ``crawler_cpu``, ``workers_cpu`` and ``wall`` for *pages* pages of
    *size* bytes (:class:`~scrapy_cepr.transport.HtmlBytes`, as the spider middleware sends
    them) through a fresh executor of *workers* processes."""
    from pool_overhead import no_extraction as worker  # importable by the workers (not __main__)

    executor = TRANSPORTS[transport](max_workers=workers, timeout=60, worker=worker, options=ExtractOptions("setpr"))
    await executor.start()
    page = HtmlBytes(os.urandom(size), "utf-8")
    await asyncio.gather(*(executor.run(page, "http://x/") for _ in range(4 * workers)))
    cpu0, children0, wall0 = time.process_time(), _workers_cpu(), time.perf_counter()
    await asyncio.gather(*(executor.run(page, "http://x/") for _ in range(pages)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    children = _workers_cpu() - children0
    await executor.aclose()
    return {"crawler_cpu": cpu / pages * 1000, "workers_cpu": children / pages * 1000, "wall": wall / pages * 1000}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2172, help="pages sent per run (default 2172)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="workers (default: CPUs)")
    parser.add_argument("--size", type=int, default=150_000, help="page size in bytes (default 150000)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per cell, median reported (default 5)")
    args = parser.parse_args(argv)
    cells: dict[tuple[str, int], list[dict[str, float]]] = {}
    for _ in range(args.repeat):
        for size in (args.size, 1000):
            for transport in TRANSPORTS:
                cells.setdefault((transport, size), []).append(
                    asyncio.run(measure(transport, args.pages, args.workers, size)))
    print(f"{args.pages} pages per run, {args.workers} workers, median of {args.repeat} runs\n")
    print("| transport | page bytes | crawler CPU ms/page | workers CPU ms/page | wall ms/page |")
    print("|---|---|---|---|---|")
    for (transport, size), runs in cells.items():
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"| {transport} | {size:,} | {med['crawler_cpu']:.3f} | {med['workers_cpu']:.3f} | {med['wall']:.3f} |")
    for size in (args.size, 1000):
        pipes = statistics.median(r["crawler_cpu"] for r in cells[("pipes", size)])
        futures = statistics.median(r["crawler_cpu"] for r in cells[("futures", size)])
        print(f"\n{size:,}-byte pages: crawler CPU pipes / futures = {pipes / futures:.2f} "
              f"({futures - pipes:+.3f} ms/page saved)", end="")
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
