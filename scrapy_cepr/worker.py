"""The picklable work unit run by every executor: :func:`extract_page`.

It lives in its own small module so that a process worker (started with ``spawn`` or
``forkserver``) imports only the extraction core, never Scrapy or Twisted. It takes and
returns plain data: the page as :class:`HtmlBytes` (the response body and its encoding;
what the spider middleware attaches), ``bytes`` or ``str`` in; the title and body in a
two-key dict and a float out (lxml trees and numpy arrays never cross the process
boundary).

Why bytes: the crawler then never decodes a page, and sending it to a worker process
is a copy of the body (pickle writes ``bytes`` as they are; a ``str`` is encoded to
UTF-8 on the way out and decoded again on the way in).
"""

from __future__ import annotations

import signal
import time
from typing import Any, Self

from w3lib.encoding import html_to_unicode

from .core.api import extract

__all__ = ["HtmlBytes", "extract_page", "init_process_worker", "ping", "warm_up"]


class HtmlBytes(bytes):
    """The raw body of an HTML response together with its character encoding.

    A ``bytes`` subclass (so size checks, slicing and ``==`` work as on the body) with one
    attribute, :attr:`encoding`: the charset Scrapy determined for the response (BOM,
    HTTP ``Content-Type``, ``<meta charset>``, else inferred), or None when unknown (the
    core then looks for a BOM or ``<meta charset>`` and falls back on UTF-8).
    :meth:`text` decodes it exactly as :attr:`scrapy.http.TextResponse.text` does.
    It pickles as ``(bytes, encoding)``.

    >>> page = HtmlBytes("<p>新闻</p>".encode("gbk"), "gbk")
    >>> len(page), page.encoding, page.text()
    (11, 'gbk', '<p>新闻</p>')
    >>> import pickle; pickle.loads(pickle.dumps(page)).encoding
    'gbk'
    """

    encoding: str | None

    def __new__(cls, body: bytes, encoding: str | None = None) -> Self:
        self = super().__new__(cls, body)
        self.encoding = encoding
        return self

    def __reduce__(self) -> tuple[type[Self], tuple[bytes, str | None]]:
        return (type(self), (bytes(self), self.encoding))

    def text(self) -> str:
        """The decoded page, as Scrapy's ``response.text`` (w3lib: BOM first, then
        :attr:`encoding`; invalid sequences become U+FFFD)."""
        return html_to_unicode(f"charset={self.encoding}" if self.encoding else None, bytes(self))[1]


def extract_page(html: str | bytes, url: str | None, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """Extract one page with :func:`scrapy_cepr.extract`.

    :param html: the page: :class:`HtmlBytes` (decoded by the core with its
        ``encoding`` as the transport charset), other ``bytes`` (BOM, ``<meta charset>``,
        UTF-8), or ``str``.
    :param url: the page URL (for the core's result; not sent back).
    :param method: one of :data:`scrapy_cepr.METHOD_NAMES`.
    :param params: the method's keyword parameters (already validated by the settings).
    :returns: ``(result, seconds)``: ``{"title": str | None, "body": str}`` (only what
        the pipeline writes, to keep the way back small; plus ``"body_html"`` when the
        method made a styled HTML body: ``wang2009`` with ``styled_html=True``) and the wall-clock seconds the
        extraction took in the worker.
    :raises NotHTMLError: the input is not HTML (binary, JSON, text without markup).
    :raises ValueError: bad method or parameters.

    >>> result, seconds = extract_page("<html><body><h1>Hi</h1><p>One, two. Three.</p></body></html>",
    ...                                "http://example.com/a", "setpr", {})
    >>> sorted(result), result["title"], seconds >= 0
    (['body', 'title'], 'Hi', True)
    """
    start = time.perf_counter()
    extraction = extract(html, url=url, method=method, encoding=getattr(html, "encoding", None), **params)
    result = {"title": extraction.title, "body": extraction.body}
    body_html = getattr(extraction, "body_html", None)  # wang2009 with styled_html=True
    if body_html is not None:
        result["body_html"] = body_html
    return result, time.perf_counter() - start


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
