""":class:`LazyPoolExecutor`: pages cleaned inline until they have taken
``CEPR_POOL_AFTER_SECONDS``, then a thread or process pool started in the background
(see :mod:`scrapy_cepr.executors`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ..options import PageResult
from ..worker import warm_up
from .base import Executor, InlineExecutor, Overrides, _WorkersExecutor

__all__ = ["INLINE_MAX_BYTES", "INLINE_WORST_SECONDS", "LazyPoolExecutor"]

logger = logging.getLogger(__name__)


#: Largest page (bytes, or characters of a str) that :class:`LazyPoolExecutor` cleans
#: inline before its pool runs; a larger page starts the pool and waits for it. Under
#: the parse bounds (:func:`scrapy_cepr.core.parse.check_bounds`) the slowest page of
#: this size stays below :data:`INLINE_WORST_SECONDS` with every page-model method
#: (measured in ``docs/parsing.md``).
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
