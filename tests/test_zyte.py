"""CEPR_ITEM_SCHEMA="zyte": items in zyte-common-items' ``Article`` shape (issue 20).

The demo site is crawled as a user would (``scrapy crawl newsspider -O out.jsonl -s
CEPR_ITEM_SCHEMA=zyte``) and every exported line is read back with
``zyte_common_items.Article.from_dict``; the pipeline's own cases (a failed page, a
non-article page, a spider's own fields, the confidence) run through the test harness
of ``test_pipeline``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

zyte_common_items = pytest.importorskip(
    "zyte_common_items", reason='zyte-common-items is not installed: pip install -e ".[zyte]"')

from test_example_crawl import EXPECTED, PROJECT  # noqa: E402
from test_pipeline import URL, Harness, html_response  # noqa: E402

from scrapy_cepr.schema import zyte_article, zyte_date  # noqa: E402
from scrapy_cepr.settings import CEPRConfig  # noqa: E402

Article = zyte_common_items.Article

#: A news page with JSON-LD: two authors, dates with a time zone, a breadcrumb trail.
LD_PAGE = """<html lang="en-GB"><head><title>Harbour wall repaired | Coast Courier</title>
<meta property="og:site_name" content="Coast Courier">
<meta name="description" content="The wall is open again.">
<link rel="canonical" href="/news/wall">
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle",
 "headline": "Harbour wall repaired", "author": [{"@type": "Person", "name": "Ann Lee"}, {"@type": "Person", "name": "Bo Chen"}],
 "datePublished": "2024-03-05T10:00:00+01:00", "dateModified": "2024-03-06T08:30:00Z",
 "image": "/img/wall.jpg"}</script>
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "BreadcrumbList", "itemListElement": [
 {"@type": "ListItem", "position": 2, "name": "Local", "item": "https://courier.example/local"},
 {"@type": "ListItem", "position": 1, "name": "News", "item": "https://courier.example/news"}]}</script>
</head><body>
<div class="nav"><a href="/">Home</a> <a href="/local">Local</a></div>
<h1>Harbour wall repaired</h1>
<div class="story">
<p>The harbour wall, which collapsed in the autumn storms, has been rebuilt. Boats can moor on its inner side again.</p>
<p>Engineers said, after a final inspection, that the new wall is a metre higher. It cost the town two million pounds.</p>
<p>The harbour master thanked residents for their patience, and for keeping away from the works.</p>
</div>
<div class="footer"><a href="/about">About us</a></div>
</body></html>"""


def test_demo_site_crawl_exports_11_articles(tmp_path: Path) -> None:
    # Issue 20, must show: a crawl of the demo site with CEPR_ITEM_SCHEMA=zyte, 11 items
    # that load as zyte_common_items.Article.
    out = tmp_path / "zyte.jsonl"
    done = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "newsspider", "-O", str(out),
                           "-s", "CEPR_ITEM_SCHEMA=zyte", "-s", "CEPR_EXECUTOR=inline"],
                          check=False, cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = out.read_text(encoding="utf-8").splitlines()
    items = [Article.from_dict(json.loads(line)) for line in lines]
    assert len(items) == len(EXPECTED) == 11
    by_name = {Path(a.url).name: a for a in items}
    assert sorted(by_name) == sorted(EXPECTED)
    for name, (title, inside, outside) in EXPECTED.items():
        article = by_name[name]
        assert article.headline == title
        assert all(text in article.articleBody for text in inside)
        assert not any(text in article.articleBody for text in outside)
        assert article.articleBodyHtml.startswith("<") and inside[0][:30] in article.articleBodyHtml
        assert article.metadata.dateDownloaded.endswith("Z")
        assert article._unknown_fields_dict == {"cepr_error": None, "page_type": "article"}
        assert article.inLanguage in ("en", "zh")
    # Values the demo pages declare (read off example_project/site/articles).
    council = by_name["council-budget.html"]
    assert [a.name for a in council.authors] == ["Margaret Okafor"]
    assert council.datePublished.startswith("2024-03-14")
    assert "Traceback" not in done.stderr


def test_article_fields_from_the_page_declarations() -> None:
    h = Harness(CEPR_ITEM_SCHEMA="zyte")
    [item] = h.run(({"url": "https://courier.example/news/wall?utm=x", "section": "local"},
                    html_response("https://courier.example/news/wall?utm=x", LD_PAGE)))
    assert isinstance(item, dict)
    article = Article.from_dict(item)
    assert article.url == "https://courier.example/news/wall?utm=x"
    assert article.canonicalUrl == "https://courier.example/news/wall"
    assert article.headline == "Harbour wall repaired"
    assert article.articleBody.startswith("The harbour wall, which collapsed")
    assert article.articleBodyHtml.startswith("<p>The harbour wall")
    assert [a.name for a in article.authors] == ["Ann Lee", "Bo Chen"]
    assert (article.datePublished, article.datePublishedRaw) == ("2024-03-05T10:00:00+01:00", "2024-03-05T10:00:00+01:00")
    assert article.dateModified == "2024-03-06T08:30:00Z"
    assert article.inLanguage == "en"
    assert article.description == "The wall is open again."
    assert article.mainImage.url == "https://courier.example/img/wall.jpg"
    assert [(b.name, b.url) for b in article.breadcrumbs] == [("News", "https://courier.example/news"),
                                                              ("Local", "https://courier.example/local")]
    # The metadata is read although CEPR_METADATA is off, and not exported twice.
    assert "cepr_metadata" not in item and "metadata" in item
    # metadata.probability is the page's confidence (cepr_confidence in the cepr schema).
    assert "cepr_confidence" not in item and 0.0 <= item["metadata"]["probability"] <= 1.0
    # Beside the Article: the error, the page type, the spider's own field.
    assert article._unknown_fields_dict == {"cepr_error": None, "page_type": "article", "section": "local"}
    assert "html" not in item and "title" not in item and "body" not in item


def test_failed_page_is_exported_with_its_error() -> None:
    pdf = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n"
    h = Harness(CEPR_ITEM_SCHEMA="zyte")
    [item] = h.run(({"url": "http://news.example/fake.pdf"}, html_response("http://news.example/fake.pdf", pdf)))
    article = Article.from_dict(json.loads(json.dumps(item)))
    assert article.url == "http://news.example/fake.pdf" and article.headline is None and article.articleBody is None
    assert item["cepr_error"].startswith("failed: NotHTMLError")
    assert h.stat("cepr/failed") == 1


def test_non_article_page_keeps_its_type_beside() -> None:
    listing = "<html><head><title>Local news</title></head><body><h1>Local news</h1><ul>" + "".join(
        f'<li><a href="/a{i}">Headline number {i} of the local news today</a> <span>2 May</span></li>'
        for i in range(40)) + "</ul></body></html>"
    h = Harness(CEPR_ITEM_SCHEMA="zyte")
    [item] = h.run(({"url": URL}, html_response(URL, listing)))
    assert item["page_type"] not in (None, "article")
    assert Article.from_dict(item).articleBody


def test_non_article_drop_still_drops() -> None:
    from scrapy.exceptions import DropItem

    listing = "<html><head><title>Local news</title></head><body><h1>Local news</h1><ul>" + "".join(
        f'<li><a href="/a{i}">Headline number {i} of the local news today</a> <span>2 May</span></li>'
        for i in range(40)) + "</ul></body></html>"
    h = Harness(CEPR_ITEM_SCHEMA="zyte", CEPR_NON_ARTICLE="drop")
    with pytest.raises(DropItem):
        h.run(({"url": URL}, html_response(URL, listing)))
    assert h.stat("cepr/dropped/non_article") == 1


def test_confidence_becomes_metadata_probability() -> None:
    h = Harness(CEPR_ITEM_SCHEMA="zyte")
    [item] = h.run(({"url": URL, "cepr_confidence": 0.42}, html_response()))
    assert item["metadata"]["probability"] == 0.42 and "cepr_confidence" not in item
    assert Article.from_dict(item).get_probability() == 0.42


def test_cepr_metadata_kept_beside_when_asked_for() -> None:
    h = Harness(CEPR_ITEM_SCHEMA="zyte", CEPR_METADATA=True, CEPR_BODY_FORMATS=["text", "markdown"])
    [item] = h.run(({"url": "https://courier.example/news/wall"},
                    html_response("https://courier.example/news/wall", LD_PAGE)))
    assert item["cepr_metadata"]["sources"]["authors"] == "json-ld"
    assert item["body_markdown"].startswith("The harbour wall")
    Article.from_dict(item)


def test_spider_field_named_like_an_article_field_is_dropped_with_a_warning(caplog) -> None:
    h = Harness(CEPR_ITEM_SCHEMA="zyte")
    [item] = h.run(({"url": URL, "headline": "the spider's", "description": 3}, html_response()))
    assert item["headline"] == "Storm hits coast" and "description" not in item
    assert "'description'" in caplog.text and "'headline'" in caplog.text
    Article.from_dict(item)


def test_items_without_a_page_keep_the_cepr_shape() -> None:
    h = Harness(CEPR_ITEM_SCHEMA="zyte")

    async def go():
        await h.pipeline.open_spider()
        try:
            return await h.pipeline.process_item({"url": URL})
        finally:
            await h.pipeline.close_spider()

    import asyncio

    item = asyncio.run(go())
    assert item == {"url": URL, "title": None, "body": None, "cepr_error": None, "page_type": None,
                    "cepr_confidence": None}


def test_setting_validation_and_worker_options() -> None:
    config = CEPRConfig.from_settings({"CEPR_ITEM_SCHEMA": "zyte"})
    assert config.options.metadata and "html" in config.options.formats
    assert [f for _, f in config.outputs()] == ["title", "body", "cepr_error", "page_type", "cepr_confidence"]
    assert not CEPRConfig.from_settings({}).options.metadata
    with pytest.raises(ValueError, match="CEPR_ITEM_SCHEMA"):
        CEPRConfig.from_settings({"CEPR_ITEM_SCHEMA": "schema.org"})


def test_missing_package_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "zyte_common_items", None)
    with pytest.raises(ImportError, match=r'pip install "scrapy-cepr\[zyte\]"'):
        CEPRConfig.from_settings({"CEPR_ITEM_SCHEMA": "zyte"})
    CEPRConfig.from_settings({})  # the default schema needs nothing


def test_zyte_date_and_article_builder() -> None:
    assert zyte_date("2024-03-05") == "2024-03-05T00:00:00"
    assert zyte_date("2024-03-05T10:00:00-05:00") == "2024-03-05T10:00:00-05:00"
    assert zyte_date("2024-03-05T10:00:00") == "2024-03-05T10:00:00"
    assert zyte_date("yesterday") is None and zyte_date(None) is None
    item = zyte_article("https://a.example/x", metadata={"date_published": "not a date", "language": "zh-Hans-CN"},
                        downloaded=datetime(2024, 1, 2, 3, 4, 5, 600, tzinfo=UTC))
    assert item == {"inLanguage": "zh", "url": "https://a.example/x", "metadata": {"dateDownloaded": "2024-01-02T03:04:05Z"}}
    with pytest.raises(ValueError, match="headline"):
        zyte_article("https://a.example/x", beside={"headline": "x"})
