"""Distributed crawling on scrapy-redis with no page lost and none exported twice.

scrapy-redis shares one request queue (a Redis sorted set, ``<spider>:requests``) and one
duplicate filter (``<spider>:dupefilter``) between any number of crawler processes. On
its own it loses pages when a crawler dies: a request popped from the shared queue is
already in the duplicate filter, so nobody will ever schedule it again. This module adds
the missing bookkeeping **on top of** scrapy-redis (no new engine):

* :class:`RecoveringScheduler` (a subclass of ``scrapy_redis.scheduler.Scheduler``) moves
  each request it takes from the shared queue into the crawler's **in-flight set**
  ``<spider>:inflight:<crawler id>`` in one atomic Redis script, keeps a **heartbeat** key
  ``<spider>:heartbeat:<crawler id>`` alive while the crawler runs, and **requeues** the
  in-flight set of every crawler whose heartbeat expired (SIGKILL, power loss) into the
  shared queue, again atomically. A crawler restarted with the same
  ``SCHEDULER_CRAWLER_ID`` requeues its own previous in-flight set at once.
* It also marks each new request seen in the shared duplicate filter and pushes it to the
  shared queue in one atomic script (scrapy-redis does ``SADD`` then ``ZADD``: a crawler
  killed in between leaves a page seen and never queued, which the requeued parent page
  cannot bring back).
* :class:`InFlightSpiderMiddleware` counts the outputs (items and requests) of each
  response, so that the scheduler removes a request from the in-flight set **right after
  its last item was written by the feed export** and its follow-up requests were pushed to
  the shared queue. Requests that end without reaching the spider (redirects, retries,
  download errors) are settled by a sweep on every heartbeat.
* :class:`LineFlushedFileFeedStorage` writes the ``-O file.jsonl`` feed unbuffered, so an
  exported line is in the file (the kernel's page cache) as soon as the exporter wrote it,
  and a SIGKILL cannot discard it from a user-space buffer.

What "exported" means, and the exactly-once rule
-----------------------------------------------
An item is *exported* when its JSON line, ending with ``\\n``, is in one crawler's output
file. A killed crawler's file keeps every line it wrote; a last line without ``\\n`` (a
write cut by the kill) is not an exported item (:func:`read_jsonl` drops it), and its page
is still in the in-flight set, so it is crawled again by another crawler.

The order for a page is: the item line is written (one unbuffered ``write()``), then the
page's request is removed from the in-flight set (one ``ZREM`` sent to Redis). A crawler
killed *before* the write loses nothing: the request is requeued. A crawler killed
*after* the ``ZREM`` was sent has finished the page. Only a kill that lands between the
``write()`` and the sending of the ``ZREM`` (Python work only, no I/O wait) exports the page twice (once in the killed crawler's file, once by
the crawler that recovers it). Two processes (a file and a Redis server) cannot be
committed atomically without a shared log; consumers that need a strict guarantee keep
the first line per ``url`` (:func:`read_jsonl` reports duplicates). Over our runs the
window was hit once: a crawler killed right after it wrote a line (the end-to-end test
killed as soon as it saw new lines) exported that one page twice; the test now stops the
crawler outside the window before the kill.

Start URLs are read from their Redis list by scrapy-redis (``LRANGE`` + ``LTRIM`` of a
batch) and pushed to the shared queue in the same reactor step; a crawler killed between
the two loses that batch of start URLs (not pages reached from them): push them again.
A request whose response is being processed when the heartbeat expires (the crawler is
alive but its reactor was blocked longer than ``SCHEDULER_HEARTBEAT_TIMEOUT``) is
requeued and may be exported twice: the crawler logs an error and counts
``cepr/distributed/heartbeat_lost``.

Closing a batch crawl
---------------------
A crawler closes once the whole cluster has been quiet for ``MAX_IDLE_TIME_BEFORE_CLOSE``
seconds (scrapy-redis's setting; 0 = never close): its own engine idle, the shared queue
and start-URL list empty, and **every** registered crawler's in-flight set empty. So a
crawler does not leave while another one is still working (it may push new requests) or
lies dead with in-flight requests not yet recovered (they are requeued once its heartbeat
expires, and picked up by those still running).

The queue's data format, and who can harm the crawl
---------------------------------------------------
scrapy-redis stores requests as pickles by default: whoever can write to the Redis server
runs code in every crawler. Here a queue entry (in the shared queue, in-flight sets and
``<spider>:bad_requests``) is the JSON of Scrapy's ``Request.to_dict``, ASCII-only, with
``bytes`` (the body, header names and values) as ``{"$bytes": "<base64>"}``, tuples as
``{"$tuple": [...]}`` and dicts with non-string or ``$``-prefixed keys as
``{"$dict": [[key, value], ...]}`` (:func:`dumps`, :func:`loads`). Reading an entry imports
nothing and calls nothing of the entry's choosing: a ``_class`` must name a ``Request``
subclass whose module is already imported, and a callback or errback a public method of
the spider.

* A **meta value that is not JSON data** (an object, a set …) is left out of the stored
  request, with one warning per meta key and the count ``cepr/distributed/meta_dropped``:
  the request is still crawled, without that key. Other parts that are not JSON data (``cb_kwargs``, a callback that is not a
  spider method) cannot be left out: the request is not scheduled (an error, and
  ``cepr/distributed/unserializable``).
* A **malformed entry** (not JSON, a pickle, not a request, a ``_class`` or callback
  refused above) is dropped as soon as a crawler takes it: it leaves the in-flight set,
  so it keeps no crawler from closing, and is moved to the list
  ``<spider>:bad_requests`` (newest first, at most 1,000) for inspection. The first ten
  per crawler are logged as errors; all are counted in ``cepr/distributed/bad_requests``.

* A **request whose URL is not** ``http(s)://`` (``file://``, ``ftp://``, ``data:`` …)
  is refused, whether popped from the shared queue or about to be pushed to it: a
  ``file://`` entry would make every crawler read its own local files into the items.
  It leaves the in-flight set for ``<spider>:bad_requests``, is counted in
  ``cepr/redis/refused_scheme`` and logged once per scheme (:func:`refuse_scheme`). There
  is no setting to allow other schemes; crawl local files without Redis.

Redis is still the crawl's control channel: whoever can write to it chooses what the
crawlers fetch (http(s) URLs, headers, meta such as ``proxy``) and can empty the queue.
Give it a password (``requirepass``, or an ACL user), bind it to a private interface, and
use TLS (``rediss://``) across networks; see ``docs/distributed.md``. :func:`check_redis`
turns a missing or wrong password into one clear :class:`RedisUnavailableError` (the
password is never logged), which :func:`log_redis_unavailable` logs as one line.

Settings (besides scrapy-redis's ``REDIS_URL``, ``SCHEDULER_*`` and
``MAX_IDLE_TIME_BEFORE_CLOSE``):

``SCHEDULER_CRAWLER_ID``
    Name of this crawler in Redis (default: ``<hostname>-<pid>-<6 hex digits>``). Must be
    unique among running crawlers; give a stable one to recover at once on restart.
``SCHEDULER_HEARTBEAT_TIMEOUT``
    Seconds (> 0, default 30) after the last heartbeat at which a crawler is taken for
    dead and its in-flight requests are requeued. The heartbeat is refreshed every third
    of it, from the reactor thread: it must exceed the longest time the reactor can be
    blocked (with ``CEPR_EXECUTOR="inline"``, the slowest page's extraction).

Needs ``pip install 'scrapy-cepr[redis]'`` (scrapy-redis, redis) and a Redis server ≥ 6.2.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import math
import os
import secrets
import socket
import sys
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlparse

from scrapy import Request, Spider, signals
from scrapy.exceptions import DontCloseSpider
from scrapy.extensions.feedexport import FileFeedStorage
from scrapy.http import Response
from scrapy.utils.request import request_from_dict

try:
    import redis
    from scrapy_redis.connection import get_redis_from_settings
    from scrapy_redis.dupefilter import RFPDupeFilter
    from scrapy_redis.queue import PriorityQueue
    from scrapy_redis.scheduler import Scheduler
except ImportError as exc:  # the crawl stops at start (Scrapy loads SCHEDULER), naming the extra
    raise ImportError(f'scrapy_cepr.distributed needs scrapy-redis ({exc}): pip install "scrapy-cepr[redis]"') from exc
from twisted.internet.task import LoopingCall

from .exceptions import RedisUnavailableError

logger = logging.getLogger(__name__)

__all__ = [
    "InFlightSpiderMiddleware",
    "LineFlushedFileFeedStorage",
    "OutputReport",
    "RecoveringScheduler",
    "check_redis",
    "dumps",
    "loads",
    "log_redis_unavailable",
    "read_jsonl",
    "refuse_scheme",
]

#: Keys, as templates over the spider name and the crawler id.
INFLIGHT_KEY = "%(spider)s:inflight:%(crawler)s"
HEARTBEAT_KEY = "%(spider)s:heartbeat:%(crawler)s"
CRAWLERS_KEY = "%(spider)s:crawlers"
#: Malformed queue entries, newest first, kept for inspection (at most BAD_REQUESTS_KEPT).
BAD_REQUESTS_KEY = "%(spider)s:bad_requests"
BAD_REQUESTS_KEPT = 1000
#: Malformed entries logged one by one per crawler; the rest are only counted.
BAD_REQUESTS_LOGGED = 10
#: Malformed entries skipped in one ``next_request`` call before it gives the reactor back.
BAD_REQUESTS_PER_CALL = 100

DEFAULT_HEARTBEAT_TIMEOUT = 30.0

#: The only URL schemes taken from Redis (requests of the shared queue, start URLs).
REDIS_SCHEMES = frozenset({"http", "https"})
#: Stat counting the requests and start URLs refused for their scheme.
REFUSED_SCHEME_STAT = "cepr/redis/refused_scheme"


# -- the queue's data format: JSON, never pickle ------------------------------------------

_BYTES, _TUPLE, _DICT = "$bytes", "$tuple", "$dict"


def _to_json(value: Any) -> Any:
    """*value* as JSON data: ``bytes`` as ``{"$bytes": base64}``, ``tuple`` as
    ``{"$tuple": [...]}``, a ``dict`` with a key that is not a ``str`` or starts with ``$``
    as ``{"$dict": [[key, value], ...]}``. Subclasses (an ``OrderedDict``, a named tuple,
    an ``IntEnum``) are stored as their base type.

    :raises TypeError: a value of another type, or a float that is not finite.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"{value!r} is not a finite number")
        return value
    if isinstance(value, bytes):
        return {_BYTES: base64.b64encode(value).decode("ascii")}
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, tuple):
        return {_TUPLE: [_to_json(v) for v in value]}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {str(k): _to_json(v) for k, v in value.items()}
        return {_DICT: [[_to_json(k), _to_json(v)] for k, v in value.items()]}
    raise TypeError(f"{type(value).__name__} is not JSON data")


def _from_json_object(obj: dict[str, Any]) -> Any:
    # json's object_hook, innermost objects first: undo _to_json's markers.
    if not any(k.startswith("$") for k in obj):
        return obj
    if len(obj) != 1:
        raise ValueError(f"a marker object has other keys: {sorted(obj)[:5]}")
    ((marker, value),) = obj.items()
    if marker == _BYTES and isinstance(value, str):
        return base64.b64decode(value, validate=True)
    if marker == _TUPLE and isinstance(value, list):
        return tuple(value)
    if marker == _DICT and isinstance(value, list) and all(isinstance(p, list) and len(p) == 2 for p in value):
        return {k: v for k, v in value}  # TypeError for an unhashable key
    raise ValueError(f"bad marker object {marker!r}")


def dumps(obj: dict[str, Any]) -> bytes:
    """A request dict (Scrapy's ``Request.to_dict``) as ASCII JSON bytes, the entries of
    the shared queue. ``bytes``, tuples and dicts with non-``str`` keys are kept through
    the markers of ``_to_json``, so :func:`loads` returns an equal dict.

    With :func:`loads`, this module is a scrapy-redis ``SCHEDULER_SERIALIZER``
    (``"scrapy_cepr.distributed"``); :class:`RecoveringScheduler` always uses it.

    :raises TypeError: a value other than None, bool, int, finite float, str, bytes, list,
        tuple or dict.
    :raises RecursionError: nested deeper than the interpreter's recursion limit.
    """
    return json.dumps(_to_json(obj), ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def loads(data: bytes | str) -> dict[str, Any]:
    """The dict :func:`dumps` wrote. Plain JSON: nothing is imported, called or
    unpickled.

    :raises ValueError: *data* is not JSON (or not UTF-8), or holds a malformed marker
        object (``{"$bytes": ...}`` and the like).
    :raises TypeError: not a JSON object, or a ``$dict`` key that cannot be a dict key.
    """
    obj = json.loads(data, object_hook=_from_json_object)
    if not isinstance(obj, dict):
        raise TypeError(f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _request_class(path: Any) -> type[Request]:
    """The ``Request`` subclass named *path* (``"module.Class"``), only if its module is
    already imported: importing a module named in Redis would run its code."""
    if not isinstance(path, str):
        raise TypeError(f"_class: expected a class path, got {type(path).__name__}")
    module, _, name = path.rpartition(".")
    cls = getattr(sys.modules.get(module), name, None) if module else None
    if not (isinstance(cls, type) and issubclass(cls, Request)):
        raise TypeError(f"_class {path!r} is not an imported scrapy.Request subclass")
    return cls


def _check_request_dict(d: dict[str, Any]) -> None:
    if not isinstance(d.get("url"), str):
        raise TypeError("no 'url' string")
    if "_class" in d:
        _request_class(d["_class"])
    for name in ("callback", "errback"):
        method = d.get(name)
        if method is not None and not (isinstance(method, str) and method.isidentifier() and not method.startswith("_")):
            raise ValueError(f"{name} {method!r} is not the name of a public spider method")


def refuse_scheme(url: str, *, what: str, stats: Any, logged: set[str]) -> bool:
    """Whether *url*, read from Redis, must be refused: its scheme is not ``http`` or
    ``https`` (``file://`` would make the crawler read its own local files into the
    items). A refusal is counted in ``cepr/redis/refused_scheme`` (*stats*: a Scrapy
    stats collector, or None) and logged as an error once per scheme (the schemes already
    logged are kept in *logged*, one set per crawler and per *what*, e.g. ``"start URL"``).
    """
    scheme = urlparse(url).scheme  # lower case
    if scheme in REDIS_SCHEMES:
        return False
    if stats is not None:
        stats.inc_value(REFUSED_SCHEME_STAT)
    if scheme not in logged:
        logged.add(scheme)
        logger.error(
            "%s %r read from Redis refused: scheme %r, only http(s) URLs are taken from Redis "
            "(further %r ones are only counted: %s)", what, url[:200], scheme, scheme, REFUSED_SCHEME_STAT,
        )
    return True


def log_redis_unavailable(error: RedisUnavailableError) -> None:
    """Log *error* as one error line, and keep the crawl's asyncio task from logging it
    again with a traceback ("Task exception was never retrieved") when it ends with it.

    Call it right before re-raising *error* where the crawl starts (a spider's
    ``from_crawler``, a scheduler's): Scrapy still marks the crawl failed (``scrapy crawl``
    exits with 1) and ``await``-ing callers still get the exception.
    """
    logger.error("%s", error)
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running event loop (a Twisted reactor without asyncio)
        return
    if task is None:
        return

    def retrieved(task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            return
        exc = task.exception()  # marks it retrieved
        cause = exc
        while cause is not None and cause is not error:
            # Scrapy's clean-up after a failed engine start can fail in turn (an engine
            # without a slot): raised while handling *error*, it is the same failure.
            cause = cause.__context__
        if exc is not None and cause is None:  # another failure: asyncio's report, as usual
            task.get_loop().call_exception_handler(
                {"message": "Task exception was never retrieved", "exception": exc, "future": task})

    task.add_done_callback(retrieved)


def _where(server: Any) -> str:
    kwargs = server.connection_pool.connection_kwargs
    if kwargs.get("path"):
        return str(kwargs["path"])
    return f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"


def check_redis(server: Any) -> None:
    """``PING`` *server* (a redis-py client).

    :raises RedisUnavailableError: it cannot be reached, or asks for a password that
        ``REDIS_URL`` lacks or gets wrong (``redis://:PASSWORD@HOST:PORT``, or
        ``redis://USER:PASSWORD@…`` for an ACL user; ``rediss://`` for TLS).
    """
    where = _where(server)
    how = ("give it in REDIS_URL as redis://:PASSWORD@HOST:PORT (redis://USER:PASSWORD@... for an ACL user, "
           "rediss://... for TLS); see docs/distributed.md")
    try:
        server.ping()
    except (redis.exceptions.AuthenticationError, redis.exceptions.AuthorizationError,
            redis.exceptions.ResponseError) as exc:
        if isinstance(exc, redis.exceptions.ResponseError) and "auth" not in str(exc).lower():
            raise
        if not server.connection_pool.connection_kwargs.get("password"):
            raise RedisUnavailableError(f"Redis at {where} asks for a password and REDIS_URL gives none: {how}") from None
        raise RedisUnavailableError(f"Redis at {where} refused the password of REDIS_URL ({exc}): {how}") from None
    except redis.exceptions.ConnectionError as exc:
        raise RedisUnavailableError(f"cannot reach Redis at {where} ({exc}): check REDIS_URL") from None


# Pop the best request (lowest score) from the shared queue into the in-flight set, in one
# step: a crawler killed at any point leaves the request in exactly one of the two.
_POP = """
local r = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if #r == 0 then return false end
redis.call('ZREM', KEYS[1], r[1])
redis.call('ZADD', KEYS[2], r[2], r[1])
return r[1]
"""

# Mark a request seen in the duplicate filter and push it to the shared queue in one step
# (ARGV[1] = its fingerprint, '' for dont_filter). Two separate commands would lose it when
# the crawler dies between them: seen, never queued, and the requeued parent's second
# try would find it seen.
_ENQUEUE = """
if ARGV[1] ~= '' and redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
return 1
"""

# Requeue a crawler's in-flight set into the shared queue and forget the crawler, unless
# its heartbeat is alive (ARGV[2] == '1' skips that check: a crawler requeues its own set).
_REQUEUE = """
if ARGV[2] ~= '1' and redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
local items = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #items, 2 do redis.call('ZADD', KEYS[1], items[i + 1], items[i]) end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
return #items / 2
"""


# Move a malformed entry from the in-flight set to the (capped) list of bad entries.
_DROP = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
return 1
"""


def _positive_float(settings: Any, name: str, default: float) -> float:
    value = settings.get(name, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number of seconds > 0, got {value!r}") from None
    if not number > 0:
        raise ValueError(f"{name}: expected a number of seconds > 0, got {value!r}")
    return number


class RecoveringScheduler(Scheduler):
    """scrapy-redis's scheduler plus a per-crawler in-flight set, a heartbeat and the
    requeue of dead crawlers' in-flight requests (see the module docstring).

    Each request is marked seen in the shared duplicate filter and pushed to the shared
    queue in one atomic script, so a crawler killed in between cannot leave a page seen but
    never queued.

    Enable with ``SCHEDULER = "scrapy_cepr.distributed.RecoveringScheduler"``,
    ``DUPEFILTER_CLASS = "scrapy_redis.dupefilter.RFPDupeFilter"``,
    ``SCHEDULER_PERSIST = True`` (otherwise the first crawler to close would clear the
    shared queue of the others) and :class:`InFlightSpiderMiddleware` in
    ``SPIDER_MIDDLEWARES``.

    Requests are stored as JSON (:func:`dumps`, :func:`loads`; see "The queue's data
    format" in the module docstring), whatever scrapy-redis's ``SCHEDULER_SERIALIZER``
    default (pickle) would be.

    Stats: ``cepr/distributed/inflight_done`` (requests finished and removed from the
    in-flight set), ``cepr/distributed/requeued`` (requests put back from dead crawlers),
    ``cepr/distributed/heartbeat_lost`` (this crawler was taken for dead while alive:
    raise ``SCHEDULER_HEARTBEAT_TIMEOUT``), ``cepr/distributed/bad_requests`` (malformed
    queue entries dropped), ``cepr/distributed/meta_dropped`` (meta values that are not
    JSON data, left out of stored requests), ``cepr/distributed/unserializable``
    (requests not scheduled: a callback that is not a spider method, ``cb_kwargs`` that
    are not JSON data), ``cepr/redis/refused_scheme`` (requests refused for a scheme other
    than http(s)).

    :raises ValueError: a bad ``SCHEDULER_HEARTBEAT_TIMEOUT`` or ``SCHEDULER_CRAWLER_ID``,
        a ``SCHEDULER_SERIALIZER`` other than this module, a ``SCHEDULER_QUEUE_CLASS``
        other than scrapy-redis's ``PriorityQueue``, or a ``DUPEFILTER_CLASS`` other than
        its ``RFPDupeFilter`` (or a subclass).
    :raises RedisUnavailableError: Redis cannot be reached or refused the login.
    """

    @classmethod
    def from_crawler(cls, crawler: Any) -> RecoveringScheduler:
        configured = crawler.settings.get("SCHEDULER_SERIALIZER")
        if configured not in (None, "", __name__) and configured is not sys.modules[__name__]:
            raise ValueError(
                f"SCHEDULER_SERIALIZER: RecoveringScheduler stores requests as JSON ({__name__}); "
                f"got {configured!r} (a pickle would run the code of anyone who can write to Redis)"
            )
        try:
            instance = super().from_crawler(crawler)  # PINGs the server
        except redis.exceptions.RedisError:
            try:
                check_redis(get_redis_from_settings(crawler.settings))  # the same error, clearly
            except RedisUnavailableError as exc:
                log_redis_unavailable(exc)
                raise
            raise
        instance._setup(crawler)
        return instance

    def _setup(self, crawler: Any) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self.serializer = sys.modules[__name__]  # the queue's data format: JSON, never pickle
        self._meta_warned: set[str] = set()
        self._schemes_logged: set[str] = set()
        self._bad_logged = 0
        self.heartbeat_timeout = _positive_float(settings, "SCHEDULER_HEARTBEAT_TIMEOUT", DEFAULT_HEARTBEAT_TIMEOUT)
        crawler_id = settings.get("SCHEDULER_CRAWLER_ID") or (
            f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        )
        if not isinstance(crawler_id, str) or not crawler_id.strip() or any(c in crawler_id for c in " :"):
            raise ValueError(f"SCHEDULER_CRAWLER_ID: expected a non-empty name without spaces or ':', got {crawler_id!r}")
        self.crawler_id = crawler_id
        self.quiet_period = int(settings.getint("MAX_IDLE_TIME_BEFORE_CLOSE", 0))
        if self.quiet_period < 0:
            raise ValueError(f"MAX_IDLE_TIME_BEFORE_CLOSE: expected seconds >= 0, got {self.quiet_period}")
        self._pop = self.server.register_script(_POP)
        self._enqueue = self.server.register_script(_ENQUEUE)
        self._requeue = self.server.register_script(_REQUEUE)
        self._drop = self.server.register_script(_DROP)
        # request -> its member in the in-flight set (the serialized request)
        self._inflight: dict[Request, bytes] = {}
        # request -> outputs (items, requests) of its response not yet settled
        self._pending: dict[Request, int] = {}
        # requests whose callback output is still being produced
        self._producing: set[Request] = set()
        # follow-up request -> the in-flight request whose response yielded it
        self._parent: dict[Request, Request] = {}
        self._quiet_since: float | None = None
        self._loop: LoopingCall | None = None
        # Connected after the feed export (an extension, built with the crawler): on
        # item_scraped, the feed has written the item before our handler runs.
        for handler, signal in (
            (self._on_item_done, signals.item_scraped),
            (self._on_item_done, signals.item_dropped),
            (self._on_item_done, signals.item_error),
            (self._on_request_dropped, signals.request_dropped),
            (self._on_spider_idle, signals.spider_idle),
        ):
            crawler.signals.connect(handler, signal=signal)

    # -- keys ----------------------------------------------------------------------------

    def _key(self, template: str, crawler_id: str | None = None) -> str:
        return template % {"spider": self.spider.name, "crawler": crawler_id or self.crawler_id}

    # -- Scheduler interface ---------------------------------------------------------------

    def open(self, spider: Spider) -> None:
        super().open(spider)
        if not isinstance(self.queue, PriorityQueue):
            raise ValueError(
                f"SCHEDULER_QUEUE_CLASS: RecoveringScheduler needs scrapy_redis.queue.PriorityQueue, "
                f"got {type(self.queue).__module__}.{type(self.queue).__name__}"
            )
        if not isinstance(self.df, RFPDupeFilter):
            raise ValueError(
                f"DUPEFILTER_CLASS: RecoveringScheduler needs scrapy_redis.dupefilter.RFPDupeFilter, "
                f"got {type(self.df).__module__}.{type(self.df).__name__}"
            )
        self.inflight_key = self._key(INFLIGHT_KEY)
        self.heartbeat_key = self._key(HEARTBEAT_KEY)
        self.crawlers_key = self._key(CRAWLERS_KEY)
        # A restart under the same id: whatever the previous life had in flight goes back.
        leftover = self._requeue_crawler(self.crawler_id, force=True)
        if leftover:
            logger.warning("crawler %s restarted: requeued %d requests it had in flight", self.crawler_id, leftover)
        self.server.set(self.heartbeat_key, str(time.time()), px=int(self.heartbeat_timeout * 1000))
        self.server.sadd(self.crawlers_key, self.crawler_id)
        logger.info(
            "crawler %s: shared queue %r, in-flight set %r, heartbeat timeout %.1f s, quiet period %d s",
            self.crawler_id, self.queue.key, self.inflight_key, self.heartbeat_timeout, self.quiet_period,
        )
        self._loop = LoopingCall(self._tick)
        self._loop.start(self.heartbeat_timeout / 3, now=False).addErrback(
            lambda f: logger.error("heartbeat loop stopped: %s", f.getErrorMessage())
        )

    def close(self, reason: str) -> None:
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if reason == "finished":
            # The cluster was quiet: anything still listed ended without reaching the spider.
            self.server.delete(self.inflight_key)
            self.server.srem(self.crawlers_key, self.crawler_id)
        else:
            n = self._requeue_crawler(self.crawler_id, force=True)
            if n:
                logger.info("closing (%s): requeued %d unfinished requests", reason, n)
        self.server.delete(self.heartbeat_key)
        super().close(reason)

    def enqueue_request(self, request: Request) -> bool:
        """Push *request* unless the shared duplicate filter has seen it (one atomic
        script: see ``_ENQUEUE``); returns whether it was pushed."""
        try:
            if refuse_scheme(request.url, what="request", stats=self.stats, logged=self._schemes_logged):
                return False
            try:
                data = self._encode(request)
            except (TypeError, ValueError, RecursionError) as exc:
                logger.error("request %s cannot be stored in Redis as JSON (%s): not scheduled", request.url, exc)
                if self.stats:
                    self.stats.inc_value("cepr/distributed/unserializable")
                return False
            fingerprint = "" if request.dont_filter else self.df.request_fingerprint(request)
            added = self._enqueue(keys=[self.df.key, self.queue.key], args=[fingerprint, -request.priority, data])
            if not added:
                self.df.log(request, self.spider)
                return False
            if self.stats:
                self.stats.inc_value("scheduler/enqueued/redis")
            return True
        finally:
            parent = self._parent.pop(request, None)
            if parent is not None:
                self._settle(parent)

    def _encode(self, request: Request) -> bytes:
        """*request* as a queue entry (:func:`dumps` of ``Request.to_dict``), without the
        meta values that are not JSON data (each key warned about once, every drop counted).

        :raises ValueError: the callback or errback is not a method of the spider.
        :raises TypeError: another attribute (``cb_kwargs``, ``cookies``) is not JSON data.
        """
        d = request.to_dict(spider=self.spider)
        meta = d.get("meta") or {}
        kept = {}
        for key, value in meta.items():
            try:
                _to_json(key)
                _to_json(value)
            except (TypeError, RecursionError) as exc:
                if self.stats:
                    self.stats.inc_value("cepr/distributed/meta_dropped")
                if repr(key) not in self._meta_warned:
                    self._meta_warned.add(repr(key))
                    logger.warning(
                        "request meta[%r] is not JSON data (%s): dropped from the requests stored in Redis "
                        "(%s; warned once per key, counted in cepr/distributed/meta_dropped)",
                        key, type(value).__name__, exc,
                    )
                continue
            kept[key] = value
        d["meta"] = kept
        return dumps(d)

    def _decode(self, data: bytes) -> Request:
        """The request of a queue entry.

        :raises Exception: any error means a malformed entry (not JSON, not a request dict,
            a ``_class`` that is not an imported ``Request`` subclass, a callback that is
            not a public method of the spider, a bad attribute value).
        """
        d = loads(data)
        _check_request_dict(d)
        return request_from_dict(d, spider=self.spider)

    def _drop_bad(self, data: bytes, error: BaseException) -> None:
        self._drop(keys=[self.inflight_key, self._key(BAD_REQUESTS_KEY)], args=[data, BAD_REQUESTS_KEPT])
        if self.stats:
            self.stats.inc_value("cepr/distributed/bad_requests")
        self._bad_logged += 1
        if self._bad_logged <= BAD_REQUESTS_LOGGED:
            logger.error(
                "malformed request in %s dropped (%s: %s), kept in %s for inspection: %r%s",
                self.queue.key, type(error).__name__, str(error)[:200], self._key(BAD_REQUESTS_KEY),
                data[:200], "" if self._bad_logged < BAD_REQUESTS_LOGGED else
                " (further ones are only counted: cepr/distributed/bad_requests)",
            )

    def next_request(self) -> Request | None:
        """The best request of the shared queue, moved into this crawler's in-flight set;
        None when the queue is empty. Malformed entries met on the way are dropped (moved
        to ``<spider>:bad_requests``), logged and counted (``cepr/distributed/bad_requests``)."""
        for _ in range(BAD_REQUESTS_PER_CALL):
            data = self._pop(keys=[self.queue.key, self.inflight_key])
            if data is None:
                return None
            try:
                request = self._decode(data)
            except Exception as exc:  # noqa: BLE001 - whatever is in Redis, nothing in it may stop the crawl
                self._drop_bad(data, exc)
                continue
            if refuse_scheme(request.url, what=f"request in {self.queue.key}", stats=self.stats,
                             logged=self._schemes_logged):
                # Kept for inspection with the malformed entries; out of the in-flight set.
                self._drop(keys=[self.inflight_key, self._key(BAD_REQUESTS_KEY)], args=[data, BAD_REQUESTS_KEPT])
                continue
            break
        else:
            return None  # only malformed entries so far: give the reactor back, go on next call
        self._inflight[request] = data
        self._quiet_since = None
        if self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request

    # -- output accounting (called by InFlightSpiderMiddleware) ------------------------------

    def output_started(self, request: Request) -> None:
        """The callback of *request*'s response starts producing output."""
        if request in self._inflight:
            self._producing.add(request)
            self._pending.setdefault(request, 0)

    def output_produced(self, request: Request, output: Any) -> None:
        """One output (item or request) of *request*'s response, on its way to the engine."""
        if request not in self._producing or output is None:
            return
        self._pending[request] += 1
        if isinstance(output, Request):
            self._parent[output] = request

    def output_finished(self, request: Request) -> None:
        """The callback of *request*'s response produced its last output."""
        if request in self._producing:
            self._producing.discard(request)
            if not self._pending.get(request):
                self._done(request)

    def _settle(self, request: Request) -> None:
        if request not in self._pending:
            return
        self._pending[request] -= 1
        if self._pending[request] <= 0 and request not in self._producing:
            self._done(request)

    def _done(self, request: Request) -> None:
        self._pending.pop(request, None)
        self._producing.discard(request)
        data = self._inflight.pop(request, None)
        if data is not None:
            self.server.zrem(self.inflight_key, data)
            if self.stats:
                self.stats.inc_value("cepr/distributed/inflight_done")

    def _on_item_done(self, response: Any = None, **kwargs: Any) -> None:
        if isinstance(response, Response) and response.request is not None:
            self._settle(response.request)

    def _on_request_dropped(self, request: Request, **kwargs: Any) -> None:
        parent = self._parent.pop(request, None)
        if parent is not None:
            self._settle(parent)

    # -- heartbeat, sweep, recovery -------------------------------------------------------

    def _tick(self) -> None:
        try:
            alive = self.server.set(self.heartbeat_key, str(time.time()), xx=True, px=int(self.heartbeat_timeout * 1000))
            if not alive:
                logger.error(
                    "crawler %s was taken for dead (no heartbeat for %.1f s): its in-flight requests were "
                    "requeued and may be exported twice; raise SCHEDULER_HEARTBEAT_TIMEOUT",
                    self.crawler_id, self.heartbeat_timeout,
                )
                if self.stats:
                    self.stats.inc_value("cepr/distributed/heartbeat_lost")
                self.server.set(self.heartbeat_key, str(time.time()), px=int(self.heartbeat_timeout * 1000))
                self.server.sadd(self.crawlers_key, self.crawler_id)
            self._sweep()
            self.recover_dead()
            if len(self.queue):
                self._wake_engine()
        except Exception:
            logger.exception("crawler %s: heartbeat tick failed", self.crawler_id)

    def _sweep(self) -> None:
        """Settle the requests the engine has finished with that never reached the spider
        (redirected, retried, failed downloads; responses without items)."""
        engine_slot = getattr(self.crawler.engine, "_slot", None)
        inprogress = getattr(engine_slot, "inprogress", None)
        if inprogress is None or getattr(engine_slot, "closing", None):
            # Closing: cancelled downloads leave the engine too, and must be requeued.
            return
        for request in [r for r in self._inflight if r not in inprogress and r not in self._producing]:
            self._done(request)

    def recover_dead(self) -> int:
        """Requeue the in-flight requests of every registered crawler whose heartbeat
        expired; returns how many requests were requeued."""
        total = 0
        for member in self.server.smembers(self.crawlers_key):
            other = member.decode() if isinstance(member, bytes) else member
            if other == self.crawler_id:
                continue
            n = self._requeue_crawler(other, force=False)
            if n > 0:
                logger.warning("crawler %s is gone (heartbeat expired): requeued its %d in-flight requests", other, n)
            total += max(n, 0)
        return total

    def _requeue_crawler(self, crawler_id: str, *, force: bool) -> int:
        n = int(self._requeue(
            keys=[self.queue.key, self._key(INFLIGHT_KEY, crawler_id), self.crawlers_key,
                  self._key(HEARTBEAT_KEY, crawler_id)],
            args=[crawler_id, "1" if force else "0"],
        ))
        if n > 0 and self.stats:
            self.stats.inc_value("cepr/distributed/requeued", n)
        return n

    def _wake_engine(self) -> None:
        # An idle engine asks the scheduler again only every 5 s; recovered or new requests
        # should not wait for that.
        engine_slot = getattr(self.crawler.engine, "_slot", None)
        nextcall = getattr(engine_slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    def cluster_busy(self) -> bool:
        """True while the shared queue holds requests or any registered crawler has
        requests in flight (working, or dead and not yet recovered)."""
        if len(self.queue):
            return True
        with self.server.pipeline() as pipe:
            crawlers = self.server.smembers(self.crawlers_key)
            for member in crawlers:
                other = member.decode() if isinstance(member, bytes) else member
                pipe.zcard(self._key(INFLIGHT_KEY, other))
            return any(pipe.execute())

    def _on_spider_idle(self, spider: Spider) -> None:
        self._sweep()
        self.recover_dead()
        if self.cluster_busy():
            self._quiet_since = None
            raise DontCloseSpider
        now = time.monotonic()
        if self._quiet_since is None:
            self._quiet_since = now
        if self.quiet_period == 0 or now - self._quiet_since < self.quiet_period:
            raise DontCloseSpider
        logger.info("crawler %s: cluster quiet for %.0f s, closing", self.crawler_id, now - self._quiet_since)


class InFlightSpiderMiddleware:
    """Tell :class:`RecoveringScheduler` which outputs each response produced, so that a
    request leaves the in-flight set right after its last item was exported and its last
    follow-up request was pushed to the shared queue.

    Place it closest to the engine (lowest order, e.g. 5), after every middleware that
    drops or adds outputs. Does nothing under another scheduler.
    """

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> InFlightSpiderMiddleware:
        return cls(crawler)

    async def process_spider_output(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        scheduler = getattr(self.crawler.engine, "scheduler", None)
        request = response.request
        if not isinstance(scheduler, RecoveringScheduler) or request is None:
            async for output in result:
                yield output
            return
        scheduler.output_started(request)
        try:
            async for output in result:
                scheduler.output_produced(request, output)
                yield output
        finally:
            scheduler.output_finished(request)


class LineFlushedFileFeedStorage(FileFeedStorage):
    """Scrapy's local-file feed storage, unbuffered: every ``write()`` of the exporter (one
    per item for JSON lines) goes straight to the operating system, so a killed crawler's
    file holds every item it exported. Enable for ``-O file.jsonl`` with
    ``FEED_STORAGES = {"": <this class>, "file": <this class>}``."""

    def open(self, spider: Spider) -> IO[bytes]:
        path = Path(self.path)
        if not path.parent.exists():
            path.parent.mkdir(parents=True)
        return path.open(self.write_mode, buffering=0)


@dataclass
class OutputReport:
    """The union of several JSON-lines outputs: items (first line per URL kept), exported
    lines, duplicate URLs (url -> number of lines beyond the first), and cut last lines."""

    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: int = 0
    duplicates: dict[str, int] = field(default_factory=dict)
    cut_lines: int = 0


def read_jsonl(paths: Iterable[Path | str], *, url_field: str = "url") -> OutputReport:
    """Read the feed outputs of several crawlers as one (see the module docstring).

    Complete lines (ending with ``\\n``) are exported items; a last line without ``\\n``
    (cut by a kill) is counted in ``cut_lines`` and ignored. Missing files count as empty.

    :raises ValueError: a complete line is not a JSON object with *url_field*.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "a.jsonl").write_text('{"url": "u1"}\\n{"url": "u2"}\\n{"url": "u3"')
    >>> _ = (d / "b.jsonl").write_text('{"url": "u3"}\\n{"url": "u1"}\\n')
    >>> r = read_jsonl([d / "a.jsonl", d / "b.jsonl"])
    >>> sorted(r.items), r.lines, r.duplicates, r.cut_lines
    (['u1', 'u2', 'u3'], 4, {'u1': 1}, 1)
    """
    report = OutputReport()
    for path in paths:
        path = Path(path)
        if not path.exists():
            continue
        data = path.read_bytes()
        complete, _, tail = data.rpartition(b"\n")
        if tail.strip():
            report.cut_lines += 1
        for number, line in enumerate(complete.split(b"\n") if complete else [], 1):
            if not line.strip():
                continue
            item = json.loads(line)
            if not isinstance(item, dict) or url_field not in item:
                raise ValueError(f"{path}:{number}: not a JSON object with {url_field!r}")
            report.lines += 1
            url = item[url_field]
            if url in report.items:
                report.duplicates[url] = report.duplicates.get(url, 0) + 1
            else:
                report.items[url] = item
    return report
