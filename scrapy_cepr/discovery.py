"""Article discovery for news crawls: sitemaps named in ``robots.txt`` (sitemap indexes,
Google News sitemaps with ``<news:publication_date>``), RSS/Atom feeds linked from a
start page, a ``since`` date filter applied before any page is fetched, and the
canonical URL of a page.

Built on Scrapy's own sitemap support (:class:`scrapy.utils.sitemap.Sitemap`,
:func:`scrapy.utils.sitemap.sitemap_urls_from_robots`, the gzip handling of
:class:`scrapy.spiders.SitemapSpider`), `feedparser <https://feedparser.readthedocs.io>`_
for feeds and :func:`w3lib.url.canonicalize_url` for URLs.

:class:`DiscoveryMixin` adds the callbacks to any spider whose ``parse`` handles article
pages; ``example_project``'s ``newsspider`` is the reference use. Requests for pages
carry in their meta:

* :data:`SOURCE_META` (``"cepr_source"``): ``"sitemap"``, ``"feed"`` or ``"links"``;
* :data:`LASTMOD_META` (``"cepr_lastmod"``): the most recent of the entry's sitemap
  ``lastmod``, news publication date or feed date, ISO 8601 in UTC, or None (read by
  :mod:`scrapy_cepr.incremental` to fetch an updated page again).

Stats: ``cepr/discovery/robots``, ``cepr/discovery/sitemaps``, ``cepr/discovery/feeds``
(documents read), ``cepr/discovered/sitemap``, ``cepr/discovered/feed``,
``cepr/discovered/links`` (page requests issued per source, before Scrapy's duplicate
filter: a page listed in the sitemap and the feed counts in both),
``cepr/since/skipped`` (entries older than ``since``, not fetched) and
``cepr/discovery/invalid`` (a sitemap or feed that could not be read).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlparse

import scrapy
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse
from scrapy.utils.gz import gunzip, gzip_magic_number
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots
from w3lib.url import canonicalize_url

__all__ = [
    "CANONICAL_FIELD",
    "LASTMOD_META",
    "SOURCE_META",
    "DiscoveryMixin",
    "NewsSitemap",
    "canonical_url",
    "feed_urls",
    "parse_date",
    "parse_since",
]

logger = logging.getLogger(__name__)

#: Item field of the canonical URL (set by the spider with :func:`canonical_url`; read by
#: the incremental state, the near-duplicate index and the zyte ``Article``'s ``canonicalUrl``).
CANONICAL_FIELD = "canonical_url"
#: Request meta key: how a page was found (``"sitemap"``, ``"feed"`` or ``"links"``).
SOURCE_META = "cepr_source"
#: Request meta key: the entry's newest date (ISO 8601, UTC) or None.
LASTMOD_META = "cepr_lastmod"
#: Request meta key marking robots.txt, sitemap and feed requests (never items).
DOCUMENT_META = "cepr_discovery"

_FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/feed+json",
                         "application/rdf+xml", "application/xml", "text/xml"})
_RELATIVE = re.compile(r"^-(\d+)([dh])$")


def parse_since(value: str | None, now: datetime | None = None) -> datetime | None:
    """The cut-off date of ``-a since=...``, as an aware UTC datetime (None: no filter).

    Accepted: ``YYYY-MM-DD`` (midnight UTC), an ISO 8601 date-time (naive = UTC),
    ``-Nd`` (N days before *now*) or ``-Nh`` (N hours before *now*).

    >>> parse_since("2026-11-20")
    datetime.datetime(2026, 11, 20, 0, 0, tzinfo=datetime.timezone.utc)
    >>> parse_since("-2d", now=datetime(2026, 11, 25, 12, tzinfo=UTC))
    datetime.datetime(2026, 11, 23, 12, 0, tzinfo=datetime.timezone.utc)

    :raises ValueError: any other value, naming the accepted forms.
    """
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    match = _RELATIVE.match(text)
    if match:
        amount, unit = int(match.group(1)), match.group(2)
        delta = timedelta(days=amount) if unit == "d" else timedelta(hours=amount)
        return (now or datetime.now(UTC)) - delta
    parsed = parse_date(text)
    if parsed is None:
        raise ValueError(f"since: {value!r} is not YYYY-MM-DD, an ISO 8601 date-time, -Nd or -Nh")
    return parsed


def parse_date(text: str | None) -> datetime | None:
    """A sitemap (W3C Datetime, ISO 8601) or feed (RFC 822) date as an aware UTC
    datetime; a date alone is midnight UTC, a naive time is taken as UTC. None for an
    empty or unreadable value (never raises).

    >>> parse_date("2026-11-24T08:30:00+01:00")
    datetime.datetime(2026, 11, 24, 7, 30, tzinfo=datetime.timezone.utc)
    >>> parse_date("Tue, 24 Nov 2026 08:30:00 GMT").hour, parse_date("yesterday")
    (8, None)
    """
    if not text:
        return None
    text = text.strip()
    parsed: datetime | None = None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        try:
            parsed = datetime.combine(date.fromisoformat(text[:10]), datetime.min.time()) if len(text) == 10 else None
        except ValueError:
            parsed = None
        if parsed is None:
            try:
                parsed = parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _newest(*texts: str | None) -> datetime | None:
    dates = [d for d in map(parse_date, texts) if d is not None]
    return max(dates) if dates else None


class NewsSitemap(Sitemap):
    """Scrapy's :class:`~scrapy.utils.sitemap.Sitemap` that also keeps the
    ``<news:publication_date>`` of a Google News sitemap entry (Scrapy keeps only the
    direct children of ``<url>``): each entry dict gains ``publication_date`` (text)."""

    __slots__ = ()

    def __iter__(self) -> Iterator[dict[str, Any]]:
        root = getattr(self, "_root", None)
        if root is None:  # newer Scrapy (2.19) parses incrementally: _process_sitemap_element
            yield from super().__iter__()
            return
        # Older Scrapy: the whole tree is in _root; collect the dates by <loc> first.
        dates: dict[str, str] = {}
        for elem in root:
            loc, published = None, None
            for el in elem.iter():
                name = self._tag(el)
                if name == "loc" and el.text:
                    loc = el.text.strip()
                elif name == "publication_date" and el.text:
                    published = el.text.strip()
            if loc and published:
                dates[loc] = published
        for entry in super().__iter__():
            if entry["loc"] in dates:
                entry["publication_date"] = dates[entry["loc"]]
            yield entry

    def _process_sitemap_element(self, elem: Any) -> dict[str, Any] | None:
        published = None
        for el in elem.iter():
            if self._tag(el) == "publication_date" and el.text:
                published = el.text.strip()
                break
        entry = super()._process_sitemap_element(elem)
        if entry is not None and published:
            entry["publication_date"] = published
        return entry

    @staticmethod
    def _tag(elem: Any) -> str:
        tag = elem.tag
        return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def feed_urls(response: Response) -> list[str]:
    """Absolute URLs of the RSS/Atom feeds a page links with ``<link rel="alternate"
    type="application/rss+xml|atom+xml ...">``, in page order, without repeats; [] for a
    non-HTML response."""
    if not isinstance(response, HtmlResponse):
        return []
    found: list[str] = []
    for link in response.xpath("//link[@href]"):
        rel = (link.attrib.get("rel") or "").lower().split()
        kind = (link.attrib.get("type") or "").lower().split(";")[0].strip()
        if "alternate" in rel and kind in _FEED_TYPES:
            url = response.urljoin(link.attrib["href"].strip())
            if url not in found:
                found.append(url)
    return found


def canonical_url(response: Response) -> str:
    """The page's canonical URL, normalised with :func:`w3lib.url.canonicalize_url`:
    its ``<link rel="canonical">``, else its ``og:url``, else the fetched URL
    (``response.url``). A relative or non-``http(s)`` declared value is resolved against
    the page URL; one that is not ``http(s)`` after that is ignored, and so is a site
    root (``https://host/``) declared by a page that is not one (a template error that
    would make every page of the site one article).

    >>> from scrapy.http import HtmlResponse
    >>> page = HtmlResponse("https://news.example/a?utm_source=rss&b=1", body=b'<link rel="canonical" href="/a?b=1#top">')
    >>> canonical_url(page)
    'https://news.example/a?b=1'
    """
    if isinstance(response, HtmlResponse):
        candidates = response.xpath('//link[contains(concat(" ", normalize-space(translate(@rel, "CANONICAL", '
                                    '"canonical")), " "), " canonical ")]/@href').getall()
        candidates += response.xpath('//meta[@property="og:url"]/@content').getall()
        own_root = urlparse(response.url).path in ("", "/")
        for value in candidates:
            url = response.urljoin(value.strip())
            parts = urlparse(url)
            if not value.strip() or parts.scheme not in ("http", "https"):
                continue
            if parts.path in ("", "/") and not parts.query and not own_root:
                # A site root as the canonical URL of an inner page: a template error
                # (every page would be one article), ignored.
                continue
            return canonicalize_url(url)
    return canonicalize_url(response.url)


class DiscoveryMixin:
    """Spider mix-in: discover the article pages of each start URL from its
    ``robots.txt`` sitemaps and its feeds, and drop entries older than ``since``.

    The spider calls :meth:`discovery_start` for each ``http(s)`` start URL (a request
    for ``/robots.txt``) and :meth:`feed_requests` on its start pages; every article page
    found is requested with ``callback=self.parse`` (the spider's page callback, set
    :attr:`page_callback` to use another). The spider may define
    ``_in_scope(response, url) -> bool`` (default: every URL) and
    ``_child_meta(response, url) -> dict`` (extra request meta).

    ``since`` (spider attribute, a string as given to ``-a since=...``, else the setting
    ``CEPR_SINCE``): entries whose
    newest date is older are not requested; undated entries are. A sitemap index entry
    whose ``lastmod`` is older is not read at all. Discovery documents are requested
    with depth reset to 0 (so the pages they list are at depth 1, like the links of a
    start page, whatever ``DEPTH_LIMIT``).
    """

    since: str | None = None
    page_callback: str = "parse"

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> Any:
        """The spider, with ``since`` from the setting ``CEPR_SINCE`` unless given as a
        spider argument.

        :raises ValueError: a ``since`` that :func:`parse_since` refuses (before the crawl
            starts)."""
        spider = super().from_crawler(crawler, *args, **kwargs)  # type: ignore[misc]
        if spider.since is None:
            spider.since = crawler.settings.get("CEPR_SINCE")
            spider.__dict__.pop("_since_date", None)
        _ = spider.since_date
        return spider

    # -- helpers the spider may override ----------------------------------------------
    def _in_scope(self, response: Response | None, url: str) -> bool:
        return True

    def _child_meta(self, response: Response | None, url: str) -> dict[str, Any]:
        return {}

    # -- state ------------------------------------------------------------------------
    @property
    def since_date(self) -> datetime | None:
        """:func:`parse_since` of ``since``, computed once (``-2d`` is relative to the
        first call, i.e. the start of the crawl)."""
        cached = self.__dict__.get("_since_date", False)
        if cached is False:
            cached = parse_since(self.since)
            self.__dict__["_since_date"] = cached
        return cached

    def _inc(self, key: str, count: int = 1) -> None:
        crawler = getattr(self, "crawler", None)
        if crawler is not None and crawler.stats is not None:
            crawler.stats.inc_value(key, count)

    def _document(self, response: Response | None, url: str, callback: Any) -> scrapy.Request:
        meta = {**self._child_meta(response, url), DOCUMENT_META: True, "depth_reset": True}
        return scrapy.Request(url, callback=callback, meta=meta, dont_filter=False)

    def _page(self, response: Response | None, url: str, source: str, newest: datetime | None) -> scrapy.Request:
        meta = {**self._child_meta(response, url), SOURCE_META: source,
                LASTMOD_META: newest.isoformat() if newest is not None else None}
        self._inc(f"cepr/discovered/{source}")
        return scrapy.Request(url, callback=getattr(self, self.page_callback), meta=meta)

    def _too_old(self, newest: datetime | None) -> bool:
        cut = self.since_date
        if cut is not None and newest is not None and newest < cut:
            self._inc("cepr/since/skipped")
            return True
        return False

    # -- entry points -----------------------------------------------------------------
    def discovery_start(self, start_url: str) -> list[scrapy.Request]:
        """The ``robots.txt`` request of an ``http(s)`` start URL ([] for other schemes)."""
        parts = urlparse(start_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return []
        robots = f"{parts.scheme}://{parts.netloc}/robots.txt"
        request = self._document(None, robots, self.parse_robots)
        # Fetched even with ROBOTSTXT_OBEY=False; a site without robots.txt is normal.
        request.meta["dont_obey_robotstxt"] = True
        request.meta["handle_httpstatus_list"] = [404, 410]
        return [request]

    def feed_requests(self, response: Response) -> Iterator[scrapy.Request]:
        """Requests for the feeds a (start) page links to, in scope."""
        for url in feed_urls(response):
            if self._in_scope(response, url):
                yield self._document(response, url, self.parse_feed)

    # -- callbacks ----------------------------------------------------------------------
    def parse_robots(self, response: Response) -> Iterator[scrapy.Request]:
        """Request the sitemaps that ``robots.txt`` names (``Sitemap:`` lines)."""
        response.meta["depth"] = 0  # Scrapy < 2.18 has no depth_reset
        if response.status != 200:
            return
        self._inc("cepr/discovery/robots")
        try:
            urls = list(sitemap_urls_from_robots(response.body, base_url=response.url))
        except TypeError:  # Scrapy 2.14 reads str only (later ones bytes; str deprecated)
            urls = list(sitemap_urls_from_robots(response.text, base_url=response.url))
        for url in urls:
            if self._in_scope(response, url):
                yield self._document(response, url, self.parse_sitemap)

    def parse_sitemap(self, response: Response) -> Iterator[scrapy.Request]:
        """Read a sitemap index (child sitemaps) or a sitemap (pages), gzipped or not,
        with Scrapy's sitemap parser; skip entries older than ``since``."""
        response.meta["depth"] = 0
        body = self._sitemap_body(response)
        sitemap = NewsSitemap(body) if body else None
        if sitemap is None or sitemap.type not in ("sitemapindex", "urlset"):
            logger.warning("Ignoring invalid sitemap: %s", response.url)
            self._inc("cepr/discovery/invalid")
            return
        self._inc("cepr/discovery/sitemaps")
        for entry in sitemap:
            url = urljoin(response.url, entry["loc"])
            newest = _newest(entry.get("lastmod"), entry.get("publication_date"))
            if self._too_old(newest) or not self._in_scope(response, url):
                continue
            if sitemap.type == "sitemapindex":
                yield self._document(response, url, self.parse_sitemap)
            else:
                yield self._page(response, url, "sitemap", newest)

    def parse_feed(self, response: Response) -> Iterator[scrapy.Request]:
        """Read an RSS or Atom feed with feedparser; request each entry's link."""
        import feedparser  # a base dependency; imported here to keep the import light

        response.meta["depth"] = 0
        feed = feedparser.parse(response.body, response_headers={"content-location": response.url})
        if feed.bozo and not feed.entries:
            logger.warning("Ignoring invalid feed: %s (%s)", response.url, feed.get("bozo_exception"))
            self._inc("cepr/discovery/invalid")
            return
        self._inc("cepr/discovery/feeds")
        for entry in feed.entries:
            link = entry.get("link")
            if not link:
                continue
            url = urljoin(response.url, link)
            # dict.get: feedparser's own get() maps a missing updated_parsed to
            # published_parsed with a DeprecationWarning.
            newest = _newest(*(_struct_iso(dict.get(entry, k)) for k in ("published_parsed", "updated_parsed")))
            if self._too_old(newest) or not self._in_scope(response, url):
                continue
            yield self._page(response, url, "feed", newest)

    def link_requests(self, response: Response, links: Iterable[Any]) -> Iterator[scrapy.Request]:
        """``response.follow`` requests for same-site *links* (``scrapy.link.Link``)."""
        for link in links:
            if self._in_scope(response, link.url):
                self._inc("cepr/discovered/links")
                meta = {**self._child_meta(response, link.url), SOURCE_META: "links", LASTMOD_META: None}
                yield response.follow(link, callback=getattr(self, self.page_callback), meta=meta)

    def _sitemap_body(self, response: Response) -> bytes | None:
        if isinstance(response, XmlResponse):
            return response.body
        if gzip_magic_number(response):
            crawler = getattr(self, "crawler", None)
            settings = crawler.settings if crawler is not None else None
            max_size = response.meta.get("download_maxsize", settings.getint("DOWNLOAD_MAXSIZE") if settings else 0)
            try:
                return gunzip(response.body, max_size=max_size)
            except Exception as exc:  # noqa: BLE001 - a bad or too large gzip is an invalid sitemap
                logger.warning("Sitemap %s: cannot decompress (%s)", response.url, exc)
                return None
        if isinstance(response, TextResponse) or response.body.lstrip()[:5] in (b"<?xml", b"<urls", b"<site"):
            return response.body
        return None


def _struct_iso(value: Any) -> str | None:
    """feedparser's ``*_parsed`` (a UTC ``time.struct_time``) as ISO 8601."""
    if not value:
        return None
    year, month, day, hour, minute, second = value[:6]
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC).isoformat()
