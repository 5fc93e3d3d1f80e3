"""Incremental crawling (issue 22): :mod:`scrapy_cepr.incremental`'s state stores and
components, and two runs of ``newsspider`` (and of two ``redisnewsspider`` crawlers
sharing Redis) against the two states of ``tests/newssite.py``."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
from httpserver import parse_stats_dump
from newssite import PROJECT, STATE1_ARTICLES, STATE2_EXPORTED, NewsSite, crawl_env, run_newsspider
from scrapy import Request, Spider, signals
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from scrapy_cepr.discovery import LASTMOD_META
from scrapy_cepr.incremental import (
    CanonicalPipeline,
    ExportRecord,
    IncrementalSpiderMiddleware,
    MemoryStateStore,
    RedisStateStore,
    SQLiteStateStore,
    url_key,
)

#: Both runs mark near-duplicate stories (scrapy_cepr.dedup, which needs datasketch).
DEDUP_SETTINGS = ("CEPR_DEDUP=mark",)


# -- records and stores ----------------------------------------------------------------------
def test_record_is_stale_compares_lastmod_then_export_time():
    exported = ExportRecord(exported_at=1_000_000.0, lastmod="2026-11-20T00:00:00+00:00")
    assert exported.is_stale("2026-11-21")
    assert not exported.is_stale("2026-11-20T00:00:00Z")
    assert not exported.is_stale("2026-11-19")
    assert not exported.is_stale(None) and not exported.is_stale("garbage")
    undated = ExportRecord(exported_at=time.time())
    assert not undated.is_stale("2020-01-01")  # older than the export itself
    assert undated.is_stale("2999-01-01")


def _exercise(store):
    assert store.get("http://a.example/x") is None
    store.put(["http://a.example/x", "http://a.example/alias"], ExportRecord(5.0, "2026-11-25T00:00:00+00:00"))
    assert store.get("http://a.example/alias") == ExportRecord(5.0, "2026-11-25T00:00:00+00:00")
    store.put(["http://a.example/x"], ExportRecord(9.0, None))  # a later export replaces the record
    assert store.get("http://a.example/x") == ExportRecord(9.0, None)
    assert store.count() == 2
    assert store.claim("http://a.example/c", "http://a.example/first") == "http://a.example/first"
    assert store.claim("http://a.example/c", "http://a.example/second") == "http://a.example/first"


def test_memory_store():
    _exercise(MemoryStateStore())


def test_sqlite_store_persists_between_runs(tmp_path):
    store = SQLiteStateStore(tmp_path / "state" / "incremental.sqlite3")
    _exercise(store)
    store.close()
    again = SQLiteStateStore(tmp_path / "state" / "incremental.sqlite3")
    assert again.get("http://a.example/x") == ExportRecord(9.0, None)
    assert again.claim("http://a.example/c", "http://a.example/third") == "http://a.example/first"
    again.close()


def test_sqlite_store_refuses_a_file_that_is_not_a_database(tmp_path):
    import sqlite3

    bad = tmp_path / "incremental.sqlite3"
    bad.write_bytes(b"this is not a database, and it is long enough to have a header" * 4)
    with pytest.raises(sqlite3.DatabaseError):
        SQLiteStateStore(bad)
    assert bad.read_bytes().startswith(b"this is not a database")  # left as it was


def test_url_key_normalises():
    assert url_key("http://a.example/p?b=2&a=1#frag") == url_key("http://a.example/p?a=1&b=2")


# -- components ------------------------------------------------------------------------------
class _Spider(Spider):
    name = "incremental-test"


def _crawler(tmp_path=None):
    settings = {"CEPR_STATE_DIR": str(tmp_path)} if tmp_path is not None else {}
    crawler = get_crawler(_Spider, settings_dict=settings)
    crawler.spider = _Spider.from_crawler(crawler)
    crawler.stats.open_spider()
    return crawler


def test_middleware_is_off_without_a_state_dir():
    with pytest.raises(NotConfigured):
        IncrementalSpiderMiddleware.from_crawler(_crawler())


def test_a_state_dir_that_cannot_be_used_stops_the_crawl_at_start(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(ValueError, match="CEPR_STATE_DIR=.*cannot open the incremental state"):
        IncrementalSpiderMiddleware.from_crawler(_crawler(blocker))
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "incremental.sqlite3").write_bytes(b"garbage, not SQLite" * 10)
    with pytest.raises(ValueError, match="cannot open the incremental state"):
        IncrementalSpiderMiddleware.from_crawler(_crawler(tmp_path / "bad"))
    assert (tmp_path / "bad" / "incremental.sqlite3").read_bytes() == b"garbage, not SQLite" * 10


def test_middleware_skips_exported_pages_unless_updated(tmp_path):
    crawler = _crawler(tmp_path)
    mw = IncrementalSpiderMiddleware.from_crawler(crawler)
    page = HtmlResponse("http://a.example/news/1", request=Request("http://a.example/news/1?utm=x",
                        meta={LASTMOD_META: "2026-11-20T00:00:00+00:00", "redirect_urls": ["http://a.example/n1"]}),
                        body=b"<p>x</p>")
    mw.item_scraped({"url": page.url, "canonical_url": "http://a.example/news/one"}, page)
    requests = [Request("http://a.example/news/1"),  # exported: skipped
                Request("http://a.example/n1"),  # before its redirect: skipped
                Request("http://a.example/news/one"),  # its canonical URL: skipped
                Request("http://a.example/news/1", meta={LASTMOD_META: "2026-11-19"}),  # older lastmod: skipped
                Request("http://a.example/news/1?utm=x", meta={LASTMOD_META: "2026-11-24"}),  # updated: fetched
                Request("http://a.example/news/2")]  # new: fetched
    kept = list(mw.process_spider_output(page, [*requests, {"an": "item"}]))
    assert kept == [requests[4], requests[5], {"an": "item"}]
    stats = crawler.stats.get_stats()
    assert (stats["cepr/incremental/skipped"], stats["cepr/incremental/refetched"],
            stats["cepr/incremental/recorded"]) == (4, 1, 1)
    mw.spider_closed()
    # The next run reads what this one recorded.
    again = IncrementalSpiderMiddleware.from_crawler(_crawler(tmp_path))
    assert list(again.process_spider_output(page, [Request("http://a.example/news/1")])) == []


def test_canonical_pipeline_keeps_one_article_per_canonical_url():
    crawler = _crawler()
    pipeline = CanonicalPipeline.from_crawler(crawler)
    first = {"url": "http://a.example/s8", "canonical_url": "http://a.example/s8"}
    assert pipeline.process_item(first) is first
    assert pipeline.process_item(dict(first)) == first  # the same URL again (an update) passes
    with pytest.raises(DropItem, match="same article as http://a.example/s8"):
        pipeline.process_item({"url": "http://a.example/s8?utm_source=rss", "canonical_url": "http://a.example/s8"})
    other = {"url": "http://a.example/x"}  # no canonical_url field: passes
    assert pipeline.process_item(other) is other
    assert crawler.stats.get_value("cepr/canonical/duplicates") == 1


# -- two runs of newsspider --------------------------------------------------------------------
def _items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _paths(items) -> list[str]:
    return sorted(urlparse(i["url"]).path for i in items)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Run 1 on state 1 and run 2 on state 2 with one CEPR_STATE_DIR:
    (items, log, article paths fetched) per run, and the base URL."""
    pytest.importorskip("datasketch", reason='CEPR_DEDUP needs datasketch: pip install "scrapy-cepr[dedup]"')
    tmp = tmp_path_factory.mktemp("incremental")
    state = f"CEPR_STATE_DIR={tmp / 'state'}"
    runs = []
    with NewsSite() as site:
        for n in (1, 2):
            if n == 2:
                site.advance()
            out = tmp / f"run{n}.jsonl"
            proc = run_newsspider(site.url, out, state, *DEDUP_SETTINGS)
            assert proc.returncode == 0, proc.stderr[-3000:]
            runs.append((_items(out), proc.stderr, sorted(site.article_hits()), list(site.hits)))
        base = site.url
    return runs, base


def test_first_run_exports_every_article(two_runs):
    runs, _ = two_runs
    items, log, fetched, _ = runs[0]
    assert _paths(items) == sorted(STATE1_ARTICLES)
    assert fetched == sorted([*STATE1_ARTICLES, "/news/s8?utm_source=rss"])
    assert parse_stats_dump(log)["cepr/incremental/recorded"] == len(STATE1_ARTICLES)


def test_second_run_fetches_and_exports_only_new_and_updated_articles(two_runs):
    runs, base = two_runs
    items, log, fetched, hits = runs[1]
    assert fetched == sorted(STATE2_EXPORTED)  # new s9, s10; updated s2; two republished stories
    assert _paths(items) == sorted(STATE2_EXPORTED)
    # … plus robots.txt (ours and RobotsTxtMiddleware's), the sitemaps, the feed and the home page.
    assert sorted(set(hits) - set(fetched)) == ["/", "/feed.xml", "/robots.txt", "/sitemap_index.xml",
                                                "/sitemaps/archive.xml.gz", "/sitemaps/news.xml"]
    stats = parse_stats_dump(log)
    assert stats["cepr/incremental/refetched"] == 1  # s2, whose sitemap lastmod is now newer
    assert stats["cepr/incremental/recorded"] == len(STATE2_EXPORTED)
    updated = next(i for i in items if i["url"] == base + "news/s2")
    assert "mobile library van" in updated["body"]


def test_second_run_marks_republished_stories(two_runs):
    runs, base = two_runs
    by_path = {urlparse(i["url"]).path: i for i in runs[1][0]}
    assert by_path["/wire/s1-copy"]["duplicate_of"] == base + "news/s1"
    assert by_path["/partner/s3"]["duplicate_of"] == base + "news/s3"
    for path in ("/news/s2", "/news/s9", "/news/s10"):
        assert by_path[path].get("duplicate_of") is None, path


# -- the same two runs with two distributed crawlers ---------------------------------------------
@pytest.fixture(scope="module")
def redis_url():
    from redis_fixture import started_redis

    pytest.importorskip("scrapy_redis", reason="pip install 'scrapy-cepr[redis]'")
    for server in started_redis():
        yield server.url


def _distributed_run(redis_url: str, tmp: Path, run: int, start_url: str) -> list[tuple[int, str, Path]]:
    import redis

    client = redis.Redis.from_url(redis_url)
    # Between runs: the duplicate filter goes (it would hide the sitemaps and the updated
    # page), the incremental state stays.
    client.delete("redisnewsspider:dupefilter", "redisnewsspider:requests")
    client.lpush("redisnewsspider:start_urls", start_url)
    procs = []
    for n in range(2):
        out = tmp / f"run{run}-crawler{n}.jsonl"
        log = out.with_suffix(".log").open("w")
        cmd = [sys.executable, "-m", "scrapy", "crawl", "redisnewsspider", "-O", str(out), "-s", f"REDIS_URL={redis_url}"]
        for setting in ("CEPR_EXECUTOR=inline", "AUTOTHROTTLE_ENABLED=False", "DOWNLOAD_DELAY=0", "LOG_LEVEL=INFO",
                        "MAX_IDLE_TIME_BEFORE_CLOSE=2", "SCHEDULER_HEARTBEAT_TIMEOUT=3", "CEPR_STATE_DIR=redis",
                        f"SCHEDULER_CRAWLER_ID=crawler-{n}", *DEDUP_SETTINGS):
            cmd += ["-s", setting]
        procs.append((subprocess.Popen(cmd, cwd=PROJECT, env=crawl_env(), stderr=log, stdout=subprocess.DEVNULL),
                      log, out))
    results = []
    for proc, log, out in procs:
        code = proc.wait(timeout=180)
        log.close()
        results.append((code, out.with_suffix(".log").read_text(), out))
    return results


def test_redis_store(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    client.delete("unit:cepr:exported", "unit:cepr:canonical")
    _exercise(RedisStateStore(client, "unit:cepr"))
    # Another crawler's view of the same keys.
    assert RedisStateStore(redis.Redis.from_url(redis_url), "unit:cepr").get("http://a.example/x") == ExportRecord(9.0)


@pytest.mark.slow
def test_two_distributed_crawlers_give_the_same_counts(redis_url, tmp_path):
    with NewsSite() as site:
        first = _distributed_run(redis_url, tmp_path, 1, site.url)
        fetched1 = sorted(site.article_hits())
        site.advance()
        second = _distributed_run(redis_url, tmp_path, 2, site.url)
        fetched2 = sorted(site.article_hits())
    for code, log, _ in first + second:
        assert code == 0, log[-3000:]
    items1 = [i for _, _, out in first for i in _items(out)]
    items2 = [i for _, _, out in second for i in _items(out)]
    # s8 is linked under two URLs (the feed's adds ?utm_source=rss, its page declares the
    # canonical one). One crawler alone fetches both, as the single-crawler test shows;
    # with two, which copy is fetched first is a race, and a crawler that finds the
    # canonical URL already exported in the shared state does not fetch the other copy.
    assert sorted({urlparse(u).path for u in fetched1}) == sorted(STATE1_ARTICLES)
    assert set(fetched1) - {"/news/s8"} == {*STATE1_ARTICLES, "/news/s8?utm_source=rss"} - {"/news/s8"} \
        or set(fetched1) - {"/news/s8?utm_source=rss"} == set(STATE1_ARTICLES)
    assert len(fetched1) == len(set(fetched1))  # nothing fetched twice
    assert _paths(items1) == sorted(STATE1_ARTICLES)  # sorted lists: nothing twice
    assert fetched2 == sorted(STATE2_EXPORTED)
    assert _paths(items2) == sorted(STATE2_EXPORTED)
    by_path = {urlparse(i["url"]).path: i for i in items2}
    base = {i["duplicate_of"].rsplit("/news/", 1)[0] for i in items2 if i["duplicate_of"]}
    assert len(base) == 1  # both crawlers found the first story in the shared Redis index
    assert by_path["/wire/s1-copy"]["duplicate_of"].endswith("/news/s1")
    assert by_path["/partner/s3"]["duplicate_of"].endswith("/news/s3")
    assert sorted(p for p, i in by_path.items() if i["duplicate_of"]) == ["/partner/s3", "/wire/s1-copy"]


def test_a_page_dropped_on_purpose_is_not_fetched_again(tmp_path):
    # A near-duplicate (CEPR_DEDUP="drop"), a non-article with CEPR_NON_ARTICLE="drop": the
    # page was fetched and judged; the next run must not fetch it again to drop it again.
    crawler = _crawler(tmp_path)
    mw = IncrementalSpiderMiddleware.from_crawler(crawler)
    page = HtmlResponse("http://a.example/wire/copy", request=Request("http://a.example/wire/copy"), body=b"<p>x</p>")
    crawler.signals.send_catch_log(signals.item_dropped, item={"url": page.url}, response=page,
                                   exception=DropItem("near-duplicate of http://a.example/news/1"),
                                   spider=crawler.spider)
    assert crawler.stats.get_value("cepr/incremental/recorded_dropped") == 1
    assert list(mw.process_spider_output(page, [Request(page.url)])) == []
