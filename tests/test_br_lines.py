"""A ``<br>`` ends a line of the page model wherever the next text is, and the obsolete
block elements (``center``, ``dir``) are blocks (issue 17). Pages of
the 1990s and 2000s wrote paragraphs as ``<font>`` runs separated by two ``<br>``, and a
browser starts each run on a new line. Before, only a ``<br>``'s own tail started a line,
so such a story was one display block with its headline (and CEPR-Typed, which keeps
the headline out of the body, dropped the whole story). Pages written for these tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from pages import page_lines

from scrapy_cepr import extract
from scrapy_cepr.core.page import Page
from scrapy_cepr.evaluation import br_page, plain_page

FIXTURE = Path(__file__).parent / "fixtures" / "article_br_paragraphs.html"

STORY = [
    "The regional council voted on Tuesday to close the old harbour road for six weeks",
    "Residents of the lower town said the closure would add twenty minutes",
    "The council's chief engineer, Maria Olsen, said the wall had lost nearly a third",
    "Work starts in March",
    "Work is expected to start on March 3 and will be paid for from the emergency fund",
    "A public meeting will be held at the town hall on Thursday evening",
    "The ferry company said it would add an earlier sailing during the closure",
    '"We lose a morning of trade every time the road shuts," said Tom Haldane',
    "Councillors said a footbridge would cost about forty thousand pounds",
    "The last full repair of the wall was in 1987",
]
RELATED = [
    "Ferry company adds an early sailing for commuters",
    "Storm damage bill passes two million",
    "Engineers inspect the old sea wall after the storm",
    "Lower town school reopens after flood repairs",
    "Saturday market moves to the church square",
]
NAVIGATION = ["Local news", "Council", "Schools", "Farming", "Football", "Sailing", "Archive"]  # the left column


def test_a_br_starts_a_line_before_an_inline_element():
    page = Page.from_html(
        "<html><body><td><font>One two.</font><br><br><font>Three <i>four</i>.</font><br>"
        "<b>Five</b> six<br>seven <a href='/x'>eight</a></td></body></html>"
    )
    assert page_lines(page) == ["One two.", "Three four .", "Five six", "seven eight"]  # (nodes joined by a space)
    # What separates the nodes is unchanged: the body still joins them as a browser does.
    assert page.gap_before.tolist() == [0, 2, 1, 0, 2, 1, 2, 1]


def test_inline_elements_without_a_br_stay_on_one_line():
    page = Page.from_html("<html><body><p><font>One</font> <b>two</b> <a href='/x'>three</a>.</p></body></html>")
    assert page_lines(page) == ["One two three ."]


def test_the_fixture_story_is_one_line_per_paragraph():
    lines = page_lines(Page.from_html(FIXTURE.read_bytes()))
    assert "Harbour road to close for repairs" in lines
    for start in STORY:
        assert sum(line.startswith(start) for line in lines) == 1, start
    for nav in NAVIGATION:
        assert nav in lines  # one link per line, not one line of the whole column


@pytest.mark.parametrize("method", ["cepr-typed", "cepr-article"])
def test_br_paragraphs_story_without_related_links_and_navigation(method):
    got = extract(FIXTURE.read_bytes(), method=method)
    assert got.title == "Harbour road to close for repairs"
    body = got.body.split("\n")
    starts = [next(i for i, line in enumerate(body) if line.startswith(s)) for s in STORY]
    assert starts == sorted(starts)  # every paragraph, on its own line, in order
    assert "Harbour road to close for repairs" not in body  # the title, not repeated
    for related in RELATED:
        assert not any(related in line for line in body), related
    for nav in [*NAVIGATION, "Home | News | Sport | Letters | Weather"]:
        assert nav not in body and not any(line.startswith(nav + " ") for line in body), nav


def test_br_page_shows_the_same_lines():
    html = (
        "<html><body><div><h1>Title</h1><p>First <b>bold</b> paragraph.</p><p>Second one.</p>"
        "<ul><li>A list item</li></ul><p>Last.</p></div></body></html>"
    )
    assert page_lines(Page.from_html(br_page(html))) == page_lines(Page.from_html(plain_page(html))) == [
        "Title", "First bold paragraph.", "Second one.", "A list item", "Last."]


def test_obsolete_block_elements_start_a_line():
    # HTML's rendering section displays center, dir and menu as blocks (old templates
    # put the copyright or a link list in them right after the story's last sentence).
    page = Page.from_html(
        "<html><body><td>Last sentence.<center>Copyright 2004</center>More<dir><li>one</li></dir>"
        "<menu><li>two</li></menu></td></body></html>"
    )
    assert page_lines(page) == ["Last sentence.", "Copyright 2004", "More", "one", "two"]
