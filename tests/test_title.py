"""Title search (scrapy_cepr.core.title): the displayed headline, not the raw <title>."""

from __future__ import annotations

from scrapy_cepr import extract

BODY = "<div><p>One sentence, with commas. And another one.</p><p>More text; more words.</p></div>"


def test_h1_matching_title_beats_site_logo_h1():
    html = (
        "<html><head><title>Bridge reopens after repairs | The Daily Planet</title></head><body>"
        "<h1>The Daily Planet</h1><h1>Bridge reopens after repairs</h1>" + BODY + "</body></html>"
    )
    assert extract(html).title == "Bridge reopens after repairs"


def test_og_title_is_the_reference():
    html = (
        '<html><head><title>Site</title><meta property="og:title" content="Storm hits the coast"></head>'
        "<body><h2>Storm hits the coast</h2><h2>Most read</h2>" + BODY + "</body></html>"
    )
    assert extract(html).title == "Storm hits the coast"


def test_single_h1_used_when_title_differs():
    html = "<html><head><title>Home</title></head><body><h1>Mayor resigns</h1>" + BODY + "</body></html>"
    assert extract(html).title == "Mayor resigns"


def test_title_tag_without_site_name_as_fallback():
    html = "<html><head><title>Local team wins the cup - Sports Weekly</title></head><body>" + BODY + "</body></html>"
    assert extract(html).title == "Local team wins the cup"


def test_no_title_at_all_is_none():
    assert extract("<html><body>" + BODY + "</body></html>").title is None


def test_heading_with_inline_markup_is_joined():
    html = "<html><head><title>A big day</title></head><body><h1>A <em>big</em> day</h1>" + BODY + "</body></html>"
    result = extract(html)
    assert result.title == "A big day"
    assert result.nodes.title_index == 0
