"""Extraction.confidence (issue 20): the predicted word F1 of the body, and what a crawl
does with a page below CEPR_MIN_CONFIDENCE (mark, drop, fallback).

The pages are written here: a clean article (one story of twelve long sentences between
a short navigation bar and a footer), and a page of navigation links only.
"""

from __future__ import annotations

import asyncio
import json
import logging

import numpy as np
import pytest
from scrapy.exceptions import DropItem
from scrapy.http import HtmlResponse
from scrapy.utils.misc import build_from_crawler
from scrapy.utils.test import get_crawler

from scrapy_cepr import extract
from scrapy_cepr.api import extract_with_page
from scrapy_cepr.core.confidence import FEATURES, confidence, features, load_model
from scrapy_cepr.middlewares import CEPRSpiderMiddleware
from scrapy_cepr.pipelines import CEPRPipeline
from scrapy_cepr.settings import CEPRConfig

SENTENCES = [
    "The river rose by two metres overnight, and the town's old stone bridge was closed before dawn.",
    "Engineers from the regional office inspected the piers at first light; they found no new cracks.",
    "Shops along the quay moved their stock upstairs, as they did in the floods of 1998 and 2007.",
    "The mayor said the bridge would reopen once the water fell below the warning mark, perhaps on Friday.",
    "Farmers upstream reported fields under water, but no livestock was lost, according to the union.",
    "A temporary footbridge, built by volunteers in a single afternoon, now links the two halves of the town.",
    "School buses take a detour of twenty kilometres, which adds almost an hour to every journey.",
    "Rainfall this autumn has been the highest since records began in 1871, the weather service said.",
    "Insurers expect claims to rise sharply, though most homes on the quay have flood barriers now.",
    "Residents praised the emergency services, who evacuated an elderly couple by boat on Tuesday night.",
    "The council will meet next week to discuss a new flood wall, first proposed more than a decade ago.",
    "For now, the town waits, watching the brown water slide past the arches of the closed bridge.",
]
ARTICLE = (
    "<html><head><title>River closes the old bridge | Valley News</title></head><body>"
    "<nav><a href='/'>Home</a> <a href='/local'>Local</a> <a href='/weather'>Weather</a></nav>"
    "<h1>River closes the old bridge</h1><article>"
    + "".join(f"<p>{s}</p>" for s in SENTENCES)
    + "</article><footer><a href='/about'>About us</a> <a href='/contact'>Contact</a></footer></body></html>"
)
SECTIONS = ["Home", "World", "Politics", "Business", "Tech", "Science", "Health", "Sports", "Arts", "Travel",
            "Opinion", "Video"]
NAVIGATION = (
    "<html><head><title>Valley News</title></head><body><header><nav><ul>"
    + "".join(f"<li><a href='/s{i}'>{w}</a></li>" for i, w in enumerate(SECTIONS))
    + "</ul></nav></header><aside><ul>"
    + "".join(f"<li><a href='/t{i}'>Topic {i}</a></li>" for i in range(10))
    + "</ul></aside><footer><a href='/a'>About</a> <a href='/c'>Contact</a> <a href='/p'>Privacy</a></footer>"
    "</body></html>"
)
URL = "http://valley.example/bridge"


def test_clean_article_has_a_high_confidence():
    for method in ("cepr-typed", "cepr-article"):
        r = extract(ARTICLE, url=URL, method=method)
        assert r.body.count("\n") == len(SENTENCES) - 1  # the story, nothing else
        assert r.confidence is not None and 0.8 <= r.confidence <= 1.0, (method, r.confidence)
        assert r.to_dict()["confidence"] == r.confidence


def test_navigation_only_page_has_a_low_or_no_confidence():
    # cepr-typed finds no main content: no body, no confidence; the methods that keep
    # the links get a low confidence.
    r = extract(NAVIGATION, url=URL, method="cepr-typed")
    assert r.body == "" and r.confidence is None
    for method in ("setpr", "nce"):
        r = extract(NAVIGATION, url=URL, method=method)
        assert r.body.startswith("Home")
        assert r.confidence is not None and r.confidence < 0.5, (method, r.confidence)


def test_confidence_is_deterministic_and_in_range():
    values = {extract(ARTICLE, url=URL, method="cepr-typed").confidence for _ in range(3)}
    assert len(values) == 1
    page, r = extract_with_page(ARTICLE, url=URL, method="cepr-typed")
    x = features(page, r.nodes, r.body, r.page_types, r.tau)
    assert x.shape == (len(FEATURES),) and np.isfinite(x).all()
    assert confidence(page, r.nodes, r.body, r.page_types, r.tau) == r.confidence
    raw = float(load_model().predict(x)[0])
    assert r.confidence == round(min(max(raw, 0.0), 1.0), 4)


def test_a_cjk_character_counts_as_a_word():
    # Chinese has no spaces between words: the body's word count (a feature of the
    # confidence) counts each CJK character, so a whole Chinese story is not "two words".
    story = "".join(f"<p>{'河水上涨两米，旧石桥在黎明前关闭。' * 3}{i}</p>" for i in range(12))
    page_html = f"<html><body><h1>河水关闭旧桥</h1><article>{story}</article></body></html>"
    page, r = extract_with_page(page_html, url=URL, method="cepr-typed")
    x = features(page, r.nodes, r.body, r.page_types, r.tau)
    han = sum("\u4e00" <= c <= "\u9fff" for c in r.body)
    assert han >= 12 * 3 * 14
    expected = r.body.count(" ") + r.body.count("\n") + 1 + han
    assert x[FEATURES.index("log_body_words")] == pytest.approx(np.log1p(expected))
    ascii_page, a = extract_with_page(ARTICLE, url=URL, method="cepr-typed")
    y = features(ascii_page, a.nodes, a.body, a.page_types, a.tau)
    assert y[FEATURES.index("log_body_words")] == pytest.approx(np.log1p(len(a.body.split())))


def test_methods_without_text_node_units_have_no_confidence():
    assert extract(ARTICLE, url=URL, method="cetr").confidence is None
    assert extract("<html><body></body></html>", method="cepr-typed").confidence is None


def test_settings_are_validated():
    c = CEPRConfig.from_settings({"CEPR_METHOD": "cepr-typed", "CEPR_MIN_CONFIDENCE": "0.6",
                                  "CEPR_LOW_CONFIDENCE": "fallback"})
    assert c.min_confidence == 0.6 and c.options.min_confidence == 0.6
    assert c.options.fallback_method == c.fallback_method
    assert CEPRConfig.from_settings({"CEPR_MIN_CONFIDENCE": "none"}).min_confidence is None
    assert CEPRConfig.from_settings({"CEPR_MIN_CONFIDENCE": 0.6}).options.fallback_method is None  # mark
    for bad, message in (({"CEPR_MIN_CONFIDENCE": 1.5}, "CEPR_MIN_CONFIDENCE must be None or a number in [0, 1]"),
                         ({"CEPR_MIN_CONFIDENCE": "high"}, "CEPR_MIN_CONFIDENCE must be a number"),
                         ({"CEPR_LOW_CONFIDENCE": "ignore"}, "CEPR_LOW_CONFIDENCE must be one of mark, drop"),
                         ({"CEPR_FALLBACK_METHOD": "cetr"}, "CEPR_FALLBACK_METHOD must be one of")):
        with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
            CEPRConfig.from_settings(bad)


class Harness:
    """A crawler's pipeline and spider middleware wired as in a crawl (inline executor)."""

    def __init__(self, **settings):
        settings.setdefault("CEPR_EXECUTOR", "inline")
        settings.setdefault("ITEM_PIPELINES", {CEPRPipeline: 100})
        self.crawler = get_crawler(settings_dict=settings)
        self.pipeline = build_from_crawler(CEPRPipeline, self.crawler)
        self.middleware = build_from_crawler(CEPRSpiderMiddleware, self.crawler)
        self.middleware.pages = self.pipeline.pages

    def run(self, *pages: str) -> list:
        async def go():
            await self.pipeline.open_spider()
            out = []
            try:
                for i, html in enumerate(pages):
                    url = f"{URL}/{i}"
                    response = HtmlResponse(url, body=html.encode(), encoding="utf-8",
                                            headers={"Content-Type": "text/html"})
                    item = self.middleware.get_processed_item({"url": url}, response)
                    try:
                        out.append(await self.pipeline.process_item(item))
                    except DropItem as exc:
                        out.append(exc)
            finally:
                await self.pipeline.close_spider()
            return out

        return asyncio.run(go())

    def stat(self, key):
        return self.crawler.stats.get_value(key)


def test_crawl_writes_the_confidence_and_its_histogram(caplog):
    h = Harness(CEPR_METHOD="cepr-typed")
    with caplog.at_level(logging.INFO, logger="scrapy_cepr.pipelines"):
        (item,) = h.run(ARTICLE)
    expected = extract(ARTICLE, url=f"{URL}/0", method="cepr-typed").confidence
    assert item["cepr_confidence"] == expected and item["cepr_error"] is None
    assert list(item)[-1] == "cepr_confidence"  # right after the page type
    assert h.stat(f"cepr/confidence/{int(expected * 10) / 10:.1f}") == 1
    assert h.stat("cepr/low_confidence") is None
    assert any(r.getMessage().startswith("CEPR confidence: 1 pages") for r in caplog.records)
    json.dumps(dict(item))  # exportable


def test_mark_sets_the_error_of_a_low_confidence_page():
    # Threshold 1.0: every page with a confidence is below it; the empty page keeps its
    # own error ("empty"), never overwritten.
    h = Harness(CEPR_METHOD="cepr-typed", CEPR_MIN_CONFIDENCE=1.0)
    article, empty = h.run(ARTICLE, NAVIGATION)
    assert article["cepr_error"] == f"low-confidence: {article['cepr_confidence']:.2f}"
    assert article["body"]  # marked, not emptied
    assert empty["cepr_error"] == "empty: no main content found" and empty["cepr_confidence"] is None
    assert h.stat("cepr/low_confidence") == 1
    # Threshold 0.0: nothing is below it.
    h = Harness(CEPR_METHOD="cepr-typed", CEPR_MIN_CONFIDENCE=0.0)
    (article,) = h.run(ARTICLE)
    assert article["cepr_error"] is None and h.stat("cepr/low_confidence") is None


def test_drop_drops_a_low_confidence_page():
    conf = extract(NAVIGATION, url=f"{URL}/0", method="setpr").confidence
    h = Harness(CEPR_METHOD="setpr", CEPR_MIN_CONFIDENCE=0.6, CEPR_LOW_CONFIDENCE="drop")
    article, navigation = h.run(ARTICLE, NAVIGATION)
    assert conf < 0.6 and isinstance(navigation, DropItem) and "low confidence" in str(navigation)
    assert article["body"] and article["cepr_error"] is None
    assert h.stat("cepr/dropped/low_confidence") == 1 and h.stat("cepr/low_confidence") == 1


def test_fallback_keeps_the_result_with_the_higher_confidence():
    # The navigation page: SETPR keeps its links (a low confidence), CEPR-Article finds
    # no main content (no confidence): the primary result is kept.
    low = extract(NAVIGATION, url=f"{URL}/0", method="setpr")
    assert low.confidence < 0.6 and extract(NAVIGATION, method="cepr-article").confidence is None
    h = Harness(CEPR_METHOD="setpr", CEPR_MIN_CONFIDENCE=0.6, CEPR_LOW_CONFIDENCE="fallback",
                CEPR_FALLBACK_METHOD="cepr-article")
    (item,) = h.run(NAVIGATION)
    assert item["body"] == low.body and item["cepr_confidence"] == low.confidence
    assert h.stat("cepr/fallback/kept_primary") == 1 and h.stat("cepr/low_confidence") == 1
    assert h.stat("cepr/fallback/kept_fallback") is None
    # The article page with threshold 1.0 (every page is below it): the method with the
    # higher confidence wins, whichever is the primary.
    nce = extract(ARTICLE, url=f"{URL}/0", method="nce")
    art = extract(ARTICLE, url=f"{URL}/0", method="cepr-article")
    assert nce.confidence != art.confidence and nce.body != art.body
    best = max((nce, art), key=lambda r: r.confidence)
    for primary, fallback in (("nce", "cepr-article"), ("cepr-article", "nce")):
        h = Harness(CEPR_METHOD=primary, CEPR_MIN_CONFIDENCE=1.0, CEPR_LOW_CONFIDENCE="fallback",
                    CEPR_FALLBACK_METHOD=fallback)
        (item,) = h.run(ARTICLE)
        assert item["body"] == best.body and item["cepr_confidence"] == best.confidence, primary
        assert item["cepr_error"] is None  # not marked in fallback mode
        kept = "kept_primary" if best.method == primary else "kept_fallback"
        assert h.stat(f"cepr/fallback/{kept}") == 1 and h.stat("cepr/low_confidence") == 1, primary
