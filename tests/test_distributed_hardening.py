"""Hardening of the distributed mode against what is written to Redis (issue 18, the two
defects left open), against a real ``redis-server`` started for these tests.

1. Requests and start URLs read FROM Redis are refused unless ``http(s)://``: whoever can
   write to the shared queue must not make the crawlers read their own local files
   (``file://``) into the exported items. Refusals are counted in
   ``cepr/redis/refused_scheme``, logged once per scheme, and the other entries are crawled.
2. A wrong or missing Redis password stops ``scrapy crawl`` with one clear error line naming
   ``REDIS_URL`` (no traceback, no password in the log) and a non-zero exit code.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import test_distributed as _td  # skips (or fails in CI) without scrapy-redis, as it does
from httpserver import PageServer, parse_stats_dump
from scrapy import Request
from scrapy.utils.test import get_crawler

from scrapy_cepr.distributed import dumps, read_jsonl

# The fixtures and helpers of tests/test_distributed.py (a fresh redis-server per module).
redis_url, client, password_redis = _td.redis_url, _td.client, _td.password_redis
PROJECT, _crawl, _scheduler, _site = _td.PROJECT, _td._crawl, _td._scheduler, _td._site

SECRET = "TOPSECRET-LOCAL-FILE-7f3a"


def _local_pages(root: Path) -> tuple[str, str]:
    """Two local pages standing for the crawler machine's files: an index linking a
    "secret" article (the same directory, so in scope of a ``file://`` start URL).
    Returns the ``file://`` URLs of (index, secret)."""
    root.mkdir(parents=True, exist_ok=True)
    paragraphs = "".join(f"<p>{SECRET} paragraph {k}: the content of a private file on the crawler.</p>"
                         for k in range(4))
    (root / "secret.html").write_text(
        f"<html><head><title>Secret</title></head><body><div class='story'><h1>Secret</h1>{paragraphs}</div>"
        "</body></html>")
    (root / "index.html").write_text("<html><body><a href='secret.html'>secret</a></body></html>")
    return (root / "index.html").as_uri(), (root / "secret.html").as_uri()


def test_queue_entries_that_are_not_http_are_refused_counted_and_logged_once(redis_url, client, caplog):
    a = _scheduler(redis_url, "a")
    good = Request("http://x.test/good", priority=-5)  # after the refused entries in queue order
    assert a.enqueue_request(good)
    entries = {
        dumps({"url": "file:///etc/passwd", "callback": "parse", "meta": {"depth": 1}}): -10,
        dumps({"url": "file:///etc/hostname"}): -9,
        dumps({"url": "ftp://x.test/f"}): -8,
        dumps({"url": "data:text/html,<p>x</p>"}): -7,
    }
    client.zadd("dist:requests", entries)
    with caplog.at_level(logging.WARNING, logger="scrapy_cepr.distributed"):
        got = a.next_request()
    assert got is not None and got.url == good.url
    assert a.stats.get_value("cepr/redis/refused_scheme") == 4
    refused = [r.getMessage() for r in caplog.records if "cepr/redis/refused_scheme" in r.getMessage()]
    assert len(refused) == 3, refused  # once per scheme: file, ftp, data
    assert any("'file'" in m for m in refused)
    # Nothing refused stays in the queue or in flight (it would keep the crawl open), and
    # nothing is lost: the good request is in flight, the refused ones kept for inspection.
    assert client.zcard("dist:requests") == 0
    assert client.zrange("dist:inflight:a", 0, -1) == [a._inflight[got]]
    assert set(client.lrange("dist:bad_requests", 0, -1)) == set(entries)
    assert a.next_request() is None


def test_scheduler_does_not_store_a_request_it_would_refuse(redis_url, client):
    a = _scheduler(redis_url, "a")
    assert not a.enqueue_request(Request("file:///etc/passwd"))
    assert a.stats.get_value("cepr/redis/refused_scheme") == 1
    assert client.zcard("dist:requests") == 0 and client.scard("dist:dupefilter") == 0
    assert a.enqueue_request(Request("https://x.test/ok"))


@pytest.fixture
def _project_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(PROJECT))


def test_start_url_entries_that_are_not_http_are_refused_without_crashing(redis_url, client, caplog, monkeypatch,
                                                                         _project_on_path):
    from newsproject.spiders.redisnewsspider import RedisNewsSpider  # noqa: PLC0415 - needs the project on sys.path

    monkeypatch.setitem(RedisNewsSpider.custom_settings, "REDIS_URL", redis_url)  # wins over get_crawler's
    crawler = get_crawler(RedisNewsSpider)
    spider = RedisNewsSpider.from_crawler(crawler)
    with caplog.at_level(logging.WARNING):
        assert spider.make_request_from_data(b"file:///etc/passwd") == []
        assert spider.make_request_from_data(b'{"url": "file:///etc/shadow"}') == []
        assert spider.make_request_from_data(b"FILE:///etc/group") == []
        assert spider.make_request_from_data(b"ftp://x.test/") == []
        assert spider.make_request_from_data(b'{"url": 5}') == []  # malformed: an error, no crash
        assert spider.make_request_from_data(b'["http://x.test/"]') == []  # no scheme: refused
        assert spider.make_request_from_data(b"\xff\xfe") == []  # not UTF-8
        requests = spider.make_request_from_data(b"https://x.test/")
    assert requests and requests[0].url == "https://x.test/"
    assert crawler.stats.get_value("cepr/redis/refused_scheme") == 5
    refused = [r.getMessage() for r in caplog.records if "cepr/redis/refused_scheme" in r.getMessage()]
    assert len(refused) == 3, refused  # once per scheme: file, ftp, none


def test_crawl_refuses_local_files_pushed_to_redis_and_crawls_the_rest(redis_url, client, tmp_path):
    index_uri, secret_uri = _local_pages(tmp_path / "local")
    with PageServer(_site(5)) as server:
        client.lpush("redisnewsspider:start_urls", index_uri, server.url + "/")
        # A request entry as a crawler writes it: an article page (depth 1) to parse.
        client.zadd("redisnewsspider:requests", {
            dumps({"url": secret_uri, "callback": "parse", "meta": {"depth": 1}, "dont_filter": True}): -100})
        code, log = _crawl(redis_url, tmp_path / "out.jsonl", timeout=90)
        served = {server.url + f"/a/{n}.html" for n in range(5)}
    assert code == 0, log[-3000:]
    out = (tmp_path / "out.jsonl").read_text()
    assert SECRET not in out
    assert set(read_jsonl([tmp_path / "out.jsonl"]).items) == served  # the other entries: all crawled
    stats = parse_stats_dump(log)
    assert stats["cepr/redis/refused_scheme"] == 2
    assert not any(k.startswith("downloader/") and "file" in k for k in stats)
    assert client.zcard("redisnewsspider:requests") == 0
    assert client.keys("redisnewsspider:inflight:*") == []


@pytest.mark.parametrize("name", ["none", "wrong"])
def test_bad_password_gives_one_clear_error_line_and_no_traceback(password_redis, tmp_path, name):
    url = (password_redis.url_without_password if name == "none"
           else password_redis.url.replace("s3cret-Pw", "wrong-Pw"))
    code, log = _crawl(url, tmp_path / "out.jsonl", timeout=60)
    assert code != 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert "never retrieved" not in log, log[-3000:]
    errors = [line for line in log.splitlines() if "REDIS_URL" in line]
    assert len(errors) == 1, log[-3000:]
    assert " ERROR: " in errors[0] or " CRITICAL: " in errors[0]
    assert ("asks for a password and REDIS_URL gives none" if name == "none"
            else "refused the password of REDIS_URL") in errors[0]
    assert f"127.0.0.1:{password_redis.port}" in errors[0]
    assert "wrong-Pw" not in log and "s3cret-Pw" not in log  # no password in the log
    assert not (tmp_path / "out.jsonl").exists() or (tmp_path / "out.jsonl").read_text() == ""


def test_bad_password_under_another_spider_gives_one_clear_error_line(password_redis, tmp_path):
    """Any spider on RecoveringScheduler (the scheduler finds the bad password when the
    engine opens, after the spider was made): one error line too."""
    spider = tmp_path / "plain.py"
    spider.write_text(
        "import scrapy\n"
        "class Plain(scrapy.Spider):\n"
        "    name = 'plain'\n"
        "    start_urls = ['http://127.0.0.1:9/']\n"
        "    custom_settings = {'SCHEDULER': 'scrapy_cepr.distributed.RecoveringScheduler',\n"
        "                       'DUPEFILTER_CLASS': 'scrapy_redis.dupefilter.RFPDupeFilter', 'SCHEDULER_PERSIST': True}\n")
    url = password_redis.url.replace("s3cret-Pw", "wrong-Pw")
    proc = subprocess.run([sys.executable, "-m", "scrapy", "runspider", str(spider), "-s", f"REDIS_URL={url}"],
                          cwd=tmp_path, env=_td._env(), capture_output=True, text=True, timeout=60)
    log = proc.stderr
    if _scrapy_version() >= (2, 19):  # Scrapy 2.14 exits 0 when the scheduler fails to open (with or without us)
        assert proc.returncode != 0, log[-3000:]
    assert "Traceback" not in log and "never retrieved" not in log, log[-3000:]
    errors = [line for line in log.splitlines() if "REDIS_URL" in line]
    assert len(errors) == 1 and "refused the password of REDIS_URL" in errors[0], log[-3000:]
    assert "wrong-Pw" not in log


def test_unreachable_redis_gives_one_clear_error_line(tmp_path):
    from redis_fixture import _free_port  # noqa: PLC0415

    code, log = _crawl(f"redis://:s3cret-Pw@127.0.0.1:{_free_port()}", tmp_path / "out.jsonl", timeout=60)
    assert code != 0, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    errors = [line for line in log.splitlines() if "REDIS_URL" in line]
    assert len(errors) == 1 and "cannot reach Redis" in errors[0], log[-3000:]
    assert "s3cret-Pw" not in log


def test_crawl_json_start_url_entry(redis_url, client, tmp_path):
    """A start URL as JSON ``{"url": ...}`` is still taken."""
    with PageServer(_site(2)) as server:
        client.lpush("redisnewsspider:start_urls", json.dumps({"url": server.url + "/"}))
        code, log = _crawl(redis_url, tmp_path / "out.jsonl", timeout=90)
        served = {server.url + f"/a/{n}.html" for n in range(2)}
    assert code == 0, log[-3000:]
    assert set(read_jsonl([tmp_path / "out.jsonl"]).items) == served


def _scrapy_version() -> tuple[int, ...]:
    import scrapy

    return tuple(int(part) for part in scrapy.__version__.split(".")[:2] if part.isdigit())
