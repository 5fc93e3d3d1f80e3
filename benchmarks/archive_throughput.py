"""Throughput of a web-archive crawl (issue 21): ``scrapy crawl archivespider`` over a
WARC.gz of the 181 AEB pages.

Writes to a temporary directory (never committed) a WARC.gz holding each page of the
article-extraction-benchmark corpus (read in place from ``CEPR_BENCHMARK_DIR``) ``--copies``
times (copy *k* at ``URL#copy-k``, each record a new ``WARC-Record-ID``), plus a 404, a
redirect and a PDF per copy round (counted, not exported), then reports:

* **reader**: :func:`scrapy_cepr.archive.iter_records` alone over the whole file, records/s;
* **extract loop**: a bare ``scrapy_cepr.extract()`` loop on one core over
  ``--loop-copies`` rounds of the 181 pages, doing a process worker's work for an item
  with the default settings (``DEFAULT_METHOD``: title, body, confidence, page-type
  probabilities, then the page type) on the same bytes and charset as the crawl, the
  records read and their charset found before the timing; pages/s and CPU ms per page
  (and, beside it, the same loop reading the archive as it goes);
* **crawl per executor** (``--executors``, default ``inline,thread,process``): the example
  project's ``scrapy crawl archivespider -o out.jsonl`` in a subprocess (this checkout
  first on ``PYTHONPATH``), items/s = exported items / wall seconds from the command's
  start to its exit (Scrapy's start-up included) and / Scrapy's ``elapsed_time_seconds``;
  ``inline`` and ``thread`` run over ``--small-copies`` rounds (they are the slow ones),
  ``process`` over all ``--copies``; the crawl's method (from its log) must be the loop's;
* **CPU per record**, which the load of a shared machine changes far less than the wall
  rates: the crawler process (psutil, every 0.1 s) and its workers (all children's CPU,
  ``RUSAGE_CHILDREN``, less the crawler's), per exported item, from the command's start
  to its exit; their sum over the loop's, and the bound it puts on the wall ratio with
  the machine's cores all busy (cores × loop CPU / crawl CPU); and the same in the
  **steady state** (from 10 % of the items exported to the last sample with workers
  alive: start-up, warm-up and the inline phase left out);
* **peak RSS**: of the crawler process and of the sum of its worker processes (psutil,
  every 0.1 s), for the process crawl over the small file and over the whole file: a
  leak would make the second grow;
* the 1-minute load average before and after each run (the machine is shared).

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark \\
        python3 benchmarks/archive_throughput.py [--copies 111] [--small-copies 5] \\
        [--loop-copies 5] [--executors inline,thread,process] [--json out.json] [--workdir DIR]

``--copies 111`` gives 20,091 HTML records. Needs warcio (the ``warc`` extra) and psutil
(the ``bench`` extra). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from archive_fixtures import write_pages_warc  # noqa: E402

from scrapy_cepr import extract  # noqa: E402
from scrapy_cepr.archive import iter_records, record_response  # noqa: E402
from scrapy_cepr.core.pagetype import most_probable  # noqa: E402
from scrapy_cepr.evaluation import load_corpus  # noqa: E402
from scrapy_cepr.methods import DEFAULT_METHOD  # noqa: E402

MB = 1024 * 1024


def corpus_pages(corpus_dir: str) -> list[tuple[str, bytes]]:
    pages = []
    for s in load_corpus(corpus_dir):
        html = s.html if isinstance(s.html, bytes) else s.html.encode("utf-8")
        pages.append((s.url or f"https://aeb.example/{s.id}", html))
    return pages


def bench_reader(path: Path) -> dict:
    start = time.perf_counter()
    n = sum(1 for _ in iter_records(str(path)))
    seconds = time.perf_counter() - start
    return {"records": n, "seconds": seconds, "records_per_s": n / seconds}


def bench_loop(path: Path) -> dict:
    """A bare ``extract()`` loop on one core over the records of *path*, read first.

    It does a process worker's work for an item with the default settings: ``extract()``
    with the crawl's default method (``scrapy_cepr.methods.DEFAULT_METHOD``; it gives the
    title, the body, the confidence and the page-type probabilities) plus the page type
    (``most_probable``), on the body and the charset the crawler sends (Scrapy's
    ``response.encoding``, found before the timing: the crawler finds it, not the worker).
    Also timed: the same loop reading the archive as it goes (``iter_records`` included,
    what a script without Scrapy would run), reported beside it."""
    records = list(iter_records(str(path)))
    encodings = [record_response(record).encoding for record in records]
    start = time.process_time()
    wall = time.perf_counter()
    for record, encoding in zip(records, encodings, strict=True):
        result = extract(record.body, url=record.url, encoding=encoding)
        if result.page_types is not None:
            most_probable(dict(result.page_types))
    cpu, wall = time.process_time() - start, time.perf_counter() - wall
    start_read = time.process_time()
    for record in iter_records(str(path)):
        extract(record.body, url=record.url, encoding=record_response(record).encoding)
    cpu_read = time.process_time() - start_read
    return {"pages": len(records), "method": DEFAULT_METHOD, "seconds": wall, "cpu_seconds": cpu,
            "pages_per_s": len(records) / wall, "cpu_ms_per_page": 1000 * cpu / len(records),
            "cpu_ms_per_page_with_reading": 1000 * cpu_read / len(records)}


def run_crawl(path: Path, executor: str, workdir: Path) -> dict:
    out = workdir / f"out-{executor}-{path.stem}.jsonl"
    log = workdir / f"log-{executor}-{path.stem}.txt"
    cmd = [sys.executable, "-m", "scrapy", "crawl", "archivespider", "-a", f"paths={path}", "-O", str(out),
           "-s", f"CEPR_EXECUTOR={executor}", "-s", "LOG_LEVEL=INFO"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    rss_crawler = rss_workers = cpu_crawler = 0.0
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    samples: list[tuple[float, int, float, float]] = []  # (seconds, items exported, CPU crawler, CPU workers)
    out.unlink(missing_ok=True)  # an earlier run's feed (--workdir) is not this run's items
    exported, read_to = 0, 0
    with log.open("w") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT / "example_project", env=env, stderr=err, stdout=subprocess.DEVNULL)
        crawler = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                rss_crawler = max(rss_crawler, crawler.memory_info().rss / MB)
                times = crawler.cpu_times()
                cpu_crawler = times.user + times.system
                workers = crawler.children(recursive=True)
                rss_workers = max(rss_workers, sum(c.memory_info().rss for c in workers) / MB)
                cpu_workers = sum(sum(c.cpu_times()[:2]) for c in workers)
                if out.exists():  # count the new lines only
                    with out.open("rb") as fh:
                        fh.seek(read_to)
                        data = fh.read()
                    exported += data.count(b"\n")
                    read_to += len(data)
                samples.append((time.perf_counter() - start, exported, cpu_crawler, cpu_workers))
            except psutil.Error:
                pass
            time.sleep(0.1)
    wall = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_total = (usage.ru_utime - usage_before.ru_utime) + (usage.ru_stime - usage_before.ru_stime)
    text = log.read_text()
    if proc.returncode != 0:
        raise RuntimeError(f"{executor} crawl failed:\n{text[-3000:]}")
    items = sum(1 for _ in out.open())
    match = re.search(r"'elapsed_time_seconds': ([\d.]+)", text)
    elapsed = float(match.group(1)) if match else wall
    skipped = {m.group(1): int(m.group(2)) for m in re.finditer(r"'cepr/archive/skipped/(\w+)': (\d+)", text)}
    method = re.search(r"CEPR: method (\S+)", text)
    steady = _steady(samples, items)
    return {"executor": executor, "file": path.name, "items": items, "wall_s": wall, "elapsed_s": elapsed, **steady,
            "items_per_s_wall": items / wall, "items_per_s_elapsed": items / elapsed,
            "cpu_crawler_s": cpu_crawler, "cpu_total_s": cpu_total,
            "cpu_crawler_ms": 1000 * cpu_crawler / items, "cpu_workers_ms": 1000 * (cpu_total - cpu_crawler) / items,
            "cpu_total_ms": 1000 * cpu_total / items, "method": method.group(1) if method else None,
            "rss_crawler_mb": rss_crawler, "rss_workers_mb": rss_workers, "skipped": skipped,
            "load_before": load_before, "load_after": os.getloadavg()[0]}


def _steady(samples: list[tuple[float, int, float, float]], items: int) -> dict:
    """The steady state: from the sample where 10 % of the items were exported to the
    last sample with workers alive (start-up, worker warm-up and the inline phase left
    out), CPU ms per exported item of the crawler and of the workers, and items/s."""
    first = next((s for s in samples if s[1] >= items // 10), None)
    last = max((s for s in samples if s[3] > 0), key=lambda s: s[1], default=None)
    if first is None or last is None or last[1] <= first[1]:
        return {}
    n = last[1] - first[1]
    return {"steady_items": n, "steady_items_per_s": n / (last[0] - first[0]),
            "steady_cpu_crawler_ms": 1000 * (last[2] - first[2]) / n,
            "steady_cpu_workers_ms": 1000 * (last[3] - first[3]) / n}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=111, help="copies of each page in the big file (default 111)")
    parser.add_argument("--small-copies", type=int, default=5, help="copies in the small file (default 5)")
    parser.add_argument("--loop-copies", type=int, default=5, help="copies for the extract() loop (default 5)")
    parser.add_argument("--executors", default="inline,thread,process")
    parser.add_argument("--json", help="write all numbers to this file")
    parser.add_argument("--workdir", help="write the WARCs and outputs here and keep them (a WARC already there is "
                                          "read again; default: a temporary directory, removed)")
    args = parser.parse_args(argv)
    corpus_dir = os.environ.get("CEPR_BENCHMARK_DIR")
    if not corpus_dir:
        parser.error("set CEPR_BENCHMARK_DIR to the article-extraction-benchmark directory")
    pages = corpus_pages(corpus_dir)
    results: dict = {"cores": os.cpu_count(), "pages": len(pages)}
    with tempfile.TemporaryDirectory(prefix="cepr-archive-") as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        big, small, loop = (work / f"aeb-big-{args.copies}.warc.gz", work / f"aeb-small-{args.small_copies}.warc.gz",
                            work / f"aeb-loop-{args.loop_copies}.warc.gz")
        for path, copies, extras in ((big, args.copies, True), (small, args.small_copies, True),
                                     (loop, args.loop_copies, False)):
            if not path.exists():  # kept in --workdir for the next run
                write_pages_warc(path, pages, copies=copies, extras=extras)
        results["records_big"], results["records_small"] = len(pages) * args.copies, len(pages) * args.small_copies
        results["warc_mb"] = big.stat().st_size / MB
        results["reader"] = bench_reader(big)
        print(f"reader: {results['reader']['records_per_s']:.0f} records/s over {results['reader']['records']}",
              flush=True)
        results["loop"] = bench_loop(loop)
        print(f"extract loop: {results['loop']['pages_per_s']:.1f} pages/s over {results['loop']['pages']}",
              flush=True)
        crawls = []
        for executor in [e.strip() for e in args.executors.split(",") if e.strip()]:
            files = [small, big] if executor == "process" else [small]
            for path in files:
                r = run_crawl(path, executor, work)
                crawls.append(r)
                print(f"crawl {executor} {path.name}: {r['items']} items, {r['items_per_s_wall']:.1f}/s wall, "
                      f"{r['items_per_s_elapsed']:.1f}/s elapsed, RSS crawler {r['rss_crawler_mb']:.0f} MB, "
                      f"workers {r['rss_workers_mb']:.0f} MB, CPU crawler {r['cpu_crawler_s']:.1f} s of {r['cpu_total_s']:.1f} s, load {r['load_before']:.1f}->{r['load_after']:.1f}",
                      flush=True)
        results["crawls"] = crawls
    loop, loop_rate = results["loop"], results["loop"]["pages_per_s"]
    loop_ms = loop["cpu_ms_per_page"]
    print(f"\nextract() loop ({loop['method']}): {loop_ms:.2f} ms of CPU per page "
          f"({loop['cpu_ms_per_page_with_reading']:.2f} ms reading the archive as it goes)")
    print("\n| run | records | items/s (wall) | items/s (Scrapy elapsed) | × extract() loop (wall) "
          "| CPU ms/record crawler / workers / total | total ÷ loop CPU | bound 2 cores × loop | peak RSS crawler MB "
          "| peak RSS workers MB | load 1 min |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print(f"| reader alone | {results['reader']['records']} | {results['reader']['records_per_s']:.0f} | | | | | | | | |")
    print(f"| extract() loop, 1 core | {loop['pages']} | {loop_rate:.1f} | | 1.00 | {loop_ms:.2f} | 1.00 | | | | |")
    for r in results["crawls"]:
        if r["method"] != loop["method"]:
            print(f"WARNING: the {r['executor']} crawl ran {r['method']}, the loop {loop['method']}")
        ratio = r["cpu_total_ms"] / loop_ms
        bound = (os.cpu_count() or 1) / ratio if r["executor"] == "process" else 1 / ratio
        print(f"| {r['executor']} | {r['items']} | {r['items_per_s_wall']:.1f} | {r['items_per_s_elapsed']:.1f} "
              f"| {r['items_per_s_wall'] / loop_rate:.2f} | {r['cpu_crawler_ms']:.2f} / {r['cpu_workers_ms']:.2f} / "
              f"{r['cpu_total_ms']:.2f} | {ratio:.2f} | {bound:.2f} | {r['rss_crawler_mb']:.0f} "
              f"| {r['rss_workers_mb']:.0f} | {r['load_before']:.1f}→{r['load_after']:.1f} |")
    for r in results["crawls"]:
        if "steady_items" in r:
            total = r["steady_cpu_crawler_ms"] + r["steady_cpu_workers_ms"]
            print(f"steady state, {r['executor']} {r['file']} ({r['steady_items']} items after the first 10 %): "
                  f"CPU ms/record crawler {r['steady_cpu_crawler_ms']:.2f} + workers {r['steady_cpu_workers_ms']:.2f} "
                  f"= {total:.2f} ({total / loop_ms:.2f} x the loop; bound {(os.cpu_count() or 1) * loop_ms / total:.2f}), "
                  f"{r['steady_items_per_s']:.1f} items/s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
