"""How the kept text is written into the body: as a browser renders it (issue 17, the
snippet metric). Inline elements join their neighbours without a space unless the source
has white space between them (but two word characters outside Han, kana and hangul stay
apart: the style sheet may lay them out as two boxes; a drop cap joins its word),
``<br>`` is a line break, blocks
are lines, no-break spaces are spaces, soft hyphens and zero-width characters vanish,
entities are decoded.
The pages are written here; their exact bodies are known."""

from __future__ import annotations

import numpy as np
import pytest

from scrapy_cepr import extract
from scrapy_cepr.core.page import Page
from scrapy_cepr.core.text import assemble_body
from scrapy_cepr.evaluation import snippet_counts, snippet_summary

# One article, each paragraph a serialisation rule; all but the headline (the title) is the body.
PAGE = """<!doctype html><html><head><title>Harbour storm</title></head><body>
<article>
<h1>Harbour storm closes the old pier</h1>
<p><span class="initial">T</span>he storm reached the <b>harbour</b>, as the <a href="/forecast">forecast</a> said.
Gusts hit <i>120</i>&nbsp;km/h at the <em>pier</em>'s end.</p>
<p>Residents were <span>warned</span><span>early</span>
<strong>on Monday</strong> and the fishermen stayed in port all day long.</p>
<p><span>The council met at noon.</span><br><span>It closed the pier until Friday.</span></p>
<p>Repairs will cost a for\u00admid\u00adable sum, the\u200b mayor said &amp; the\u2060 port agreed&#8203;.</p>
<p>Boats in the harbour must stay moored until the wind drops below forty knots again.</p>
</article>
</body></html>"""

BODY = (
    "The storm reached the harbour, as the forecast said. Gusts hit 120 km/h at the pier's end.\n"
    "Residents were warned early on Monday and the fishermen stayed in port all day long.\n"
    "The council met at noon.\n"
    "It closed the pier until Friday.\n"
    "Repairs will cost a formidable sum, the mayor said & the port agreed.\n"
    "Boats in the harbour must stay moored until the wind drops below forty knots again."
)


@pytest.mark.parametrize("method", ["cepr-typed", "cepr-article"])
def test_body_reads_as_rendered(method):
    body = extract(PAGE, url="https://harbour.example/news/storm", method=method).body
    assert body == BODY


def test_gaps_of_the_page_model():
    page = Page.from_html("<body><p>a<b>b</b> <i>c</i>\n<u>d</u><br><span>e</span>f <s> g</s></p></body>")
    assert page.texts == ["a", "b", "c", "d", "e", "f", "g"]
    assert page.gap_before.tolist() == [0, 0, 1, 1, 2, 0, 1]


def test_a_control_only_text_keeps_the_white_space_around_it():
    page = Page.from_html("<body><p>one<b>\x01 </b>two<i>\x02</i>, three</p></body>")
    assert page.texts == ["one", "two", ", three"]
    assert page.gap_before.tolist()[1:] == [1, 0]
    assert assemble_body(page.texts, page.blocks, np.ones(3, bool), page.gap_before) == "one two, three"


@pytest.mark.parametrize(("html", "body"), [
    ("<p>据<a href='/x'>新华社</a>报道，港口关闭。</p>", "据新华社报道，港口关闭。"),
    ("<p><a href='/'>Home</a><a href='/n'>News</a>|<a href='/s'>Sport</a></p>", "Home News|Sport"),
    ("<p>Price: $<span>26.95</span> (<i>was</i> $30)</p>", "Price: $26.95 (was $30)"),
    # A drop cap (one capital in its own element before the rest of its word) joins it.
    ("<p><span class='dropcap'>Ó</span>scar wrote <b>M</b><sup>me</sup> Roux.</p>", "Óscar wrote Mme Roux."),
    # A capital before a capital, a digit or an identifier is not one.
    ("<p><a href='/a'>A</a><a href='/b'>Bravo</a> <b>Y</b><i>b116df</i> <b>R</b><i>2d2</i></p>", "A Bravo Y b116df R 2d2"),
])
def test_abutting_texts(html, body):
    page = Page.from_html(f"<body>{html}</body>")
    assert assemble_body(page.texts, page.blocks, np.ones(len(page), bool), page.gap_before) == body


def test_a_dropped_node_between_two_kept_ones_leaves_a_space():
    texts = ["Read", "menu", "on"]
    body = assemble_body(texts, np.array([1, 1, 1]), np.array([True, False, True]), np.array([0, 0, 0]))
    assert body == "Read on"


def test_a_block_boundary_is_a_line_whatever_the_gap():
    body = assemble_body(["a", "b"], np.array([1, 2]), np.array([True, True]), np.array([0, 0]))
    assert body == "a\nb"


def test_snippet_metric_counts_exact_substrings():
    counts = [snippet_counts(BODY, ["the harbour, as", "fishermen stayed"], ["Subscribe"]),
              snippet_counts("", ["anything"], ["Menu"]),
              snippet_counts("Menu and more", ["more"], ["Menu"])]
    assert counts[0].tp == 2 and counts[0].fp == 0 and counts[0].tn == 1
    assert (counts[1].fn, counts[1].tn) == (1, 1)
    s = snippet_summary(counts)
    assert (s["tp"], s["fn"], s["fp"], s["tn"]) == (3, 1, 1, 2)
    assert s["precision"] == 0.75 and s["recall"] == 0.75 and s["f1"] == 0.75
