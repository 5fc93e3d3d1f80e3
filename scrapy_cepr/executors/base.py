"""The executor interface (:class:`Executor`), the ``inline`` executor and what the pools
share: the worker function type, the warm-up and in-flight bounds."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ..options import ExtractOptions, PageResult
from ..worker import extract_page, warm_up

__all__ = ["IN_FLIGHT_PER_WORKER", "WARM_UP_TIMEOUT", "Executor", "InlineExecutor", "Overrides", "Worker"]

logger = logging.getLogger(__name__)


#: The worker function type: ``(html, url, options) -> (PageResult, seconds)``.
Worker = Callable[[Any, Any, ExtractOptions], tuple[PageResult, float]]

#: Per-page overrides of the crawl's :class:`~scrapy_cepr.options.ExtractOptions`
#: (field name -> value), or None.
Overrides = dict[str, Any] | None

#: Seconds allowed for a pool's warm-up (starting workers, importing the method).
WARM_UP_TIMEOUT = 120.0

#: Pages submitted at once per pool worker: one running, one waiting (see the module
#: docstring; the measurement is in docs/measurements.md, "Executors").
IN_FLIGHT_PER_WORKER = 2


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
        """Start the workers, each warmed up for the options' method before its first
        page (the inline executor warms the method up in this thread)."""

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


def _retrieve(future: asyncio.Future) -> None:
    """Done callback: mark *future*'s exception as retrieved (it is handled elsewhere)."""
    if not future.cancelled():
        future.exception()
