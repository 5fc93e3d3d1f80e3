"""Web archives (WARC, WARC.gz, WACZ) as a crawl: the archived HTTP responses reach the
spider's callbacks as Scrapy responses, and their items go through the CEPR pipeline and
its executor pool exactly as in a live crawl. No request ever goes to the network.

Pieces (see ``docs/archives.md`` for the how-to and the measurements):

* :func:`iter_records` streams the records of one archive file (``.warc``,
  ``.warc.gz`` with one gzip member per record, as the WARC standard recommends and
  Common Crawl writes; ``.wacz``: the
  zip of scrapy-webarchive / py-wacz, whose ``archive/*.warc[.gz]`` members are streamed
  in name order) with warcio's ``ArchiveIterator``. Payloads are decoded by warcio
  (``Transfer-Encoding: chunked``; ``Content-Encoding`` gzip, deflate, and br when
  ``brotli`` is installed). One record is in memory at a time, at most *max_bytes* of
  payload. Each kept record is an :class:`ArchiveRecord`; every other one is counted
  under a reason (:data:`SKIP_REASONS`).
* :class:`ArchiveFilter` decides, before extraction: host/domain allow and deny lists,
  a ``WARC-Date`` range, HTTP status, MIME type, and optionally the language
  (``Content-Language`` or ``<html lang>``).
* :class:`ArchiveSpider` (the base of the example project's ``archivespider``) turns
  each kept record into the response :func:`record_response` builds and hands it to
  Scrapy's scraper (:meth:`ArchiveSpider.scrape_record`): the spider middlewares
  (:class:`~scrapy_cepr.middlewares.CEPRSpiderMiddleware` attaches the page to the
  items), the callback and the pipeline see it like any downloaded page, without the
  scheduler, the downloader and the downloader middlewares. With ``-a downloader=true``
  each record is a request to the ``warc:`` scheme instead, which
  :class:`ArchiveDownloadHandler` (registered for that scheme in the spider's settings)
  answers with the same response, through the downloader middlewares.
* :class:`ExportLedger` makes a run resumable with ``JOBDIR``: see "Resuming" below.

Reader: warcio, not FastWARC. FastWARC reads records about 2x faster (0.3 against
0.6 ms per AEB page here), but the reader is a few percent of the cost of a record
(extraction is ~6 ms), and warcio also decodes chunked and compressed payloads, writes
WARCs (the test fixtures and the benchmark) and is pure Python.

Resuming (exactly once)
-----------------------
An item is *exported* when its JSON line is in the feed file (written unbuffered by
:class:`UnbufferedFileFeedStorage`). After the feed exporter
wrote an item, the spider appends the record's key ``(warc_file, warc_offset)`` to
``JOBDIR/archive-ledger.jsonl`` (also unbuffered). A run started again with the same
``JOBDIR`` reads the ledger **and the complete lines of the local JSON-lines feed
files** (``-o out.jsonl``) and skips every record found in either: a kill between the
feed line and the ledger line cannot export a record twice, and a kill before the feed
line loses nothing (the record is read again). A last feed line cut by the kill (no
final ``\\n``) is not an exported item: it is removed before the run appends to the file.
Resume with ``-o`` (append); ``-O`` would truncate the items already exported, so it
is refused when the ledger is not empty. Scrapy's own ``JOBDIR`` request queues are
not used (:data:`ARCHIVE_SETTINGS`): the archive is re-read, and the records in neither
the ledger nor the feed are sent again.
"""

from __future__ import annotations

import glob
import json
import logging
import os
import re
import zipfile
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote, urlsplit

import scrapy
from scrapy import signals
from scrapy.extensions.feedexport import FileFeedStorage
from scrapy.http import Headers, HtmlResponse, Response
from scrapy.logformatter import LogFormatter
from scrapy.responsetypes import responsetypes
from scrapy.settings import default_settings
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

try:
    from warcio.archiveiterator import ArchiveIterator
    from warcio.bufferedreaders import BufferedReader, ChunkedDataReader
    from warcio.exceptions import ArchiveLoadFailed
except ImportError as exc:  # the crawl stops at start, naming the extra
    raise ImportError(f'scrapy_cepr.archive needs warcio ({exc}): pip install "scrapy-cepr[warc]"') from exc

try:  # ISA-L's inflate, 2.4x zlib's on the AEB WARC.gz (0.16 against 0.39 ms per record)
    from isal import isal_zlib as _fast_zlib
except ImportError:  # pragma: no cover - isal is in the [warc] extra; zlib then
    _fast_zlib = None

logger = logging.getLogger(__name__)

__all__ = [
    "ARCHIVE_SETTINGS",
    "SKIP_REASONS",
    "ArchiveDownloadHandler",
    "ArchiveFilter",
    "ArchiveRecord",
    "ArchiveSpider",
    "UnbufferedFileFeedStorage",
    "ExportLedger",
    "expand_paths",
    "fast_inflate",
    "iter_records",
    "record_response",
]

#: Why a record was not turned into a response (stats ``cepr/archive/skipped/<reason>``):
#: ``record_type`` (warcinfo, request, metadata …), ``revisit``, ``non_http`` (a
#: ``resource`` record, a ``dns:`` response), ``truncated`` (``WARC-Truncated``, or a
#: payload cut by the end of the file), ``too_large`` (payload above *max_bytes*),
#: ``malformed`` (unreadable HTTP headers or payload), ``status``, ``mime``, ``host``,
#: ``date``, ``lang`` (the filters), ``done`` (exported by an earlier run: resume).
SKIP_REASONS = ("record_type", "revisit", "non_http", "truncated", "too_large", "malformed",
                "status", "mime", "host", "date", "lang", "done")

HTML_TYPES = ("text/html", "application/xhtml+xml")
#: Largest payload kept when neither the caller nor ``CEPR_MAX_HTML_BYTES`` gives one.
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
#: Bytes of the payload searched for ``<html lang=…>``.
LANG_SNIFF_BYTES = 8192
_HTML_LANG = re.compile(rb"<html\b[^>]*?\blang\s*=\s*[\"']?\s*([A-Za-z]{1,8})", re.IGNORECASE)
#: Headers describing the archived transfer, not the decoded payload the response holds.
_TRANSFER_HEADERS = frozenset({b"content-encoding", b"transfer-encoding", b"content-length"})


@dataclass(frozen=True)
class ArchiveRecord:
    """One archived HTTP response, payload decoded.

    :ivar url: ``WARC-Target-URI``.
    :ivar status: HTTP status code.
    :ivar headers: HTTP headers as ``(name, value)`` pairs, in archive order
        (``Content-Encoding``, ``Transfer-Encoding`` and ``Content-Length`` included, as
        archived; :func:`record_response` drops them since the body is decoded).
    :ivar body: the payload, de-chunked and decompressed, at most *max_bytes*.
    :ivar warc_date: ``WARC-Date`` as written (ISO 8601, UTC).
    :ivar record_id: ``WARC-Record-ID`` (``<urn:uuid:…>``), "" when absent.
    :ivar file: the archive file (for a WACZ member: ``"<file.wacz>!<member>"``).
    :ivar offset: byte offset of the record in *file* (of its gzip member, in
        the compressed file), the record's key with *file*.
    """

    url: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    warc_date: str
    record_id: str
    file: str
    offset: int

    def header(self, name: str) -> str | None:
        """The first value of HTTP header *name* (case-insensitive), or None."""
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), None)


def _parse_date(text: str, *, end: bool = False) -> datetime:
    """``YYYY-MM-DD`` or an ISO 8601 date-time, as an aware UTC datetime. A bare date as
    an *end* bound means the end of that day (the bound is exclusive: the next midnight).

    :raises ValueError: not such a date.
    """
    value = datetime.fromisoformat(text.strip())
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    if end and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        value += timedelta(days=1)
    return value


def _split(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    return tuple(s.strip() for s in items if s and s.strip())


def _flag(name: str, value: str | bool) -> bool:
    """A spider argument's boolean (``true``/``false``, ``1``/``0``, ``yes``/``no``).

    :raises ValueError: anything else.
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"{name}: expected true or false, got {value!r}")


def _host_in(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


@dataclass(frozen=True)
class ArchiveFilter:
    """Which archived responses become pages; every check is cheap and runs before
    extraction. Build it from strings with :meth:`from_args`.

    :ivar hosts: keep only these hosts and their subdomains (empty: all).
    :ivar exclude_hosts: drop these hosts and their subdomains (wins over *hosts*).
    :ivar since: keep ``WARC-Date >= since`` (aware datetime) or None.
    :ivar until: keep ``WARC-Date < until`` or None.
    :ivar statuses: HTTP statuses kept (default 200 only: redirects, 404 … are skipped).
    :ivar mime_types: media types kept (``Content-Type`` without parameters). A record
        without ``Content-Type`` is kept when Scrapy would make an ``HtmlResponse`` of it
        (sniffed from the payload), and only if *mime_types* lists an HTML type.
    :ivar langs: keep only these primary language subtags (``en`` keeps ``en-GB``), read
        from ``Content-Language`` or ``<html lang>`` in the first 8 KB; a page with
        neither is skipped when *langs* is set.
    """

    hosts: tuple[str, ...] = ()
    exclude_hosts: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    statuses: frozenset[int] = frozenset({200})
    mime_types: tuple[str, ...] = HTML_TYPES
    langs: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, *, hosts: str | Iterable[str] | None = None, exclude_hosts: str | Iterable[str] | None = None,
                  since: str | None = None, until: str | None = None, status: str | Iterable[str] | None = None,
                  mime: str | Iterable[str] | None = None, lang: str | Iterable[str] | None = None) -> ArchiveFilter:
        """The filter of comma-separated strings (a spider's ``-a`` arguments): hosts
        ``"example.com,news.example.org"``, dates ``"2024-01-31"`` or ISO date-times
        (*until* is inclusive of a bare date's day), statuses ``"200,203"``, MIME types
        ``"text/html"``, languages ``"en,de"``.

        :raises ValueError: a malformed date or status, or *since* not before *until*.
        """
        try:
            start = _parse_date(since) if since else None
        except ValueError:
            raise ValueError(f"since: {since!r} is not a date (YYYY-MM-DD or ISO 8601)") from None
        try:
            end = _parse_date(until, end=True) if until else None
        except ValueError:
            raise ValueError(f"until: {until!r} is not a date (YYYY-MM-DD or ISO 8601)") from None
        if start is not None and end is not None and start >= end:
            raise ValueError(f"since ({since}) must be before until ({until})")
        codes = _split(status)
        if not all(c.isdigit() and 100 <= int(c) <= 599 for c in codes):
            raise ValueError(f"status: expected HTTP status codes (100-599), got {status!r}")
        kwargs: dict[str, Any] = {}
        if codes:
            kwargs["statuses"] = frozenset(int(c) for c in codes)
        if mime is not None:
            kwargs["mime_types"] = tuple(m.lower() for m in _split(mime))
        return cls(hosts=tuple(h.lower().lstrip(".") for h in _split(hosts)),
                   exclude_hosts=tuple(h.lower().lstrip(".") for h in _split(exclude_hosts)),
                   since=start, until=end, langs=tuple(x.lower() for x in _split(lang)), **kwargs)

    def check_target(self, url: str, warc_date: str) -> str | None:
        """The skip reason (``"host"``, ``"date"``) of a record, from its WARC headers
        alone, or None."""
        if self.hosts or self.exclude_hosts:
            host = (urlsplit(url).hostname or "").lower()
            if self.exclude_hosts and _host_in(host, self.exclude_hosts):
                return "host"
            if self.hosts and not _host_in(host, self.hosts):
                return "host"
        if self.since is not None or self.until is not None:
            try:
                when = _parse_date(warc_date)
            except ValueError:
                return "date"
            if (self.since is not None and when < self.since) or (self.until is not None and when >= self.until):
                return "date"
        return None

    def check_http(self, status: int, content_type: str | None) -> str | None:
        """The skip reason (``"status"``, ``"mime"``) from the HTTP status line and
        ``Content-Type``, or None. A missing ``Content-Type`` is decided on the payload
        (:meth:`check_payload`)."""
        if self.statuses and status not in self.statuses:
            return "status"
        if content_type is not None and self.mime_types:
            media = content_type.split(";", 1)[0].strip().lower()
            if media not in self.mime_types:
                return "mime"
        return None

    def check_payload(self, record: ArchiveRecord) -> str | None:
        """The skip reason (``"mime"``, ``"lang"``) decided on the payload, or None."""
        if record.header("Content-Type") is None and self.mime_types:
            sniffed = responsetypes.from_args(url=record.url, body=record.body[:5000])
            if not (issubclass(sniffed, HtmlResponse) and any(m in HTML_TYPES for m in self.mime_types)):
                return "mime"
        if self.langs:
            lang = record_language(record)
            if lang is None or lang not in self.langs:
                return "lang"
        return None


def record_language(record: ArchiveRecord) -> str | None:
    """The primary language subtag (lower case) of *record*: ``Content-Language`` (its
    first value), else the ``lang`` of ``<html>`` in the first 8 KB; None if neither."""
    header = record.header("Content-Language")
    if header:
        return header.split(",")[0].strip().split("-")[0].lower() or None
    match = _HTML_LANG.search(record.body[:LANG_SNIFF_BYTES])
    return match.group(1).decode("ascii").lower() if match else None


def expand_paths(spec: str | Iterable[str]) -> list[str]:
    """The archive files of *spec*: comma-separated paths or glob patterns (or an
    iterable of them), each pattern's matches sorted, duplicates removed, order kept.

    :raises ValueError: nothing given, or a path or pattern that matches no file.
    """
    items = _split(spec)
    if not items:
        raise ValueError("paths: give one or more archive files or glob patterns (comma-separated)")
    found: list[str] = []
    for item in items:
        matches = sorted(glob.glob(os.path.expanduser(item))) if glob.has_magic(item) else [item]
        matches = [m for m in matches if os.path.isfile(m)]
        if not matches:
            raise ValueError(f"paths: {item!r} matches no file")
        found += [m for m in matches if m not in found]
    return found


def _members(path: str) -> Iterator[tuple[str, IO[bytes]]]:
    """``(file name, binary stream)`` of each WARC in *path*: the file itself, or the
    ``archive/*.warc[.gz]`` members of a WACZ, in name order."""
    if path.lower().endswith(".wacz"):
        with zipfile.ZipFile(path) as wacz:
            names = sorted(n for n in wacz.namelist() if n.startswith("archive/")
                           and n.lower().endswith((".warc", ".warc.gz")))
            if not names:
                logger.warning("%s: a WACZ without archive/*.warc[.gz] members", path)
            for name in names:
                with wacz.open(name) as stream:
                    yield f"{path}!{name}", stream
        return
    with open(path, "rb") as stream:
        yield path, stream


def iter_records(path: str, filters: ArchiveFilter | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES,
                 on_skip: Callable[[str], None] | None = None, on_record: Callable[[], None] | None = None,
                 skip: Callable[[str, int], bool] | None = None) -> Iterator[ArchiveRecord]:
    """Stream the HTTP responses of the archive *path* that pass *filters*.

    :param path: a ``.warc``, ``.warc.gz`` or ``.wacz`` file.
    :param max_bytes: largest decoded payload kept (bytes, > 0); larger ones are skipped
        (``"too_large"``) without being held in memory.
    :param on_skip: called with the reason (:data:`SKIP_REASONS`) of every record not
        yielded.
    :param on_record: called once per record read, kept or not.
    :param skip: ``skip(file, offset)`` true for records to pass over (``"done"``).
    :raises OSError: the file cannot be opened.
    :raises zipfile.BadZipFile: a ``.wacz`` that is not a zip file.

    A file that ends inside a record, or stops being a WARC, ends the file with one
    error logged (``"truncated"`` counted); the records before it were yielded.
    """
    if max_bytes <= 0:
        raise ValueError(f"max_bytes must be > 0, got {max_bytes}")
    filters = filters or ArchiveFilter()
    count = on_skip or (lambda reason: None)
    seen = on_record or (lambda: None)
    for name, stream in _members(path):
        iterator = ArchiveIterator(stream)
        fast_inflate(iterator.reader)
        try:
            for rec in iterator:
                if rec.format != "warc" and not rec.format.startswith("warc"):
                    logger.error("%s: not a WARC file (a %s record at offset %d); going on with the next file",
                                 name, rec.format, iterator.offset)
                    count("malformed")
                    break
                seen()
                # The start of this record (warcio's get_record_offset() would read the
                # record to its end first).
                offset = iterator.offset
                reason, record = _read_record(rec, name, offset, filters, max_bytes, skip)
                if record is None:
                    count(reason or "malformed")
                    continue
                reason = filters.check_payload(record)
                if reason is not None:
                    count(reason)
                    continue
                yield record
        except (ArchiveLoadFailed, EOFError, OSError, ValueError, zipfile.BadZipFile) as exc:
            logger.error("%s: archive unreadable after %d bytes (%s: %s); going on with the next file",
                         name, iterator.offset, type(exc).__name__, str(exc)[:200])
            count("truncated")


def _fast_gzip() -> Any:
    assert _fast_zlib is not None
    return _fast_zlib.decompressobj(16 + _fast_zlib.MAX_WBITS)


def fast_inflate(reader: Any) -> bool:
    """Make warcio's reader of an archive file (``ArchiveIterator(…).reader``, before
    its first read) inflate its gzip members with ISA-L (the ``isal`` package, in the
    ``[warc]`` extra) instead of zlib: the same bytes, 2.4 times faster. Decompressing
    is most of what reading a WARC.gz costs, and it runs in the crawler process, whose
    CPU is shared with the extraction workers. Returns whether it did (False without
    ``isal``, or for a reader that is not inflating gzip)."""
    if _fast_zlib is None or not isinstance(reader, BufferedReader) or reader.decomp_type != "gzip":
        return False
    reader.DECOMPRESSORS = {**type(reader).DECOMPRESSORS, "gzip": _fast_gzip}
    reader._init_decomp("gzip")  # the first member's decompressor, made in __init__
    return True


def _read_record(rec: Any, name: str, offset: int, filters: ArchiveFilter, max_bytes: int,
                 skip: Callable[[str, int], bool] | None) -> tuple[str | None, ArchiveRecord | None]:
    """The record of warcio's *rec*, or the reason it is skipped. Reads at most
    *max_bytes* + 1 bytes of payload; warcio skips the rest."""
    rtype = rec.rec_type
    if rtype == "revisit":
        return "revisit", None
    if rtype != "response":
        return ("non_http" if rtype == "resource" else "record_type"), None
    url = rec.rec_headers.get_header("WARC-Target-URI") or ""
    if urlsplit(url).scheme.lower() not in ("http", "https") or rec.http_headers is None:
        return "non_http", None
    if rec.rec_headers.get_header("WARC-Truncated"):
        return "truncated", None
    if skip is not None and skip(name, offset):
        return "done", None
    warc_date = rec.rec_headers.get_header("WARC-Date") or ""
    reason = filters.check_target(url, warc_date)
    if reason is not None:
        return reason, None
    try:
        status = int(rec.http_headers.get_statuscode())
    except (TypeError, ValueError):
        return "malformed", None
    reason = filters.check_http(status, rec.http_headers.get_header("Content-Type"))
    if reason is not None:
        return reason, None
    try:
        body = _payload(rec, max_bytes + 1)
    except Exception as exc:  # noqa: BLE001 - zlib.error, brotli.error, OSError: a corrupt payload, not a crash
        logger.debug("%s @%d: payload unreadable (%s: %s)", name, offset, type(exc).__name__, exc)
        return "malformed", None
    if len(body) > max_bytes:
        return "too_large", None
    # The payload ended before the record's Content-Length: the file was cut inside it.
    raw = rec.raw_stream
    while raw.read(65536):
        pass
    if getattr(raw, "limit", 0) > 0:
        logger.warning("%s @%d: record cut by the end of the file (%d bytes missing): skipped", name, offset,
                       raw.limit)
        return "truncated", None
    headers = tuple((str(k), str(v)) for k, v in rec.http_headers.headers)
    return None, ArchiveRecord(url=url, status=status, headers=headers, body=body, warc_date=warc_date,
                               record_id=rec.rec_headers.get_header("WARC-Record-ID") or "", file=name,
                               offset=offset)


def _payload(rec: Any, limit: int) -> bytes:
    """At most *limit* bytes of *rec*'s payload, de-chunked and decompressed by warcio;
    brotli here (warcio's br decoder wants the ``brotlipy`` API, not Google's ``brotli``).

    :raises Exception: a corrupt payload (zlib.error, brotli.error …); ImportError for
        ``br`` without ``brotli``.
    """
    encoding = (rec.http_headers.get_header("Content-Encoding") or "").strip().lower()
    if encoding != "br":
        return rec.content_stream().read(limit)
    import brotli

    stream = rec.raw_stream
    if "chunked" in (rec.http_headers.get_header("Transfer-Encoding") or "").lower():
        stream = ChunkedDataReader(stream)
    decompressor = brotli.Decompressor()
    out = bytearray()
    while len(out) < limit:
        data = stream.read(65536)
        if not data:
            break
        out += decompressor.process(data, output_buffer_limit=65536)
        while len(out) < limit and not decompressor.can_accept_more_data():
            piece = decompressor.process(b"", output_buffer_limit=65536)
            if not piece:
                break
            out += piece
    return bytes(out[:limit])


def record_response(record: ArchiveRecord, request: scrapy.Request | None = None) -> Response:
    """*record* as the Scrapy response a live crawl would have received: the class
    Scrapy's ``responsetypes`` picks (an ``HtmlResponse`` for an HTML page), its status,
    its URL (``WARC-Target-URI``), its headers but ``Content-Encoding``,
    ``Transfer-Encoding`` and ``Content-Length`` (the body is already decoded, so
    ``HttpCompressionMiddleware`` must not decode it again), and its body."""
    headers = Headers()
    for name, value in record.headers:
        if name.lower().encode("latin-1", "replace") not in _TRANSFER_HEADERS:
            headers.appendlist(name, value)
    cls = responsetypes.from_args(headers=headers, url=record.url, body=record.body)
    return cls(url=record.url, status=record.status, headers=headers, body=record.body, request=request,
               protocol="HTTP/1.1")


#: Seconds between two looks at the engine while it backs out (start() is paused). An
#: archive crawl backs out most of the time (the workers are its bottleneck), so each look
#: is paid ~100 times per second at 0.01 s; 0.05 s is still far below the time the
#: ``CONCURRENT_REQUESTS`` responses waiting in the engine take to clean (32 pages: 0.1 s
#: at 300 pages/s).
BACKOUT_POLL_SECONDS = 0.05
#: ``request.meta`` key of the record a ``warc:`` request is answered with.
RECORD_META = "cepr_archive_record"
#: Download slot of archive requests (no delay: nothing is fetched).
ARCHIVE_SLOT = "cepr-archive"
_LINE_STORAGE = "scrapy_cepr.archive.UnbufferedFileFeedStorage"


class UnbufferedFileFeedStorage(FileFeedStorage):
    """Scrapy's local-file feed storage, unbuffered: each item's line reaches the
    operating system in the exporter's ``write()``, so a killed crawler's file holds
    every item it exported (the ledger's premise). The same as
    :class:`scrapy_cepr.distributed.LineFlushedFileFeedStorage`, which needs scrapy-redis
    to import; archive crawls need only ``[warc]``."""

    def open(self, spider: Any) -> IO[bytes]:
        path = Path(self.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open(self.write_mode, buffering=0)


#: Scrapy's downloader middlewares that act only on a request sent over the network or on
#: its raw transfer: credentials, timeouts, request headers, retries of a failed fetch,
#: proxies, decompression (the archived body is already decoded, its encoding headers
#: removed), and the offsite check of the request URL (a ``warc:`` URL has no host). A
#: ``warc:`` request is never sent, so they do nothing for it but cost the crawler CPU on
#: every record (~0.1 ms together); the archive settings take them out of
#: ``DOWNLOADER_MIDDLEWARES_BASE``. A retried archive response would be the same record
#: again. ``DownloaderStats`` and the project's ``DOWNLOADER_MIDDLEWARES`` stay.
_NETWORK_ONLY_MIDDLEWARES = tuple(f"scrapy.downloadermiddlewares.{name}" for name in (
    "offsite.OffsiteMiddleware", "httpauth.HttpAuthMiddleware", "downloadtimeout.DownloadTimeoutMiddleware",
    "defaultheaders.DefaultHeadersMiddleware", "useragent.UserAgentMiddleware", "retry.RetryMiddleware",
    "httpcompression.HttpCompressionMiddleware", "httpproxy.HttpProxyMiddleware"))

#: Settings of an archive crawl (:attr:`ArchiveSpider.custom_settings`): the ``warc:``
#: download handler; no robots.txt, cookies, redirects, cache, delays or page count limit
#: (nothing is fetched); in-memory request queues even with ``JOBDIR`` (the archive and
#: the ledger are the crawl's state; Scrapy's disk queues are not kill-safe: after a
#: SIGKILL a resumed run popped a stale request of the killed run in place of a new one,
#: exporting one record twice and losing another); unbuffered feed files.
ARCHIVE_SETTINGS: dict[str, Any] = {
    "DOWNLOAD_HANDLERS": {"warc": "scrapy_cepr.archive.ArchiveDownloadHandler"},
    "ROBOTSTXT_OBEY": False,
    "COOKIES_ENABLED": False,
    "REDIRECT_ENABLED": False,
    "METAREFRESH_ENABLED": False,
    "HTTPCACHE_ENABLED": False,
    "AUTOTHROTTLE_ENABLED": False,
    "DOWNLOAD_DELAY": 0,
    "CLOSESPIDER_PAGECOUNT": 0,
    "DOWNLOAD_SLOTS": {ARCHIVE_SLOT: {"delay": 0.0, "concurrency": 32}},
    "CONCURRENT_REQUESTS": 32,
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "SCHEDULER_START_DISK_QUEUE": "scrapy.squeues.FifoMemoryQueue",
    "FEED_STORAGES": {"": _LINE_STORAGE, "file": _LINE_STORAGE},
    # The base, not DOWNLOADER_MIDDLEWARES: a spider's dict setting replaces the project's,
    # whose own middlewares must stay.
    "DOWNLOADER_MIDDLEWARES_BASE": {**default_settings.DOWNLOADER_MIDDLEWARES_BASE,
                                    **dict.fromkeys(_NETWORK_ONLY_MIDDLEWARES)},
}


class ArchiveDownloadHandler:
    """Download handler of the ``warc:`` scheme: answers a request with the archived
    response in its ``meta["cepr_archive_record"]`` (:func:`record_response`), and any
    other ``warc:`` request with an empty 404. Never opens a connection. (Scrapy's
    coroutine handler interface, duck-typed: ``BaseDownloadHandler`` is recent.)"""

    lazy = False

    def __init__(self, crawler: Any = None) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> ArchiveDownloadHandler:
        return cls(crawler)

    async def close(self) -> None:
        pass

    async def download_request(self, request: scrapy.Request, spider: Any = None) -> Response:
        record = request.meta.get(RECORD_META)
        if not isinstance(record, ArchiveRecord):
            return Response(url=request.url, status=404, request=request)
        return record_response(record, request)


def record_request(record: ArchiveRecord, callback: Callable[..., Any] | None = None) -> scrapy.Request:
    """The ``warc:`` request answered with *record* (not filtered by the duplicate
    filter: the record's key identifies it)."""
    url = f"warc:///{quote(record.file)}?offset={record.offset}"
    return scrapy.Request(url, callback=callback, dont_filter=True,
                          meta={RECORD_META: record, "download_slot": ARCHIVE_SLOT, "handle_httpstatus_all": True,
                                "dont_obey_robotstxt": True, "dont_merge_cookies": True})


# -- resume --------------------------------------------------------------------------------

LEDGER_NAME = "archive-ledger.jsonl"


def _complete_lines(path: Path, *, trim: bool) -> Iterator[bytes]:
    """The complete lines of *path*, streamed; with *trim*, a last line without ``\\n``
    is cut off the file (it is not an exported item, and the next run appends after it)."""
    if not path.exists():
        return
    tail = b""
    with path.open("rb") as fh:
        for line in fh:
            if line.endswith(b"\n"):
                if line.strip():
                    yield line
            else:
                tail = line
    if tail and trim:
        logger.warning("%s: removing a last line cut by a kill (%d bytes, no final newline)", path, len(tail))
        with path.open("r+b") as fh:
            fh.truncate(path.stat().st_size - len(tail))


class ExportLedger:
    """The records whose items were exported, kept in ``JOBDIR/archive-ledger.jsonl``
    (one JSON line ``{"file", "offset", "id"}`` per record, appended unbuffered) and
    reconciled with the feed files (see the module docstring).

    :param jobdir: the ``JOBDIR``; None keeps the ledger in memory only (no resume).
    :param feeds: local JSON-lines feed files to read exported items from
        (``warc_file``/``warc_offset`` fields); a cut last line is removed.
    """

    def __init__(self, jobdir: str | None, feeds: Iterable[Path] = ()) -> None:
        self.done: set[tuple[str, int]] = set()
        self._fh: IO[bytes] | None = None
        if jobdir is None:
            return
        path = Path(jobdir) / LEDGER_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        for line in _complete_lines(path, trim=True):
            try:
                entry = json.loads(line)
                self.done.add((entry["file"], int(entry["offset"])))
            except (ValueError, KeyError, TypeError):
                logger.warning("%s: ignoring a malformed line %r", path, line[:100])
        from_ledger = len(self.done)
        for feed in feeds:
            for line in _complete_lines(feed, trim=True):
                try:
                    item = json.loads(line)
                    self.done.add((item["warc_file"], int(item["warc_offset"])))
                except (ValueError, KeyError, TypeError):
                    continue
        if self.done:
            logger.info("resuming: %d records exported before (%d in the ledger, %d more found in the feed files)",
                        len(self.done), from_ledger, len(self.done) - from_ledger)
        self._fh = path.open("ab", buffering=0)

    def __contains__(self, key: tuple[str, int]) -> bool:
        return key in self.done

    def add(self, record: ArchiveRecord) -> None:
        """Remember that *record*'s item was exported (one unbuffered write)."""
        key = (record.file, record.offset)
        if key in self.done:
            return
        self.done.add(key)
        if self._fh is not None:
            line = json.dumps({"file": record.file, "offset": record.offset, "id": record.record_id},
                              ensure_ascii=True, separators=(",", ":"))
            self._fh.write(line.encode("ascii") + b"\n")

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def local_feeds(settings: Any) -> tuple[list[Path], list[str]]:
    """``(JSON-lines feed files on the local disk, problems)`` of the crawl's ``FEEDS``.
    A problem is a feed with ``overwrite`` (``-O``) — for the caller to refuse on resume —
    or one whose exported items cannot be read back (another format, remote storage, a
    URI template)."""
    paths: list[Path] = []
    problems: list[str] = []
    for uri, options in (settings.getdict("FEEDS") or {}).items():
        uri = str(uri)
        options = options or {}
        parts = urlsplit(uri)
        local = parts.scheme in ("", "file") or (len(parts.scheme) == 1 and os.name == "nt")
        fmt = options.get("format", "")
        if options.get("overwrite"):
            problems.append(f"overwrite:{uri}")
        if not local or "%(" in uri or fmt not in ("jsonlines", "jsonl", "jl"):
            problems.append(f"unreadable:{uri}")
            continue
        paths.append(Path(parts.path if parts.scheme == "file" else uri))
    return paths, problems


# -- the spider ----------------------------------------------------------------------------

_ITEM_FIELDS = ("url", "warc_date", "warc_record_id", "warc_file", "warc_offset")


def record_item(response: Response) -> dict[str, Any]:
    """The item of an archived response: ``url``, ``warc_date``, ``warc_record_id``,
    ``warc_file`` and ``warc_offset`` (the pipeline adds ``title``, ``body`` …)."""
    record: ArchiveRecord = response.meta[RECORD_META]
    return {"url": record.url, "warc_date": record.warc_date, "warc_record_id": record.record_id,
            "warc_file": record.file, "warc_offset": record.offset}


class QuietScrapedLogFormatter(LogFormatter):
    """Scrapy's :class:`~scrapy.logformatter.LogFormatter` without the DEBUG line
    "Scraped from <200 …>" of each item (with the item's repr), which Scrapy builds as a
    log record for every item even when ``LOG_LEVEL`` drops it."""

    def scraped(self, item: Any, response: Any, spider: Any) -> None:  # type: ignore[override]
        return None


def _skip_scraped_debug_line(settings: Any) -> None:
    """Set ``LOG_FORMATTER`` to :class:`QuietScrapedLogFormatter` in *settings* when
    ``LOG_LEVEL`` is above DEBUG and the project kept Scrapy's own formatter."""
    level = settings.get("LOG_LEVEL", "DEBUG")
    number = level if isinstance(level, int) else logging.getLevelName(str(level).upper())
    if isinstance(number, int) and number > logging.DEBUG and \
            settings.get("LOG_FORMATTER") == default_settings.LOG_FORMATTER:
        settings.set("LOG_FORMATTER", f"{__name__}.QuietScrapedLogFormatter", priority="spider")


class ArchiveSpider(scrapy.Spider):
    """A spider whose pages come from web archives (see the module docstring).

    Arguments (``-a NAME=VALUE``; all but *paths* optional):

    * ``paths``: archive files or glob patterns, comma-separated (``.warc``, ``.warc.gz``,
      ``.wacz``);
    * ``hosts``, ``exclude_hosts``: host/domain allow and deny lists;
    * ``since``, ``until``: ``WARC-Date`` range (``YYYY-MM-DD`` inclusive, or ISO 8601);
    * ``status`` (default ``200``), ``mime`` (default ``text/html,application/xhtml+xml``),
      ``lang`` (e.g. ``en,de``): see :class:`ArchiveFilter`;
    * ``max_bytes``: largest payload (default ``CEPR_MAX_HTML_BYTES``, else 10 MiB);
    * ``downloader``: ``true`` sends each record through the scheduler, the downloader
      and its middlewares (:attr:`use_downloader`; default ``false``, see :meth:`start`).

    Each kept record's response reaches :meth:`parse` (override it to yield other
    items); the default yields :func:`record_item`. Stats: ``cepr/archive/records`` (read),
    ``cepr/archive/pages`` (sent to the callback), ``cepr/archive/skipped/<reason>``
    (:data:`SKIP_REASONS`), ``cepr/archive/files``, and in the direct mode
    ``cepr/archive/max_in_progress`` (most pages in the scraper at once, at most
    ``CONCURRENT_REQUESTS``).

    :raises ValueError: a bad argument, no matching file, or a resume (a non-empty
        ledger in ``JOBDIR``) with a feed in ``overwrite`` mode (``-O``).
    """

    name = "archive"
    custom_settings: dict[str, Any] = ARCHIVE_SETTINGS
    #: The crawler's stats collector, from ``spider_opened`` on.
    stats: Any = None

    #: Whether each record's response goes through Scrapy's scheduler, downloader and
    #: downloader middlewares (a ``warc:`` request answered by
    #: :class:`ArchiveDownloadHandler`) instead of straight to the spider middlewares and
    #: the callback (``-a downloader=true``; see :meth:`start`).
    use_downloader: bool = False

    def __init__(self, paths: str | None = None, hosts: str | None = None, exclude_hosts: str | None = None,
                 since: str | None = None, until: str | None = None, status: str | None = None,
                 mime: str | None = None, lang: str | None = None, max_bytes: str | int | None = None,
                 downloader: str | bool | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.filters = ArchiveFilter.from_args(hosts=hosts, exclude_hosts=exclude_hosts, since=since, until=until,
                                               status=status, mime=mime, lang=lang)
        self.paths = self.archive_paths(paths)
        self._max_bytes_arg = max_bytes
        if downloader is not None:
            self.use_downloader = _flag("downloader", downloader)
        self.ledger: ExportLedger | None = None
        #: Responses handed to the scraper and not yet processed (direct mode).
        self._in_flight = 0
        self._peak = 0
        self._room: Deferred[None] | None = None

    def archive_paths(self, paths: str | None) -> list[str]:
        """The files to read (:func:`expand_paths`); a subclass may take them elsewhere."""
        if paths is None:
            raise ValueError("give the archives: -a paths=FILE_OR_GLOB[,...]")
        return expand_paths(paths)

    @classmethod
    def update_settings(cls, settings: Any) -> None:
        """:attr:`custom_settings`, and Scrapy's per-item "Scraped from" DEBUG line is
        not built when ``LOG_LEVEL`` drops it (:class:`QuietScrapedLogFormatter`)."""
        super().update_settings(settings)
        _skip_scraped_debug_line(settings)

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> ArchiveSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._setup(crawler)
        return spider

    def _setup(self, crawler: Any) -> None:
        settings = crawler.settings
        raw = self._max_bytes_arg
        if raw is None:
            raw = settings.getint("CEPR_MAX_HTML_BYTES", 0) or DEFAULT_MAX_BYTES
        try:
            self.max_bytes = int(raw)
        except (TypeError, ValueError):
            raise ValueError(f"max_bytes: expected a number of bytes, got {raw!r}") from None
        if self.max_bytes <= 0:
            raise ValueError(f"max_bytes must be > 0, got {raw!r}")
        self._max_in_flight = max(1, settings.getint("CONCURRENT_REQUESTS", 32))
        jobdir = settings.get("JOBDIR")
        feeds, problems = local_feeds(settings)
        if jobdir:
            ledger_path = Path(jobdir) / LEDGER_NAME
            resuming = ledger_path.exists() and ledger_path.stat().st_size > 0
            overwrite = [p.split(":", 1)[1] for p in problems if p.startswith("overwrite:")]
            if resuming and overwrite:
                raise ValueError(
                    f"JOBDIR {jobdir} holds a run to resume, but the feed {overwrite[0]} would be overwritten (-O), "
                    "losing the items exported before: resume with -o (append) instead")
            unreadable = [p.split(":", 1)[1] for p in problems if p.startswith("unreadable:")]
            if unreadable:
                logger.warning("feeds %s are not local JSON-lines files: a kill between an item's export and its "
                               "ledger entry may export that item again on resume", ", ".join(unreadable))
        self.ledger = ExportLedger(jobdir, feeds if jobdir else ())
        # After the feed exporter (connected when the crawler applied its settings): the
        # ledger line of an item follows its feed line.
        crawler.signals.connect(self._on_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._on_closed, signal=signals.spider_closed)

    def _on_opened(self, spider: Any) -> None:
        self.stats = self.crawler.stats
        self.crawler.signals.connect(self._on_item_scraped, signal=signals.item_scraped)

    def _on_closed(self, spider: Any) -> None:
        if self.ledger is not None:
            self.ledger.close()

    def _on_item_scraped(self, item: Any, response: Any = None, **kwargs: Any) -> None:
        record = getattr(response, "meta", {}).get(RECORD_META) if response is not None else None
        if isinstance(record, ArchiveRecord) and self.ledger is not None:
            self.ledger.add(record)

    def _skip(self, reason: str) -> None:
        self.stats.inc_value(f"cepr/archive/skipped/{reason}")

    def _read(self) -> None:
        self.stats.inc_value("cepr/archive/records")

    def _done(self, file: str, offset: int) -> bool:
        return self.ledger is not None and (file, offset) in self.ledger

    def records(self, path: str) -> Iterator[ArchiveRecord]:
        """The kept records of *path*, counted in the stats; unreadable files are logged."""
        self.stats.inc_value("cepr/archive/files")
        try:
            yield from iter_records(path, self.filters, max_bytes=self.max_bytes, on_skip=self._skip,
                                    on_record=self._read, skip=self._done)
        except (OSError, zipfile.BadZipFile) as exc:
            logger.error("%s: cannot read the archive (%s)", path, exc)
            self.stats.inc_value("cepr/archive/unreadable_files")

    async def start(self) -> AsyncIterator[scrapy.Request]:
        """The records' pages, read lazily: while the engine backs out (the scraper holds
        ``SCRAPER_SLOT_MAX_ACTIVE_SIZE`` bytes of responses, or ``CONCURRENT_REQUESTS``
        pages are in progress) no record is read, so memory holds only the pages in
        progress (Scrapy consumes ``start()`` eagerly otherwise).

        By default each kept record's response goes straight to Scrapy's scraper
        (:meth:`scrape_record`): the spider middlewares, the callback, the item pipelines
        and the ``item_scraped`` signal see it as a downloaded page, but no request is
        scheduled or downloaded, so the downloader middlewares and the
        ``request_scheduled``/``response_received`` signals do not see it (the stats
        ``response_received_count`` and ``cepr/archive/pages`` count the pages).
        With :attr:`use_downloader` (``-a downloader=true``) it yields one ``warc:``
        request per record instead, answered by :class:`ArchiveDownloadHandler`."""
        for path in self.paths:
            for record in self.records(path):
                if not await self._wait_for_room():
                    return
                self.stats.inc_value("cepr/archive/pages")
                if self.use_downloader:
                    yield record_request(record, callback=self.parse)
                else:
                    self.scrape_record(record)

    def scrape_record(self, record: ArchiveRecord) -> None:
        """Hand *record*'s response (:func:`record_response`, its request from
        :func:`record_request`) to the engine's scraper, as the engine does with a
        downloaded response: spider middlewares, ``parse``, item pipelines."""
        request = record_request(record, callback=self.parse)
        response = record_response(record, request)
        self.stats.inc_value("response_received_count")
        self._in_flight += 1
        if self._in_flight > self._peak:
            self._peak = self._in_flight
            self.stats.set_value("cepr/archive/max_in_progress", self._peak)
        self.crawler.engine.scraper.enqueue_scrape(response, request).addBoth(self._scraped)

    def _scraped(self, result: Any) -> None:
        self._in_flight -= 1
        room, self._room = self._room, None
        if room is not None:
            room.callback(None)

    async def _wait_for_room(self) -> bool:
        """Wait while the engine backs out (or, direct, while ``CONCURRENT_REQUESTS``
        pages are in the scraper); False when the engine stopped."""
        from twisted.internet import reactor  # the one Scrapy installed (never import it at module level)
        from twisted.internet.task import deferLater

        engine = self.crawler.engine
        if engine is None:
            return True
        direct = not self.use_downloader
        limit = self._max_in_flight
        while engine.running and (engine.needs_backout() or (direct and self._in_flight >= limit)):
            if direct and self._in_flight:  # woken by the next page done
                self._room = Deferred()
                await maybe_deferred_to_future(self._room)
            else:
                await maybe_deferred_to_future(deferLater(reactor, BACKOUT_POLL_SECONDS, lambda: None))
        return bool(engine.running) or self.use_downloader

    def parse(self, response: Response, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Yield :func:`record_item` of *response*."""
        yield record_item(response)


# -- without Scrapy: ``scrapy-cepr extract --warc`` --------------------------------------------

def _extract_row(job: tuple[dict[str, Any], bytes, str | None, str, dict[str, Any], tuple[str, ...], bool]
                 ) -> dict[str, Any]:
    """One JSON-lines row of :func:`extract_archives` (a module-level function: it runs in
    the process pool)."""
    from .api import extract
    from .core.errors import ExtractionError

    row, body, encoding, method, params, formats, metadata = job
    try:
        result = extract(body, url=row["url"], method=method, encoding=encoding, **params)
    except ExtractionError as exc:
        return {**row, "title": None, "body": None, "cepr_error": f"failed: {type(exc).__name__}: {exc}"}
    return {**row, **result.to_dict(formats=formats, metadata=metadata)}


def extract_archives(paths: Iterable[str], filters: ArchiveFilter | None = None, *, method: str = "cepr-article",
                     params: dict[str, Any] | None = None, body_formats: tuple[str, ...] = (),
                     with_metadata: bool = False, max_bytes: int = DEFAULT_MAX_BYTES, parallel: int = 1,
                     on_skip: Callable[[str], None] | None = None) -> Iterator[dict[str, Any]]:
    """Extract every kept HTML record of the archives *paths*, in archive order, without
    Scrapy: one dict per page, ``url``, ``warc_date``, ``warc_record_id``, ``warc_file``,
    ``warc_offset``, then :meth:`Extraction.to_dict <scrapy_cepr.core.result.Extraction.to_dict>`
    (``title``, ``body`` …), or ``title``/``body`` None and ``cepr_error`` for a page
    that cannot be parsed. The page is decoded with the charset Scrapy would use
    (:func:`record_response`). With *parallel* > 1, a process pool with at most
    ``4 × parallel`` pages in flight (memory stays bounded).

    :raises OSError: an archive cannot be opened.
    """
    def jobs() -> Iterator[tuple[Any, ...]]:
        for path in paths:
            for record in iter_records(path, filters, max_bytes=max_bytes, on_skip=on_skip):
                response = record_response(record)
                if not isinstance(response, HtmlResponse):
                    if on_skip is not None:
                        on_skip("mime")
                    continue
                row = {"url": record.url, "warc_date": record.warc_date, "warc_record_id": record.record_id,
                       "warc_file": record.file, "warc_offset": record.offset}
                yield row, record.body, response.encoding, method, dict(params or {}), body_formats, with_metadata

    if parallel <= 1:
        for job in jobs():
            yield _extract_row(job)
        return
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    window = 4 * parallel
    with ProcessPoolExecutor(max_workers=parallel, mp_context=get_context("spawn")) as pool:
        pending: deque[Any] = deque()
        for job in jobs():
            pending.append(pool.submit(_extract_row, job))
            if len(pending) >= window:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
