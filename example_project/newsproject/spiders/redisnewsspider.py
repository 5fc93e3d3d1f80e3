"""``redisnewsspider``: ``newsspider`` over a shared Redis frontier, in as many processes
(or machines) as wanted.

Recipe (see :mod:`scrapy_cepr.distributed` for the guarantees, ``docs/distributed.md`` for
securing Redis: anyone who can write to it decides what the crawlers fetch)::

    # a password, and only a private interface (add TLS, rediss://, across networks)
    redis-server --port 6379 --bind 127.0.0.1 10.0.0.5 --requirepass "$REDIS_PASSWORD" --save '' --appendonly no &
    REDISCLI_AUTH="$REDIS_PASSWORD" redis-cli lpush redisnewsspider:start_urls https://news.example/
    # in each of N terminals / machines:
    export REDIS_URL="redis://:$REDIS_PASSWORD@10.0.0.5:6379"
    scrapy crawl redisnewsspider -O part-$N.jsonl

Every process reads start URLs from the Redis list ``redisnewsspider:start_urls`` (a plain
``http(s)://`` URL, or JSON ``{"url": ...}``; other schemes are refused), shares one request queue and one duplicate filter
(scrapy-redis), and exports its own items. The outputs together hold every page once; a
process killed mid-crawl loses nothing (its in-flight requests are requeued by the others
when its heartbeat expires, or at once when it restarts with the same
``-s SCHEDULER_CRAWLER_ID=...``). A process closes after the whole cluster was quiet for
``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds (10 here; 0 keeps it waiting for new start URLs).

``REDIS_URL`` is read from the environment (so that the password is not on the command
line), or given with ``-s REDIS_URL=...``. A wrong or missing password stops the crawl at
start with :class:`scrapy_cepr.exceptions.RedisUnavailableError`.

The keys stay in Redis after the crawl (``SCHEDULER_PERSIST``): the duplicate filter
remembers every page, start URLs included (a start URL crawled before is not crawled
again). For a fresh crawl of the same site, delete them first:
``redis-cli del redisnewsspider:requests redisnewsspider:dupefilter``.

Discovery (sitemaps, feeds, ``-a since=...``) works as in ``newsspider``. Incremental
crawling (``-s CEPR_STATE_DIR=any``): the state lives in Redis, in
``redisnewsspider:cepr:exported`` and ``redisnewsspider:cepr:canonical``
(:mod:`scrapy_cepr.incremental`), shared by every crawler; for the next run delete only
the duplicate filter (``redis-cli del redisnewsspider:dupefilter``) and keep those.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

import scrapy
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response

try:
    from scrapy_redis.spiders import RedisMixin

    from scrapy_cepr.distributed import check_redis, log_redis_unavailable, refuse_scheme
    from scrapy_cepr.exceptions import RedisUnavailableError
except ImportError as exc:  # the project's other spiders must load without scrapy-redis
    _MISSING: ImportError | None = exc

    class RedisMixin:  # type: ignore[no-redef]
        """Stand-in; :meth:`RedisNewsSpider.from_crawler` says what to install."""
else:
    _MISSING = None

from .newsspider import NewsSpider

logger = logging.getLogger(__name__)

#: Request meta key carrying the site of the start URL a request descends from: a
#: ``(domains, file_roots)`` pair of tuples of strings (JSON data: it travels through Redis).
SITE_META = "newsspider_site"

_STORAGE = "scrapy_cepr.distributed.LineFlushedFileFeedStorage"


class RedisNewsSpider(RedisMixin, NewsSpider):
    """:class:`NewsSpider` (same pages, same items, same link rules) reading its start
    URLs from Redis, on scrapy-redis's scheduler and duplicate filter with in-flight
    recovery (:class:`scrapy_cepr.distributed.RecoveringScheduler`).

    The "same site" of a page is the site of the start URL it descends from, carried in
    the request's meta (``SITE_META``), so that any process can follow any page's links
    whichever process read the start URL. A start URL that is not ``http(s)://`` (a
    ``file://`` one would read the crawler's local files into the items) is refused:
    counted in ``cepr/redis/refused_scheme`` and logged once per scheme; a malformed entry
    is logged and dropped. The other entries are crawled. For a local ``file://`` crawl,
    use ``newsspider``.
    """

    name = "redisnewsspider"
    custom_settings = {
        "SCHEDULER": "scrapy_cepr.distributed.RecoveringScheduler",
        "DUPEFILTER_CLASS": "scrapy_redis.dupefilter.RFPDupeFilter",
        "SCHEDULER_PERSIST": True,
        "SPIDER_MIDDLEWARES": {"scrapy_cepr.distributed.InFlightSpiderMiddleware": 5},
        "FEED_STORAGES": {"": _STORAGE, "file": _STORAGE},
        "MAX_IDLE_TIME_BEFORE_CLOSE": 10,
        # From the environment, so that a password stays off the command line (``ps``);
        # ``-s REDIS_URL=...`` still wins.
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379"),
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.pop("start_urls", None)  # start URLs come from Redis only
        super().__init__(*args, **kwargs)
        self.start_urls = []
        self._domains, self._file_roots = [], []
        self._schemes_logged: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> RedisNewsSpider:
        """:raises ImportError: scrapy-redis is not installed (``pip install 'scrapy-cepr[redis]'``)."""
        if _MISSING is not None:
            raise ImportError("redisnewsspider needs scrapy-redis and redis: pip install 'scrapy-cepr[redis]'") from _MISSING
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.setup_redis(crawler)
        # Before the engine starts: a wrong or missing password ends the crawl here, with
        # one clear error (RedisUnavailableError) rather than a failure deep in the scheduler.
        try:
            check_redis(spider.server)
        except RedisUnavailableError as exc:
            log_redis_unavailable(exc)  # one error line, no traceback; scrapy crawl exits with 1
            raise
        return spider

    async def start(self) -> AsyncIterator[scrapy.Request]:
        # Start URLs already waiting; later ones are read when the spider is idle.
        for request in self.next_requests():
            yield request

    def spider_idle(self) -> None:
        """Read the next batch of start URLs. Whether to close is the scheduler's call
        (the whole cluster quiet for ``MAX_IDLE_TIME_BEFORE_CLOSE`` seconds)."""
        found = False
        for request in self.next_requests():
            self.crawler.engine.crawl(request)
            found = True
        if found:
            raise DontCloseSpider

    def make_request_from_data(self, data: bytes) -> list[scrapy.Request]:
        """The requests of one start-URL entry (a URL, or JSON ``{"url": ...}``); ``[]``
        for an entry that is refused (not ``http(s)://``) or malformed. Never raises: the
        rest of the batch read from Redis must not be lost."""
        try:
            text = data.decode(self.redis_encoding).strip()
            url = json.loads(text)["url"] if text.startswith("{") else text
        except (ValueError, KeyError, TypeError):
            url = None
        if not isinstance(url, str):
            logger.error("start URL entry %r: expected a URL or JSON {\"url\": ...}: dropped", data[:200])
            return []
        if refuse_scheme(url, what="start URL", stats=self.crawler.stats, logged=self._schemes_logged):
            return []
        try:
            host = urlparse(url).hostname
        except ValueError:  # a bad IPv6 host, a bad port
            host = None
        if not host:
            logger.error("start URL %r has no valid host: dropped", url[:200])
            return []
        site = ((host.lower(),), ())
        meta = {**self._meta(url), SITE_META: site}
        # Filtered like any request, so the shared duplicate filter knows the start page
        # and a link back to it (a "Home" link) is not crawled and exported as a page.
        requests = [scrapy.Request(url, callback=self.parse, meta=meta)]
        for request in self.discovery_start(url):  # robots.txt -> sitemaps
            request.meta[SITE_META] = site
            requests.append(request)
        return requests

    def _in_scope(self, response: Response | None, url: str) -> bool:
        """The same-site rule of the start URL the page descends from (its ``SITE_META``)."""
        site = response.meta.get(SITE_META) if response is not None else None
        if site is None:
            return False
        domains, roots = site
        scope = SimpleNamespace(_domains=list(domains), _file_roots=[Path(r) for r in roots])
        return NewsSpider._same_site(scope, url)  # type: ignore[arg-type]

    def _child_meta(self, response: Response | None, url: str) -> dict[str, Any]:
        meta = self._meta(url)
        if response is not None and SITE_META in response.meta:
            meta[SITE_META] = response.meta[SITE_META]
        return meta

    def _same_site(self, url: str) -> bool:
        # Decided per page in _in_scope(), from the page's start URL.
        return True
