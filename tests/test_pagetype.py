"""Page type (issue 10 item 9): article pages against list, index and section pages.

The list pages are ``tests/fixtures/index_*.html`` (written for this project, varied: a
home page, section pages with short and long teasers, a WordPress archive, a 1990s
table layout, a Chinese list, a French card grid, search results, a JSON-LD tag page)
and the demo site's index page; the articles are the demo site's 11 pages and, with the
corpus, the 181 real article pages.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from scrapy_cepr.core.page import Page
from scrapy_cepr.core.pagetype import (
    ARTICLE,
    LIST,
    PageFeatures,
    classify_features,
    page_features,
    page_type,
    text_units,
)

ROOT = Path(__file__).resolve().parents[1]
LIST_PAGES = sorted((ROOT / "tests" / "fixtures").glob("index_*.html")) + [ROOT / "example_project" / "site" / "index.html"]
ARTICLE_PAGES = sorted((ROOT / "example_project" / "site" / "articles").glob("*.html"))


def test_there_are_enough_varied_list_fixtures():
    assert len(LIST_PAGES) >= 9


@pytest.mark.parametrize("path", LIST_PAGES, ids=lambda p: p.name)
def test_list_pages_are_lists_even_without_metadata(path):
    features = page_features(Page.from_html(path.read_bytes()))
    assert classify_features(dataclasses.replace(features, metadata=None)) == LIST


@pytest.mark.parametrize("path", ARTICLE_PAGES, ids=lambda p: p.name)
def test_demo_articles_are_articles(path):
    assert page_type(Page.from_html(path.read_bytes())) == ARTICLE


def test_corpus_articles_are_articles(corpus):
    wrong = [s.id for s in corpus if page_type(Page.from_html(s.html)) != ARTICLE]
    assert wrong == []


def test_features_by_hand():
    # Two headline links of 5 words, a short non-link line, then paragraphs of 20 and
    # 24 words with no headline between them: one run of 3 + 20 + 24 units.
    para = " ".join(["word"] * 20)
    html = (f"<html><body><p><a href='/a'>one two three four five</a></p><p><a href='/b'>six seven eight nine ten</a></p>"
            f"<p>three short words</p><p>{para}</p><p>{para} and five more words</p></body></html>")
    f = page_features(Page.from_html(html))
    assert (f.headline_links, f.headline_link_units, f.longest_prose_run) == (2, 10.0, 3 + 20 + 24)
    assert f.units == 10 + 3 + 44


def test_cjk_text_units():
    assert text_units("地铁五号线") == 2.5  # 5 CJK characters / 2
    assert text_units("Line 5 地铁") == 3.0  # 2 words + 2/2


def test_metadata_wins_over_text():
    links = "".join(f"<li><a href='/{i}'>A headline of six words here {i}</a></li>" for i in range(8))
    plain = f"<html><head></head><body><ul>{links}</ul></body></html>"
    assert page_type(Page.from_html(plain)) == LIST
    og = plain.replace("<head></head>", '<head><meta property="og:type" content="article"></head>')
    assert page_type(Page.from_html(og)) == ARTICLE
    ld = plain.replace("<head></head>", '<head><script type="application/ld+json">{"@type": "NewsArticle"}</script></head>')
    assert page_type(Page.from_html(ld)) == ARTICLE
    broken = plain.replace("<head></head>", '<head><script type="application/ld+json">{not json</script></head>')
    assert page_type(Page.from_html(broken)) == LIST


def test_rule_thresholds():
    assert classify_features(PageFeatures(None, 500, 5, 50, 10)) == ARTICLE  # too few headlines
    assert classify_features(PageFeatures(None, 500, 6, 50, 79)) == LIST
    assert classify_features(PageFeatures(None, 500, 6, 50, 80)) == ARTICLE  # one story-length run


def test_empty_page_has_no_type():
    assert page_type(Page.from_html("<html><body></body></html>")) is None
