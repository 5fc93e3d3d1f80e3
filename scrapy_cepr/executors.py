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

Why ``process`` is the default (``benchmarks/crawl_throughput.py``: the example
project's spider crawling the 181 pages of the article-extraction benchmark under 2,172
URLs from a local server, 2 cores; single runs vary by ±15 %): it is the fastest
(inline and thread stall the crawl: the extraction holds the GIL), the only executor
that keeps the reactor free (inline stalls the crawl for a whole extraction, about 7 ms
on average and far more on big pages), where ``CEPR_TIMEOUT`` really stops a runaway
page, and where a crashing page cannot take the crawl down. On 2 cores it is bound by
CPU: the workers' extraction plus the crawler's own work (see the README's crawl
throughput section for the measured split).

**The crawler's CPU** is the ceiling of one crawler process (one thread runs its
engine), so the pipe transport keeps the crawler's share of each page small: per page
it pickles a few hundred bytes of metadata, makes two ``write`` calls, and reads back
a pickled title and body, all in the event loop. The concurrent.futures pool it
replaced pickled the page into a call item, moved it through two helper threads (the
queue feeder and the executor manager, each taking the GIL) and woke the loop through
``call_soon_threadsafe``: ``benchmarks/pool_overhead.py`` measures both transports
alone, ``benchmarks/crawler_cpu.py`` where a real crawl's CPU goes.

**Lazy start** (:class:`LazyPoolExecutor`, what the pipeline uses for ``thread`` and
``process``): starting process workers costs 1–3 s of CPU (interpreter start, imports),
more than a small crawl spends extracting. So pages are first cleaned inline; once they
have taken ``CEPR_POOL_AFTER_SECONDS`` (default 1 s, about 150 pages of 7 ms) the pool
is started in the background, and pages go to it as soon as its workers are up. A crawl
of a few dozen pages (and ``scrapy shell``) never starts a worker and runs at the inline
speed; a long crawl gets the pool after about a second. The inline pages cannot be
interrupted by ``CEPR_TIMEOUT`` (a slow one is logged), so the inline phase is bounded:
it takes only pages up to :data:`INLINE_MAX_BYTES` (a larger page starts the pool and
waits for it), whose worst case under the parse bounds of
:func:`scrapy_cepr.core.parse.check_bounds` is under 1 s, and none at all when
``CEPR_TIMEOUT`` is below :data:`INLINE_WORST_SECONDS`; ``CEPR_POOL_AFTER_SECONDS=0``
starts the pool when the spider opens, so that every page has the timeout.

Common rules of the pools:

* at most ``IN_FLIGHT_PER_WORKER × max_workers`` (2 × ``max_workers``) pages are
  submitted at once (an :class:`asyncio.Semaphore`): each worker has one page running
  and one waiting, so it starts its next page as soon as it finishes one instead of
  idling while the result travels back and the crawler submits the next page (with one
  page per worker, process workers were idle about a third of the time). The workers
  are warmed up (started, the method imported and run once) before their first page,
  and again after a restart, outside the timeout;
* ``timeout`` counts from the page's submission, so it includes the page's wait behind
  the page ahead of it (on the benchmark pages a few ms; the default 30 s is three
  orders of magnitude above a normal page). A page that takes longer raises
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

import asyncio
import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from .exceptions import ExtractionTimeout, WorkerDied
from .options import ExtractOptions, PageResult
from .transport import PIPE_WORKERS, REPLY_HEADER, decode_reply, encode_request, encode_setup
from .worker import extract_page, init_process_worker, ping, run_set_up, warm_up

__all__ = [
    "Executor",
    "InlineExecutor",
    "LazyPoolExecutor",
    "ProcessExecutor",
    "ThreadExecutor",
    "make_executor",
]

logger = logging.getLogger(__name__)

#: The worker function type: ``(html, url, options) -> (PageResult, seconds)``.
Worker = Callable[[Any, Any, ExtractOptions], tuple[PageResult, float]]

#: Per-page overrides of the crawl's :class:`~scrapy_cepr.options.ExtractOptions`
#: (field name -> value), or None.
Overrides = dict[str, Any] | None

#: Seconds allowed for a pool's warm-up (starting workers, importing the method).
WARM_UP_TIMEOUT = 120.0

#: Pages submitted at once per pool worker: one running, one waiting (see the module
#: docstring). Measured on 2 cores, benchmarks/crawl_throughput.py: see the README.
IN_FLIGHT_PER_WORKER = 2


class _Collateral(Exception):
    """A page timed out on a pool that another page's timeout had already recycled."""


class Executor:
    """Runs :func:`scrapy_cepr.worker.extract_page` (or another *worker* with its
    signature) for the pipeline, with the crawl's *options* (given to each worker once,
    when it starts).

    Life cycle: ``await start()`` when the spider opens, ``await run(html, url)`` per
    page, ``await aclose()`` (or ``shutdown()``) when it closes.
    """

    name = "base"

    def __init__(self, *, timeout: float = 30.0, worker: Worker = extract_page,
                 on_restart: Callable[[str], None] | None = None, options: ExtractOptions | None = None) -> None:
        self.timeout = timeout
        self.worker = worker
        self.on_restart = on_restart
        self.options = options if options is not None else ExtractOptions()

    async def start(self) -> None:
        """Start the workers (no-op for ``inline``)."""

    async def run(self, html: str | bytes, url: str | None, overrides: Overrides = None) -> tuple[PageResult, float]:
        """Extract one page: ``(PageResult, seconds in the worker)``; *overrides* change
        the crawl's options for this page only (:meth:`ExtractOptions.replace
        <scrapy_cepr.options.ExtractOptions.replace>`).

        :raises ExtractionTimeout: (pools) the page took longer than ``timeout``.
        :raises WorkerDied: (process pool) the worker process died.
        :raises Exception: whatever the worker raised (e.g. ``NotHTMLError``).
        """
        raise NotImplementedError

    def shutdown(self) -> None:
        """Stop the workers now; idempotent."""

    async def aclose(self) -> None:
        """Stop the workers, letting idle ones exit on their own first where the
        executor can (:meth:`ProcessExecutor.aclose`); else :meth:`shutdown`."""
        self.shutdown()


class InlineExecutor(Executor):
    """Extraction in the calling (reactor) thread. The timeout cannot interrupt it; a
    page slower than ``timeout`` is logged as a warning."""

    name = "inline"

    async def start(self) -> None:
        """Run the method once on a tiny page (:func:`scrapy_cepr.worker.warm_up`)."""
        warm_up(self.options.method)

    async def run(self, html: str | bytes, url: str | None, overrides: Overrides = None) -> tuple[PageResult, float]:
        result, seconds = self.worker(html, url, self.options.replace(**overrides) if overrides else self.options)
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


class _WorkersExecutor(Executor):
    """An executor with ``max_workers`` workers warmed up for the options' method,
    counting its ``restarts``.

    :raises ValueError: ``max_workers < 1``.
    """

    def __init__(self, *, max_workers: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if max_workers < 1:
            raise ValueError(f"max_workers must be an int >= 1, got {max_workers!r}")
        self.max_workers = max_workers
        self.restarts = 0


class _PoolExecutor(_WorkersExecutor):
    """Shared logic of the concurrent.futures thread and process pools (see the module
    docstring)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
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
        return partial(warm_up, self.options.method)

    def _task(self, html: str | bytes, url: str | None, overrides: Overrides) -> tuple[Callable[..., Any], tuple]:
        """The call a pool worker makes for one page: the worker function with the options."""
        return self.worker, (html, url, self.options.replace(**overrides) if overrides else self.options)

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
        gathered = asyncio.gather(*futures)
        # A pool may be retired or shut down before anyone awaits its warm-up (e.g. a
        # restart after a timeout, then the spider closes): if the wait_for task below is
        # cancelled before it starts, nothing awaits the gathering future, whose workers
        # then fail (BrokenProcessPool, CancelledError). Retrieve both outcomes so that
        # asyncio never logs "_GatheringFuture exception was never retrieved".
        gathered.add_done_callback(_retrieve)
        pool.ready = asyncio.ensure_future(asyncio.wait_for(gathered, WARM_UP_TIMEOUT))
        pool.ready.add_done_callback(_retrieve)
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
            starting = pool.ready is not None and not pool.ready.done()
            if starting and pool.ready is not None:  # workers still starting: stop them, do not wait
                pool.ready.cancel()
            if not pool.disposed:
                if pool.inflight or pool.stuck or starting:
                    self._dispose(pool)
                else:
                    pool.disposed = True
                    pool.executor.shutdown(wait=True, cancel_futures=True)

    # -- work --------------------------------------------------------------------------
    async def run(self, html: str | bytes, url: str | None, overrides: Overrides = None) -> tuple[PageResult, float]:
        if self._slots is None:
            raise RuntimeError(f"the {self.name} executor is not started (call start() first)")
        function, args = self._task(html, url, overrides)
        async with self._slots:
            try:
                return await self._run_once(function, args, url)
            except _Collateral:  # waited behind another page's runaway: one more try
                logger.info("Retrying %s on the fresh %s pool (it waited behind a page that timed out)",
                            url, self.name)
                return await self._run_once(function, args, url, last_try=True)

    async def _run_once(self, function: Callable[..., Any], args: tuple, url: str | None,
                        last_try: bool = False) -> tuple[PageResult, float]:
        pool = await self._current_pool()
        try:
            future = pool.executor.submit(function, *args)
        except (BrokenExecutor, RuntimeError):
            # The pool broke (or was shut down) before this page was sent: it was
            # not in flight, so it gets one try on a fresh pool.
            self._retire(pool, "pool found broken at submission")
            pool = await self._current_pool()
            future = pool.executor.submit(function, *args)
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


class _DaemonThreadPool(concurrent.futures.Executor):
    """A fixed pool of *max_workers* daemon threads taking calls from a queue.

    :class:`~concurrent.futures.ThreadPoolExecutor` joins its threads when the
    interpreter exits, so a runaway page kept a finished crawl alive until the page
    ended; these threads are daemons and are not joined: a page abandoned after a
    timeout ends with the process."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "cepr") -> None:

        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._shutdown = False
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._work, name=f"{thread_name_prefix}_{i}", daemon=True)
                         for i in range(max_workers)]
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - the caller gets it from the future
                future.set_exception(exc)
            else:
                future.set_result(result)

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        with self._lock:
            if self._shutdown:
                raise RuntimeError("cannot schedule new futures after shutdown")
            future: concurrent.futures.Future = concurrent.futures.Future()
            self._queue.put((future, fn, args, kwargs))
            return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
            if cancel_futures:
                while True:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        item[0].cancel()
            for _ in self._threads:
                self._queue.put(None)
        if wait:
            for thread in self._threads:
                thread.join()


class ThreadExecutor(_PoolExecutor):
    """A thread pool of ``max_workers`` daemon threads. A timed-out page's thread cannot
    be killed: it is abandoned (its result dropped) and finishes on its own, or ends
    with the process (the threads are daemons, never waited for at exit)."""

    name = "thread"

    def _new_executor(self) -> concurrent.futures.Executor:
        return _DaemonThreadPool(self.max_workers, thread_name_prefix="cepr")


class PoolProcessExecutor(_PoolExecutor):
    """The fallback ``process`` executor, for platforms where asyncio cannot run
    subprocess pipes (Windows' selector event loop): a
    :class:`~concurrent.futures.ProcessPoolExecutor` of ``max_workers`` processes started
    with *start_method* (``"spawn"`` or ``"forkserver"``; ``"fork"`` is refused). Workers
    ignore SIGINT and import the method at start
    (:func:`scrapy_cepr.worker.init_process_worker`, which also receives the worker
    function and the options, once; a page then sends only itself, its URL and its
    overrides, :func:`scrapy_cepr.worker.run_set_up`). It costs the crawler more CPU per
    page than :class:`ProcessExecutor` (two helper threads; see the module docstring) and
    a dead or timed-out worker fails every page in flight on its pool.

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

    def _task(self, html: str | bytes, url: str | None, overrides: Overrides) -> tuple[Callable[..., Any], tuple]:
        return run_set_up, (html, url, overrides or None)  # the options were sent to the initializer

    def _new_executor(self) -> concurrent.futures.Executor:
        return concurrent.futures.ProcessPoolExecutor(
            self.max_workers,
            mp_context=multiprocessing.get_context(self.start_method),
            initializer=init_process_worker,
            initargs=(self.worker, self.options),
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


class _NotStarted(Exception):
    """The worker holding a page stopped before it started that page (it was queued
    behind the page the worker was running): the page gets one more try."""


#: The command a process worker runs (``sys.executable -c``): the transport's server loop.
#: SIGINT is ignored first thing: Ctrl-C in a terminal reaches the whole process group,
#: and it is the crawler's to handle (it then closes the workers' input).
_BOOTSTRAP = ("import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
              "from scrapy_cepr.worker import serve; serve()")

#: Bytes asked for each worker's request pipe (Linux ``F_SETPIPE_SZ``; the default is
#: 64 KiB, less than a typical page, so a page would take several event-loop turns).
PIPE_BYTES = 1 << 20

#: Seconds :meth:`ProcessExecutor.aclose` waits for idle workers to exit on their own
#: (closing their input) before killing them.
EXIT_GRACE = 5.0


class _WorkerChannel(asyncio.SubprocessProtocol):
    """The crawler's side of one worker process: it writes page requests to the
    worker's standard input and reads its replies from its standard output, in the
    event loop (no thread), resolving the pages' futures first in, first out
    (:mod:`scrapy_cepr.transport`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_lost: Callable[[_WorkerChannel], None],
                 on_exit: Callable[[_WorkerChannel], None] | None = None) -> None:
        self.loop = loop
        self.on_lost = on_lost
        self.on_exit = on_exit
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin: Any = None
        self.pid: int | None = None
        #: The set-up reply (the worker's pid), or the reason it could not start.
        self.ready: asyncio.Future = loop.create_future()
        self.ready.add_done_callback(_retrieve)
        #: One future per page sent and not answered yet, oldest (the running page) first.
        self.pending: deque[asyncio.Future] = deque()
        self.alive = True
        #: Why the crawler stopped this worker (None: it was not stopped by us).
        self.stopped: str | None = None
        self.exited: asyncio.Future = loop.create_future()
        self.launch: asyncio.Future | None = None
        self._buffer = bytearray()
        self._gone = False

    @property
    def usable(self) -> bool:
        """Alive and ready for pages."""
        ready = self.ready
        return self.alive and ready.done() and not ready.cancelled() and ready.exception() is None

    # -- asyncio.SubprocessProtocol ------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport
        self.pid = transport.get_pid()
        self.stdin = transport.get_pipe_transport(0)
        pipe = self.stdin.get_extra_info("pipe")
        with contextlib.suppress(ImportError, AttributeError, OSError, ValueError):  # Linux only; best effort
            import fcntl

            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[attr-defined,unused-ignore]

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        head, start = REPLY_HEADER.size, 0
        while len(buffer) - start >= head:
            (size,) = REPLY_HEADER.unpack_from(buffer, start)
            end = start + head + size
            if len(buffer) < end:
                break
            self._resolve(*decode_reply(bytes(buffer[start + head:end])))
            start = end
        if start:
            del buffer[:start]

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:  # the worker's output ended: every reply it wrote has been read
            self._lost()

    def connection_lost(self, exc: Exception | None) -> None:
        # The process has exited and been reaped, its pipes are closed: closing the
        # transport now cannot race asyncio's child watcher (closing it earlier polls,
        # and may reap, the process behind the watcher's back).
        self._lost()
        if self.transport is not None:
            self.transport.close()
        if self.on_exit is not None:
            self.on_exit(self)
        if not self.exited.done():
            self.exited.set_result(None)

    # -- pages ---------------------------------------------------------------------------
    def send(self, parts: tuple[Any, ...]) -> asyncio.Future:
        """Write one page request (:func:`scrapy_cepr.transport.encode_request`); the
        future of its reply."""
        future = self.loop.create_future()
        self.pending.append(future)
        self.write(parts)
        return future

    def write(self, parts: tuple[Any, ...]) -> None:
        """Write a frame's parts (buffered by the transport if the pipe is full)."""
        for part in parts:
            self.stdin.write(part)

    def _resolve(self, ok: bool, value: Any) -> None:
        if not self.ready.done():
            if ok:
                self.ready.set_result(value)
            else:
                self.ready.set_exception(value)
            return
        if not self.pending:  # pragma: no cover - a reply nobody asked for
            logger.error("Process worker %s sent an unexpected reply; stopping it", self.pid)
            self.stop("protocol error")
            return
        future = self.pending.popleft()
        if not future.done():  # done: abandoned after a timeout
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def _lost(self) -> None:
        """The worker is gone: its running page (the oldest) died with it, the pages
        queued behind it were never started."""
        if self._gone:
            return
        self._gone, self.alive = True, False
        reason = self.stopped or "the worker process died"
        if not self.ready.done():
            self.ready.set_exception(WorkerDied(f"{reason} while starting"))
        running = True
        while self.pending:
            future = self.pending.popleft()
            if not future.done():
                future.set_exception(WorkerDied(f"worker died: {reason}") if running else _NotStarted())
            running = False
        self.on_lost(self)

    def stop(self, reason: str) -> None:
        """Kill the worker (SIGKILL); its pages are settled when its output ends."""
        self.stopped = reason
        self.alive = False
        if self.transport is not None and self.transport.get_returncode() is None:
            with contextlib.suppress(ProcessLookupError):
                self.transport.kill()

    def close_input(self) -> None:
        """Close the worker's input: an idle worker then exits on its own."""
        self.alive = False
        if self.stdin is not None:
            self.stdin.close()

    def close(self) -> None:
        """Close the transport (which kills the worker if it is still running)."""
        self.alive = False
        if self.launch is not None and not self.launch.done():
            self.launch.cancel()
        if self.transport is not None:
            self.transport.close()


class ProcessExecutor(_WorkersExecutor):
    """``max_workers`` worker processes fed over pipes from the event loop (the default
    ``process`` executor on POSIX).

    Each worker is a fresh interpreter (``sys.executable -c``, the crawler's
    ``sys.path``, in the crawler's process group, ignoring SIGINT) running
    :func:`scrapy_cepr.worker.serve`; it exits when its input closes (the crawler
    closed it, or died); pages and results travel in the frames of
    :mod:`scrapy_cepr.transport`, written and read by asyncio pipe transports: no helper
    thread, and the page's bytes go from the response body to the pipe without being
    pickled. A page goes to the worker with the fewest pages in flight (at most
    ``IN_FLIGHT_PER_WORKER × max_workers`` at once). Because a worker answers in order,
    the executor knows which page each worker is running:

    * a page that takes longer than ``timeout`` seconds (from its submission) raises
      :class:`ExtractionTimeout`; if its worker was running it, that worker is killed and
      replaced, and the page queued behind it is sent again (one more try, fresh
      timeout); other workers are untouched;
    * a worker that dies (killed by the OS, out of memory, a crash in a C library) fails
      the page it was running with :class:`WorkerDied`; the page queued behind it is sent
      again, and the worker is replaced;
    * every replacement calls ``on_restart(reason)``.

    :raises ValueError: ``max_workers < 1``.
    """

    name = "process"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._channels: list[_WorkerChannel] = []
        self._slots: asyncio.Semaphore | None = None
        self._shut = False
        self._exit_codes: dict[int, int | None] = {}

    @property
    def worker_pids(self) -> list[int | None]:
        """The process ids of the current workers (None: not launched yet), in order."""
        return [channel.pid for channel in self._channels]

    @property
    def in_flight(self) -> list[int]:
        """Pages sent to each current worker and not answered yet, in :attr:`worker_pids` order."""
        return [len(channel.pending) for channel in self._channels]

    @property
    def exit_codes(self) -> dict[int, int | None]:
        """Process id -> exit code of every worker that has exited (negative: killed by
        that signal)."""
        return dict(self._exit_codes)

    def _exited(self, channel: _WorkerChannel) -> None:
        if channel.pid is not None and channel.transport is not None:
            self._exit_codes[channel.pid] = channel.transport.get_returncode()

    async def start(self) -> None:
        """Start the workers and wait until each has imported and warmed up the method.

        :raises WorkerDied: a worker could not start (its error is in the message).
        """
        if self._slots is not None:
            return
        self._slots = asyncio.Semaphore(IN_FLIGHT_PER_WORKER * self.max_workers)
        channels = [self._add_worker() for _ in range(self.max_workers)]
        try:
            await asyncio.gather(*(asyncio.shield(c.ready) for c in channels))
        except Exception as exc:
            self.shutdown()
            raise WorkerDied(f"the process pool could not start its workers: {exc}") from exc

    def _add_worker(self) -> _WorkerChannel:
        channel = _WorkerChannel(asyncio.get_running_loop(), self._lost, self._exited)
        self._channels.append(channel)
        channel.launch = asyncio.ensure_future(self._launch(channel))
        channel.launch.add_done_callback(_retrieve)
        return channel

    async def _launch(self, channel: _WorkerChannel) -> None:
        loop = asyncio.get_running_loop()
        try:
            if not sys.executable:
                raise RuntimeError("sys.executable is unknown: cannot start a Python worker process")
            path = os.pathsep.join(p or os.getcwd() for p in sys.path)  # the crawler's imports
            await loop.subprocess_exec(lambda: channel, sys.executable, "-c", _BOOTSTRAP,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                                       env={**os.environ, "PYTHONPATH": path})
            channel.write(encode_setup(self.worker, self.options))  # its reply resolves `ready`
            await asyncio.wait_for(asyncio.shield(channel.ready), WARM_UP_TIMEOUT)
        except BaseException as exc:
            if not channel.ready.done():
                channel.ready.set_exception(exc if isinstance(exc, Exception) else WorkerDied("cancelled"))
            channel.stop(f"could not start: {exc!r}")  # its transport closes when it has exited
            if channel in self._channels:
                self._channels.remove(channel)
            if isinstance(exc, asyncio.CancelledError):
                raise

    def _lost(self, channel: _WorkerChannel) -> None:
        """A worker's output ended. If it was serving pages (not stopped by us, not
        still starting: :meth:`_launch` handles that), replace it."""
        if channel in self._channels and not self._shut and channel.ready.done() and not channel.ready.cancelled() \
                and channel.ready.exception() is None:
            self._replace(channel, f"worker {channel.pid} died")

    def _replace(self, channel: _WorkerChannel, reason: str) -> None:
        """Stop *channel*'s worker (if still running) and start a fresh one in its place."""
        self._channels.remove(channel)
        channel.stop(reason)
        self.restarts += 1
        logger.warning("Restarting a process worker (pid %s): %s", channel.pid, reason)
        self._add_worker()
        if self.on_restart is not None:
            self.on_restart(reason)

    async def run(self, html: str | bytes, url: str | None, overrides: Overrides = None) -> tuple[PageResult, float]:
        if self._slots is None:
            raise RuntimeError(f"the {self.name} executor is not started (call start() first)")
        if overrides:
            self.options.replace(**overrides)  # refused here, not in the worker
        parts = encode_request(html, url, overrides)
        async with self._slots:
            try:
                return await self._run_once(parts, url)
            except _NotStarted:  # it waited behind a page that died, or that is too slow
                logger.info("Sending %s again: it waited behind a page that failed or timed out", url)
                return await self._run_once(parts, url, last_try=True)

    async def _run_once(self, parts: tuple[Any, ...], url: str | None, last_try: bool = False) -> tuple[PageResult, float]:
        channel = await self._channel()
        future = channel.send(parts)
        try:
            return await asyncio.wait_for(future, self.timeout)
        except _NotStarted:
            if last_try:
                raise WorkerDied("worker died: two workers stopped before starting this page") from None
            raise
        except asyncio.TimeoutError:  # noqa: UP041 - distinct from TimeoutError on Python 3.10
            running = bool(channel.pending) and channel.pending[0] is future and channel.stopped is None
            if running:  # its worker is stuck on it
                if channel in self._channels:
                    self._replace(channel, f"a page timed out ({url})")
            elif not last_try:  # queued behind a slow page: the worker will skip its reply
                raise _NotStarted from None
            raise ExtractionTimeout(f"timed out after {self.timeout:g} s") from None

    async def _channel(self) -> _WorkerChannel:
        """The usable worker with the fewest pages in flight (waiting for one to start
        if none is ready)."""
        while True:
            if self._shut:
                raise RuntimeError(f"the {self.name} executor is shut down")
            best: _WorkerChannel | None = None
            for channel in self._channels:
                if channel.usable and (best is None or len(channel.pending) < len(best.pending)):
                    best = channel
            if best is not None:
                return best
            starting = [c.ready for c in self._channels if not c.ready.done()]
            if not starting:  # the workers failed to start: try one more
                starting = [self._add_worker().ready]
            await asyncio.wait(starting, return_when=asyncio.FIRST_COMPLETED)
            failed = [f for f in starting if f.done() and not f.cancelled() and f.exception() is not None]
            if failed and not any(c.usable or not c.ready.done() for c in self._channels):
                raise WorkerDied(f"no process worker could start: {failed[0].exception()}")

    def shutdown(self) -> None:
        """Stop every worker now (idempotent)."""
        self._shut = True
        channels, self._channels = self._channels, []
        for channel in channels:
            channel.close_input()
            channel.close()

    async def aclose(self) -> None:
        """Close the workers' input, give them up to :data:`EXIT_GRACE` seconds to exit
        on their own (a worker's clean-up runs, e.g. a browser it started is closed), then
        stop the rest (:meth:`shutdown`)."""
        self._shut = True
        channels = list(self._channels)
        for channel in channels:
            channel.close_input()
        exits = [c.exited for c in channels if c.transport is not None]
        if exits:
            await asyncio.wait(exits, timeout=EXIT_GRACE)
        self.shutdown()


def _retrieve(future: asyncio.Future) -> None:
    """Done callback: mark *future*'s exception as retrieved (it is handled elsewhere)."""
    if not future.cancelled():
        future.exception()


#: Largest page (bytes, or characters of a str) that :class:`LazyPoolExecutor` cleans
#: inline before its pool runs; a larger page starts the pool and waits for it. Under
#: the parse bounds (:func:`scrapy_cepr.core.parse.check_bounds`) the slowest page of
#: this size measured takes under 1 s with every page-model method (``docs/parsing.md``).
INLINE_MAX_BYTES = 256_000

#: Below this ``timeout`` (seconds) :class:`LazyPoolExecutor` has no inline phase: every
#: page goes to the pool, so that no page holds the reactor longer than the timeout.
INLINE_WORST_SECONDS = 2.0


class LazyPoolExecutor(Executor):
    """A thread or process *pool* started lazily (see the module docstring): pages run
    inline (:class:`InlineExecutor`) until they have taken *after_seconds* in total, then
    the pool starts in the background and takes the pages once its workers are up.
    Only pages :meth:`takes_inline` accepts run inline: a larger page starts the pool at
    once and waits for it, so that the reactor is never held longer than the worst
    case of a page of :data:`INLINE_MAX_BYTES` (below ``timeout``).

    :param pool: the :class:`ThreadExecutor` or :class:`ProcessExecutor` to start.
    :param after_seconds: inline extraction seconds before the pool starts (>= 0; 0 =
        start it in :meth:`start`, no page inline).
    """

    def __init__(self, pool: _WorkersExecutor, *, after_seconds: float = 1.0) -> None:
        super().__init__(timeout=pool.timeout, worker=pool.worker, on_restart=pool.on_restart, options=pool.options)
        if after_seconds < 0:
            raise ValueError(f"after_seconds must be >= 0, got {after_seconds!r}")
        self.name = pool.name
        self.pool = pool
        self.after_seconds = after_seconds
        self.inline = InlineExecutor(timeout=pool.timeout, worker=pool.worker, options=pool.options)
        self.inline_pages = 0
        self.inline_seconds = 0.0
        self._starting: asyncio.Task | None = None
        self._ready = False
        self._warmed = False

    async def start(self) -> None:
        """Nothing to start yet, unless *after_seconds* is 0: then the pool is started
        and its workers awaited here, as :meth:`_PoolExecutor.start` does.

        :raises WorkerDied: (*after_seconds* = 0) the workers could not start.
        """
        if self.after_seconds == 0:
            await self.pool.start()
            self._starting = asyncio.ensure_future(asyncio.sleep(0))
            self._ready = True

    def _start_pool(self) -> None:
        if self._starting is None:
            logger.info("Starting the %s pool in the background (%d pages cleaned inline in %.2f s)",
                        self.name, self.inline_pages, self.inline_seconds)
            self._starting = asyncio.ensure_future(self.pool.start())
            self._starting.add_done_callback(self._started)

    def _started(self, task: asyncio.Task) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            self._ready = True
        else:  # the pages go on inline
            logger.error("The %s pool could not start; cleaning inline: %s", self.name, exc)

    async def run(self, html: str | bytes, url: str | None, overrides: Overrides = None) -> tuple[PageResult, float]:
        if self._ready:
            return await self.pool.run(html, url, overrides)
        if not self.takes_inline(html):
            self._start_pool()
            assert self._starting is not None
            with contextlib.suppress(Exception):
                await asyncio.shield(self._starting)
            if self._ready:
                return await self.pool.run(html, url, overrides)
            # the pool could not start (logged): the page goes inline after all
        if not self._warmed:  # once, not charged to the first page
            self._warmed = True
            warm_up(self.options.method)
        result, seconds = await self.inline.run(html, url, overrides)
        self.inline_pages += 1
        self.inline_seconds += seconds
        if self.inline_seconds >= self.after_seconds:
            self._start_pool()
        return result, seconds

    def takes_inline(self, html: str | bytes) -> bool:
        """Whether the inline phase may take *html*: at most :data:`INLINE_MAX_BYTES`
        long, and ``timeout`` at least :data:`INLINE_WORST_SECONDS` (else no page is
        cleaned inline)."""
        return self.timeout >= INLINE_WORST_SECONDS and len(html) <= INLINE_MAX_BYTES

    @property
    def pool_started(self) -> bool:
        """Whether the pool's start was asked for (it may still be starting)."""
        return self._starting is not None

    @property
    def pool_ready(self) -> bool:
        """Whether the pool is up and takes the pages."""
        return self._ready

    @property
    def restarts(self) -> int:
        """Restarts of the pool (0 before it started)."""
        return self.pool.restarts

    def shutdown(self) -> None:
        """Stop the pool (at once if its workers are still starting)."""
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        self._ready = False
        self.pool.shutdown()

    async def aclose(self) -> None:
        """As :meth:`shutdown`, with the pool's own :meth:`Executor.aclose` once it runs."""
        if self._ready:
            self._ready = False
            await self.pool.aclose()
        self.shutdown()


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

