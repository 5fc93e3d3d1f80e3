"""Body formats: ``body_html`` (clean, safe HTML of the kept text nodes) and
``body_markdown`` (from it, by markdownify), lazily on :class:`Extraction`, eagerly in the
worker, and as item fields through the pipeline (``CEPR_BODY_FORMATS``)."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

import lxml.html
import numpy as np
import pytest
from browser import method_params

from scrapy_cepr import METHOD_NAMES, extract
from scrapy_cepr.core.formats import (
    _BLOCK_OUT,
    ALLOWED_ATTRIBUTES,
    ALLOWED_TAGS,
    body_html,
    html_to_markdown,
    lines_html,
    safe_url,
    text_slots,
)
from scrapy_cepr.core.page import Page
from scrapy_cepr.options import ExtractOptions
from scrapy_cepr.settings import CEPRConfig
from scrapy_cepr.worker import extract_page

FIXTURES = Path(__file__).parent / "fixtures"
HOSTILE = (FIXTURES / "formats_hostile.html").read_bytes()
HOSTILE_URL = "https://gazette.example/news/2024/keepers-return"
TEXT_NODE_METHODS = [m for m in METHOD_NAMES if not m.startswith("cetr")]


def _blocks(html: str) -> list:
    return [b for b in lxml.html.fragments_fromstring(html) if not isinstance(b, str)] if html else []


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


# -- safety ------------------------------------------------------------------------------


@pytest.mark.parametrize("method", method_params(METHOD_NAMES))
def test_hostile_markup_leaves_no_script_handler_style_or_javascript_url(method):
    html = extract(HOSTILE, url=HOSTILE_URL, method=method).body_html
    assert html  # every method keeps the story's paragraphs
    lowered = html.lower()
    for bad in ("<script", "onerror", "onclick", "onmouseover", "onload", "javascript:", "style", "<iframe",
                "data:", "alert(", "document.cookie", "evil.example", "ads.example"):
        assert bad not in lowered, (method, bad)
    # Only allow-listed elements and attributes survive.
    for block in _blocks(html):
        for el in block.iter():
            assert el.tag in ALLOWED_TAGS, el.tag
            assert set(el.attrib) <= set(ALLOWED_ATTRIBUTES.get(el.tag, ())), (el.tag, dict(el.attrib))


def test_links_and_images_are_absolute_against_base_href():
    # <base href="https://gazette.example/news/2024/"> beats the page URL's directory.
    r = extract(HOSTILE, url="https://other.example/x/y", method="setpr")
    doc = lxml.html.fragment_fromstring(r.body_html, create_parent="div")
    hrefs = [a.get("href") for a in doc.iter("a")]
    assert "https://gazette.example/news/2024/keepers.html" in hrefs
    assert "mailto:plans@gazette.example" in hrefs
    # The javascript: and data: links keep their text but lose the element.
    assert all(h for h in hrefs)
    assert "was not taken lightly" in doc.text_content() and "a summary" in doc.text_content()
    [img] = list(doc.iter("img"))
    assert img.get("src") == "https://gazette.example/news/2024/images/lighthouse.jpg"
    assert img.get("alt") == "The lighthouse at dusk"
    figure = img.getparent()
    assert figure.tag == "figure" and figure.find("figcaption").text.startswith("The lighthouse at dusk, seen")


@pytest.mark.parametrize(
    ("value", "base", "expected"),
    [
        ("keepers.html", "https://g.example/news/", "https://g.example/news/keepers.html"),
        ("//cdn.example/a.jpg", "https://g.example/", "https://cdn.example/a.jpg"),
        ("JaVaScRiPt:alert(1)", "https://g.example/", None),
        (" java\tscript:alert(1)", "https://g.example/", None),
        ("vbscript:msgbox(1)", None, None),
        ("data:image/png;base64,AAAA", "https://g.example/", None),
        ("mailto:a@b.example", None, "mailto:a@b.example"),
        ("relative/only.html", None, "relative/only.html"),  # no URL, no <base>: stays relative
    ],
)
def test_safe_url(value, base, expected):
    assert safe_url(value, base) == expected


# -- structure ---------------------------------------------------------------------------


def test_nce_keeps_the_whole_story_with_its_structure():
    # NCE keeps every block of this page's story (and the menu/footer link lines), so its
    # body_html shows each structure of the allow-list once.
    html = extract(HOSTILE, url=HOSTILE_URL, method="nce").body_html
    tags = [b.tag for b in _blocks(html)]
    for tag in ("h1", "p", "figure", "ul", "h2", "table", "blockquote"):
        assert tag in tags, tag
    table = lxml.html.fragment_fromstring(html, create_parent="div").find(".//table")
    assert [c.text for c in table.iter("th", "td")] == [
        "Item, per year", "Cost, in pounds", "Two keepers' salaries, with housing", "64,000",
        "Maintenance of the radar mast, and spares", "12,500"]
    items = [li.text for li in lxml.html.fragment_fromstring(html, create_parent="div").iter("li")]
    assert items[0] == "checking the radar mast and the fog signal every morning, before nine;"
    assert len(items) == 3


@pytest.mark.parametrize("method", method_params(TEXT_NODE_METHODS))
def test_body_html_holds_exactly_the_words_of_the_body(method):
    # Same kept text nodes, so the same words in the same order, for every method whose
    # units are text nodes.
    for path in [FIXTURES / "formats_hostile.html", FIXTURES / "article_basic.html",
                 *sorted((Path(__file__).parents[1] / "example_project/site/articles").glob("*.html"))]:
        r = extract(path.read_bytes(), url="http://site.example/a/b.html", method=method)
        text = " ".join(t for b in _blocks(r.body_html) for t in b.itertext())
        # Compared without word breaks: the body joins adjacent text nodes with a space,
        # HTML keeps minified markup as written ("Marsh</span><span>2 July").
        assert "".join(_words(text)) == "".join(_words(r.body)), (method, path.name)


def test_blocks_and_inline_runs_by_hand():
    # Text nodes: "Menu"(0) "Lead"(1) "One"(2) "two"(3) "."(4) "Item"(5) "Tail"(6) "Foot"(7)
    page = Page.from_html('<body><div><a href="/">Menu</a></div><div class="s">Lead <span>One</span> '
                          '<b>two</b>.<ul><li>Item</li></ul>Tail</div><p>Foot</p></body>', url="http://a.example/")
    assert [page.texts[i] for i in range(len(page))] == ["Menu", "Lead", "One", "two", ".", "Item", "Tail", "Foot"]
    keep = np.array([False, True, True, True, True, True, True, False])
    assert body_html(page, keep) == "<p>Lead One <b>two</b>.</p>\n<ul><li>Item</li></ul>\n<p>Tail</p>"


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<section>Lead text<span><p>Inner para</p></span></section>", "<p>Lead text</p>\n<p>Inner para</p>"),
        ("<div>Lead text<a href='http://x.example/'><p>Inner para</p></a></div>",
         '<p>Lead text</p>\n<a href="http://x.example/"><p>Inner para</p></a>'),
        ("<div><span>Only <p>Inner para</p></span></div>", "<p>Only</p>\n<p>Inner para</p>"),
        ("<article><span>x<p>Inner para</p>y</span></article>", "<p>x</p>\n<p>Inner para</p>\n<p>y</p>"),
        # An inline element around a block is unwrapped (its emphasis is lost, its words stay).
        ("<div><b>Lead<ul><li>Item</li></ul></b> tail</div>", "<p>Lead</p>\n<ul><li>Item</li></ul>\n<p>tail</p>"),
    ],
)
def test_a_block_inside_inline_markup_is_not_nested_in_a_paragraph(html, expected):
    # A container whose block sits inside an inline element (<span>, <a>, <b>): the loose
    # text around it is a paragraph of its own, never a <p> holding a <p> or a list.
    page = Page.from_html(f"<body>{html}</body>", url="http://a.example/")
    out = body_html(page, np.ones(len(page.texts), dtype=bool))
    doc = lxml.html.fragment_fromstring(out, create_parent="div")
    assert not [p for p in doc.iter("p") if any(d.tag in _BLOCK_OUT for d in p.iterdescendants())], out
    assert out == expected


def test_text_after_a_line_break_between_blocks_is_kept():
    # A run of loose content that is a <br> and its tail is text, not an empty line break.
    page = Page.from_html("<body><div><p>Para one.</p><br>Text after a break.<h2>Head</h2></div></body>")
    assert body_html(page, [True, True, True]) == "<p>Para one.</p>\n<p><br>Text after a break.</p>\n<h2>Head</h2>"


def test_dropped_nodes_inside_a_kept_block_are_blanked_and_tails_kept():
    page = Page.from_html("<body><p>Kept <a href='/ad'>Sponsored</a> tail kept.</p></body>", url="http://a.example/")
    assert page.texts == ["Kept", "Sponsored", "tail kept."]
    assert body_html(page, [True, False, True]) == "<p>Kept tail kept.</p>"  # whitespace runs collapsed


def test_image_in_a_block_without_kept_text_is_dropped():
    page = Page.from_html('<body><div><img src="/ad.gif"><a href="/">Ad</a></div>'
                          '<p><img src="/in.jpg">Story text.</p></body>', url="http://a.example/")
    html = body_html(page, [False, True])
    assert html == '<p><img src="http://a.example/in.jpg">Story text.</p>'


def test_lazy_images_use_data_src_and_skip_data_urls():
    page = Page.from_html('<body><p><img src="data:image/gif;base64,R0lG" data-src="/real.jpg" alt="x">'
                          'Text.</p></body>', url="https://a.example/s/")
    assert body_html(page, [True]) == '<p><img src="https://a.example/real.jpg" alt="x">Text.</p>'


def test_text_slots_match_the_page_models_owners():
    page = Page.from_html(HOSTILE)
    slots = text_slots(page.root.find("body"))
    assert len(slots) == len(page)
    assert all((el.getparent() if tail else el) is owner for (el, tail), owner in zip(slots, page.owners))


def test_owner_based_slots_equal_the_tree_walk():
    from scrapy_cepr.core.formats import _slots_from_owners

    for path in [FIXTURES / "formats_hostile.html",
                 *sorted((Path(__file__).parents[1] / "example_project/site/articles").glob("*.html"))]:
        page = Page.from_html(path.read_bytes())
        assert _slots_from_owners(page) == text_slots(page.root.find("body")), path.name


def test_bad_mask_is_a_clear_error():
    page = Page.from_html("<body><p>One.</p></body>")
    with pytest.raises(ValueError, match="one entry per text node"):
        body_html(page, [True, False])


def test_empty_body_gives_empty_formats():
    r = extract("<html><body></body></html>")
    assert (r.body_html, r.body_markdown) == ("", "")


@pytest.mark.parametrize("method", method_params(METHOD_NAMES))
def test_control_characters_do_not_break_the_formats(method):
    # libxml2 keeps U+0008 and other XML-incompatible characters in text and attributes;
    # lxml refuses to assign them. body works, and so must body_html and body_markdown:
    # a whitespace control becomes a space, the others are dropped.
    story = "".join(f"<p>Paragraph {i} of the story, with enough words to be kept by every method here.</p>"
                    for i in range(6))
    page = (f'<html><head><title>Storm\x08 report</title></head><body><article><h1>Storm report</h1>{story}'
            f'<p>Back\x08space, form\x0cfeed, unit\x1fseparator and <a href="/x\x08y" title="t\x08">a link</a>'
            f' <img src="/i.png" alt="a\x08b"> in one paragraph of the story.</p>{story}</article></body></html>')
    r = extract(page, url="http://a.example/s/", method=method, **({"styled_html": True} if method == "wang2009" else {}))
    assert r.body_html and r.body_markdown
    if method == "wang2009":
        assert "separator" in r.body_styled_html
    if "separator" in r.body:
        assert "separator" in r.body_html and "separator" in r.body_markdown
    if method == "setpr":
        assert "<p>Backspace, form feed, unit separator and <a " in r.body_html
        assert "Backspace, form feed, unit separator and [a link](" in r.body_markdown
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", r.body_html + r.body_markdown)


@pytest.mark.parametrize("method", [m for m in METHOD_NAMES if m != "wang2009"])
def test_noframes_and_noembed_are_not_content(method):
    # libxml2 reads <noframes>/<noembed> as raw text, so their markup would come out as
    # literal tags; a browser with frames and plug-ins does not render them.
    page = HOSTILE.decode("utf-8").replace(
        "</h1>", "</h1><noframes><p>Your browser <b>lacks</b> frames, a pity.</p></noframes>", 1).replace(
        "</p>", "<noembed><p>No <i>plug-in</i> for this, sorry.</p></noembed></p>", 2)
    r = extract(page, url=HOSTILE_URL, method=method)
    assert "keepers" in r.body
    for text in (r.body, r.body_html, r.body_markdown):
        assert "frames" not in text and "plug-in" not in text and "&lt;" not in text and "<b>" not in text


def test_line_methods_give_escaped_paragraphs():
    r = extract(HOSTILE, url=HOSTILE_URL, method="cetr")
    assert r.body_html == lines_html(r.body)
    assert lines_html("a < b & c\n\nd") == "<p>a &lt; b &amp; c</p>\n<p>d</p>"


# -- markdown ----------------------------------------------------------------------------


def test_markdown_has_headings_links_images_lists_and_tables():
    md = extract(HOSTILE, url=HOSTILE_URL, method="nce").body_markdown
    assert "# Lighthouse keepers return to Fenwick Point" in md
    assert "## What it costs" in md
    assert "[full report](https://gazette.example/news/2024/keepers.html)" in md
    assert "![The lighthouse at dusk](https://gazette.example/news/2024/images/lighthouse.jpg)" in md
    assert "- checking the radar mast" in md
    assert "| Two keepers' salaries, with housing | 64,000 |" in md
    assert "> \"It is a return" in md
    assert "javascript" not in md.lower() and "<" not in md


# -- markdown safety ---------------------------------------------------------------------
# The Markdown is rendered here by markdown-it-py (its default preset and "commonmark", both
# with raw HTML on) and python-markdown, with their defaults, and the HTML they produce is
# checked with lxml: nothing live may come out of text, and every URL is http(s)/mailto.

#: Text a story may show (escaped in its HTML), each of which a renderer would turn into
#: markup if written to Markdown as is.
XSS_TEXTS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    '<iframe src="javascript:alert(1)"></iframe>',
    "<body onload=alert(1)>",
    '<a href="javascript:alert(1)">click</a>',
    '<a href="&#x6A;avascript:alert(1)">click</a>',
    "<a href=x onmouseover=alert(1)>hover</a>",
    "<details open ontoggle=alert(1)>",
    "<math><mtext><img src=x onerror=alert(1)></mtext></math>",
    '<object data="javascript:alert(1)"></object>',
    '<embed src="data:text/html,<script>alert(1)</script>">',
    '<form action="javascript:alert(1)"><button>go</button></form>',
    "<input autofocus onfocus=alert(1)>",
    "<style>@import 'http://evil.example/x.css';</style>",
    '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
    '<base href="javascript:alert(1)//">',
    '<div style="background:url(javascript:alert(1))">x</div>',
    "<x-tag onclick=alert(1)>custom</x-tag>",
    "<div onmouseover=alert(1)>block</div>",
    "<pre><script>alert(1)</script></pre>",
    "<scr<script>ipt>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "<!-- a comment --><script>alert(1)</script>",
    "<!--<img src=x onerror=alert(1)>-->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "<?php system('id'); ?>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](vbscript:msgbox(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](jav&#x09;ascript:alert(1))",
    "[click](javascript&#58;alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](http://evil.example/)",
    "![x](javascript:alert(1))",
    '![x](http://evil.example/p.gif "onerror=alert(1)")',
    "<javascript:alert(1)>",
    "<http://evil.example/>",
    "<mailto:a@evil.example>",
    "[x]: javascript:alert(1)",
    "[x][y] and [y]: http://evil.example/",
    "`<img src=x onerror=alert(1)>`",
    "```<script>alert(1)</script>```",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "\\<script>alert(1)\\</script>",
    "Wow![x](http://evil.example/p.gif)",
]

#: Elements a renderer may produce from our Markdown (plus the wrapper ``div``).
_RENDERED_TAGS = {"div", "p", "a", "img", "em", "strong", "code", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "ul",
                  "ol", "li", "blockquote", "table", "thead", "tbody", "tr", "th", "td", "br", "hr", "s", "del"}


def _renderers():
    mdit = pytest.importorskip("markdown_it", reason="needs markdown-it-py: pip install 'scrapy-cepr[test]'")
    markdown = pytest.importorskip("markdown", reason="needs Markdown: pip install 'scrapy-cepr[test]'")
    return {"markdown-it": mdit.MarkdownIt().render, "markdown-it commonmark": mdit.MarkdownIt("commonmark").render,
            "python-markdown": markdown.markdown}


def _rendered(md: str) -> dict:
    """*md* rendered by each renderer, as an lxml tree under a ``div``."""
    return {name: lxml.html.fragment_fromstring(render(md) or "<p></p>", create_parent="div")
            for name, render in _renderers().items()}


def _assert_inert(doc, where) -> None:
    for el in doc.iter():
        assert isinstance(el.tag, str), (where, "comment or processing instruction", el)
        assert el.tag in _RENDERED_TAGS, (where, el.tag)
        assert not any(a.lower().startswith("on") for a in el.attrib), (where, el.tag, dict(el.attrib))
        for attr in ("href", "src"):
            if el.get(attr) is not None:
                assert re.match(r"(https?://|mailto:)", el.get(attr)), (where, el.tag, el.get(attr))


def _story_with(texts: list[str]) -> str:
    paragraphs = "".join(f"<p>Before {html_lib.escape(t)} after.</p>" for t in texts)
    return f"<html><body><article><h1>Headline</h1>{paragraphs}</article></body></html>"


@pytest.mark.parametrize("text", XSS_TEXTS)
def test_markdown_of_text_renders_as_that_text(text):
    # The text of a paragraph stays text after Markdown rendering: no element, link or
    # image is made from it, and the rendered paragraph shows the text as written.
    # Twice: inside a sentence, and as a whole paragraph (at the start of a line, where
    # HTML blocks and link reference definitions begin).
    page = Page.from_html(_story_with([text]).replace("<p>", f"<p>{html_lib.escape(text)}</p><p>", 1),
                          url="https://news.example/a/")
    html = body_html(page, np.ones(len(page.texts), dtype=bool))
    md = html_to_markdown(html)
    for name, doc in _rendered(md).items():
        _assert_inert(doc, (name, md))
        assert [el.tag for el in doc.iter() if el.tag not in ("div", "p", "h1")] == [], (name, md)
        shown = [" ".join(p.text_content().split()) for p in doc.iter("p")]
        assert shown == [" ".join(text.split()), " ".join(f"Before {text} after.".split())], (name, md)


def test_markdown_of_the_whole_xss_page_through_extract():
    # End to end: every vector is a paragraph of the story, the method keeps them, and
    # the Markdown renders to the story's text only.
    r = extract(_story_with(XSS_TEXTS), url="https://news.example/a/", method="setpr")
    assert [" ".join(f"Before {t} after.".split()) for t in XSS_TEXTS] == r.body.split("\n")[-len(XSS_TEXTS):]
    for name, doc in _rendered(r.body_markdown).items():
        _assert_inert(doc, name)
        assert doc.find(".//a") is None and doc.find(".//img") is None, name
        assert " ".join(doc.text_content().split()) == " ".join(r.body.split()), name


@pytest.mark.parametrize(
    "html",
    [
        '<p><a href="javascript:alert(1)">click</a></p>',
        '<p><a href="vbscript:msgbox(1)">click</a> and <a href="data:text/html,x">data</a></p>',
        '<p><a href=" jav&#x09;ascript:alert(1)">click</a></p>',
        '<p><a href="file:///etc/passwd">file</a> <a href="relative/x.html">relative</a></p>',
        '<p><img src="javascript:alert(1)" alt="x"></p>',
        '<p><img src="data:image/svg+xml,&lt;svg onload=alert(1)&gt;" alt="pic"></p>',
        '<p><img src="http://ok.example/i.png" alt="](javascript:alert(1))"></p>',
        '<p><img src="http://ok.example/i.png" alt="x](javascript:alert(1)) ![y"></p>',
        '<p><img src="http://ok.example/i.png" alt="&lt;img src=x onerror=alert(1)&gt;"></p>',
        '<p><img src="http://ok.example/i.png" alt="a" title=\'" onerror="alert(1)\'></p>',
        '<p><a href="http://ok.example/" title=\'x") [y](javascript:alert(1)\'>link</a></p>',
        '<p><a href="http://ok.example/" title="&lt;script&gt;alert(1)&lt;/script&gt;">link</a></p>',
        '<p><a href="http://ok.example/a b)(c)[d]&quot;<e>">odd url</a></p>',
        '<p><a href="http://ok.example/?a=1&amp;lt=2&amp;b_c_=3*4*">query</a></p>',
        '<p><a href="http://ok.example/">&lt;img src=x onerror=alert(1)&gt;</a></p>',
        '<p>Wow!<a href="http://ok.example/">x</a> and <b>[y</b>](javascript:alert(1))</p>',
        '<p><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></p>',
        '<p><code>`&lt;img src=x onerror=alert(1)&gt;</code> and <code>a\\</code> <code>``</code></p>',
        "<pre>```\n&lt;script&gt;alert(1)&lt;/script&gt;\n\n&lt;img src=x onerror=alert(1)&gt;\n```</pre>",
        "<pre>~~~\n&lt;script&gt;alert(1)&lt;/script&gt;\n~~~</pre>",
        "<ul><li>item<pre>&lt;script&gt;alert(1)&lt;/script&gt;\n\n&lt;iframe src=x&gt;</pre></li></ul>",
        "<table><tr><th>h</th></tr><tr><td><pre>&lt;script&gt;alert(1)&lt;/script&gt;</pre></td></tr></table>",
        "<h2><pre>&lt;img src=x onerror=alert(1)&gt;</pre></h2>",
        "<blockquote><pre>&lt;script&gt;alert(1)&lt;/script&gt;</pre></blockquote>",
    ],
)
def test_markdown_of_html_is_inert_when_rendered(html):
    # html_to_markdown on its own (it is public): bad URLs lose the link or image and keep
    # the text; alt and title text cannot break out; code stays code.
    md = html_to_markdown(html)
    for name, doc in _rendered(md).items():
        _assert_inert(doc, (name, md))
        text = doc.text_content()
        if "alert" in lxml.html.fragment_fromstring(html, create_parent="div").text_content():
            assert "alert(1)" in text or any("alert(1)" in (el.get("alt") or "") + (el.get("title") or "")
                                             for el in doc.iter()), (name, md)


def test_markdown_links_keep_their_text_and_only_safe_targets():
    md = html_to_markdown('<p><a href="javascript:alert(1)">Bad</a>, <a href="https://ok.example/a?x=1&amp;y=2">'
                          'good</a>, <a href="mailto:m@ok.example">mail</a>, <a href="/rel">rel</a>.</p>'
                          '<p><img src="file:///etc/x.png" alt="Local"> <img src="https://ok.example/i.png" alt="Fine"></p>')
    assert md == ("Bad, [good](https://ok.example/a?x=1&y=2), [mail](mailto:m@ok.example), rel.\n\n"
                  "Local ![Fine](https://ok.example/i.png)")
    for name, doc in _rendered(md).items():
        assert [a.get("href") for a in doc.iter("a")] == ["https://ok.example/a?x=1&y=2", "mailto:m@ok.example"], name
        assert [i.get("src") for i in doc.iter("img")] == ["https://ok.example/i.png"], name


def test_markdown_escapes_do_not_change_the_shown_text():
    text = r"a < b > c [d] (e) `f` \g & h &amp; i &copy; *j* #k !"
    md = html_to_markdown(f"<p>{html_lib.escape(text)}</p>")
    for name, doc in _rendered(md).items():
        assert doc.text_content().strip() == text, (name, md)


# -- laziness, memory, worker ------------------------------------------------------------


def test_formats_are_computed_on_first_access_only():
    r = extract(HOSTILE, url=HOSTILE_URL)
    assert "body_html" not in r.__dict__ and "body_markdown" not in r.__dict__
    md = r.body_markdown
    assert "body_html" in r.__dict__ and r.body_markdown is md
    # The result keeps the decoded HTML (for the lazy formats), not the lxml tree.
    assert isinstance(r.source, str) and not any(isinstance(v, Page) for v in r.__dict__.values())


@pytest.mark.parametrize("method", method_params(TEXT_NODE_METHODS))
def test_worker_and_lazy_property_agree(method):
    lazy = extract(HOSTILE, url=HOSTILE_URL, method=method)
    eager = extract_page(HOSTILE, HOSTILE_URL, ExtractOptions(method, formats=("html", "markdown")))[0]
    assert (eager.title, eager.body) == (lazy.title, lazy.body)
    assert eager.extras["body_html"] == lazy.body_html
    assert eager.extras["body_markdown"] == lazy.body_markdown


def test_worker_sends_back_only_what_is_asked():
    result, _ = extract_page(HOSTILE, HOSTILE_URL, ExtractOptions("setpr"))
    assert result.extras == {} and result.title is not None and result.page_type is not None
    result, _ = extract_page(HOSTILE, HOSTILE_URL, ExtractOptions("setpr", formats=("markdown",)))
    assert sorted(result.extras) == ["body_markdown"]


def test_setting_body_formats():
    assert CEPRConfig.from_settings({}).extra_formats == ()
    config = CEPRConfig.from_settings({"CEPR_BODY_FORMATS": '["text", "html", "markdown"]'})
    assert config.body_formats == ("text", "html", "markdown") and config.extra_formats == ("html", "markdown")
    assert CEPRConfig.from_settings({"CEPR_BODY_FORMATS": "text,markdown"}).extra_formats == ("markdown",)
    with pytest.raises(ValueError, match="CEPR_BODY_FORMATS must be a non-empty list of text, html, markdown"):
        CEPRConfig.from_settings({"CEPR_BODY_FORMATS": ["text", "pdf"]})
    with pytest.raises(ValueError, match="CEPR_BODY_FORMATS must be a list of names"):
        CEPRConfig.from_settings({"CEPR_BODY_FORMATS": "[broken"})
    with pytest.raises(ValueError, match="CEPR_BYLINE must be one of keep, move"):
        CEPRConfig.from_settings({"CEPR_BYLINE": "drop"})


def test_pipeline_writes_the_asked_formats():
    from test_pipeline import URL, ArticleItem, Harness, html_response

    h = Harness(CEPR_BODY_FORMATS=["text", "html", "markdown"])
    [item] = h.run(({"url": URL}, html_response()))
    assert item["body_html"].startswith("<p>The storm, which formed on Monday")
    assert item["body_markdown"].startswith("The storm, which formed on Monday")
    assert item["body_html"].count("<p>") == item["body"].count("\n") + 1
    # A scrapy.Item without the field is a configuration error naming it and the setting
    # (logged once; the item is dropped and the spider closed, see test_pipeline).
    from scrapy.exceptions import DropItem

    h = Harness(CEPR_BODY_FORMATS=["text", "html"])
    with pytest.raises(DropItem, match=r"has no field 'body_html' \(CEPR_BODY_FORMATS\)"):
        h.run((ArticleItem(url=URL), html_response()))
    # Default: text only, no new field.
    [item] = Harness().run(({"url": URL}, html_response()))
    assert "body_html" not in item and "body_markdown" not in item and "metadata" not in item


def test_base_href_cannot_switch_to_a_local_or_script_scheme():
    for base in ("file:///etc/", "javascript:alert(1)//"):
        page = Page.from_html(f'<head><base href="{base}"></head><body><p><a href="x">Link</a> text.</p></body>',
                              url="https://a.example/s/")
        assert body_html(page, [True, True]) == '<p><a href="https://a.example/s/x">Link</a> text.</p>'


# -- command line ------------------------------------------------------------------------


def _cli(capsys, *argv):
    from scrapy_cepr.cli import main

    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_output_formats(capsys):
    path = str(FIXTURES / "formats_hostile.html")
    status, html, _ = _cli(capsys, "extract", path, "--method", "nce", "--output-format", "html")
    assert status == 0 and html.startswith("<!DOCTYPE html>")
    assert "<h1>Lighthouse keepers return to Fenwick Point</h1>" in html and "<table>" in html
    assert "javascript:" not in html and "onerror" not in html
    status, md, _ = _cli(capsys, "extract", path, "--method", "nce", "--output-format", "markdown")
    assert md.startswith("# Lighthouse keepers return to Fenwick Point\n\n")
    assert "](https://gazette.example/news/2024/keepers.html)" in md
    status, out, _ = _cli(capsys, "extract", str(FIXTURES / "meta_structured.html"), "--output-format", "json",
                          "--with-metadata", "--body-formats", "html")
    data = __import__("json").loads(out)
    assert data["metadata"]["authors"] == ["Iona MacLeod", "Sam Reid"] and data["body_html"].startswith("<p>")
    status, txt, _ = _cli(capsys, "extract", str(FIXTURES / "meta_structured.html"), "--with-metadata")
    assert txt.startswith('---\nheadline: "Ferry timetable changes for winter"\nauthors: "Iona MacLeod; Sam Reid"\n')


def test_cli_many_inputs_input_dir_parallel_and_output_dir(capsys, tmp_path):
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    for name in ("formats_hostile.html", "meta_plain.html"):
        (src / name).write_bytes((FIXTURES / name).read_bytes())
    (src / "sub" / "meta_structured.html").write_bytes((FIXTURES / "meta_structured.html").read_bytes())
    (src / "broken.html").write_bytes(b"%PDF-1.7 not a page")
    (src / "notes.txt").write_text("not an input")
    out_dir = tmp_path / "out"
    status, out, err = _cli(capsys, "extract", "--input-dir", str(src), "--output-dir", str(out_dir),
                            "--output-format", "markdown", "--parallel", "2", "-q")
    assert status == 1  # one input failed: reported, the others written
    assert "broken.html" in err and "PDF" in err and out == ""
    assert sorted(p.name for p in out_dir.iterdir()) == ["formats_hostile.md", "meta_plain.md", "meta_structured.md"]
    assert (out_dir / "meta_plain.md").read_text().startswith("# Le marché couvert rouvre ses portes")
    # Without --output-dir: JSON lines on stdout, in input order.
    status, out, _ = _cli(capsys, "extract", str(src / "meta_plain.html"), str(src / "formats_hostile.html"),
                          "--output-format", "json", "-q")
    lines = out.splitlines()
    assert status == 0 and len(lines) == 2
    assert [__import__("json").loads(x)["title"] for x in lines] == [
        "Le marché couvert rouvre ses portes", "Lighthouse keepers return to Fenwick Point"]


def test_cli_bad_options_exit_2(capsys):
    path = str(FIXTURES / "meta_plain.html")
    for argv in (["--parallel", "0"], ["--body-formats", "pdf"], ["--output-format", "docx"]):
        with pytest.raises(SystemExit) as exc:
            _cli(capsys, "extract", path, *argv)
        assert exc.value.code == 2, argv
    with pytest.raises(SystemExit) as exc:
        _cli(capsys, "extract")
    assert exc.value.code == 2


def test_lazy_formats_work_after_the_page_is_freed():
    # The result keeps the decoded HTML, not the Page: the page (and its lxml tree) is
    # freed, and body_html parses the kept source again on first access.
    import gc
    import weakref

    from scrapy_cepr.methods.cepr import CEPRParams, run

    page = Page.from_html(HOSTILE.decode("utf-8"), url=HOSTILE_URL)
    alive = weakref.ref(page)
    result = run(page, CEPRParams())
    del page
    gc.collect()
    assert alive() is None
    assert result.source.startswith("<!DOCTYPE html>")
    assert result.body_html == extract(HOSTILE, url=HOSTILE_URL, method="setpr").body_html
