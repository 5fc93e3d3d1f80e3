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


def _title_and_index(html: str) -> tuple[str | None, int | None]:
    result = extract(html)
    return result.title, result.nodes.title_index


def test_heading_with_inline_markup_is_joined():
    html = "<html><head><title>A big day</title></head><body><h1>A <em>big</em> day</h1>" + BODY + "</body></html>"
    assert _title_and_index(html) == ("A big day", 0)


# -- issue 20: the site's name is not part of the title ----------------------------------------

def test_site_name_is_dropped_from_the_og_title():
    html = ('<html><head><meta property="og:title" content="Best free courses | Alison">'
            '<meta property="og:site_name" content="Alison"></head><body><h2>Sign in</h2>' + BODY + "</body></html>")
    assert extract(html, url="https://alison.example/courses").title == "Best free courses"


def test_site_name_from_the_host_name_in_a_heading():
    html = ("<html><head><title>Data services</title></head><body>"
            "<h1>Data services — Acme Cloud</h1>" + BODY + "</body></html>")
    assert extract(html, url="https://www.acmecloud.example/data").title == "Data services"


def test_a_part_that_only_mentions_the_site_is_kept():
    html = ("<html><head><title>x</title></head><body>"
            "<h1>Acme Cloud outage: what went wrong at Acme Cloud last week - Acme Cloud</h1>" + BODY + "</body></html>")
    assert extract(html, url="https://acmecloud.example/x").title == "Acme Cloud outage: what went wrong at Acme Cloud last week"


def test_a_title_that_is_the_site_name_stays():
    html = '<html><head><title>Acme Cloud</title></head><body><h1>Acme Cloud</h1>' + BODY + "</body></html>"
    assert extract(html, url="https://acmecloud.example/").title == "Acme Cloud"


def test_permalink_mark_is_not_part_of_the_title():
    html = ('<html><head><title>Installation — Widgets 2.0 documentation</title></head><body>'
            '<h1>Installation<a class="headerlink" href="#installation">¶</a></h1>' + BODY + "</body></html>")
    assert extract(html).title == "Installation"
    html = '<html><head><title>Why?</title></head><body><h1>Why ?</h1>' + BODY + "</body></html>"
    assert extract(html).title == "Why ?"
    # Not a link: an emoji that ends the headline is part of it.
    html = '<html><head><title>x</title></head><body><h1>Domain controllers crash \U0001F4A5</h1>' + BODY + "</body></html>"
    assert extract(html).title == "Domain controllers crash \U0001F4A5"


def test_service_page_takes_the_head_title_and_keeps_the_heading_as_anchor():
    # Issue 20: a landing page's h1 is a slogan; WCXB's gold takes the <title> (without
    # the site name) on such pages. The heading stays the node the methods anchor on.
    from pathlib import Path

    from scrapy_cepr.core.page import Page
    from scrapy_cepr.core.pagetype import page_type
    from scrapy_cepr.core.title import pick_title

    html = (Path(__file__).parent / "fixtures" / "pagetype_service_boatyard.html").read_text("utf-8")
    html = html.replace("<h1>Boat repair and servicing</h1>", "<h1>Back on the water by Friday</h1>")
    page = Page.from_html(html, url="https://brightwater.example/services")
    assert page_type(page) == "service"
    title, index = pick_title(page)
    assert title == "Boat repair and servicing"
    assert index is not None and page.texts[index] == "Back on the water by Friday"


def test_article_page_keeps_its_single_h1():
    html = ("<html><head><title>Council news | Riverside Gazette</title></head><body><h1>Mayor resigns after vote</h1>"
            + BODY * 3 + "</body></html>")
    assert extract(html, url="https://gazette.example/news/mayor").title == "Mayor resigns after vote"


def test_controls_hidden_text_and_graphics_are_not_words_of_the_heading():
    # A "copy" button, a hidden tooltip and an SVG logo's <title> sit inside the h1; the
    # displayed headline is the heading's own words.
    html = ('<html><head><title>Crate tokio docs</title></head><body>'
            '<h1>Crate <span>tokio</span>&nbsp;<button title="Copy">Copy item path</button>'
            '<span hidden>Stay organized with collections</span>'
            '<svg><title>Artboard Created with Sketch.</title></svg></h1>' + BODY + "</body></html>")
    result = extract(html)
    assert result.title == "Crate tokio"
    assert result.nodes.title_index is not None


def test_a_headline_repeated_for_another_screen_size_is_one_h1():
    html = ('<html><head><title>Dark roast beans, whole or ground, shipped weekly</title></head><body>'
            '<div class="mobile"><h1>Dark Roast Coffee</h1></div><div class="desktop"><h1>Dark Roast Coffee</h1></div>'
            + BODY + "</body></html>")
    assert _title_and_index(html) == ("Dark Roast Coffee", 0)


def test_a_heading_in_capitals_takes_the_case_of_the_same_words_in_the_head():
    html = ('<html><head><title>Tips for Online Success | Valley College</title></head><body>'
            '<h1>TIPS FOR ONLINE SUCCESS</h1>' + BODY + "</body></html>")
    assert extract(html).title == "Tips for Online Success"
    # Other words in the head: the heading stays as written.
    html = html.replace("<h1>TIPS FOR ONLINE SUCCESS</h1>", "<h1>TIPS FOR SUCCESS ONLINE</h1>")
    assert extract(html).title == "TIPS FOR SUCCESS ONLINE"


def test_head_title_fallback_is_the_page_name_before_the_site_and_section():
    # No displayed heading matches and there is not exactly one h1: the <title> is
    # "Page | Site" (the site's name is its second, longer part) or "Page | Section | Site".
    for head, expected in (("Dental Care | Northside Family Health Clinic", "Dental Care"),
                           ("Charges | Payments API Reference | Acme", "Charges"),
                           ("Acme | Payments for the internet", "Payments for the internet")):
        html = f"<html><head><title>{head}</title></head><body>{BODY}</body></html>"
        assert extract(html, url="https://acme.example/docs/charges").title == expected


def test_og_title_fallback_drops_its_section_too():
    html = ('<html><head><meta property="og:title" content="Gardens feed the village | District">'
            "<title>x</title></head><body><h2>Latest</h2><h2>Most read</h2>" + BODY + "</body></html>")
    assert extract(html, url="https://post.example/district/1").title == "Gardens feed the village"


def test_service_page_title_is_the_page_name_of_the_head_title():
    from pathlib import Path

    from scrapy_cepr.core.page import Page
    from scrapy_cepr.core.title import pick_title

    html = (Path(__file__).parent / "fixtures" / "pagetype_service_boatyard.html").read_text("utf-8")
    html = html.replace("<h1>Boat repair and servicing</h1>", "<h1>Back on the water by Friday</h1>")
    html = html.replace("<title>", "<title>Boat repair | Hull, engine and rigging work | ", 1)
    page = Page.from_html(html, url="https://brightwater.example/services")
    assert pick_title(page)[0] == "Boat repair"


def test_the_site_name_before_the_page_name_is_known_from_the_logo_linking_home():
    # No heading and a "Site - Page" <title>: the logo, a link to the home page, names the
    # site, so the page's name is the second part.
    logo = '<a href="../index.html"><img src="/logo.gif" alt="Valley Courier Online"></a>'
    html = (f"<html><head><title>Valley Courier Online - Rail workers vote to strike</title></head><body>{logo}"
            + BODY + "</body></html>")
    assert extract(html, url="https://courier.example/news/rail.html").title == "Rail workers vote to strike"
    # A link elsewhere (another site, or a page that is not an index) names nothing.
    for href in ("https://other.example/", "../contact.html", "../index.html?page=2"):
        page = html.replace("../index.html", href)
        assert extract(page, url="https://courier.example/news/rail.html").title == "Valley Courier Online"
    # A link to the page itself is not the site's home page.
    assert extract(html, url="https://courier.example/").title == "Valley Courier Online"


def test_heading_of_digits_only_is_not_a_title():
    # A vote count or a score written as an h1 ("94") is never the headline: the one h1
    # with words is.
    html = (
        "<html><head><title>Forum</title></head><body><div><h1>94</h1><h1>94</h1></div>"
        "<h1>Scalable interpretability, end to end</h1>" + BODY + "</body></html>"
    )
    assert extract(html).title == "Scalable interpretability, end to end"


def test_invisible_characters_leave_the_title():
    # A soft hyphen (U+00AD) and a zero width no-break space (U+FEFF) render nothing.
    html = (
        "<html><head><title>Home</title></head><body><h1>Home Repair Assis\u00adtance Pro\ufeffgram</h1>"
        + BODY + "</body></html>"
    )
    assert extract(html).title == "Home Repair Assistance Program"


def test_a_site_name_h1_below_the_home_page_is_a_logo():
    # A forum thread: the one h1 is the board's logo; the <title> names the thread first,
    # "Thread / Board" (" / " separates its parts as " | " does).
    html = (
        "<html><head><title>Kernel panic after update / Newcomers corner</title></head><body>"
        "<h1>Lakeside Linux</h1><h2>Board index</h2>" + BODY + "</body></html>"
    )
    assert extract(html, url="https://bbs.lakesidelinux.example/viewtopic.php?id=7").title == (
        "Kernel panic after update"
    )
    # On the site's home page the site's name is the page's name.
    assert extract(html, url="https://bbs.lakesidelinux.example/").title == "Lakeside Linux"
