"""What the spider middleware hands the pipeline for each item: :class:`PageRef` (the
page of a response, or why it is skipped), and the crawler-scoped side channel
:class:`PageStore` that carries it for items that cannot hold the HTML field.

Owned by neither :class:`~scrapy_cepr.middlewares.CEPRSpiderMiddleware` nor
:class:`~scrapy_cepr.pipelines.CEPRPipeline`: both get the same store from
:meth:`PageStore.from_crawler`, so neither imports the other for it.
"""

from __future__ import annotations

import logging
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from itemadapter import ItemAdapter
from scrapy.http import HtmlResponse, Response, TextResponse
from w3lib.encoding import resolve_encoding

from .core.page import is_utf8
from .settings import CEPRConfig
from .transport import HtmlBytes

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["PageRef", "PageStore", "page_ref", "response_encoding", "response_page", "try_set"]

logger = logging.getLogger(__name__)

#: The crawler attribute that holds the crawler's :class:`PageStore`.
_CRAWLER_ATTR = "_scrapy_cepr_page_store"


@dataclass(frozen=True, slots=True)
class PageRef:
    """What the pipeline gets for one item.

    * ``url``: the response URL;
    * ``html``: the page (:class:`~scrapy_cepr.transport.HtmlBytes` from a response;
      ``str`` or ``bytes`` accepted), or None when skipped;
    * ``skip``: None, or the stat suffix of the skip reason (``"non_html"``,
      ``"too_large"``, ``"opt_out"``), counted as ``cepr/skipped/<skip>``;
    * ``reason``: why it was skipped (written to ``cepr_error`` for ``too_large``, only
      logged at DEBUG for the others, which are not errors).
    """

    url: str | None
    html: str | bytes | None = None
    skip: str | None = None
    reason: str | None = None


def response_encoding(response: TextResponse) -> str:
    """The character encoding of *response*, as :attr:`TextResponse.encoding
    <scrapy.http.TextResponse.encoding>` gives it, without decoding the body when the
    page declares its charset (HTTP ``Content-Type``, BOM or ``<meta charset>``: Scrapy's
    own lookup, ``_declared_encoding``). An undeclared page's encoding is inferred by
    Scrapy's own detector (``_auto_detect_fun``: ASCII, UTF-8, else charset-normalizer),
    as ``TextResponse.encoding`` does but without then decoding the whole body into the
    ``response.text`` it caches (a second full decode of the page, ~0.15 ms per 170 kB
    page, that nothing reads: the worker decodes the page itself).

    >>> from scrapy.http import HtmlResponse
    >>> response_encoding(HtmlResponse("http://a.example/", body=b"<p>Hi</p>",
    ...                                headers={"Content-Type": "text/html; charset=GBK"}))
    'gb18030'
    >>> response_encoding(HtmlResponse("http://a.example/", body="<p>café</p>".encode()))
    'utf-8'
    """
    declared = getattr(response, "_declared_encoding", None)  # private; the public property is the fallback
    found = declared() if callable(declared) else None
    if found:
        return found
    detect = getattr(response, "_auto_detect_fun", None)
    default = getattr(response, "_DEFAULT_ENCODING", None)
    if not callable(detect) or not isinstance(default, str):
        return response.encoding
    # What w3lib's html_to_unicode returns when nothing is declared (the BOM, the HTTP
    # header and <meta> were looked up above): the detector's answer, else the default.
    found = _detect_encoding(response.body, default, detect) or default
    return found + "-be" if found in ("utf-16", "utf-32") else found


def _detect_encoding(body: bytes, default: str, detect: Any) -> str | None:
    """Scrapy's ``TextResponse._auto_detect_fun`` (*detect*) on *body*: *default*
    (``"ascii"``) if it decodes, else UTF-8 if it decodes, else *detect*'s answer
    (charset-normalizer), without building the decoded text of the first two: ASCII is
    ``bytes.isascii()``, UTF-8 is checked in 64 kB pieces, whose text is dropped at once
    (a whole 170 kB page decoded into a ``str`` costs more in memory traffic than the
    check itself)."""
    if default == "ascii" and body.isascii():
        return resolve_encoding("ascii")
    if default == "ascii" and is_utf8(body):
        return resolve_encoding("utf-8")
    found = detect(body)
    return found if isinstance(found, str) else None


def page_ref(response: Response, max_html_bytes: int = 0) -> PageRef:
    """The :class:`PageRef` of *response*: its body and encoding
    (:class:`~scrapy_cepr.transport.HtmlBytes`) when it is an HTML response no larger than
    *max_html_bytes* bytes (0 = no limit), else a skip marker.

    >>> from scrapy.http import HtmlResponse, Response, TextResponse
    >>> ref = page_ref(HtmlResponse("http://a.example/", body=b"<p>Hi</p>", encoding="utf-8"))
    >>> ref.html, ref.html.encoding
    (b'<p>Hi</p>', 'utf-8')
    >>> page_ref(Response("http://a.example/f.pdf", headers={"Content-Type": "application/pdf"})).reason
    'skipped: non-HTML response (application/pdf)'
    >>> page_ref(HtmlResponse("http://a.example/", body=b"<p>Hi</p>"), max_html_bytes=4).skip
    'too_large'
    """
    url = response.url
    if not isinstance(response, HtmlResponse):
        ctype = response.headers.get(b"Content-Type")
        label = ctype.decode("latin-1").split(";")[0].strip() if ctype else f"no Content-Type, {type(response).__name__}"
        return PageRef(url, None, "non_html", f"skipped: non-HTML response ({label})")
    size = len(response.body)
    if max_html_bytes and size > max_html_bytes:
        return PageRef(url, None, "too_large",
                       f"skipped: page too large ({size} bytes > CEPR_MAX_HTML_BYTES={max_html_bytes})")
    return PageRef(url, HtmlBytes(response.body, response_encoding(response)))


class PageStore:
    """The bounded side channel from the middleware to the pipeline: item object ->
    :class:`PageRef`, for items that cannot carry the HTML field. One per crawler
    (:meth:`from_crawler`).

    :param max_size: entries kept at most (``CEPR_MAX_PENDING_PAGES``); beyond it the
        oldest entry is dropped with a warning (its item is then counted
        ``cepr/skipped/no_html``).

    >>> store = PageStore(1)
    >>> a, b = object(), object()
    >>> store.put(a, PageRef("http://a.example/", "<p>a</p>"))
    >>> store.put(b, PageRef("http://b.example/", "<p>b</p>"))  # evicts a
    >>> store.pop(a) is None, store.pop(b).url, len(store)
    (True, 'http://b.example/', 0)
    """

    def __init__(self, max_size: int = 1000) -> None:
        if max_size < 1:
            raise ValueError(f"max_size must be an int >= 1, got {max_size!r}")
        self.max_size = max_size
        self.evicted = 0
        self._pages: OrderedDict[int, tuple[Any, PageRef]] = OrderedDict()
        #: URL -> response, for responses still in memory (weak references: this never
        #: keeps a page alive). Read by the pipeline for items without a page.
        self.responses: weakref.WeakValueDictionary[str, Response] = weakref.WeakValueDictionary()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """The store of *crawler*, made on first call (size ``CEPR_MAX_PENDING_PAGES``)
        and kept on the crawler, so that the middleware and the pipeline of one crawler
        share it and two crawlers of one process do not.

        :raises ValueError: a bad ``CEPR_*`` setting (:class:`~scrapy_cepr.settings.CEPRConfig`).
        """
        store = getattr(crawler, _CRAWLER_ATTR, None)
        if not isinstance(store, cls):
            store = cls(CEPRConfig.from_crawler(crawler).max_pending_pages)
            setattr(crawler, _CRAWLER_ATTR, store)
        return store

    def __len__(self) -> int:
        return len(self._pages)

    def put(self, item: Any, ref: PageRef) -> None:
        """Remember *ref* for *item* (replacing an older entry of the same item)."""
        key = id(item)
        self._pages[key] = (item, ref)
        self._pages.move_to_end(key)
        while len(self._pages) > self.max_size:
            _, (_, old) = self._pages.popitem(last=False)
            self.evicted += 1
            if self.evicted <= 5 or self.evicted % 1000 == 0:  # rate-limited: the first 5, then every 1000th
                logger.warning("Dropped the page of %s from the CEPR side channel (CEPR_MAX_PENDING_PAGES=%d "
                               "reached; are items dropped or replaced before CEPRPipeline?); %d pages dropped "
                               "so far", old.url, self.max_size, self.evicted)

    def pop(self, item: Any) -> PageRef | None:
        """Remove and return the :class:`PageRef` of *item*, or None."""
        entry = self._pages.get(id(item))
        if entry is None or entry[0] is not item:
            return None
        del self._pages[id(item)]
        return entry[1]

    def discard(self, item: Any) -> None:
        """Forget *item* (signal handler of ``item_dropped`` and ``item_error``)."""
        self.pop(item)


def response_page(response: Response, config: CEPRConfig) -> PageRef:
    """The :class:`PageRef` of *response* (:func:`page_ref`), or an ``opt_out`` skip
    marker when its request's ``meta["cepr"]`` is False (or not True with
    ``CEPR_OPT_IN``)."""
    request = response.request
    wanted = request.meta.get("cepr") if request is not None else None
    if wanted is False or (config.opt_in and wanted is not True):
        return PageRef(response.url, None, "opt_out", "skipped: opted out (request meta 'cepr')")
    return page_ref(response, config.max_html_bytes)


def try_set(adapter: ItemAdapter, field: str, value: Any) -> bool:
    """Set *field* if the item accepts it (False for an undeclared field of a
    ``scrapy.Item``/dataclass/attrs class, or a frozen item)."""
    try:
        adapter[field] = value
    except (KeyError, AttributeError, TypeError, ValueError):
        return False
    return True
