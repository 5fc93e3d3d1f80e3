"""The executors over :mod:`concurrent.futures` pools: ``thread`` (:class:`ThreadExecutor`)
and the fallback ``process`` executor (:class:`PoolProcessExecutor`, where asyncio has no
subprocess pipes). They cannot tell which page a worker runs: a timeout recycles the
whole pool, a dead process worker breaks it (see :mod:`scrapy_cepr.executors`)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import multiprocessing
import queue
import threading
from collections.abc import Callable
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..exceptions import ExtractionTimeout, WorkerDied
from ..options import PageResult
from ..worker import init_process_worker, ping, run_set_up, warm_up
from .base import IN_FLIGHT_PER_WORKER, WARM_UP_TIMEOUT, Overrides, _retrieve, _WorkersExecutor

__all__ = ["PoolProcessExecutor", "ThreadExecutor"]

logger = logging.getLogger(__name__)


class _Collateral(Exception):
    """A page timed out on a pool that another page's timeout had already recycled."""




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
