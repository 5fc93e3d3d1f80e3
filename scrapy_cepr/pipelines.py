"""The item pipeline that cleans each scraped page: :class:`CEPRPipeline`.

For every item that :class:`~scrapy_cepr.middlewares.CEPRSpiderMiddleware` gave a page,
the pipeline runs the extraction method (``CEPR_METHOD``, default CEPR-SETPR) in the
configured executor (:mod:`scrapy_cepr.executors`) and fills, through ``itemadapter``
(dicts, ``scrapy.Item``, dataclasses, attrs):

* ``CEPR_TITLE_FIELD`` (``title``): the headline, or None;
* ``CEPR_BODY_FIELD`` (``body``): the main content, plain text, one block per line;
* ``CEPR_ERROR_FIELD`` (``cepr_error``): only when the page was not cleaned, with the
  reason: ``skipped: non-HTML response (application/pdf)``, ``skipped: page too large
  …``, ``failed: NotHTMLError: …``, ``timeout: timed out after 30 s``, ``empty: no main
  content found``.
* ``body_html``: only with ``CEPR_METHOD="wang2009"`` and ``CEPR_STYLED_HTML=True``: the
  article as HTML in its rendered style (when the item class can take the field).

The crawl always goes on: a page that cannot be cleaned is exported with its error, a
warning naming its URL is logged, and a stat is counted. The raw HTML is removed from the
item after extraction unless ``CEPR_KEEP_HTML=True`` (a dict or ``scrapy.Item`` loses the
key; a dataclass or attrs item, whose fields are attributes, gets None). With
``CEPR_KEEP_HTML=True`` the field is exported as the decoded page (``str``, exactly
``response.text``): the page travels as bytes (:class:`~scrapy_cepr.worker.HtmlBytes`)
and is decoded in the crawler only in that case.

Stats (all under ``cepr/``): ``cleaned``, ``empty``, ``failed``, ``timeout``,
``skipped/non_html``, ``skipped/too_large``, ``skipped/no_html`` (an item with no page
attached, e.g. from ``start()``), ``worker_restarts``, ``errors/item_class`` and
``extraction_seconds`` (float: seconds spent extracting, measured in the workers, for
the pages that were cleaned or empty), to compare with the crawl's ``elapsed_time_seconds``.

Item classes: the pipeline writes the title, body and error fields, so a
``scrapy.Item`` / dataclass / attrs class must declare them (and the HTML field when
``CEPR_KEEP_HTML=True``). A class that lacks one is a configuration error: at its first
item with a page, the pipeline logs an error naming the field, the setting and the
class, counts ``cepr/errors/item_class``, raises :class:`ValueError` (Scrapy reports the
item as an error), and closes the spider with reason ``cepr_item_class_error`` rather
than crawl on and lose every page. Items with no page attached are never checked.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.defer import deferred_from_coro

from .core.errors import ExtractionError
from .executors import Executor, ExtractionTimeout, WorkerDied, make_executor
from .middlewares import PageRef, PageStore
from .settings import CEPRConfig
from .worker import HtmlBytes, extract_page

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["CEPRPipeline"]

logger = logging.getLogger(__name__)

_FIELD_SETTINGS = {
    "title_field": "CEPR_TITLE_FIELD",
    "body_field": "CEPR_BODY_FIELD",
    "error_field": "CEPR_ERROR_FIELD",
    "html_field": "CEPR_HTML_FIELD",
}


class CEPRPipeline:
    """Fill the title and body of every item carrying its page (see the module docstring).

    :param crawler: the running crawler; its settings are validated here
        (:meth:`CEPRConfig.from_settings <scrapy_cepr.settings.CEPRConfig.from_settings>`).
    :raises ValueError: a bad ``CEPR_*`` setting, naming it and its value.
    :raises NotConfigured: ``CEPR_ENABLED=False``.

    The function run per page is the class attribute :attr:`worker`
    (:func:`scrapy_cepr.worker.extract_page`); a subclass may replace it with another
    module-level function of the same signature.
    """

    #: ``(html, url, method, params) -> (Extraction.to_dict(), seconds)``.
    worker = staticmethod(extract_page)

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = CEPRConfig.from_settings(crawler.settings)
        if not self.config.enabled:
            raise NotConfigured("CEPR_ENABLED is False")
        self.stats = crawler.stats
        #: The side channel filled by :class:`~scrapy_cepr.middlewares.CEPRSpiderMiddleware`.
        self.pages = PageStore(self.config.max_pending_pages)
        self.executor: Executor | None = None
        self._class_errors: dict[type, str | None] = {}
        self._closing: Any = None
        self._warned_no_html = False
        crawler.signals.connect(self.pages.discard, signal=signals.item_dropped)
        crawler.signals.connect(self.pages.discard, signal=signals.item_error)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CEPRPipeline:
        """Scrapy's constructor hook: ``cls(crawler)``."""
        return cls(crawler)

    # -- life cycle --------------------------------------------------------------------
    async def open_spider(self) -> None:
        """Start the executor (thread/process pools are created here).

        :raises ValueError: a pool executor without an asyncio event loop (a non-asyncio
            ``TWISTED_REACTOR``).
        """
        c = self.config
        if c.executor != "inline" and not is_asyncio_available():
            raise ValueError(f"CEPR_EXECUTOR={c.executor!r} needs Scrapy's asyncio reactor (TWISTED_REACTOR="
                             "'twisted.internet.asyncioreactor.AsyncioSelectorReactor', the default); "
                             "use CEPR_EXECUTOR='inline' with other reactors")
        self.executor = make_executor(c.executor, max_workers=c.max_workers, timeout=c.timeout, method=c.method,
                                      start_method=c.start_method, worker=type(self).worker,
                                      on_restart=self._on_restart)
        await self.executor.start()
        logger.info("CEPR: method %s %s, executor %s (%s), timeout %g s", c.method, c.params_dict or "(defaults)",
                    c.executor, "in the reactor thread" if c.executor == "inline" else f"{c.max_workers} workers",
                    c.timeout)

    async def close_spider(self) -> None:
        """Shut the executor's pools down."""
        if self.executor is not None:
            self.executor.shutdown()
            self.executor = None

    def _on_restart(self, reason: str) -> None:
        self.stats.inc_value("cepr/worker_restarts")

    # -- items -------------------------------------------------------------------------
    async def process_item(self, item: Any) -> Any:
        """Clean *item*'s page and return the item (the same object).

        :raises ValueError: the item's class lacks an output field (see the module
            docstring); nothing else escapes: page errors are recorded in the item.
        """
        c = self.config
        adapter = ItemAdapter(item)
        ref = self.pages.pop(item)  # side channel first, then the item's own field
        if ref is None:
            html = adapter.get(c.html_field)
            if html is None:
                self._no_html(adapter)
                return item
            ref = PageRef(adapter.get(c.url_field), html)
        self._check_class(item)
        url = ref.url or adapter.get(c.url_field)
        if ref.skip is not None:
            self._record(item, adapter, f"skipped/{ref.skip}", ref.reason, url, log=logger.debug)
        else:
            await self._extract(item, adapter, ref.html, url)
        self._finish_html(item, adapter, ref)
        return item

    async def _extract(self, item: Any, adapter: ItemAdapter, html: Any, url: str | None) -> None:
        c = self.config
        size = _size(html, c.max_html_bytes)
        if c.max_html_bytes and size > c.max_html_bytes:
            self._record(item, adapter, "skipped/too_large",
                         f"skipped: page too large ({size} bytes > CEPR_MAX_HTML_BYTES={c.max_html_bytes})", url)
            return
        if not isinstance(html, (str, bytes)):
            self._record(item, adapter, "failed", f"failed: {c.html_field!r} holds {type(html).__name__}, "
                         "not str or bytes", url)
            return
        assert self.executor is not None, "open_spider() was not called"
        try:
            result, seconds = await self.executor.run(html, url, c.method, c.params_dict)
        except ExtractionTimeout as exc:
            self._record(item, adapter, "timeout", f"timeout: {exc}", url)
        except WorkerDied as exc:
            self._record(item, adapter, "failed", f"failed: {exc}", url)
        except ExtractionError as exc:
            self._record(item, adapter, "failed", f"failed: {type(exc).__name__}: {exc}", url)
        except Exception as exc:  # a bug in a method must not stop the crawl
            logger.debug("Extraction error on %s", url, exc_info=True)
            self._record(item, adapter, "failed", f"failed: {type(exc).__name__}: {exc}", url)
        else:
            self.stats.inc_value("cepr/extraction_seconds", seconds, start=0.0)
            self._set(item, adapter, "title_field", result["title"])
            self._set(item, adapter, "body_field", result["body"])
            if "body_html" in result:  # wang2009's styled HTML body (CEPR_STYLED_HTML=True)
                try:
                    adapter["body_html"] = result["body_html"]
                except (KeyError, AttributeError, TypeError):
                    logger.debug("item class %s has no body_html field", type(item).__name__)
            if result["body"]:
                self.stats.inc_value("cepr/cleaned")
            else:
                self._record(item, adapter, "empty", "empty: no main content found", url)

    def _record(self, item: Any, adapter: ItemAdapter, stat: str, message: str | None, url: str | None,
                log: Any = None) -> None:
        """Write *message* to the error field, count ``cepr/<stat>``, log with the URL."""
        self.stats.inc_value(f"cepr/{stat}")
        self._set(item, adapter, "error_field", message)
        (log or logger.warning)("CEPR could not clean %s: %s", url or "(no URL)", message)

    def _set(self, item: Any, adapter: ItemAdapter, attr: str, value: Any) -> None:
        field = getattr(self.config, attr)
        try:
            adapter[field] = value
        except (KeyError, AttributeError, TypeError) as exc:  # undeclared field, frozen item
            cls = type(item)
            message = (f"CEPRPipeline cannot set the field {field!r} ({_FIELD_SETTINGS[attr]}) on items of class "
                       f"{cls.__module__}.{cls.__qualname__}: {exc}")
            self._class_errors[cls] = message
            self._class_error(message)
            raise ValueError(message) from None

    def _finish_html(self, item: Any, adapter: ItemAdapter, ref: PageRef) -> None:
        """Remove the HTML field (default), or make sure it holds the page
        (``CEPR_KEEP_HTML=True``)."""
        field = self.config.html_field
        if self.config.keep_html:
            html = adapter.get(field)
            if html is None and ref.html is not None:
                html = ref.html
            if isinstance(html, HtmlBytes):  # exported as text, as response.text would be
                self._set(item, adapter, "html_field", html.text())
            elif html is not None and html is not adapter.get(field):
                self._set(item, adapter, "html_field", html)
        elif isinstance(item, MutableMapping):  # dict, scrapy.Item: drop the key
            item.pop(field, None)
        elif adapter.get(field) is not None:  # dataclass, attrs: a declared attribute
            adapter[field] = None  # deleting it would break the class (slots, asdict)

    def _no_html(self, adapter: ItemAdapter) -> None:
        self.stats.inc_value("cepr/skipped/no_html")
        if not self._warned_no_html:
            self._warned_no_html = True
            logger.warning("CEPR got an item with no page attached (%s); items not produced from a response, "
                           "or replaced before CEPRPipeline, are not cleaned. Is CEPRSpiderMiddleware enabled "
                           "(ADDONS = {'scrapy_cepr.Addon': 0})? Counted in cepr/skipped/no_html.",
                           adapter.get(self.config.url_field) or type(adapter.item).__name__)

    def _check_class(self, item: Any) -> None:
        """Raise ValueError when *item*'s class cannot take an output field."""
        cls = type(item)
        if cls not in self._class_errors:
            self._class_errors[cls] = _missing_field_message(cls, self.config)
            if self._class_errors[cls] is not None:
                self._class_error(self._class_errors[cls])
        message = self._class_errors[cls]
        if message is not None:
            raise ValueError(message)

    def _class_error(self, message: str) -> None:
        """First error of a class: log it, count it, close the spider."""
        self.stats.inc_value("cepr/errors/item_class")
        logger.error("%s; closing the spider", message)
        try:
            engine = self.crawler.engine
        except RuntimeError:  # not crawling (e.g. a unit test): nothing to close
            engine = None
        if engine is not None and self._closing is None:
            self._closing = deferred_from_coro(engine.close_spider_async(reason="cepr_item_class_error"))


def _missing_field_message(cls: type, config: CEPRConfig) -> str | None:
    """Error message for an item class lacking an output field, or None (dicts and
    classes that declare them all)."""
    names = ItemAdapter.get_field_names_from_class(cls)
    if names is None:  # dict-like: any field
        return None
    attrs = ["title_field", "body_field", "error_field"] + (["html_field"] if config.keep_html else [])
    for attr in attrs:
        field = getattr(config, attr)
        if field not in names:
            setting = _FIELD_SETTINGS[attr]
            return (f"item class {cls.__module__}.{cls.__qualname__} has no field {field!r} ({setting}); "
                    f"declare it (e.g. `{field} = scrapy.Field()`, or a dataclass/attrs field defaulting to "
                    f"None) or set {setting} to one of its fields ({', '.join(names) or 'none'})")
    return None


def _size(html: Any, limit: int) -> int:
    """Size of *html* in bytes: exact for bytes (the response body); for a str (HTML the
    spider attached itself), its UTF-8 size, computed only when it matters for *limit*:
    a str of n characters takes n to 4n bytes."""
    if isinstance(html, bytes):
        return len(html)
    if not isinstance(html, str):
        return 0
    n = len(html)
    if not limit or n > limit or 4 * n <= limit:
        return n
    return len(html.encode("utf-8", "surrogatepass"))
