"""Incremental crawling: a second run fetches only the pages no earlier run exported.

With ``CEPR_STATE_DIR`` set, the state of a crawl is kept between runs:

* **exported pages**: URL (normalised with :func:`w3lib.url.canonicalize_url`) ->
  ``(export time, lastmod)``. Each exported item records its fetched URL, the URL it
  was requested under (before redirects) and its ``canonical_url``; the time is the
  UNIX time of the export (``item_scraped``), the lastmod the date its request carried
  (:data:`scrapy_cepr.discovery.LASTMOD_META`: sitemap ``lastmod``, news publication or
  feed date).
* **canonical URLs**: canonical URL -> the first URL exported with it (one article per
  canonical URL, across runs and, in Redis, across crawlers).

:class:`IncrementalSpiderMiddleware` drops every request (a spider output) for an
exported URL, counted ``cepr/incremental/skipped``, unless the request carries a
lastmod newer than the recorded one (or, when none was recorded, newer than the export
time): then it is fetched again, counted ``cepr/incremental/refetched``. Requests for
URLs never exported (start pages, ``robots.txt``, sitemaps, feeds) always pass.
``cepr/incremental/recorded`` counts the exports recorded.

:class:`CanonicalPipeline` (always on, with the state or, without it, for the current
run) drops an item whose ``canonical_url`` was already exported under another URL
(``cepr/canonical/duplicates``): a page reached under two URLs is one article. The
exported item keeps the URL it was fetched from in ``url``.

Where the state lives: in ``CEPR_STATE_DIR/incremental.sqlite3`` (:class:`SQLiteStateStore`,
the standard library's sqlite3), or, when the spider has a Redis connection
(``spider.server``, the scrapy-redis spiders of the distributed mode), in two Redis
hashes ``<spider>:cepr:exported`` and ``<spider>:cepr:canonical``
(:class:`RedisStateStore`), shared by every crawler. Delete the file (or the keys) to
start afresh. Sizes per million pages: ``docs/incremental.md``.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from itemadapter import ItemAdapter
from scrapy import Request, signals
from scrapy.exceptions import DropItem, NotConfigured
from w3lib.url import canonicalize_url

from .discovery import CANONICAL_FIELD, LASTMOD_META, parse_date

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = [
    "CanonicalPipeline",
    "ExportRecord",
    "IncrementalSpiderMiddleware",
    "MemoryStateStore",
    "RedisStateStore",
    "SQLiteStateStore",
    "StateStore",
    "close_state",
    "open_state",
    "url_key",
]

logger = logging.getLogger(__name__)

#: File name of the state in ``CEPR_STATE_DIR``.
STATE_FILE = "incremental.sqlite3"


def url_key(url: str) -> str:
    """The key of *url* in the state: :func:`w3lib.url.canonicalize_url` (sorted query,
    no fragment, normalised percent-encoding).

    >>> url_key("http://a.example/p?b=2&a=1#x")
    'http://a.example/p?a=1&b=2'
    """
    return canonicalize_url(url)


@dataclass(frozen=True)
class ExportRecord:
    """One exported page: UNIX *exported_at* (s) and the *lastmod* (ISO 8601 or None)
    its request carried."""

    exported_at: float
    lastmod: str | None = None

    def is_stale(self, lastmod: str | None) -> bool:
        """True if a request dated *lastmod* shows a newer version than this export."""
        new = parse_date(lastmod)
        if new is None:
            return False
        old = parse_date(self.lastmod)
        if old is not None:
            return new > old
        return new.timestamp() > self.exported_at


class StateStore(Protocol):
    """The state of incremental crawling (see the module docstring)."""

    def get(self, key: str) -> ExportRecord | None: ...
    def put(self, keys: Iterable[str], record: ExportRecord) -> None: ...
    def claim(self, canonical: str, key: str) -> str:
        """Record *key* as the URL of *canonical* unless one is recorded; return the
        recorded one (atomic)."""
        ...
    def count(self) -> int: ...
    def close(self) -> None: ...


class MemoryStateStore:
    """A :class:`StateStore` in a dict, for one run (no ``CEPR_STATE_DIR``)."""

    def __init__(self) -> None:
        self._exported: dict[str, ExportRecord] = {}
        self._canonical: dict[str, str] = {}

    def get(self, key: str) -> ExportRecord | None:
        return self._exported.get(key)

    def put(self, keys: Iterable[str], record: ExportRecord) -> None:
        for key in keys:
            self._exported[key] = record

    def claim(self, canonical: str, key: str) -> str:
        return self._canonical.setdefault(canonical, key)

    def count(self) -> int:
        return len(self._exported)

    def close(self) -> None:
        pass


class SQLiteStateStore:
    """A :class:`StateStore` in one SQLite file (WAL journal; each write is committed,
    so a killed crawl keeps every export it recorded).

    :raises sqlite3.DatabaseError: *path* exists and is not an SQLite database.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS exported (url TEXT PRIMARY KEY, exported_at REAL NOT NULL, "
                         "lastmod TEXT) WITHOUT ROWID")
        self._db.execute("CREATE TABLE IF NOT EXISTS canonical (url TEXT PRIMARY KEY, owner TEXT NOT NULL) "
                         "WITHOUT ROWID")

    def get(self, key: str) -> ExportRecord | None:
        row = self._db.execute("SELECT exported_at, lastmod FROM exported WHERE url = ?", (key,)).fetchone()
        return ExportRecord(row[0], row[1]) if row else None

    def put(self, keys: Iterable[str], record: ExportRecord) -> None:
        rows = [(k, record.exported_at, record.lastmod) for k in dict.fromkeys(keys)]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO exported VALUES (?, ?, ?)", rows)

    def claim(self, canonical: str, key: str) -> str:
        self._db.execute("INSERT OR IGNORE INTO canonical VALUES (?, ?)", (canonical, key))
        return self._db.execute("SELECT owner FROM canonical WHERE url = ?", (canonical,)).fetchone()[0]

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM exported").fetchone()[0]

    def close(self) -> None:
        self._db.close()


class RedisStateStore:
    """A :class:`StateStore` in two Redis hashes, ``<prefix>:exported`` (URL -> JSON
    ``[exported_at, lastmod]``) and ``<prefix>:canonical`` (``HSETNX``), shared by every
    crawler of the distributed mode. *server*: a ``redis.Redis`` client."""

    def __init__(self, server: Any, prefix: str) -> None:
        self.server = server
        self.exported_key = f"{prefix}:exported"
        self.canonical_key = f"{prefix}:canonical"

    def get(self, key: str) -> ExportRecord | None:
        raw = self.server.hget(self.exported_key, key)
        if raw is None:
            return None
        exported_at, lastmod = json.loads(raw)
        return ExportRecord(float(exported_at), lastmod)

    def put(self, keys: Iterable[str], record: ExportRecord) -> None:
        value = json.dumps([record.exported_at, record.lastmod])
        mapping = {k: value for k in keys}
        if mapping:
            self.server.hset(self.exported_key, mapping=mapping)

    def claim(self, canonical: str, key: str) -> str:
        self.server.hsetnx(self.canonical_key, canonical, key)
        owner = self.server.hget(self.canonical_key, canonical)
        return owner.decode() if isinstance(owner, bytes) else owner

    def count(self) -> int:
        return int(self.server.hlen(self.exported_key))

    def close(self) -> None:
        pass


def open_state(crawler: Crawler) -> StateStore | None:
    """The crawl's state store: Redis when the spider has a Redis connection
    (``spider.server``) and ``CEPR_STATE_DIR`` is set, SQLite in ``CEPR_STATE_DIR``
    otherwise, None without ``CEPR_STATE_DIR``. Shared by the components of one crawl
    (kept on the crawler)."""
    store = getattr(crawler, "_cepr_state", None)
    if store is not None:
        return store
    state_dir = crawler.settings.get("CEPR_STATE_DIR")
    if not state_dir:
        return None
    spider = getattr(crawler, "spider", None)
    server = getattr(spider, "server", None)
    if spider is not None and server is not None:
        store = RedisStateStore(server, f"{spider.name}:cepr")
        where = f"Redis {store.exported_key}"
    else:
        store = SQLiteStateStore(Path(state_dir) / STATE_FILE)
        where = str(store.path)
    logger.info("Incremental state: %s (%d URLs exported before)", where, store.count())
    crawler._cepr_state = store  # type: ignore[attr-defined]
    return store


def close_state(crawler: Crawler) -> None:
    """Close the crawl's state store, if open (idempotent)."""
    store = getattr(crawler, "_cepr_state", None)
    if store is not None:
        crawler._cepr_state = None  # type: ignore[attr-defined]
        store.close()


class IncrementalSpiderMiddleware:
    """Skip requests for pages already exported; record exports (``item_scraped``) and
    items dropped on purpose (``item_dropped``: a near-duplicate with ``CEPR_DEDUP="drop"``,
    a non-article with ``CEPR_NON_ARTICLE="drop"``), so that the next run fetches neither.

    :raises NotConfigured: ``CEPR_STATE_DIR`` is not set.
    :raises ValueError: the state cannot be opened (the directory cannot be created, the
        file is not an SQLite database), naming the setting.
    """

    def __init__(self, crawler: Crawler) -> None:
        if not crawler.settings.get("CEPR_STATE_DIR"):
            raise NotConfigured("CEPR_STATE_DIR is not set")
        self.crawler = crawler
        self.stats = crawler.stats
        self._url_field = crawler.settings.get("CEPR_URL_FIELD", "url")
        try:  # now, so that a bad directory stops the crawl before it starts
            open_state(crawler)
        except (OSError, sqlite3.Error) as exc:
            raise ValueError(f"CEPR_STATE_DIR={crawler.settings.get('CEPR_STATE_DIR')!r}: cannot open the "
                             f"incremental state ({exc})") from exc
        crawler.signals.connect(self.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(self.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> IncrementalSpiderMiddleware:
        return cls(crawler)

    @property
    def store(self) -> StateStore:
        store = open_state(self.crawler)  # kept on the crawler, shared with CanonicalPipeline
        assert store is not None
        return store

    def _keep(self, request: Request) -> bool:
        record = self.store.get(url_key(request.url))
        if record is None:
            return True
        if record.is_stale(request.meta.get(LASTMOD_META)):
            self.stats.inc_value("cepr/incremental/refetched")
            return True
        self.stats.inc_value("cepr/incremental/skipped")
        logger.debug("Already exported, not fetched: %s", request.url)
        return False

    def _filter(self, outputs: Iterable[Any]) -> Iterator[Any]:
        for output in outputs:
            if not isinstance(output, Request) or self._keep(output):
                yield output

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for output in start:
            if not isinstance(output, Request) or self._keep(output):
                yield output

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        yield from self._filter(result)

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for output in result:
            if not isinstance(output, Request) or self._keep(output):
                yield output

    def item_scraped(self, item: Any, response: Response | None = None, **kwargs: Any) -> None:
        if self._record(item, response):
            self.stats.inc_value("cepr/incremental/recorded")

    def item_dropped(self, item: Any, response: Response | None = None, **kwargs: Any) -> None:
        if self._record(item, response):
            self.stats.inc_value("cepr/incremental/recorded_dropped")

    def _record(self, item: Any, response: Response | None) -> bool:
        keys = _item_keys(item, response, self._url_field)
        if not keys:
            return False
        lastmod = response.meta.get(LASTMOD_META) if response is not None else None
        self.store.put(keys, ExportRecord(time.time(), lastmod))
        return True

    def spider_closed(self, spider: Any = None, reason: str = "") -> None:
        close_state(self.crawler)


def _item_keys(item: Any, response: Response | None, url_field: str) -> list[str]:
    """State keys of an item: its URL, its response's URL and the URLs before
    redirects, and its canonical URL."""
    adapter = ItemAdapter(item)
    urls = [adapter.get(url_field), adapter.get(CANONICAL_FIELD)]
    if response is not None:
        urls.append(response.url)
        urls += response.meta.get("redirect_urls", [])
        urls.append(response.request.url if response.request is not None else None)
    return [url_key(u) for u in dict.fromkeys(urls) if isinstance(u, str) and u]


class CanonicalPipeline:
    """Drop an item whose ``canonical_url`` was already exported under another URL
    (this run, or an earlier one with ``CEPR_STATE_DIR``). Items without the field pass.
    The first URL seen wins (in Redis, across crawlers)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.stats = crawler.stats
        self._memory = MemoryStateStore()
        self._url_field = crawler.settings.get("CEPR_URL_FIELD", "url")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CanonicalPipeline:
        return cls(crawler)

    def close_spider(self) -> None:
        """Close the state (all items are through the pipelines by now)."""
        close_state(self.crawler)

    def process_item(self, item: Any) -> Any:
        adapter = ItemAdapter(item)
        canonical, url = adapter.get(CANONICAL_FIELD), adapter.get(self._url_field)
        if not isinstance(canonical, str) or not canonical or not isinstance(url, str):
            return item
        store = open_state(self.crawler) or self._memory
        key = url_key(url)
        owner = store.claim(url_key(canonical), key)
        if owner != key:
            self.stats.inc_value("cepr/canonical/duplicates")
            # The alias is exported as far as the next run is concerned.
            store.put([key], ExportRecord(time.time(), None))
            raise DropItem(f"same article as {owner} (canonical URL {canonical}): {url}", log_level="INFO")
        return item
