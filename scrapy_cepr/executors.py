"""Where the extraction runs during a crawl: in the reactor thread, a thread pool or a
process pool (setting ``CEPR_EXECUTOR``).

* ``inline`` (:class:`InlineExecutor`): in the reactor thread. No start-up, no copying,
  but the crawl (downloads, callbacks) is stalled while a page is extracted, and
  ``CEPR_TIMEOUT`` cannot interrupt a page (a slow page is only logged).
* ``thread`` (:class:`ThreadExecutor`): a :class:`~concurrent.futures.ThreadPoolExecutor`.
  The reactor stays responsive, but the extraction holds the GIL most of the time
  (Python and small numpy operations), so it competes with the crawl for one core.
* ``process`` (:class:`ProcessExecutor`, the default): a
  :class:`~concurrent.futures.ProcessPoolExecutor` started with ``spawn`` or
  ``forkserver`` (never ``fork``: forking a running reactor with its threads and
  sockets is unsafe). Extraction runs on the other cores; only the page's bytes and
  encoding go to the worker and the title and body come back.

Why ``process`` is the default (``benchmarks/crawl_throughput.py``: the example
project's spider crawling the 181 pages of the article-extraction benchmark under 2,172
URLs from a local server, CEPR-SETPR, 2 cores; single runs vary by ±15 %): it is the
fastest, 1.36–1.60× inline over three runs (process 112–130 pages/s, inline 74–90,
thread no faster than inline: the GIL), and the only executor that keeps the reactor
free (inline stalls the crawl for a whole extraction, about 7 ms on average and far
more on big pages), where ``CEPR_TIMEOUT`` really stops a runaway page, and where a
crashing page cannot take the crawl down. On 2 cores the process pool is bound by CPU:
the workers' (about 8.7 ms per page) plus the crawler's own (about 4.2 ms without
cleaning, + about 2.3 ms for the pipeline, pickling and the pool's threads). Its costs:
1–3 s to start the workers when the spider opens (outside Scrapy's
``elapsed_time_seconds``), and a script that starts the crawl itself must be guarded
by ``if __name__ == "__main__":`` (spawned workers import the main module; ``scrapy
crawl`` needs nothing).

Common rules of the two pools:

* at most ``IN_FLIGHT_PER_WORKER × max_workers`` (2 × ``max_workers``) pages are
  submitted at once (an :class:`asyncio.Semaphore`): each worker has one page running
  and one waiting, so it starts its next page as soon as it finishes one instead of
  idling while the result travels back and the crawler submits the next page (with one
  page per worker, process workers were idle about a third of the time). The pool is
  warmed up (workers started, the method imported) before the first page, and again
  after a restart, outside the timeout;
* ``timeout`` counts from the page's submission to the pool, so it includes the page's
  wait behind the page ahead of it (one page per worker: on the benchmark pages a few
  ms; the default 30 s is three orders of magnitude above a normal page). A page that
  takes longer raises :class:`ExtractionTimeout` (only that page fails). Its worker is
  still busy, so the pool is **recycled**: new pages go to a fresh pool; the old pool
  finishes its other pages in flight and is then shut down — a process pool's workers
  are terminated (which stops the runaway page), a thread pool's threads cannot be
  killed and finish on their own. A page that times out on a pool already recycled
  because of *another* page (it was waiting behind the runaway page) is not failed:
  it gets one more try, with a fresh timeout, on the fresh pool;
* a worker process that dies (killed by the OS, out of memory) breaks its pool
  (:class:`~concurrent.futures.process.BrokenProcessPool`): the pages in flight on that
  pool (up to 2 × ``max_workers``: the pool cannot tell which page its dead worker
  was running) raise :class:`WorkerDied`, the pool is re-created, the crawl goes on;
* every restart calls ``on_restart(reason)`` (the pipeline counts
  ``cepr/worker_restarts``).

The awaiting uses asyncio (:func:`asyncio.wrap_future`, :func:`asyncio.wait_for`):
the pools need Scrapy's default asyncio reactor; ``inline`` works with any reactor.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
from collections.abc import Callable
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .worker import extract_page, init_process_worker, ping, warm_up

__all__ = [
    "Executor",
    "ExtractionTimeout",
    "InlineExecutor",
    "ProcessExecutor",
    "ThreadExecutor",
    "WorkerDied",
    "make_executor",
]

logger = logging.getLogger(__name__)

#: The worker function type: ``(html, url, method, params) -> (result dict, seconds)``.
Worker = Callable[[Any, Any, str, dict], tuple[dict, float]]

#: Seconds allowed for a pool's warm-up (starting workers, importing the method).
WARM_UP_TIMEOUT = 120.0

#: Pages submitted at once per pool worker: one running, one waiting (see the module
#: docstring). Measured on 2 cores, benchmarks/crawl_throughput.py: see the README.
IN_FLIGHT_PER_WORKER = 2


class ExtractionTimeout(Exception):
    """A page took longer than ``CEPR_TIMEOUT`` seconds and was abandoned."""


class WorkerDied(Exception):
    """The worker process running the page died (the pool broke); the page was lost."""


class _Collateral(Exception):
    """A page timed out on a pool that another page's timeout had already recycled."""


class Executor:
    """Runs :func:`scrapy_cepr.worker.extract_page` (or another *worker* with its
    signature) for the pipeline.

    Life cycle: ``await start()`` when the spider opens, ``await run(...)`` per page,
    ``shutdown()`` when it closes.
    """

    name = "base"

    def __init__(self, *, timeout: float = 30.0, worker: Worker = extract_page,
                 on_restart: Callable[[str], None] | None = None) -> None:
        self.timeout = timeout
        self.worker = worker
        self.on_restart = on_restart

    async def start(self) -> None:
        """Start the workers (no-op for ``inline``)."""

    async def run(self, html: str | bytes, url: str | None, method: str, params: dict[str, Any]) -> tuple[dict, float]:
        """Extract one page: ``(Extraction.to_dict(), seconds in the worker)``.

        :raises ExtractionTimeout: (pools) the page took longer than ``timeout``.
        :raises WorkerDied: (process pool) the worker process died.
        :raises Exception: whatever the worker raised (e.g. ``NotHTMLError``).
        """
        raise NotImplementedError

    def shutdown(self) -> None:
        """Stop the workers; idempotent."""


class InlineExecutor(Executor):
    """Extraction in the calling (reactor) thread. The timeout cannot interrupt it; a
    page slower than ``timeout`` is logged as a warning."""

    name = "inline"

    def __init__(self, *, method: str = "setpr", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.method = method

    async def start(self) -> None:
        """Run the method once on a tiny page (:func:`scrapy_cepr.worker.warm_up`)."""
        warm_up(self.method)

    async def run(self, html: str | bytes, url: str | None, method: str, params: dict[str, Any]) -> tuple[dict, float]:
        result, seconds = self.worker(html, url, method, params)
        if seconds > self.timeout:
            logger.warning("Extraction of %s took %.1f s (> CEPR_TIMEOUT=%g s); the inline executor "
                           "cannot interrupt a page, use CEPR_EXECUTOR='process'", url, seconds, self.timeout)
        return result, seconds


@dataclass(eq=False)
class _Pool:
    """One concurrent.futures pool and its bookkeeping."""

    executor: concurrent.futures.Executor
    generation: int
    inflight: int = 0  # pages submitted and not yet finished or abandoned
    stuck: int = 0  # pages abandoned after a timeout, possibly still running
    retired: bool = False
    disposed: bool = False
    ready: asyncio.Future | None = field(default=None, repr=False)


class _PoolExecutor(Executor):
    """Shared logic of the thread and process pools (see the module docstring)."""

    def __init__(self, *, max_workers: int = 1, timeout: float = 30.0, worker: Worker = extract_page,
                 on_restart: Callable[[str], None] | None = None, method: str = "setpr") -> None:
        super().__init__(timeout=timeout, worker=worker, on_restart=on_restart)
        if max_workers < 1:
            raise ValueError(f"max_workers must be an int >= 1, got {max_workers!r}")
        self.max_workers = max_workers
        self.method = method
        self.restarts = 0
        self._pool: _Pool | None = None
        self._retired: list[_Pool] = []
        self._slots: asyncio.Semaphore | None = None
        self._generation = 0

    # -- to override -------------------------------------------------------------------
    def _new_executor(self) -> concurrent.futures.Executor:
        raise NotImplementedError

    def _dispose_executor(self, pool: _Pool) -> None:
        pool.executor.shutdown(wait=False, cancel_futures=True)

    def _warm_up_task(self) -> Callable[[], int]:
        return partial(warm_up, self.method)

    # -- life cycle --------------------------------------------------------------------
    async def start(self) -> None:
        """Create the pool and wait until its workers are up.

        :raises WorkerDied: the workers could not start.
        """
        if self._pool is not None:
            return
        self._slots = asyncio.Semaphore(IN_FLIGHT_PER_WORKER * self.max_workers)
        self._pool = self._make_pool()
        try:
            await self._await_ready(self._pool)
        except WorkerDied:
            self.shutdown()
            raise

    def _make_pool(self) -> _Pool:
        self._generation += 1
        pool = _Pool(self._new_executor(), self._generation)
        futures = [asyncio.wrap_future(pool.executor.submit(self._warm_up_task())) for _ in range(self.max_workers)]
        pool.ready = asyncio.ensure_future(asyncio.wait_for(asyncio.gather(*futures), WARM_UP_TIMEOUT))
        # A pool may be retired before anyone awaits its warm-up: retrieve the outcome so
        # that asyncio does not log "exception was never retrieved".
        pool.ready.add_done_callback(lambda f: f.cancelled() or f.exception())
        return pool

    async def _await_ready(self, pool: _Pool) -> None:
        assert pool.ready is not None
        try:
            await asyncio.shield(pool.ready)
        except (BrokenExecutor, asyncio.TimeoutError, RuntimeError) as exc:  # noqa: UP041 - distinct on 3.10
            self._retire(pool, f"warm-up failed: {exc!r}")
            raise WorkerDied(
                f"the {self.name} pool could not start its workers ({exc!r}); if the crawl is started by a "
                "script, guard it with `if __name__ == '__main__':` (spawned workers import the main module)"
            ) from exc

    def shutdown(self) -> None:
        """Shut every pool down: an idle pool waits for its workers to exit; a pool with
        pages in flight or abandoned (timed-out) pages is stopped at once."""
        pools = [p for p in (self._pool, *self._retired) if p is not None]
        self._pool = None
        self._retired = []
        for pool in pools:
            if pool.ready is not None and not pool.ready.done():
                pool.ready.cancel()
            if not pool.disposed:
                if pool.inflight or pool.stuck:
                    self._dispose(pool)
                else:
                    pool.disposed = True
                    pool.executor.shutdown(wait=True, cancel_futures=True)

    # -- work --------------------------------------------------------------------------
    async def run(self, html: str | bytes, url: str | None, method: str, params: dict[str, Any]) -> tuple[dict, float]:
        if self._slots is None:
            raise RuntimeError(f"the {self.name} executor is not started (call start() first)")
        async with self._slots:
            try:
                return await self._run_once(html, url, method, params)
            except _Collateral:  # waited behind another page's runaway: one more try
                logger.info("Retrying %s on the fresh %s pool (it waited behind a page that timed out)",
                            url, self.name)
                return await self._run_once(html, url, method, params, last_try=True)

    async def _run_once(self, html: str | bytes, url: str | None, method: str, params: dict[str, Any],
                        last_try: bool = False) -> tuple[dict, float]:
        pool = await self._current_pool()
        try:
            future = pool.executor.submit(self.worker, html, url, method, params)
        except (BrokenExecutor, RuntimeError):
            # The pool broke (or was shut down) before this page was sent: it was
            # not in flight, so it gets one try on a fresh pool.
            self._retire(pool, "pool found broken at submission")
            pool = await self._current_pool()
            future = pool.executor.submit(self.worker, html, url, method, params)
        pool.inflight += 1
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.timeout)
        except asyncio.TimeoutError:  # noqa: UP041 - distinct from TimeoutError on Python 3.10
            future.cancel()  # still queued (thread pool): never run it
            if pool.retired and not last_try:
                raise _Collateral from None
            pool.stuck += 1
            self._retire(pool, f"a page timed out ({url})")
            raise ExtractionTimeout(f"timed out after {self.timeout:g} s") from None
        except BrokenExecutor as exc:
            self._retire(pool, f"a worker died ({url})")
            raise WorkerDied(f"worker died: {exc}") from None
        finally:
            pool.inflight -= 1
            if pool.retired and pool.inflight == 0:
                self._dispose(pool)

    async def _current_pool(self) -> _Pool:
        while True:
            if self._pool is None:
                raise RuntimeError(f"the {self.name} executor is shut down")
            pool = self._pool
            ready = pool.ready
            if ready is not None and ready.done() and not ready.cancelled() and ready.exception() is None:
                return pool  # the common case: no await, no shield
            await self._await_ready(pool)
            if pool is self._pool:
                return pool

    def _retire(self, pool: _Pool, reason: str) -> None:
        """Replace *pool* by a fresh one (once) and dispose of it when idle."""
        if pool.retired:
            return
        pool.retired = True
        if pool is self._pool:
            self.restarts += 1
            logger.warning("Restarting the %s pool (generation %d): %s", self.name, pool.generation, reason)
            self._pool = self._make_pool()
            if self.on_restart is not None:
                self.on_restart(reason)
        self._retired.append(pool)
        if pool.inflight == 0:
            self._dispose(pool)

    def _dispose(self, pool: _Pool) -> None:
        if pool.disposed:
            return
        pool.disposed = True
        if pool in self._retired:
            self._retired.remove(pool)
        try:
            self._dispose_executor(pool)
        except Exception:  # pragma: no cover - best effort on a broken pool
            logger.exception("Error while stopping a %s pool", self.name)


class ThreadExecutor(_PoolExecutor):
    """A thread pool of ``max_workers`` threads. A timed-out page's thread cannot be
    killed: it is abandoned (its result dropped) and finishes on its own."""

    name = "thread"

    def _new_executor(self) -> concurrent.futures.Executor:
        return concurrent.futures.ThreadPoolExecutor(self.max_workers, thread_name_prefix="cepr")


class ProcessExecutor(_PoolExecutor):
    """A process pool of ``max_workers`` processes started with *start_method*
    (``"spawn"`` or ``"forkserver"``; ``"fork"`` is refused). Workers ignore SIGINT and
    import the method at start (:func:`scrapy_cepr.worker.init_process_worker`).

    :raises ValueError: *start_method* is ``"fork"`` or unknown.
    """

    name = "process"

    def __init__(self, *, start_method: str = "spawn", **kwargs: Any) -> None:
        if start_method not in ("spawn", "forkserver"):
            raise ValueError(f"start_method must be 'spawn' or 'forkserver', got {start_method!r}")
        super().__init__(**kwargs)
        self.start_method = start_method

    def _warm_up_task(self) -> Callable[[], int]:
        return ping  # the initializer already warmed the worker up

    def _new_executor(self) -> concurrent.futures.Executor:
        return concurrent.futures.ProcessPoolExecutor(
            self.max_workers,
            mp_context=multiprocessing.get_context(self.start_method),
            initializer=init_process_worker,
            initargs=(self.method,),
        )

    def _dispose_executor(self, pool: _Pool) -> None:
        executor = pool.executor
        terminate = getattr(executor, "terminate_workers", None)  # Python >= 3.14
        if terminate is not None:
            terminate()
            return
        # Python < 3.14 has no public way to stop a busy worker: terminate the processes
        # the pool owns (its private ``_processes`` map), then let it shut down.
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()


def make_executor(name: str, *, max_workers: int = 1, timeout: float = 30.0, method: str = "setpr",
                  start_method: str = "spawn", worker: Worker = extract_page,
                  on_restart: Callable[[str], None] | None = None) -> Executor:
    """The executor called *name* (``"inline"``, ``"thread"`` or ``"process"``).

    :param worker: the function run per page (default
        :func:`scrapy_cepr.worker.extract_page`); for ``process`` it must be picklable
        (a module-level function).
    :raises ValueError: unknown *name*, ``max_workers < 1``, bad *start_method*.

    >>> make_executor("inline").name
    'inline'
    """
    if name == "inline":
        return InlineExecutor(timeout=timeout, worker=worker, on_restart=on_restart, method=method)
    common: dict[str, Any] = {"max_workers": max_workers, "timeout": timeout, "worker": worker, "on_restart": on_restart,
                              "method": method}
    if name == "thread":
        return ThreadExecutor(**common)
    if name == "process":
        return ProcessExecutor(start_method=start_method, **common)
    raise ValueError(f"executor must be one of inline, thread, process; got {name!r}")

