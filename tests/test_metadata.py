"""Metadata: JSON-LD / microdata / OpenGraph via extruct, dates via htmldate, sources
recorded, the byline setting, and the item field (``CEPR_METADATA``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_cepr import extract
from scrapy_cepr.core.metadata import (
    METADATA_KEYS,
    empty_metadata,
    extract_metadata,
    guess_language,
    move_byline,
)
from scrapy_cepr.options import ExtractOptions
from scrapy_cepr.settings import CEPRConfig
from scrapy_cepr.worker import extract_page

FIXTURES = Path(__file__).parent / "fixtures"
STRUCTURED = (FIXTURES / "meta_structured.html").read_text("utf-8")
PLAIN = (FIXTURES / "meta_plain.html").read_text("utf-8")
URL = "https://islandpost.example/travel/ferry-winter"


def test_json_ld_wins_and_each_source_is_recorded():
    m = extract_metadata(STRUCTURED, url=URL, headline="Ferry timetable changes for winter")
    assert m["headline"] == "Ferry timetable changes for winter"
    # JSON-LD (inside @graph; a second, broken JSON-LD script does not hide it) beats
    # OpenGraph and <meta> for every key it has.
    assert m["authors"] == ["Iona MacLeod", "Sam Reid"]  # not <meta name="author">
    assert m["date_published"] == "2023-11-01T07:30:00+00:00"  # not article:published_time
    assert m["date_modified"] == "2023-11-03T12:00:00+00:00"
    assert m["description"] == "Fewer sailings on the north route from December."
    assert m["image"] == "https://islandpost.example/img/ferry-lead.jpg"  # relative in JSON-LD, made absolute
    assert m["section"] == "Travel" and m["tags"] == ["ferries", "winter timetable"]
    assert m["site_name"] == "Island Post Ltd" and m["language"] == "en-GB"
    # No url in the JSON-LD article: <link rel="canonical">, resolved against the page URL.
    assert m["canonical_url"] == "https://islandpost.example/travel/ferry-winter-timetable"
    assert m["sources"] == {
        "authors": "json-ld", "date_published": "json-ld", "date_modified": "json-ld", "language": "json-ld",
        "description": "json-ld", "image": "json-ld", "canonical_url": "meta", "site_name": "json-ld",
        "section": "json-ld", "tags": "json-ld",
    }


def test_without_json_ld_opengraph_and_meta_fill_in():
    # The same page with its JSON-LD removed.
    start = STRUCTURED.index('<script type="application/ld+json">')
    end = STRUCTURED.index("</head>")
    m = extract_metadata(STRUCTURED[:start] + STRUCTURED[end:], url=URL)
    assert (m["authors"], m["sources"]["authors"]) == (["Head Author"], "meta")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2023-11-02T08:00:00+00:00", "opengraph")
    assert (m["image"], m["sources"]["image"]) == ("https://cdn.islandpost.example/og/ferry.jpg", "opengraph")
    assert (m["section"], m["site_name"]) == ("OG Section", "Island Post")
    assert (m["tags"], m["sources"]["tags"]) == (["ferry", "winter", "timetable"], "meta")
    assert (m["language"], m["sources"]["language"]) == ("en-GB", "meta")  # <html lang>
    assert m["date_modified"] is None and "date_modified" not in m["sources"]


def test_page_without_structured_data_uses_htmldate_and_the_page_text():
    m = extract_metadata(PLAIN, url="https://ville.example/marche")
    # <time datetime> in the element after the headline (issue 20: htmldate on the headline's
    # surroundings, no longer on the whole page; the source says so)
    assert (m["date_published"], m["sources"]["date_published"]) == ("2022-05-14", "page text")
    assert (m["authors"], m["sources"]["authors"]) == (["Claire Martin"], "page text")  # <a rel="author">
    assert (m["language"], m["sources"]["language"]) == ("fr", "page text")  # no lang attribute: stop words
    for key in ("date_modified", "description", "image", "canonical_url", "site_name", "section"):
        assert m[key] is None, key
    assert m["tags"] == []


def test_lead_image_from_the_content_when_nothing_names_one():
    content = '<p>Text.</p>\n<figure><img src="https://ville.example/halle.jpg"></figure>'
    m = extract_metadata(PLAIN, url="https://ville.example/marche", content_html=content)
    assert (m["image"], m["sources"]["image"]) == ("https://ville.example/halle.jpg", "page text")


@pytest.mark.parametrize("source", ["", "   ", b"", "<html></html>"])
def test_empty_pages_give_every_key_absent(source):
    m = extract_metadata(source, headline=None)
    assert set(m) == {*METADATA_KEYS, "sources", "confidence"}
    assert m == empty_metadata()


def test_hostile_structured_data_is_harmless():
    # Deep nesting, huge lists and non-http URLs in JSON-LD: bounded, no exception.
    nested = '{"@type": "Thing", "x": ' * 200 + "1" + "}" * 200
    many = '{"@type": "NewsArticle", "author": [' + ",".join([f'{{"name": "A{i}"}}' for i in range(500)]) + "]," \
           '"image": "javascript:alert(1)", "datePublished": "yesterday"}'
    page = (f'<html><head><script type="application/ld+json">{nested}</script>'
            f'<script type="application/ld+json">{many}</script></head><body><p>x</p></body></html>')
    m = extract_metadata(page, url="https://a.example/")
    assert len(m["authors"]) == 20 and m["authors"][0] == "A0"
    assert m["image"] is None  # javascript: is not a URL we give back
    assert m["date_published"] is None  # "yesterday" is not ISO, and no heading shows a date


def test_guess_language():
    assert guess_language("Der Bürgermeister sagte, dass die Halle nicht mehr genutzt werde und die Stadt") == "de"
    assert guess_language("東京の市場が再開しました。") == "ja"
    assert guess_language("12345 67890") is None


def test_extraction_metadata_is_lazy():
    r = extract(STRUCTURED, url=URL)
    assert "metadata" not in r.__dict__
    assert r.metadata["authors"] == ["Iona MacLeod", "Sam Reid"] and r.metadata["headline"] == r.title
    assert "metadata" in r.__dict__
    assert r.to_dict(metadata=True)["metadata"] is r.metadata


def test_byline_stays_in_the_body_by_default_and_moves_on_request():
    kept = extract_page(STRUCTURED, URL, ExtractOptions("setpr", formats=("html",)))[0]
    assert kept.body.startswith("Iona MacLeod and Sam Reid, Travel desk\n")
    moved = extract_page(STRUCTURED, URL, ExtractOptions("setpr", formats=("html",), byline="move"))[0]
    assert moved.body == kept.body.split("\n", 1)[1]
    assert "Travel desk" not in moved.extras["body_html"]
    assert moved.extras["body_html"] == kept.extras["body_html"].split("\n", 1)[1]
    assert move_byline("No author here.\nText.", []) == ("No author here.\nText.", None)


def test_setting_and_pipeline_field():
    from test_pipeline import URL as PAGE_URL
    from test_pipeline import Harness, html_response

    assert CEPRConfig.from_settings({}).metadata is False
    assert CEPRConfig.from_settings({"CEPR_METADATA": "true"}).metadata is True
    with pytest.raises(ValueError, match="CEPR_METADATA must be True or False"):
        CEPRConfig.from_settings({"CEPR_METADATA": "maybe"})
    [item] = Harness(CEPR_METADATA=True).run(({"url": PAGE_URL}, html_response()))
    assert item["metadata"]["headline"] == item["title"] == "Storm hits coast"
    assert item["metadata"]["language"] == "en" and item["metadata"]["sources"]["language"] == "page text"


# -- issue 20: metadata that is right or absent ----------------------------------------------

SERVICE = """<html><head><title>Gutter cleaning | Tidy Roofs</title></head><body>
<header><a href="/">Tidy Roofs</a></header>
<h1>Gutter cleaning</h1><p>We clear gutters and downpipes across the county, all year round.</p>
<aside><h3>From our blog</h3><ul>
<li><a href="/blog/a">Winter roof checks</a> <time datetime="2023-01-09">9 January 2023</time></li>
<li><a href="/blog/b">Moss and tiles</a> <time datetime="2022-11-21">21 November 2022</time></li>
</ul></aside>
<footer><p class="date">Last updated 2024-02-03</p><p>© 2024 Tidy Roofs Ltd</p></footer>
</body></html>"""


def test_no_date_from_a_sidebar_or_the_footer():
    # htmldate's search of the whole page finds the sidebar's or the footer's date; none of
    # them belongs to this page, which has no publication date.
    m = extract_metadata(SERVICE, url="https://tidyroofs.example/gutters", headline="Gutter cleaning")
    assert m["date_published"] is None and "date_published" not in m["sources"]


def _webpage(date_json: str, url: str) -> dict:
    page = ('<html><head><script type="application/ld+json">{"@type": "WebPage", '
            f'"datePublished": "{date_json}"}}</script></head><body><h1>Opening hours</h1>'
            "<p>Open every day from nine to five, except on public holidays.</p></body></html>")
    return extract_metadata(page, url=url, headline="Opening hours")


def test_a_webpage_date_needs_the_url_or_the_headline_to_confirm_it():
    assert _webpage("2021-06-01", "https://shop.example/hours")["date_published"] is None
    m = _webpage("2021-06-01", "https://shop.example/2021/06/01/hours")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2021-06-01", "json-ld")


def test_date_in_the_url_when_nothing_declares_one():
    page = "<html><body><h1>Harbour wall repaired</h1><p>The wall was rebuilt over the summer.</p></body></html>"
    m = extract_metadata(page, url="https://news.example/2020/07/15/harbour-wall", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2020-07-15", "url")


def test_a_utc_timestamp_a_day_off_the_url_takes_the_url_day():
    # 02:41 UTC on the 19th is the evening of the 18th where the post was written; its
    # permalink shows the 18th.
    page = ('<html><head><meta property="og:type" content="article">'
            '<meta property="article:published_time" content="2025-12-19T02:41:41+00:00"></head>'
            "<body><h1>Snow day</h1><p>It snowed all day.</p></body></html>")
    m = extract_metadata(page, url="https://blog.example/2025/12/18/snow-day/", headline="Snow day")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2025-12-18", "url")
    # With its own offset, or three days apart, the declared timestamp stands.
    for declared, url in (("2025-12-19T02:41:41-05:00", "https://blog.example/2025/12/18/snow-day/"),
                          ("2025-12-19T02:41:41+00:00", "https://blog.example/2025/12/16/snow-day/")):
        m = extract_metadata(page.replace("2025-12-19T02:41:41+00:00", declared), url=url, headline="Snow day")
        assert m["date_published"] == declared and m["sources"]["date_published"] == "opengraph"


BODY_TEXT = "<p>" + "The harbour wall was rebuilt over the summer by the council's own crew. " * 4 + "</p>"


def test_icons_between_the_headline_and_its_date_do_not_use_up_the_byline_zone():
    share = "".join(f'<a href="/share/{i}"><svg></svg></a>' for i in range(35))
    page = ('<html><body><div id="page"><div class="hero"><div><h1>Harbour wall repaired</h1></div></div>'
            f'<div class="share">{share}</div><p class="meta"><time datetime="2025-10-20">Oct 20, 2025</time></p>'
            '<p class="credit">By Ann Lee</p>' + BODY_TEXT + "</div></body></html>")
    m = extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2025-10-20", "page text")
    # The byline is read closer to the headline: there the icons count (on WCXB dev the
    # longer reach named an author on 12 more pages whose gold has none, none right).
    assert m["authors"] == []


def _above(before_headline: str) -> dict:
    page = (f'<html><body><div id="page">{before_headline}'
            '<div class="hero"><div><h1>Harbour wall repaired</h1></div></div>' + BODY_TEXT
            + '</div><footer><time datetime="2024-01-01">2024</time></footer></body></html>')
    return extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")


def test_date_just_above_the_headline():
    date = '<time datetime="2025-09-04">September 4, 2025</time>'
    m = _above(f'<div class="kicker"><a href="/tips">Tips</a> {date}</div>')
    assert (m["date_published"], m["sources"]["date_published"]) == ("2025-09-04", "page text")
    # Inside a menu, the date is another part of the page.
    assert _above(f'<nav><a href="/">Home</a> {date}</nav>')["date_published"] is None


def test_date_next_to_the_headline():
    page = ('<html><body><article><header><h1>Harbour wall repaired</h1>'
            '<p class="meta">Published <time datetime="2019-03-04">4 March 2019</time></p></header>'
            "<p>The wall was rebuilt over the summer.</p></article>"
            '<footer><time datetime="2024-01-01">2024</time></footer></body></html>')
    m = extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2019-03-04", "page text")


def test_date_next_to_a_headline_below_the_sites_h1():
    # A blog whose every page has its name in an h1 (and the blog's last change below
    # it); the post's title is a styled div, with the post's date under it.
    page = ("<html><body><div id=\"top\"><h1>Martha's Notebook</h1><p>Updated on 3 March 2020</p></div>"
            "<div id=\"main\"><div class=\"post\"><div class=\"title\">Harbour wall repaired</div>"
            "<div class=\"when\">20 December 2025</div>" + BODY_TEXT + "</div></div>"
            '<footer><time datetime="2024-01-01">2024</time></footer></body></html>')
    m = extract_metadata(page, url="https://notebook.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2025-12-20", "page text")


COURIER = """<html><head><meta property="og:site_name" content="The Courier">
<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Bridge closes",
 "author": {"@type": "Organization", "name": "The Courier"}, "datePublished": "2024-05-06"}</script>
</head><body><article><header><h1>Bridge closes</h1>
<p><span>By Ann Lee</span> <span>6 May 2024</span></p></header>
<p>The bridge closes for repairs on Monday, the council said.</p></article></body></html>"""


def test_byline_names_the_person_when_the_structured_data_names_the_site():
    m = extract_metadata(COURIER, url="https://courier.example/bridge", headline="Bridge closes")
    assert (m["authors"], m["sources"]["authors"]) == (["Ann Lee"], "byline")


def test_the_site_as_sole_author_is_kept_without_a_byline():
    page = COURIER.replace("<span>By Ann Lee</span>", "")
    m = extract_metadata(page, url="https://courier.example/bridge", headline="Bridge closes")
    assert (m["authors"], m["sources"]["authors"]) == (["The Courier"], "json-ld")


@pytest.mark.parametrize(("declared", "expected"), [
    ("By Ann Lee and Bo Chen, The Courier", ["Ann Lee", "Bo Chen"]),  # "By", several names, the site
    ("Ann Lee; Bo Chen", ["Ann Lee", "Bo Chen"]),
    ("Ann Lee | 2024-05-06", ["Ann Lee"]),  # a date is not a name
    ("Maria &amp; Katerina", ["Maria", "Katerina"]),  # an entity written twice
    ("undefined", []),  # a template's null
])
def test_author_names_are_people(declared, expected):
    page = (f'<html><head><meta property="og:site_name" content="The Courier">'
            f'<meta name="author" content="{declared}"></head><body><p>Text.</p></body></html>')
    assert extract_metadata(page, url="https://courier.example/a")["authors"] == expected


def test_each_field_has_a_confidence_from_its_source():
    m = extract_metadata(COURIER, url="https://courier.example/bridge", headline="Bridge closes")
    assert set(m["confidence"]) == set(m["sources"])
    assert all(0.0 <= v <= 1.0 for v in m["confidence"].values())
    # the page's own article item is trusted more than a date read next to the headline
    plain = extract_metadata(PLAIN, url="https://ville.example/marche")
    assert m["confidence"]["date_published"] > plain["confidence"]["date_published"]


def test_byline_words_in_their_own_elements():
    # "Written by" and the name in separate elements, a date glued after: the name ends with
    # its element; a role after a comma is not a second author.
    page = ('<html><body><div><h1>Gutters in winter</h1><div><span>Written by</span><a href="/team">Ann Lee</a>'
            "<span>Published March 3</span></div></div><p>Clear them before the frost, and check the "
            "downpipes.</p></body></html>")
    m = extract_metadata(page, url="https://roofs.example/gutters", headline="Gutters in winter")
    assert (m["authors"], m["sources"]["authors"]) == (["Ann Lee"], "byline")
    page = page.replace("<span>Written by</span><a href=\"/team\">Ann Lee</a>", "<span>By Ann Lee, Roofer</span>")
    assert extract_metadata(page, url="https://roofs.example/gutters", headline="Gutters in winter")["authors"] == ["Ann Lee"]


def test_sort_by_on_a_listing_is_not_a_byline():
    page = ('<html><body><div><h1>Shoes</h1><div><span>Sort by</span> <select><option>price</option></select>'
            "</div></div><ul><li>Boot</li><li>Sandal</li></ul></body></html>")
    assert extract_metadata(page, url="https://shop.example/shoes", headline="Shoes")["authors"] == []


def test_date_and_byline_between_the_headline_and_the_body():
    # Deep nesting: the byline is neither in the heading's parent nor its grandparent, but
    # between the headline and the first paragraph; a later date in the body is not read.
    page = ("<html><body><div><div><div><div><h1>Harbour wall repaired</h1></div></div></div>"
            "<div><div><span>Written by</span> <span>Ann Lee</span></div>"
            '<div><time datetime="2019-03-04">4 March 2019</time></div></div>'
            "<div><p>" + "The wall was rebuilt over the summer, and the council paid for it. " * 5 + "</p>"
            '<p>On <time datetime="2020-01-01">1 January 2020</time> it opened.</p></div></div></body></html>')
    m = extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2019-03-04", "page text")
    assert (m["authors"], m["sources"]["authors"]) == (["Ann Lee"], "byline")


# -- issue 20: dates right or absent ----------------------------------------------------

def _page(head: str = "", body: str = "") -> str:
    return (f"<html><head><title>Harbour wall repaired</title>{head}</head><body>"
            '<div class="nav"><a href="/">Home</a></div>' + body +
            "<p>The harbour wall, which collapsed in the autumn storms, has been rebuilt by the town.</p>"
            "<p>Engineers said the new wall is a metre higher, and that it cost two million pounds.</p>"
            "<footer><p>© 2019 Coast Courier</p></footer></body></html>")


@pytest.mark.parametrize("meta", [
    '<meta name="article:published_time" content="2024-03-05T10:00:00Z">',  # name=, not property=
    '<meta name="parsely-pub-date" content="2024-03-05T10:00:00Z">',
    '<meta itemprop="datePublished" content="2024-03-05T10:00:00-0800">',  # outside any itemscope
    '<meta name="DC.date" content="2024-03-05">',
])
def test_publication_date_declared_in_meta(meta):
    m = extract_metadata(_page(meta, "<h1>Harbour wall repaired</h1>"), url="https://c.example/wall",
                         headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2024-03-05", "meta")


def test_modification_date_in_meta_is_not_a_publication_date():
    meta = '<meta property="article:modified_time" content="2024-03-05T10:00:00Z">'
    m = extract_metadata(_page(meta, "<h1>Harbour wall repaired</h1>"), url="https://c.example/wall",
                         headline="Harbour wall repaired")
    assert m["date_published"] is None


def test_question_of_a_qa_page_is_its_article():
    # schema.org QAPage: the Question (its mainEntity) carries the date and the asker.
    page = ('<html><body><div itemscope itemtype="https://schema.org/QAPage">'
            '<div itemprop="mainEntity" itemscope itemtype="https://schema.org/Question">'
            '<h1 itemprop="name">Why is RAID not a backup?</h1>'
            '<time itemprop="dateCreated" datetime="2009-05-02T00:01:21Z">May 2, 2009</time>'
            '<div itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">Ann Lee</span></div>'
            '<div itemprop="text"><p>Everyone says RAID is not a backup. Why not, if the disks are mirrored?</p></div>'
            '<div itemprop="suggestedAnswer" itemscope itemtype="https://schema.org/Answer">'
            '<time itemprop="dateCreated" datetime="2015-01-20T19:39:07Z">Jan 20, 2015</time>'
            '<p itemprop="text">Because a deleted file is deleted on both disks at once.</p></div>'
            "</div></div></body></html>")
    m = extract_metadata(page, url="https://qa.example/questions/2888", headline="Why is RAID not a backup?")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2009-05-02T00:01:21+00:00", "microdata")
    assert m["authors"] == ["Ann Lee"]


def test_date_in_free_text_next_to_the_headline():
    # htmldate's fast mode does not read "Published on Oct 21, 2025"; its extensive search,
    # on the headline's surroundings only, does.
    body = "<header><h1>Harbour wall repaired</h1><p>Published on Oct 21, 2025 · 4 min read</p></header>"
    m = extract_metadata(_page("", body), url="https://c.example/wall", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2025-10-21", "page text")


def test_year_alone_or_a_date_far_from_the_headline_gives_no_date():
    # A year in the headline (htmldate would complete it to 1 January), a copyright year
    # and a date in the footer: none is the article's publication date.
    body = "<h1>Harbour wall repaired for 2026</h1><p>Local news</p>"
    page = _page("", body).replace("© 2019 Coast Courier", "© 2019 Coast Courier. Updated on March 3, 2024")
    m = extract_metadata(page, url="https://c.example/wall", headline="Harbour wall repaired for 2026")
    assert m["date_published"] is None


def _related_posts(main_item: str) -> str:
    """A post page whose microdata lists three related posts (each a ``BlogPosting`` with
    its own date) beside, or without, the page's own item."""
    related = "".join(
        f'<div itemscope itemtype="https://schema.org/BlogPosting"><a itemprop="url" href="/blog/{slug}">'
        f'<span itemprop="headline">{title}</span></a>'
        f'<meta itemprop="datePublished" content="{day}"></div>'
        for slug, title, day in (("tide-tables", "Reading the tide tables", "2026-03-10"),
                                 ("winter-moorings", "Winter moorings", "2026-03-03"),
                                 ("knots", "Five knots to know", "2026-02-24")))
    return ("<html><body>" + main_item + '<div class="hero"><h1>Harbour wall repaired</h1>'
            '<p class="meta"><time datetime="2026-02-17">February 17, 2026</time></p></div>'
            + BODY_TEXT + f'<aside class="related">{related}</aside></body></html>')


def test_of_several_article_items_the_one_that_names_the_page_is_its_article():
    main = ('<div itemscope itemtype="https://schema.org/BlogPosting"><meta itemprop="headline" '
            'content="Harbour wall repaired"><meta itemprop="datePublished" content="2026-02-16"></div>')
    m = extract_metadata(_related_posts(main), url="https://blog.example/blog/harbour-wall",
                         headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2026-02-16", "microdata")
    # Found by its URL as well as by its headline.
    by_url = main.replace('content="Harbour wall repaired"', 'content="Wall news"').replace(
        '<meta itemprop="headline"', '<link itemprop="url" href="/blog/harbour-wall/"><meta itemprop="headline"')
    m = extract_metadata(_related_posts(by_url), url="https://blog.example/blog/harbour-wall",
                         headline="Harbour wall repaired")
    assert m["date_published"] == "2026-02-16"


def test_article_items_that_are_all_other_posts_give_no_date_of_their_own():
    # Only the related posts are declared: the first of them is not this page's article;
    # the date shown under the headline is.
    m = extract_metadata(_related_posts(""), url="https://blog.example/blog/harbour-wall",
                         headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2026-02-17", "page text")


def test_one_article_item_is_the_page_s_whatever_its_headline():
    page = ('<html><head><script type="application/ld+json">{"@type": "NewsArticle", "headline": "Wall news",'
            ' "datePublished": "2024-05-06"}</script></head><body><h1>Harbour wall repaired</h1>'
            + BODY_TEXT + "</body></html>")
    m = extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2024-05-06", "json-ld")


def test_a_numeric_date_reads_month_first_when_the_time_element_says_so():
    # htmldate reads the text "03/01/2017" day first; the <time datetime> the page gives
    # for it is 1 March.
    page = ('<html><body><article><h1>Harbour wall repaired</h1><div class="meta">'
            '<time datetime="2017-03-01T12:00:00Z">03/01/2017</time> by Ann Lee</div>'
            + BODY_TEXT + "</article></body></html>")
    m = extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2017-03-01", "page text")
    # Written day first and declared so, it stays 3 January.
    m = extract_metadata(page.replace("2017-03-01T12", "2017-01-03T12"), url="https://news.example/harbour",
                         headline="Harbour wall repaired")
    assert m["date_published"] == "2017-01-03"


def test_a_meta_date_reads_day_and_month_as_the_date_next_to_the_headline():
    page = ('<html><head><meta name="article:published_time" content="03-09-2026"></head><body>'
            '<h1>Harbour wall repaired</h1><p class="meta">March 9, 2026</p>' + BODY_TEXT + "</body></html>")
    m = extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2026-03-09", "meta")
    # Nothing shown next to the headline: htmldate's reading stands.
    m = extract_metadata(page.replace("March 9, 2026", "Ann Lee"), url="https://news.example/harbour",
                         headline="Harbour wall repaired")
    assert m["date_published"] == "2026-09-03"


# -- the date next to the headline: what a reader sees before the text ------------------


def test_a_date_below_the_text_of_the_headline_s_grandparent_is_not_its_date():
    # The headline's grandparent holds the whole article; its last line is the page's last
    # change, not its publication: only its part before the text starts is read.
    page = ('<html><body><div id="main"><div class="top"><h1>Harbour wall repaired</h1></div>'
            + BODY_TEXT + '<p class="foot">Last modified <time datetime="2025-07-08">July 8, 2025</time></p>'
            "</div></body></html>")
    m = extract_metadata(page, url="https://docs.example/harbour", headline="Harbour wall repaired")
    assert m["date_published"] is None
    # Above the text, the same element is the date under the headline.
    above = page.replace('<div class="top">', '<div class="top"><p class="meta"><time datetime="2024-05-06">'
                         'May 6, 2024</time></p>')
    m = extract_metadata(above, url="https://docs.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2024-05-06", "page text")


def test_a_style_element_after_the_headline_does_not_end_the_byline_zone():
    css = "<style>" + ".hero{margin:0 auto;padding:12px 24px;color:#222;font:16px/1.5 serif} " * 6 + "</style>"
    page = ('<html><body><div id="page"><div class="hero"><div><h1>Harbour wall repaired</h1></div></div>'
            + css + '<p class="meta"><span>By Ann Lee</span> <time datetime="2025-10-20">Oct 20, 2025</time></p>'
            + BODY_TEXT + "</div></body></html>")
    m = extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2025-10-20", "page text")
    assert m["authors"] == ["Ann Lee"]


def test_nested_elements_of_the_byline_zone_count_their_text_once():
    # 20 nested containers of one short line: read as 20 copies, its text would pass the
    # 2,000 characters bound of the extensive search; it is one line of 125 characters.
    line = ("<span>By Ann Lee</span> <span>Published on Oct 21, 2025</span> "
            "<span>Filed under harbour works and the coastal defences of the town, four minutes to read</span>")
    page = ('<html><body><div id="page"><div class="hero"><div><h1>Harbour wall repaired</h1></div></div>'
            + "<div>" * 20 + line + "</div>" * 20 + BODY_TEXT + "</div></body></html>")
    m = extract_metadata(page, url="https://news.example/harbour", headline="Harbour wall repaired")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2025-10-21", "page text")


def test_a_month_and_year_alone_next_to_the_headline_gives_no_day():
    # htmldate's extensive search completes "03/2020" to 2020-03-01: a day the page does
    # not show.
    body = "<header><h1>Harbour wall repaired</h1><p>Updated 03/2020 · 4 min read</p></header>"
    m = extract_metadata(_page("", body), url="https://c.example/wall", headline="Harbour wall repaired")
    assert m["date_published"] is None
    # With the day, the date stands.
    m = extract_metadata(_page("", body.replace("03/2020", "March 12, 2020")), url="https://c.example/wall",
                         headline="Harbour wall repaired")
    assert m["date_published"] == "2020-03-12"


# -- the date gate (scrapy_cepr.core.dates): a date read from the page's text -------------

GATE_PARA = ("<p>The council's engineers finished the harbour wall on Friday after eleven weeks of work, "
             "and the fishing boats returned to their moorings the same evening. Residents watched from the "
             "quay as the last stones were set in place by the crew.</p>")
GATE_URL = "https://coastcourier.example/news/harbour-wall"


def _long_article(dated: str = "", after: str = "", aside: str = "") -> str:
    """A long article page that declares no date (no structured data, no ``<meta>``, no
    date in the URL): *dated* after its second paragraph, *after* after the article,
    *aside* beside it."""
    return ("<html><head><title>Harbour wall repaired | Coast Courier</title></head><body>"
            '<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>'
            "<main><article><h1>Harbour wall repaired</h1>" + GATE_PARA * 2 + dated + GATE_PARA * 12
            + "</article>" + after + aside + "</main><footer><p>© 2024 Coast Courier</p></footer></body></html>")


def _gated(page: str) -> tuple[str | None, str | None]:
    m = extract_metadata(page, url=GATE_URL, headline="Harbour wall repaired")
    return m["date_published"], m["sources"].get("date_published")


def test_a_date_written_below_the_article_is_found_by_the_page_search():
    # Outside the headline's surroundings (after the article element): only htmldate's
    # search of the whole page finds it, and the gate keeps it (shown in the main text, not
    # in a list or an aside).
    page = _long_article(after="<p>Published: 2025-03-14</p>")
    assert _gated(page) == ("2025-03-14", "page search")
    m = extract_metadata(page, url=GATE_URL, headline="Harbour wall repaired")
    assert m["confidence"]["date_published"] < 0.5  # a searched date is trusted less than a declared one


def test_a_date_in_words_only_is_not_searched_for():
    # htmldate's fast mode reads no month names in free text, and its extensive search is
    # not used on the whole page (docs/measurements.md, "The date gate"): no date.
    assert _gated(_long_article(after="<p>Published 14 March 2025</p>")) == (None, None)


def test_the_gate_abstains_on_a_sidebar_of_dated_teasers():
    teasers = "<aside><h3>Latest</h3><ul>" + "".join(
        f'<li><a href="/news/{i}">Story number {i} of the week</a> '
        f'<time datetime="2025-01-1{i}">1{i} January 2025</time></li>' for i in range(8)) + "</ul></aside>"
    assert _gated(_long_article(aside=teasers)) == (None, None)


def test_the_gate_abstains_on_comment_dates():
    comments = "<section><h2>Comments</h2><ol>" + "".join(
        f'<li><p>Reader {i} wrote on <time datetime="2025-04-0{i + 1}">April {i + 1}, 2025</time>:</p>'
        "<p>Good to see the boats back.</p></li>" for i in range(6)) + "</ol></section>"
    assert _gated(_long_article(after=comments)) == (None, None)


def test_the_gate_abstains_on_a_copyright_year():
    # "© 2024" is a year, not a day the page shows: no date.
    assert _gated(_long_article()) == (None, None)


def test_the_gate_features_are_named_and_finite_where_they_apply():
    from scrapy_cepr.core.dates import FEATURE_NAMES, load_model
    from scrapy_cepr.core.metadata import _parse, _read_metadata

    page = _long_article(after="<p>Published: 2025-03-14</p>")
    _m, candidate = _read_metadata(page, url=GATE_URL, headline="Harbour wall repaired", gate=False)
    assert candidate is not None and candidate.day == "2025-03-14" and candidate.source == "fast"
    x = dict(zip(FEATURE_NAMES, candidate.features, strict=True))
    assert x["shown"] == 1 and x["in_aside"] == 0 and x["in_list"] == 0 and x["in_article"] == 1
    assert 2000 < x["from_headline"] < 5000 and x["headline_found"] == 1  # below the article's 14 paragraphs
    assert load_model().num_features == len(FEATURE_NAMES)
    assert _parse(page) is not None
