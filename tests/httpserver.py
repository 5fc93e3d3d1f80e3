"""Helpers for end-to-end crawls: a local HTTP server for a set of pages, and a reader for
the stats dict that Scrapy logs when a crawl ends.

Used by ``tests/test_e2e_real_pages.py`` and ``benchmarks/crawl_throughput.py``. Only the
standard library (``http.server`` in a thread), so the server runs wherever the tests do.

>>> with PageServer({"/": ServedPage(b"<p>hi</p>")}) as server:
...     from urllib.request import urlopen
...     urlopen(server.url + "/").read(), server.hits
(b'<p>hi</p>', 1)
"""

from __future__ import annotations

import ast
import logging
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

logger = logging.getLogger(__name__)

__all__ = ["PageServer", "ServedPage", "parse_stats_dump"]


@dataclass(frozen=True)
class ServedPage:
    """One response of :class:`PageServer`: body bytes, ``Content-Type`` header, status."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200


class PageServer:
    """Serve *pages* (``{path: ServedPage}``; path with its leading ``/``, query included
    if any) on ``127.0.0.1`` from a ``ThreadingHTTPServer`` in a daemon thread.

    Any other path gets a ``404`` with a small HTML body. HTTP/1.1 with ``Content-Length``,
    so clients keep connections alive. Use as a context manager; :attr:`url` is the base
    URL (``http://127.0.0.1:PORT``, an ephemeral port), :attr:`hits` the number of
    requests answered so far (all statuses).

    :raises ValueError: a path does not start with ``/``.
    """

    def __init__(self, pages: Mapping[str, ServedPage]) -> None:
        for path in pages:
            if not path.startswith("/"):
                raise ValueError(f"pages: path {path!r} must start with '/'")
        self._pages = dict(pages)
        self._lock = threading.Lock()
        self._hits = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def hits(self) -> int:
        with self._lock:
            return self._hits

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("PageServer is not running (use it as a context manager)")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _count(self) -> None:
        with self._lock:
            self._hits += 1

    def __enter__(self) -> Self:
        pages, count = self._pages, self._count

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                page = pages.get(self.path) or ServedPage(b"<html><body><h1>Not found</h1></body></html>", status=404)
                count()
                self.send_response(page.status)
                self.send_header("Content-Type", page.content_type)
                self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                self.wfile.write(page.body)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client killed mid-request (the distributed crawl's SIGKILL) resets
                # its connections: expected, logged at DEBUG instead of a traceback.
                if isinstance(sys.exc_info()[1], ConnectionError):
                    logger.debug("client %s went away", client_address)
                else:
                    super().handle_error(request, client_address)

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="PageServer", daemon=True)
        self._thread.start()
        logger.debug("serving %d pages at %s", len(pages), self.url)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        self._server = self._thread = None


_DATETIME = re.compile(r"datetime\.datetime\([^()]*\)")


def parse_stats_dump(log: str) -> dict[str, Any]:
    """The stats dict from a Scrapy log (the block after ``Dumping Scrapy stats:``).

    ``datetime`` values become None; everything else is read with ``ast.literal_eval``.

    :raises ValueError: the log holds no stats dump (the crawl did not finish).

    >>> parse_stats_dump("x INFO: Dumping Scrapy stats:\\n{'a/b': 3,\\n 'when': "
    ...                  "datetime.datetime(2024, 1, 2, tzinfo=datetime.timezone.utc)}\\nmore")
    {'a/b': 3, 'when': None}
    """
    start = log.rfind("Dumping Scrapy stats:")
    if start < 0:
        raise ValueError("no 'Dumping Scrapy stats' block in the log: the crawl did not finish")
    begin = log.index("{", start)
    end = log.index("}\n", begin) + 1 if "}\n" in log[begin:] else log.rindex("}") + 1
    return ast.literal_eval(_DATETIME.sub("None", log[begin:end]))
