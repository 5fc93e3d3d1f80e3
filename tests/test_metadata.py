"""Metadata: JSON-LD / microdata / OpenGraph via extruct, dates via htmldate, sources
recorded, the byline setting, and the item field (``CEPR_METADATA``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scrapy_cepr import extract
from scrapy_cepr.core.metadata import (
    METADATA_KEYS,
    empty_metadata,
    extract_metadata,
    guess_language,
    move_byline,
)
from scrapy_cepr.options import ExtractOptions
from scrapy_cepr.settings import CEPRConfig
from scrapy_cepr.worker import extract_page

FIXTURES = Path(__file__).parent / "fixtures"
STRUCTURED = (FIXTURES / "meta_structured.html").read_text("utf-8")
PLAIN = (FIXTURES / "meta_plain.html").read_text("utf-8")
URL = "https://islandpost.example/travel/ferry-winter"


def test_json_ld_wins_and_each_source_is_recorded():
    m = extract_metadata(STRUCTURED, url=URL, headline="Ferry timetable changes for winter")
    assert m["headline"] == "Ferry timetable changes for winter"
    # JSON-LD (inside @graph; a second, broken JSON-LD script does not hide it) beats
    # OpenGraph and <meta> for every key it has.
    assert m["authors"] == ["Iona MacLeod", "Sam Reid"]  # not <meta name="author">
    assert m["date_published"] == "2023-11-01T07:30:00+00:00"  # not article:published_time
    assert m["date_modified"] == "2023-11-03T12:00:00+00:00"
    assert m["description"] == "Fewer sailings on the north route from December."
    assert m["image"] == "https://islandpost.example/img/ferry-lead.jpg"  # relative in JSON-LD, made absolute
    assert m["section"] == "Travel" and m["tags"] == ["ferries", "winter timetable"]
    assert m["site_name"] == "Island Post Ltd" and m["language"] == "en-GB"
    # No url in the JSON-LD article: <link rel="canonical">, resolved against the page URL.
    assert m["canonical_url"] == "https://islandpost.example/travel/ferry-winter-timetable"
    assert m["sources"] == {
        "authors": "json-ld", "date_published": "json-ld", "date_modified": "json-ld", "language": "json-ld",
        "description": "json-ld", "image": "json-ld", "canonical_url": "meta", "site_name": "json-ld",
        "section": "json-ld", "tags": "json-ld",
    }


def test_without_json_ld_opengraph_and_meta_fill_in():
    # The same page with its JSON-LD removed.
    start = STRUCTURED.index('<script type="application/ld+json">')
    end = STRUCTURED.index("</head>")
    m = extract_metadata(STRUCTURED[:start] + STRUCTURED[end:], url=URL)
    assert (m["authors"], m["sources"]["authors"]) == (["Head Author"], "meta")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2023-11-02T08:00:00+00:00", "opengraph")
    assert (m["image"], m["sources"]["image"]) == ("https://cdn.islandpost.example/og/ferry.jpg", "opengraph")
    assert (m["section"], m["site_name"]) == ("OG Section", "Island Post")
    assert (m["tags"], m["sources"]["tags"]) == (["ferry", "winter", "timetable"], "meta")
    assert (m["language"], m["sources"]["language"]) == ("en-GB", "meta")  # <html lang>
    assert m["date_modified"] is None and "date_modified" not in m["sources"]


def test_page_without_structured_data_uses_htmldate_and_the_page_text():
    m = extract_metadata(PLAIN, url="https://ville.example/marche")
    assert (m["date_published"], m["sources"]["date_published"]) == ("2022-05-14", "htmldate")  # <time datetime>
    assert (m["authors"], m["sources"]["authors"]) == (["Claire Martin"], "page text")  # <a rel="author">
    assert (m["language"], m["sources"]["language"]) == ("fr", "page text")  # no lang attribute: stop words
    for key in ("date_modified", "description", "image", "canonical_url", "site_name", "section"):
        assert m[key] is None, key
    assert m["tags"] == []


def test_lead_image_from_the_content_when_nothing_names_one():
    content = '<p>Text.</p>\n<figure><img src="https://ville.example/halle.jpg"></figure>'
    m = extract_metadata(PLAIN, url="https://ville.example/marche", content_html=content)
    assert (m["image"], m["sources"]["image"]) == ("https://ville.example/halle.jpg", "page text")


@pytest.mark.parametrize("source", ["", "   ", b"", "<html></html>"])
def test_empty_pages_give_every_key_absent(source):
    m = extract_metadata(source, headline=None)
    assert set(m) == {*METADATA_KEYS, "sources"}
    assert m == empty_metadata()


def test_hostile_structured_data_is_harmless():
    # Deep nesting, huge lists and non-http URLs in JSON-LD: bounded, no exception.
    nested = '{"@type": "Thing", "x": ' * 200 + "1" + "}" * 200
    many = '{"@type": "NewsArticle", "author": [' + ",".join([f'{{"name": "A{i}"}}' for i in range(500)]) + "]," \
           '"image": "javascript:alert(1)", "datePublished": "yesterday"}'
    page = (f'<html><head><script type="application/ld+json">{nested}</script>'
            f'<script type="application/ld+json">{many}</script></head><body><p>x</p></body></html>')
    m = extract_metadata(page, url="https://a.example/")
    assert len(m["authors"]) == 20 and m["authors"][0] == "A0"
    assert m["image"] is None  # javascript: is not a URL we give back
    assert m["date_published"] is None or m["sources"]["date_published"] == "htmldate"  # "yesterday" is not ISO


def test_guess_language():
    assert guess_language("Der Bürgermeister sagte, dass die Halle nicht mehr genutzt werde und die Stadt") == "de"
    assert guess_language("東京の市場が再開しました。") == "ja"
    assert guess_language("12345 67890") is None


def test_extraction_metadata_is_lazy():
    r = extract(STRUCTURED, url=URL)
    assert "metadata" not in r.__dict__
    assert r.metadata["authors"] == ["Iona MacLeod", "Sam Reid"] and r.metadata["headline"] == r.title
    assert "metadata" in r.__dict__
    assert r.to_dict(metadata=True)["metadata"] is r.metadata


def test_byline_stays_in_the_body_by_default_and_moves_on_request():
    kept = extract_page(STRUCTURED, URL, ExtractOptions("setpr", formats=("html",)))[0]
    assert kept.body.startswith("Iona MacLeod and Sam Reid, Travel desk\n")
    moved = extract_page(STRUCTURED, URL, ExtractOptions("setpr", formats=("html",), byline="move"))[0]
    assert moved.body == kept.body.split("\n", 1)[1]
    assert "Travel desk" not in moved.extras["body_html"]
    assert moved.extras["body_html"] == kept.extras["body_html"].split("\n", 1)[1]
    assert move_byline("No author here.\nText.", []) == ("No author here.\nText.", None)


def test_setting_and_pipeline_field():
    from test_pipeline import URL as PAGE_URL
    from test_pipeline import Harness, html_response

    assert CEPRConfig.from_settings({}).metadata is False
    assert CEPRConfig.from_settings({"CEPR_METADATA": "true"}).metadata is True
    with pytest.raises(ValueError, match="CEPR_METADATA must be True or False"):
        CEPRConfig.from_settings({"CEPR_METADATA": "maybe"})
    [item] = Harness(CEPR_METADATA=True).run(({"url": PAGE_URL}, html_response()))
    assert item["metadata"]["headline"] == item["title"] == "Storm hits coast"
    assert item["metadata"]["language"] == "en" and item["metadata"]["sources"]["language"] == "page text"
