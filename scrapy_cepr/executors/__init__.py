"""Where the extraction runs during a crawl: in the reactor thread, a thread pool or a
process pool (setting ``CEPR_EXECUTOR``).

* ``inline`` (:class:`InlineExecutor`): in the reactor thread. No start-up, no copying,
  but the crawl (downloads, callbacks) is stalled while a page is extracted, and
  ``CEPR_TIMEOUT`` cannot interrupt a page (a slow page is only logged).
* ``thread`` (:class:`ThreadExecutor`): a :class:`~concurrent.futures.ThreadPoolExecutor`.
  The reactor stays responsive, but the extraction holds the GIL most of the time
  (Python and small numpy operations), so it competes with the crawl for one core.
* ``process`` (the default): worker processes. On POSIX, :class:`ProcessExecutor`: fresh
  interpreters fed over pipes by the event loop itself (frames of
  :mod:`scrapy_cepr.transport`; no helper thread, the page's bytes written to the pipe
  as they are). Elsewhere (Windows, whose selector event loop has no subprocess pipes),
  :class:`PoolProcessExecutor`: a :class:`~concurrent.futures.ProcessPoolExecutor`
  started with ``spawn`` or ``forkserver`` (``CEPR_START_METHOD``; never ``fork``:
  forking a running reactor with its threads and sockets is unsafe). Extraction runs on
  the other cores; only the page's bytes and encoding go to the worker and the title
  and body come back.

Why ``process`` is the default (``benchmarks/crawl_throughput.py``; figures in
``docs/measurements.md``, "Crawl throughput" and "Executors"): it is the fastest
(inline and thread stall the crawl: the extraction holds the GIL), the only executor
that keeps the reactor free (inline stalls the crawl for a whole extraction), where
``CEPR_TIMEOUT`` really stops a runaway page, and where a crashing page cannot take the
crawl down. It is bound by CPU: the workers' extraction plus the crawler's own work.

**The crawler's CPU** is the ceiling of one crawler process (one thread runs its
engine), so the pipe transport keeps the crawler's share of each page small: per page
it pickles a few hundred bytes of metadata, makes two ``write`` calls, and reads back
a pickled title and body, all in the event loop. The concurrent.futures pool it
replaced pickled the page into a call item, moved it through two helper threads (the
queue feeder and the executor manager, each taking the GIL) and woke the loop through
``call_soon_threadsafe``: ``benchmarks/pool_overhead.py`` measures both transports
alone, ``benchmarks/crawler_cpu.py`` where a real crawl's CPU goes.

**Lazy start** (:class:`LazyPoolExecutor`, what the pipeline uses for ``thread`` and
``process``): starting process workers costs seconds of CPU (interpreter start, imports),
more than a small crawl spends extracting. So pages are first cleaned inline; once they
have taken ``CEPR_POOL_AFTER_SECONDS`` (default 1 s) the pool
is started in the background, and pages go to it as soon as its workers are up. A crawl
of a few dozen pages (and ``scrapy shell``) never starts a worker and runs at the inline
speed; a long crawl gets the pool after about a second. The inline pages cannot be
interrupted by ``CEPR_TIMEOUT`` (a slow one is logged), so the inline phase is bounded:
it takes only pages up to :data:`INLINE_MAX_BYTES` (a larger page starts the pool and
waits for it), whose worst case under the parse bounds of
:func:`scrapy_cepr.core.parse.check_bounds` is given in ``docs/parsing.md``, and none at all when
``CEPR_TIMEOUT`` is below :data:`INLINE_WORST_SECONDS`; ``CEPR_POOL_AFTER_SECONDS=0``
starts the pool when the spider opens, so that every page has the timeout.

Common rules of the pools:

* at most ``IN_FLIGHT_PER_WORKER × max_workers`` (2 × ``max_workers``) pages are
  submitted at once (an :class:`asyncio.Semaphore`): each worker has one page running
  and one waiting, so it starts its next page as soon as it finishes one instead of
  idling while the result travels back and the crawler submits the next page. The workers
  are warmed up (started, the method imported and run once) before their first page,
  and again after a restart, outside the timeout;
* ``timeout`` counts from the page's submission, so it includes the page's wait behind
  the page ahead of it. A page that takes longer raises
  :class:`ExtractionTimeout` (only that page fails);
* every restart calls ``on_restart(reason)`` (the pipeline counts
  ``cepr/worker_restarts``).

What a timeout or a dead worker costs differs. :class:`ProcessExecutor` knows which
page each worker runs (a worker answers in order): a timed-out page's worker is killed
and replaced, a dead worker fails only the page it was running (:class:`WorkerDied`),
and the page queued behind either is sent again, once, with a fresh timeout; the other
workers go on. The concurrent.futures pools (:class:`ThreadExecutor`,
:class:`PoolProcessExecutor`) cannot tell: after a timeout the whole pool is
**recycled** (new pages go to a fresh pool; the old one finishes its pages in flight
and is shut down: process workers are terminated, which stops the runaway page; threads
cannot be killed and finish on their own; a page that times out on a pool already
recycled because of another page gets one more try on the fresh pool), and a dead
process worker breaks its pool
(:class:`~concurrent.futures.process.BrokenProcessPool`): every page in flight on it
(up to 2 × ``max_workers``) raises :class:`WorkerDied`, the pool is re-created.

At the end of the crawl :meth:`Executor.aclose` closes the process workers' input and
lets them exit on their own (their clean-up runs: a browser a ``wang2009`` worker
started is closed) before stopping the rest. Workers are fresh interpreters importing
only :mod:`scrapy_cepr.worker` and the extraction core, never the crawler's main
script, so a script that runs the crawl itself needs no ``if __name__ ==
"__main__":`` guard on POSIX (the fallback pool's ``spawn`` still does).

The awaiting uses asyncio: the pools need Scrapy's default asyncio reactor; ``inline``
works with any reactor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..exceptions import ExtractionTimeout, WorkerDied
from ..options import ExtractOptions
from ..transport import PIPE_WORKERS
from ..worker import extract_page
from .base import (
    IN_FLIGHT_PER_WORKER,
    WARM_UP_TIMEOUT,
    Executor,
    InlineExecutor,
    Overrides,
    Worker,
    _WorkersExecutor,
)
from .lazy import INLINE_MAX_BYTES, INLINE_WORST_SECONDS, LazyPoolExecutor
from .pipes import EXIT_GRACE, PIPE_BYTES, ProcessExecutor
from .pools import PoolProcessExecutor, ThreadExecutor

__all__ = [
    "EXIT_GRACE",
    "INLINE_MAX_BYTES",
    "INLINE_WORST_SECONDS",
    "IN_FLIGHT_PER_WORKER",
    "PIPE_BYTES",
    "PIPE_WORKERS",
    "WARM_UP_TIMEOUT",
    "Executor",
    "ExtractionTimeout",
    "InlineExecutor",
    "LazyPoolExecutor",
    "Overrides",
    "PoolProcessExecutor",
    "ProcessExecutor",
    "ThreadExecutor",
    "Worker",
    "WorkerDied",
    "make_executor",
]


def make_executor(name: str, *, max_workers: int = 1, timeout: float = 30.0, options: ExtractOptions | None = None,
                  start_method: str = "spawn", worker: Worker = extract_page,
                  on_restart: Callable[[str], None] | None = None,
                  pool_after_seconds: float | None = None) -> Executor:
    """The executor called *name* (``"inline"``, ``"thread"`` or ``"process"``).

    :param options: what the workers do with every page (default
        ``ExtractOptions()``: CEPR-Article, text only), sent to each worker once.
    :param worker: the function run per page (default
        :func:`scrapy_cepr.worker.extract_page`); for ``process`` it must be picklable
        (a module-level function).
    :param pool_after_seconds: None: the pool itself (started by ``start()``); a number:
        the pool wrapped in a :class:`LazyPoolExecutor` started after that many seconds
        of inline extraction.
    :raises ValueError: unknown *name*, ``max_workers < 1``, bad *start_method*.

    >>> make_executor("inline").name
    'inline'
    >>> type(make_executor("process", pool_after_seconds=1.0)).__name__
    'LazyPoolExecutor'
    """
    if name == "inline":
        return InlineExecutor(timeout=timeout, worker=worker, on_restart=on_restart, options=options)
    common: dict[str, Any] = {"max_workers": max_workers, "timeout": timeout, "worker": worker, "on_restart": on_restart,
                              "options": options}
    pool: _WorkersExecutor
    if name == "thread":
        pool = ThreadExecutor(**common)
    elif name == "process" and PIPE_WORKERS:
        if start_method not in ("spawn", "forkserver"):
            raise ValueError(f"start_method must be 'spawn' or 'forkserver', got {start_method!r}")
        pool = ProcessExecutor(**common)
    elif name == "process":
        pool = PoolProcessExecutor(start_method=start_method, **common)
    else:
        raise ValueError(f"executor must be one of inline, thread, process; got {name!r}")
    return pool if pool_after_seconds is None else LazyPoolExecutor(pool, after_seconds=pool_after_seconds)
