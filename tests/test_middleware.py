"""CEPRSpiderMiddleware: every item from a response gets its page (in the item or the side
channel); requests pass through; plus one real crawl with the add-on against a local
HTTP server."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import http.server
import json
import subprocess
import sys
import textwrap
import threading

import pytest
import scrapy
from pages import STORM_PAGE
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, Request, Response
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_cepr.executors import PIPE_WORKERS
from scrapy_cepr.middlewares import CEPRSpiderMiddleware, PageStore, response_encoding
from scrapy_cepr.transport import HtmlBytes

PAGE = "<html><body><h1>Hello</h1><p>One, two. Three; four.</p></body></html>"
URL = "http://news.example/hello"


def html_response(url: str = URL, body: str = PAGE) -> HtmlResponse:
    return HtmlResponse(url, body=body.encode("utf-8"), encoding="utf-8")


#: The middleware disables itself without the pipeline (issue 10 item 1).
WITH_PIPELINE = {"ITEM_PIPELINES": {"scrapy_cepr.pipelines.CEPRPipeline": 100}}


def middleware(**settings) -> CEPRSpiderMiddleware:
    mw = build_from_crawler(CEPRSpiderMiddleware, get_crawler(settings_dict={**WITH_PIPELINE, **settings}))
    mw.pages = PageStore(10)
    return mw


class LeanItem(scrapy.Item):
    url = scrapy.Field()
    title = scrapy.Field()


@dataclasses.dataclass(frozen=True)
class FrozenItem:
    url: str | None = None
    html: str | None = None


def test_dict_item_gets_html_and_url():
    mw = middleware()
    item = mw.get_processed_item({}, html_response())
    # The raw body travels (bytes, never decoded in the crawler), with its encoding.
    assert item == {"url": URL, "html": PAGE.encode("utf-8")}
    assert isinstance(item["html"], HtmlBytes) and item["html"].encoding == "utf-8"
    assert item["html"].text() == PAGE
    assert len(mw.pages) == 0


def test_existing_url_and_html_are_kept():
    mw = middleware()
    item = mw.get_processed_item({"url": "http://canonical.example/x", "html": "<p>mine</p>"}, html_response())
    assert item == {"url": "http://canonical.example/x", "html": "<p>mine</p>"}


def test_custom_fields():
    mw = middleware(CEPR_HTML_FIELD="raw", CEPR_URL_FIELD="link")
    assert mw.get_processed_item({}, html_response()) == {"link": URL, "raw": PAGE.encode("utf-8")}


@pytest.mark.parametrize("make", [lambda: LeanItem(), lambda: FrozenItem()], ids=["no-html-field", "frozen"])
def test_items_that_cannot_take_the_field_use_the_side_channel(make):
    mw = middleware()
    item = make()
    assert mw.get_processed_item(item, html_response()) is item
    ref = mw.pages.pop(item)
    assert (ref.url, ref.html, ref.html.encoding, ref.skip) == (URL, PAGE.encode("utf-8"), "utf-8", None)
    if isinstance(item, LeanItem):
        assert dict(item) == {"url": URL}  # the URL field exists, so it is filled


@pytest.mark.parametrize(("headers", "body", "expected"), [
    # The HTTP header wins over <meta> (as in Scrapy and browsers); "gbk" resolves to
    # its superset gb18030 (w3lib).
    ({"Content-Type": "text/html; charset=gbk"}, '<meta charset="utf-8"><p>新闻</p>'.encode("gbk"), "gb18030"),
    # No header charset: <meta charset> (found in the first 4 KB, without decoding).
    ({"Content-Type": "text/html"}, '<meta charset="windows-1251"><p>Новости</p>'.encode("cp1251"), "cp1251"),
    # Nothing declared: Scrapy decodes the body to infer it (ASCII fails on "é", UTF-8 works).
    ({"Content-Type": "text/html"}, "<p>Café</p>".encode(), "utf-8"),
])
def test_encoding_travels_with_the_body(headers, body, expected):
    response = HtmlResponse(URL, body=body, headers=headers)
    assert response_encoding(response) == response.encoding == expected
    item = middleware().get_processed_item({}, response)
    assert item["html"] == body and item["html"].encoding == expected
    assert item["html"].text() == response.text  # decoded later, exactly as Scrapy would


@pytest.mark.parametrize("body", [
    b"", b"<p>plain ASCII</p>", "<p>Café</p>".encode(), "<p>café ça déjà été</p>".encode("latin-1"),
    "<p>Привет мир, как дела сегодня</p>".encode("cp1251"),
    "<p>日本語のテキストです。これは長い文です。</p>".encode("shift_jis"),
    "<p>x</p>".encode("utf-16-le"), b"\xff\xfe<\x00p\x00>\x00",
    # UTF-8 checked in 64 kB pieces: a character across a piece boundary, a cut one at the end.
    b"a" * 65535 + "é".encode() + b"<p>", "é".encode() * 40_000 + b"\xc3",
])
def test_an_undeclared_encoding_is_what_scrapy_infers(body):
    """Nothing declared (no BOM but the UTF-16 one, no charset in the header, no <meta>):
    the encoding is Scrapy's own inference, found without decoding the body into text."""
    response = HtmlResponse(URL, body=body, headers={"Content-Type": "text/html"})
    assert response_encoding(response) == HtmlResponse(URL, body=body, headers={"Content-Type": "text/html"}).encoding


def test_non_html_response_gets_a_skip_marker():
    mw = middleware()
    item = mw.get_processed_item({}, Response("http://news.example/a.pdf", body=b"%PDF",
                                              headers={"Content-Type": "application/pdf"}))
    assert item == {"url": "http://news.example/a.pdf"}
    ref = mw.pages.pop(item)
    assert (ref.html, ref.skip, ref.reason) == (None, "non_html", "skipped: non-HTML response (application/pdf)")


def test_without_content_type_the_response_class_is_named():
    mw = middleware()
    item = mw.get_processed_item({}, Response("http://news.example/blob", body=b"\x00\x01"))
    assert mw.pages.pop(item).reason == "skipped: non-HTML response (no Content-Type, Response)"


def _spider_output(mw, objects):
    async def callback_output():
        for obj in objects:
            yield obj

    async def collect():
        return [o async for o in mw.process_spider_output(html_response(), callback_output())]

    return asyncio.run(collect())


def test_requests_and_non_items_pass_through():
    mw = middleware()
    request = Request("http://news.example/next")
    result = _spider_output(mw, [request, {"n": 1}, "not an item"])
    assert result == [request, {"n": 1, "url": URL, "html": PAGE.encode("utf-8")}, "not an item"]


def test_spider_output_is_an_async_generator():
    # Scrapy 2.13+ calls it with an async iterable, whether the callback is sync or async.
    import inspect

    assert inspect.isasyncgenfunction(CEPRSpiderMiddleware.process_spider_output)
    assert not hasattr(CEPRSpiderMiddleware, "process_spider_output_async")
    item, request = _spider_output(middleware(), [{"n": 1}, Request("http://news.example/next")])
    assert item == {"n": 1, "url": URL, "html": PAGE.encode("utf-8")}
    assert isinstance(request, Request)


def test_page_store_is_one_per_crawler():
    # issue 19: the side channel belongs to the crawler, not to the pipeline or the
    # middleware; both get the same store from it, and another crawler has its own.
    from scrapy_cepr.pagestore import PageStore as Store
    from scrapy_cepr.pipelines import CEPRPipeline

    crawler = get_crawler(settings_dict={**WITH_PIPELINE, "CEPR_MAX_PENDING_PAGES": 7})
    pipeline = build_from_crawler(CEPRPipeline, crawler)
    assert Store.from_crawler(crawler) is pipeline.pages and pipeline.pages.max_size == 7
    assert Store is PageStore  # still importable from scrapy_cepr.middlewares
    other = get_crawler(settings_dict=WITH_PIPELINE)
    assert Store.from_crawler(other) is not pipeline.pages


def test_missing_pipeline_instance_is_logged_once(caplog):
    mw = build_from_crawler(CEPRSpiderMiddleware, get_crawler(settings_dict=WITH_PIPELINE))  # not crawling
    a, b = LeanItem(), LeanItem()
    mw.get_processed_item(a, html_response())
    mw.get_processed_item(b, html_response())
    assert caplog.text.count("CEPRSpiderMiddleware found no scrapy_cepr.pipelines.CEPRPipeline instance") == 1


@pytest.mark.parametrize("settings", [
    {"SPIDER_MIDDLEWARES": {CEPRSpiderMiddleware: 10}},
    {"ADDONS": {"scrapy_cepr.Addon": 0}, "ITEM_PIPELINES": {"scrapy_cepr.pipelines.CEPRPipeline": None}},
    {"SPIDER_MIDDLEWARES": {CEPRSpiderMiddleware: 10}, "ITEM_PIPELINES": {"scrapy.pipelines.images.ImagesPipeline": 1}},
], ids=["none", "addon-with-pipeline-null", "other-pipeline"])
def test_middleware_disables_itself_without_the_pipeline(settings):
    # Issue 10 item 1: without the pipeline nothing would remove the HtmlBytes the
    # middleware attaches, and the JSON exporter would fail on it (the command-line
    # case, -s 'ITEM_PIPELINES={...: null}', is run in test_example_crawl.py).
    crawler = get_crawler(settings_dict=settings)
    with pytest.raises(NotConfigured, match="CEPRPipeline is not in ITEM_PIPELINES"):
        build_from_crawler(CEPRSpiderMiddleware, crawler)


def test_a_subclass_of_the_pipeline_counts():
    from scrapy_cepr.pipelines import CEPRPipeline

    class MyPipeline(CEPRPipeline):
        pass

    crawler = get_crawler(settings_dict={"ITEM_PIPELINES": {MyPipeline: 200}})
    assert build_from_crawler(CEPRSpiderMiddleware, crawler).config.enabled


@pytest.mark.parametrize(("meta", "opt_in", "attached"), [
    ({}, False, True),
    ({"cepr": False}, False, False),
    ({}, True, False),
    ({"cepr": True}, True, True),
])
def test_request_meta_opts_in_and_out(meta, opt_in, attached):
    # Issue 10 item 7: meta={"cepr": False} / CEPR_OPT_IN with meta={"cepr": True}.
    mw = middleware(CEPR_OPT_IN=opt_in)
    response = html_response()
    response = response.replace(request=Request(URL, meta=meta))
    item = mw.get_processed_item({}, response)
    assert ("html" in item) is attached
    if not attached:
        assert mw.pages.pop(item).skip == "opt_out"


# -- a real crawl ----------------------------------------------------------------------

ARTICLE = STORM_PAGE

CRAWL_SCRIPT = textwrap.dedent('''
    import json, sys
    import scrapy
    from scrapy.crawler import CrawlerProcess

    class NewsItem(scrapy.Item):  # no html field: the page goes through the side channel
        url = scrapy.Field()
        title = scrapy.Field()
        body = scrapy.Field()
        cepr_error = scrapy.Field()

    class NewsSpider(scrapy.Spider):
        name = "news"

        async def start(self):
            yield scrapy.Request(sys.argv[1] + "/story.html")

        async def parse(self, response):
            yield NewsItem(url=response.url)
            for href in response.css(".nav a::attr(href)").getall()[-1:]:
                yield response.follow(href, self.parse_other)

        def parse_other(self, response):
            yield {"url": response.url}

    GUARD
        process = CrawlerProcess({
            "ADDONS": {"scrapy_cepr.Addon": 0},
            "CEPR_EXECUTOR": "process", "CEPR_MAX_WORKERS": 1, "CEPR_POOL_AFTER_SECONDS": 0,
            "FEEDS": {sys.argv[2]: {"format": "jsonlines"}},
            "LOG_LEVEL": "WARNING", "TELNETCONSOLE_ENABLED": False,
        })
        crawler = process.create_crawler(NewsSpider)
        process.crawl(crawler)
        process.start()
        stats = {k: v for k, v in crawler.stats.get_stats().items() if k.startswith("cepr/")}
        stats["finish_reason"] = crawler.stats.get_value("finish_reason")
        print(json.dumps(stats))
''')


@pytest.fixture
def site(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "story.html").write_text(ARTICLE, encoding="utf-8")
    (root / "doc.pdf").write_bytes(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.parametrize("guard", [True, False], ids=["main-guard", "no-guard"])
def test_real_crawl_with_the_addon(site, tmp_path, guard):
    # Without `if __name__ == "__main__":` the pipe workers still work: they never import
    # the script (the fallback pool's spawn workers would re-run the crawl and fail).
    if not guard and not PIPE_WORKERS:
        pytest.skip("the fallback process pool (no pipe workers on this platform) needs the guard")
    script = tmp_path / "crawl.py"
    script.write_text(CRAWL_SCRIPT.replace("GUARD", 'if __name__ == "__main__":' if guard else "if True:  # no guard"))
    feed = tmp_path / "items.jsonl"
    done = subprocess.run([sys.executable, str(script), site, str(feed)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout.strip().splitlines()[-1])
    items = {item["url"].rsplit("/", 1)[1]: item for item in map(json.loads, feed.read_text().splitlines())}
    assert items["story.html"] == {
        "url": f"{site}/story.html",
        "title": "Storm hits coast",
        "body": "The storm, which formed on Monday, reached the coast early on Tuesday. Thousands of homes lost "
                "power; roads were closed.\nOfficials said, in a statement, that the damage was severe. Schools "
                "will stay closed until Friday, they added.\nResidents were told to stay indoors, keep away from "
                "windows, and follow the news.",
        "cepr_error": None,  # NewsItem declares no page_type: optional, not written
    }
    # Not a page to clean: not an error; every output field is there (issue 10 items 2, 7).
    assert items["doc.pdf"] == {"url": f"{site}/doc.pdf", "title": None, "body": None, "cepr_error": None,
                                "page_type": None, "cepr_confidence": None}
    assert stats["cepr/cleaned"] == 1 and stats["cepr/skipped/non_html"] == 1
    assert stats["cepr/extraction_seconds"] > 0
    assert stats["finish_reason"] == "finished"
