"""The spider middleware that hands each item its page: :class:`CEPRSpiderMiddleware`.

Spiders only yield items such as ``{"url": response.url}``; this middleware attaches to
every item produced from a response what the pipeline needs to clean it:

* from an HTML response (:class:`scrapy.http.HtmlResponse`: ``text/html``,
  ``application/xhtml+xml``, or sniffed as HTML), the raw body with its encoding
  (:class:`~scrapy_cepr.transport.HtmlBytes`: ``response.body`` and the charset Scrapy
  found for it) and the URL. The crawler never decodes the page: the worker does
  (``HtmlBytes.text()`` gives exactly ``response.text``; the pipeline exports that text
  when ``CEPR_KEEP_HTML=True``);
* from any other response (PDF, image, JSON …) or a page larger than
  ``CEPR_MAX_HTML_BYTES``, a *skip* marker with the reason, so the item is still
  exported, with ``cepr_error`` saying why it was not cleaned.

How the HTML travels (:class:`~scrapy_cepr.pagestore.PageRef`):

1. **in the item**, in the field ``CEPR_HTML_FIELD`` (default ``"html"``), when the item
   accepts it: any dict, or a ``scrapy.Item`` / dataclass / attrs class that declares the
   field. The URL goes to ``CEPR_URL_FIELD`` when that field is empty. A copy of the item
   made by another component keeps its page. The field holds the
   :class:`~scrapy_cepr.transport.HtmlBytes` (bytes, with ``.encoding``) until the pipeline
   removes it after extraction, or, with ``CEPR_KEEP_HTML=True``, replaces it by the
   decoded text;
2. **in a side channel** (:class:`~scrapy_cepr.pagestore.PageStore`, one per crawler,
   shared by the middleware and the pipeline) otherwise: item
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
from typing import TYPE_CHECKING, Any, Self

from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured
from scrapy.http import Request, Response
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

from .pagestore import PageRef as PageRef
from .pagestore import PageStore, response_page, try_set
from .pagestore import page_ref as page_ref
from .pagestore import response_encoding as response_encoding
from .pipelines import CEPRPipeline
from .settings import CEPRConfig

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from scrapy.crawler import Crawler

__all__ = ["CEPRSpiderMiddleware", "pipeline_enabled"]
# PageRef, PageStore, page_ref, response_encoding and response_page (scrapy_cepr.pagestore)
# stay importable from here, where they were defined before.

logger = logging.getLogger(__name__)


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
        #: The side channel (:meth:`PageStore.from_crawler`, shared with the pipeline), set at
        #: first use once the pipeline is known to run (or set directly).
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
        if ref.html is not None and try_set(adapter, c.html_field, ref.html):
            return item
        store = self._store()
        if store is not None:
            store.put(item, ref)
        return item

    def _store(self) -> PageStore | None:
        if self.pages is None:
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
            self.pages = PageStore.from_crawler(self.crawler)
        return self.pages


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
    for component in build_component_list(settings.getwithbase("ITEM_PIPELINES")):
        try:
            cls = load_object(component) if isinstance(component, str) else component
        except (ImportError, NameError, ValueError):  # Scrapy reports it when it builds the pipelines
            continue
        if isinstance(cls, type) and issubclass(cls, CEPRPipeline):
            return True
    return False


def _fill(adapter: ItemAdapter, field: str, value: Any) -> None:
    """Set *field* to *value* when the item accepts it and it is empty."""
    if value is not None and not adapter.get(field):
        try_set(adapter, field, value)
