"""A row of a data table is one line of the page model (issue 17): a browser lays a row's
cells side by side (CSS 2.1 §17), so a results or specification table reads one row per
line; a row with block content in a cell (a layout table of the 2000s: a navigation
column beside the story) keeps one line per cell. Pages written for these tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from pages import page_lines

from scrapy_cepr import extract
from scrapy_cepr.core.page import Page

FIXTURES = Path(__file__).parent / "fixtures"

STANDINGS = [
    "Pos Driver Points Wins Top 5",
    "1 Dana Marsh 412 3 7",
    "2 Ben Okafor 407 2 8",
    "3 Eva Lindqvist 389 2 6",
    "4 Luis Ramos 361 1 5",
    "5 Wei Chen 340 0 4",
    "6 Paul Moreau 322 1 3",
    "7 Kim Haines 301 0 2",
    "8 Ivan Novak 288 0 2",
]
SPECIFICATIONS = [
    "Weight 2.3 kg",
    "Packed size 46 x 15 cm",
    "Floor area 2.9 square metres",
    "Peak height 105 cm",
    "Poles Aluminium, colour-coded",
    "Hydrostatic head 3000 mm fly, 5000 mm floor",
]


def _html(name: str) -> str:
    return (FIXTURES / f"rows_{name}.html").read_text(encoding="utf-8")


def test_data_row_is_one_line():
    page = Page.from_html(
        "<body><p>Before.</p><table><thead><tr><th>Pos</th><th>Name</th></tr></thead>"
        "<tr><td>1</td><td><a href='/x'>Kyle</a> <b>Busch</b></td><td>5040</td></tr>"
        "<tr><td>2</td><td>Ann</td><td>4990</td></tr></table><p>After.</p></body>"
    )
    assert page_lines(page) == ["Before.", "Pos Name", "1 Kyle Busch 5040", "2 Ann 4990", "After."]


def test_cells_of_a_row_are_apart_in_the_body():
    # No white space between the cells in the source: the body still writes them apart,
    # as a browser lays out a row's cells in separate boxes (the rendered join abuts only
    # the texts of one inline run).
    html = ("<body><h1>Results</h1><p>The standings after the last race of the season were close.</p>"
            "<table><tr><th>Pos.</th><th>Driver</th><th>Pts.</th></tr>"
            "<tr><td>1.</td><td>Dana Marsh</td><td>412</td></tr></table></body>")
    body = extract(html, method="setpr", alpha=0.0).body
    assert "Pos. Driver Pts." in body.splitlines()
    assert "1. Dana Marsh 412" in body.splitlines()


def test_row_with_block_content_keeps_one_line_per_cell():
    """A layout row: the navigation column (links one per line) beside the story's
    paragraphs never shares a line with the story."""
    page = Page.from_html(
        "<body><table><tr><td><a href='/'>Home</a><br><a href='/n'>News</a></td>"
        "<td><p>The story's first paragraph.</p><p>Its second one.</p></td></tr></table></body>"
    )
    lines = page_lines(page)
    assert "The story's first paragraph." in lines and "Its second one." in lines
    assert not any("Home" in line and "story" in line for line in lines)


@pytest.mark.parametrize(
    "cells",
    [
        "<td>Home<br>News</td><td>Story text.</td>",  # a line break in a cell
        "<td><div>Home</div></td><td>Story text.</td>",  # a block element in a cell
        "<td>Home</td><td><span><table><tr><td>Story text.</td></tr></table></span></td>",  # a nested table
    ],
)
def test_a_cell_that_breaks_into_lines_keeps_the_row_apart(cells):
    lines = page_lines(Page.from_html(f"<body><table><tr>{cells}</tr></table></body>"))
    assert "Story text." in lines
    assert not any("Home" in line and "Story" in line for line in lines)


def test_data_table_inside_a_layout_cell():
    page = Page.from_html(
        "<body><table><tr><td>Menu</td><td><p>Results:</p><table><tr><td>1</td><td>Ann</td></tr>"
        "<tr><td>2</td><td>Bo</td></tr></table></td></tr></table></body>"
    )
    assert page_lines(page) == ["Menu", "Results:", "1 Ann", "2 Bo"]


def test_cells_outside_a_row_and_heading_runs():
    """A cell without a ``tr`` parent stays its own line; a heading in a data row is on
    the row's line and still a heading run of its own."""
    page = Page.from_html("<body><table><td>Loose</td><td>cells</td></table>"
                          "<table><tr><td><h2>Group A</h2></td></tr><tr><td>x</td><td>y</td></tr></table></body>")
    assert page_lines(page) == ["Loose", "cells", "Group A", "x y"]
    assert [(level, page.texts[first]) for level, first, _ in page.headings] == [(2, "Group A")]


@pytest.mark.parametrize("method", ["cepr-article", "cepr-typed"])
def test_results_table_kept_whole_one_row_per_line(method):
    body = extract(_html("results_story"), method=method).body
    lines = body.split("\n")
    at = lines.index(STANDINGS[0])
    assert lines[at : at + len(STANDINGS)] == STANDINGS
    assert "Dana Marsh won the Greyfield 300" in body and "Hollins Park next weekend" in body
    for boilerplate in ("Most read", "Ticket prices frozen", "All rights reserved", "Tickets"):
        assert boilerplate not in body


@pytest.mark.parametrize("page_type", [None, "product"])
def test_product_specification_table(page_type):
    over = {"page_type": page_type} if page_type else {}
    body = extract(_html("product_spec"), method="cepr-typed", **over).body
    lines = body.split("\n")
    at = lines.index(SPECIFICATIONS[0])
    assert lines[at : at + len(SPECIFICATIONS)] == SPECIFICATIONS
    assert "A freestanding two-person tent" in body
    for boilerplate in ("Sleeping bags", "Self-inflating mat", "Returns", "Copyright"):
        assert boilerplate not in body


@pytest.mark.parametrize("method", ["cepr-article", "cepr-typed"])
def test_layout_table_story_without_its_navigation_column(method):
    html = _html("layout_story")
    lines = page_lines(Page.from_html(html))
    assert "The Kelby Gazette" in lines and "Ferry service to return in May" in lines
    assert not any("Weather" in line and ("Kelby" in line or "ferry" in line) for line in lines)
    body = extract(html, method=method).body
    assert body.startswith("The passenger ferry between Kelby and the island")
    assert body.endswith("from the middle of April.")
    assert len(body.split("\n")) == 4
    for nav in ("Home", "Letters", "Weather", "Copyright"):
        assert nav not in body


PRICE_STORY = """<html><head><title>Moving in Riverton</title></head><body>
<nav><a href="/">Home</a> <a href="/movers">Movers</a> <a href="/quotes">Quotes</a></nav>
<article><h1>What a move in Riverton costs</h1>
<p>Local movers in Riverton charge by the hour, and the size of the crew sets most of the bill. We asked
twelve companies for their rates this spring and took the middle of each range.</p>
<table><tr><th>Home size</th><th>Crew size</th><th>Move time</th><th>Estimated cost</th></tr>
<tr><td>Studio</td><td>2 movers</td><td>3-4 hours</td><td>$785 - $1,047</td></tr>
<tr><td>2 bedrooms</td><td>3 movers</td><td>4-5 hours</td><td>$1,571 - $1,963</td></tr>
<tr><td>3 bedrooms</td><td>4 movers</td><td>6-7 hours</td><td>$3,141 - $3,665</td></tr>
<tr><td>4 bedrooms</td><td>5 movers</td><td>8-9 hours</td><td>$4,188 - $5,890</td></tr></table>
<p>Long-distance moves are priced by weight instead. A two-bedroom home weighs about five tonnes, and
most companies quoted between three and five thousand dollars to move it across the state.</p>
<p>Book at least a month ahead in summer, when the busiest companies are full for weeks at a time.</p>
</article><footer>Copyright 2026 Riverton Guide</footer></body></html>"""


@pytest.mark.parametrize("method", ["cepr-article", "nce"])
def test_table_rows_alike_are_no_comment_thread(method):
    """Digit-masked rows of one table are alike by construction: NCE's comment phase
    (also CEPR-Article's step 8) must not start a comment thread at the table."""
    body = extract(PRICE_STORY, method=method).body
    assert "Local movers in Riverton charge by the hour" in body
    assert "Long-distance moves are priced by weight instead" in body
    assert "Book at least a month ahead in summer" in body
    if method == "cepr-article":
        assert "2 bedrooms 3 movers 4-5 hours $1,571 - $1,963" in body.split("\n")
