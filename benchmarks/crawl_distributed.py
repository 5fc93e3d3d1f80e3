"""Distributed crawl-time cleaning: 1, 2, 3 … ``scrapy crawl redisnewsspider`` processes
over one Redis, with and without a crawler killed (SIGKILL) mid-crawl.

The corpus is served as in ``benchmarks/crawl_throughput.py`` (its ``build_site``: the 181
pages of the article-extraction-benchmark under ``--copies`` URLs each, plus an index at
``/``), on ``127.0.0.1`` by ``tests/httpserver.py``; a fresh ``redis-server`` with no
persistence is started by ``tests/redis_fixture.py``. For each run the Redis database is
emptied, the index URL is pushed to ``redisnewsspider:start_urls`` and N crawler processes
start at once, each with its own ``-O part-K.jsonl``.

Per run: exported items (complete lines of all outputs) against pages on the site,
duplicate URLs across outputs, HTTP requests served (a recovered page may be downloaded
twice, exported once), pages/s = items / (time of the last exported line − time of the
first), and the CPU seconds of all crawler processes (with their pool workers). A
``kill`` run kills one crawler's process group (the crawler and its pool workers, as a
lost machine) once it exported ``--kill-after`` items and holds requests in flight; the others requeue its in-flight
requests once its heartbeat (``SCHEDULER_HEARTBEAT_TIMEOUT``, 3 s here) expires.

``--readme`` instead runs the README's recipe, twice at once, with the project's own
settings (robots.txt, politeness delays, the process executor) over the 181 pages: a
redis-server with a password (``--requirepass``, loopback only), ``REDIS_URL`` with that
password in the environment, and ``scrapy crawl redisnewsspider -s DEPTH_LIMIT=1 -O
out-K.jsonl``; it checks that the two outputs together hold the 181 pages once each.

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark \\
        python benchmarks/crawl_distributed.py [--copies 12] [--crawlers 1,2,3] [--kill 2,3] \\
        [-s CEPR_EXECUTOR=process ...] [--json out.json]
    python benchmarks/crawl_distributed.py --readme
    python benchmarks/crawl_distributed.py --serializer-cost

Needs redis-server (``apt-get install redis-server``), ``pip install -e '.[redis,bench]'``.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from crawl_throughput import BASE_SETTINGS as THROUGHPUT_SETTINGS  # noqa: E402
from crawl_throughput import build_site  # noqa: E402
from httpserver import PageServer, parse_stats_dump  # noqa: E402
from redis_fixture import RedisServer  # noqa: E402

from scrapy_cepr.distributed import read_jsonl  # noqa: E402
from scrapy_cepr.evaluation import CORPUS_ENV  # noqa: E402

PROJECT = ROOT / "example_project"
START_KEY = "redisnewsspider:start_urls"

#: Settings of the measured runs (the ``--readme`` run uses none of them).
BASE_SETTINGS = {
    **THROUGHPUT_SETTINGS,  # depth 1, no politeness towards our own server, 32 concurrent requests
    "CEPR_EXECUTOR": "inline",
    "MAX_IDLE_TIME_BEFORE_CLOSE": "3",
    "SCHEDULER_HEARTBEAT_TIMEOUT": "3",
    "LOG_LEVEL": "INFO",
}


@dataclass
class Run:
    """One distributed crawl, measured (seconds)."""

    name: str
    crawlers: int
    killed: bool
    pages: int = 0
    items: int = 0
    duplicates: int = 0
    cut_lines: int = 0
    http_requests: int = 0
    first_to_last_item: float = 0.0
    wall: float = 0.0
    pages_per_s: float = 0.0
    cpu_crawlers: float = 0.0
    killed_exported: int | None = None
    requeued: int = 0
    returncodes: tuple[int, ...] = ()


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _cpu(proc: psutil.Process) -> float:
    total = 0.0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def run(name: str, n: int, server: PageServer, redis_url: str, settings: dict[str, str], workdir: Path,
        pages: int, *, kill_after: int | None, timeout: float) -> Run:
    """*n* crawlers over *server*; kill crawler 0 after *kill_after* exported items."""
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    client.lpush(START_KEY, server.url + "/")
    outs = [workdir / f"{name}-{k}.jsonl" for k in range(n)]
    logs = [workdir / f"{name}-{k}.log" for k in range(n)]
    result = Run(name, n, kill_after is not None, pages=pages)
    hits0 = server.hits
    t0 = time.perf_counter()
    procs = []
    for k, (out, log) in enumerate(zip(outs, logs)):
        cmd = [sys.executable, "-m", "scrapy", "crawl", "redisnewsspider", "-s", f"REDIS_URL={redis_url}", "-O", str(out),
               "-s", f"SCHEDULER_CRAWLER_ID={name.replace(' ', '').replace(',', '-')}-{k}"]
        for key, value in settings.items():
            cmd += ["-s", f"{key}={value}"]
        with log.open("w") as err:
            procs.append(subprocess.Popen(cmd, cwd=PROJECT, env=_env(), stdout=subprocess.DEVNULL, stderr=err,
                                          start_new_session=True))
    handles = [psutil.Process(p.pid) for p in procs]
    cpu = [0.0] * n
    first = last = None
    seen = 0
    try:
        while any(p.poll() is None for p in procs):
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"{name}: not finished after {timeout} s")
            for k, h in enumerate(handles):
                if procs[k].poll() is None:
                    try:
                        cpu[k] = _cpu(h)
                    except psutil.NoSuchProcess:
                        pass
            total = sum(_lines(o) for o in outs)
            now = time.perf_counter()
            if total and first is None:
                first = now
            if total != seen:
                seen, last = total, now
            victim_key = f"redisnewsspider:inflight:{name.replace(' ', '').replace(',', '-')}-0"
            if (kill_after is not None and result.killed_exported is None and _lines(outs[0]) >= kill_after
                    and client.zcard(victim_key) > 0):  # mid-crawl: it holds requests (not idle)
                os.killpg(procs[0].pid, signal.SIGKILL)
                procs[0].wait()
                result.killed_exported = _lines(outs[0])
                print(f"  [{name}] killed crawler 0 (pid {procs[0].pid}) after {result.killed_exported} items",
                      flush=True)
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    result.wall = (last or time.perf_counter()) - t0
    result.returncodes = tuple(p.returncode for p in procs)
    report = read_jsonl(outs)
    result.items = len(report.items)
    result.duplicates = sum(report.duplicates.values())
    result.cut_lines = report.cut_lines
    result.http_requests = server.hits - hits0 - 1
    result.first_to_last_item = (last - first) if first and last else 0.0
    result.pages_per_s = result.items / result.first_to_last_item if result.first_to_last_item else 0.0
    result.cpu_crawlers = sum(cpu)
    for k, log in enumerate(logs):
        if kill_after is not None and k == 0:
            continue
        text = log.read_text(errors="replace")
        try:
            stats = parse_stats_dump(text)
        except ValueError:
            raise RuntimeError(f"{name}: crawler {k} did not finish:\n{text[-3000:]}") from None
        result.requeued += int(stats.get("cepr/distributed/requeued", 0))
    client.close()
    return result


def table(runs: list[Run]) -> str:
    head = ("| run | crawlers | SIGKILL | items exported / pages | duplicates | HTTP requests | pages/s "
            "| × 1 crawler | first→last item s | CPU crawlers s | requeued |")
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    one = next((r.pages_per_s for r in runs if r.crawlers == 1 and not r.killed), None)
    for r in runs:
        ratio = f"{r.pages_per_s / one:.2f}" if one else "–"
        kill = f"yes (after {r.killed_exported})" if r.killed else "no"
        rows.append(f"| {r.name} | {r.crawlers} | {kill} | {r.items} / {r.pages} | {r.duplicates} | {r.http_requests} "
                    f"| {r.pages_per_s:.1f} | {ratio} | {r.first_to_last_item:.1f} | {r.cpu_crawlers:.1f} | {r.requeued} |")
    return "\n".join(rows)


def readme_run(corpus: Path, workdir: Path) -> int:
    """The README's command, exactly, in two processes at once, over the 181 pages."""
    site = build_site(corpus, 1)
    pages = len(site) - 1
    with PageServer(site) as server, RedisServer(password=secrets.token_hex(24)) as rs:
        client = redis.Redis.from_url(rs.url)
        client.lpush(START_KEY, server.url + "/")
        outs = [workdir / f"out-{k}.jsonl" for k in range(2)]
        cmds = [["scrapy", "crawl", "redisnewsspider", "-s", "DEPTH_LIMIT=1", "-O", str(out)] for out in outs]
        print(f"  $ redis-server --bind 127.0.0.1 --requirepass PASSWORD ... (port {rs.port})")
        print(f"  $ export REDIS_URL=redis://:PASSWORD@127.0.0.1:{rs.port}")
        for cmd in cmds:
            print("  $ (cd example_project &&", " ".join(cmd[:-1]), Path(cmd[-1]).name + ")", flush=True)
        t0 = time.perf_counter()
        env = {**_env(), "REDIS_URL": rs.url}  # as the README: the password in the environment
        procs = [subprocess.Popen(cmd, cwd=PROJECT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True) for cmd in cmds]
        logs = [p.communicate(timeout=900)[1].decode(errors="replace") for p in procs]
        wall = time.perf_counter() - t0
        report = read_jsonl(outs)
        served = {server.url + path for path in site if path != "/"}
    per = [_lines(o) for o in outs]
    ok = set(report.items) == served and not report.duplicates and all(p.returncode == 0 for p in procs)
    print(f"readme command x2: exit codes {[p.returncode for p in procs]}, items per process {per}, "
          f"union {len(report.items)} / {pages} pages, duplicates {sum(report.duplicates.values())}, "
          f"missing {len(served - set(report.items))}, wall {wall:.0f} s: {'OK' if ok else 'FAILED'}")
    if not ok:
        for log in logs:
            print(log[-3000:])
    return 0 if ok else 1


def serializer_cost(number: int = 20000, repeat: int = 5) -> None:
    """Microseconds to store one request of redisnewsspider's kind as a queue entry and read
    it back: the JSON format of ``scrapy_cepr.distributed`` against scrapy-redis's pickle
    (best of *repeat* runs of *number*)."""
    import pickle
    import timeit

    from scrapy import Request

    from scrapy_cepr.distributed import dumps, loads

    request = Request("https://news.example/articles/some-long-path.html?x=1",
                      headers={"Referer": "https://news.example/", "Accept": "text/html"},
                      meta={"depth": 1, "newsspider_site": (("news.example",), ()), "download_latency": 0.12})
    d = request.to_dict()
    per = {name: min(timeit.repeat(f, number=number, repeat=repeat)) / number * 1e6 for name, f in (
        ("JSON", lambda: loads(dumps(d))), ("pickle", lambda: pickle.loads(pickle.dumps(d, protocol=-1))))}
    print(f"store + read one request: JSON {per['JSON']:.1f} us ({len(dumps(d))} bytes), "
          f"pickle {per['pickle']:.1f} us ({len(pickle.dumps(d, protocol=-1))} bytes)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV), help=f"corpus directory (default ${CORPUS_ENV})")
    parser.add_argument("--copies", type=int, default=12, help="URLs per corpus page (default 12: 2,172 pages)")
    parser.add_argument("--crawlers", default="1,2,3", help="crawler counts of the clean runs")
    parser.add_argument("--kill", default="2,3", help="crawler counts of the runs with one crawler SIGKILLed")
    parser.add_argument("--kill-after", type=int, default=0,
                        help="items the killed crawler exports first (default: a quarter of its share)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per run")
    parser.add_argument("--readme", action="store_true", help="run the README's command twice at once, 181 pages")
    parser.add_argument("--serializer-cost", action="store_true",
                        help="only time storing and reading one request, JSON against pickle")
    parser.add_argument("--json", type=Path, help="write the measurements to this JSON file")
    parser.add_argument("--workdir", type=Path, help="keep the outputs and logs here (default: a temporary directory)")
    parser.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="extra Scrapy setting for every crawler (repeatable)")
    args = parser.parse_args(argv)
    if args.serializer_cost:
        serializer_cost()
        return 0
    if not args.corpus:
        parser.error(f"give --corpus or set {CORPUS_ENV}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.workdir:
            args.workdir.mkdir(parents=True, exist_ok=True)
            tmp = str(args.workdir)
        if args.readme:
            return readme_run(Path(args.corpus), Path(tmp))
        settings = {**BASE_SETTINGS, **dict(s.split("=", 1) for s in args.settings)}
        site = build_site(Path(args.corpus), args.copies)
        pages = len(site) - 1
        plan = [(f"{n} crawler{'s' * (n > 1)}", n, False) for n in map(int, filter(None, args.crawlers.split(",")))]
        plan += [(f"{n} crawlers, 1 killed", n, True) for n in map(int, filter(None, args.kill.split(",")))]
        print(f"serving {pages} pages; {os.cpu_count()} CPUs; settings {settings}", flush=True)
        runs = []
        with PageServer(site) as server, RedisServer() as rs:
            for name, n, kill in plan:
                kill_after = (args.kill_after or max(1, pages // n // 4)) if kill else None
                print(f"run {name} …", flush=True)
                r = run(name, n, server, rs.url, settings, Path(tmp), pages, kill_after=kill_after,
                        timeout=args.timeout)
                print(f"  [{name}] {r.items}/{r.pages} items, {r.duplicates} duplicates, {r.pages_per_s:.1f} pages/s",
                      flush=True)
                runs.append(r)
    print()
    print(table(runs))
    bad = [r.name for r in runs if r.items != r.pages or r.duplicates]
    print()
    print("every run exported every page once" if not bad else f"MISMATCH in {bad}")
    if args.json:
        args.json.write_text(json.dumps({"pages": pages, "cpus": os.cpu_count(), "settings": settings,
                                         "runs": [asdict(r) for r in runs]}, indent=2), encoding="utf-8")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
