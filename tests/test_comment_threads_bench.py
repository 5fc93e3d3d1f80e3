"""benchmarks/comment_threads.py: the threads it writes, where it puts them, and its table
on a one-page corpus in the article-extraction-benchmark's layout, written here."""

from __future__ import annotations

import gzip
import json
import random

import pytest
from lxml import html as lxml_html
from pages import STORM_BODY, STORM_PAGE, load_benchmark


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("comment_threads")


def test_every_layout_holds_every_comment(bench):
    thread = bench.comments(random.Random(1))
    assert len(thread) == 6
    for layout in bench.LAYOUTS:
        text = lxml_html.fragment_fromstring(bench.thread_html(layout, thread)).text_content()
        for author, date, paragraphs in thread:
            assert author in text and date in text, layout
            assert all(p in text for p in paragraphs), layout
    with pytest.raises(ValueError, match="unknown layout"):
        bench.thread_html("forum", thread)


def test_the_thread_follows_the_story(bench):
    page = bench.with_thread(STORM_PAGE, STORM_BODY, "<div><p>First! Great article.</p></div>")
    root = lxml_html.fromstring(page)
    story = root.xpath('//div[@class="story"]')[0]
    # After the story's last paragraph, inside the story's element, before the footer.
    assert story[-1].text_content() == "First! Great article."
    assert story[-2].text_content().startswith("Residents were told")
    assert bench.with_thread(STORM_PAGE, "A gold line that is not on this page at all.", "<div/>") is None


def test_table_on_a_one_page_corpus(bench, tmp_path, capsys):
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "p1.html.gz").write_bytes(gzip.compress(STORM_PAGE.encode()))
    truth = {"p1": {"articleBody": STORM_BODY, "url": "https://news.example/storm"}}
    (tmp_path / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    assert bench.main(["--corpus", str(tmp_path), "--methods", "cepr-article"]) == 0
    out = capsys.readouterr().out
    assert "AEB, 1 pages (0 passed over" in out
    assert "| method | as served | thread: list | thread: dl | thread: flat | thread: table | thread: divs |" in out
    row = next(line for line in out.splitlines() if line.startswith("| cepr-article |"))
    served, *threads = (float(cell) for cell in row.strip("| ").split(" | ")[1:])
    assert served == 1.0  # the story alone, as served
    assert all(0.0 < f <= served for f in threads)
