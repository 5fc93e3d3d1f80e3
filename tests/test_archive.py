"""Web archives as a crawl (issue 21): the reader, the filters, the ``warc:`` download
handler, ``archivespider``, ``scrapy-cepr extract --warc`` and the export ledger, on
archives written here with warcio from pages written here (tests/archive_fixtures.py)."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("warcio", reason="needs warcio: pip install 'scrapy-cepr[warc]'")

from archive_fixtures import article, chunked, mixed_records, response, write_warc  # noqa: E402
from scrapy.http import HtmlResponse  # noqa: E402

from scrapy_cepr import extract  # noqa: E402
from scrapy_cepr.archive import (  # noqa: E402
    ArchiveFilter,
    ArchiveRecord,
    ExportLedger,
    expand_paths,
    iter_records,
    record_response,
)

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "example_project"
KEPT = ["https://news.example.com/ok", "https://news.example.com/chunked", "https://other.example.org/gzip",
        "https://de.example.net/latin1"]
SKIPPED = {"record_type": 2, "status": 2, "revisit": 1, "mime": 1, "truncated": 1, "non_http": 1}


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    path = tmp_path / "mixed.warc.gz"
    write_warc(path, mixed_records())
    return path


def _read(path: Path | str, filters: ArchiveFilter | None = None, **kwargs) -> tuple[list[ArchiveRecord], Counter]:
    skipped: Counter[str] = Counter()
    records = list(iter_records(str(path), filters, on_skip=lambda r: skipped.update([r]), **kwargs))
    return records, skipped


def test_only_html_200_responses_are_kept_and_every_other_record_is_counted(mixed: Path) -> None:
    records, skipped = _read(mixed)
    assert [r.url for r in records] == KEPT
    assert dict(skipped) == SKIPPED
    assert all(r.status == 200 and r.record_id.startswith("<urn:uuid:") for r in records)
    assert len({r.offset for r in records}) == 4 and all(r.file == str(mixed) for r in records)


def test_chunked_and_gzip_payloads_are_decoded(mixed: Path) -> None:
    records, _ = _read(mixed)
    by_url = {r.url: r for r in records}
    assert by_url["https://news.example.com/chunked"].body == article(3)
    assert by_url["https://other.example.org/gzip"].body == article(2)
    response = record_response(by_url["https://other.example.org/gzip"])
    # Decoded already: HttpCompressionMiddleware must not see a Content-Encoding.
    assert b"Content-Encoding" not in response.headers and b"Transfer-Encoding" not in response.headers
    assert isinstance(response, HtmlResponse) and response.status == 200


def test_brotli_payload_is_decoded(tmp_path: Path) -> None:
    brotli = pytest.importorskip("brotli", reason="needs brotli: pip install brotli")
    path = tmp_path / "br.warc.gz"
    write_warc(path, [response("https://a.example/br", brotli.compress(article(5)),
                               headers=[("Content-Encoding", "br")]),
                      response("https://a.example/br-chunked", chunked(brotli.compress(article(6))),
                               headers=[("Content-Encoding", "br"), ("Transfer-Encoding", "chunked")]),
                      response("https://a.example/br-big", brotli.compress(article(7, extra="y" * 40_000)),
                               headers=[("Content-Encoding", "br")])])
    records, skipped = _read(path, max_bytes=20_000)
    assert [r.body for r in records] == [article(5), article(6)] and skipped["too_large"] == 1


def test_non_utf8_page_is_decoded_with_its_charset(mixed: Path) -> None:
    records, _ = _read(mixed)
    latin = next(r for r in records if r.url.endswith("/latin1"))
    response = record_response(latin)
    assert "Grüße aus Köln" in response.text
    assert extract(latin.body, url=latin.url, encoding=response.encoding).title == "Grüße aus Köln"


def test_uncompressed_warc_and_offsets_are_the_record_starts(tmp_path: Path) -> None:
    path = tmp_path / "plain.warc"
    write_warc(path, [response(f"https://a.example/{i}", article(i)) for i in range(3)], gzip_members=False)
    records, _ = _read(path)
    assert [r.body for r in records] == [article(i) for i in range(3)]
    data = path.read_bytes()
    assert all(data[r.offset:r.offset + 9] == b"WARC/1.0\r" or data[r.offset:r.offset + 8] == b"WARC/1.1"
               for r in records)


@pytest.mark.parametrize(("kwargs", "urls", "reason", "count"), [
    ({"hosts": "example.com"}, KEPT[:2], "host", 2),
    # The host and date filters run first, on every response record (the 404 and the PDF too).
    ({"hosts": "example.org, example.net"}, KEPT[2:], "host", 5),
    ({"exclude_hosts": "news.example.com"}, KEPT[2:], "host", 5),
    ({"since": "2024-03-02"}, KEPT[2:], "date", 5),
    ({"until": "2024-03-01"}, KEPT[:2], "date", 2),  # a bare date: that whole day
    ({"since": "2024-03-05T08:00:00Z", "until": "2024-03-31"}, KEPT[2:3], "date", 6),
    ({"lang": "de"}, KEPT[3:], "lang", 3),
    ({"status": "404"}, ["https://news.example.com/missing"], "status", 6),
])
def test_filters(mixed: Path, kwargs: dict, urls: list[str], reason: str, count: int) -> None:
    records, skipped = _read(mixed, ArchiveFilter.from_args(**kwargs))
    assert [r.url for r in records] == urls
    assert skipped[reason] == count


@pytest.mark.parametrize("kwargs", [{"since": "yesterday"}, {"until": "2024-13-01"}, {"status": "ok"},
                                    {"since": "2024-02-01", "until": "2024-01-01"}])
def test_bad_filter_arguments_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs)) if "since" not in kwargs or len(kwargs) == 1 else "before"):
        ArchiveFilter.from_args(**kwargs)


def test_page_without_content_type_is_sniffed(tmp_path: Path) -> None:
    path = tmp_path / "sniff.warc.gz"
    write_warc(path, [response("https://a.example/page", article(1), content_type=None),
                      response("https://a.example/data", b"\x00\x01binary", content_type=None)])
    records, skipped = _read(path)
    assert [r.url for r in records] == ["https://a.example/page"] and skipped["mime"] == 1


def test_oversized_payload_is_skipped_not_held(tmp_path: Path) -> None:
    path = tmp_path / "big.warc.gz"
    write_warc(path, [response("https://a.example/big", article(1, extra="<p>" + "x" * 50_000 + "</p>")),
                      response("https://a.example/small", article(2))])
    records, skipped = _read(path, max_bytes=10_000)
    assert [r.url for r in records] == ["https://a.example/small"] and skipped["too_large"] == 1


def test_wacz_members_are_streamed(tmp_path: Path, mixed: Path) -> None:
    wacz = tmp_path / "crawl.wacz"
    with zipfile.ZipFile(wacz, "w") as z:
        z.write(mixed, "archive/data.warc.gz")
        z.writestr("datapackage.json", json.dumps({"profile": "data-package", "resources": []}))
        z.writestr("pages/pages.jsonl", "")
    records, skipped = _read(wacz)
    assert [r.url for r in records] == KEPT and dict(skipped) == SKIPPED
    assert {r.file for r in records} == {f"{wacz}!archive/data.warc.gz"}


def test_file_cut_inside_a_record_keeps_the_records_before(tmp_path: Path, caplog) -> None:
    path = tmp_path / "cut.warc.gz"
    write_warc(path, [response(f"https://a.example/{i}", article(i)) for i in range(4)])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 200])  # the last gzip member is cut
    records, skipped = _read(path)
    assert [r.url for r in records] == [f"https://a.example/{i}" for i in range(3)]
    assert skipped["truncated"] == 1 and "cut by the end of the file" in caplog.text


def test_not_an_archive_is_reported(tmp_path: Path, caplog) -> None:
    path = tmp_path / "page.warc"
    path.write_bytes(article(1))
    records, skipped = _read(path)
    assert records == [] and skipped == {"malformed": 1} and "not a WARC file" in caplog.text


def test_expand_paths(tmp_path: Path) -> None:
    for name in ("b.warc.gz", "a.warc.gz"):
        (tmp_path / name).write_bytes(b"")
    assert expand_paths(f"{tmp_path}/*.warc.gz") == [str(tmp_path / "a.warc.gz"), str(tmp_path / "b.warc.gz")]
    with pytest.raises(ValueError, match="matches no file"):
        expand_paths(f"{tmp_path}/none-*.warc")
    with pytest.raises(ValueError, match="give one or more"):
        expand_paths(" , ")


# -- the ledger ------------------------------------------------------------------------------

def _record(offset: int) -> ArchiveRecord:
    return ArchiveRecord(url=f"https://a.example/{offset}", status=200, headers=(), body=b"", warc_date="",
                         record_id=f"<urn:uuid:{offset}>", file="x.warc.gz", offset=offset)


def test_ledger_is_reconciled_with_the_feed_and_a_cut_line_is_removed(tmp_path: Path) -> None:
    jobdir, feed = tmp_path / "job", tmp_path / "out.jsonl"
    ledger = ExportLedger(str(jobdir), [feed])
    ledger.add(_record(10))
    ledger.close()
    # The feed holds 10 (ledgered), 20 (killed before its ledger line) and a cut line for 30.
    lines = [{"url": "u", "warc_file": "x.warc.gz", "warc_offset": o} for o in (10, 20)]
    feed.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"url": "u", "warc_file": "x.warc.gz", "warc')
    again = ExportLedger(str(jobdir), [feed])
    assert ("x.warc.gz", 10) in again and ("x.warc.gz", 20) in again and ("x.warc.gz", 30) not in again
    assert feed.read_text().endswith("}\n")  # the cut line is gone: the next run appends whole lines
    again.close()


# -- archivespider and the CLI ---------------------------------------------------------------

def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _crawl(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scrapy", "crawl", "archivespider", "-s", "CEPR_EXECUTOR=inline",
                           *args], cwd=PROJECT, env=_env(), capture_output=True, text=True, timeout=timeout)


def _stat(log: str, name: str) -> int:
    match = re.search(rf"'{re.escape(name)}': (\d+)", log)
    return int(match.group(1)) if match else 0


@pytest.mark.parametrize("downloader", [False, True])
def test_archivespider_exports_the_html_pages_as_extract_sees_them(mixed: Path, tmp_path: Path,
                                                                   downloader: bool) -> None:
    """The same items whether the responses go straight to the scraper (the default) or
    through the scheduler and the downloader (``-a downloader=true``)."""
    out = tmp_path / "out.jsonl"
    done = _crawl("-a", f"paths={mixed}", "-a", f"downloader={str(downloader).lower()}", "-O", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert [i["url"] for i in items] == KEPT
    records = {r.url: r for r in _read(mixed)[0]}
    for item in items:
        record = records[item["url"]]
        expected = extract(record.body, url=record.url, encoding=record_response(record).encoding)
        assert (item["title"], item["body"]) == (expected.title, expected.body)
        assert item["warc_record_id"] == record.record_id and item["warc_offset"] == record.offset
        assert item["warc_file"] == str(mixed) and item["warc_date"] == record.warc_date
        assert item["cepr_error"] is None and item["page_type"] == "article"
    log = done.stderr
    for reason, n in SKIPPED.items():
        assert _stat(log, f"cepr/archive/skipped/{reason}") == n
    assert _stat(log, "cepr/archive/records") == 12 and _stat(log, "cepr/cleaned") == 4
    assert _stat(log, "response_received_count") == 4 and _stat(log, "item_scraped_count") == 4
    assert 1 <= _stat(log, "cepr/archive/max_in_progress") <= 4 or downloader
    # Nothing but the four archive requests reached the downloader (no robots.txt, no
    # redirect); none in the direct mode.
    assert _stat(log, "downloader/request_count") == (4 if downloader else 0)
    assert "robots.txt" not in log and "http://" not in re.sub(r"\(\+https?://\S+\)", "", "\n".join(
        line for line in log.splitlines() if "Crawled" in line))


def test_archivespider_filters_and_bad_arguments(mixed: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = _crawl("-a", f"paths={mixed}", "-a", "hosts=example.com", "-a", "until=2024-03-01", "-O", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert [json.loads(x)["url"] for x in out.read_text().splitlines()] == KEPT[:2]
    bad = _crawl("-a", f"paths={tmp_path}/none*.warc.gz", "-O", str(out))
    assert "matches no file" in bad.stderr


def test_resume_with_overwrite_is_refused(mixed: Path, tmp_path: Path) -> None:
    jobdir, out = tmp_path / "job", tmp_path / "out.jsonl"
    done = _crawl("-a", f"paths={mixed}", "-s", f"JOBDIR={jobdir}", "-o", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    again = _crawl("-a", f"paths={mixed}", "-s", f"JOBDIR={jobdir}", "-O", str(out))
    assert "resume with -o" in again.stderr
    assert len(out.read_text().splitlines()) == 4  # untouched
    # A finished run resumed with -o exports nothing more.
    third = _crawl("-a", f"paths={mixed}", "-s", f"JOBDIR={jobdir}", "-o", str(out))
    assert third.returncode == 0 and len(out.read_text().splitlines()) == 4
    assert _stat(third.stderr, "cepr/archive/skipped/done") == 4


def test_cli_extract_warc(mixed: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "scrapy_cepr.cli", "extract", "--warc", str(mixed)],
                          capture_output=True, text=True, env=_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["url"] for r in rows] == KEPT
    assert rows[3]["title"] == "Grüße aus Köln" and "Report 4, part 0" in rows[3]["body"]
    assert "4 pages from 1 archives; skipped 8" in done.stderr
    parallel = subprocess.run([sys.executable, "-m", "scrapy_cepr.cli", "extract", "--warc", str(mixed),
                               "--parallel", "2", "--hosts", "example.org"],
                              capture_output=True, text=True, env=_env(), timeout=120)
    assert [json.loads(x)["url"] for x in parallel.stdout.splitlines()] == [KEPT[2]]


def test_gzip_fixture_is_really_gzip_members(mixed: Path) -> None:
    # The fixture is what the reader claims to handle: one gzip member per record.
    with gzip.open(mixed) as fh:
        assert fh.read(8) == b"WARC/1.0"
    assert chunked(b"abc", 2) == b"2\r\nab\r\n1\r\nc\r\n0\r\n\r\n"


def test_archivespider_needs_no_scrapy_redis(mixed: Path, tmp_path: Path) -> None:
    # The [warc] extra alone: scrapy-redis made unimportable in the crawl's process.
    out = tmp_path / "out.jsonl"
    code = ("import sys; sys.modules['scrapy_redis'] = None; from scrapy.cmdline import execute; "
            f"sys.argv = ['scrapy', 'crawl', 'archivespider', '-a', 'paths={mixed}', '-O', '{out}', "
            "'-s', 'CEPR_EXECUTOR=inline']; execute()")
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, env=_env(), capture_output=True, text=True,
                          timeout=180)
    assert "scrapy_redis" not in done.stderr and "scrapy-redis" not in done.stderr, done.stderr[-3000:]
    assert len(out.read_text().splitlines()) == 4


def test_network_only_downloader_middlewares_leave_archive_records_alone(tmp_path: Path) -> None:
    """A 503 record kept by ``status`` is served once (RetryMiddleware would serve it three
    times: a retried archive response is the same record again), and a spider with
    ``allowed_domains`` still gets its records (the downloader OffsiteMiddleware filtered
    every ``warc:`` request: its URL has no host)."""
    path = tmp_path / "503.warc.gz"
    write_warc(path, [response("https://news.example.com/busy", article(1), status="503 Service Unavailable"),
                      response("https://news.example.com/ok", article(2))])
    out = tmp_path / "out.jsonl"
    done = _crawl("-a", f"paths={path}", "-a", "status=200,503", "-a", "downloader=true", "-O", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(json.loads(line)["url"] for line in out.read_text().splitlines()) == [
        "https://news.example.com/busy", "https://news.example.com/ok"]
    assert _stat(done.stderr, "downloader/request_count") == 2
    assert _stat(done.stderr, "retry/count") == 0
    from scrapy.utils.test import get_crawler

    from scrapy_cepr.archive import ArchiveSpider

    class Allowed(ArchiveSpider):
        name = "allowed"
        allowed_domains = ["news.example.com"]

    crawler = get_crawler(Allowed, {"DOWNLOADER_MIDDLEWARES": {"myproject.middlewares.Own": 543}})
    middlewares = crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES")
    assert middlewares["myproject.middlewares.Own"] == 543  # the project's own stay
    for name in ("offsite.OffsiteMiddleware", "retry.RetryMiddleware", "useragent.UserAgentMiddleware"):
        assert middlewares[f"scrapy.downloadermiddlewares.{name}"] is None
    assert middlewares["scrapy.downloadermiddlewares.stats.DownloaderStats"] is not None


def test_direct_mode_reads_no_more_records_than_concurrent_requests(tmp_path: Path) -> None:
    """The direct mode reads a record only when the scraper has room: at most
    CONCURRENT_REQUESTS pages in progress, and every record exported once."""
    path = tmp_path / "many.warc.gz"
    write_warc(path, [response(f"https://news.example.com/{i}", article(i)) for i in range(40)])
    out = tmp_path / "out.jsonl"
    done = _crawl("-a", f"paths={path}", "-s", "CONCURRENT_REQUESTS=3", "-O", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    urls = [json.loads(line)["url"] for line in out.read_text().splitlines()]
    assert sorted(urls) == sorted(f"https://news.example.com/{i}" for i in range(40))
    assert 1 <= _stat(done.stderr, "cepr/archive/max_in_progress") <= 3


def test_direct_mode_argument_and_quiet_scraped_log_line(tmp_path: Path) -> None:
    """``-a downloader=`` takes a boolean; at LOG_LEVEL INFO the archive spider uses a
    log formatter without Scrapy's per-item "Scraped from" DEBUG line, and keeps Scrapy's
    at DEBUG or a project's own formatter."""
    from scrapy.settings import Settings

    from scrapy_cepr.archive import ArchiveSpider, QuietScrapedLogFormatter

    path = tmp_path / "one.warc.gz"
    write_warc(path, [response("https://news.example.com/ok", article(2))])
    assert ArchiveSpider(paths=str(path)).use_downloader is False
    assert ArchiveSpider(paths=str(path), downloader="true").use_downloader is True
    assert ArchiveSpider(paths=str(path), downloader="0").use_downloader is False
    with pytest.raises(ValueError, match="downloader: expected true or false"):
        ArchiveSpider(paths=str(path), downloader="maybe")

    def formatter(values: dict) -> str:
        settings = Settings(values, priority="project")
        ArchiveSpider.update_settings(settings)
        return settings.get("LOG_FORMATTER")

    quiet = "scrapy_cepr.archive.QuietScrapedLogFormatter"
    assert formatter({"LOG_LEVEL": "INFO"}) == quiet
    assert formatter({"LOG_LEVEL": "DEBUG"}) == "scrapy.logformatter.LogFormatter"
    assert formatter({"LOG_LEVEL": "INFO", "LOG_FORMATTER": "myproject.Formatter"}) == "myproject.Formatter"
    assert QuietScrapedLogFormatter().scraped({}, None, None) is None


def test_gzip_members_are_inflated_with_isal_and_read_the_same(mixed: Path, tmp_path: Path, monkeypatch) -> None:
    """The reader inflates a WARC.gz with ISA-L when ``isal`` is installed (the [warc]
    extra): the same records as with zlib; an uncompressed WARC is still read."""
    isal_zlib = pytest.importorskip("isal.isal_zlib")
    import scrapy_cepr.archive as archive

    made = []

    class Counting:
        MAX_WBITS = isal_zlib.MAX_WBITS

        @staticmethod
        def decompressobj(wbits: int):
            made.append(wbits)
            return isal_zlib.decompressobj(wbits)

    monkeypatch.setattr(archive, "_fast_zlib", Counting)
    fast, fast_skips = _read(mixed)
    assert len(made) >= len(mixed_records())  # one decompressor per gzip member
    monkeypatch.setattr(archive, "_fast_zlib", None)
    slow, slow_skips = _read(mixed)
    assert fast == slow and fast_skips == slow_skips and len(fast) == len(KEPT)
    plain = tmp_path / "plain.warc"
    write_warc(plain, mixed_records(), gzip_members=False)
    monkeypatch.setattr(archive, "_fast_zlib", isal_zlib)
    assert [r.url for r in _read(plain)[0]] == KEPT
