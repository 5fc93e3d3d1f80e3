"""CEPR-Typed (scrapy_cepr.methods.typed) on pages written for these tests: each page type's
assembly keeps its main content and drops its boilerplate, and SETPR's parameters act."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scrapy_cepr import extract
from scrapy_cepr.core.blocks import FEATURES
from scrapy_cepr.core.page import Page
from scrapy_cepr.methods import METHOD_NAMES, get_method
from scrapy_cepr.methods.typed import (
    MODEL_FEATURES,
    TypedParams,
    after_assembly,
    analyse,
    assemble,
    drop_repeated,
    load_model,
    loose_lines,
    story_copies,
)

FIXTURES = Path(__file__).parent / "fixtures"


def _html(name: str) -> str:
    return (FIXTURES / f"typed_{name}.html").read_text(encoding="utf-8")


def test_registered():
    assert "cepr-typed" in METHOD_NAMES
    method = get_method("cepr-typed")
    assert {"alpha", "lambda_", "radius", "edges", "page_type"} <= set(method.param_names())


def test_model_matches_features():
    model = load_model()
    assert tuple(model.feature_names) == MODEL_FEATURES
    assert model.objective == "binary"


def test_article_body_kept_comments_and_sidebar_gone():
    result = extract(_html("article"), method="cepr-typed", page_type="article")
    body = result.body
    for sentence in ("The old harbour bridge reopened", "Crews replaced the damaged beams", "During the works",
                     "It has been a hard two years", "The council said the final cost", "Traffic lights at both ends"):
        assert sentence in body
    for boilerplate in ("commute just got", "ferry was packed", "12 comments", "Most read", "Storm warning",
                        "All rights reserved", "Sport"):
        assert boilerplate not in body
    assert result.title == "Harbour bridge reopens after two years of repairs"


DEMO = Path(__file__).parent.parent / "example_project" / "site" / "articles"


@pytest.mark.parametrize("url", [None, "http://127.0.0.1:8000/articles/harbour-storm.html"])
def test_low_confidence_article_drops_comments_after_story(url):
    """A page read as most probably an article, but below ``article_confidence``, is
    assembled as the other types; the reader comments and teasers after its story stay
    out (``after_story_threshold``). ``article_confidence=1.0`` forces that path; the
    demo page with its URL has article ≈ 0.50, at ``article_confidence``."""
    html = (DEMO / "harbour-storm.html").read_bytes()
    for over in ({"article_confidence": 1.0}, {}):
        result = extract(html, url=url, method="cepr-typed", **over)
        assert result.page_type == "article"
        body = result.body
        assert "A ten-metre section of the old harbour wall" in body and "high tides expected on Thursday" in body
        for other in ("Seadog64", "crumbling for years", "hannah_b", "fundraiser"):
            assert other not in body, (over, other)
        # The teaser headline after the story: out, except on the forced path with the
        # URL, where the block classifier gives it 0.52, just above after_story_threshold
        # (the shipped models of 2026-11-27, page-type round; 0.47-0.52 over retrainings).
        if not (url and over):
            assert "Flood defences: what the plans say" not in body, over


def test_low_confidence_article_with_no_block_above_threshold_is_not_emptied(monkeypatch):
    """Most probably an article, assembled as the other types, and no block reaches
    ``threshold`` (a short story the classifier doubts): CEPR-Article's story is kept,
    assembled as an article, not "no main content found"."""
    from scrapy_cepr.methods import typed

    real = typed.predict_blocks
    monkeypatch.setattr(typed, "predict_blocks", lambda *a: np.minimum(real(*a), 0.39))
    result = extract(_html("article"), method="cepr-typed", article_confidence=1.0)
    assert result.page_type == "article"
    assert "The old harbour bridge reopened" in result.body and "Traffic lights at both ends" in result.body
    assert "ferry was packed" not in result.body and "Most read" not in result.body


def test_real_page_with_doubtful_blocks_not_emptied(corpus_dir):
    """The benchmark page of tests/test_e2e_real_pages.py that cepr-typed emptied when
    served by URL (article ≈ 0.38, every block below ``threshold``)."""
    import gzip

    sha = "f6ac15a4d98511396da23e4428deb5605422b1c8bbc8284e771f6896bdccf57f"
    html = gzip.decompress((corpus_dir / "html" / f"{sha}.html.gz").read_bytes())
    for url in (None, f"http://127.0.0.1:8000/pages/{sha}.html"):
        body = extract(html, url=url, method="cepr-typed").body
        article = extract(html, url=url, method="cepr-article").body
        assert article and len(body) >= 0.5 * len(article), url


@pytest.mark.parametrize("name", ["meta_structured.html", "typed_article.html"])
def test_article_body_excludes_headline(name):
    """The headline is the ``title``; as in CEPR-Article, the article body does not repeat
    it (``headline=True`` keeps it)."""
    html = (FIXTURES / name).read_text(encoding="utf-8")
    result = extract(html, method="cepr-typed")
    assert result.title and result.page_type == "article"
    assert not result.body.startswith(result.title)
    assert result.title not in result.body.splitlines()
    kept = extract(html, method="cepr-typed", headline=True)
    assert result.title in kept.body.splitlines()


def test_forum_posts_kept():
    body = extract(_html("forum"), method="cepr-typed", page_type="forum").body
    for post in ("My starter is about ten days old", "That smell is acetone", "A warmer spot also helps",
                 "Two feedings a day"):
        assert post in body
    for boilerplate in ("Similar threads", "Starter not rising", "Terms and rules", "Register"):
        assert boilerplate not in body


def test_listing_cards_kept_navigation_gone():
    body = extract(_html("listing"), method="cepr-typed", page_type="listing").body
    for card in ("Ridge Pro GTX", "Moorland Mid", "Fellrunner Trek", "Glen Winter", "Coastal Path", "Peak Alpine"):
        assert card in body
    for boilerplate in ("Women", "Sale", "Colour", "Brown", "Returns", "Delivery"):
        assert boilerplate not in body


def test_docs_sections_kept_toc_and_sidebar_gone():
    body = extract(_html("docs"), method="cepr-typed", page_type="documentation").body
    for section in ("tidepool reads its settings", "The default file is", "Every key can also be set",
                    "The log level defaults"):
        assert section in body
    for boilerplate in ("On this page", "Installation", "Quickstart\n", "Changelog", "static site generator"):
        assert boilerplate not in body


def test_predicted_page_type_reported():
    result = extract(_html("article"), method="cepr-typed")
    assert result.params["page_type"] in ("article", "forum", "product", "collection", "listing",
                                          "documentation", "service")
    assert "The old harbour bridge reopened" in result.body


def test_deterministic():
    html = _html("forum")
    first = extract(html, method="cepr-typed")
    second = extract(html, method="cepr-typed")
    assert first.body == second.body
    assert np.array_equal(first.nodes.keep, second.nodes.keep)
    assert first.params == second.params


def test_setpr_parameters_accepted_and_acting():
    html = _html("article")
    base = extract(html, method="cepr-typed", page_type="article")
    assert base.params["alpha"] == 0.8  # SETPR's paper value
    other = extract(html, method="cepr-typed", page_type="article", alpha=3.0, lambda_=0.0, radius=2)
    assert other.params["alpha"] == 3.0 and other.params["radius"] == 2
    assert other.tau != base.tau
    assert not np.allclose(other.nodes.h_smoothed, base.nodes.h_smoothed)
    # The block features read H' relative to τ, so the classifier sees the change.
    page = Page.from_html(html)
    col = FEATURES.index("hs_rel_max")
    x1 = analyse(page, TypedParams().article_params())[1].x[:, col]
    x2 = analyse(page, TypedParams(alpha=3.0).article_params())[1].x[:, col]
    assert not np.allclose(x1, x2)


@pytest.mark.parametrize(
    "kwargs",
    [{"threshold": 1.5}, {"article_floor": -0.1}, {"page_type": "blog"}, {"alpha": -1}, {"radius": -1},
     {"after_story_threshold": 2}, {"headline": "no"}, {"drop_repeats": "yes"}, {"drop_threads": 1},
     {"article_loose_floor": 1.5}, {"article_loose_words": -1}, {"article_loose_words": 2.5}],
)
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        get_method("cepr-typed").make_params(**kwargs)


def test_empty_page():
    result = extract("<html><body></body></html>", method="cepr-typed")
    assert result.body == ""
    assert result.method == "cepr-typed"


@pytest.mark.parametrize("name", ["article", "forum", "listing", "docs"])
def test_article_state_reused_equals_fresh(name):
    """CEPR-Article's ArticleState gives cepr-typed the same element table, records and
    repeated lines it would compute itself, and ``run`` returns ``analyse``'s extraction."""
    from scrapy_cepr.core import article
    from scrapy_cepr.core.blocks import block_ranges
    from scrapy_cepr.core.region import DomTable

    page = Page.from_html(_html(name))
    state = article.analyse(page, article.ArticleParams())
    assert state.extraction.body == article.run(page, article.ArticleParams()).body
    starts, ends = block_ranges(page.blocks)
    assert state.starts.tolist() == starts.tolist() and state.ends.tolist() == ends.tolist()
    table = DomTable(page)
    assert state.table.owner.tolist() == table.owner.tolist()
    assert state.records.tolist() == article.record_lists(table).tolist()
    assert state.repeated.tolist() == article.repeated_lines(page.texts, page.char_counts, starts, ends).tolist()


def test_many_blocks_memory_bounded():
    """A page of ~6,800 display blocks: the Python-side peak of cepr-typed stays within
    the bound tests/test_bad_input.py sets for the default method (40 × the input)."""
    import tracemalloc

    para = "<div class=item><p>Paragraph {i}, with some words; and more words, here.</p><a href=#>link {i}</a></div>\n"
    html = "<html><body><p>" + "The council voted to rebuild the old bridge. " * 3 + "</p>"
    html += "".join(para.format(i=i) for i in range(6_700)) + "</body></html>"
    extract(html[:2000] + "</body></html>", method="cepr-typed")  # models loaded outside the measurement
    tracemalloc.start()
    try:
        result = extract(html, method="cepr-typed")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "Paragraph 6699," in result.body or "rebuild the old bridge" in result.body
    assert peak < 40 * len(html)


def test_chunked_prediction_equals_one_call(monkeypatch):
    from scrapy_cepr.core.blocks import with_page_type
    from scrapy_cepr.methods import typed

    rng = np.random.default_rng(5)
    x = rng.random((1_000, len(FEATURES))).astype(np.float32)
    proba = np.full(7, 1 / 7)
    model = load_model()
    whole = model.predict(with_page_type(x, proba))
    monkeypatch.setattr(typed, "PREDICT_CELLS", 3 * model.num_trees)  # chunks of 3 rows
    np.testing.assert_allclose(typed.predict_blocks(model, x, proba), whole, rtol=1e-12, atol=1e-15)


# A news page with a hidden schema.org copy of its story (display:none, microdata): the
# copy is data for machines, never shown; without the page model's drop_hidden_microdata
# both methods kept the story twice, with the keywords and the publisher's name.
_HIDDEN_COPY_STORY = [
    "The county council has approved a new timetable for the coastal bus route after a six-month trial that doubled the number of passengers.",
    "From next month buses will run every twenty minutes between the harbour and the railway station, and the last service will leave at midnight on Fridays and Saturdays.",
    "Councillor Maria Evans said the trial had shown that people would leave their cars at home when the service was frequent and reliable enough to plan a day around.",
    "The operator will add three electric buses to the fleet, paid for by a national grant, and the old diesel vehicles will move to the rural routes inland.",
    "Residents of the hill villages asked for the same frequency on their routes; the council said it would look at their request when the budget is set in the spring.",
]
_HIDDEN_COPY_PARAS = "".join(f"<p>{p}</p>" for p in _HIDDEN_COPY_STORY)
HIDDEN_COPY_PAGE = f"""<html><head><title>Coastal bus route to run every twenty minutes - Bay Courier</title></head><body>
<div class="top"><a href="/">Bay Courier</a> <a href="/news">News</a> <a href="/sport">Sport</a> <a href="/weather">Weather</a></div>
<div class="story"><h1>Coastal bus route to run every twenty minutes</h1><p class="by">By Tom Reid, 3 March 2019</p>{_HIDDEN_COPY_PARAS}</div>
<div style="display:none" itemscope itemtype="http://schema.org/NewsArticle">
<div itemprop="headline">Coastal bus route to run every twenty minutes</div>
<div itemprop="keywords">buses, transport, council, coast</div>
<div itemprop="datePublished">2019-03-03T09:00:00+00:00</div>
<div itemprop="publisher" itemscope itemtype="http://schema.org/Organization"><div itemprop="name">BayCourier</div></div>
<div itemprop="articleBody">{' '.join(_HIDDEN_COPY_STORY)}</div>
</div>
<div class="foot">Copyright Bay Courier 2019. <a href="/about">About us</a> <a href="/contact">Contact</a></div>
</body></html>"""


@pytest.mark.parametrize("method", ["cepr-typed", "cepr-article"])
def test_a_hidden_microdata_copy_of_the_story_is_not_in_the_body(method):
    got = extract(HIDDEN_COPY_PAGE, url="https://news.example/2019/03/03/coastal-buses", method=method)
    assert got.body.count("after a six-month trial") == 1
    assert "BayCourier" not in got.body and "buses, transport" not in got.body
    assert got.body.splitlines()[-1].startswith("Residents of the hill villages")


def test_hidden_content_without_microdata_stays():
    # The rest of a story hidden until a "read more" button shows it is content.
    more = ('<div style="display: none"><p>The new timetable will be reviewed after a year, and the council has '
            'promised to publish the passenger numbers for every stop on its website each quarter.</p></div>')
    page = HIDDEN_COPY_PAGE.replace("</p></div>\n<div style", "</p>" + more + "</div>\n<div style", 1)
    assert more in page
    got = extract(page, url="https://news.example/2019/03/03/coastal-buses", method="cepr-article")
    assert "passenger numbers for every stop" in got.body


@pytest.mark.parametrize("method", ["cepr-typed", "cepr-article"])
def test_chinese_story_under_related_links(method):
    # pagetype_article_zh.html: a short story written without spaces (byline and five
    # paragraphs) under six long related-news links and a footer; only the story is kept.
    html = (FIXTURES / "pagetype_article_zh.html").read_text(encoding="utf-8")
    result = extract(html, url="https://news.example/2024/11/harbour-wall.html", method=method)
    lines = result.body.split("\n")
    assert result.title == "港口防波堤修复方案获得通过"
    assert len(lines) == 6 and lines[0] == "记者 王明 2024年11月5日"
    assert lines[1].startswith("市议会周一") and lines[-1].endswith("逐渐掏空。")
    assert "相关新闻" not in result.body and "公交" not in result.body and "版权" not in result.body


def test_thai_story_kept_menu_and_footer_gone():
    # pagetype_article_th.html: the same page in Thai, which has neither spaces between
    # words nor sentence punctuation. The story's five paragraphs are kept, the menu and
    # the footer are not. (Its related links are kept too: without punctuation CEPR's
    # ETPR is 0 on every line and τ is 0, so the lines cannot be told apart by it;
    # docs/measurements.md, "Text without spaces".)
    html = (FIXTURES / "pagetype_article_th.html").read_text(encoding="utf-8")
    body = extract(html, url="https://news.example/2024/11/harbour-wall-th.html", method="cepr-typed").body
    for start in ("สภาเมืองได้จัด", "ตามแผนดังกล่าว", "ตัวแทนชาวบ้าน", "ชาวประมงบางส่วน", "กำแพงกันคลื่นแห่งนี้"):
        assert f"\n{start}" in body
    assert "หน้าแรก" not in body and "สงวนลิขสิทธิ์" not in body


def test_product_description_printed_twice_is_kept_once():
    """A product page that prints its description twice (a desktop tab and a mobile
    accordion, both in the HTML): the body holds it once, as the gold of such a page
    does; ``drop_repeats=False`` keeps what the classifier keeps."""
    html = _html("product")
    body = extract(html, method="cepr-typed", page_type="product").body
    for sentence in ("A waterproof shell for wet harbour mornings", "The three-layer fabric breathes",
                     "Underarm vents that open from either end"):
        assert body.count(sentence) == 1
    for boilerplate in ("Sponsored items are chosen", "Add to bag", "Privacy"):
        assert boilerplate not in body
    kept = extract(html, method="cepr-typed", page_type="product", drop_repeats=False).body
    assert kept.count("A waterproof shell for wet harbour mornings") >= 1


def _rows(words: list[float], code: list[bool]) -> np.ndarray:
    x = np.zeros((len(words), len(FEATURES)), np.float32)
    x[:, FEATURES.index("log_words")] = np.log1p(words)
    x[:, FEATURES.index("in_pre")] = code
    return x


def test_drop_repeated_keeps_the_first_copy():
    lines = ["Details", "A light  shell.", "Details", "a light shell.", "Not kept here", "a light shell.",
             "} ) ;", "} ) ;", "Yes", "Yes"]
    keep = np.array([True, True, True, True, False, True, True, True, True, True])
    words = [1, 3, 1, 3, 3, 3, 3, 3, 1, 1]
    code = [False] * 6 + [True, True, False, False]
    out = drop_repeated(keep, _rows(words, code), lines.__getitem__)
    # The second and third copies of the 3-word line go (whitespace and case do not
    # matter); one-word lines and code lines keep their repeats; the input is not changed.
    assert out.tolist() == [True, True, True, False, False, False, True, True, True, True]
    assert keep.tolist()[3] is True


def test_drop_repeated_reads_only_kept_lines():
    read = []
    keep = np.array([False, True, False, True])
    out = drop_repeated(keep, _rows([4, 4, 4, 4], [False] * 4), lambda b: read.append(b) or "same words here ok")
    assert read == [1, 3] and out.tolist() == [False, True, False, False]


def _thread_texts(html: str) -> set[str]:
    from scrapy_cepr.core.article import ArticleParams, body_evidence, thread_records
    from scrapy_cepr.core.article import analyse as article_analyse

    page = Page.from_html(html)
    params = ArticleParams(comment_wrapped=False)
    state = article_analyse(page, params)
    assert state.table is not None and state.extraction.nodes is not None
    evidence = body_evidence(state.extraction.nodes.h_smoothed, state.extraction.tau or 0.0, page.in_link,
                             params.content_level)
    thread = thread_records(state.table, page, evidence, state.headline, params)
    covered = state.table.covered(thread)[state.table.owner]
    return {page.texts[i] for i in covered.nonzero()[0]}


def test_wrapped_thread_of_a_plain_page_found_and_dropped():
    """A plain page (no HTML5 sectioning, no declarations): a reader thread of wrapped
    records ``li > div > (div, div)`` below the story is found by the looser reading of
    the comment records (one child per ``li``, so not by the strict one) and its blocks
    are dropped by the article assembly (``drop_threads``)."""
    html = _html("plain_thread")
    texts = _thread_texts(html)
    assert {"Marta", "Joe", "Anna", "Peter"} <= texts
    assert not any("flood gates" in t for t in texts)
    for drop in (True, False):
        body = extract(html, method="cepr-typed", page_type="article", drop_threads=drop).body
        assert "The project cost more than the original estimate" in body
        assert "I live two streets from the river" not in body


def test_wrapped_records_with_headings_are_no_thread():
    """The same records, each introduced by a heading (``h4``), are a page's sections or
    cards, not a reader thread (step 8's ``comment_headed``): the looser reading keeps
    them (on a plain page a story's sections are such wrapped records)."""
    html = _html("plain_thread").replace("<span><a", "<h4><a").replace("</a></span>", "</a></h4>")
    assert "<h4>" in html
    assert _thread_texts(html) == set()


_PIER_PARTS = ("north pier", "lighthouse steps", "fish market quay", "lifeboat slipway")


def _survey_page(dated: bool) -> str:
    """A story whose four sections are wrapped records below its intro, each a subheading
    in a ``div`` (no heading element, as on a page of older templates) and two paragraphs
    of about 75 and 50 words; with *dated*, each opens with a reader's name and a date and
    time instead, as a comment does."""

    def para(i: int, k: int) -> str:
        return (f"At the {_PIER_PARTS[i - 1]} the divers counted {k + i} loose blocks, and the council's "
                f"engineers marked each one on the chart of section {i} before the spring tides of the year. ")

    def section(i: int) -> str:
        head = f"Posted by Reader {i} on 1{i} March 2019 at 10:4{i}" if dated else f"What the survey found, part {i}"
        return (f'<div class="s"><div class="inner"><div>{head}</div>'
                f'<p>{para(i, 1)}{para(i, 2)}{para(i, 3)}See <a href="/r{i}">the report</a>.</p>'
                f"<p>{para(i, 4)}{para(i, 5)}</p></div></div>")

    intro = ("<p>The harbour authority spent the winter surveying the old wall, stone by stone, and its engineers "
             "wrote down every crack they found along the seaward face. The survey ended on Friday, two weeks "
             "later than planned, after storms in February kept the boats in port for most of the month.</p>"
             "<p>Its report goes to the council in April. Repairs are expected to start in the summer and to "
             "close the promenade for several weeks while the cranes work from the beach.</p>")
    return ("<html><head><title>Harbour wall survey ends - Courier</title></head><body>"
            "<div class='nav'><a href='/'>Home</a> <a href='/news'>News</a></div>"
            f"<div class='story'><h1>Harbour wall survey ends</h1>{intro}"
            "<div class='sections'>" + "".join(section(i) for i in range(1, 5)) + "</div></div>"
            "<div class='foot'><a href='/about'>About us</a></div></body></html>")


def test_long_undated_records_are_a_storys_sections():
    """Wrapped records after the story's intro, each opening with a subheading written as
    a ``div`` and holding about 125 words with no date line, are the story's sections
    (``core.article.SECTION_MIN_CHARS``): the looser reading does not take them for a
    thread, and the body keeps all four."""
    html = _survey_page(dated=False)
    assert _thread_texts(html) == set()
    body = extract(html, method="cepr-typed", page_type="article").body
    for part in _PIER_PARTS:
        assert f"At the {part} the divers counted" in body
    assert "What the survey found, part 3" in body


def test_the_same_records_with_a_date_line_are_a_thread():
    """The same records opening with a reader's name, a date and a time are a reader
    thread, however long: they are dropped and the intro stays."""
    html = _survey_page(dated=True)
    assert "Posted by Reader 2 on 12 March 2019 at 10:42" in _thread_texts(html)
    body = extract(html, method="cepr-typed", page_type="article").body
    assert "surveying the old wall" in body
    assert not any(f"At the {part}" in body for part in _PIER_PARTS)


def test_thread_with_a_quotation_in_one_comment_is_one_thread():
    """Five comments ``li > div > (meta, p…, reply)``; the third quotes the story in a
    ``blockquote`` between its paragraphs. A comment holds what its author wrote in any
    order (``AUTHORED_TAGS``), so the quoting comment does not split the run of records:
    the whole thread is found and dropped by both CEPR methods, the story kept."""
    html = _html("thread_quote")
    texts = _thread_texts(html)
    assert {"Marta", "Joe", "Anna", "Peter", "Ines"} <= texts
    assert any(t.startswith("Two routes that carried fewer") for t in texts)  # the quotation
    assert not any("county's new bus timetable" in t for t in texts)
    for method in ("cepr-typed", "cepr-article"):
        body = extract(html, method=method).body
        assert "Printed timetables are available at the library" in body
        assert "Joe, the article says otherwise" not in body and "I start work at seven" not in body


def test_story_printed_twice_keeps_one_copy():
    """A story followed by a second copy of it (a print copy): the page assembled as an
    article keeps one copy of each paragraph (``copy_share``); switched off, the second
    copy stays (its lead twice; how much of the copy's end the block classifier keeps is
    the classifier's own decision)."""
    html = _html("story_twice")
    first = "The town council voted on Thursday to turn the old railway goods yard"
    last = "Residents who live near the yard welcomed the decision"
    body = extract(html, method="cepr-typed").body
    assert body.count(first) == 1 and body.count(last) == 1
    assert "Copyright" not in body
    both = extract(html, method="cepr-typed", copy_share=1.0).body
    assert both.count(first) == 2 and both.count(last) >= 1 and len(both) > len(body) + len(first)


def test_lines_an_author_repeats_are_kept():
    """A training plan repeats its warm-up and cool-down lines every day, a line at a time
    between the days' own lines: no stretch of the story is printed twice, so every
    repeat stays."""
    days = ["an easy run of five kilometres along the river path at a pace where you can still talk",
            "eight hill sprints of thirty seconds each, walking back down between them to recover",
            "a rest day with a long walk in the afternoon and some gentle stretching before bed",
            "three intervals of six minutes at a steady hard pace with two minutes of jogging between",
            "a long run of twelve kilometres on mixed ground, the first half slow and the second faster"]
    sections = "".join(
        f"<h3>Day {n}</h3><p>Warm up for ten minutes with easy jogging and leg swings.</p>"
        f"<p>Today's session is {day}, so plan your time around it.</p>"
        f"<p>Cool down with five minutes of walking and stretch your calves.</p>"
        for n, day in enumerate(days, 1))
    html = ("<html><head><title>A week of running - The Valley Courier</title></head><body>"
            "<div><a href='/'>Home</a> <a href='/sport'>Sport</a></div><div class='story'>"
            "<h1>A week of running</h1><p>Our coach has written a five-day plan for readers who want to "
            "run their first ten kilometres this autumn, with one session a day.</p>"
            f"{sections}</div><div>Copyright The Valley Courier.</div></body></html>")
    assert extract(html, method="cepr-typed", page_type="article").body == \
        extract(html, method="cepr-typed", page_type="article", copy_share=1.0).body
    # The plan's lines as kept blocks: each repeat is a stretch of one line.
    lines = ["Our coach has written a five-day plan for readers."]
    for n, day in enumerate(days, 1):
        lines += [f"Day {n}", "Warm up for ten minutes with easy jogging and leg swings.",
                  f"Today's session is {day}.", "Cool down with five minutes of walking and stretch your calves."]
    x = np.zeros((len(lines), len(FEATURES)))
    x[:, FEATURES.index("log_words")] = np.log1p([len(line.split()) for line in lines])
    x[:, FEATURES.index("repeated")] = [lines.count(line) > 1 for line in lines]
    assert not story_copies(np.ones(len(lines), bool), x, lines.__getitem__, 0.1).any()
    assert story_copies(np.ones(len(lines), bool), x, lines.__getitem__, 0.01).sum() == 8


#: Four readers' comments (author, date, paragraphs), written for these tests.
_COMMENTS = (
    ("Dave P.", "March 14, 2008 at 9:12 am",
     ("About time too, I have been driving round the bay for two years.", "Hope they keep the old timetable.")),
    ("harbourgirl", "March 14, 2008 at 11:40 am", ("Three hundred thousand for a propeller shaft seems a lot to me.",)),
    ("Mike Turner", "March 15, 2008 at 8:03 pm",
     ("My grandfather crewed that boat in the sixties.", "Glad to see her back on the water.",
      "Well done to everyone who worked on it.")),
    ("Anne W", "March 16, 2008 at 7:55 am", ("Will the second boat be electric, does anybody know?",)),
)


def _dated_thread_page(layout: str, comments: tuple = _COMMENTS) -> str:
    """The story of ``typed_dated_thread.html`` with *comments* below it, in a layout
    that wraps no comment in an element of its own."""
    if layout == "dl":  # author line in <dt>, the text in <dd>
        thread = "<b>Your comments</b><dl>" + "".join(
            f'<dt><a href="/user/{i}">{a}</a> said on {d}:</dt><dd>' + "<br><br>".join(t) + "</dd>"
            for i, (a, d, t) in enumerate(comments)) + "</dl>"
    elif layout == "flat":  # a bold author line and the paragraphs, all siblings
        thread = "<p><b>Comments</b></p>" + "".join(
            f"<p><b>{a}</b> wrote on {d}:</p>" + "".join(f"<p>{x}</p>" for x in t) + "<hr>" for a, d, t in comments)
    elif layout == "table":  # a row per comment: the name and, after a <br>, the date in one cell
        thread = '<table><tr><td colspan="2"><b>Your views</b></td></tr>' + "".join(
            f"<tr><td>{a}<br>{d}</td><td>" + "<br><br>".join(t) + "</td></tr>" for a, d, t in comments) + "</table>"
    else:  # signed below the text
        thread = "<h3>Comments</h3>" + "".join(
            "".join(f"<p>{x}</p>" for x in t) + f"<p><small>Posted by: {a} at {d}</small></p>" for a, d, t in comments)
    return _html("dated_thread").replace("<!--THREAD-->", thread)


@pytest.mark.parametrize("layout", ["dl", "flat", "signed", "table"])
@pytest.mark.parametrize("method", ["cepr-typed", "cepr-article"])
def test_unwrapped_dated_thread_dropped(layout, method):
    """A reader thread whose comments are not wrapped one per element, below a story: its
    dated author lines (one template, different authors) mark it, and the comments go
    (``drop_dated_threads`` of CEPR-Typed assembling an article, ``comment_dated`` of
    CEPR-Article's step 8); switched off, they stay. The story is kept either way. In
    the table a row wraps each comment, but no name is a link, and CEPR-Article's
    comment records hold one."""
    html = _dated_thread_page(layout)
    on, off = ({"page_type": "article"}, {"page_type": "article", "drop_dated_threads": False}) \
        if method == "cepr-typed" else ({}, {"comment_dated": False})
    body = extract(html, method=method, **on).body
    kept = extract(html, method=method, **off).body
    for text in ("About forty commuters waited on the north pier",
                 "The county council will decide in May whether to pay for a second boat"):
        assert text in body and text in kept
    for text in ("Dave P.", "propeller shaft seems a lot", "My grandfather crewed that boat",
                 "Will the second boat be electric"):
        assert text not in body
    assert "My grandfather crewed that boat" in kept and "Will the second boat be electric" in kept


def _short_story_page(layout: str) -> str:
    """:func:`_dated_thread_page` with a story of two paragraphs and eight comments
    (:data:`_COMMENTS` twice, the second time a year later by other readers): the story
    is under 30 % of the kept text, and longer than one comment."""
    later = tuple((f"{a} Jr", d.replace("2008", "2009"), t[::-1]) for a, d, t in _COMMENTS)
    html = _dated_thread_page(layout, _COMMENTS + later)
    for start in ("<p>About forty", "<p>The ferry company", "<p>Captain Robert", "<p>Shopkeepers"):
        at = html.index(start)
        html = html[:at] + html[html.index("</p>", at) + len("</p>"):]
    return html


@pytest.mark.parametrize("layout", ["flat", "signed"])
def test_short_story_long_dated_thread(layout):
    """A short story with a long thread of unwrapped comments: on a page read as an
    article CEPR-Typed drops the thread (its story is longer than one comment);
    CEPR-Article, which reads any page, keeps it (its story holds less than
    ``cut_min_before`` of the text, as a forum's first post does)."""
    html = _short_story_page(layout)
    typed = extract(html, method="cepr-typed", page_type="article").body
    article = extract(html, method="cepr-article").body
    for body in (typed, article):
        assert "The old harbour ferry carried passengers" in body and "The county council will decide in May" in body
    assert "My grandfather crewed that boat" not in typed and "harbourgirl" not in typed
    assert "My grandfather crewed that boat" in article
    assert "My grandfather crewed that boat" not in extract(html, method="cepr-article", cut_min_before=0.0).body


def test_dated_thread_after_any_assembly_of_an_article():
    """:func:`after_assembly` drops a dated thread on a page whose most probable type is
    ``article`` however it was assembled (below ``article_confidence`` the blocks are
    assembled as the other types'), and keeps it on a forum page; a thread longer per
    comment than the text before it is no thread (a forum's first post, a live blog's
    lead)."""
    lines = ["The old harbour ferry carried passengers across the bay again on Thursday morning, two winters "
             "after a cracked propeller shaft sent it to the dry dock at Kettle Point."]
    for a, d, t in _COMMENTS:
        lines += [f"{a} wrote on {d}:", *t]
    paths = np.array([1] + [3 if line.endswith(":") and " wrote on " in line else 2 for line in lines[1:]])
    x = np.zeros((len(lines), len(FEATURES)))
    keep = np.ones(len(lines), bool)

    def none() -> np.ndarray:
        return np.zeros(len(lines), bool)

    def kept(ptype: str, assembly: str, text: list[str]) -> list[str]:
        out = after_assembly(keep, x, text.__getitem__, assembly, ptype, none, TypedParams(), paths)
        return [line for line, k in zip(text, out.tolist()) if k]

    assert kept("article", "other", lines) == lines[:1]
    assert kept("article", "article", lines) == lines[:1]
    assert kept("forum", "other", lines) == lines
    assert kept("article", "other", ["Ferry back."] + lines[1:]) == ["Ferry back."] + lines[1:]
    # The classifier kept the first comment and dropped the others: the thread is read in
    # the blocks after the last kept one too, and the kept comment goes.
    first = np.zeros(len(lines), bool)
    first[:4] = True  # the story, the first author line and its two paragraphs
    out = after_assembly(first, x, lines.__getitem__, "article", "article", none, TypedParams(), paths)
    assert out.nonzero()[0].tolist() == [0]


def test_dated_sections_with_headings_are_no_thread():
    """The same dated lines, each record introduced by a heading (a timeline's entries):
    a section's heading is no comment's, so the records are kept."""
    thread = "".join(f"<h3>Day {k}</h3><p>Notes by {a}, {d}</p>" + "".join(f"<p>{x}</p>" for x in t)
                     for k, (a, d, t) in enumerate(_COMMENTS, 1))
    html = _html("dated_thread").replace("<!--THREAD-->", thread)
    for method, params in (("cepr-typed", {"page_type": "article"}), ("cepr-article", {})):
        body = extract(html, method=method, **params).body
        assert "My grandfather crewed that boat" in body and "Will the second boat be electric" in body


def test_loose_line_in_the_story_needs_the_classifier():
    """A share bar set in bare ``span``s inside the story's container: CEPR-Article's
    region keeps it; CEPR-Typed keeps a line outside the paragraph-level elements that
    ends no sentence only when the classifier reads it as content too
    (``article_loose_floor``), so the body is the story's eight lines."""
    html = (FIXTURES / "typed_loose_lines.html").read_text(encoding="utf-8")
    body = extract(html, method="cepr-typed").body.split("\n")
    assert len(body) == 8
    assert body[0].startswith("The morning ferry") and body[-1].startswith("The harbour master said")
    assert "Fares stay the same" in body
    assert extract(html, method="cepr-typed", article_loose_floor=0.0).body.split("\n")[-1] == "Share Print"
    assert extract(html, method="cepr-article").body.split("\n")[-1] == "Share Print"


def test_assemble_loose_lines():
    """The article assembly on synthetic blocks, all in CEPR-Article's region and kept by
    it, with the same probability 0.3 (above ``article_floor``, below
    ``article_loose_floor``): a paragraph, a list item, a heading and a short line that
    ends a sentence stay; a short ``div`` line and its twin at 21 words go only while
    it is within ``article_loose_words``."""
    col = FEATURES.index
    x = np.zeros((7, len(FEATURES)), np.float32)
    x[:, col("article_keep")] = 1.0
    x[:, col("log_words")] = np.log1p([30, 2, 4, 3, 5, 2, 21])
    x[0, col("in_p")] = 1.0
    x[2, col("in_li")] = 1.0
    x[3, col("heading")] = 2.0
    x[4, col("ends_sentence")] = 1.0
    p = np.full(7, 0.3)
    p[0] = 0.9  # the story's paragraph
    regions = np.array([[0, 7]])
    assert loose_lines(x, 20).tolist() == [False, True, False, False, False, True, False]
    assert assemble(p, x, "article", regions).tolist() == [True, False, True, True, True, False, True]
    assert assemble(p, x, "article", regions, TypedParams(article_loose_words=30)).tolist()[6] is False
    assert assemble(p, x, "article", regions, TypedParams(article_loose_floor=0.0)).all()
    # Not an article: the threshold alone decides.
    assert assemble(p, x, "listing", regions).tolist() == (p >= 0.4).tolist()


def test_uncertain_article_keeps_its_whole_story():
    """A short Chinese story without chrome or subheadings (twelve paragraphs that repeat
    one sentence, numbered), read as an article below ``article_confidence`` (forced here
    with 1.0): the other types' assembly keeps only the blocks that reach ``threshold``
    (9 of the 12 with the shipped models); CEPR-Article's story assembled as an article
    holds more words, so that is kept (``assemble_page``), every paragraph of it."""
    paragraphs = [f"{'河水上涨两米，旧石桥在黎明前关闭。' * 3}{i}" for i in range(12)]
    html = ("<html><body><h1>河水关闭旧桥</h1><article>"
            + "".join(f"<p>{t}</p>" for t in paragraphs) + "</article></body></html>")
    body = extract(html, method="cepr-typed", article_confidence=1.0).body
    assert body.split("\n") == paragraphs


def test_assemble_page_picks_the_assembly_holding_more_words():
    from scrapy_cepr.core.blocks import FEATURES
    from scrapy_cepr.methods.typed import TypedParams, assemble_page

    x = np.zeros((4, len(FEATURES)), dtype=np.float32)
    x[:, FEATURES.index("log_words")] = np.log1p([30, 30, 30, 30])
    x[:, FEATURES.index("article_keep")] = 1.0  # CEPR-Article keeps all four
    regions = np.array([[0, 4]])
    p = np.array([0.9, 0.3, 0.3, 0.9])  # two blocks reach threshold, all reach the floor
    params = TypedParams()
    keep, assembly = assemble_page(p, x, "article", 0.9, regions, params)
    assert assembly == "article" and keep.all()
    # Below article_confidence: the other types' assembly keeps 2 blocks, the story 4.
    keep, assembly = assemble_page(p, x, "article", 0.4, regions, params)
    assert assembly == "other" and keep.all()
    # Not most probably an article: the other types' assembly, whatever it holds.
    keep, assembly = assemble_page(p, x, "forum", 0.4, regions, params)
    assert assembly == "other" and keep.tolist() == [True, False, False, True]
