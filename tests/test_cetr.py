"""CETR and CETR-TM (Weninger et al. 2010, spec §2) on inputs computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

import scrapy_cepr
from scrapy_cepr.core.page import Page
from scrapy_cepr.methods import cetr
from scrapy_cepr.methods.cetr import (
    CETRParams,
    body_source,
    break_minified,
    gaussian_smooth,
    kmeans_fixed_origin,
    lookahead_derivative,
    tag_ratios,
)

# --------------------------------------------------------------------------- tag ratios


def test_tag_ratio_of_text_between_two_tags():
    # "abcdefghij klmnopqrs" is 20 characters, <p> and </p> are 2 tags: TR = 20/2 = 10.
    texts, chars, tags, tr = tag_ratios("<p>abcdefghij klmnopqrs</p>")
    assert texts == ["abcdefghij klmnopqrs"]
    assert chars.tolist() == [20] and tags.tolist() == [2]
    assert tr.tolist() == [10.0]


def test_line_without_tags_counts_one_tag():
    # 17 characters, no tag: the line counts 1 tag, TR = 17.
    _texts, chars, tags, tr = tag_ratios("just a plain line")
    assert (chars.tolist(), tags.tolist(), tr.tolist()) == ([17], [0], [17.0])


def test_paper_table_1_lines():
    # Paper Table 1: <div id="topnav"> 0/1 = 0; James Smith 11/2 = 5.5; the OKLAHOMA line
    # 37/0 -> 37; </div></div> 0/2 = 0. The <br><br> line has 41 raw characters in the
    # paper; we collapse the two spaces around the tags into one: 40/2 = 20.
    table = [
        '<div id="topnav">',
        '<div id="author">James Smith</div>',
        "OKLAHOMA CITY - Police were told that",
        "The Oklahoman reported Sunday. <br><br> Jones had",
        "</div></div>",
    ]
    html = "\n".join(table)
    texts, chars, tags, tr = tag_ratios(html)
    assert chars.tolist() == [0, 11, 37, 40, 0]
    assert tags.tolist() == [1, 2, 0, 2, 2]
    assert tr.tolist() == [0.0, 5.5, 37.0, 20.0, 0.0]
    assert texts[3] == "The Oklahoman reported Sunday. Jones had"


def test_empty_lines_dropped_entities_decoded_tag_across_newline():
    # Line 2 is whitespace only (dropped). "a &amp; b" decodes to "a & b" (5 characters,
    # 2 tags -> 2.5). The <a ...> tag spans a newline, so its two source lines are one:
    # "link" 4 characters, 2 tags -> 2.
    html = '<b>a &amp; b</b>\n   \n<a\nhref="/x">link</a>'
    texts, _chars, _tags, tr = tag_ratios(html)
    assert texts == ["a & b", "link"]
    assert tr.tolist() == [2.5, 2.0]


def test_body_source_has_no_script_style_or_comment():
    page = Page.from_html(
        "<html><head><title>T</title></head><body><p>kept</p>\n<script>var x = '<p>';</script>"
        "<style>p {}</style><!-- note --><p>also</p></body></html>"
    )
    assert body_source(page) == "<body><p>kept</p>\n<p>also</p></body>"


# --------------------------------------------------------------------- minified pages

_UNIT = '<span class="label">news</span> '  # 20 + 4 + 7 + 1 = 32 characters


def test_minified_source_is_cut_after_the_tag_the_cut_falls_in():
    # 25 units = 800 characters on one line (> 600 per line: minified). The first cut
    # after 60 characters falls at index 59, inside the second "</span>" (indices 56–62),
    # so the line runs to index 62: two units without the last space. The next line starts
    # with that space and again ends inside the fourth unit's "</span>" (index 122 in
    # 120–126), so every line holds two units.
    html = _UNIT * 25
    lines = break_minified(html, 60).split("\n")
    pair = _UNIT + _UNIT.rstrip()
    assert lines[0] == pair
    assert lines[1] == " " + pair
    assert "".join(lines) == html  # nothing lost, only newlines inserted
    for line in lines:  # never inside a tag
        assert line.count("<") == line.count(">")
        assert line.rfind("<") < line.rfind(">") or "<" not in line


def test_minified_tag_longer_than_the_width_stays_whole():
    # A 90-character tag then text: the cut at 60 is inside the tag, so line 1 is the tag.
    tag = '<a href="' + "x" * 79 + '">'  # 9 + 79 + 2 = 90 characters
    html = (tag + "go</a> ") * 10  # 980 characters, one line
    lines = break_minified(html, 60).split("\n")
    assert lines[0] == tag
    assert all(line.count("<") == line.count(">") for line in lines)


def test_minified_cut_in_a_word_moves_to_its_end():
    # "<p>" then 70 words "abcdefghij " (11 characters each): 777 characters. Index 59 is
    # 56 = 5·11 + 1 characters into the words, inside the 6th word, so line 1 ends with it.
    html = "<p>" + "abcdefghij " * 70 + "</p>"
    first = break_minified(html, 60).split("\n")[0]
    assert first == "<p>" + "abcdefghij " * 5 + "abcdefghij"


def test_source_with_newlines_is_not_cut():
    html = "<p>" + "word " * 100 + "</p>\n" + "<p>short</p>\n" * 3  # 527 chars / 5 lines
    assert break_minified(html, 60) == html


# ----------------------------------------------------------- smoothing and derivative


def test_gaussian_radius_kernel():
    # r = 1: k = exp(-j²/2) for j = -1, 0, 1 = [0.60653, 1, 0.60653] / 2.21306
    # = [0.27407, 0.45186, 0.27407]; zero padding: [0.27407·10, 0.45186·10, 0.27407·10].
    out = gaussian_smooth(np.array([0.0, 10.0, 0.0]), "radius", 1)
    assert out.round(4).tolist() == [2.7407, 4.5186, 2.7407]
    # At the start: line 0 gets 0.45186·10, line 1 0.27407·10, the rest nothing.
    out = gaussian_smooth(np.array([10.0, 0.0, 0.0, 0.0]), "radius", 1)
    assert out.round(4).tolist() == [4.5186, 2.7407, 0.0, 0.0]


def test_gaussian_std_kernel():
    # x = [0, 0, 2, 0, 0]: mean 0.4, variance (4·0.16 + 2.56)/5 = 0.64, σ = 0.8, r = 1.
    # k = [e^(-1/1.28), 1, e^(-1/1.28)] = [0.45783, 1, 0.45783] / 1.91566
    # = [0.23899, 0.52201, 0.23899]; out = 2·k around index 2.
    out = gaussian_smooth(np.array([0.0, 0.0, 2.0, 0.0, 0.0]), "std")
    assert out.round(4).tolist() == [0.0, 0.478, 1.044, 0.478, 0.0]


def test_radius_zero_is_no_smoothing():
    x = np.array([1.0, 5.0, 2.0])
    assert gaussian_smooth(x, "radius", 0).tolist() == [1.0, 5.0, 2.0]


def test_lookahead_derivative():
    # α = 3 on [0, 3, 6, 9, 0]:
    # G0 = |mean(3,6,9) − 0| = 6; G1 = |mean(6,9,0) − 3| = 2; G2 = |mean(9,0) − 6| = 1.5;
    # G3 = |mean(0) − 9| = 9; G4: empty window -> 0.
    t = np.array([0.0, 3.0, 6.0, 9.0, 0.0])
    assert lookahead_derivative(t, 3).tolist() == [6.0, 2.0, 1.5, 9.0, 0.0]
    # α = 1: |3−0|, |6−3|, |9−6|, |0−9|, 0.
    assert lookahead_derivative(t, 1).tolist() == [3.0, 3.0, 3.0, 9.0, 0.0]


# ------------------------------------------------------------------------------ k-means


def test_kmeans_three_clusters_origin_fixed():
    # Points A(1,0) B(0,1) C(10,0) D(11,0) E(30,0) F(32,0), k = 3.
    # Init: c1 = F (farthest from the origin, |F|² = 1024). Squared distance to the
    # nearest of {0, F}: A 1, B 1, C 100, D 121, E 4, F 0 -> c2 = D.
    # Assign: A, B -> origin (1 < 100); C, D -> c2; E, F -> c1.
    # Update: c1 = (31, 0), c2 = (10.5, 0); the origin stays although its points' mean
    # is (0.5, 0.5). Assign again: unchanged -> stop.
    points = np.array([[1, 0], [0, 1], [10, 0], [11, 0], [30, 0], [32, 0]], dtype=float)
    labels, centroids = kmeans_fixed_origin(points, 3)
    assert labels.tolist() == [0, 0, 2, 2, 1, 1]
    assert centroids.tolist() == [[0.0, 0.0], [31.0, 0.0], [10.5, 0.0]]


def test_kmeans_centroid_walks_towards_the_origin():
    # x = 4, 9, 10, 11, 20 on a line, k = 2. c1 starts at 20.
    # Round 1: 4 -> 0 (16 < 256); 9 -> 0 (81 < 121); 10: 100 = 100, tie -> origin;
    #          11 -> c1 (81 < 121); 20 -> c1. c1 = (11 + 20)/2 = 15.5.
    # Round 2: 9 -> c1 (42.25 < 81); 10 -> c1 (30.25 < 100); 4 -> 0 (16 < 132.25).
    #          c1 = (9 + 10 + 11 + 20)/4 = 12.5.
    # Round 3: 4 -> 0 (16 < 72.25); 9 -> c1 (12.25 < 81). Unchanged -> stop.
    points = np.array([[4, 0], [9, 0], [10, 0], [11, 0], [20, 0]], dtype=float)
    labels, centroids = kmeans_fixed_origin(points, 2)
    assert labels.tolist() == [0, 1, 1, 1, 1]
    assert centroids.tolist() == [[0.0, 0.0], [12.5, 0.0]]
    # With one round only, the state after round 1.
    labels, centroids = kmeans_fixed_origin(points, 2, iterations=1)
    assert labels.tolist() == [0, 0, 0, 1, 1]
    assert centroids.tolist() == [[0.0, 0.0], [15.5, 0.0]]


def test_kmeans_no_points():
    labels, centroids = kmeans_fixed_origin(np.zeros((0, 2)), 3)
    assert labels.shape == (0,) and centroids.tolist() == [[0.0, 0.0]] * 3


# ------------------------------------------------------------------ threshold variant

_TM_PAGE = (
    "<html><body>\n"
    '<div><a href="/">Home</a></div>\n'
    "<p>" + "a" * 40 + "</p>\n"
    "<p>" + "b" * 60 + "</p>\n"
    "</body></html>"
)


def test_threshold_variant_by_hand():
    # Lines of the serialised body and their TR (no smoothing with cetr_radius=0):
    #   <body>                         0 chars / 1 tag  = 0
    #   <div><a href="/">Home</a></div> 4 / 4            = 1
    #   <p>a…a</p>                     40 / 2           = 20
    #   <p>b…b</p>                     60 / 2           = 30
    #   </body>                        0 / 1            = 0
    # mean 51/5 = 10.2; variance (10.2² + 9.2² + 9.8² + 19.8² + 10.2²)/5 = 780.8/5 = 156.16
    # τ = 1·√156.16 = 12.4964: the two paragraphs are content.
    page = Page.from_html(_TM_PAGE)
    r = cetr.run(page, CETRParams(cetr_radius=0, tm_lambda=1.0), "cetr-tm")
    assert r.nodes.h.tolist() == [0.0, 1.0, 20.0, 30.0, 0.0]
    assert r.nodes.h_smoothed.tolist() == r.nodes.h.tolist()
    assert math.isclose(r.tau, math.sqrt(156.16))
    assert r.nodes.keep.tolist() == [False, False, True, True, False]
    assert r.body == "a" * 40 + "\n" + "b" * 60
    # λ = 2: τ = 24.99, only the 30 line stays.
    r2 = cetr.run(page, CETRParams(cetr_radius=0, tm_lambda=2.0), "cetr-tm")
    assert math.isclose(r2.tau, 2 * math.sqrt(156.16))
    assert r2.body == "b" * 60


def test_threshold_is_inclusive():
    # Lines "<body>" (0/1 = 0) and "<p>" + 30 characters + "</p></body>" (30/3 = 10):
    # σ([0, 10]) = 5, λ = 2 -> τ = 10, and T' = 10 ≥ τ is content.
    page = Page.from_html("<html><body>\n<p>" + "c" * 30 + "</p></body></html>")
    r = cetr.run(page, CETRParams(cetr_radius=0, tm_lambda=2.0), "cetr-tm")
    assert r.nodes.h.tolist() == [0.0, 10.0]
    assert r.tau == 10.0
    assert r.body == "c" * 30


# ------------------------------------------------------------------------ end to end

_NAV = "\n".join(
    f'<li><a href="/{s}">{s.title()}</a></li>'
    for s in ("world", "politics", "business", "sports", "science", "culture", "opinion", "weather")
)
_PARAGRAPHS = [
    (
        "The city council voted on Tuesday to build a new tram line across the river, ending a "
        "debate that had lasted for more than ten years and divided the two largest parties."
    ),
    (
        "Supporters of the plan said the line would cut travel times in half for workers who live "
        "in the eastern districts, while opponents warned that the costs had been underestimated."
    ),
    (
        "Construction is expected to begin next spring. The first trams should run in four years, "
        "according to the transport department, if the national government approves the funding."
    ),
    (
        "Local shop owners along the planned route asked for compensation during the works, and the "
        "mayor promised that a fund would be created before the first street is closed to traffic."
    ),
]
_FOOTER = "\n".join(
    f'<li><a href="/{s}">{s}</a></li>'
    for s in ("About us", "Contact", "Privacy policy", "Terms of use", "Careers", "Advertise")
)
_PAGE = f"""<!DOCTYPE html>
<html>
<head>
<title>Council approves new tram line | The Daily Example</title>
<script>window.analytics = {{"page": "article", "text": "<p>not content</p>"}};</script>
<style>.nav li {{ display: inline; }}</style>
</head>
<body>
<header>
<div class="logo"><a href="/">The Daily Example</a></div>
<nav>
<ul class="nav">
{_NAV}
</ul>
</nav>
</header>
<main>
<article>
<h1>Council approves new tram line</h1>
<div class="byline"><span>By</span> <a href="/staff/jane">Jane Doe</a></div>
{chr(10).join(f"<p>{p}</p>" for p in _PARAGRAPHS)}
</article>
</main>
<aside>
<h3>Most read</h3>
<ul>
<li><a href="/a">Storm closes schools</a></li>
<li><a href="/b">Team wins the cup</a></li>
</ul>
</aside>
<footer>
<ul>
{_FOOTER}
</ul>
<div><span>&copy; 2024</span> <span>The Daily Example</span></div>
</footer>
<!-- generated in 12 ms -->
</body>
</html>
"""


_FAR_BOILERPLATE = ("Politics", "Business", "Privacy policy", "Terms of use", "Careers", "not content")
_NEAR_BOILERPLATE = ("Weather", "Storm closes schools")  # the lines next to the article


def _assert_article_only(body: str, boilerplate=_FAR_BOILERPLATE + _NEAR_BOILERPLATE) -> None:
    flat = " ".join(body.split())
    for paragraph in _PARAGRAPHS:
        assert paragraph in flat
    for text in boilerplate:
        assert text not in flat


@pytest.mark.parametrize("method", ["cetr", "cetr-tm"])
def test_end_to_end_keeps_article_drops_navigation_and_footer(method):
    r = scrapy_cepr.extract(_PAGE, method=method)
    _assert_article_only(r.body)
    assert r.title == "Council approves new tram line"
    assert r.method == method
    n = len(r.nodes)
    assert r.nodes.h.shape == r.nodes.h_smoothed.shape == r.nodes.keep.shape == (n,)
    # One body line per kept line with text.
    assert len(r.body.split("\n")) == int((r.nodes.keep & (r.nodes.txt_num > 0)).sum())
    if method == "cetr":
        assert r.tau is None and r.params["clusters"] == 3
    else:
        assert r.tau == pytest.approx(np.std(r.nodes.h_smoothed))


@pytest.mark.parametrize("method", ["cetr", "cetr-tm"])
def test_end_to_end_minified_page(method):
    # The same page on one line: it is cut into lines of about 60 characters. The page
    # then has few lines, and the smoothing (σ = r = 3 lines) lends the article's high T'
    # to the one or two cut lines around it (the last menu item, "Most read"): only the
    # boilerplate farther away is sure to go.
    minified = " ".join(line.strip() for line in _PAGE.splitlines())
    r = scrapy_cepr.extract(minified, method=method)
    _assert_article_only(r.body, _FAR_BOILERPLATE)
    assert r.nodes.txt_num.max() < 200  # cut into short lines, not one line


@pytest.mark.parametrize("method", ["cetr", "cetr-tm"])
def test_pages_without_lines_give_an_empty_body(method):
    for html in (
        "<html><body></body></html>",
        "<html><head><title>Only a head</title></head></html>",
        "<p>   </p>",
    ):
        r = scrapy_cepr.extract(html, method=method)
        assert r.body == ""


# --------------------------------------------------------------------------- params


def test_defaults_are_the_paper_values():
    p = CETRParams()
    assert (p.cetr_radius, p.cetr_kernel, p.lookahead, p.clusters, p.wrap_width) == (3, "radius", 3, 3, 60)


@pytest.mark.parametrize(
    "name, value",
    [
        ("cetr_radius", -1),
        ("cetr_radius", 1.5),
        ("cetr_kernel", "box"),
        ("lookahead", 0),
        ("clusters", 1),
        ("clusters", True),
        ("tm_lambda", -0.5),
        ("tm_lambda", float("nan")),
        ("wrap_width", 5),
        ("kmeans_iterations", 0),
    ],
)
def test_bad_params_raise_value_error_naming_the_param(name, value):
    with pytest.raises(ValueError, match=name):
        CETRParams(**{name: value})
    with pytest.raises(ValueError, match=name):
        scrapy_cepr.extract("<p>x</p>", method="cetr", **{name: value})


def test_unknown_variant():
    with pytest.raises(ValueError, match="variant"):
        cetr.run(Page.from_html("<p>x</p>"), CETRParams(), "cetr-km")
