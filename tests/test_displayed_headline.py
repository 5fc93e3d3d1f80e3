"""A page without an ``h1`` reads the element that shows its name as its ``h1``
(``core.page.promote_displayed_headline``, issue 17): headlines of older templates written
in ``<font>`` or a styled ``<div>``."""

from pathlib import Path

import pytest
from lxml import html

from scrapy_cepr import extract
from scrapy_cepr.core.page import Page, promote_displayed_headline
from scrapy_cepr.evaluation import font_heading_page, heading_free_page

FIXTURE = Path(__file__).parent / "fixtures" / "font_headline_news.html"
URL = "http://www.valleygazette.example/news/980312.html"
HEADLINE = "Harbour wall gives way in spring tide"
STORY_START = "By Martha Quill, Gazette staff writer\nA forty-metre stretch of the old harbour wall"
STORY_END = "Residents can report damage to the council's emergency line."


def _promote(source: str, url: str | None = None):
    root = html.fromstring(source)
    title = root.findtext("head/title")
    got = promote_displayed_headline(root, url, title)
    return got, root


def test_font_headline_of_a_1998_page_is_the_pages_heading():
    page = Page.from_html(FIXTURE.read_bytes(), url=URL)
    levels = [(level, page.texts[first]) for level, first, _ in page.headings]
    assert levels == [(1, HEADLINE)]


@pytest.mark.parametrize("url", [URL, None])
def test_body_starts_below_the_font_headline(url):
    # Before the promotion the kicker and the date line above the headline ("Local news",
    # "Thursday, March 12, 1998") were part of CEPR-Typed's body. The body starts at the
    # byline or, where the block classifier reads the byline as metadata, at the story.
    for method in ("cepr-typed", "cepr-article"):
        got = extract(FIXTURE.read_bytes(), url=url, method=method)
        assert got.title == HEADLINE
        assert got.page_type == "article"
        assert got.body.startswith((STORY_START, STORY_START.split("\n")[1])), (method, got.body[:120])
        assert got.body.endswith(STORY_END), (method, got.body[-120:])
        for boilerplate in ("Local news", "Thursday, March 12, 1998", "Related stories", "Classifieds", "Copyright"):
            assert boilerplate not in got.body, (method, boilerplate)


def test_styled_div_headline_is_renamed_in_place():
    got, root = _promote('<html><head><title>Storm hits coast | Herald</title></head><body>'
                         '<div class="nav">Home</div><div class="headline"><span>Storm hits coast</span></div>'
                         '<p>The storm hit the coast.</p></body></html>')
    assert got is not None and got.tag == "h1" and got.get("class") == "headline"
    assert html.tostring(root.find("body")) == (
        b'<body><div class="nav">Home</div><h1 class="headline"><span>Storm hits coast</span></h1>'
        b'<p>The storm hit the coast.</p></body>')


def test_a_part_of_the_title_is_the_headline():
    # "Section: headline" without spaces around the colon: a part covering >= 60 % of it.
    got, _ = _promote("<html><head><title>The Review: Seeking a bigger role for a big rocket</title></head>"
                      "<body><div>Seeking a bigger role for a big rocket</div><p>Text.</p></body></html>")
    assert got is not None and "".join(got.itertext()) == "Seeking a bigger role for a big rocket"


@pytest.mark.parametrize("body", [
    # a page with an h1 is left alone, even if the h1 is not the title
    "<h1>The Valley Gazette</h1><div>Storm hits coast</div>",
    # the title already shown in a heading
    "<h2>Storm hits coast</h2><div>Storm hits coast</div>",
    # a bold lead-in that shares its line with the story
    "<p><b>Storm hits coast</b> as the spring tide rises over the quay.</p>",
    # a menu entry and a list item
    "<ul><li><span>Storm hits coast</span></li></ul>",
    "<nav><div>Storm hits coast</div></nav>",
    # a link, without the page's URL to show it is a permalink
    '<div><a href="/news/1.html">Storm hits coast</a></div>',
    # a data-table cell
    "<table><tr><th>Story</th><th>Date</th></tr><tr><td>Storm hits coast</td><td>today</td></tr></table>",
    # text that only looks like the title
    "<div>Storms hit the coastline of the north sea again</div>",
])
def test_nothing_is_promoted(body):
    got, root = _promote(f"<html><head><title>Storm hits coast - Herald</title></head><body>{body}</body></html>")
    assert got is None
    assert len(root.findall(".//h1")) == body.count("<h1>")


def test_the_sites_name_is_not_the_headline():
    # The <title> is the site's name alone (a home page): the logo text is not promoted.
    source = ('<html><head><title>Valley Gazette</title><meta property="og:site_name" content="Valley Gazette">'
              "</head><body><div>Valley Gazette</div><p>Today's news.</p></body></html>")
    got, _ = _promote(source, "http://valleygazette.example/")
    assert got is None


def test_permalink_headline_is_wrapped_with_the_pages_url():
    source = ('<html><head><title>Storm hits coast - Herald</title></head><body><div>'
              '<a href="/news/1.html">Storm hits coast</a><br>The storm hit the coast.</div></body></html>')
    assert _promote(source)[0] is None  # no URL: a link is not known to be a permalink
    assert _promote(source, "http://herald.example/news/2.html")[0] is None  # a link to another page
    got, root = _promote(source, "http://herald.example/news/1.html")
    assert got is not None and got.tag == "h1" and got[0].tag == "a"
    assert html.tostring(root.find("body/div")).startswith(b'<div><h1><a href="/news/1.html">Storm hits coast</a></h1><br>')
    # The same permalink sharing its line with another link is not a headline.
    shared = source.replace("Storm hits coast</a><br>", 'Storm hits coast</a> <a href="/news/1.html#c">3 comments</a><br>')
    assert _promote(shared, "http://herald.example/news/1.html")[0] is None


def test_permalink_headline_is_known_by_the_pages_canonical_address_without_a_url():
    # A page analysed without its URL (a stored copy) still declares its own address.
    source = ('<html><head><title>Storm hits coast - Herald</title>{link}</head><body><div>'
              '<a href="http://herald.example/news/1.html">Storm hits coast</a><br>The storm hit the coast.</div>'
              '</body></html>')
    canonical = '<link rel="canonical" href="https://herald.example/news/1.html">'
    got, _ = _promote(source.format(link=canonical))
    assert got is not None and got.tag == "h1" and got[0].tag == "a"
    og_url = '<meta property="og:url" content="/news/1.html">'  # relative: compared on the path
    assert _promote(source.format(link=og_url))[0] is not None
    elsewhere = '<link rel="canonical" href="https://herald.example/news/2.html">'
    assert _promote(source.format(link=elsewhere))[0] is None
    other_host = '<link rel="canonical" href="https://gazette.example/news/1.html">'
    assert _promote(source.format(link=other_host))[0] is None
    assert _promote(source.format(link=""))[0] is None


def test_a_card_linking_to_the_page_itself_is_not_its_headline():
    url = "http://herald.example/news/1.html"
    card = '<div class="card"><a href="/news/1.html"><div>Storm hits coast</div><img src="s.jpg"></a></div>'
    story = "<div>Storm hits coast</div><p>The storm hit the coast last night.</p>"
    # The headline shown as text ties with the card in a "recommended" list below the
    # story (the card is followed by more text: the rest of the page) and wins.
    source = (f"<html><head><title>Storm hits coast - Herald</title></head><body>{story}"
              f"<div>Recommended</div>{card}<p>More stories from the Herald, every day of the week.</p></body></html>")
    got, _ = _promote(source, url)
    assert got is not None and got.text == "Storm hits coast" and got.getnext().tag == "p"
    # Only cards linking to the page itself: a list of teasers, not a headline.
    cards = (f"<html><head><title>Storm hits coast - Herald</title></head><body><p>The storm hit.</p>{card}{card}"
             "</body></html>")
    assert _promote(cards, url)[0] is None
    # One permalink alone is the headline.
    assert _promote(cards.replace(card + card, card), url)[0] is not None


def test_headline_copies_of_the_probes_read_as_headings():
    # The benchmark's copies without heading elements (benchmarks/plain_pages.py) get
    # their headline back.
    served = ("<html><head><title>Storm hits coast - Herald</title></head><body><div><h1>Storm hits coast</h1>"
              "<h2>Damage</h2><p>The storm hit the coast last night.</p></div></body></html>")
    for copy in (heading_free_page(served), font_heading_page(served)):
        assert "<h1" not in copy
        page = Page.from_html(copy)
        assert [(level, page.texts[first]) for level, first, _ in page.headings] == [(1, "Storm hits coast")]


def test_promotion_is_bounded_on_a_page_of_many_candidates():
    # Every element holds a text the size of the title: each is read once, its text capped.
    rows = "".join(f"<div>Storm hits the coast again {i:05d}</div>" for i in range(20000))
    source = f"<html><head><title>Storm hits the coast</title></head><body>{rows}</body></html>"
    page = Page.from_html(source)
    assert len(page.texts) == 20000
    assert page.headings == []  # each text is longer than a match to the title can be


@pytest.mark.parametrize(("copies", "promoted"), [(16, True), (17, False), (20000, False)])
def test_a_name_shown_in_many_places_is_a_list_not_a_headline(copies, promoted):
    # Deeply nested copies of the title: past 16 equal matches nothing is promoted, and the
    # search stops weighing them (a hostile page costs one pass, not one climb per copy).
    rows = "<p>Storm hits the coast</p>" * copies
    source = (f"<html><head><title>Storm hits the coast</title></head><body>{'<div>' * 200}{rows}"
              f"{'</div>' * 200}</body></html>")
    page = Page.from_html(source)
    assert (page.headings == [(1, 0, 1)]) is promoted


def test_of_two_equal_copies_the_one_heading_the_story_is_promoted():
    story = "<p>" + "The storm hit the coast last night and the quay flooded. " * 5 + "</p>"
    source = ("<html><head><title>Storm hits coast - Herald</title></head><body>"
              '<div id="bar"><div>Storm hits coast</div></div><div id="nav">Home News Sport</div>'
              f'<div id="story"><div>Storm hits coast</div>{story}</div>'
              '<div id="foot"><div>Storm hits coast</div>Share this story</div></body></html>')
    got, root = _promote(source)
    assert got is not None and got.getparent().get("id") == "story"
    assert [h.getparent().get("id") for h in root.iter("h1")] == ["story"]
