"""The example project, run as a user would: ``scrapy crawl newsspider -O cleaned.jsonl``.

The expected values below are read off the demo pages in ``example_project/site/``
(written by hand for this project): each page's headline, a sentence from its first and
from its last article paragraph, and text of its navigation, footer, comments and related
links, which must not reach the body.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1] / "example_project"
ARTICLES = PROJECT / "site" / "articles"

# file name -> (title, [text in the body], [text not in the body])
EXPECTED: dict[str, tuple[str, list[str], list[str]]] = {
    "council-budget.html": (
        "Council approves budget with more money for bus routes",
        [
            "Riverside City Council approved its budget for the coming year on Thursday night",
            "once the operator has recruited about twenty additional drivers.",
        ],
        ["We use cookies", "Spring sale", "I have been taking taxis home", "All rights reserved",
         "Most read"],
    ),
    "harbour-storm.html": (
        "Storm damages harbour wall as tide peaks",
        [
            "A ten-metre section of the old harbour wall at Saltby collapsed",
            "with further high tides expected on Thursday and Friday.",
        ],
        ["That wall has been crumbling for years", "Compare home insurance",
         "Northern Regional Newspapers", "Property"],
    ),
    "rail-strike.html": (
        "Rail workers vote to strike over rota changes",
        [
            "Signal and station staff on the Riverside Valley line have voted for strike action",
            "would publish an emergency timetable if a strike went ahead.",
        ],
        ["Births, marriages, deaths", "Cheap flights", "Should Sunday trains run", "Reproduction without permission"],
    ),
    "minified-tech.html": (
        "Startup's battery recycling plant gets planning approval",
        [
            "A company that extracts lithium and cobalt from used electric car batteries",
            "a government grant for clean industry.",
        ],
        ["This site uses cookies", "Switch energy supplier", "Independent journalism since 1871", "Podcasts"],
    ),
    "zh-wetland-birds.html": (
        "江心洲湿地迎来今冬首批候鸟",
        [
            "随着气温逐渐下降，江心洲湿地近日迎来了今冬第一批越冬候鸟",
            "届时有望超过三万只。",
        ],
        ["每年冬天都去看鸟", "地铁五号线南延段", "江城新闻网版权所有", "设为首页"],
    ),
    "gbk-tea-market.html": (
        "春茶开采 茶农喜迎丰收",
        [
            "清明节前，南山茶区的两万多亩茶园陆续开采",
            "让游客体验采茶、制茶，带动农户增收。",
        ],
        ["品牌茶具", "一季度全市外贸进出口", "复制必究"],
    ),
    "festival-cafe.html": (
        "Café festival draws record crowds",
        [
            "More than eighteen thousand visitors packed the riverside on Saturday",
            # windows-1252 bytes 0x93/0x94/0x92/0x96 declared as iso-8859-1: curly quotes, en dash
            "\u201cWe baked four hundred croissants last night and they were gone by one o\u2019clock,\u201d",
            "twice as many \u2013 and a second oven.",
            "before next summer\u2019s festival.",
        ],
        ["Brilliant day out", "The crêpes were worth", "Win a weekend for two", "Privacy & cookies"],
    ),
    "sports-final.html": (
        "Riverside Rovers win the county cup on penalties",
        [
            "Goalkeeper Sam Whitfield saved the tenth penalty of the shoot-out",
            "with a first-round tie away at Dunmore on 18 May.",
        ],
        ["Skip to content", "Ashby 0 Wells 1", "Independent Press Standards Organisation", "download now"],
    ),
    "clinic-waiting-times.html": (
        "Walk-in clinic cuts waiting times with text-message queue",
        [
            "Patients at the Riverside walk-in centre no longer have to sit in the waiting room",
            "at the two smaller clinics in Millbrook and Saltby.",
        ],
        ["Waited forty minutes in Costa", "Private physiotherapy", "Subscribe from £1 a week", "Five walks"],
    ),
    "opinion-cycle-lanes.html": (
        "Painted lines are not cycle lanes",
        [
            "Every few years the council announces a new cycling strategy",
            "is to stop calling the painted lines cycle lanes at all.",
        ],
        ["We and our 143 partners", "I gave up cycling after being clipped", "More opinion",
         "Views expressed in columns"],
    ),
    "court-bakery-fire.html": (
        "Bakery owner fined after fire exit was found padlocked",
        [
            "The owner of a bakery in the Eastfield shopping parade has been fined £6,000",
            "a victim surcharge of £2,000.",
        ],
        ["I used to buy my bread there", "Powered by WordPress", "Recent Posts", "Your town. Your news."],
    ),
}


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], str]:
    """Run the real command once; return the exported items and the log."""
    out = tmp_path_factory.mktemp("crawl") / "cleaned.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "newsspider", "-O", str(out)],
        check=False, cwd=PROJECT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return items, proc.stderr


def test_site_matches_expectations() -> None:
    # Guards the table above: every article page of the demo site is listed in it.
    assert sorted(p.name for p in ARTICLES.glob("*.html")) == sorted(EXPECTED)


def test_one_item_per_article_page(crawl: tuple[list[dict], str]) -> None:
    items, log = crawl
    names = sorted(Path(item["url"]).name for item in items)
    assert names == sorted(EXPECTED)  # the start page (index.html) is not an item
    assert all(item["url"].startswith("file://") for item in items)
    assert "Spider closed (finished)" in log


def test_fields_titles_and_bodies(crawl: tuple[list[dict], str]) -> None:
    items, _ = crawl
    for item in items:
        name = Path(item["url"]).name
        title, present, absent = EXPECTED[name]
        # Every output field, no html; no error; all demo pages are articles.
        assert list(item) == ["url", "canonical_url", "title", "body", "cepr_error", "page_type", "cepr_confidence"], (name, list(item))
        assert item["cepr_error"] is None and item["page_type"] == "article", name
        assert 0.0 <= item["cepr_confidence"] <= 1.0, name
        assert item["title"] == title, name
        for text in present:
            assert text in item["body"], (name, text)
        for text in absent:
            assert text not in item["body"], (name, text)
        assert "<" not in item["body"] and ">" not in item["body"], name  # no raw HTML


def test_legacy_encodings_decoded(crawl: tuple[list[dict], str]) -> None:
    items, _ = crawl
    by_name = {Path(item["url"]).name: item for item in items}
    # The GBK and windows-1252 files really are stored in those encodings (not UTF-8) …
    with pytest.raises(UnicodeDecodeError):
        (ARTICLES / "gbk-tea-market.html").read_bytes().decode("utf-8")
    with pytest.raises(UnicodeDecodeError):
        (ARTICLES / "festival-cafe.html").read_bytes().decode("utf-8")
    # … and come out as proper text: no replacement characters, no mojibake.
    for name in ("gbk-tea-market.html", "festival-cafe.html", "zh-wetland-birds.html"):
        body = by_name[name]["body"]
        assert "\ufffd" not in body and "Ã" not in body, name
    assert "石门村茶叶合作社社长李德华" in by_name["gbk-tea-market.html"]["body"]
    assert "Noël Garnier" in by_name["festival-cafe.html"]["body"]


def test_stats_count_cleaned_pages(crawl: tuple[list[dict], str]) -> None:
    from httpserver import parse_stats_dump

    stats = parse_stats_dump(crawl[1])
    assert stats["item_scraped_count"] == len(EXPECTED)
    assert stats["cepr/cleaned"] == len(EXPECTED)
    assert stats.get("cepr/failed", 0) == 0


def run_crawl(*args: str, cwd: Path = PROJECT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scrapy", "crawl", "newsspider", *args], check=False, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_csv_feed_has_the_same_columns_on_every_row(tmp_path: Path) -> None:
    # Issue 10, must show: `scrapy crawl newsspider -O out.csv`.
    out = tmp_path / "out.csv"
    done = run_crawl("-O", str(out), "-s", "CEPR_EXECUTOR=inline")
    assert done.returncode == 0, done.stderr[-3000:]
    with out.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    assert header == ["url", "canonical_url", "title", "body", "cepr_error", "page_type", "cepr_confidence"]
    assert len(rows) == len(EXPECTED) and all(len(row) == 7 for row in rows)
    assert all(row[1] and row[2] and row[3] and row[4] == "" and row[5] == "article" for row in rows)
    assert "dropped fields" not in done.stderr


def test_pipeline_disabled_through_item_pipelines_exports_every_item(tmp_path: Path) -> None:
    # Issue 10 item 1 and must show: the Scrapy way to disable a pipeline loses nothing.
    out = tmp_path / "out.jsonl"
    done = run_crawl("-O", str(out), "-s", 'ITEM_PIPELINES={"scrapy_cepr.pipelines.CEPRPipeline": null}')
    assert done.returncode == 0, done.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert sorted(Path(i["url"]).name for i in items) == sorted(EXPECTED)
    assert all(set(i) == {"url", "canonical_url"} for i in items)  # not cleaned, but not lost
    assert "TypeError" not in done.stderr


def test_file_links_cannot_leave_the_site(tmp_path: Path) -> None:
    # Issue 10 item 18: a link escaped with %2e%2e/ (or plain ../, or a symlink) must not
    # read a file outside the site's root into an item.
    site = tmp_path / "site"
    (site / "articles").mkdir(parents=True)
    (tmp_path / "secret.html").write_text("<html><body><p>SECRET outside the site root.</p></body></html>")
    (site / "articles" / "inside.html").write_text("<html><body><p>Inside the site.</p></body></html>")
    os.symlink(tmp_path / "secret.html", site / "articles" / "link.html")
    (site / "index.html").write_text(
        '<html><body><a href="articles/inside.html">in</a> <a href="articles/%2e%2e/%2e%2e/secret.html">a</a> '
        '<a href="articles/%2E%2E/%2E%2E/secret.html">b</a> <a href="../secret.html">c</a> '
        '<a href="articles/link.html">d</a></body></html>')
    out = tmp_path / "out.jsonl"
    done = run_crawl("-a", f"start_urls={(site / 'index.html').as_uri()}", "-O", str(out),
                     "-s", "CEPR_EXECUTOR=inline")
    assert done.returncode == 0, done.stderr[-3000:]
    items = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [Path(i["url"]).name for i in items] == ["inside.html"]
    assert "SECRET" not in out.read_text(encoding="utf-8")
