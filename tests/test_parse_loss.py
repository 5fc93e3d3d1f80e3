"""Parse loss (issue 17): a page whose text is only inside <noscript>, and pages that
libxml2 leaves without a <body>. Fixtures written for this project
(tests/fixtures/parse_noscript_*.html, parse_nobody_*.html)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_cepr import extract
from scrapy_cepr.core.page import Page

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_noscript_only_content_is_the_body():
    # A forum engine that renders with JavaScript and puts the whole thread in <noscript>:
    # the displayed text outside <noscript> is empty, so the <noscript> content is the page.
    page = Page.from_html(_read("parse_noscript_forum.html"))
    text = "\n".join(page.texts)
    assert "New mooring fees" in text and "public meeting about it on the fourteenth" in text
    assert "harbourmaster" in text
    body = extract(_read("parse_noscript_forum.html")).body
    assert "The extra money is meant to pay for the new pontoon" in body


def test_noscript_banner_and_pixel_stay_removed():
    # An ordinary article with a "please enable JavaScript" line and a tracking pixel in
    # <noscript>: nothing changes.
    page = Page.from_html(_read("parse_noscript_banner.html"))
    text = "\n".join(page.texts)
    assert "enable JavaScript" not in text
    assert page.root.find(".//noscript") is None and page.root.find(".//img") is None
    assert text.count("The council approved the new harbour wall") == 3


def test_noscript_text_holding_markup_is_parsed():
    # Some engines escape the fallback: the <noscript> holds markup as text.
    story = "The ferry timetable changes on Sunday, with two extra sailings on weekdays. " * 6
    html = ("<html><body><div id='root'></div><noscript>&lt;div&gt;&lt;h1&gt;Ferry times&lt;/h1&gt;"
            f"&lt;p&gt;{story}&lt;/p&gt;&lt;/div&gt;</noscript></body></html>")
    page = Page.from_html(html)
    assert page.texts[0] == "Ferry times" and page.texts[1] == story.strip()
    assert not any("<p>" in t for t in page.texts)


def test_noscript_with_little_text_on_an_empty_page_is_not_used():
    # A JavaScript app whose <noscript> only says to enable JavaScript: still empty.
    html = "<html><body><div id='app'></div><noscript>You need to enable JavaScript to run this app.</noscript></body></html>"
    assert len(Page.from_html(html)) == 0
