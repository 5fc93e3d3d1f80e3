"""The spider middleware that hands each item its page: :class:`CEPRSpiderMiddleware`.

Spiders only yield items such as ``{"url": response.url}``; this middleware attaches to
every item produced from a response what the pipeline needs to clean it:

* from an HTML response (:class:`scrapy.http.HtmlResponse`: ``text/html``,
  ``application/xhtml+xml``, or sniffed as HTML), the raw body with its encoding
  (:class:`~scrapy_cepr.worker.HtmlBytes`: ``response.body`` and the charset Scrapy
  found for it) and the URL. The crawler never decodes the page: the worker does
  (``HtmlBytes.text()`` gives exactly ``response.text``; the pipeline exports that text
  when ``CEPR_KEEP_HTML=True``);
* from any other response (PDF, image, JSON …) or a page larger than
  ``CEPR_MAX_HTML_BYTES``, a *skip* marker with the reason, so the item is still
  exported, with ``cepr_error`` saying why it was not cleaned.

How the HTML travels (:class:`PageRef`):

1. **in the item**, in the field ``CEPR_HTML_FIELD`` (default ``"html"``), when the item
   accepts it: any dict, or a ``scrapy.Item`` / dataclass / attrs class that declares the
   field. The URL goes to ``CEPR_URL_FIELD`` when that field is empty. A copy of the item
   made by another component keeps its page. The field holds the
   :class:`~scrapy_cepr.worker.HtmlBytes` (bytes, with ``.encoding``) until the pipeline
   removes it after extraction, or, with ``CEPR_KEEP_HTML=True``, replaces it by the
   decoded text;
2. **in a side channel** (:class:`PageStore`, owned by the pipeline) otherwise: item
   classes without the HTML field, frozen dataclasses, and skip markers. It is keyed by
   the item object itself (its ``id``, with a reference held so the id stays unique),
   emptied by the pipeline, cleaned on the ``item_dropped`` / ``item_error`` signals, and
   bounded by ``CEPR_MAX_PENDING_PAGES`` (the oldest entry is dropped with a warning).
   An item that a component *replaces* by a new object before ``CEPRPipeline`` loses its
   page (counted ``cepr/skipped/no_html``); declare the HTML field to avoid that.

An item whose spider already filled the HTML field is left as it is (the pipeline
cleans that HTML and leaves the field alone). Requests and items from ``start()`` (no
response) pass through untouched.

Per request: ``meta={"cepr": False}`` opts a request's items out (they are exported
with the output fields None and counted ``cepr/skipped/opt_out``); with
``CEPR_OPT_IN=True`` only requests with ``meta={"cepr": True}`` are cleaned, as
scrapy-playwright's ``meta={"playwright": True}``. Non-HTML responses (a JSON API, a
PDF) are not pages to clean: their items are exported with the output fields None and
no error, counted ``cepr/skipped/non_html``.

The middleware is useless without the pipeline (nothing would remove the HTML it
attaches, and a feed exporter cannot write it): when ``ITEM_PIPELINES`` has no
:class:`~scrapy_cepr.pipelines.CEPRPipeline` (e.g. disabled with
``-s 'ITEM_PIPELINES={"scrapy_cepr.pipelines.CEPRPipeline": null}'``), it disables itself
with one warning (:class:`~scrapy.exceptions.NotConfigured`), and items pass untouched.

``scrapy parse --pipelines`` calls the callback without spider middlewares: the
middleware's ``process_spider_input`` remembers each response (a weak reference, keyed
by URL), and the pipeline cleans an item that has no page but whose URL field names a
response still in memory.
"""

from __future__ import annotations

import logging
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, Response, TextResponse
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

from .settings import CEPRConfig
from .worker import HtmlBytes

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler

__all__ = [
    "CEPRSpiderMiddleware",
    "PageRef",
    "PageStore",
    "page_ref",
    "pipeline_enabled",
    "response_encoding",
    "response_page",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PageRef:
    """What the pipeline gets for one item.

    * ``url``: the response URL;
    * ``html``: the page (:class:`~scrapy_cepr.worker.HtmlBytes` from a response;
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
    own lookup, ``_declared_encoding``). Only an undeclared page is decoded, by Scrapy,
    to infer its encoding (UTF-8, else cp1252).

    >>> from scrapy.http import HtmlResponse
    >>> response_encoding(HtmlResponse("http://a.example/", body=b"<p>Hi</p>",
    ...                                headers={"Content-Type": "text/html; charset=GBK"}))
    'gb18030'
    """
    declared = getattr(response, "_declared_encoding", None)  # private; the public property is the fallback
    return (declared() if callable(declared) else None) or response.encoding


def page_ref(response: Response, max_html_bytes: int = 0) -> PageRef:
    """The :class:`PageRef` of *response*: its body and encoding
    (:class:`~scrapy_cepr.worker.HtmlBytes`) when it is an HTML response no larger than
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
    :class:`PageRef`, for items that cannot carry the HTML field.

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


class CEPRSpiderMiddleware:
    """Attach each scraped item's page (HTML body and encoding, URL, or a skip reason) for
    :class:`scrapy_cepr.pipelines.CEPRPipeline` (see the module docstring).

    A Scrapy 2.13+ spider middleware: ``process_spider_output`` is an asynchronous
    generator, so it takes the output of sync and async callbacks alike (Scrapy wraps a
    sync callback's output). Requests and objects that are not items pass through.

    :raises ValueError: (at start-up) a bad ``CEPR_*`` setting.
    :raises NotConfigured: ``CEPR_ENABLED=False``.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = CEPRConfig.from_crawler(crawler)
        if not self.config.enabled:
            raise NotConfigured("CEPR_ENABLED is False")
        if not pipeline_enabled(crawler.settings):
            raise NotConfigured("scrapy_cepr.pipelines.CEPRPipeline is not in ITEM_PIPELINES, so no HTML is "
                                "attached to items and nothing is cleaned (enable both with "
                                "ADDONS = {'scrapy_cepr.Addon': 0})")
        #: The side channel; found on the pipeline at first use (or set directly).
        self.pages: PageStore | None = None
        self._missing_pipeline_logged = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        """Build the middleware from the crawler's settings (``CEPR_*``)."""
        return cls(crawler)

    def process_spider_input(self, response: Response) -> None:
        """Remember *response* by URL (weakly), for items that reach the pipeline
        without passing through :meth:`process_spider_output` (``scrapy parse``)."""
        store = self._store()
        if store is not None:
            store.responses[response.url] = response

    async def process_spider_output(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """Yield every object of the callback's *result*, with the page of *response*
        attached to each item (:meth:`get_processed_item`)."""
        async for obj in result:
            yield obj if isinstance(obj, Request) else self.get_processed_item(obj, response)

    def get_processed_item(self, item: Any, response: Response | None) -> Any:
        """Attach *response*'s page to *item* (in place) and return it."""
        if response is None or not ItemAdapter.is_item(item):
            return item
        c = self.config
        adapter = ItemAdapter(item)
        if adapter.get(c.html_field) is not None:  # the spider attached its own HTML
            return item
        ref = response_page(response, c)
        _fill(adapter, c.url_field, ref.url)
        if ref.html is not None and _try_set(adapter, c.html_field, ref.html):
            return item
        store = self._store()
        if store is not None:
            store.put(item, ref)
        return item

    def _store(self) -> PageStore | None:
        if self.pages is None:
            from .pipelines import CEPRPipeline

            try:
                pipeline = self.crawler.get_item_pipeline(CEPRPipeline)
            except RuntimeError:  # no engine: not crawling
                pipeline = None
            if pipeline is None:
                if not self._missing_pipeline_logged:
                    self._missing_pipeline_logged = True
                    logger.error("CEPRSpiderMiddleware found no scrapy_cepr.pipelines.CEPRPipeline instance "
                                 "(enable both with ADDONS = {'scrapy_cepr.Addon': 0}); items that cannot "
                                 "carry the %r field will not be cleaned", self.config.html_field)
                return None
            self.pages = pipeline.pages
        return self.pages


def response_page(response: Response, config: CEPRConfig) -> PageRef:
    """The :class:`PageRef` of *response* (:func:`page_ref`), or an ``opt_out`` skip
    marker when its request's ``meta["cepr"]`` is False (or not True with
    ``CEPR_OPT_IN``)."""
    request = response.request
    wanted = request.meta.get("cepr") if request is not None else None
    if wanted is False or (config.opt_in and wanted is not True):
        return PageRef(response.url, None, "opt_out", "skipped: opted out (request meta 'cepr')")
    return page_ref(response, config.max_html_bytes)


def pipeline_enabled(settings: Any) -> bool:
    """Whether ``ITEM_PIPELINES`` (with its base and the add-ons' changes) enables
    :class:`~scrapy_cepr.pipelines.CEPRPipeline` or a subclass of it (a component set
    to None is disabled, as Scrapy does).

    >>> from scrapy.settings import Settings
    >>> pipeline_enabled(Settings({"ITEM_PIPELINES": {"scrapy_cepr.pipelines.CEPRPipeline": 100}}))
    True
    >>> pipeline_enabled(Settings({"ITEM_PIPELINES": {"scrapy_cepr.pipelines.CEPRPipeline": None}}))
    False
    """
    from .pipelines import CEPRPipeline

    for component in build_component_list(settings.getwithbase("ITEM_PIPELINES")):
        try:
            cls = load_object(component) if isinstance(component, str) else component
        except (ImportError, NameError, ValueError):  # Scrapy reports it when it builds the pipelines
            continue
        if isinstance(cls, type) and issubclass(cls, CEPRPipeline):
            return True
    return False


def _try_set(adapter: ItemAdapter, field: str, value: Any) -> bool:
    """Set *field* if the item accepts it (False for an undeclared field of a
    ``scrapy.Item``/dataclass/attrs class, or a frozen item)."""
    try:
        adapter[field] = value
    except (KeyError, AttributeError, TypeError, ValueError):
        return False
    return True


def _fill(adapter: ItemAdapter, field: str, value: Any) -> None:
    """Set *field* to *value* when the item accepts it and it is empty."""
    if value is not None and not adapter.get(field):
        _try_set(adapter, field, value)
