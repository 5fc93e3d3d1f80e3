#!/usr/bin/env python3
"""What the process pool's transport alone costs per page, without any extraction.

The ``process`` executor (:class:`scrapy_cepr.executors.ProcessExecutor`) sends each
page's bytes to a :class:`~concurrent.futures.ProcessPoolExecutor` worker (``spawn``)
and awaits the result from an asyncio loop, with 2 pages in flight per worker. This
script does the same with a worker function that does nothing but return a
title-and-body sized dict, so that what it measures is the transport: pickling, the
pipes, the pool's helper threads and the futures.

It reports, per page: the CPU of this process (the crawler's side: main loop plus the
pool's threads), the CPU of the workers (psutil, read before and after, so their start-up is excluded) and the wall time, for
a payload of ``--size`` bytes (default 150,000: about the mean corpus page) and for a
tiny payload, so that the share that grows with the page is visible.

Needs psutil (the ``bench`` extra).

Usage::

    python benchmarks/pool_overhead.py [--pages 2172] [--workers 2] [--size 150000]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import psutil

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from scrapy_cepr.executors import IN_FLIGHT_PER_WORKER


def _workers_cpu() -> float:
    """CPU seconds so far of this process's live child processes (the pool's workers)."""
    total = 0.0
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            times = child.cpu_times()
            total += times.user + times.system
    return total


def no_extraction(page: bytes) -> dict[str, str]:
    """The worker function: ignores the page, returns a result of typical size."""
    return {"title": "t" * 80, "body": "b" * 5000}


async def measure(pages: int, workers: int, size: int) -> dict[str, float]:
    """ms per page: ``crawler_cpu``, ``workers_cpu`` and ``wall`` for *pages* payloads of
    *size* bytes through a fresh spawn pool of *workers* processes."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    list(pool.map(no_extraction, [b""] * (2 * workers)))  # start the workers
    payload = os.urandom(size)
    slots = asyncio.Semaphore(IN_FLIGHT_PER_WORKER * workers)

    async def one() -> None:
        async with slots:
            await asyncio.wrap_future(pool.submit(no_extraction, payload))

    cpu0, children0, wall0 = time.process_time(), _workers_cpu(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(pages)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    children = _workers_cpu() - children0  # start-up excluded: read before and after
    pool.shutdown()
    return {"crawler_cpu": cpu / pages * 1000, "workers_cpu": children / pages * 1000, "wall": wall / pages * 1000}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=2172, help="pages sent (default 2172)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="pool size (default: CPUs)")
    parser.add_argument("--size", type=int, default=150_000, help="page size in bytes (default 150000)")
    args = parser.parse_args(argv)
    print("| payload bytes | crawler CPU ms/page | workers CPU ms/page | wall ms/page |")
    print("|---|---|---|---|")
    for size in (args.size, 1000):
        r = asyncio.run(measure(args.pages, args.workers, size))
        print(f"| {size:,} | {r['crawler_cpu']:.3f} | {r['workers_cpu']:.3f} | {r['wall']:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
