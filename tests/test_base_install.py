"""Every ``CEPR_*`` setting works on ``pip install scrapy-cepr`` alone, or stops the crawl
at start with an error naming the extra (issue 18, item 6): never a failed page.

``.ci/run`` runs this file in a fresh virtualenv with the package and pytest only (no
``--system-site-packages``, no extras); in the full environment it runs too, where every
optional package is present. It needs nothing but Scrapy and the package's own
requirements: the pages are written here, the crawl goes through the real spider
middleware and pipeline (as ``tests/test_pipeline.py`` drives them), and each setting
value is tried in turn.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os

import pytest
import scrapy
from scrapy.exceptions import DropItem
from scrapy.http import HtmlResponse
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_cepr import METHOD_NAMES, extract
from scrapy_cepr.middlewares import CEPRSpiderMiddleware
from scrapy_cepr.pipelines import CEPRPipeline
from scrapy_cepr.settings import SETTINGS_DOC

# Pages written for this test. The English story declares no language (so CEPR_METADATA
# guesses it from the text: the guess that failed on the base install), names its author
# in a byline (CEPR_BYLINE="move") and has a headline list around it.
STORY = """<html><head><title>Harbour wall falls | Coast Courier</title>
<meta name="author" content="Ann Lee"><meta name="description" content="The old harbour wall fell.">
</head><body>
<div class="nav"><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></div>
<h1>Harbour wall falls into the sea</h1>
<div class="story">
<p>By Ann Lee</p>
<p>The harbour wall, which was built in 1820, fell into the sea on Sunday night. Nobody was hurt, the council said.</p>
<p>It was one of the oldest walls in the town, and the council had said that it would be repaired this year.</p>
<p>Residents were told to keep away from the harbour, and the road along the sea front was closed until further notice.</p>
</div>
<div class="footer"><a href="/about">About us</a> <a href="/contact">Contact</a></div>
</body></html>"""

CHINESE = """<html><head><meta charset="utf-8"><title>湿地公园鸟类增加</title></head><body>
<h1>湿地公园的鸟类数量今年增加了三成</h1>
<div><p>管理处说，新的保护措施起了作用，越冬的候鸟比去年多了很多。</p>
<p>专家表示，湿地的水质在过去两年里明显改善，鱼类和水草也随之增加。</p></div>
</body></html>"""

LISTING = "<html><body><h1>News</h1><ul>" + "".join(
    f'<li><a href="/story/{i}">Headline number {i} about the town council and its plans</a></li>' for i in range(12)
) + "</ul></body></html>"

PAGES = (("http://courier.example/wall", STORY), ("http://courier.example/zh", CHINESE),
         ("http://courier.example/", LISTING))

#: Optional packages per method (import name, pip extra); the crawl must refuse to start
#: without them.
EXTRAS = {"cedst": ("jieba", "cedst"), "wang2009": ("playwright", "render")}

#: Every value of every general setting that changes what runs (method parameters: one
#: non-default value each). The settings whose values are only numbers, limits or
#: field names are run with a non-default value too.
VALUES: dict[str, list] = {
    "CEPR_ENABLED": [True],
    "CEPR_METHOD": list(METHOD_NAMES),
    "CEPR_ALPHA": [0.9],
    "CEPR_LAMBDA": [0.0],
    "CEPR_RADIUS": [2],
    "CEPR_EDGES": ["pad"],
    "CEPR_HTML_FIELD": ["page_html"],
    "CEPR_URL_FIELD": ["link"],
    "CEPR_TITLE_FIELD": ["headline"],
    "CEPR_BODY_FIELD": ["text"],
    "CEPR_ERROR_FIELD": ["problem"],
    "CEPR_KEEP_HTML": [True, False],
    "CEPR_EXECUTOR": ["inline", "thread", "process"],
    "CEPR_MAX_WORKERS": [1],
    "CEPR_START_METHOD": ["spawn"],
    "CEPR_TIMEOUT": [60.0],
    "CEPR_MIN_CONFIDENCE": [None, 0.0],
    "CEPR_LOW_CONFIDENCE": ["mark", "drop", "fallback"],
    "CEPR_FALLBACK_METHOD": ["setpr"],
    "CEPR_MAX_HTML_BYTES": [0],
    "CEPR_MAX_PENDING_PAGES": [10],
    "CEPR_OVERWRITE": ["keep", "fill", "overwrite"],
    "CEPR_NON_ARTICLE": ["keep", "mark", "drop"],
    "CEPR_PAGE_TYPE_FIELD": ["kind"],
    "CEPR_DEDUP": ["off", "mark", "drop"],
    "CEPR_DEDUP_THRESHOLD": [0.8],
    "CEPR_OPT_IN": [False, True],
    "CEPR_WARN_LIMIT": [0],
    "CEPR_STATE_DIR": ["cepr-state"],  # read by the incremental components, not by the pipeline
    "CEPR_SINCE": ["-2d"],  # read by the discovery spiders, not by the pipeline
    "CEPR_POOL_AFTER_SECONDS": [0.0],
    "CEPR_BODY_FORMATS": [["text"], ["text", "html"], ["text", "markdown"], ["text", "html", "markdown"]],
    "CEPR_METADATA": [True, False],
    "CEPR_BYLINE": ["keep", "move"],
    "CEPR_ITEM_SCHEMA": ["cepr", "zyte"],
}

CASES = [(name, value) for name, values in VALUES.items() for value in values]


def _missing(module: str) -> bool:
    return importlib.util.find_spec(module) is None


def test_every_general_setting_is_exercised():
    # A new setting must be added to VALUES (and so run on the base install in CI).
    assert sorted(name for name, _, _ in SETTINGS_DOC) == sorted(VALUES)


def _crawl(settings: dict) -> tuple[list, object]:
    """The three pages through the spider middleware and the pipeline, as in a crawl;
    the exported items (a DropItem for a dropped one) and the stats."""
    crawler = get_crawler(settings_dict={"CEPR_EXECUTOR": "inline", "ITEM_PIPELINES": {CEPRPipeline: 100}, **settings})
    pipeline = build_from_crawler(CEPRPipeline, crawler)
    middleware = build_from_crawler(CEPRSpiderMiddleware, crawler)
    middleware.pages = pipeline.pages
    url_field = settings.get("CEPR_URL_FIELD", "url")

    async def go():
        await pipeline.open_spider()
        out = []
        try:
            for url, html in PAGES:
                request = scrapy.Request(url, meta={"cepr": True} if settings.get("CEPR_OPT_IN") else {})
                response = HtmlResponse(url, body=html.encode("utf-8"), encoding="utf-8", request=request,
                                        headers={"Content-Type": "text/html; charset=utf-8"})
                item = middleware.get_processed_item({url_field: url}, response)
                try:
                    out.append(await pipeline.process_item(item))
                except DropItem as exc:
                    out.append(exc)
        finally:
            await pipeline.close_spider()
        return out

    return asyncio.run(go()), crawler.stats


@pytest.mark.parametrize(("setting", "value"), CASES, ids=[f"{n}={v}" for n, v in CASES])
def test_every_setting_value_cleans_every_page(setting, value):
    settings = {setting: value}
    if setting == "CEPR_BYLINE":
        settings["CEPR_METADATA"] = True  # the byline is found through the metadata's authors
    if setting == "CEPR_EXECUTOR" and value != "inline":
        settings["CEPR_POOL_AFTER_SECONDS"] = 0.0  # the pool takes every page
    if setting == "CEPR_POOL_AFTER_SECONDS":
        settings["CEPR_EXECUTOR"] = "thread"
    if setting in ("CEPR_LOW_CONFIDENCE", "CEPR_FALLBACK_METHOD"):
        settings["CEPR_MIN_CONFIDENCE"] = 1.0  # every page with a confidence is below it
        settings.setdefault("CEPR_LOW_CONFIDENCE", "fallback")
    low = settings.get("CEPR_LOW_CONFIDENCE", "mark") if settings.get("CEPR_MIN_CONFIDENCE") == 1.0 else None
    method = value if setting == "CEPR_METHOD" else "cepr-article"
    if method in EXTRAS and _missing(EXTRAS[method][0]):
        module, extra = EXTRAS[method]
        # Not installed: the crawl stops at start, naming the extra (never a failed page).
        with pytest.raises(ImportError, match=rf'pip install "scrapy-cepr\[{extra}\]"'):
            _crawl(settings)
        return
    if setting == "CEPR_ITEM_SCHEMA" and value == "zyte" and _missing("zyte_common_items"):
        with pytest.raises(ImportError, match=r'pip install "scrapy-cepr\[zyte\]"'):
            _crawl(settings)
        return
    if method == "wang2009":
        from browser import require_browser

        require_browser()  # playwright without a browser: skip, or fail in CI
    items, stats = _crawl(settings)
    error_field = settings.get("CEPR_ERROR_FIELD", "cepr_error")
    body_field = "articleBody" if value == "zyte" else settings.get("CEPR_BODY_FIELD", "body")
    assert stats.get_value("cepr/failed") is None and stats.get_value("cepr/timeout") is None, stats.get_stats()
    for item in items:
        if isinstance(item, DropItem):
            assert (setting == "CEPR_NON_ARTICLE" and value == "drop" and "not an article" in str(item)) or \
                (low == "drop" and "low confidence" in str(item))
            continue
        if low == "mark" and item.get("cepr_confidence") is not None:
            assert item.get(error_field) == f"low-confidence: {item['cepr_confidence']:.2f}", item
            continue
        assert item.get(error_field) in (None, "empty: no main content found"), item
    if low == "drop":
        return
    story = items[0]
    assert "harbour wall" in story[body_field].lower()
    if settings.get("CEPR_METADATA"):
        assert story["metadata"]["language"] == "en" and story["metadata"]["sources"]["language"] == "page text"
        assert items[1]["metadata"]["language"] == "zh"
    for fmt in ("html", "markdown"):
        if fmt in settings.get("CEPR_BODY_FORMATS", ()):
            assert "harbour wall" in story[f"body_{fmt}"].lower()


@pytest.mark.parametrize("method", [m for m in METHOD_NAMES if m not in EXTRAS or not _missing(EXTRAS[m][0])])
def test_api_with_every_format_and_the_metadata(method):
    # Through the API the base install failed 23 of 181 AEB pages with CEPR_METADATA.
    if method == "wang2009":
        from browser import require_browser

        require_browser()
    for (url, html), language in zip(PAGES[:2], ("en", "zh")):
        out = extract(html, url=url, method=method).to_dict(formats=("html", "markdown"), metadata=True)
        assert all(isinstance(out[k], str) for k in ("body", "body_html", "body_markdown")), (method, url)
        assert out["metadata"]["language"] == language
    assert "harbour wall" in extract(STORY, method=method).body.lower()


def test_the_base_install_has_no_extra():
    # In the base-install job of .ci/run (CEPR_BASE_INSTALL=1) the extras must really be
    # absent, else the job proves nothing; elsewhere there is nothing to check.
    if os.environ.get("CEPR_BASE_INSTALL") == "1":
        for module in ("jieba", "playwright", "scrapy_redis", "matplotlib", "sklearn", "hypothesis"):
            assert _missing(module), f"{module} is installed in the base-install venv"


def test_distributed_without_scrapy_redis_names_the_extra(monkeypatch):
    # SCHEDULER = "scrapy_cepr.distributed.RecoveringScheduler" without scrapy-redis: the
    # crawl stops at start (Scrapy loads the scheduler) with the install command.
    import sys

    for name in [m for m in sys.modules if m == "scrapy_cepr.distributed" or m.startswith("scrapy_redis")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "scrapy_redis", None)
    with pytest.raises(ImportError, match=r'pip install "scrapy-cepr\[redis\]"'):
        importlib.import_module("scrapy_cepr.distributed")
