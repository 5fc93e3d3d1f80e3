"""Parse as a browser would (issue 9): no page loses its body to a libxml2 quirk, with
every method. Each fixture is a page written for the case; the story sentences must come
out in the body of every method of :data:`scrapy_cepr.METHOD_NAMES` that reads our page
model. ``wang2009`` is not among them: it renders the page in Chromium, whose HTML5
parser is the browser's own (its single body subtree is tested in test_wang2009)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from scrapy_cepr import METHOD_NAMES, ExtractionError, extract
from scrapy_cepr.core.page import Page
from scrapy_cepr.core.parse import (
    MAX_DEPTH,
    encode_source,
    flatten_source,
    parse_html,
    repair_layout,
    restore_head,
)

FIXTURES = Path(__file__).parent / "fixtures"
#: The methods that parse with our page model (core/parse.py).
PAGE_MODEL_METHODS = tuple(m for m in METHOD_NAMES if m != "wang2009")
FERRY = ["sailed again on Monday morning", "corrosion in the hull", "only guest house"]
LIBRARY = ["giving students a quiet place", "Friends of the Library", "longer opening hours"]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def assert_story(html: str | bytes, needles: list[str], methods=PAGE_MODEL_METHODS) -> None:
    for method in methods:
        body = extract(html, method=method).body
        missing = [n for n in needles if n not in body]
        assert not missing, f"{method} lost {missing}: {body[:300]!r}"


def depth(root: etree._Element) -> int:
    deepest = 0
    stack = [(root, 1)]
    while stack:
        el, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((c, d + 1) for c in el)
    return deepest


# 1. A <head> that swallowed the body ----------------------------------------------


def test_libxml2_nests_the_body_inside_the_head_of_this_fixture():
    # The quirk itself, so that the test below tests something: unknown element and an
    # open <td> in a head without </head> put <body> inside <head>.
    root = etree.fromstring(fixture("parse_head_swallow.html").encode(), etree.HTMLParser())
    assert root.find("body") is None
    assert root.find("head//body") is not None


def test_head_that_swallowed_the_body_is_repaired_for_every_method():
    html = fixture("parse_head_swallow.html")
    assert_story(html, FERRY)
    page = Page.from_html(html)
    assert page.root.find("head//p") is None  # the displayed content left the head
    assert page.html_title.startswith("Ferry service")  # metadata stayed in the head
    assert page.meta_title == "Ferry service to Holm Island resumes after winter repairs"
    assert extract(html, method="setpr").title == "Ferry service to Holm Island resumes after winter repairs"


def test_unknown_element_in_head_with_text_is_displayed_first():
    html = "<html><head><title>T</title><x-banner>Breaking: roads closed</x-banner></head><body><p>Story.</p></body></html>"
    page = Page.from_html(html)
    assert page.texts == ["Breaking: roads closed", "Story."]
    assert page.html_title == "T"


def test_ordinary_page_is_not_rearranged():
    root = parse_html(encode_source(fixture("article_basic.html")))
    before = etree.tostring(root)
    assert repair_layout(root) is False
    assert etree.tostring(root) == before


# 6. Text before the head ----------------------------------------------------------

HTTP_HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n"


def test_libxml2_puts_the_head_in_the_body_after_text_before_it():
    # The quirk itself: text before <html> starts the body, and the title follows it.
    data = (HTTP_HEAD + fixture("article_basic.html")).encode()
    root = etree.fromstring(data, etree.HTMLParser())
    assert root.find("head") is None and root.find("body/title") is not None
    assert root.get("lang") is None


def test_text_before_the_head_keeps_the_title_and_the_story_for_every_method():
    html = fixture("article_basic.html")
    stored = HTTP_HEAD + html
    page, plain = Page.from_html(stored), Page.from_html(html)
    assert page.html_title == plain.html_title == "Harbour bridge reopens after repairs | The Daily Planet"
    assert page.root.get("lang") == "en"  # the late <html> start tag's attribute
    # The title element is not displayed: its text is no text node of the body.
    assert "Harbour bridge reopens after repairs | The Daily Planet" not in page.texts
    assert page.texts[0] == "HTTP/1.1 200 OK Content-Type: text/html; charset=utf-8"
    assert page.texts[1:] == plain.texts
    for method in PAGE_MODEL_METHODS:  # the same body (a method that keeps every line keeps that one too)
        body = extract(stored, method=method).body.removeprefix(page.texts[0] + "\n")
        assert body == extract(html, method=method).body, method
    assert extract(stored).title == extract(html).title


def test_a_malformed_late_html_tag_gives_only_its_well_formed_attributes():
    root = parse_html(b'URL: http://a.example/x <HTML LANG="fr" ""=1 a xmlns:fb="u"><title>T</title><p>Texte.</p>')
    assert dict(root.attrib) == {"lang": "fr", "a": "", "xmlns:fb": "u"}
    assert root.findtext("head/title") == "T"


def test_a_page_with_its_head_is_not_restored():
    root = parse_html(encode_source(fixture("article_basic.html")))
    before = etree.tostring(root)
    assert restore_head(root, b"<html lang=de>") is False
    assert etree.tostring(root) == before


#: The head of article_basic.html with an OpenGraph title and site name after its title.
OG_HEAD = ('<title>Harbour bridge reopens after repairs | The Daily Planet</title>\n'
           '  <meta property="og:title" content="Harbour bridge reopens after repairs">\n'
           '  <meta property="og:site_name" content="The Daily Planet">')


def with_og(html: str) -> str:
    return html.replace("<title>Harbour bridge reopens after repairs | The Daily Planet</title>", OG_HEAD, 1)


def test_an_ad_before_the_title_leaves_the_title_and_the_metadata_to_the_page():
    # An element that cannot be in a head (an ad's <center> with its image) closes it:
    # the title and the <meta> elements after it are parsed into the body.
    html = with_og(fixture("article_basic.html"))
    stray = html.replace("<head>", '<head>\n  <center><img src="/ads/banner.gif"></center>', 1)
    quirk = etree.fromstring(stray.encode(), etree.HTMLParser())
    assert quirk.find("head/title") is None and quirk.find("body/title") is not None
    page, plain = Page.from_html(stray), Page.from_html(html)
    assert page.html_title == plain.html_title == "Harbour bridge reopens after repairs | The Daily Planet"
    assert page.meta_title == plain.meta_title == "Harbour bridge reopens after repairs"
    assert page.root.find("head/meta[@property='og:site_name']") is not None
    # The title element is not displayed: its text is no text node of the body.
    assert page.texts == plain.texts
    for method in PAGE_MODEL_METHODS:
        assert extract(stray, method=method).body == extract(html, method=method).body, method
    assert extract(stray).title == extract(html).title == "Harbour bridge reopens after repairs"


def test_a_title_written_after_the_content_is_the_documents_title():
    html = fixture("article_basic.html")
    title = "<title>Harbour bridge reopens after repairs | The Daily Planet</title>"
    late = html.replace(title, "", 1).replace("</body>", title + "\n</body>", 1)
    page, plain = Page.from_html(late), Page.from_html(html)
    assert page.html_title == plain.html_title
    assert page.texts == plain.texts
    assert extract(late).title == extract(html).title


def test_microdata_in_the_body_stays_in_the_body():
    html = ("<html><head><center><img src=ad.gif></center><title>Dune lamp</title></head><body>"
            "<div itemscope itemtype='https://schema.org/Product'><meta itemprop='sku' content='L-7'>"
            "<h1 itemprop='name'>Dune lamp</h1><p itemprop='description'>A lamp of oak and linen.</p></div>"
            "</body></html>")
    root = parse_html(html.encode())
    assert root.findtext("head/title") == "Dune lamp"
    assert root.find("body//meta[@itemprop='sku']") is not None
    assert root.find("head/meta") is None


def test_a_page_without_a_title_is_left_as_it_is():
    root = parse_html(b"<html><head><center><img src=ad.gif></center><meta name=a content=b></head>"
                      b"<body><p>Story.</p><svg><title>An icon</title></svg></body></html>")
    assert root.find("head/title") is None and root.find("body/meta") is not None


# 2. Nesting deeper than libxml2's limit --------------------------------------------


def test_libxml2_drops_the_story_after_256_levels_by_default():
    root = etree.fromstring(fixture("parse_deep_font.html").encode(), etree.HTMLParser())
    assert "Friends of the Library" not in "".join(root.itertext())


def test_three_hundred_unclosed_font_tags_keep_the_story_for_every_method():
    assert_story(fixture("parse_deep_font.html"), LIBRARY)


@pytest.mark.parametrize("levels", [3000, 5000])
def test_thousands_of_unclosed_font_tags_keep_the_story(levels):
    html = fixture("parse_deep_font.html").replace("<font size=2>\n" * 300, "<font size=2>\n" * levels)
    assert_story(html, LIBRARY)
    page = Page.from_html(html)
    assert depth(page.root) <= MAX_DEPTH + 1  # flattened as Blink does


@pytest.mark.parametrize("opener", ["<div>", "<span class=x>", "<table><tr><td>"])
def test_balanced_deep_nesting_keeps_the_text(opener):
    story = "<p>The council voted on Tuesday, after a long debate, to rebuild the old bridge.</p>"
    html = "<html><body><nav>Home</nav>" + opener * 3000 + story + "</body></html>"
    page = Page.from_html(html)
    assert any("rebuild the old bridge" in t for t in page.texts)  # every method reads these
    assert depth(page.root) <= MAX_DEPTH + 1


def test_flatten_source_drops_only_tags():
    data = b"<div><b>one<div>two<i>three</i></div></b><script>x='<div>'</script>four</div>"
    flat = flatten_source(data, 2)
    assert flat == b"<div><b>onetwothree</b><script>x='<div>'</script>four</div>"


# 3. A tree cut off early -------------------------------------------------------------


def test_content_after_an_early_html_end_tag_is_kept_for_every_method():
    html = fixture("parse_early_close.html")
    root = etree.fromstring(html.encode(), etree.HTMLParser())
    assert "Friends of the Library" not in "".join(root.itertext())  # the quirk
    assert_story(html, LIBRARY)


def test_content_after_an_early_body_end_tag_is_kept():
    html = fixture("parse_early_close.html").replace("</body>\n</html>\n<h1>", "</body>\n<h1>", 1)
    assert_story(html, LIBRARY, methods=("setpr", "cetr", "nce"))
    assert Page.from_html(html).root.find("body").getnext() is None


def test_nul_bytes_do_not_cut_the_page():
    html = fixture("parse_early_close.html").replace("</body>\n</html>\n", "\x00\x00 garbage < <<>> &#0; \x00")
    assert_story(html, LIBRARY)
    assert_story(html.encode("utf-8"), LIBRARY)
    assert "\x00" not in extract(html, method="setpr").body


def test_lone_surrogate_does_not_truncate_the_page():
    # libxml2 stops at the first byte of a str holding a lone surrogate (issue 10, item 15).
    html = fixture("parse_early_close.html").replace("</body>\n</html>\n", "<p>Broken \ud800 character</p>")
    assert_story(html, LIBRARY)
    body = extract(html, method="setpr").body
    assert "\ud800" not in body
    # A valid pair of surrogates in a str is joined into its character.
    assert encode_source("\ud83d\ude00") == "\U0001F600".encode()


def test_text_node_over_ten_megabytes_is_not_cut():
    big = "word " * 2_200_000  # 11 MB in one text node: over libxml2's default limit
    html = "<html><body><div>" + big + "</div><p>The end of the page, with the last sentence.</p></body></html>"
    page = Page.from_html(html)
    assert page.texts[-1] == "The end of the page, with the last sentence."


def test_parse_error_is_an_extraction_error():
    from scrapy_cepr.core.errors import ParseError

    assert issubclass(ParseError, ExtractionError)
