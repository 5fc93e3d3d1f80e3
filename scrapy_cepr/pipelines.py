"""The item pipeline that cleans each scraped page: :class:`CEPRPipeline`.

For every item that :class:`~scrapy_cepr.middlewares.CEPRSpiderMiddleware` gave a page,
the pipeline runs the extraction method (``CEPR_METHOD``, default CEPR-Typed, ``cepr-typed``) in the
configured executor (:mod:`scrapy_cepr.executors`) and fills, through ``itemadapter``
(dicts, ``scrapy.Item``, dataclasses, attrs):

* ``CEPR_TITLE_FIELD`` (``title``): the headline, or None;
* ``CEPR_BODY_FIELD`` (``body``): the main content, plain text, one block per line;
* ``CEPR_ERROR_FIELD`` (``cepr_error``): None, or, when a page was not cleaned, the
  reason: ``skipped: page too large …``, ``failed: NotHTMLError: …``, ``timeout: timed
  out after 30 s``, ``empty: no main content found``;
* ``CEPR_PAGE_TYPE_FIELD`` (``page_type``): one of ``"article"``, ``"forum"``,
  ``"product"``, ``"collection"``, ``"listing"``, ``"documentation"``, ``"service"``
  (:mod:`scrapy_cepr.core.pagetype`), None when not detected; not written with
  ``CEPR_NON_ARTICLE="keep"``; with ``"drop"`` every type but ``"article"`` is dropped.
  Optional on item classes: a class that does not declare it does not get it.
* ``cepr_confidence``: the predicted word F1 of the body in [0, 1]
  (:mod:`scrapy_cepr.core.confidence`), None for an empty body or a method without one;
  optional on item classes. With ``CEPR_MIN_CONFIDENCE`` set, a page below it is marked
  (``cepr_error`` = ``low-confidence: 0.42`` when it has no other error), dropped, or
  re-run with ``CEPR_FALLBACK_METHOD`` (``CEPR_LOW_CONFIDENCE``).
* ``body_html``, ``body_markdown`` (``CEPR_BODY_FORMATS``), ``metadata``
  (``CEPR_METADATA``) and ``body_styled_html`` (``CEPR_METHOD="wang2009"`` with
  ``CEPR_STYLED_HTML=True``: the article as HTML in its rendered style), when asked for.

``CEPR_ITEM_SCHEMA="zyte"`` replaces each cleaned page's item by a ``dict`` in
zyte-common-items' ``Article`` shape (:mod:`scrapy_cepr.schema`; the error, the page
type and the spider's own fields beside it; docs/formats.rst); items that were not
pages to clean keep the fields below.

**Every item that reaches the pipeline carries every output field** (None when absent),
in that order, so that a CSV feed (whose header is the first item's keys) has the same
columns on every row. Non-HTML responses (a JSON API …) and requests opted out with
``meta={"cepr": False}`` are not errors: their items get the fields None.

**A spider's own values** (``CEPR_OVERWRITE``), for every output field above (title,
body, error, page type, ``body_html``, ``body_markdown``, ``metadata``,
``body_styled_html``): by default (``"fill"``) the pipeline writes a field only where
the spider left it empty (None or ""); ``"keep"`` never touches a field the spider set;
``"overwrite"`` always writes, with one warning per field the first time a spider's
value is replaced. A None value (a failed page's title, a cleaned page's error) never
replaces a spider's value, whatever the policy. A spider's own HTML field is
cleaned but never removed: only the HTML the middleware attached is removed.

The crawl always goes on: a page that cannot be cleaned is exported with its error, a
warning naming its URL is logged (the first ``CEPR_WARN_LIMIT`` of each kind; the rest
are counted), and a stat is counted. At close, one INFO line sums the crawl up (items,
cleaned, non-article, empty, failed, skipped, pages/s, extraction time and its share of
the wall time). The HTML the middleware attached is removed from the item after
extraction unless ``CEPR_KEEP_HTML=True`` (a dict or ``scrapy.Item`` loses the key; a
dataclass or attrs item, whose fields are attributes, gets None). With
``CEPR_KEEP_HTML=True`` the field is exported as the decoded page (``str``, exactly
``response.text``): the page travels as bytes (:class:`~scrapy_cepr.transport.HtmlBytes`)
and is decoded in the crawler only in that case.

Order: the add-on places the pipeline at priority 100
(:data:`scrapy_cepr.addon.PIPELINE_PRIORITY`), before the template pipeline of
``scrapy startproject`` (300) and typical storage pipelines, which thus see cleaned
items.

Stats (all under ``cepr/``): ``cleaned``, ``non_article``, ``empty``, ``failed``,
``timeout``, ``skipped/non_html``, ``skipped/opt_out``, ``skipped/too_large``,
``skipped/no_html`` (an item with no page attached, e.g. from ``start()``),
``page_type/<type>``, ``dropped/non_article``, ``dropped/item_class``,
``confidence/<tenth>`` (``0.0`` … ``0.9``: pages per tenth of confidence, the
histogram line at close), ``low_confidence``, ``dropped/low_confidence``,
``fallback/kept_fallback``, ``fallback/kept_primary``,
``worker_restarts``, ``errors/item_class`` and
``extraction_seconds`` (float: seconds spent extracting, measured in the workers, for
the pages that were cleaned or empty), to compare with the crawl's ``elapsed_time_seconds``.

Item classes: the pipeline writes the title, body and error fields, so a
``scrapy.Item`` / dataclass / attrs class must declare them (and the fields of
``CEPR_BODY_FORMATS`` and ``CEPR_METADATA``). With ``CEPR_KEEP_HTML=True`` the HTML is
exported only on classes that declare the HTML field: the items of a class without it
are cleaned and exported without their HTML (one warning per class). A class that lacks one is a configuration error: at its first
item with a page, the pipeline logs an error naming the field, the setting and the
class once (no traceback), counts ``cepr/errors/item_class``, and closes the spider with
reason ``cepr_item_class_error`` rather than crawl on and lose every page; the items of
that class still in flight are dropped quietly (:class:`~scrapy.exceptions.DropItem` at
DEBUG level, counted ``cepr/dropped/item_class``). Items with no page attached are
never checked.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.defer import deferred_from_coro

from .core.errors import ExtractionError
from .discovery import CANONICAL_FIELD
from .executors import Executor, ExtractionTimeout, WorkerDied, make_executor
from .options import PageResult
from .pagestore import PageRef, PageStore, response_page
from .pagestore import try_set as _try_set
from .settings import CEPRConfig, OutputField
from .transport import HtmlBytes
from .worker import extract_page

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["CEPRPipeline"]

logger = logging.getLogger(__name__)

#: Skips that are not errors: no cepr_error, a DEBUG message.
_QUIET_SKIPS = frozenset({"non_html", "opt_out"})


class CEPRPipeline:
    """Fill the title and body of every item carrying its page (see the module docstring).

    :param crawler: the running crawler; its settings are validated here
        (:meth:`CEPRConfig.from_crawler <scrapy_cepr.settings.CEPRConfig.from_crawler>`:
        the settings, with the spider's ``custom_settings`` and ``cepr_method``).
    :raises ValueError: a bad ``CEPR_*`` setting, naming it and its value.
    :raises NotConfigured: ``CEPR_ENABLED=False``.

    The function run per page is the class attribute :attr:`worker`
    (:func:`scrapy_cepr.worker.extract_page`); a subclass may replace it with another
    module-level function of the same signature.
    """

    #: ``(html, url, options) -> (PageResult, seconds)``
    #: (:class:`~scrapy_cepr.options.ExtractOptions`, :class:`~scrapy_cepr.options.PageResult`).
    worker = staticmethod(extract_page)

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.config = CEPRConfig.from_crawler(crawler)
        if not self.config.enabled:
            raise NotConfigured("CEPR_ENABLED is False")
        self.stats = crawler.stats
        #: The side channel filled by :class:`~scrapy_cepr.middlewares.CEPRSpiderMiddleware`.
        self.pages = PageStore.from_crawler(crawler)
        self.executor: Executor | None = None
        self._class_errors: dict[type, str | None] = {}
        self._closing: Any = None
        self._warned_no_html = False
        self._warned_replaced: set[str] = set()
        self._warned_no_html_field: set[type] = set()
        #: Per-page warnings logged so far, per kind (rate limit: CEPR_WARN_LIMIT).
        self._warnings: Counter[str] = Counter()
        self._started: float | None = None
        #: The output fields written on every item, in export order, with their item field
        #: names (:data:`scrapy_cepr.settings.OUTPUT_FIELDS`).
        self._outputs = self.config.outputs()
        crawler.signals.connect(self.pages.discard, signal=signals.item_dropped)
        crawler.signals.connect(self.pages.discard, signal=signals.item_error)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CEPRPipeline:
        """Scrapy's constructor hook: ``cls(crawler)``."""
        return cls(crawler)

    # -- life cycle --------------------------------------------------------------------
    async def open_spider(self) -> None:
        """Create the executor. A thread/process pool is not started here: pages are
        cleaned inline until ``CEPR_POOL_AFTER_SECONDS`` of extraction time, then the
        pool starts in the background (:class:`scrapy_cepr.executors.LazyPoolExecutor`),
        so ``scrapy shell`` and small crawls never start workers.

        :raises ValueError: a pool executor without an asyncio event loop (a non-asyncio
            ``TWISTED_REACTOR``).
        """
        c = self.config
        if c.executor != "inline" and not is_asyncio_available():
            raise ValueError(f"CEPR_EXECUTOR={c.executor!r} needs Scrapy's asyncio reactor (TWISTED_REACTOR="
                             "'twisted.internet.asyncioreactor.AsyncioSelectorReactor', the default); "
                             "use CEPR_EXECUTOR='inline' with other reactors")
        self.executor = make_executor(c.executor, max_workers=c.max_workers, timeout=c.timeout, options=c.options,
                                      start_method=c.start_method, worker=type(self).worker,
                                      on_restart=self._on_restart, pool_after_seconds=c.pool_after_seconds)
        await self.executor.start()
        self._started = time.monotonic()
        logger.info("CEPR: method %s %s, executor %s (%s), timeout %g s", c.method, c.params_dict or "(defaults)",
                    c.executor, "in the reactor thread" if c.executor == "inline" else
                    f"{c.max_workers} workers, started after {c.pool_after_seconds:g} s of inline extraction",
                    c.timeout)

    async def close_spider(self) -> None:
        """Shut the executor's pools down and log the summary line."""
        if self.executor is not None:
            executor, self.executor = self.executor, None
            await executor.aclose()
        if self._started is not None:
            logger.info("%s", self.summary(time.monotonic() - self._started))
            histogram = self.confidence_summary()
            if histogram is not None:
                logger.info("%s", histogram)
            self._started = None

    def summary(self, wall_seconds: float) -> str:
        """The closing summary: items by outcome, pages/s and the extraction share of
        the wall time (*wall_seconds* since the spider opened). With a pool the
        extraction seconds are summed over the workers, so the share can exceed 100 %.

        >>> from scrapy.utils.test import get_crawler
        >>> p = CEPRPipeline(get_crawler(settings_dict={"CEPR_EXECUTOR": "inline"}))
        >>> for key, n in (("cleaned", 8), ("empty", 1), ("skipped/non_html", 1)):
        ...     p.stats.set_value(f"cepr/{key}", n)
        >>> p.stats.set_value("cepr/extraction_seconds", 0.5)
        >>> p.summary(2.0)
        'CEPR summary: 10 items: 8 cleaned, 0 non-article, 1 empty, 0 failed, 0 timeout, 1 skipped (non_html 1); 5.0 pages/s; extraction 0.50 s = 25% of 2.00 s wall time'
        """
        get = self.stats.get_value
        stats = self.stats.get_stats()
        skipped = {k[len("cepr/skipped/"):]: v for k, v in sorted(stats.items()) if k.startswith("cepr/skipped/")}
        counts = {k: get(f"cepr/{k}", 0) for k in ("cleaned", "non_article", "empty", "failed", "timeout")}
        total = sum(counts.values()) + sum(skipped.values())
        seconds = get("cepr/extraction_seconds", 0.0)
        wall = max(wall_seconds, 1e-9)
        skip_text = f" ({', '.join(f'{k} {v}' for k, v in skipped.items())})" if skipped else ""
        suppressed = {k: n - self.config.warn_limit for k, n in self._warnings.items()
                      if self.config.warn_limit and n > self.config.warn_limit}
        tail = f"; warnings not logged: {', '.join(f'{k} {n}' for k, n in sorted(suppressed.items()))}" \
            if suppressed else ""
        return (f"CEPR summary: {total} items: " + ", ".join(f"{v} {k.replace('_', '-')}" for k, v in counts.items())
                + f", {sum(skipped.values())} skipped{skip_text}; {total / wall:.1f} pages/s; "
                f"extraction {seconds:.2f} s = {100 * seconds / wall:.0f}% of {wall_seconds:.2f} s wall time{tail}")

    def confidence_summary(self) -> str | None:
        """The closing confidence histogram: pages per tenth of confidence, the pages below
        ``CEPR_MIN_CONFIDENCE`` and what happened to them; None when no page had a
        confidence.

        >>> from scrapy.utils.test import get_crawler
        >>> p = CEPRPipeline(get_crawler(settings_dict={"CEPR_EXECUTOR": "inline"}))
        >>> for key, n in (("confidence/0.9", 8), ("confidence/0.3", 2), ("low_confidence", 2)):
        ...     p.stats.set_value(f"cepr/{key}", n)
        >>> p.confidence_summary()
        'CEPR confidence: 10 pages, mean 0.83; per tenth 0.0-0.1 … 0.9-1.0: 0 0 0 2 0 0 0 0 0 8; 2 low'
        """
        bins = [self.stats.get_value(f"cepr/confidence/{k / 10:.1f}", 0) for k in range(10)]
        total = sum(bins)
        if not total:
            return None
        mean = sum((k + 0.5) / 10 * n for k, n in enumerate(bins)) / total
        get = self.stats.get_value
        tail = f"; {get('cepr/low_confidence', 0)} low"
        if get("cepr/dropped/low_confidence"):
            tail += f", {get('cepr/dropped/low_confidence')} dropped"
        if get("cepr/fallback/kept_fallback") or get("cepr/fallback/kept_primary"):
            tail += (f", fallback kept on {get('cepr/fallback/kept_fallback', 0)}, "
                     f"primary kept on {get('cepr/fallback/kept_primary', 0)}")
        return (f"CEPR confidence: {total} pages, mean {mean:.2f}; per tenth 0.0-0.1 … 0.9-1.0: "
                + " ".join(str(n) for n in bins) + tail)

    def _on_restart(self, reason: str) -> None:
        self.stats.inc_value("cepr/worker_restarts")

    # -- items -------------------------------------------------------------------------
    async def process_item(self, item: Any) -> Any:
        """Clean *item*'s page and return the item (the same object), with every output
        field set (see the module docstring).

        :raises DropItem: ``CEPR_NON_ARTICLE="drop"`` and the page is not an article;
            or the item's class lacks an output field (logged once as an error, the
            spider is closed, further items of the class are dropped at DEBUG level).
        """
        c = self.config
        adapter = ItemAdapter(item)
        ref = self.pages.pop(item)  # side channel first, then the item's own field
        own_html = False
        if ref is None:
            html = adapter.get(c.html_field)
            if html is not None:
                own_html = not isinstance(html, HtmlBytes)  # not attached by the middleware
                ref = PageRef(adapter.get(c.url_field), html)
            else:
                ref = self._recent_page(adapter)
            if ref is None:
                self._no_html(adapter)
                self._write(item, adapter, PageResult(), quiet=True)
                return item
        if ref.skip in _QUIET_SKIPS:
            self.stats.inc_value(f"cepr/skipped/{ref.skip}")
            logger.debug("CEPR did not clean %s: %s", ref.url, ref.reason)
            self._write(item, adapter, PageResult(), quiet=True)
            return item
        zyte = c.item_schema == "zyte"
        if not zyte:  # an Article replaces the item: its class needs no field of ours
            self._check_class(item)
        url = ref.url or adapter.get(c.url_field)
        if ref.skip is not None:
            values = self._record(f"skipped/{ref.skip}", ref.reason, url, log=logger.debug)
        else:
            values = await self._extract(ref.html, url)
        if zyte and url:
            if not own_html:
                self._finish_html(item, adapter, ref)
            item = self._zyte_item(adapter, values, url)
        else:
            if zyte:
                self._warn("zyte/no_url", "CEPR_ITEM_SCHEMA='zyte': %s has no URL (the Article's one required "
                           "field); exported in the cepr shape", type(item).__name__)
            self._write(item, adapter, values)
            if not own_html:
                self._finish_html(item, adapter, ref)
        page_type = values.page_type
        if c.non_article == "drop" and page_type not in (None, "article"):
            self.stats.inc_value("cepr/dropped/non_article")
            raise DropItem(f"CEPR: {url} is not an article page ({page_type})", log_level="DEBUG")
        if c.low_confidence == "drop" and self._low(values):
            self.stats.inc_value("cepr/dropped/low_confidence")
            raise DropItem(f"CEPR: {url} has a low confidence ({values.confidence:.2f} < "
                           f"CEPR_MIN_CONFIDENCE={c.min_confidence})", log_level="DEBUG")
        return item

    def _low(self, result: PageResult) -> bool:
        """Whether *result*'s confidence is below ``CEPR_MIN_CONFIDENCE``."""
        low = self.config.min_confidence
        return low is not None and result.confidence is not None and result.confidence < low

    def _confidence(self, result: PageResult) -> None:
        """Stats of *result*'s confidence (histogram, low, fallback) and the
        ``CEPR_LOW_CONFIDENCE="mark"`` error."""
        c, conf = self.config, result.confidence
        if conf is not None:
            self.stats.inc_value(f"cepr/confidence/{min(int(conf * 10), 9) / 10:.1f}")
        if result.fallback is not None:  # the primary result was below the threshold
            self.stats.inc_value("cepr/low_confidence")
            self.stats.inc_value(f"cepr/fallback/kept_{result.fallback}")
        elif self._low(result):
            self.stats.inc_value("cepr/low_confidence")
            if c.low_confidence == "mark" and result.error is None:
                result.error = f"low-confidence: {conf:.2f}"

    async def _extract(self, html: Any, url: str | None) -> PageResult:
        """Run the method on *html*; the output values (title, body, error, page type, extras)."""
        c = self.config
        size = _size(html, c.max_html_bytes)
        if c.max_html_bytes and size > c.max_html_bytes:
            return self._record("skipped/too_large",
                                f"skipped: page too large ({size} bytes > CEPR_MAX_HTML_BYTES={c.max_html_bytes})",
                                url)
        if not isinstance(html, (str, bytes)):
            return self._record("failed", f"failed: {c.html_field!r} holds {type(html).__name__}, not str or bytes",
                                url)
        assert self.executor is not None, "open_spider() was not called"
        try:
            result, seconds = await self.executor.run(html, url)
        except ExtractionTimeout as exc:
            return self._record("timeout", f"timeout: {exc}", url)
        except WorkerDied as exc:
            return self._record("failed", f"failed: {exc}", url)
        except ExtractionError as exc:
            return self._record("failed", f"failed: {type(exc).__name__}: {exc}", url)
        except Exception as exc:  # a bug in a method must not stop the crawl
            logger.debug("Extraction error on %s", url, exc_info=True)
            return self._record("failed", f"failed: {type(exc).__name__}: {exc}", url)
        # Scrapy annotates inc_value's count as int; it adds any number.
        self.stats.inc_value("cepr/extraction_seconds", seconds, start=0.0)  # type: ignore[arg-type]
        page_type = result.page_type if c.non_article != "keep" else None
        result.page_type = page_type
        if page_type is not None:
            self.stats.inc_value(f"cepr/page_type/{page_type}")
        self._confidence(result)
        if not result.body:
            result.error = self._record("empty", "empty: no main content found", url).error
        elif page_type not in (None, "article"):
            self.stats.inc_value("cepr/non_article")
        else:
            self.stats.inc_value("cepr/cleaned")
        return result

    def _record(self, stat: str, message: str | None, url: str | None, log: Any = None) -> PageResult:
        """Count ``cepr/<stat>``, log *message* with the URL (rate-limited per kind);
        the error value to write."""
        self.stats.inc_value(f"cepr/{stat}")
        if log is None:
            self._warn(stat, "CEPR could not clean %s: %s", url or "(no URL)", message)
        else:
            log("CEPR could not clean %s: %s", url or "(no URL)", message)
        return PageResult(error=message)

    def _warn(self, kind: str, message: str, *args: Any) -> None:
        """A per-page warning: the first ``CEPR_WARN_LIMIT`` of each *kind* are logged,
        the last of them saying so; the rest are counted for the summary."""
        self._warnings[kind] += 1
        n, limit = self._warnings[kind], self.config.warn_limit
        if not limit or n < limit:
            logger.warning(message, *args)
        elif n == limit:
            logger.warning(message + " (%d %r warnings: further ones are only counted, see the summary at close)",
                           *args, n, kind)

    def _write(self, item: Any, adapter: ItemAdapter, result: PageResult, quiet: bool = False) -> None:
        """Write every output field, in export order (:data:`scrapy_cepr.settings.OUTPUT_FIELDS`),
        from *result* (absent = None), following ``CEPR_OVERWRITE`` for each of them
        (:meth:`_keeps_own`). *quiet*: an item not cleaned (no page, non-HTML, opted out):
        fields it cannot take are skipped and existing values are never replaced."""
        for output, field in self._outputs:
            value = result.get(output.name)
            if quiet:
                if field not in adapter:
                    _try_set(adapter, field, value)
            elif self._keeps_own(item, adapter, field, value):
                continue
            elif output.required:
                self._set(item, adapter, field, value, output.setting)
            else:  # optional on item classes
                _try_set(adapter, field, value)

    def _zyte_item(self, adapter: ItemAdapter, result: PageResult, url: str) -> dict[str, Any]:
        """The item in zyte-common-items' ``Article`` shape (``CEPR_ITEM_SCHEMA="zyte"``,
        :func:`scrapy_cepr.schema.zyte_article`): the output fields are first written as
        for the ``cepr`` shape (``CEPR_OVERWRITE`` applies to the spider's own values),
        then the title, body, HTML body, metadata and ``cepr_confidence`` become the
        ``Article``'s fields; the error, the page type, the other outputs and the
        spider's own fields stay beside (the metadata dict as ``cepr_metadata`` when
        ``CEPR_METADATA`` is on). A spider field named like an ``Article`` field is
        dropped, with one warning per field."""
        from .schema import zyte_article

        c = self.config
        names = {field for _, field in self._outputs}
        cepr = {field: adapter[field] for field in names if field in adapter}  # the spider's own values
        self._write(cepr, ItemAdapter(cepr), result)
        mapped = {c.title_field, c.body_field, "body_html", "metadata", _CONFIDENCE_FIELD}
        beside = {field: cepr.get(field) for _, field in self._outputs if field not in mapped}
        if c.metadata:
            beside["cepr_metadata"] = cepr.get("metadata")
        import attrs
        from zyte_common_items import Article

        article_fields = attrs.fields_dict(Article)
        for key, value in adapter.items():
            if key in names or key in (c.url_field, _CONFIDENCE_FIELD, CANONICAL_FIELD):
                continue
            if key in article_fields or key in beside:
                if key not in self._warned_replaced:
                    self._warned_replaced.add(key)
                    logger.warning("CEPR_ITEM_SCHEMA='zyte': the spider's field %r is also a field of the exported "
                                   "item; the spider's value is dropped (warned once per field)", key)
                continue
            beside[key] = value
        metadata = result.get("metadata")
        if adapter.get(CANONICAL_FIELD) and not (metadata or {}).get("canonical_url"):
            # The spider's canonical URL (newsspider, scrapy_cepr.incremental) is the Article's.
            metadata = {**(metadata or {}), "canonical_url": adapter.get(CANONICAL_FIELD)}
        return zyte_article(url, title=cepr.get(c.title_field), body=cepr.get(c.body_field),
                            body_html=result.get("body_html"), metadata=metadata,
                            confidence=_confidence(cepr, adapter, result), beside=beside)

    def _keeps_own(self, item: Any, adapter: ItemAdapter, field: str, value: Any) -> bool:
        """Whether the spider's own value of *field* stays instead of *value*
        (``CEPR_OVERWRITE``): a None value (a failed page, no error) never replaces one;
        ``"keep"`` keeps any value the spider set, ``"fill"`` any but ``""``;
        ``"overwrite"`` replaces it, with one warning per field."""
        old = adapter.get(field)
        if old is None or old == value:
            return False
        policy = self.config.overwrite
        if value is None or policy == "keep" or (policy == "fill" and not _is_empty(old)):
            return True
        if not _is_empty(old) and field not in self._warned_replaced:
            self._warned_replaced.add(field)
            logger.warning("CEPR_OVERWRITE='overwrite' replaced the spider's own %r of %s (%r) by the "
                           "extracted one; warned once per field", field,
                           adapter.get(self.config.url_field) or type(item).__name__, _short(old))
        return False

    def _set(self, item: Any, adapter: ItemAdapter, field: str, value: Any, setting: str) -> None:
        """Write *value* to *field* (named or asked for by *setting*); an item class that
        cannot take it is a configuration error (logged once, the item dropped)."""
        try:
            adapter[field] = value
        except (KeyError, AttributeError, TypeError) as exc:  # undeclared field, frozen item
            cls = type(item)
            message = (f"CEPRPipeline cannot set the field {field!r} ({setting}) on items of class "
                       f"{cls.__module__}.{cls.__qualname__}: {exc}")
            if self._class_errors.get(cls) is None:
                self._class_errors[cls] = message
                self._class_error(message)
            self.stats.inc_value("cepr/dropped/item_class")
            raise DropItem(message, log_level="DEBUG") from None

    def _finish_html(self, item: Any, adapter: ItemAdapter, ref: PageRef) -> None:
        """Remove the HTML field the middleware filled (default), or make sure it holds
        the page (``CEPR_KEEP_HTML=True``)."""
        field = self.config.html_field
        if self.config.keep_html:
            names = ItemAdapter.get_field_names_from_class(type(item))
            if names is not None and field not in names:  # exported only where the field exists
                if type(item) not in self._warned_no_html_field:
                    self._warned_no_html_field.add(type(item))
                    cls = type(item)
                    logger.warning("CEPR_KEEP_HTML=True: item class %s.%s has no field %r (CEPR_HTML_FIELD); its "
                                   "items are cleaned and exported without their HTML (declare the field to keep it)",
                                   cls.__module__, cls.__qualname__, field)
                return
            html = adapter.get(field)
            if html is None and ref.html is not None:
                html = ref.html
            if isinstance(html, HtmlBytes):  # exported as text, as response.text would be
                self._set(item, adapter, field, html.text(), "CEPR_HTML_FIELD")
            elif html is not None and html is not adapter.get(field):
                self._set(item, adapter, field, html, "CEPR_HTML_FIELD")
        elif isinstance(item, MutableMapping):  # dict, scrapy.Item: drop the key
            item.pop(field, None)
        elif adapter.get(field) is not None:  # dataclass, attrs: a declared attribute
            adapter[field] = None  # deleting it would break the class (slots, asdict)

    def _recent_page(self, adapter: ItemAdapter) -> PageRef | None:
        """The page of an item that did not pass through the spider middleware
        (``scrapy parse --pipelines``) or lost it, found by its URL field among the
        responses still in memory; else None."""
        url = adapter.get(self.config.url_field)
        response = self.pages.responses.get(url) if isinstance(url, str) else None
        if response is None:
            return None
        return response_page(response, self.config)

    def _no_html(self, adapter: ItemAdapter) -> None:
        self.stats.inc_value("cepr/skipped/no_html")
        if not self._warned_no_html:
            self._warned_no_html = True
            logger.warning("CEPR got an item with no page attached (%s) and no response in memory for its %r "
                           "field; items not produced from a response (e.g. from start()), or replaced by a new "
                           "object before CEPRPipeline, are not cleaned. Counted in cepr/skipped/no_html.",
                           adapter.get(self.config.url_field) or type(adapter.item).__name__,
                           self.config.url_field)

    def _check_class(self, item: Any) -> None:
        """Drop *item* when its class cannot take an output field (error logged once)."""
        cls = type(item)
        if cls not in self._class_errors:
            self._class_errors[cls] = error = _missing_field_message(cls, self._outputs)
            if error is not None:
                self._class_error(error)
        message = self._class_errors[cls]
        if message is not None:
            self.stats.inc_value("cepr/dropped/item_class")
            raise DropItem(message, log_level="DEBUG")

    def _class_error(self, message: str) -> None:
        """First error of a class: log it, count it, close the spider."""
        self.stats.inc_value("cepr/errors/item_class")
        logger.error("%s; closing the spider (items of this class are dropped, counted in "
                     "cepr/dropped/item_class)", message)
        try:
            engine = self.crawler.engine
        except RuntimeError:  # not crawling (e.g. a unit test): nothing to close
            engine = None
        if engine is not None and self._closing is None:
            self._closing = deferred_from_coro(engine.close_spider_async(reason="cepr_item_class_error"))


#: The output field of the page's confidence (issue 20), ``metadata.probability`` of an ``Article``.
_CONFIDENCE_FIELD = "cepr_confidence"


def _confidence(cepr: dict[str, Any], adapter: ItemAdapter, result: PageResult) -> float | None:
    """The page's confidence in [0, 1]: the item's ``cepr_confidence`` (as the pipeline
    writes it, else as the item holds it), else the worker's ``confidence``; None when
    the crawl computes none."""
    value = cepr.get(_CONFIDENCE_FIELD)
    if value is None:
        value = adapter.get(_CONFIDENCE_FIELD)
    if value is None:
        value = result.get("confidence")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _is_empty(value: Any) -> bool:
    """Whether a spider's value counts as empty for ``CEPR_OVERWRITE="fill"``: None or ``""``."""
    return value is None or (isinstance(value, str) and value == "")


def _short(value: Any, limit: int = 60) -> str:
    """*value* as text, cut to *limit* characters for a log line.

    >>> _short("x" * 100, 5)
    'xxxxx…'
    """
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _missing_field_message(cls: type, outputs: tuple[tuple[OutputField, str], ...]) -> str | None:
    """Error message for an item class lacking a required output field, or None (dicts
    and classes that declare them all)."""
    names = ItemAdapter.get_field_names_from_class(cls)
    if names is None:  # dict-like: any field
        return None
    for output, field in outputs:
        if not output.required or field in names:
            continue
        setting = output.setting
        where = f"item class {cls.__module__}.{cls.__qualname__} has no field {field!r} ({setting})"
        if output.attr is None:  # a field asked for by a setting
            return f"{where}; declare it (e.g. `{field} = scrapy.Field()`) or change {setting}"
        return (f"{where}; declare it (e.g. `{field} = scrapy.Field()`, or a dataclass/attrs field defaulting to "
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
