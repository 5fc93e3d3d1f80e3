"""The work unit run by every executor, :func:`extract_page`, and the main loop of a
process worker, :func:`serve`.

It lives in its own small module so that a process worker (a fresh interpreter running
:func:`serve`, or a ``spawn``/``forkserver`` worker of the fallback pool) imports only
the extraction core, never Scrapy or Twisted. It takes and returns plain data: the page
as :class:`~scrapy_cepr.transport.HtmlBytes` (the response body and its encoding; what the spider middleware
attaches), ``bytes`` or ``str``, and the :class:`~scrapy_cepr.options.ExtractOptions`
in; a :class:`~scrapy_cepr.options.PageResult` and a float out (lxml trees and numpy
arrays never cross the process boundary).

Why bytes: the crawler then never decodes a page, and sending it to a worker process
is a write of the body as it is (:mod:`scrapy_cepr.transport`; a ``str`` is encoded to
UTF-8 on the way out and decoded again on the way in).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import time
from dataclasses import replace
from typing import Any

from .api import extract, extract_with_page, with_confidence
from .core.page import Page
from .core.pagetype import most_probable, page_type
from .methods import get_method
from .options import ExtractOptions, PageResult
from .transport import HtmlBytes as HtmlBytes  # defined there before issue 19

__all__ = ["extract_page", "init_process_worker", "ping", "run_set_up", "serve", "warm_up"]


def extract_page(html: str | bytes, url: str | None, options: ExtractOptions) -> tuple[PageResult, float]:
    """Extract one page with :func:`scrapy_cepr.extract` as *options* say.

    :param html: the page: :class:`HtmlBytes` (decoded by the core with its
        ``encoding`` as the transport charset), other ``bytes`` (BOM, ``<meta charset>``,
        UTF-8), or ``str``.
    :param url: the page URL (for the core's result; not sent back).
    :param options: the method and its parameters, the body formats (computed here
        while the page is parsed: :func:`scrapy_cepr.core.formats.body_html` on the page
        already in memory), the metadata (:func:`scrapy_cepr.core.metadata.extract_metadata`),
        the byline (:func:`scrapy_cepr.core.metadata.move_byline`) and whether to detect
        the page type (:func:`scrapy_cepr.core.pagetype.page_type` on the same parse, or
        the method's own page-type probabilities).
    :returns: ``(result, seconds)``: the :class:`~scrapy_cepr.options.PageResult` (title,
        body, page type, and in ``extras`` only what was asked for, to keep the way back
        small) and the wall-clock seconds the extraction took in the worker.
    :raises NotHTMLError: the input is not HTML (binary, JSON, text without markup).
    :raises ValueError: bad method or parameters.

    >>> result, seconds = extract_page("<html><body><h1>Hi</h1><p>One, two. Three.</p></body></html>",
    ...                                "http://example.com/a", ExtractOptions("setpr"))
    >>> result.title, result.extras, seconds >= 0
    ('Hi', {}, True)
    >>> result, _ = extract_page("<html><body><h1>Hi</h1><p>One, <a href='/x'>two</a>. Three.</p></body></html>",
    ...                          "http://example.com/a", ExtractOptions("setpr", formats=("html", "markdown")))
    >>> result.extras["body_html"], result.extras["body_markdown"]
    ('<p>One, <a href="http://example.com/x">two</a>. Three.</p>', 'One, [two](http://example.com/x). Three.')
    """
    start = time.perf_counter()
    # scrapy_cepr.extract(), with the parsed page kept for the page type and the body
    # formats (one parse; the lazy Extraction.body_html would parse the page again).
    page, extraction = extract_with_page(html, url=url, method=options.method, encoding=getattr(html, "encoding", None),
                                         **options.params_dict)
    kind = None
    if options.page_type:  # the method's own page-type probabilities, else the classifier on this parse
        kind = most_probable(dict(extraction.page_types)) if extraction.page_types is not None else page_type(page)
    fallback = None
    if (options.fallback_method is not None and options.min_confidence is not None
            and extraction.confidence is not None and extraction.confidence < options.min_confidence):
        extraction, fallback = _fallback(page, extraction, options.fallback_method)
    result = PageResult(title=extraction.title, body=extraction.body, page_type=kind,
                        confidence=extraction.confidence, fallback=fallback)
    for name in options.extras():  # the method's declared extras (Method.extras)
        value = getattr(extraction, name, None)
        if value is not None:
            result.extras[name] = value
    if options.formats or options.metadata or options.byline != "keep":
        _add_formats(result, page, extraction, url, options)
    return result, time.perf_counter() - start


def _fallback(page: Page, primary: Any, method: str) -> tuple[Any, str]:
    """Run *method* (default parameters) on the *page* that gave *primary*, and return
    the result with the higher confidence (the primary on a tie, or when the fallback
    has no body) and ``"fallback"`` or ``"primary"``. The page-type probabilities of
    the primary are reused."""
    spec = get_method(method)
    other = spec.run(page, spec.make_params())
    if other.source is None:
        other = replace(other, source=page.source)
    other = with_confidence(page, other, primary.page_types)
    if other.confidence is not None and other.confidence > primary.confidence:
        return other, "fallback"
    return primary, "primary"


def _add_formats(result: PageResult, page: Page, extraction: Any, url: str | None, options: ExtractOptions) -> None:
    """Add the body formats and the metadata that *options* ask for to *result*, from
    the *page* the method just ran on."""
    from .core.formats import body_html as page_body_html
    from .core.formats import html_to_markdown, lines_html

    formats, out = options.formats, result.extras
    if "html" in formats or "markdown" in formats:
        nodes = extraction.nodes
        if not extraction.body:
            out["body_html"] = ""
        elif nodes is not None and nodes.path_ids is not None and len(nodes) == len(page.texts):
            out["body_html"] = page_body_html(page, nodes.keep)
        else:
            out["body_html"] = lines_html(extraction.body)
    meta = None
    if options.metadata or options.byline == "move":
        from .core.metadata import extract_metadata

        meta = extract_metadata(page.source, url=url, headline=extraction.title, content_html=out.get("body_html"),
                                page_types=extraction.page_types)
    if options.byline == "move" and meta is not None:
        from .core.metadata import move_byline

        result.body, line = move_byline(extraction.body, meta["authors"])
        if line is not None and "body_html" in out:
            out["body_html"] = _drop_block(out["body_html"], line)
    if "markdown" in formats:
        out["body_markdown"] = html_to_markdown(out["body_html"])
    if "html" not in formats:
        out.pop("body_html", None)
    if options.metadata:
        out["metadata"] = meta


def _drop_block(body_html: str, line: str) -> str:
    """*body_html* without the first block (one per line) whose text is *line*."""
    from lxml import html as lxml_html

    blocks = body_html.split("\n")
    for i, block in enumerate(blocks):
        try:
            text = " ".join(lxml_html.fragment_fromstring(block).text_content().split())
        except (ValueError, TypeError):  # not a single element
            continue
        if text == line:
            return "\n".join(blocks[:i] + blocks[i + 1:])
    return body_html


def warm_up(method: str) -> int:
    """Import *method*'s module and run it once on a tiny page, so that one-off
    initialisation (imports, tables built on first use) is not
    charged to the first real page and its timeout; or, if the method's module has its
    own ``warm_up()``, call that instead (``wang2009``: loads its models but starts no
    browser, which pages rendered by scrapy-playwright never need; the first page to
    render starts it). Returns 0.

    >>> warm_up("setpr")
    0
    """
    from .core.confidence import load_model

    load_model()  # the confidence model, read for every page
    own = get_method(method).warm_up
    if own is not None:
        own()
        return 0
    extract("<html><body><h1>Warm up</h1><p>One, two. Three; four.</p></body></html>", method=method)
    return 0


#: The worker function and options of a fallback-pool worker process
#: (:func:`init_process_worker`); set once per process, before its first page.
_SET_UP: dict[str, Any] = {}


def init_process_worker(worker: Any, options: ExtractOptions) -> None:
    """Initializer of a fallback-pool process worker: ignore SIGINT (Ctrl-C is the
    crawler's to handle: it closes the pool; a worker dying of KeyboardInterrupt would
    break the pool and fail the pages in flight), keep *worker* and *options* for
    :func:`run_set_up`, then :func:`warm_up` the method."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _SET_UP.update(worker=worker, options=options)
    warm_up(options.method)


def run_set_up(html: str | bytes, url: str | None, overrides: dict[str, Any] | None) -> tuple[Any, float]:
    """One page in a fallback-pool worker: the worker function of
    :func:`init_process_worker` with its options and the page's *overrides*."""
    options = _SET_UP["options"]
    return _SET_UP["worker"](html, url, options.replace(**overrides) if overrides else options)


def ping() -> int:
    """A no-op task used to start pool workers before the first page arrives; returns 0."""
    return 0


def serve() -> None:
    """Main loop of a process worker started by :class:`scrapy_cepr.executors.ProcessExecutor`
    (``python -c "from scrapy_cepr.worker import serve; serve()"``): read requests on
    standard input, answer on standard output (frames of :mod:`scrapy_cepr.transport`),
    until standard input is closed (the crawler closed it, or died). Returns then.

    The first request names the worker function and the
    :class:`~scrapy_cepr.options.ExtractOptions` (sent once): the worker ignores SIGINT
    (Ctrl-C is the crawler's to handle), :func:`warm_up` s the method and answers
    ``(True, pid)``, or ``(False, exception)`` if it could not. Each page request (the
    page, its URL and its overrides) is then answered with ``(True, worker(html, url,
    options))`` or ``(False, exception)``:
    an exception fails that page only. The pipes are moved off file descriptors 0 and 1
    first, so that a stray ``print()`` (to stderr now) cannot corrupt a frame.
    """
    from .transport import REQUEST_HEADER, decode_request, encode_reply

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def read_request() -> tuple[bytes, bytes] | None:
        head = requests.read(REQUEST_HEADER.size)
        if len(head) < REQUEST_HEADER.size:
            return None  # end of input: the crawler is done (or gone)
        meta_len, body_len = REQUEST_HEADER.unpack(head)
        meta, body = requests.read(meta_len), requests.read(body_len)
        if len(meta) < meta_len or len(body) < body_len:
            return None
        return meta, body

    first = read_request()
    if first is None:
        return
    try:
        worker, options = pickle.loads(first[0])
        warm_up(options.method)
        reply = encode_reply(True, os.getpid())
    except Exception as exc:
        worker, reply = None, encode_reply(False, exc)
    replies.write(reply)
    replies.flush()
    if worker is None:
        return
    while (request := read_request()) is not None:
        try:
            html, url, overrides = decode_request(*request)
            reply = encode_reply(True, worker(html, url, options.replace(**overrides) if overrides else options))
        except Exception as exc:  # this page fails, the worker goes on
            reply = encode_reply(False, exc)
        try:
            replies.write(reply)
            replies.flush()
        except BrokenPipeError:  # the crawler is gone
            return
