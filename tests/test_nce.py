"""NCE (Laber et al., CIKM 2009) on hand-made pages; expected values computed by hand in
the comments."""

from __future__ import annotations

import numpy as np
import pytest

from scrapy_cepr import extract
from scrapy_cepr.core.comments import dated_thread
from scrapy_cepr.core.page import Page
from scrapy_cepr.methods.nce import ElementTable, NCEParams, comment_start, run, separator_node

# Small thresholds so that the hand computations stay short.
PARAMS = NCEParams(
    link_density=0.6,
    sibling_link_density=0.4,
    min_leaf_chars=100,
    min_separator_chars=300,
    min_sibling_chars=60,
    comment_similarity=0.6,
    comment_window=2,
    comment_min_words=2,
    title_min_words=3,
    title_max_words=8,
    title_overlap=0.75,
)

P1 = "Storm floods the old harbour at dawn, and water rose over the quay before the fishing boats could leave."  # 104 chars
P2 = "The harbour master said the sea wall held for an hour, but the second wave broke through near the fish market."  # 110
P3 = "Repairs will start next week, the council said, once engineers have checked every pier."  # 87

NEWS = f"""<html><head><title>Harbour flood | Daily Planet</title></head><body>
<div id="nav"><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a></div>
<h1>Storm floods the old harbour at dawn</h1>
<div id="story">
  <p>{P1}</p>
  <p>{P2}</p>
  <p>Repairs will start next week, <a href="/council">the council</a> said, once engineers have checked every pier.</p>
  <div class="related">Related: <a href="/walls">Harbour walls to be rebuilt next year</a></div>
  <div class="comments">
    <div class="comment"><div class="meta">Ann wrote on 12 March 2009 at 10:31</div><p>Terrible news for the fishermen.</p></div>
    <div class="comment"><div class="meta">Bob wrote on 13 March 2009 at 11:02</div><p>I saw the waves from my window!</p></div>
    <div class="comment"><div class="meta">Cid wrote on 14 March 2009 at 12:15</div><p>Hope the market reopens soon.</p></div>
  </div>
</div>
<div id="footer">Copyright 2009 Daily Planet. All rights reserved.</div>
</body></html>"""


def _id(table: ElementTable, u: int | None) -> str | None:
    return None if u is None else (table.elements[u].get("id") or table.elements[u].tag)


def test_separator_node_is_the_story_div():
    # Leaves in DFS order: Home(4) World(5) Sport(5) h1(36) P1(104 ≥ β1=100) -> L = P1.
    # Ancestors of L: <p> fails (i); div#story has 104+110+87+46+comments ≥ 300 chars (ii)
    # and its siblings div#nav (14 chars), h1 (36), div#footer (49) all have < 60 chars,
    # so no sibling "with text" (iii): u = div#story, the closest such ancestor (iv).
    page = Page.from_html(NEWS)
    table = ElementTable(page)
    assert _id(table, separator_node(page, table, PARAMS)) == "story"


def test_comments_and_link_lists_removed_title_found():
    # F_{story,0.6}: p, p, p (link density of P3 = 11/87 ≤ 0.6) and div.comments
    # (no links) are kept; div.related has link density 37/45 = 0.82 > 0.6 and goes.
    # Phase 2 blocks of U: P1(0) P2(1) P3(2) meta1(3) c1(4) meta2(5) c2(6) meta3(7) c3(8).
    # meta words after masking digits: {ann|bob|cid, wrote, on, 0, march, at}: Jaccard
    # 5/7 = 0.71 ≥ 0.6, same tag path, 2 blocks apart ≤ window 2: meta1-meta2-meta3 is a
    # component of 3, so the cut starts at meta1. Paragraph pairs share few words.
    page = Page.from_html(NEWS)
    r = run(page, PARAMS)
    assert r.body == f"{P1}\n{P2}\n{P3}"
    assert page.texts[comment_start(page, np.asarray(r.nodes.h) >= 2, PARAMS)] == "Ann wrote on 12 March 2009 at 10:31"
    stage = dict(zip(page.texts, r.nodes.h.tolist()))
    assert stage["Home"] == 0.0  # outside the separator's subtree
    assert stage["Harbour walls to be rebuilt next year"] == 1.0  # link-heavy child tree
    assert stage["Terrible news for the fishermen."] == 2.0  # comment
    assert stage[P1] == 3.0
    # Phase 3 candidates before U' with 3..8 words: div#nav (3 words, none in U': rejected)
    # and h1 (7 words, all in P1: overlap 1 ≥ 0.75, 36 chars). <title> has 28 chars < 36,
    # so the h1 (text node 3 after Home, World, Sport) is the title.
    assert r.title == "Storm floods the old harbour at dawn"
    assert r.nodes.title_index == 3


def test_title_falls_back_to_the_title_tag_without_site_name():
    # With β4 = 6 the h1 (7 words) is no candidate and div#nav is rejected (overlap 0),
    # so <title> is the only node of L' and loses its site name.
    params = NCEParams(**{**PARAMS.__dict__, "title_max_words": 6})
    assert run(Page.from_html(NEWS), params).title == "Harbour flood"


A = "The river rose two metres overnight. " * 6  # 221 chars once trimmed
B = "Weather: rain all week, wind from the west."  # 43 chars
C = "Markets: shares fell slightly on Tuesday afternoon."  # 51 chars
SIBS = NCEParams(min_leaf_chars=100, min_separator_chars=200, min_sibling_chars=40, sibling_link_density=0.4)


def test_two_wordy_siblings_push_the_separator_up():
    # L = A (221 ≥ 100). <p> fails (i) although it has 221 ≥ 200 chars. div#a has two
    # siblings with ≥ 40 chars and link density 0 < 0.4 (B, C): (iii) fails. <body> has
    # 315 chars and one sibling, <head>, without text: u = body, and all three are kept.
    html = f"<html><body><div id='a'><p>{A}</p></div><div id='b'>{B}</div><div id='c'>{C}</div></body></html>"
    page = Page.from_html(html)
    table = ElementTable(page)
    assert _id(table, separator_node(page, table, SIBS)) == "body"
    assert run(page, SIBS).body == f"{A.strip()}\n{B}\n{C}"


def test_a_link_list_sibling_does_not_count():
    # div#c is now a link (link density 1 ≥ 0.4): div#a has one wordy sibling, u = div#a,
    # F_{a,α} = {the <p>}.
    html = f"<html><body><div id='a'><p>{A}</p></div><div id='b'>{B}</div><div id='c'><a href='/m'>{C}</a></div></body></html>"
    page = Page.from_html(html)
    table = ElementTable(page)
    assert _id(table, separator_node(page, table, SIBS)) == "a"
    assert run(page, SIBS).body == A.strip()


def test_small_page_without_separator_keeps_every_text_node():
    # 315 chars < β2 = 1000: no ancestor can satisfy (ii), NCE returns the whole tree.
    html = f"<html><body><div id='a'><p>{A}</p></div><div id='b'>{B}</div><div id='c'>{C}</div></body></html>"
    page = Page.from_html(html)
    params = NCEParams(min_leaf_chars=100, min_separator_chars=1000)
    assert separator_node(page, ElementTable(page), params) is None
    assert run(page, params).body == f"{A.strip()}\n{B}\n{C}"


def test_repetition_from_the_first_block_is_not_a_comment_region():
    # Three similar blocks (Jaccard 5/7) from block 0 on: Assumption 2 puts comments after
    # the body, so there is no cut.
    html = (
        "<html><body><div>Ann wrote on 12 March 2009 at 10:31</div>"
        "<div>Bob wrote on 13 March 2009 at 11:02</div><div>Cid wrote on 14 March 2009 at 12:15</div></body></html>"
    )
    page = Page.from_html(html)
    assert comment_start(page, np.ones(len(page), bool), PARAMS) is None


def test_element_table_subtree_sums():
    # <body> chars = 221 + 43 + 51 = 315; div#c's 51 chars are all link characters.
    html = f"<html><body><div id='a'><p>{A}</p></div><div id='b'>{B}</div><div id='c'><a href='/m'>{C}</a></div></body></html>"
    table = ElementTable(Page.from_html(html))
    ids = {el.get("id") or el.tag: i for i, el in enumerate(table.elements)}
    assert table.chars[ids["body"]] == 315
    assert table.link_chars[ids["c"]] == 51 and table.link_density(ids["c"]) == 1.0
    assert table.first_text[ids["b"]] == table.last_text[ids["b"]] == 1


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("link_density", 1.5),
        ("sibling_link_density", -0.1),
        ("min_leaf_chars", 0),
        ("min_separator_chars", 2.5),
        ("comment_similarity", float("nan")),
        ("comment_window", 0),
        ("title_min_words", True),
        ("title_overlap", "half"),
    ],
)
def test_bad_params_name_the_param(param, value):
    with pytest.raises(ValueError, match=param):
        NCEParams(**{param: value})
    with pytest.raises(ValueError, match=param):
        extract("<p>x</p>", method="nce", **{param: value})


def test_title_max_words_below_min():
    with pytest.raises(ValueError, match="title_max_words"):
        NCEParams(title_min_words=5, title_max_words=4)


@pytest.mark.parametrize("html", ["", "   ", "<html><head><title>T</title></head><body></body></html>"])
def test_empty_page_gives_empty_body(html):
    r = extract(html, method="nce")
    assert r.body == "" and r.method == "nce"


def _thread_lines(gap: int) -> tuple[list[str], list[int]]:
    """A story line, then three dated author lines, each followed by *gap* - 1 lines of text."""
    lines, paths = ["A story of some length."], [1]
    for author, day in (("Ann", 2), ("Bo", 3), ("Cy", 5)):
        lines.append(f"{author} wrote on March {day}, 2008 at 9:1{day} pm:")
        paths.append(2)
        lines += [f"Comment line {k} by {author}." for k in range(gap - 1)]
        paths += [3] * (gap - 1)
    return lines, paths


def test_dated_thread_records_must_be_closely_located():
    """Author lines 2 to ``window`` lines apart are one thread (Phase 2's closeness, wider):
    the span runs to the end of the last comment; further apart, or with no text between
    them (a list of dated links), there is none."""
    lines, paths = _thread_lines(4)
    assert dated_thread(lines, paths) == (1, len(lines))
    assert dated_thread(*_thread_lines(8)) is not None
    assert dated_thread(*_thread_lines(9)) is None  # 9 lines apart, beyond the window of 8
    assert dated_thread(*_thread_lines(9), window=9) is not None
    assert dated_thread(*_thread_lines(1)) is None  # consecutive dated lines: no comment text between


def test_dated_lines_that_differ_only_in_their_dates_are_no_thread():
    """Every card of an offer page ends with the same notice but for its dates (the month
    names written before the day included): nobody signs them, so they are no thread."""
    notices = ["Book by December 31, 2025, for travel through March 31, 2026.",
               "Book by January 5, 2026, for travel through May 31, 2026.",
               "Book by December 31, 2025, for travel through December 20, 2026."]
    lines = ["Winter offers for the whole family."]
    paths = [1]
    for place, notice in zip(("Lisbon", "Oslo", "Rome"), notices):
        lines += [place, f"Three nights in {place} with breakfast.", notice]
        paths += [4, 3, 2]
    assert dated_thread(lines, paths) is None
    signed = [line.replace("Book by", f"{place} desk:") if line in notices else line
              for line, place in zip(lines, ["", "", "", "Lisbon", "", "", "Oslo", "", "", "Rome"])]
    assert dated_thread(signed, paths) is not None


def test_a_name_above_the_date_signs_it_a_teaser_does_not():
    """A date alone on its line is signed by the name above it in the same element (a
    ``<br>`` between them: ``unit`` equal); the summary of a news teaser above its date is
    no name (more than 4 words), so a list of teasers is no thread."""
    names = ["Story of the day.", "Ann", "March 2, 2008", "Nice.", "Bo", "March 3, 2008", "No.",
             "Cy", "March 5, 2008", "Yes."]
    paths, cells = [1, 4, 2, 3, 4, 2, 3, 4, 2, 3], [0, 1, 1, 2, 3, 3, 4, 5, 5, 6]
    assert dated_thread(names, paths) is None  # the dates alone are the same but for the day
    assert dated_thread(names, paths, unit=cells.__getitem__) == (1, 10)
    teasers = [line if len(line) > 6 or "2008" in line else f"A new method from the lab helps {line} steer models"
               for line in names]
    assert dated_thread(teasers, paths, unit=cells.__getitem__) is None


def test_the_first_signed_run_decides():
    """A forum's first posts start the page (too little text before them for a thread):
    that run is refused, and the posts after a heading further down, a run of their own
    with enough text before it, are not tried as a thread either."""
    lines, paths = _thread_lines(3)
    later = [line.replace("Ann", "Di").replace("Bo", "Ed").replace("Cy", "Flo") for line in lines[1:]]
    page = lines + ["Page 2"] + later
    page_paths = paths + [5] + paths[1:]
    headings = [False] * len(lines) + [True] + [False] * len(later)
    assert dated_thread(page, page_paths, headings, min_before=0.3) is None
    assert dated_thread(page[len(lines):], page_paths[len(lines):], headings[len(lines):]) is not None
    assert dated_thread(page, page_paths, headings) == (1, len(lines))  # without the guard: the first run
