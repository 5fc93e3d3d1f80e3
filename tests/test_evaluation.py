"""The evaluation metrics on hand-computed examples (spec §6): the CEPR paper's P/R/F/score
(Eqs. 7–8) and the article-extraction-benchmark shingle metric."""

from __future__ import annotations

import json

import pytest

from scrapy_cepr.evaluation import (
    BenchmarkCounts,
    PaperScore,
    Sample,
    benchmark_counts,
    benchmark_summary,
    corpus_digest,
    load_corpus,
    macro_paper,
    paper_score,
    plain_page,
    stale_charset_page,
)

# ----------------------------------------------------------------------- paper metric


def test_paper_score_cjk_characters_are_tokens():
    # E = 北 京 欢 迎 你 (5 tokens), G = 北 京 欢 迎 您 们 (6 tokens): the text has no spaces,
    # so only per-character tokens can give a partial match. |E∩G| = 4 (北 京 欢 迎).
    # P = 4/5 = 0.8, R = 4/6 = 2/3, F = 2·(8/15)/(22/15) = 8/11, score = 4/(5+6-4) = 4/7.
    s = paper_score("北京欢迎你", "北京欢迎您们")
    assert s.precision == pytest.approx(0.8)
    assert s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(8 / 11)
    assert s.score == pytest.approx(4 / 7)


def test_paper_score_counts_are_multisets():
    # E = {the:2, cat:1, 猫:2} (5), G = {the:1, cat:2, 猫:1} (4);
    # |E∩G| = min(2,1) + min(1,2) + min(2,1) = 3.
    # P = 3/5, R = 3/4, F = 2·0.45/1.35 = 2/3, score = 3/(5+4-3) = 1/2.
    s = paper_score("the the cat 猫猫", "the cat cat 猫")
    assert (s.precision, s.recall) == pytest.approx((0.6, 0.75))
    assert s.f1 == pytest.approx(2 / 3)
    assert s.score == pytest.approx(0.5)


def test_paper_score_tokens_split_on_whitespace_only():
    # Latin words are whitespace-separated, punctuation stays attached: "world," != "world".
    # E = {hello, world,} G = {hello, world}: common 1, P = R = F = 1/2, score = 1/(2+2-1) = 1/3.
    s = paper_score("hello world,", "hello world")
    assert (s.precision, s.recall, s.f1) == pytest.approx((0.5, 0.5, 0.5))
    assert s.score == pytest.approx(1 / 3)


def test_paper_score_empty_cases():
    # Empty prediction: P = 0 (documented), R = 0/3 = 0. Both empty: all 1.
    assert paper_score("", "a b c") == PaperScore(0.0, 0.0, 0.0, 0.0)
    # Empty gold: P = 0/2 = 0, R = 0.
    assert paper_score("a b", "") == PaperScore(0.0, 0.0, 0.0, 0.0)
    assert paper_score("  ", "") == PaperScore(1.0, 1.0, 1.0, 1.0)


def test_macro_paper_is_the_mean_over_pages():
    # mean of (0.8, 2/3, 8/11, 4/7) and (0, 0, 0, 0): half of each.
    m = macro_paper([paper_score("北京欢迎你", "北京欢迎您们"), paper_score("", "x")])
    assert (m.precision, m.recall, m.f1, m.score) == pytest.approx((0.4, 1 / 3, 4 / 11, 2 / 7))
    assert macro_paper([]) == PaperScore(0.0, 0.0, 0.0, 0.0)


# ----------------------------------------------------------------------- benchmark metric


def test_benchmark_short_texts_give_one_short_shingle():
    # 3 tokens < 4: one shingle (Hello, big, world) on each side; equal -> tp = 1 of 1.
    c = benchmark_counts("Hello big world", "Hello, big world!")
    assert (c.tp, c.fp, c.fn, c.exact) == (1.0, 0.0, 0.0, True)
    # (Hello, big) vs (Hello, big, world): different shingles -> tp 0, fp 1, fn 1 -> /2.
    c = benchmark_counts("Hello big", "Hello big world")
    assert (c.tp, c.fp, c.fn, c.exact) == (0.0, 0.5, 0.5, False)


def test_benchmark_duplicate_shingles_are_counted():
    # gold "a b c d a b c d": 8 tokens -> 5 shingles abcd, bcda, cdab, dabc, abcd = {abcd:2, bcda,
    # cdab, dabc}; pred "a b c d" -> {abcd:1}. tp = 1, fp = 0, fn = 1 + 1 + 1 + 1 = 4; total 5.
    c = benchmark_counts("a b c d", "a b c d a b c d")
    assert (c.tp, c.fp, c.fn) == pytest.approx((0.2, 0.0, 0.8))
    # Swapped: the prediction repeats -> fp = 4/5.
    c = benchmark_counts("a b c d a b c d", "a b c d")
    assert (c.tp, c.fp, c.fn) == pytest.approx((0.2, 0.8, 0.0))


def test_benchmark_counts_are_normalised_by_their_sum():
    # pred w1..w6 -> (1234) (2345) (3456); gold w1..w5 x -> (1234) (2345) (345x).
    # tp = 2, fp = 1, fn = 1, sum 4 -> 0.5, 0.25, 0.25.
    c = benchmark_counts("w1 w2 w3 w4 w5 w6", "w1 w2 w3 w4 w5 x")
    assert (c.tp, c.fp, c.fn, c.exact) == (0.5, 0.25, 0.25, False)


def test_benchmark_tokens_are_word_matches():
    # \w+ drops punctuation and splits "It's" into It, s: both sides give It s 9 30 -> exact.
    c = benchmark_counts("It's 9:30.", "It s 9 30")
    assert (c.tp, c.exact) == (1.0, True)


def test_benchmark_summary_averaging_rules():
    # A: tp .5 fp .25 fn .25 -> p = .5/.75 = 2/3, r = 2/3.
    # B: empty prediction, gold 5 tokens -> (0, 0, 1): no precision (tp+fp = 0), recall 0.
    # C: prediction 5 tokens, empty gold -> (0, 1, 0): precision 0, no recall (tp+fn = 0).
    # D: exact -> p = r = 1.
    # P = mean over A, C, D = (2/3 + 0 + 1)/3 = 5/9; R = mean over A, B, D = 5/9; F1 = 5/9.
    # accuracy: only D has equal token lists -> 1/4.
    pages = [
        benchmark_counts("w1 w2 w3 w4 w5 w6", "w1 w2 w3 w4 w5 x"),
        benchmark_counts("", "one two three four five"),
        benchmark_counts("one two three four five", ""),
        benchmark_counts("one two three four five", "one two three four five"),
    ]
    assert pages[1] == BenchmarkCounts(0.0, 0.0, 1.0, False)
    assert pages[2] == BenchmarkCounts(0.0, 1.0, 0.0, False)
    s = benchmark_summary(pages)
    assert s["precision"] == pytest.approx(5 / 9)
    assert s["recall"] == pytest.approx(5 / 9)
    assert s["f1"] == pytest.approx(5 / 9)
    assert s["accuracy"] == pytest.approx(0.25)
    assert s["pages"] == 4


def test_benchmark_summary_f1_of_the_means():
    # Page 1 perfect (p = r = 1); page 2 (tp .2, fp 0, fn .8): p = 1, r = .2.
    # P = 1, R = .6, F1 = 2·.6/1.6 = 0.75 (not the mean of per-page F1s, which is (1 + 1/3)/2).
    s = benchmark_summary([BenchmarkCounts(1.0, 0.0, 0.0, True), BenchmarkCounts(0.2, 0.0, 0.8, False)])
    assert (s["precision"], s["recall"], s["f1"], s["accuracy"]) == pytest.approx((1.0, 0.6, 0.75, 0.5))


def test_benchmark_summary_empty_pages_are_left_out_of_the_means():
    # Empty prediction and empty gold: tp = fp = fn = 0, so the page enters neither mean
    # (numerator and denominator 0), but its token lists are equal (accuracy 1).
    c = benchmark_counts("", "")
    assert c == BenchmarkCounts(0.0, 0.0, 0.0, True)
    s = benchmark_summary([c, BenchmarkCounts(0.5, 0.5, 0.0, False)])
    # Only the second page is averaged: p = .5/1 = .5, r = .5/.5 = 1, F1 = 2·.5/1.5 = 2/3.
    assert (s["precision"], s["recall"], s["f1"], s["accuracy"]) == pytest.approx((0.5, 1.0, 2 / 3, 0.5))
    assert benchmark_summary([])["f1"] == 0.0


# ----------------------------------------------------------------------- corpus readers


def test_load_corpus_jsonl_and_digest(tmp_path):
    path = tmp_path / "c.jsonl"
    records = [
        {"id": "b", "html": "<p>B</p>", "gold_body": "B"},
        {"html": "<p>A</p>", "gold_body": "A", "url": "http://x/a"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    samples = list(load_corpus(path))
    # File order; a record without id gets its line number (2).
    assert samples == [Sample("b", "<p>B</p>", "B", None), Sample("2", "<p>A</p>", "A", "http://x/a")]
    # The directory holding exactly one .jsonl reads the same.
    assert list(load_corpus(tmp_path)) == samples
    digest = corpus_digest(samples)
    assert digest == corpus_digest(load_corpus(path))
    changed = [samples[0], Sample("2", "<p>A</p>", "A.", "http://x/a")]
    assert corpus_digest(changed) != digest


def test_load_corpus_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(load_corpus(tmp_path / "missing"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"html": "<p>x</p>"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=":1:"):
        list(load_corpus(bad))


# ----------------------------------------------------------------------- plain pages


def test_plain_page_drops_declarations_and_html5_sections():
    html = (
        '<html><head><meta charset="utf-8"><meta property="og:type" content="article">'
        '<script type="application/ld+json">{"@type": "NewsArticle"}</script></head><body>'
        '<nav><a href="/">Home</a></nav><article itemscope itemtype="https://schema.org/NewsArticle">'
        '<h1 itemprop="headline">Harbour wall repaired</h1><p>The wall was repaired <time>today</time>.</p>'
        '</article><footer>Contact</footer></body></html>'
    )
    assert plain_page(html) == (
        '<html><head><meta charset="utf-8"></head><body><div><a href="/">Home</a></div><div>'
        "<h1>Harbour wall repaired</h1><p>The wall was repaired <span>today</span>.</p></div>"
        "<div>Contact</div></body></html>"
    )


def test_stale_charset_page_declares_a_legacy_charset_over_utf8_bytes():
    # Every declaration goes (the <meta charset>, the http-equiv one, the XML
    # declaration); the legacy one comes first in the head; the text is UTF-8 as before.
    html = ('<?xml version="1.0" encoding="utf-8"?><html><head><meta charset="utf-8">'
            '<meta http-equiv="Content-Type" content="text/html; charset=utf-8"><title>Café</title></head>'
            "<body><p>Straße</p></body></html>").encode()
    out = stale_charset_page(html, "windows-1251")
    assert out == ('<html><head><meta charset="windows-1251"><title>Café</title></head>'
                   "<body><p>Straße</p></body></html>").encode()
    # Without a head, the declaration opens the page.
    assert stale_charset_page("<p>ü</p>", "gbk") == '<meta charset="gbk"><p>ü</p>'.encode()


def test_plain_page_drops_a_hidden_microdata_copy():
    # A page of an older template has no machine-readable copy of its data: the hidden
    # element holding microdata goes (as the page model drops it), not only its
    # attributes, which would leave its dates and numbers as visible text. A hidden
    # element without microdata (a tab) stays.
    html = (
        "<html><body><p>The wall was repaired.</p>"
        '<div style="display:none" itemscope><span itemprop="datePublished">2019-11-13</span>'
        '<span itemprop="width">500</span></div><div hidden>Tab text.</div></body></html>'
    )
    assert plain_page(html) == (
        "<html><body><p>The wall was repaired.</p><div hidden>Tab text.</div></body></html>"
    )
