"""The wire format between the crawler and its worker processes (``CEPR_EXECUTOR="process"``).

A worker is a fresh Python interpreter (:func:`scrapy_cepr.worker.serve`) that reads
requests on its standard input and writes replies on its standard output; the crawler
side (:class:`scrapy_cepr.executors.ProcessExecutor`) reads and writes those pipes from
its asyncio event loop, without helper threads. Every message is a *frame*:

* a request (crawler → worker): an 8-byte header, two big-endian ``uint32``: the lengths
  of the *meta* and *body* parts (bytes); then *meta*, a pickle of
  ``(kind, encoding, url, overrides)`` (*overrides*: None, or a dict of
  :class:`~scrapy_cepr.options.ExtractOptions` fields for this page only); then *body*,
  the page's bytes as they are.
  *kind* tells how to rebuild the page: ``"html"`` (:class:`HtmlBytes`
  with *encoding*), ``"bytes"``, or ``"str"`` (sent as UTF-8 with ``surrogatepass``, so
  that lone surrogates reach the core unchanged). The body is not pickled: pickling
  ``bytes`` copies them into the pickle, and the crawler's CPU per page is what this
  transport exists to save (a 150 kB page is written to the pipe straight from the
  response body).
* a reply (worker → crawler): a 4-byte header, the length of the payload, then a pickle
  of ``(ok, value)``: ``(True, the worker function's return value)`` or ``(False,
  exception)``.

The first request of a worker is its set-up, ``(worker function, options)``: the
:class:`~scrapy_cepr.options.ExtractOptions` of the crawl, sent once. Its first
reply says it is ready (``(True, pid)``) or could not start (``(False, exception)``).
Frames are in order: a worker answers its requests one after the other, first in, first
out, so the crawler knows which page a worker is running (the oldest unanswered one).

>>> head, body = encode_request(HtmlBytes(b"<p>caf\\xe9</p>", "cp1252"), "http://x/", {"method": "nce"})
>>> meta_len, body_len = REQUEST_HEADER.unpack_from(head)
>>> (REQUEST_HEADER.size + meta_len, body_len) == (len(head), len(body))
True
>>> html, url, overrides = decode_request(head[REQUEST_HEADER.size:], body)
>>> type(html).__name__, html.encoding, html.text(), url, overrides
('HtmlBytes', 'cp1252', '<p>café</p>', 'http://x/', {'method': 'nce'})
>>> head, body = encode_request("<p>\\ud800</p>", None)
>>> decode_request(head[REQUEST_HEADER.size:], body)[0] == "<p>\\ud800</p>"
True
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any, Self

from w3lib.encoding import html_to_unicode

__all__ = [
    "PIPE_WORKERS",
    "HtmlBytes",
    "REPLY_HEADER",
    "REQUEST_HEADER",
    "decode_reply",
    "decode_request",
    "encode_reply",
    "encode_request",
    "encode_setup",
]

#: Request header: lengths (bytes) of the pickled meta part and of the raw body part.
REQUEST_HEADER = struct.Struct("!II")
#: Reply header: length (bytes) of the pickled ``(ok, value)`` payload.
REPLY_HEADER = struct.Struct("!I")

#: True where the crawler can feed process workers over pipes from its event loop
#: (asyncio subprocess pipes: POSIX); elsewhere ``CEPR_EXECUTOR="process"`` is a
#: :class:`concurrent.futures.ProcessPoolExecutor` (``CEPR_START_METHOD``).
PIPE_WORKERS = os.name == "posix"

_PROTOCOL = pickle.HIGHEST_PROTOCOL


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


def encode_request(html: str | bytes, url: str | None, overrides: dict[str, Any] | None = None) -> tuple[bytes, Any]:
    """A page request in two parts, to be written in that order: the header with the
    meta part, then the body (*html* itself when it is ``bytes``: no copy; UTF-8 for
    ``str``). Two parts, so two ``write`` calls and no copy of the page.

    :raises ValueError: the page or its meta part is 4 GiB or more.
    :raises pickle.PicklingError: *overrides* cannot be pickled.
    """
    body: bytes | memoryview
    if isinstance(html, str):
        kind, encoding, body = "str", None, html.encode("utf-8", "surrogatepass")
    else:
        encoding = getattr(html, "encoding", None)
        kind, body = ("html" if hasattr(html, "encoding") else "bytes"), memoryview(html)
    meta = pickle.dumps((kind, encoding, url, overrides or None), _PROTOCOL)
    if len(body) >= 1 << 32 or len(meta) >= 1 << 32:
        raise ValueError(f"a page of {len(body)} bytes is too large for the worker pipe (< 4 GiB)")
    return REQUEST_HEADER.pack(len(meta), len(body)) + meta, body


def encode_setup(worker: Any, options: Any) -> tuple[bytes]:
    """The set-up request of a worker: *worker* (a module-level function, or a
    :func:`functools.partial` of one, pickled by reference) and the crawl's
    :class:`~scrapy_cepr.options.ExtractOptions` (the method it warms up, and what it
    does with every page).

    :raises ValueError: *worker* is defined in ``__main__`` (a worker process cannot
        import the crawler's main script).
    :raises pickle.PicklingError: *worker* cannot be pickled (e.g. a lambda).

    >>> def local(html, url, options): ...
    >>> local.__module__ = "__main__"
    >>> encode_setup(local, None)
    Traceback (most recent call last):
    ...
    ValueError: the worker function local is defined in __main__; define it in an importable module
    """
    function = getattr(worker, "func", worker)  # functools.partial
    if getattr(function, "__module__", None) == "__main__":
        raise ValueError(f"the worker function {function.__qualname__} is defined in __main__; "
                         "define it in an importable module")
    meta = pickle.dumps((worker, options), _PROTOCOL)
    return (REQUEST_HEADER.pack(len(meta), 0) + meta,)


def decode_request(meta: bytes, body: bytes) -> tuple[str | bytes, str | None, dict[str, Any] | None]:
    """``(html, url, overrides)`` from a request's *meta* and *body* parts."""
    kind, encoding, url, overrides = pickle.loads(meta)
    html: str | bytes
    if kind == "str":
        html = bytes(body).decode("utf-8", "surrogatepass")
    elif kind == "html":
        html = HtmlBytes(body, encoding)
    else:
        html = bytes(body)
    return html, url, overrides


def encode_reply(ok: bool, value: Any) -> bytes:
    """A reply frame (header and payload). An exception that cannot be pickled is sent
    as a :class:`RuntimeError` naming its type and message.

    >>> frame = encode_reply(True, ({"title": "T"}, 0.01))
    >>> decode_reply(frame[REPLY_HEADER.size:])
    (True, ({'title': 'T'}, 0.01))
    >>> class Local(Exception): pass
    >>> decode_reply(encode_reply(False, Local("boom"))[REPLY_HEADER.size:])
    (False, RuntimeError('Local: boom'))
    """
    try:
        payload = pickle.dumps((ok, value), _PROTOCOL)
    except Exception:
        if ok:
            raise
        payload = pickle.dumps((False, RuntimeError(f"{type(value).__name__}: {value}")), _PROTOCOL)
    return REPLY_HEADER.pack(len(payload)) + payload


def decode_reply(payload: bytes | memoryview) -> tuple[bool, Any]:
    """``(ok, value)`` from a reply's payload. An exception whose class cannot be
    rebuilt here (e.g. a class the crawler cannot import) becomes a
    :class:`RuntimeError` naming the problem."""
    try:
        return pickle.loads(payload)
    except Exception as exc:  # e.g. an exception class with an unusual __init__
        return False, RuntimeError(f"unreadable reply from the worker: {type(exc).__name__}: {exc}")
