"""Parse loss (issue 17): a page whose text is only inside <noscript>, and pages that
libxml2 leaves without a <body>. Fixtures written for this project
(tests/fixtures/parse_noscript_*.html, parse_nobody_*.html)."""

from __future__ import annotations

from pathlib import Path

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


def test_unclosed_title_does_not_swallow_the_page():
    # A <title> without its end tag: libxml2 (like the HTML tokenizer's RCDATA state)
    # reads the rest of the page as the title's text, so the title is raw markup and the
    # body is empty. The title ends at the first tag inside it.
    html = _read("parse_nobody_unclosed_title.html")
    page = Page.from_html(html)
    assert page.html_title == "Second storm keeps fleet in port | Saltby Courier"
    assert "Fishing boats stayed in port on Thursday" in "\n".join(page.texts)
    result = extract(html)
    assert result.title == "Second storm keeps fleet in port"
    assert "Forecasters expect the wind to drop on Saturday." in result.body


def test_title_with_a_literal_angle_bracket_is_kept():
    html = ("<html><head><title>Why a <b> tag is not bold here</title></head><body><p>"
            + "Ordinary text of the page, long enough to count. " * 5 + "</p></body></html>")
    page = Page.from_html(html)
    assert page.html_title == "Why a <b> tag is not bold here" and len(page.texts) == 1


def test_double_bom_keeps_the_head():
    # A page saved twice with a BOM: the second U+FEFF is text before <html>, which makes
    # libxml2 open the body at once and put the head's <title> in it.
    page = Page.from_html((FIXTURES / "parse_nobody_double_bom.html").read_bytes())
    assert page.html_title == "Second storm keeps fleet in port"
    assert page.texts[0] == "Second storm keeps fleet in port" and len(page.texts) == 2
