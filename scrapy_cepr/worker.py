"""The picklable work unit run by every executor: :func:`extract_page`.

It lives in its own small module so that a process worker (started with ``spawn`` or
``forkserver``) imports only the extraction core, never Scrapy or Twisted. It takes and
returns plain data: the HTML as ``str`` or ``bytes`` in, a dict and a float out (lxml
trees and numpy arrays never cross the process boundary).
"""

from __future__ import annotations

import signal
import time
from typing import Any

from .core.api import extract

__all__ = ["extract_page", "init_process_worker", "ping", "warm_up"]


def extract_page(html: str | bytes, url: str | None, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """Extract one page with :func:`scrapy_cepr.extract`.

    :param html: the page (``str``, or ``bytes`` decoded by the core).
    :param url: the page URL, copied into the result.
    :param method: one of :data:`scrapy_cepr.METHOD_NAMES`.
    :param params: the method's keyword parameters (already validated by the settings).
    :returns: ``(result, seconds)``: :meth:`scrapy_cepr.Extraction.to_dict` (``url,
        title, body, method, params, tau``; no node table) and the wall-clock seconds
        the extraction took in the worker.
    :raises NotHTMLError: the input is not HTML (binary, JSON, text without markup).
    :raises ValueError: bad method or parameters.

    >>> result, seconds = extract_page("<html><body><h1>Hi</h1><p>One, two. Three.</p></body></html>",
    ...                                "http://example.com/a", "setpr", {})
    >>> result["title"], result["url"], seconds >= 0
    ('Hi', 'http://example.com/a', True)
    """
    start = time.perf_counter()
    extraction = extract(html, url=url, method=method, **params)
    return extraction.to_dict(), time.perf_counter() - start


def warm_up(method: str) -> int:
    """Import *method*'s module and run it once on a tiny page, so that one-off
    initialisation (imports, tables built on first use: about 0.5 s for CEPR) is not
    charged to the first real page and its timeout. Returns 0.

    >>> warm_up("setpr")
    0
    """
    extract("<html><body><h1>Warm up</h1><p>One, two. Three; four.</p></body></html>", method=method)
    return 0


def init_process_worker(method: str) -> None:
    """Initializer of a process worker: ignore SIGINT (Ctrl-C is the crawler's to handle:
    it closes the pool; a worker dying of KeyboardInterrupt would break the pool and fail
    the pages in flight), then :func:`warm_up` *method*."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warm_up(method)


def ping() -> int:
    """A no-op task used to start pool workers before the first page arrives; returns 0."""
    return 0
