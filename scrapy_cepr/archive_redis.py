"""Web archives cleaned by many crawler processes (any machines) sharing one Redis: the
archive files are a work queue with leases and heartbeats, and the records already
exported are shared, so a crawler that dies has its file taken over by another, and no
record is lost or exported twice.

:class:`RedisArchiveSpider` (the base of the example project's ``redisarchivespider``) is
:class:`~scrapy_cepr.archive.ArchiveSpider` reading its files from Redis. Keys (``S`` is
the spider name):

``S:archive:queue``
    list of files to read, each entry the JSON ``{"path": "..."}`` (no pickle: nothing
    in Redis is ever unpickled or imported). ``-a paths=…`` on any crawler adds the files
    not seen before (``S:archive:known``); ``redis-cli rpush S:archive:queue
    '{"path": "/data/x.warc.gz"}'`` works too. A malformed entry is moved to
    ``S:archive:bad`` and counted (``cepr/archive/redis/bad_entries``).
    A crawler opens only the files under its **allowed roots**: the directories of the
    files of its own ``-a paths=``, and ``-a roots=DIR[,DIR]``; both compared after
    :func:`os.path.realpath`, so ``..`` and symlinks cannot leave a root. An entry
    naming anything else, or no existing regular file ending in ``.warc``, ``.warc.gz``
    or ``.wacz``, is moved to ``S:archive:bad``, counted
    (``cepr/archive/redis/refused_path``) and logged once per crawler. Give every
    crawler the same roots: a crawler refuses (to ``S:archive:bad``) the files of the
    queue outside its own.
``S:archive:leases``
    hash entry → crawler id: the file a crawler is reading. Taken from the queue in one
    atomic script; released (``S:archive:finished``) only when every record of the file
    was read **and** its item exported (or dropped).
``S:archive:done:<path>``
    set of the records of *path* whose item was exported (``"<warc_file>\\t<offset>"``,
    ``warc_file`` naming the WACZ member for a WACZ), added right
    after the feed exporter wrote the item (the feed file is unbuffered:
    :class:`~scrapy_cepr.archive.UnbufferedFileFeedStorage`).
``S:archive:crawlers``, ``S:archive:heartbeat:<id>``, ``S:archive:output:<id>``
    the registered crawlers, their heartbeat (expires after
    ``SCHEDULER_HEARTBEAT_TIMEOUT`` seconds, refreshed every third of it) and their host
    name and local JSON-lines feed files.

Takeover. A crawler whose heartbeat expired is dead: any other crawler first reads the
dead crawler's feed files, when it can see them (same host, or a shared file system) and
could have written them itself (:meth:`RedisArchiveSpider.may_adopt`: a regular file in
the directory of one of its own local feeds, or under one of its roots; others are
logged and counted in ``cepr/archive/redis/refused_feed``), and
adds every exported record found there to the done sets (this closes the window between
a feed line and its ``SADD``), then puts the dead crawler's leased files back at the head
of the queue, in one atomic script per file. The crawler that takes a file again reads it
from the start and skips the done offsets. A crawler restarted with the same
``SCHEDULER_CRAWLER_ID`` recovers its own leases at once.

What is not covered: a dead crawler whose feed files are on a disk the others cannot read
may have exported one record (per feed) that is exported again (the kill landed between
the feed line and the ``SADD``); keep the first line per ``warc_record_id``. A crawler
that is alive but blocked longer than the heartbeat timeout is taken for dead (logged,
``cepr/archive/redis/heartbeat_lost``). A crawler closes when the queue is empty and no
other crawler holds a lease; a file leased by a crawler that dies after every other
crawler closed waits for the next crawler started.

Needs ``pip install 'scrapy-cepr[warc,redis]'`` and Redis ≥ 6.2; secure Redis as in
``docs/distributed.md``: whoever can write to it still chooses which archive files under
the crawlers' roots are read (and can empty the queue).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import scrapy
from scrapy import signals

from .archive import (
    RECORD_META,
    ArchiveRecord,
    ArchiveSpider,
    _complete_lines,
    expand_paths,
    local_feeds,
    record_request,
)

try:
    from scrapy_redis.connection import get_redis_from_settings

    from .distributed import DEFAULT_HEARTBEAT_TIMEOUT, check_redis
except ImportError as exc:
    raise ImportError(f'scrapy_cepr.archive_redis needs scrapy-redis ({exc}): pip install "scrapy-cepr[redis]"') from exc

logger = logging.getLogger(__name__)

__all__ = ["ARCHIVE_SUFFIXES", "RedisArchiveSpider", "decode_entry", "encode_entry", "under_roots"]

#: The file name endings (lower case) of the archives a queue entry may name.
ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".wacz")
#: Stats of the queue entries refused for their path, and of the adopted feeds refused.
REFUSED_PATH_STAT = "cepr/archive/redis/refused_path"
REFUSED_FEED_STAT = "cepr/archive/redis/refused_feed"

#: Seconds between two looks at the queue while other crawlers hold leases.
POLL_SECONDS = 0.5

_TAKE = """
local entry = redis.call('LPOP', KEYS[1])
if not entry then return false end
redis.call('HSET', KEYS[2], entry, ARGV[1])
return entry
"""
_SEED = """
if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  return 1
end
return 0
"""
_REQUEUE = """
if redis.call('HGET', KEYS[2], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('LPUSH', KEYS[1], ARGV[1])
  return 1
end
return 0
"""
_FINISH = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('SADD', KEYS[2], ARGV[1])
  return 1
end
return 0
"""


def encode_entry(path: str) -> str:
    """The queue entry of *path*: ASCII JSON ``{"path": path}``."""
    return json.dumps({"path": path}, ensure_ascii=True, separators=(",", ":"))


def decode_entry(entry: bytes | str) -> str:
    """The path of a queue entry.

    :raises ValueError: not JSON ``{"path": "<non-empty string>"}``.
    """
    try:
        data = json.loads(entry)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("path"), str) or not data["path"]:
        raise ValueError('expected {"path": "<file>"}')
    return data["path"]


def under_roots(path: str, roots: list[str]) -> bool:
    """Whether the real path of *path* (:func:`os.path.realpath`: ``..`` and symlinks
    resolved) is inside one of *roots* (real paths of directories) or is one of them."""
    real = os.path.realpath(path)
    for root in roots:
        try:
            if os.path.commonpath([real, root]) == root:
                return True
        except ValueError:  # different drives (Windows)
            continue
    return False


def _roots(spec: str) -> list[str]:
    """The real paths of the comma-separated directories *spec*.

    :raises ValueError: none given, or one is not an existing directory."""
    found: list[str] = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        real = os.path.realpath(os.path.expanduser(item))
        if not os.path.isdir(real):
            raise ValueError(f"roots: {item!r} is not an existing directory")
        if real not in found:
            found.append(real)
    if not found:
        raise ValueError("roots: give one or more directories (comma-separated)")
    return found


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _archive_of(file: str) -> str:
    """The queued file of a record's ``warc_file``: the WACZ of a ``"x.wacz!archive/…"`` member."""
    return file.rsplit("!archive/", 1)[0] if "!archive/" in file else file


def _done_member(file: str, offset: int) -> str:
    return f"{file}\t{offset}"


class RedisArchiveSpider(ArchiveSpider):
    """:class:`~scrapy_cepr.archive.ArchiveSpider` whose files come from the shared
    Redis queue (see the module docstring). Same arguments; ``paths`` is optional (files
    to add to the queue), and ``roots`` (comma-separated directories) adds allowed roots:
    the crawler opens only the queued files under the directories of its ``paths`` files
    or under ``roots`` (:attr:`roots`). Settings: ``REDIS_URL``, ``SCHEDULER_CRAWLER_ID``,
    ``SCHEDULER_HEARTBEAT_TIMEOUT`` (as :mod:`scrapy_cepr.distributed`).

    :raises RedisUnavailableError: Redis cannot be reached or refuses the password.
    :raises ValueError: a bad argument (a ``roots`` entry that is no directory), neither
        ``paths`` nor ``roots`` given, or a restart of a crawler id whose earlier feed
        would be overwritten (``-O``).
    """

    name = "redis-archive"
    #: Real paths of the directories whose archive files this crawler may open.
    roots: list[str]

    def __init__(self, paths: str | None = None, *args: Any, roots: str | None = None, **kwargs: Any) -> None:
        super().__init__(paths, *args, **kwargs)
        allowed = _roots(roots) if roots is not None else []
        for path in self.paths:
            directory = os.path.dirname(os.path.realpath(path))
            if directory not in allowed:
                allowed.append(directory)
        if not allowed:
            raise ValueError("give the directories of the archives this crawler may open: -a roots=DIR[,DIR] "
                             "(or -a paths=FILE_OR_GLOB, whose directories are allowed); the Redis queue "
                             "alone must not choose the files a crawler opens")
        self.roots = allowed
        self._refused_logged = False

    def archive_paths(self, paths: str | None) -> list[str]:
        return expand_paths(paths) if paths else []

    def refused_path(self, path: str) -> str | None:
        """Why the queued *path* must not be opened (None: it may): outside :attr:`roots`
        (after :func:`os.path.realpath`), no ``.warc``/``.warc.gz``/``.wacz`` name, or no
        existing regular file."""
        if not under_roots(path, self.roots):
            return "outside the allowed roots"
        real = os.path.realpath(path)
        if not real.lower().endswith(ARCHIVE_SUFFIXES) or not path.lower().endswith(ARCHIVE_SUFFIXES):
            return "not a .warc, .warc.gz or .wacz file"
        if not os.path.isfile(real):
            return "no such regular file on this host"
        return None

    def may_adopt(self, feed: str) -> bool:
        """Whether the feed file *feed*, registered in Redis by another crawler, may be
        read on takeover: its real path is a regular file in the directory of one of this
        crawler's own local feed files, or under one of :attr:`roots`."""
        real = os.path.realpath(feed)
        if not os.path.isfile(real):
            return False
        own_dirs = {os.path.dirname(os.path.realpath(f)) for f in self._feeds}
        return os.path.dirname(real) in own_dirs or under_roots(real, self.roots)

    def _setup(self, crawler: Any) -> None:
        super()._setup(crawler)
        settings = crawler.settings
        self.server = get_redis_from_settings(settings)
        check_redis(self.server)
        self.crawler_id = settings.get("SCHEDULER_CRAWLER_ID") or \
            f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        self.heartbeat_timeout = settings.getfloat("SCHEDULER_HEARTBEAT_TIMEOUT", DEFAULT_HEARTBEAT_TIMEOUT)
        if not self.heartbeat_timeout > 0:
            raise ValueError(f"SCHEDULER_HEARTBEAT_TIMEOUT must be > 0, got {self.heartbeat_timeout!r}")
        prefix = f"{self.name}:archive"
        self.k_queue, self.k_known, self.k_leases = f"{prefix}:queue", f"{prefix}:known", f"{prefix}:leases"
        self.k_finished, self.k_bad, self.k_crawlers = f"{prefix}:finished", f"{prefix}:bad", f"{prefix}:crawlers"
        self._prefix = prefix
        self._take = self.server.register_script(_TAKE)
        self._seed = self.server.register_script(_SEED)
        self._requeue = self.server.register_script(_REQUEUE)
        self._finish = self.server.register_script(_FINISH)
        feeds, problems = local_feeds(settings)
        self._feeds = [str(Path(p).resolve()) for p in feeds]
        previous = self.server.get(self._key("output", self.crawler_id))
        if previous and any(p.startswith("overwrite:") for p in problems):
            raise ValueError(f"crawler {self.crawler_id} ran before and its feed would be overwritten (-O), losing "
                             "the items it exported: restart it with -o (append), or with another "
                             "SCHEDULER_CRAWLER_ID")
        #: entry -> offsets yielded and not yet settled; entries whose reading ended.
        self._outstanding: dict[str, set[int]] = {}
        self._read_done: set[str] = set()
        self._entries: dict[str, str] = {}  # path -> entry
        self._heartbeat: Any = None
        self._done_members: set[str] = set()
        # Our own leases of an earlier run with the same id: recovered at once (after
        # reading the feed files that run registered). The heartbeat starts with the
        # spider (spider_opened): loading the crawler's components may take longer than
        # the heartbeat timeout on a loaded machine.
        self._recover(self.crawler_id)
        for path in self.paths:
            self._seed(keys=[self.k_known, self.k_queue], args=[encode_entry(path)])

    def _key(self, kind: str, arg: str) -> str:
        return f"{self._prefix}:{kind}:{arg}"

    def _register(self) -> None:
        px = int(self.heartbeat_timeout * 1000)
        with self.server.pipeline() as pipe:
            pipe.sadd(self.k_crawlers, self.crawler_id)
            pipe.set(self._key("heartbeat", self.crawler_id), str(time.time()), px=px)
            pipe.set(self._key("output", self.crawler_id),
                     json.dumps({"host": socket.gethostname(), "feeds": self._feeds}))
            pipe.execute()

    # -- life cycle ----------------------------------------------------------------------------

    def _on_opened(self, spider: Any) -> None:
        super()._on_opened(spider)
        from twisted.internet.task import LoopingCall

        self.crawler.signals.connect(self._on_item_settled, signal=signals.item_dropped)
        self.crawler.signals.connect(self._on_item_settled, signal=signals.item_error)
        self._register()
        self._heartbeat = LoopingCall(self._tick)
        self._heartbeat.start(self.heartbeat_timeout / 3, now=False)

    def _on_closed(self, spider: Any) -> None:
        super()._on_closed(spider)
        if self._heartbeat is not None and self._heartbeat.running:
            self._heartbeat.stop()
        # A clean close holds no lease (start() ended, every record settled): leave.
        with self.server.pipeline() as pipe:
            pipe.srem(self.k_crawlers, self.crawler_id)
            pipe.delete(self._key("heartbeat", self.crawler_id))
            pipe.execute()

    def _tick(self) -> None:
        try:
            px = int(self.heartbeat_timeout * 1000)
            if not self.server.set(self._key("heartbeat", self.crawler_id), str(time.time()), xx=True, px=px):
                logger.error("crawler %s was taken for dead (no heartbeat for %.1f s): its files were requeued and "
                             "records may be exported twice; raise SCHEDULER_HEARTBEAT_TIMEOUT",
                             self.crawler_id, self.heartbeat_timeout)
                self.stats.inc_value("cepr/archive/redis/heartbeat_lost")
                self._register()
            self.recover_dead()
        except Exception:
            logger.exception("crawler %s: heartbeat tick failed", self.crawler_id)

    # -- recovery --------------------------------------------------------------------------------

    def recover_dead(self) -> int:
        """Requeue the leased files of every registered crawler whose heartbeat expired
        (after reading their feed files, when visible); returns how many files."""
        total = 0
        for member in self.server.smembers(self.k_crawlers):
            other = _text(member)
            if other == self.crawler_id or self.server.exists(self._key("heartbeat", other)):
                continue
            n = self._recover(other)
            if n:
                logger.warning("crawler %s is gone (heartbeat expired): requeued its %d files", other, n)
            self.server.srem(self.k_crawlers, other)
            total += n
        return total

    def _recover(self, crawler_id: str) -> int:
        leases = [_text(e) for e, owner in self.server.hgetall(self.k_leases).items() if _text(owner) == crawler_id]
        if not leases:
            return 0
        self._adopt_output(crawler_id)
        n = 0
        for entry in leases:
            n += int(self._requeue(keys=[self.k_queue, self.k_leases], args=[entry, crawler_id]))
        if n and self.stats is not None:
            self.stats.inc_value("cepr/archive/redis/requeued", n)
        return n

    def _adopt_output(self, crawler_id: str) -> None:
        """Mark done every record exported in *crawler_id*'s feed files that this host can read."""
        raw = self.server.get(self._key("output", crawler_id))
        try:
            info = json.loads(raw) if raw else {}
            feeds = [str(f) for f in info.get("feeds", [])]
        except (ValueError, AttributeError, TypeError):
            feeds = []
        readable = []
        for f in feeds:
            if not os.path.lexists(f):
                continue
            if self.may_adopt(f):
                readable.append(Path(f))
                continue
            logger.warning("crawler %s: its feed file %r is not a regular file in this crawler's feed directory "
                           "or roots: not read", crawler_id, f[:300])
            if self.stats is not None:
                self.stats.inc_value(REFUSED_FEED_STAT)
        if feeds and not readable:
            logger.warning("crawler %s: its feed files %s are not visible here; a record it exported right before "
                           "it died may be exported again", crawler_id, ", ".join(feeds))
        found = 0
        for feed in readable:
            by_archive: dict[str, list[str]] = {}
            # Not trimmed: another crawler's file (its cut last line, if any, is no item).
            for line in _complete_lines(feed, trim=False):
                try:
                    item = json.loads(line)
                    file, offset = str(item["warc_file"]), int(item["warc_offset"])
                except (ValueError, KeyError, TypeError):
                    continue
                by_archive.setdefault(_archive_of(file), []).append(_done_member(file, offset))
            for path, members in by_archive.items():
                found += self.server.sadd(self._key("done", path), *members)
        if found:
            logger.info("crawler %s: %d exported records found only in its feed files, marked done", crawler_id, found)

    # -- reading ---------------------------------------------------------------------------------

    def _take_file(self) -> tuple[str, str] | None:
        """``(entry, path)`` of a file leased from the queue, or None when it is empty."""
        while True:
            raw = self._take(keys=[self.k_queue, self.k_leases], args=[self.crawler_id])
            if raw is None:
                return None
            try:
                path = decode_entry(raw)
            except ValueError as exc:
                logger.error("malformed archive queue entry %r dropped (%s), kept in %s", raw[:200], exc, self.k_bad)
                self._to_bad(raw)
                self.stats.inc_value("cepr/archive/redis/bad_entries")
                continue
            reason = self.refused_path(path)
            if reason is None:
                return _text(raw), path
            if not self._refused_logged:
                self._refused_logged = True
                logger.error("archive queue entry %r refused: %s (roots: %s); kept in %s. Further refusals are "
                             "only counted (%s)", path[:300], reason, ", ".join(self.roots), self.k_bad,
                             REFUSED_PATH_STAT)
            self._to_bad(raw)
            self.stats.inc_value(REFUSED_PATH_STAT)

    def _to_bad(self, raw: bytes | str) -> None:
        """Move the leased queue entry *raw* to ``S:archive:bad`` (the newest 1000 kept)."""
        with self.server.pipeline() as pipe:
            pipe.hdel(self.k_leases, raw)
            pipe.lpush(self.k_bad, raw)
            pipe.ltrim(self.k_bad, 0, 999)
            pipe.execute()

    def _others_hold_leases(self) -> bool:
        return any(_text(owner) != self.crawler_id for owner in self.server.hvals(self.k_leases))

    async def start(self) -> AsyncIterator[scrapy.Request]:
        """Lease files from the queue and scrape (or yield the requests of) their records until the queue
        is empty and no other crawler holds a lease (a dead one's are requeued)."""
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import reactor
        from twisted.internet.task import deferLater

        while True:
            taken = self._take_file()
            if taken is None:
                self.recover_dead()
                if not self.server.llen(self.k_queue) and not self._others_hold_leases():
                    return
                await maybe_deferred_to_future(deferLater(reactor, POLL_SECONDS, lambda: None))
                continue
            entry, path = taken
            self._entries[path] = entry
            done = {_text(m) for m in self.server.smembers(self._key("done", path))}
            self._outstanding[entry] = set()
            logger.info("crawler %s: reading %s (%d records done before)", self.crawler_id, path, len(done))
            self._done_members = done
            for record in self.records(path):
                if not await self._wait_for_room():
                    return
                self._outstanding[entry].add(record.offset)
                self.stats.inc_value("cepr/archive/pages")
                if self.use_downloader:
                    yield record_request(record, callback=self.parse)
                else:
                    self.scrape_record(record)
            self._read_done.add(entry)
            self._maybe_finish(entry)

    def _done(self, file: str, offset: int) -> bool:
        return _done_member(file, offset) in self._done_members

    def _entry_of(self, record: ArchiveRecord) -> str | None:
        return self._entries.get(_archive_of(record.file))

    def _on_item_scraped(self, item: Any, response: Any = None, **kwargs: Any) -> None:
        record = getattr(response, "meta", {}).get(RECORD_META) if response is not None else None
        if not isinstance(record, ArchiveRecord):
            return
        self.server.sadd(self._key("done", _archive_of(record.file)), _done_member(record.file, record.offset))
        self._settle(record)

    def _on_item_settled(self, item: Any = None, response: Any = None, **kwargs: Any) -> None:
        record = getattr(response, "meta", {}).get(RECORD_META) if response is not None else None
        if isinstance(record, ArchiveRecord):
            self._settle(record)

    def _settle(self, record: ArchiveRecord) -> None:
        entry = self._entry_of(record)
        if entry is None:
            return
        self._outstanding.get(entry, set()).discard(record.offset)
        self._maybe_finish(entry)

    def _maybe_finish(self, entry: str) -> None:
        if entry in self._read_done and not self._outstanding.get(entry):
            self._read_done.discard(entry)
            self._outstanding.pop(entry, None)
            if self._finish(keys=[self.k_leases, self.k_finished], args=[entry, self.crawler_id]):
                logger.info("crawler %s: finished %s", self.crawler_id, decode_entry(entry))
                self.stats.inc_value("cepr/archive/redis/files_finished")
