"""Where the crawler process's CPU per page goes, with cleaning (``process`` executor) and without.

``crawl_throughput.py`` measures the crawler's CPU; this says where it goes. The same crawl
(its ``build_site``: 181 corpus pages × ``--copies`` URLs served by ``tests/httpserver.py``;
``scrapy crawl newsspider`` with this checkout first on ``PYTHONPATH``, the settings of each
run) runs under ``py-spy record --format raw --threads``: the crawler process only (no
``--subprocesses``), running threads only (no ``--idle``). Each stack (frames as
``path::function``, paths as py-spy shortens them) gets one category. Step 1: the first
rule that *any* frame matches, in this order:

| category | frames |
|---|---|
| imports (start-up) | ``<frozen importlib…>``, ``importlib/`` |
| extraction (inline) | ``scrapy_cepr/core/``, ``methods/``, ``worker.py``, ``api.py`` (pages cleaned \
before the pool is up) |
| pool start | multiprocessing popen/spawn/forkserver/resource_tracker/``Process.start``, \
``ProcessPoolExecutor`` creation, ``subprocess.Popen``, asyncio ``subprocess_exec``; scrapy_cepr ``start``, \
``_start*``, ``_launch*``, \
``_spawn*``, ``_add_worker*``, ``_make_pool``, ``_new_executor``, ``_await_ready`` |
| HtmlBytes | ``scrapy_cepr/transport.py`` ``HtmlBytes.*`` (``__new__`` in the middleware, ``__reduce__`` when \
pickled) |
| futures (asyncio) | a scrapy_cepr frame calling *directly* into asyncio futures, tasks, locks, timeouts, \
queues, events, base_events (``wait_for``, ``Semaphore``, ``create_future``, ``call_soon`` …); anywhere: the \
concurrent.futures → asyncio bridge (``_chain_future``, ``wrap_future``), the loop's self-pipe wake-ups |
| transport | ``concurrent/futures/``, ``multiprocessing/``, ``pickle``, ``copyreg``, asyncio \
``unix_events``, ``base_subprocess``, ``subprocess``, ``streams``; ``scrapy_cepr/executors.py``, \
``scrapy_cepr/*pool*``, ``*transport*`` |
| side channel (middleware) | ``scrapy_cepr/middlewares.py``, ``scrapy_cepr/pagestore.py`` |
| item handling (pipeline) | ``scrapy_cepr/pipelines.py`` (with the itemadapter and stats calls it makes) |
| cepr (other); feed export | other ``scrapy_cepr/``; scrapy feedexport, exporters, utils/serialize, \
``json/`` |

So pickling under concurrent.futures is transport; asyncio called by the executor is
futures, but its writes to a pipe transport are transport; all under the pool's start is
pool start. The middleware's ``process_spider_output`` (an async generator: the inner
middlewares and the spider run within its frame) counts only when it is the innermost
scrapy_cepr/scrapy/twisted/spider frame. Step 2, the crawl: the *innermost* frame matching
``Scrapy: download/HTTP`` (scrapy core/downloader, downloadermiddlewares; twisted web,
protocols, tcp), ``Scrapy: spider callback`` (``spiders/``, linkextractors), ``Scrapy:
engine, scraper, scheduler`` (scrapy core engine/scraper/scheduler/spidermw, pipelines,
extensions, spidermiddlewares, signals, stats; pydispatch) or ``event loop`` (asyncio,
selectors, Twisted's reactor), else ``other``; Twisted's ``defer.py`` matches none, so a
Deferred callback goes to whoever fired it.

**Counting.** py-spy counts a thread as running when its ``/proc`` state is R, which
includes *runnable, waiting for a core*: with 2 cores for the crawler, its workers, the
server and py-spy, samples overcount (a half-busy process next to 2 busy loops: 2.1 s
sampled for 1.35 s of CPU; here the run-queue wait, from ``/proc/…/schedstat``, is
shown). In py-spy's default (blocking) mode its stops make threads blocked in a wait look
running (py-spy's idle heuristic misses 3.11's qualified names): stacks whose leaf is
``threading`` ``*.wait``, ``selectors`` ``*.select`` or asyncio's ``_do_waitpid`` are
dropped. ``--nonblocking`` is not used: ~25 % of its samples fail, mostly in the crawl's
coroutine code rather than in the imports, which skews the shares. Each thread's samples
are then scaled to its CPU (psutil, per thread; ``--unscaled``: ``samples / rate × 1000 /
items``), so the table is CPU ms per exported item; below it, the unscaled total and the
crawler's CPU (psutil every 0.1 s, as ``crawl_throughput.py``). A second table gives each
thread's sampled and real CPU (the concurrent.futures pool adds a queue feeder and a
manager thread). CPU times vary by ±15-30 % between identical runs on a shared 2-core VM.

Usage::

    CEPR_BENCHMARK_DIR=/path/to/article-extraction-benchmark \\
        python3 benchmarks/crawler_cpu.py [--runs off,process] [--copies 12] [--rate 200] \\
        [--unscaled] [--json out.json] [--raw-dir DIR] [-s NAME=VALUE ...]

Needs Linux, py-spy on ``PATH`` (ptrace rights, e.g. root) and psutil (both in the ``bench`` extra).
About a minute for the two default runs (py-spy slows the crawl).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

import crawl_throughput as ct

from scrapy_cepr.evaluation import CORPUS_ENV

Rule = Callable[[list[str]], bool]


def _any(pattern: str) -> Rule:
    regex = re.compile(pattern)
    return lambda keys: any(regex.search(k) for k in keys)


_PASS_THROUGH = re.compile(r"^scrapy_cepr/[^:]*::[\w.]*process_spider_output$")
_OWNER = re.compile(r"^(scrapy_cepr|scrapy|twisted)/|(^|/)spiders/")
_FUTURES_ENTRY = re.compile(r"^asyncio/(futures|tasks|locks|timeouts|queues|events|base_events)\.py::")
_BRIDGE = _any(r"^asyncio/futures\.py::(_chain_future|_copy_future_state|wrap_future)|"
               r"^asyncio/selector_events\.py::.*(_write_to_self|_read_from_self)")
#: Step 1: (category, rule on the stack's ``path::function`` keys), first match wins.
PRIORITY: list[tuple[str, Rule]] = [
    ("imports (start-up)", _any(r"^(<frozen importlib|importlib/)")),
    ("extraction (inline)", _any(r"^scrapy_cepr/(core|methods)/|^scrapy_cepr/(worker|api)\.py::")),
    ("pool start", _any(r"^multiprocessing/(popen_\w+|spawn|forkserver|resource_tracker)\.py|"
                        r"^multiprocessing/process\.py::BaseProcess\.start$|^concurrent/futures/process\.py::"
                        r"ProcessPoolExecutor\.(__init__|_launch_processes|_spawn_process)$|"
                        r"^subprocess\.py::Popen\.(__init__|_execute_child)$|^asyncio/[\w/]+\.py::"
                        r".*(subprocess_exec|_make_subprocess_transport|\._start|_connect_pipes)$|"
                        r"^scrapy_cepr/[^:]*::([\w<>]+\.)*(start|_start\w*|_launch\w*|_spawn\w*|"
                        r"_add_worker\w*|_make_pool|_new_executor|_await_ready)$")),
    ("HtmlBytes", _any(r"^scrapy_cepr/transport\.py::HtmlBytes\.")),
    ("futures (asyncio)", lambda keys: _BRIDGE(keys) or any(
        a.startswith("scrapy_cepr/") and _FUTURES_ENTRY.match(b) for a, b in pairwise(keys))),
    ("transport", _any(r"^(concurrent/futures/|multiprocessing/|pickle\.py|copyreg\.py|_compat_pickle\.py)|"
                       r"^asyncio/(unix_events|base_subprocess|subprocess|streams)\.py|"
                       r"^scrapy_cepr/(executors(\.py|/)|[^:]*(pool|transport)[^:/]*\.py)")),
    ("side channel (middleware)", _any(r"^scrapy_cepr/(middlewares|pagestore)\.py")),
    ("item handling (pipeline)", _any(r"^scrapy_cepr/pipelines\.py")),
    ("cepr (other)", _any(r"^scrapy_cepr/")),
    ("feed export", _any(r"^scrapy/(extensions/feedexport|exporters|utils/serialize)\.py|^json/")),
]
#: Step 2: (category, regex on one frame key), tried from the innermost frame outwards.
CRAWL: list[tuple[str, re.Pattern[str]]] = [
    ("Scrapy: download/HTTP", re.compile(r"^scrapy/(core/downloader/|core/http2/|downloadermiddlewares/|"
                                         r"responsetypes\.py)|^twisted/(web|protocols)/|"
                                         r"^twisted/internet/(tcp|endpoints|ssl|_newtls)\.py|^h2/")),
    ("Scrapy: spider callback", re.compile(r"(^|/)spiders/|^scrapy/linkextractors/")),
    ("Scrapy: engine, scraper, scheduler", re.compile(
        r"^scrapy/core/(engine|scraper|scheduler|spidermw)\.py|"
        r"^scrapy/(pipelines|spidermiddlewares|extensions)/|"
        r"^scrapy/(pqueues|squeues|middleware|signalmanager|statscollectors|logformatter|dupefilters)\.py|"
        r"^scrapy/utils/(asyncio|defer|signal)\.py|^pydispatch/")),
    ("event loop (asyncio, reactor)", re.compile(r"^asyncio/|^selectors\.py|"
                                                 r"^twisted/internet/(asyncioreactor|base|posixbase)\.py")),
]
CATEGORIES = [c for c, _ in PRIORITY] + [c for c, _ in CRAWL] + ["other"]
IDLE = "(blocked in a wait: dropped)"
_IDLE = re.compile(r"^(threading\.py::([\w.]+\.)?wait|selectors\.py::([\w.]+\.)?select|"
                   r"asyncio/unix_events\.py::\w+\._do_waitpid)$")
_FRAME = re.compile(r"^(.*) \((.*?)(?::\d+)?\)$")
_THREAD = re.compile(r"^thread \((\d+)\)(?:: (.*))?$")


def frame_key(frame: str) -> str:
    """``"Task.__step (asyncio/tasks.py:269)"`` → ``"asyncio/tasks.py::Task.__step"``."""
    m = _FRAME.match(frame)
    return f"{m[2]}::{m[1]}" if m else frame


def classify(keys: list[str]) -> str:
    """The category of a stack of frame keys, outermost first (see the module docstring).

    >>> classify(["multiprocessing/queues.py::Queue._feed", "multiprocessing/reduction.py::dumps"])
    'transport'
    >>> classify(["scrapy_cepr/executors.py::_PoolExecutor.run", "asyncio/locks.py::Semaphore.acquire"])
    'futures (asyncio)'
    >>> classify(["scrapy_cepr/middlewares.py::M.process_spider_output", "scrapy/spidermiddlewares/x.py::f"])
    'Scrapy: engine, scraper, scheduler'
    """
    if keys and _IDLE.match(keys[-1]):
        return IDLE
    owner = max((i for i, k in enumerate(keys) if _OWNER.search(k)), default=-1)
    own = [k for i, k in enumerate(keys) if i >= owner or not _PASS_THROUGH.search(k)]
    category = next((c for c, rule in PRIORITY if rule(own)), None)
    return category or next((c for k in reversed(keys) for c, regex in CRAWL if regex.search(k)), "other")


@dataclass
class Profile:
    """One run: measurements (seconds) and samples per thread and category."""

    name: str
    settings: dict[str, str]
    items: int = 0
    elapsed: float = 0.0
    cpu_crawler: float = 0.0
    cpu_spy: float = 0.0
    spy_samples: str = ""  # py-spy's "Samples: N Errors: M"
    samples: dict[str, dict[str, int]] = field(default_factory=dict)  # thread -> category -> samples
    threads: dict[str, list[float]] = field(default_factory=dict)  # thread -> [CPU s, run-queue wait s]
    top_leaves: list[tuple[str, str, int]] = field(default_factory=list)  # (leaf frame, category, samples)

    def ms(self, seconds: float) -> float:
        return seconds * 1000 / max(self.items, 1)

    def categories(self, rate: int, scaled: bool) -> dict[str, float]:
        """CPU ms/page per category: samples / rate, or scaled per thread to its CPU."""
        out: Counter[str] = Counter()
        for thread, counts in self.samples.items():
            busy = sum(n for c, n in counts.items() if c != IDLE)
            factor = (self.threads[thread][0] or busy / rate) / max(busy, 1) if scaled else 1 / rate
            out.update({c: self.ms(n * factor) for c, n in counts.items() if c != IDLE or not scaled})
        return dict(out)


def read_samples(raw: Path, main_tid: int, threads: dict[int, list[float]], p: Profile) -> None:
    """Fill *p* from py-spy's raw output and the threads' ``{tid: [CPU s, run-queue wait s]}``."""
    counts: Counter[tuple[int, str]] = Counter()
    leaves: Counter[tuple[str, str]] = Counter()
    names: dict[int, str] = {}
    entries: dict[int, str] = {}  # tid -> the thread's first function outside threading.py
    for line in raw.read_text(encoding="utf-8").splitlines():
        stack, _, n = line.rpartition(" ")
        head, *frames = stack.split(";")
        m = _THREAD.match(head)
        tid = int(m[1]) if m else 0
        names[tid] = names.get(tid) or (m[2] if m else "") or ""
        keys = [frame_key(f) for f in frames]
        if entry := next((k for k in keys if not k.startswith("threading.py::")), None):
            entries.setdefault(tid, entry.split("::")[-1])
        category = classify(keys)
        counts[tid, category] += int(n)
        leaves[re.sub(r":\d+\)$", ")", frames[-1]) if frames else head, category] += int(n)
    for tid in names.keys() | threads.keys():
        name = names.get(tid)
        if tid == main_tid:
            label = "MainThread"
        elif name is None:
            label = "never sampled (native threads, e.g. OpenBLAS's)"
        elif not name or re.fullmatch(r"Thread-\d+( \(.*\))?", name):  # unnamed: by its function
            label = entries.get(tid, name or "unnamed")
        else:
            label = re.sub(r"-\d+$", "", name)
        row, totals = p.samples.setdefault(label, {}), p.threads.setdefault(label, [0.0, 0.0])
        for category, n in ((c, n) for (t, c), n in counts.items() if t == tid):
            row[category] = row.get(category, 0) + n
        totals[:] = [a + b for a, b in zip(totals, threads.get(tid, [0.0, 0.0]))]
    p.top_leaves = [(leaf, category, n) for (leaf, category), n in leaves.most_common(30)]


def profile_run(name: str, server: ct.PageServer, extra: dict[str, str], workdir: Path, rate: int) -> Profile:
    """One ``scrapy crawl newsspider`` under ``py-spy record``, measured and classified."""
    spy_exe = shutil.which("py-spy")
    if spy_exe is None:
        raise RuntimeError("py-spy is not on PATH (pip install py-spy)")
    p = Profile(name, {**ct.BASE_SETTINGS, **ct.RUNS[name], **extra})
    out, raw, spy_log = (workdir / f"{name}.{ext}" for ext in ("jsonl", "txt", "py-spy.log"))
    cmd = [spy_exe, "record", "--rate", str(rate), "--format", "raw", "--threads", "-o", str(raw), "--",
           sys.executable, "-m", "scrapy", "crawl", "newsspider", "-a", f"start_urls={server.url}/",
           "-O", str(out)]
    cmd += [arg for key, value in p.settings.items() for arg in ("-s", f"{key}={value}")]
    # Crawl with the scrapy_cepr of this checkout, whatever an editable install points to.
    path = os.pathsep.join(filter(None, [str(ct.ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    threads: dict[int, list[float]] = {}
    with spy_log.open("w", encoding="utf-8") as spy_out:  # py-spy reports on stdout, the crawl logs on stderr
        proc = subprocess.Popen(cmd, cwd=ct.PROJECT, env=env, stdout=spy_out, stderr=subprocess.PIPE,
                                text=True)
        reader = ct._StderrReader(proc.stderr)
        reader.start()
        spy, crawler = psutil.Process(proc.pid), None
        while proc.poll() is None:
            try:
                p.cpu_spy = sum(spy.cpu_times()[:2])
                if crawler is None:  # py-spy's child (through any exec'ing shim): the python running scrapy
                    crawler = next((c for c in spy.children(True) if "scrapy" in " ".join(c.cmdline())), None)
                if crawler is not None:
                    p.cpu_crawler = sum(crawler.cpu_times()[:2])
                    for th in crawler.threads():
                        with open(f"/proc/{crawler.pid}/task/{th.id}/schedstat", encoding="ascii") as f:
                            threads[th.id] = [th.user_time + th.system_time, int(f.read().split()[1]) / 1e9]
            except (psutil.NoSuchProcess, FileNotFoundError, ProcessLookupError):
                pass  # the crawler has exited (its last readings are kept); py-spy is writing its output
            time.sleep(0.1)
    reader.join()
    log, spy_text = "".join(reader.lines), spy_log.read_text(encoding="utf-8")
    if proc.returncode != 0 or crawler is None or not raw.exists():
        raise RuntimeError(f"{name}: py-spy exited with {proc.returncode}:\n{spy_text[-2000:]}\n"
                           f"{log[-3000:]}")
    p.elapsed = float(ct.parse_stats_dump(log)["elapsed_time_seconds"])
    p.items = len(out.read_text(encoding="utf-8").splitlines())
    p.spy_samples = m[0] if (m := re.search(r"Samples: \d+ Errors: \d+", spy_text)) else "?"
    read_samples(raw, crawler.pid, threads, p)
    return p


def markdown(profiles: list[Profile], rate: int, scaled: bool) -> str:
    """The category table (and "run − off" per other run), then the thread table."""
    off = next((p for p in profiles if p.name == "off"), None)
    others = [p for p in profiles if off is not None and p is not off]

    def row(label: str, values: list[float], fmt: str = "{:.2f}") -> str:
        base = values[profiles.index(off)] if off else 0.0
        diffs = [v - base for p, v in zip(profiles, values) if p in others]
        return f"| {label} | " + " | ".join(fmt.format(v) for v in values + diffs) + " |"

    unit = "CPU ms/page" + (" (samples scaled to thread CPU)" if scaled else " (samples / rate)")
    names = [p.name for p in profiles]
    lines = [f"| {unit} | " + " | ".join(names + [f"{p.name} − off" for p in others]) + " |",
             "|---" * (len(profiles) + len(others) + 1) + "|"]
    ms, raw = [p.categories(rate, scaled) for p in profiles], [p.categories(rate, False) for p in profiles]
    unscaled = [sum(v for c, v in r.items() if c != IDLE) for r in raw]
    lines += [row(c, [m.get(c, 0.0) for m in ms]) for c in CATEGORIES if any(m.get(c) for m in ms)]
    lines += [row("**total**", [sum(v for c, v in m.items() if c != IDLE) for m in ms]),
              row("unscaled total (samples / rate)", unscaled),
              row(f"unscaled {IDLE}", [r.get(IDLE, 0.0) for r in raw]),
              row("**crawler CPU (psutil)**", [p.ms(p.cpu_crawler) for p in profiles]),
              row("run-queue wait (schedstat)", [p.ms(sum(t[1] for t in p.threads.values()))
                                                 for p in profiles]),
              row("unscaled total / CPU", [u / max(p.ms(p.cpu_crawler), 1e-9)
                                           for p, u in zip(profiles, unscaled)], "{:.0%}"),
              "| items; elapsed s; py-spy; its CPU s | " + " | ".join(
                  f"{p.items}; {p.elapsed:.1f}; {p.spy_samples}; {p.cpu_spy:.1f}" for p in profiles) + " |",
              "", "| thread: ms/page sampled / CPU / run-queue wait | " + " | ".join(names) + " |",
              "|---" * (len(profiles) + 1) + "|"]
    for t in sorted({t for p in profiles for t in p.samples}, key=lambda t: (t != "MainThread", t)):
        lines.append(f"| {t} | " + " | ".join(
            f"{p.ms(sum(n for c, n in p.samples[t].items() if c != IDLE) / rate):.2f} / "
            f"{p.ms(p.threads[t][0]):.2f} / {p.ms(p.threads[t][1]):.2f}" if t in p.samples else "–"
            for p in profiles) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=os.environ.get(CORPUS_ENV),
                        help=f"corpus directory (default ${CORPUS_ENV})")
    parser.add_argument("--copies", type=int, default=12, help="URLs per page (default 12: 2,172 pages)")
    parser.add_argument("--runs", default="off,process", help="comma-separated: off, inline, thread, process")
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second (default 200)")
    parser.add_argument("--unscaled", action="store_true", help="print samples / rate, unscaled")
    parser.add_argument("--json", type=Path, help="write all measurements to this JSON file")
    parser.add_argument("--raw-dir", type=Path, help="keep py-spy's raw (collapsed-stack) files here")
    parser.add_argument("-s", dest="settings", action="append", default=[], metavar="NAME=VALUE",
                        help="extra Scrapy setting for every run (repeatable)")
    args = parser.parse_args(argv)
    if not args.corpus:
        parser.error(f"give --corpus or set {CORPUS_ENV}")
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    if unknown := [r for r in runs if r not in ct.RUNS or r == "fault"]:
        parser.error(f"unknown runs {unknown}; known: off, inline, thread, process")
    extra = dict(s.split("=", 1) for s in args.settings)
    pages = ct.build_site(Path(args.corpus), args.copies)
    print(f"serving {len(pages) - 1} pages; py-spy at {args.rate} Hz; {os.cpu_count()} CPUs", flush=True)
    profiles: list[Profile] = []
    with ct.PageServer(pages) as server, tempfile.TemporaryDirectory() as tmp:
        workdir = args.raw_dir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for name in runs:
            print(f"run {name} …", flush=True)
            profiles.append(p := profile_run(name, server, extra, workdir, args.rate))
            print(f"  [{name}] {p.items} items in {p.elapsed:.1f} s; crawler CPU {p.cpu_crawler:.1f} s",
                  flush=True)
    print()
    print(markdown(profiles, args.rate, scaled=not args.unscaled))
    if args.json:
        out = [{**asdict(p), "ms_per_page": p.categories(args.rate, True),
                "ms_per_page_unscaled": p.categories(args.rate, False)} for p in profiles]
        args.json.write_text(json.dumps({"pages": len(pages) - 1, "rate": args.rate, "runs": out}, indent=2),
                             encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
