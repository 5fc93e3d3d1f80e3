"""The example project, run as a user would: ``scrapy crawl newsspider -O cleaned.jsonl``.

The expected values below are read off the demo pages in ``example_project/site/``
(written by hand for this project): each page's headline, a sentence from its first and
from its last article paragraph, and text of its navigation, footer, comments and related
links, which must not reach the body.
"""

from __future__ import annotations

import json
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
        assert set(item) == {"url", "title", "body"}, (name, sorted(item))  # no html, no error
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
