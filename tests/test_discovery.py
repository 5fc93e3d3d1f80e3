"""Article discovery (issue 22): :mod:`scrapy_cepr.discovery` on hand-written sitemaps,
feeds and pages, and ``newsspider`` over the test site of ``tests/newssite.py``."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

import pytest
from newssite import STATE1_ARTICLES, NewsSite, run_newsspider
from scrapy import Request, Spider
from scrapy.http import HtmlResponse, Response, TextResponse, XmlResponse
from scrapy.utils.test import get_crawler

from scrapy_cepr.discovery import (
    LASTMOD_META,
    SOURCE_META,
    DiscoveryMixin,
    NewsSitemap,
    canonical_url,
    feed_urls,
    parse_date,
    parse_since,
)

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


# -- dates ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "expected"), [
    ("2026-11-20", datetime(2026, 11, 20, tzinfo=UTC)),
    ("-2d", NOW - timedelta(days=2)),
    ("-6h", NOW - timedelta(hours=6)),
    ("2026-11-20T10:00:00+02:00", datetime(2026, 11, 20, 8, tzinfo=UTC)),
    ("2026-11-20T10:00:00Z", datetime(2026, 11, 20, 10, tzinfo=UTC)),
    (None, None),
    ("", None),
])
def test_parse_since(value, expected):
    assert parse_since(value, now=NOW) == expected


@pytest.mark.parametrize("value", ["yesterday", "2d", "-2w", "20/11/2026"])
def test_parse_since_rejects_other_forms_with_a_clear_error(value):
    with pytest.raises(ValueError, match="since: .* is not YYYY-MM-DD"):
        parse_since(value, now=NOW)


def test_newsspider_rejects_a_bad_since_before_crawling(monkeypatch):
    from newssite import PROJECT

    monkeypatch.syspath_prepend(str(PROJECT))
    from newsproject.spiders.newsspider import NewsSpider

    with pytest.raises(ValueError, match="since"):
        NewsSpider(start_urls="http://a.example/", since="last week")


def test_since_from_the_setting_and_the_argument():
    crawler = get_crawler(_Spider, settings_dict={"CEPR_SINCE": "2026-11-01"})
    assert _Spider.from_crawler(crawler).since_date == datetime(2026, 11, 1, tzinfo=UTC)
    crawler = get_crawler(_Spider, settings_dict={"CEPR_SINCE": "2026-11-01"})
    assert _Spider.from_crawler(crawler, since="2026-11-20").since_date == datetime(2026, 11, 20, tzinfo=UTC)
    with pytest.raises(ValueError, match="since: 'soon'"):
        _Spider.from_crawler(get_crawler(_Spider, settings_dict={"CEPR_SINCE": "soon"}))


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-11-24", datetime(2026, 11, 24, tzinfo=UTC)),
    ("2026-11-24T08:30+01:00", datetime(2026, 11, 24, 7, 30, tzinfo=UTC)),
    ("Tue, 24 Nov 2026 08:30:00 +0000", datetime(2026, 11, 24, 8, 30, tzinfo=UTC)),
    ("not a date", None),
    ("", None),
    (None, None),
])
def test_parse_date(text, expected):
    assert parse_date(text) == expected


# -- documents -----------------------------------------------------------------------------
NEWS_SITEMAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url><loc>https://news.example/new</loc>
    <news:news><news:publication><news:name>N</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2026-11-25T09:00:00Z</news:publication_date><news:title>New</news:title></news:news>
  </url>
  <url><loc>https://news.example/old</loc><lastmod>2026-10-01</lastmod>
    <news:news><news:publication_date>2026-09-30T09:00:00Z</news:publication_date></news:news></url>
  <url><loc>https://news.example/undated</loc></url>
  <url><loc>https://news.example/updated</loc><lastmod>2026-11-25T10:00:00Z</lastmod>
    <news:news><news:publication_date>2026-01-01</news:publication_date></news:news></url>
  <url><loc>https://elsewhere.example/x</loc></url>
</urlset>
"""

INDEX = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://news.example/s1.xml</loc><lastmod>2026-11-25</lastmod></sitemap>
  <sitemap><loc>https://news.example/s2.xml.gz</loc><lastmod>2025-01-01</lastmod></sitemap>
  <sitemap><loc>/relative.xml</loc></sitemap>
</sitemapindex>
"""

RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>
<item><title>A</title><link>https://news.example/a</link><pubDate>Wed, 25 Nov 2026 08:00:00 GMT</pubDate></item>
<item><title>B</title><link>https://news.example/b</link><pubDate>Sun, 01 Mar 2026 08:00:00 GMT</pubDate></item>
<item><title>C</title><link>/c</link></item>
<item><title>no link</title></item>
</channel></rss>"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>
<entry><title>A</title><link href="https://news.example/atom-a"/><updated>2026-11-25T07:00:00Z</updated></entry>
</feed>"""


def test_news_sitemap_keeps_the_publication_date():
    entries = list(NewsSitemap(NEWS_SITEMAP))
    assert [e["loc"] for e in entries][:4] == ["https://news.example/new", "https://news.example/old",
                                              "https://news.example/undated", "https://news.example/updated"]
    assert entries[0]["publication_date"] == "2026-11-25T09:00:00Z"
    assert entries[1] == {"loc": "https://news.example/old", "lastmod": "2026-10-01", "news": "",
                          "publication_date": "2026-09-30T09:00:00Z"}
    assert "publication_date" not in entries[2]


class _Spider(DiscoveryMixin, Spider):
    name = "discovery-test"

    def parse(self, response):  # pragma: no cover - never called here
        yield {}

    def _in_scope(self, response, url):
        return urlparse(url).hostname == "news.example"


def _spider(since: str | None = None) -> _Spider:
    crawler = get_crawler(_Spider)
    spider = _Spider.from_crawler(crawler, since=since)
    crawler.stats.open_spider()
    return spider


def _stats(spider: _Spider) -> dict:
    return {k: v for k, v in spider.crawler.stats.get_stats().items() if k.startswith("cepr/")}


def _r(cls, url, **kwargs):
    """A response to a request for *url* (callbacks read the request's meta)."""
    return cls(url, request=Request(url), **kwargs)


def _pages(outputs) -> dict[str, Request]:
    return {r.url: r for r in outputs}


def test_sitemap_entries_become_page_requests_with_their_newest_date():
    spider = _spider()
    out = _pages(spider.parse_sitemap(_r(XmlResponse, "https://news.example/news.xml", body=NEWS_SITEMAP)))
    assert list(out) == ["https://news.example/new", "https://news.example/old", "https://news.example/undated",
                         "https://news.example/updated"]  # elsewhere.example is out of scope
    assert out["https://news.example/new"].meta[LASTMOD_META] == "2026-11-25T09:00:00+00:00"
    assert out["https://news.example/old"].meta[LASTMOD_META] == "2026-10-01T00:00:00+00:00"  # the newer date
    assert out["https://news.example/undated"].meta[LASTMOD_META] is None
    assert all(r.meta[SOURCE_META] == "sitemap" and r.callback == spider.parse for r in out.values())
    assert _stats(spider) == {"cepr/discovery/sitemaps": 1, "cepr/discovered/sitemap": 4}


def test_since_skips_older_sitemap_entries_before_they_are_fetched():
    spider = _spider(since="2026-11-20")
    out = _pages(spider.parse_sitemap(_r(XmlResponse, "https://news.example/news.xml", body=NEWS_SITEMAP)))
    # "old" is older; "updated" was published in January but modified today: kept.
    assert list(out) == ["https://news.example/new", "https://news.example/undated", "https://news.example/updated"]
    assert _stats(spider)["cepr/since/skipped"] == 1


def test_sitemap_index_and_gzip():
    spider = _spider(since="2026-11-01")
    out = list(spider.parse_sitemap(_r(XmlResponse, "https://news.example/sitemap_index.xml", body=INDEX)))
    # s2.xml.gz was last modified before `since`: not read at all.
    assert [r.url for r in out] == ["https://news.example/s1.xml", "https://news.example/relative.xml"]
    assert all(r.callback == spider.parse_sitemap and r.meta["depth_reset"] for r in out)
    gz = _r(Response, "https://news.example/s1.xml.gz", body=gzip.compress(NEWS_SITEMAP))
    assert [r.url for r in spider.parse_sitemap(gz)][0] == "https://news.example/new"


@pytest.mark.parametrize("body", [b"", b"<html><body>not a sitemap</body></html>", b"\x1f\x8bnot gzip"])
def test_invalid_sitemap_is_counted_and_yields_nothing(body, caplog):
    spider = _spider()
    assert list(spider.parse_sitemap(_r(Response, "https://news.example/s.xml", body=body))) == []
    assert _stats(spider)["cepr/discovery/invalid"] == 1


def test_robots_sitemaps():
    spider = _spider()
    body = b"User-agent: *\nDisallow: /x\nSitemap: /sitemap_index.xml\nsitemap: https://news.example/news.xml\n"
    out = list(spider.parse_robots(_r(TextResponse, "https://news.example/robots.txt", body=body)))
    assert [r.url for r in out] == ["https://news.example/sitemap_index.xml", "https://news.example/news.xml"]
    missing = _r(TextResponse, "https://news.example/robots.txt", status=404, body=b"Sitemap: /nope.xml")
    assert list(spider.parse_robots(missing)) == []
    start = spider.discovery_start("https://news.example/section/")
    assert [r.url for r in start] == ["https://news.example/robots.txt"]
    assert start[0].meta["handle_httpstatus_list"] == [404, 410]
    assert spider.discovery_start("file:///srv/site/index.html") == []


@pytest.mark.parametrize(("body", "expected"), [
    (RSS, {"https://news.example/a": "2026-11-25T08:00:00+00:00", "https://news.example/b": "2026-03-01T08:00:00+00:00",
           "https://news.example/c": None}),
    (ATOM, {"https://news.example/atom-a": "2026-11-25T07:00:00+00:00"}),
])
def test_feed_entries_become_page_requests(body, expected):
    spider = _spider()
    out = _pages(spider.parse_feed(_r(XmlResponse, "https://news.example/feed", body=body)))
    assert {url: r.meta[LASTMOD_META] for url, r in out.items()} == expected
    assert all(r.meta[SOURCE_META] == "feed" for r in out.values())
    assert _stats(spider)["cepr/discovered/feed"] == len(expected)


def test_since_filters_feed_entries():
    spider = _spider(since="2026-11-01")
    assert sorted(_pages(spider.parse_feed(_r(XmlResponse, "https://news.example/feed", body=RSS)))) == [
        "https://news.example/a", "https://news.example/c"]


def test_feed_that_is_not_a_feed_is_counted_invalid():
    spider = _spider()
    assert list(spider.parse_feed(_r(TextResponse, "https://news.example/feed", body=b"\x00\x01 nonsense <<<"))) == []
    assert _stats(spider)["cepr/discovery/invalid"] == 1


def test_feed_links_of_a_page():
    page = _r(HtmlResponse, "https://news.example/", body=b"""<html><head>
      <link rel="alternate" type="application/rss+xml" href="/rss">
      <link rel="Alternate" type="application/atom+xml; charset=utf-8" href="https://news.example/atom">
      <link rel="alternate" hreflang="fr" href="/fr/">
      <link rel="stylesheet" href="/s.css">
      <link rel="alternate" type="application/rss+xml" href="/rss">
    </head></html>""")
    assert feed_urls(page) == ["https://news.example/rss", "https://news.example/atom"]
    assert feed_urls(_r(TextResponse, "https://news.example/x.txt", body=b"<link rel=alternate>")) == []


@pytest.mark.parametrize(("head", "expected"), [
    ('<link rel="canonical" href="/story?b=2&a=1#top">', "https://news.example/story?a=1&b=2"),
    ('<meta property="og:url" content="https://news.example/og">', "https://news.example/og"),
    ('<link rel="canonical" href="/c"><meta property="og:url" content="https://news.example/og">',
     "https://news.example/c"),
    ('<link rel="canonical" href="javascript:alert(1)">', "https://news.example/page?utm_source=rss"),
    ('<link rel="canonical" href="">', "https://news.example/page?utm_source=rss"),
    # every page of a site pointing at its home page: ignored, og:url (or the URL) is used
    ('<link rel="canonical" href="https://news.example/"><meta property="og:url" content="/page">',
     "https://news.example/page"),
    ('<link rel="canonical" href="/">', "https://news.example/page?utm_source=rss"),
    ("", "https://news.example/page?utm_source=rss"),
])
def test_canonical_url(head, expected):
    page = _r(HtmlResponse, "https://news.example/page?utm_source=rss", body=f"<html><head>{head}</head></html>".encode())
    assert canonical_url(page) == expected


# -- newsspider over the test site ---------------------------------------------------------
def _items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("disc") / "run1.jsonl"
    with NewsSite() as site:
        proc = run_newsspider(site.url, out)
        hits = list(site.hits)
        base = site.url
    assert proc.returncode == 0, proc.stderr[-3000:]
    return _items(out), proc.stderr, hits, base


def test_every_article_is_found_through_sitemaps_and_feeds(first_run):
    from httpserver import parse_stats_dump

    items, log, hits, base = first_run
    # The home page links no article: every article came from a sitemap or the feed.
    assert sorted(urlparse(i["url"]).path for i in items) == sorted(STATE1_ARTICLES)
    assert all(i["url"].startswith(base) and i["page_type"] == "article" and i["cepr_error"] is None for i in items)
    stats = parse_stats_dump(log)
    # news.xml: s1-s4, s8; archive.xml.gz: s5, s6; feed: s1, s2, s7, s8 (alias URL).
    assert stats["cepr/discovered/sitemap"] == 7
    assert stats["cepr/discovered/feed"] == 4
    assert stats["cepr/discovery/sitemaps"] == 3  # the index, the news sitemap, the gzipped archive
    assert stats["cepr/discovery/feeds"] == 1
    assert stats["cepr/discovery/robots"] == 1
    assert "/sitemaps/archive.xml.gz" in hits and "/feed.xml" in hits


def test_a_page_reached_under_two_urls_is_one_article(first_run):
    from httpserver import parse_stats_dump

    items, log, hits, base = first_run
    s8 = [i for i in items if i["canonical_url"] == base + "news/s8"]
    # Fetched under both URLs, exported once, with the URL it was fetched from.
    assert "/news/s8" in hits and "/news/s8?utm_source=rss" in hits
    assert len(s8) == 1 and s8[0]["url"] in (base + "news/s8", base + "news/s8?utm_source=rss")
    assert parse_stats_dump(log)["cepr/canonical/duplicates"] == 1
    assert all(i["canonical_url"] == i["url"] for i in items if i is not s8[0])


def test_since_skips_old_articles_before_they_are_fetched(tmp_path):
    out = tmp_path / "since.jsonl"
    with NewsSite() as site:
        proc = run_newsspider(site.url, out, spider_args=("since=-2d",))
        hits = list(site.hits)
    assert proc.returncode == 0, proc.stderr[-3000:]
    paths = sorted(urlparse(i["url"]).path for i in _items(out))
    assert paths == sorted(set(STATE1_ARTICLES) - {"/news/s5", "/news/s6"})
    assert "/news/s5" not in hits and "/news/s6" not in hits  # never fetched
    # The archive sitemap's own lastmod (30 days ago) is older: not even read.
    assert "/sitemaps/archive.xml.gz" not in hits
    from httpserver import parse_stats_dump

    assert parse_stats_dump(proc.stderr)["cepr/since/skipped"] == 1
