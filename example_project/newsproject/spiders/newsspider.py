"""``newsspider``: discover a news site's articles (sitemaps, feeds, links) and export one
cleaned item per page."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import scrapy
from scrapy.http import HtmlResponse, Response
from scrapy.linkextractors import LinkExtractor
from w3lib.url import file_uri_to_path

from scrapy_cepr.discovery import DiscoveryMixin, canonical_url

logger = logging.getLogger(__name__)

#: The offline demo site shipped with the project (crawled when no start_urls is given).
SITE_INDEX = Path(__file__).resolve().parents[2] / "site" / "index.html"

#: Download slot of file:// requests (no delay; see DOWNLOAD_SLOTS in settings.py).
LOCAL_SLOT = "local-files"


class NewsSpider(DiscoveryMixin, scrapy.Spider):
    """Crawl a news site and yield one item per page for scrapy-cepr.

    Arguments (``-a name=value``):

    ``start_urls``
        Comma-separated ``http(s)://`` or ``file://`` URLs. Without it the spider crawls
        the demo site in ``example_project/site/`` (offline, over ``file://``).
    ``since``
        ``YYYY-MM-DD``, an ISO 8601 date-time, ``-Nd`` or ``-Nh``: sitemap and feed
        entries whose newest date (``lastmod``, news publication date, feed date) is
        older are not fetched (stat ``cepr/since/skipped``); undated entries and links
        are.

    Discovery (:mod:`scrapy_cepr.discovery`), for each ``http(s)`` start URL: the
    sitemaps named in its ``robots.txt`` (sitemap indexes, Google News sitemaps, gzipped
    or not), the RSS/Atom feeds its start page links (``<link rel="alternate">``), and
    same-site links. Pages found in a sitemap or feed are at depth 1, like the links of
    the start page. Stats per source: ``cepr/discovered/sitemap``, ``.../feed``,
    ``.../links``. With ``-s CEPR_STATE_DIR=DIR`` the crawl is incremental: pages an
    earlier run exported are not fetched again unless their sitemap/feed date is newer
    (:mod:`scrapy_cepr.incremental`).

    Which pages become items: **every page reached from a start URL, but not the start
    URLs themselves** (they are taken to be home or section pages). A page is reached by
    following links of HTML pages that stay on the same site: for ``http(s)`` the host of a
    start URL or one of its subdomains; for ``file://`` the directory of the start file and
    below, checked on the resolved path (``..``, ``%2e%2e`` and symlinks cannot leave it).
    Links to files with a binary extension (images, PDF, archives …, Scrapy's
    ``LinkExtractor`` defaults) are not followed. Depth is bounded by ``DEPTH_LIMIT``
    (start = 0); links of pages at the limit are not even extracted. Responses that are
    not HTML still become items, with ``title``, ``body`` and ``cepr_error`` None (they
    are not pages to clean; counted in the stats as ``cepr/skipped/non_html``). Non-2xx
    responses are dropped by Scrapy's ``HttpErrorMiddleware`` (counted as
    ``httperror/response_ignored_count``).

    Item fields, once exported (``scrapy crawl newsspider -O cleaned.jsonl``), the same on
    every item (a CSV feed has the same columns on every row):

    * ``url``: the page's URL (after redirects): the URL it was fetched from;
    * ``canonical_url``: its ``<link rel="canonical">``, else ``og:url``, else ``url``,
      normalised with w3lib's ``canonicalize_url``; two pages with the same canonical
      URL are one article (the second is dropped, stat ``cepr/canonical/duplicates``);
    * ``title``: the headline, and ``body``: the main content, one paragraph per line,
      both filled by the CEPR pipeline (field names: settings ``CEPR_TITLE_FIELD``,
      ``CEPR_BODY_FIELD``);
    * ``cepr_error``: None, or why a page could not be cleaned (too large, timeout,
      extraction error, no main content);
    * ``page_type``: ``"article"``, or another of the seven page types (``"listing"`` for
      an index or section page; setting ``CEPR_NON_ARTICLE``: ``"drop"`` drops the
      non-articles, ``"keep"`` does not detect them).

    :raises ValueError: a ``start_urls`` entry is not an ``http``, ``https`` or ``file`` URL,
        or the list is empty.
    """

    name = "newsspider"

    def __init__(self, start_urls: str | None = None, since: str | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.since = since
        _ = self.since_date  # a bad value fails here, before the crawl starts
        if start_urls is None:
            urls = [SITE_INDEX.as_uri()]
        else:
            urls = [u.strip() for u in start_urls.split(",") if u.strip()]
            if not urls:
                raise ValueError("start_urls: give one or more comma-separated URLs")
        domains: list[str] = []
        file_roots: list[Path] = []
        for url in urls:
            parts = urlparse(url)
            if parts.scheme in ("http", "https") and parts.hostname:
                domains.append(parts.hostname.lower())
            elif parts.scheme == "file":
                file_roots.append(_local_path(url).parent)
            else:
                raise ValueError(f"start_urls: {url!r} is not an http(s):// or file:// URL")
        self.start_urls = urls
        self._domains = domains
        self._file_roots = file_roots
        self._links = LinkExtractor()

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, meta=self._meta(url))
            for request in self.discovery_start(url):
                yield request

    def parse(self, response: Response) -> Iterator[dict[str, Any] | scrapy.Request]:
        """Yield the page's item (unless it is a start page) and requests for its
        same-site links (and, on a start page, its feeds)."""
        depth = response.meta.get("depth", 0)
        if depth > 0:
            yield {"url": response.url, "canonical_url": canonical_url(response)}
        if not isinstance(response, HtmlResponse):
            return
        if depth == 0:
            yield from self.feed_requests(response)
        limit = self.settings.getint("DEPTH_LIMIT")
        if limit and depth >= limit:
            # Requests for these links would be dropped by DepthMiddleware; extracting
            # them is the costliest part of the spider (measured: ~2/3 of the crawler's CPU
            # with DEPTH_LIMIT=1 on the benchmark pages), so skip it.
            return
        yield from self.link_requests(response, self._links.extract_links(response))

    def _in_scope(self, response: Response | None, url: str) -> bool:
        return self._same_site(url)

    def _child_meta(self, response: Response | None, url: str) -> dict[str, Any]:
        return self._meta(url)

    def _same_site(self, url: str) -> bool:
        parts = urlparse(url)
        if parts.scheme in ("http", "https"):
            host = (parts.hostname or "").lower()
            return any(host == d or host.endswith("." + d) for d in self._domains)
        if parts.scheme == "file":
            # The path as the file system will open it: percent-decoded (%2e%2e is ..),
            # then resolved (.. and symlinks), so that no link leaves the site's root.
            path = _local_path(url)
            return any(path.is_relative_to(root) for root in self._file_roots)
        return False

    @staticmethod
    def _meta(url: str) -> dict[str, Any]:
        if url.startswith("file:"):
            return {"download_slot": LOCAL_SLOT, "autothrottle_dont_adjust_delay": True}
        return {}


def _local_path(url: str) -> Path:
    """The file a ``file://`` URL opens, percent-decoded (w3lib's ``file_uri_to_path``)
    and resolved: ``..`` segments (also written ``%2e%2e``) and symlinks are followed, so
    a containment check on the result is a check on the real file.

    >>> str(_local_path("file:///srv/site/a/%2e%2e/%2E%2E/etc/hostname"))
    '/srv/etc/hostname'
    """
    return Path(file_uri_to_path(url)).resolve()
