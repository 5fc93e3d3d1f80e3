"""Fast paths of the page model and the parse give what their plain versions give
(issue 17: cepr-typed made faster without changing any output)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from scrapy_cepr.core import page as page_module


def _itemtypes_by_find(data: bytes) -> tuple[str, ...]:
    """The plain scan: ``bytes.find`` of each spelling, one after the other."""
    found = []
    for spelling in (b"itemtype", b"itemType"):
        start = data.find(spelling)
        while start >= 0:
            m = page_module._ITEMTYPE_RE.match(data, start)
            if m:
                found.append(m.group(1).decode("utf-8", "replace"))
            start = data.find(spelling, start + 8)
    return tuple(found)


@pytest.mark.parametrize("data", [
    b"",
    b"itemtyp",
    b"itemtype",  # the spelling ends the data: no value
    b"itemtype=x",
    b'<div itemscope itemType="https://schema.org/Product"><p itemtype=\'http://schema.org/Offer\'>',
    b'<a itemtype = "http://schema.org/Person">x</a><b itemtype="https://schema.org/Article" x>',
    b'<i ITEMTYPE="http://schema.org/Event"></i><i ItemType="x"></i>',  # other spellings: not read
    b"itemitemtype=a itemtypeitemtype=b iitemType=c",
    b"itemprop", b"itempro", b"<p itemprop=name>", b"xitempropitemtype=y", b"ITEMPROP itemProp",
    '<p itemtype="https://schema.org/Café">é</p>'.encode(),
    b"<p>text</p>" * 50 + b'<div itemtype="https://schema.org/Recipe">' + b"<p>more</p>" * 50,
])
def test_itemtypes_equal_plain_scan(data):
    assert page_module._microdata(data) == (_itemtypes_by_find(data), b"itemprop" in data)


def test_itemtypes_equal_plain_scan_random():
    rng = np.random.default_rng(5)
    pieces = [b"itemtype", b"itemType", b"item", b"type", b"=", b'"', b"'", b" ", b"x", b"<p>", b"i", b"/",
              b"itemprop", b"prop", b"pro", b"itemProp"]
    for _ in range(300):
        data = b"".join(pieces[k] for k in rng.integers(0, len(pieces), rng.integers(0, 40)))
        assert page_module._microdata(data) == (_itemtypes_by_find(data), b"itemprop" in data), data


def test_article_analyse_without_body_keeps_the_same_state():
    """CEPR-Typed asks CEPR-Article for its keep mask without joining its body string:
    everything else is the same as with the body."""
    from scrapy_cepr.core import article
    from scrapy_cepr.core.page import Page
    from scrapy_cepr.methods import typed

    story = "".join(f"<p>Paragraph {i} of the story, with a clause, and an end.</p>" for i in range(12))
    html = (f"<html><head><title>Storm | Herald</title></head><body><nav><a href=/>Home</a> <a href=/n>News</a>"
            f"</nav><h1>Storm</h1><div>{story}</div><ul><li><a href=/a>Other story one</a></li>"
            f"<li><a href=/b>Other story two</a></li></ul></body></html>")
    page = Page.from_html(html)
    full = article.analyse(page, article.ArticleParams())
    bare = article.analyse(page, article.ArticleParams(), body=False)
    assert full.extraction.body.startswith("Paragraph 0 of the story") and bare.extraction.body == ""
    assert bare.extraction.title == full.extraction.title == "Storm"
    np.testing.assert_array_equal(bare.extraction.nodes.keep, full.extraction.nodes.keep)
    np.testing.assert_array_equal(bare.starts, full.starts)
    art, feats, regions = typed.analyse(page, article.ArticleParams(), body=False)
    art2, feats2, regions2 = typed.analyse(page, article.ArticleParams())
    assert art.body == "" and art2.body == full.extraction.body
    np.testing.assert_array_equal(feats.x, feats2.x)
    np.testing.assert_array_equal(regions, regions2)


@pytest.mark.parametrize("method", ["cepr-typed", "cepr-article"])
def test_the_page_type_is_computed_once_per_page(monkeypatch, method):
    # The title (service pages), cepr-typed, the confidence and the crawl's worker all read
    # the page-type probabilities; Page.derived memoises them for the parse.
    from scrapy_cepr.core import pagetype
    from scrapy_cepr.options import ExtractOptions
    from scrapy_cepr.worker import extract_page

    calls = []
    real = pagetype._page_type_proba
    monkeypatch.setattr(pagetype, "_page_type_proba", lambda page: calls.append(1) or real(page))
    sentences = ["The council met on Monday, and the vote on the harbour wall was close.",
                 "Engineers had warned for years that the old stones would not hold another winter.",
                 "Residents of the lower town packed the public gallery to hear the debate.",
                 "The mayor said the repairs would begin in spring, if the budget allows it.",
                 "Opponents argued that the money should go to the flood barrier instead."]
    story = "".join(f"<p>{' '.join(sentences[i:] + sentences[:i])}</p>" for i in range(5))
    html = (f"<html><head><title>Vote | Courier</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<article><h1>Council votes on harbour wall</h1>{story}</article></body></html>")
    result, _ = extract_page(html, "http://a.example/vote", ExtractOptions(method=method, metadata=True))
    assert result.page_type == "article" and "harbour wall" in result.body
    assert result.confidence is not None
    assert len(calls) == 1


def _block_words_by_pattern(text: str) -> frozenset[str]:
    """The plain version of ``comments._block_words``: the word pattern over the whole
    lower-cased text, then the digit runs masked word by word."""
    import re

    from scrapy_cepr.core import comments
    from scrapy_cepr.core.text import CJK_RE

    text = text.lower()
    pattern = comments.WORD_RE if CJK_RE.search(text) else re.compile(r"\w+")
    return frozenset(re.sub(r"\d+", "0", w) for w in pattern.findall(text))


@pytest.mark.parametrize("text", [
    "", " ", "Posted 12:30, posted by Ann", "新闻 2024", "Café “Zoë” opens at 9:30 — 2nd floor",
    "l’été, 2nd—floor_3 (x)", "snake_case __init__ a_1 _", "tab\tnew\nline\x0bvt\x1cfs\u00a0nbsp\u2009thin",
    "Ünïcödé—dash…ellipsis«quote»·dot", "١٢٣ arabic digits ٤٥", "ﬁ ligature Ⅻ roman ²superscript",
    "\ud800 lone surrogate \udfff", "mixed 漢字and english", "ÅNGSTRÖM IS UPPER",
])
def test_block_words_equal_the_word_pattern(text):
    from scrapy_cepr.core import comments

    assert comments._block_words(text) == _block_words_by_pattern(text)


def test_block_words_equal_the_word_pattern_random():
    from scrapy_cepr.core import comments

    rng = np.random.default_rng(11)
    alphabet = list("abcXYZ019_ -.,;:'\"!?()/\\\t\n") + list("éÉßœ’‘“”—–…«»·•€°²ⅫﬁÅ٣\u00a0\u2009\u200b\u0301") + ["漢", "字", "ㅎ", "カ"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet, rng.integers(0, 30)))
        assert comments._block_words(text) == _block_words_by_pattern(text), repr(text)


def test_hidden_or_styled_equals_the_predicate_xpath():
    """The attribute-step XPath finds the elements of ``descendant::*[@hidden or @style]``,
    in the same (document) order, each once."""
    from lxml import etree

    plain = etree.XPath("descendant::*[@hidden or @style]")
    rng = np.random.default_rng(3)
    tags = ["div", "p", "span", "b", "li", "ul", "section"]
    attrs = ['', ' hidden=""', ' style="display:none"', ' style="x" hidden', ' hidden style="y"', ' class="c"',
             ' data-style="z"', ' HIDDEN', ' Style="a"']
    for _ in range(300):
        parts, stack = ["<html><body>"], []
        for _ in range(rng.integers(0, 40)):
            if stack and rng.random() < 0.4:
                parts.append(f"</{stack.pop()}>t")
            else:
                tag = tags[rng.integers(len(tags))]
                parts.append(f"<{tag}{attrs[rng.integers(len(attrs))]}>x")
                stack.append(tag)
        html = "".join(parts + [f"</{t}>" for t in reversed(stack)] + ["</body></html>"])
        root = etree.fromstring(html, etree.HTMLParser())
        found = page_module._hidden_or_styled(root)
        assert len(found) == len(plain(root)) and all(a is b for a, b in zip(found, plain(root))), html


@pytest.mark.parametrize("text", [
    "", "plain ascii", "Café “quoted” — naïve", "北京欢迎你", "ひらがな カタカナ 한국어", "\u2e7f\u2e80\u2fdf\u2fe0",
    "\u303f\u3040\u30ff\u3100\u312f\u3130\u318f\u3190\u31ff\u3200", "\u4dbf\u4dc0\u4e00\u9fff\ua000",
    "\uabff\uac00\ud7af\ud7b0\uf8ff\uf900\ufaff\ufb00", "\U0001ffff\U00020000\U0002fa1f\U0002fa20", "a\ud800b",
])
def test_count_cjk_equals_the_pattern(text):
    from scrapy_cepr.core.text import CJK_RE, count_cjk

    assert count_cjk(text) == len(CJK_RE.findall(text))


def test_count_cjk_equals_the_pattern_random():
    from scrapy_cepr.core.text import CJK_RE, count_cjk

    rng = np.random.default_rng(17)
    edges = [0x2E7F, 0x2E80, 0x2FDF, 0x2FE0, 0x303F, 0x3040, 0x312F, 0x3130, 0x318F, 0x3190, 0x31FF, 0x3200,
             0x33FF, 0x3400, 0x4DBF, 0x4DC0, 0x4DFF, 0x4E00, 0x9FFF, 0xA000, 0xABFF, 0xAC00, 0xD7AF, 0xD7B0,
             0xF8FF, 0xF900, 0xFAFF, 0xFB00, 0x1FFFF, 0x20000, 0x2FA1F, 0x2FA20, 0x41, 0xE9, 0x2019]
    for _ in range(2000):
        codes = [int(c) if rng.random() < 0.7 else int(rng.integers(0, 0x110000)) for c in rng.choice(edges, 20)]
        text = "".join(chr(c) for c in codes if not 0xD800 <= c <= 0xDFFF)
        assert count_cjk(text) == len(CJK_RE.findall(text))


def test_block_features_pick_the_first_longest_node():
    from scrapy_cepr.core.blocks import FEATURES, block_features
    from scrapy_cepr.core.page import Page

    # Two nodes of equal length in one line: the first one's path (inside <b>, not the
    # deeper <i><u>) is the line's.
    page = Page.from_html("<html><body><p><b>abcd</b> <i><u>wxyz</u></i></p><div>Another line here</div></body></html>")
    n = len(page)
    feats = block_features(page, np.ones(n), np.ones(n), 1.0, np.ones(n, dtype=bool), None)
    depth = feats.x[:, FEATURES.index("depth")].tolist()
    assert depth == [len(page.path_codes[page.path_ids[0]]), len(page.path_codes[page.path_ids[2]])]
    assert depth[0] < len(page.path_codes[page.path_ids[1]])


def _ancestor_ranges_by_matrix(table, node_mask, block_of):
    """The plain version: a (text nodes × chain) containment matrix."""
    idx = np.flatnonzero(node_mask)
    if idx.size == 0 or len(table) == 0:
        return np.zeros((0, 2), np.int64)
    owners = table.owner[idx]
    lo, hi = int(owners.min()), int(owners.max())
    a = int(table.owner[idx[0]])
    while a > 0 and not (a <= lo and table.end[a] > hi):
        a = int(table.parent[a])
    chain = []
    while a >= 0:
        chain.append(a)
        a = int(table.parent[a])
    chain_arr = np.array(chain, dtype=np.int64)
    own = table.owner
    inside = (own[:, None] >= chain_arr[None, :]) & (own[:, None] < table.end[chain_arr][None, :])
    first = np.argmax(inside, axis=0)
    last = own.size - 1 - np.argmax(inside[::-1], axis=0)
    return np.column_stack([block_of[first], block_of[last] + 1])[inside.any(axis=0)].astype(np.int64)


def test_ancestor_ranges_equal_the_containment_matrix():
    from scrapy_cepr.core.blocks import ancestor_ranges, block_ranges
    from scrapy_cepr.core.page import Page
    from scrapy_cepr.core.region import DomTable

    rng = np.random.default_rng(5)
    for k in range(60):
        parts = []
        for j in range(int(rng.integers(1, 12))):
            inner = "".join(f"<p>Line {j}.{i} of text</p>" for i in range(int(rng.integers(0, 4))))
            parts.append(f"<div><h2>Part {j}</h2>{inner}<span></span></div>" if rng.random() < 0.7 else f"<ul><li>{inner}</li></ul>")
        page = Page.from_html(f"<html><body><main><section>{''.join(parts)}</section></main><p>End {k}</p></body></html>")
        table = DomTable(page)
        starts, ends = block_ranges(page.blocks)
        block_of = np.arange(starts.size).repeat(ends - starts)
        for share in (0.0, 0.1, 0.5, 1.0):
            mask = rng.random(len(page)) < share
            assert np.array_equal(ancestor_ranges(table, mask, block_of),
                                  _ancestor_ranges_by_matrix(table, mask, block_of))


def _attribute_starts_plain(data: bytes, closes: list[list[int]], start: int, end: int) -> int:
    """The attribute starts of ``data[start:end]`` byte by byte: a separator (whitespace,
    a control byte, ``/``) or a closing quote followed by a byte that can start a name."""
    count = sum(1 for positions in closes for p in positions if start <= p < end - 1)
    for i in range(start, end - 1):
        if (data[i] <= 32 or data[i] == 47) and data[i + 1] not in b"\t\n\f\r />":
            count += 1
    return count


@pytest.mark.parametrize(("data", "closes"), [
    (b"", []),
    (b"<p a b c>", []),
    (b"<p a  b\t\tc / d>", []),
    (b'<p a="x"b="y" c>', [[4, 10]]),  # a closing quote followed by a name
    (b"<p a b=' x ' c>" * 5, [[7, 22]]),
    (b"text with words and / slashes > more", []),
])
def test_attribute_starts_with_a_limit_never_below_the_plain_count(data, closes):
    # With a limit, the separators are counted whatever follows them when that is within
    # the limit (a bound at least the exact count); above it, the exact count.
    from scrapy_cepr.core.parse import _attribute_starts

    arr = np.frombuffer(data, np.uint8)
    arrays = [np.array(c, dtype=np.intp) for c in closes]
    exact = _attribute_starts_plain(data, closes, 0, len(data))
    assert _attribute_starts(arr, arrays, 0, len(data)) == exact
    for limit in range(1, 12):
        bound = _attribute_starts(arr, arrays, 0, len(data), limit)
        assert bound >= exact
        assert bound == exact or bound <= limit



# The scripts without spaces between words (Thai, Lao, Tibetan, Myanmar, Khmer, their
# extensions), and Hangul syllables (spaced), as patterns: the reference of text_measures.
_UNSPACED_NARROW_RE = re.compile("[\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff\u19e0-\u19ff\ua9e0-\ua9ff\uaa60-\uaa7f]")
_HANGUL_RE = re.compile("[\uac00-\ud7af]")


def _text_measures_reference(text: str) -> tuple[int, float]:
    from scrapy_cepr.core.text import CJK_RE, LATIN_WORD_CHARS, WIDE_CHAR_WEIGHT

    wide = len(CJK_RE.findall(text))
    unspaced = len(_UNSPACED_NARROW_RE.findall(text)) + WIDE_CHAR_WEIGHT * (wide - len(_HANGUL_RE.findall(text)))
    return len(text) + (WIDE_CHAR_WEIGHT - 1) * wide, text.count(" ") + 1 + unspaced / LATIN_WORD_CHARS


def test_text_measures_equal_the_patterns_random():
    from scrapy_cepr.core.text import latin_lengths, text_measures

    rng = np.random.default_rng(17)
    edges = [0x0DFF, 0x0E00, 0x0FFF, 0x1000, 0x109F, 0x10A0, 0x177F, 0x1780, 0x17FF, 0x1800, 0x19DF, 0x19E0,
             0x19FF, 0x1A00, 0x2E7F, 0x2E80, 0x2FDF, 0x2FE0, 0x303F, 0x3040, 0x312F, 0x3130, 0x318F, 0x3190,
             0x31FF, 0x3200, 0x4DBF, 0x4DC0, 0x4E00, 0x9FFF, 0xA000, 0xA9DF, 0xA9E0, 0xA9FF, 0xAA00, 0xAA5F,
             0xAA60, 0xAA7F, 0xAA80, 0xABFF, 0xAC00, 0xD7AF, 0xD7B0, 0xF8FF, 0xF900, 0xFAFF, 0xFB00, 0x1FFFF,
             0x20000, 0x2FA1F, 0x2FA20, 0x20, 0x41, 0xE9]
    for _ in range(300):
        texts = []
        for _ in range(int(rng.integers(0, 8))):
            codes = [int(c) if rng.random() < 0.8 else int(rng.integers(0, 0x110000)) for c in rng.choice(edges, 12)]
            texts.append("".join(chr(c) for c in codes if not 0xD800 <= c <= 0xDFFF)[: int(rng.integers(0, 13))])
        lengths = np.fromiter(map(len, texts), np.int64, len(texts))
        latin, words = text_measures(texts, lengths)
        expected = [_text_measures_reference(t) for t in texts]
        assert latin.tolist() == [e[0] for e in expected]
        assert np.allclose(words, [e[1] for e in expected])
        assert latin_lengths(texts, lengths).tolist() == latin.tolist()


def test_text_measures_keep_the_arrays_of_spaced_scripts():
    # ASCII, accented Latin, Cyrillic, Thai without a wide character: the lengths are the
    # caller's array itself (no copy on the hot path), the words its spaces plus one.
    from scrapy_cepr.core.text import latin_lengths, text_measures

    for texts in (["Vote on Monday", "", "a b c"], ["Café “Zoë”", "Голосование в понедельник"]):
        lengths = np.fromiter(map(len, texts), np.int64, len(texts))
        latin, words = text_measures(texts, lengths)
        assert latin is lengths and latin_lengths(texts, lengths) is lengths
        assert words.tolist() == [t.count(" ") + 1.0 for t in texts]
