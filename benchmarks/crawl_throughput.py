"""Crawl-time throughput of scrapy-cepr: pages per second, CPU and memory of a real crawl.

A local HTTP server (``tests/httpserver.py``, a thread of this process) serves the 181
pages of the article-extraction-benchmark corpus, each under ``--copies`` distinct URLs
(default 12: 2,172 pages), plus an index at ``/`` linking them all. The example project's
spider crawls it with the real command ``scrapy crawl newsspider`` in a subprocess (with
this checkout first on ``PYTHONPATH``, so it measures this code whatever an editable
install points to), once per configuration:

* ``off``: ``CEPR_ENABLED=False`` (no middleware, no pipeline: the crawl alone);
* ``inline``, ``thread``, ``process``: ``CEPR_EXECUTOR`` = that executor;
* ``fault``: ``process``, and one worker process is killed (SIGKILL) mid-crawl.

For each run: exported items, pages/s (items / Scrapy's ``elapsed_time_seconds``, which
runs from the engine start to the spider close), ratio to the ``off`` run, CPU seconds of
the crawler process and of its worker processes (psutil samples every 0.1 s, the last
sample of each process; the total is ``getrusage(RUSAGE_CHILDREN)``), peak RSS of the
crawler and of its workers (sum over worker processes), peak crawler RSS until 500 pages
were crawled vs over the whole crawl (a leak would make the second grow), and the
``cepr/*`` stats. The server's CPU (this process) is reported too: on a 2-core machine it
competes with the crawl; so does any other load, hence the 1-minute load average before
and after each run (pages/s are only comparable between runs with similar load; CPU
seconds are less sensitive to it).

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark \\
        python3 benchmarks/crawl_throughput.py [--copies 12] [--runs off,inline,thread,process,fault] \\
        [--json out.json] [-s NAME=VALUE ...] [--repeat N] [--before DIR]

``--repeat N`` makes the runs N times in turn and adds a table of medians; ``--before DIR``
adds each run (but ``off``) made with the ``scrapy_cepr`` of another checkout, e.g. the
commit before a change (``git worktree add /tmp/before COMMIT``), so that a before/after
comparison is one command, its runs interleaved (this machine's load drifts).

Needs psutil (the ``bench`` extra). Prints a Markdown table; ``--json`` writes all
numbers. Takes a few minutes (the ``inline`` run is the slowest).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from httpserver import PageServer, ServedPage, parse_stats_dump

from scrapy_cepr.evaluation import CORPUS_ENV, load_corpus

logger = logging.getLogger(__name__)

PROJECT = ROOT / "example_project"

#: Settings of every run: no politeness towards our own server, depth 1 (the corpus pages'
#: relative links would be 404s here), a stats line every second (to follow progress).
BASE_SETTINGS = {
    "DEPTH_LIMIT": "1",
    "ROBOTSTXT_OBEY": "False",
    "AUTOTHROTTLE_ENABLED": "False",
    "DOWNLOAD_DELAY": "0",
    "CONCURRENT_REQUESTS": "32",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "32",
    "CLOSESPIDER_PAGECOUNT": "0",
    "LOGSTATS_INTERVAL": "1",
    "LOG_LEVEL": "INFO",
}

RUNS: dict[str, dict[str, str]] = {
    "off": {"CEPR_ENABLED": "False"},
    "inline": {"CEPR_EXECUTOR": "inline"},
    "thread": {"CEPR_EXECUTOR": "thread"},
    "process": {"CEPR_EXECUTOR": "process"},
    "fault": {"CEPR_EXECUTOR": "process"},
}

#: Pages crawled before the ``fault`` run kills a worker.
KILL_AFTER_PAGES = 600
#: Pages crawled at the first memory checkpoint.
MEMORY_CHECKPOINT = 500

_CRAWLED = re.compile(r"Crawled (\d+) pages")
MB = 1024 * 1024


@dataclass
class RunResult:
    """Measurements of one crawl (times in seconds, memory in MB)."""

    name: str
    settings: dict[str, str]
    items: int = 0
    served: int = 0
    elapsed: float = 0.0
    wall: float = 0.0
    pages_per_s: float = 0.0
    ratio_to_off: float | None = None
    cpu_crawler: float = 0.0
    cpu_workers: float = 0.0
    cpu_total: float = 0.0
    cpu_server: float = 0.0
    rss_crawler_peak: float = 0.0
    rss_workers_peak: float = 0.0
    rss_crawler_at_checkpoint: float | None = None
    #: (pages crawled, crawler CPU s) at the first sample after MEMORY_CHECKPOINT pages.
    cpu_checkpoint: tuple[int, float] | None = None
    workers_seen: int = 0
    killed_pid: int | None = None
    failed_items: list[dict[str, Any]] = field(default_factory=list)
    cepr_stats: dict[str, Any] = field(default_factory=dict)
    returncode: int = 0
    load_before: float = 0.0
    load_after: float = 0.0


class _StderrReader(threading.Thread):
    """Collects the crawler's stderr and the last "Crawled N pages" count."""

    def __init__(self, stream: Any) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.lines: list[str] = []
        self.crawled = 0

    def run(self) -> None:
        for line in self.stream:
            self.lines.append(line)
            m = _CRAWLED.search(line)
            if m:
                self.crawled = int(m.group(1))


def build_site(corpus_dir: Path, copies: int) -> dict[str, ServedPage]:
    """``{path: page}``: each corpus page under *copies* URLs, and the index ``/``."""
    pages: dict[str, ServedPage] = {}
    for sample in load_corpus(corpus_dir):
        html = sample.html if isinstance(sample.html, bytes) else sample.html.encode("utf-8")
        for copy in range(copies):
            pages[f"/c{copy:02d}/{sample.id}.html"] = ServedPage(html)
    links = "".join(f'<a href="{p}">{p}</a>\n' for p in pages)
    pages["/"] = ServedPage(f"<html><body><h1>Index</h1>\n{links}</body></html>".encode())
    return pages


def run_crawl(name: str, server: PageServer, extra: dict[str, str], workdir: Path, *, kill_worker: bool,
              code: Path = ROOT, label: str | None = None) -> RunResult:
    """One ``scrapy crawl newsspider`` over *server*, measured, with the ``scrapy_cepr``
    of the checkout *code* (default: this one) first on ``PYTHONPATH``; the result is
    named *label* (default *name*)."""
    settings = {**BASE_SETTINGS, **RUNS[name], **extra}
    out = workdir / f"{label or name}.jsonl".replace(" ", "_")
    cmd = [sys.executable, "-m", "scrapy", "crawl", "newsspider", "-a", f"start_urls={server.url}/", "-O", str(out)]
    for key, value in settings.items():
        cmd += ["-s", f"{key}={value}"]
    result = RunResult(label or name, settings)
    result.load_before = os.getloadavg()[0]
    hits0 = server.hits
    usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    # Crawl with the scrapy_cepr of that checkout, whatever an editable install points to.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(code), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(cmd, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    reader = _StderrReader(proc.stderr)
    reader.start()
    crawler = psutil.Process(proc.pid)
    cpu: dict[int, float] = {}
    last_print = 0.0
    while proc.poll() is None:
        try:
            with crawler.oneshot():
                t = crawler.cpu_times()
                cpu[proc.pid] = t.user + t.system
                result.rss_crawler_peak = max(result.rss_crawler_peak, crawler.memory_info().rss / MB)
            children = crawler.children(recursive=True)
        except psutil.NoSuchProcess:
            break
        rss_workers = 0.0
        for child in children:
            try:
                with child.oneshot():
                    t = child.cpu_times()
                    cpu[child.pid] = t.user + t.system
                    rss_workers += child.memory_info().rss / MB
            except psutil.NoSuchProcess:
                continue
        result.rss_workers_peak = max(result.rss_workers_peak, rss_workers)
        if result.rss_crawler_at_checkpoint is None and reader.crawled >= MEMORY_CHECKPOINT:
            result.rss_crawler_at_checkpoint = result.rss_crawler_peak
            result.cpu_checkpoint = (reader.crawled, cpu.get(proc.pid, 0.0))
        if kill_worker and result.killed_pid is None and reader.crawled >= KILL_AFTER_PAGES:
            workers = [c for c in children if _is_pool_worker(c)]
            if workers:
                victim = max(workers, key=lambda c: cpu.get(c.pid, 0.0))
                os.kill(victim.pid, signal.SIGKILL)
                result.killed_pid = victim.pid
                print(f"  [{name}] killed worker pid {victim.pid} after {reader.crawled} pages", flush=True)
        now = time.perf_counter() - t0
        if now - last_print >= 10:
            last_print = now
            print(f"  [{name}] {now:5.0f} s: {reader.crawled} pages crawled", flush=True)
        time.sleep(0.1)
    result.returncode = proc.wait()
    result.load_after = os.getloadavg()[0]
    reader.join()
    result.wall = time.perf_counter() - t0
    usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    self1 = resource.getrusage(resource.RUSAGE_SELF)
    result.cpu_total = (usage1.ru_utime - usage0.ru_utime) + (usage1.ru_stime - usage0.ru_stime)
    result.cpu_server = (self1.ru_utime - self0.ru_utime) + (self1.ru_stime - self0.ru_stime)
    result.cpu_crawler = cpu.get(proc.pid, 0.0)
    result.cpu_workers = sum(v for pid, v in cpu.items() if pid != proc.pid)
    result.workers_seen = len(cpu) - 1
    result.served = server.hits - hits0 - 1  # minus the index
    log = "".join(reader.lines)
    if result.returncode != 0:
        raise RuntimeError(f"{name}: scrapy exited with {result.returncode}:\n{log[-3000:]}")
    stats = parse_stats_dump(log)
    result.elapsed = float(stats["elapsed_time_seconds"])
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    result.items = len(items)
    result.pages_per_s = result.items / result.elapsed
    result.cepr_stats = {k: v for k, v in sorted(stats.items()) if k.startswith("cepr/")}
    result.failed_items = [
        {"url": item["url"], "cepr_error": item["cepr_error"]} for item in items if item.get("cepr_error")
    ]
    return result


def _is_pool_worker(process: psutil.Process) -> bool:
    """A process worker (pipes: ``-c "from scrapy_cepr.worker import serve…"``; the
    fallback pool: spawned by multiprocessing, but not its resource tracker)."""
    try:
        cmdline = " ".join(process.cmdline())
    except psutil.NoSuchProcess:
        return False
    return "scrapy_cepr.worker" in cmdline or ("multiprocessing" in cmdline and "resource_tracker" not in cmdline)


def markdown_table(results: list[RunResult]) -> str:
    """The results as a Markdown table."""
    head = ("| run | items | elapsed s | pages/s | × off | CPU crawler s | CPU workers s | CPU total s "
            "| CPU server s | peak RSS crawler MB (at 500 pages) | peak RSS workers MB | cepr/cleaned "
            "| cepr/failed | extraction s | load avg before/after |")
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        ratio = f"{r.ratio_to_off:.2f}" if r.ratio_to_off is not None else "–"
        at500 = f"{r.rss_crawler_at_checkpoint:.0f}" if r.rss_crawler_at_checkpoint is not None else "–"
        ext = r.cepr_stats.get("cepr/extraction_seconds")
        rows.append(
            f"| {r.name} | {r.items} | {r.elapsed:.1f} | {r.pages_per_s:.1f} | {ratio} | {r.cpu_crawler:.1f} "
            f"| {r.cpu_workers:.1f} | {r.cpu_total:.1f} | {r.cpu_server:.1f} | {r.rss_crawler_peak:.0f} ({at500}) "
            f"| {r.rss_workers_peak:.0f} | {r.cepr_stats.get('cepr/cleaned', 0)} "
            f"| {r.cepr_stats.get('cepr/failed', 0)} | {ext if ext is None else round(float(ext), 1)} "
            f"| {r.load_before:.1f}/{r.load_after:.1f} |"
        )
    return "\n".join(rows)


def summary_table(results: list[RunResult]) -> str:
    """Medians over the repeated runs of each name: pages/s, × off, and CPU ms per page
    (crawler, its steady state, workers), with the crawler's extra CPU over the ``off`` runs."""

    def median(values: list[float | None]) -> float | None:
        kept = [v for v in values if v is not None]
        return statistics.median(kept) if kept else None

    def fmt(value: float | None, spec: str) -> str:
        return "–" if value is None else format(value, spec)

    per_name: dict[str, dict[str, float | None]] = {}
    for name in dict.fromkeys(r.name for r in results):
        runs = [r for r in results if r.name == name]
        per_name[name] = {
            "runs": len(runs),
            "pages_per_s": median([r.pages_per_s for r in runs]),
            "ratio": median([r.ratio_to_off for r in runs]),
            "crawler": median([1000 * r.cpu_crawler / r.items for r in runs]),
            "steady": median([steady_ms(r) for r in runs]),
            "workers": median([1000 * r.cpu_workers / r.items for r in runs]),
        }
    off = per_name.get("off", {})
    head = ("| run | runs | pages/s | × off | crawler CPU ms/page | − off | steady-state ms/page | − off "
            "| workers CPU ms/page |")
    rows = [head, "|---" * 9 + "|"]
    for name, m in per_name.items():
        extra = {key: None if m[key] is None or off.get(key) is None else m[key] - off[key]
                 for key in ("crawler", "steady")}
        rows.append(f"| {name} | {m['runs']} | {fmt(m['pages_per_s'], '.1f')} | {fmt(m['ratio'], '.2f')} "
                    f"| {fmt(m['crawler'], '.2f')} | {fmt(extra['crawler'], '+.2f')} | {fmt(m['steady'], '.2f')} "
                    f"| {fmt(extra['steady'], '+.2f')} | {fmt(m['workers'], '.2f')} |")
    return ("(medians of the runs of each name; steady state: the crawler's CPU from the "
            f"{MEMORY_CHECKPOINT}th page crawled to the end, so without start-up, imports and the inline "
            "pages before the pool)\n\n" + "\n".join(rows))


def steady_ms(r: RunResult) -> float | None:
    """The crawler's CPU ms per page from the checkpoint to the end of *r*, or None."""
    if r.cpu_checkpoint is None or r.items <= r.cpu_checkpoint[0]:
        return None
    pages, cpu = r.cpu_checkpoint
    return 1000 * (r.cpu_crawler - cpu) / (r.items - pages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus directory (default ${CORPUS_ENV})")
    parser.add_argument("--copies", type=int, default=12, help="URLs per corpus page (default 12: 2,172 pages)")
    parser.add_argument("--runs", default="off,inline,thread,process,fault", help="comma-separated runs")
    parser.add_argument("--json", type=Path, help="write all measurements to this JSON file")
    parser.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="extra Scrapy setting for every run (repeatable)")
    parser.add_argument("--before", type=Path, metavar="DIR",
                        help="another checkout (e.g. `git worktree add DIR COMMIT`): each run but off is "
                             "made with its scrapy_cepr too, as 'NAME (before)'")
    parser.add_argument("--repeat", type=int, default=1,
                        help="make the runs this many times, in turn; the summary gives medians (default 1)")
    args = parser.parse_args(argv)
    if args.before is not None and not (args.before / "scrapy_cepr" / "__init__.py").is_file():
        parser.error(f"--before {args.before}: no scrapy_cepr package there")
    if not args.corpus:
        parser.error(f"give --corpus or set {CORPUS_ENV}")
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    unknown = [r for r in runs if r not in RUNS]
    if unknown:
        parser.error(f"unknown runs {unknown}; known: {', '.join(RUNS)}")
    extra = dict(s.split("=", 1) for s in args.settings)

    pages = build_site(Path(args.corpus), args.copies)
    print(f"serving {len(pages) - 1} pages ({sum(len(p.body) for p in pages.values()) / MB:.0f} MB) "
          f"on 127.0.0.1; {os.cpu_count()} CPUs", flush=True)
    plan = [(name, ROOT, name) for name in runs]
    if args.before is not None:
        plan += [(name, args.before.resolve(), f"{name} (before)") for name in runs if name != "off"]
    results: list[RunResult] = []
    with PageServer(pages) as server, tempfile.TemporaryDirectory() as tmp:
        for turn in range(args.repeat):
            turn_results = []
            for name, code, label in plan:
                print(f"run {label} ({turn + 1}/{args.repeat}) …", flush=True)
                r = run_crawl(name, server, extra, Path(tmp), kill_worker=(name == "fault"), code=code, label=label)
                print(f"  [{label}] {r.items} items in {r.elapsed:.1f} s: {r.pages_per_s:.1f} pages/s; crawler "
                      f"CPU {1000 * r.cpu_crawler / max(r.items, 1):.2f} ms/page", flush=True)
                turn_results.append(r)
            off_turn = next((r for r in turn_results if r.name == "off"), None)
            for r in turn_results:  # the ratio to the off run of the same turn
                if off_turn is not None:
                    r.ratio_to_off = r.pages_per_s / off_turn.pages_per_s
            results += turn_results
    off = next((r for r in results if r.name == "off"), None)

    print()
    print(markdown_table(results))
    if args.repeat > 1 or args.before is not None:
        print()
        print(summary_table(results))
    by_name = {r.name: r for r in results}
    print()
    if "inline" in by_name and "process" in by_name:
        x = by_name["process"].pages_per_s / by_name["inline"].pages_per_s
        print(f"process / inline pages/s = {x:.2f} (target >= 1.6): {'met' if x >= 1.6 else 'MISSED'}")
    if off is not None and "process" in by_name:
        x = by_name["process"].pages_per_s / off.pages_per_s
        print(f"process / off pages/s = {x:.2f} (target >= 0.8): {'met' if x >= 0.8 else 'MISSED'}")
    for r in results:
        if r.rss_crawler_at_checkpoint is not None:
            print(f"memory [{r.name}]: crawler peak RSS {r.rss_crawler_at_checkpoint:.0f} MB after "
                  f"{MEMORY_CHECKPOINT} pages, {r.rss_crawler_peak:.0f} MB after {r.items}")
    if "fault" in by_name:
        f = by_name["fault"]
        print(f"fault: killed worker {f.killed_pid}; pages served {f.served}, items exported {f.items} "
              f"({'equal' if f.items == f.served else 'DIFFERENT'}); items with cepr_error: {len(f.failed_items)}; "
              f"cepr/worker_restarts = {f.cepr_stats.get('cepr/worker_restarts', 0)}")
        for item in f.failed_items[:5]:
            print(f"  {item['url']}: {item['cepr_error']}")
    if args.json:
        payload = {"pages": len(pages) - 1, "copies": args.copies, "cpus": os.cpu_count(),
                   "runs": [asdict(r) for r in results]}
        args.json.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
