"""Evaluation: the CEPR paper's metrics and the article-extraction-benchmark metric
(spec §6), and readers for evaluation corpora.

Metrics are pure functions of (predicted text, gold text); corpus readers yield
:class:`Sample` objects lazily so that a large corpus is never held in memory at once.
"""

from __future__ import annotations

import gzip
import hashlib
import heapq
import json
import logging
import os
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .api import extract
from .core.errors import NotHTMLError
from .core.text import paper_tokens, word_tokens
from .methods import get_method

__all__ = [
    "CORPUS_ENV",
    "FLOOR_TOLERANCE",
    "REPIN_COMMAND",
    "MethodResult",
    "evaluate_methods",
    "floor_record",
    "PAGE_TYPES",
    "FONT_SIZES",
    "WCXB_ENV",
    "WcxbSample",
    "BenchmarkCounts",
    "PageLoss",
    "PaperScore",
    "Sample",
    "SnippetCounts",
    "benchmark_counts",
    "benchmark_summary",
    "br_page",
    "corpus_digest",
    "font_heading_page",
    "heading_free_page",
    "load_corpus",
    "load_wcxb",
    "format_page_losses",
    "macro_paper",
    "page_f1",
    "page_loss",
    "paper_score",
    "plain_page",
    "snippet_counts",
    "snippet_summary",
    "table_page",
    "word_f1",
]

logger = logging.getLogger(__name__)

#: Environment variable naming the article-extraction-benchmark directory.
CORPUS_ENV = "CEPR_BENCHMARK_DIR"
#: How far below the pinned F1 the quality gate tolerates (absolute F1).
FLOOR_TOLERANCE = 0.005
#: The command that re-pins the quality floor (``tests/quality_floor.json``).
REPIN_COMMAND = "scrapy-cepr evaluate $CEPR_BENCHMARK_DIR --method all --write-floor tests/quality_floor.json"


@dataclass(frozen=True)
class PaperScore:
    """Per-page scores of the CEPR paper (Eqs. 7–8): precision, recall, F1 and score,
    each in [0, 1]."""

    precision: float
    recall: float
    f1: float
    score: float


def paper_score(predicted: str, gold: str) -> PaperScore:
    """CEPR Eqs. 7–8 over token multisets (spec §6): words for Latin scripts, single
    characters for CJK (:func:`~scrapy_cepr.core.text.paper_tokens`).

    ``P = |E∩G|/|E|``, ``R = |E∩G|/|G|``, ``F = 2PR/(P+R)``, and
    ``score = |E∩G| / (|E| + |G| − |E∩G|)`` with ``|E∩G| = Σ_t min(cnt_E(t), cnt_G(t))``.
    The score uses the bag overlap; the LCS form of Eq. 8 is an [open] alternative we do
    not use. Empty E gives P = 0; empty G gives R = 0; both empty give all 1.

    >>> s = paper_score("a b c d", "a b c e f")
    >>> round(s.precision, 3), round(s.recall, 3), round(s.f1, 3), round(s.score, 3)
    (0.75, 0.6, 0.667, 0.5)
    >>> paper_score("北京", "北方").f1
    0.5
    """
    e = Counter(paper_tokens(predicted))
    g = Counter(paper_tokens(gold))
    ne, ng = sum(e.values()), sum(g.values())
    if ne == 0 and ng == 0:
        return PaperScore(1.0, 1.0, 1.0, 1.0)
    common = sum((e & g).values())
    p = common / ne if ne else 0.0
    r = common / ng if ng else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    union = ne + ng - common
    return PaperScore(p, r, f, common / union if union else 0.0)


def macro_paper(scores: Sequence[PaperScore]) -> PaperScore:
    """Macro average (mean over pages) of paper scores; all 0 for no pages."""
    n = len(scores)
    if not n:
        return PaperScore(0.0, 0.0, 0.0, 0.0)
    return PaperScore(
        sum(s.precision for s in scores) / n,
        sum(s.recall for s in scores) / n,
        sum(s.f1 for s in scores) / n,
        sum(s.score for s in scores) / n,
    )


@dataclass(frozen=True)
class BenchmarkCounts:
    """Per-page counts of the article-extraction-benchmark metric: tp, fp, fn divided by
    their sum (so each page weighs the same), and whether the token lists are equal."""

    tp: float
    fp: float
    fn: float
    exact: bool


def _shingles(text: str, n: int = 4) -> Counter:
    tokens = word_tokens(text)
    if len(tokens) < n:
        return Counter([tuple(tokens)]) if tokens else Counter()
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def benchmark_counts(predicted: str, gold: str) -> BenchmarkCounts:
    """The article-extraction-benchmark metric for one page (spec §6): tokens ``\\w+``,
    4-token shingles as multisets, ``tp = Σ min``, ``fp = Σ max(0, pred − true)``,
    ``fn = Σ max(0, true − pred)``, then normalised by ``tp + fp + fn``.

    >>> c = benchmark_counts("one two three four five", "one two three four six")
    >>> round(c.tp, 3), round(c.fp, 3), round(c.fn, 3), c.exact
    (0.333, 0.333, 0.333, False)
    >>> benchmark_counts("Hi there", "hi there").tp   # case matters; one short shingle each
    0.0
    """
    pred, true = _shingles(predicted), _shingles(gold)
    tp = sum((pred & true).values())
    fp = sum((pred - true).values())
    fn = sum((true - pred).values())
    total = tp + fp + fn
    exact = word_tokens(predicted) == word_tokens(gold)
    if total == 0:
        return BenchmarkCounts(0.0, 0.0, 0.0, exact)
    return BenchmarkCounts(tp / total, fp / total, fn / total, exact)


def benchmark_summary(counts: Sequence[BenchmarkCounts]) -> dict[str, float]:
    """Corpus-level precision, recall, F1 and accuracy of the benchmark metric (spec §6).

    Per page, ``precision = tp/(tp+fp)`` and ``recall = tp/(tp+fn)``; both are 1 when
    ``fp = fn = 0`` and 0 when numerator and denominator are 0. Precision is averaged over
    pages with ``tp+fp > 0``, recall over pages with ``tp+fn > 0``; ``F1 = 2PR/(P+R)``
    of the means; accuracy is the share of pages whose token lists are equal.

    >>> s = benchmark_summary([BenchmarkCounts(1.0, 0.0, 0.0, True), BenchmarkCounts(0.5, 0.5, 0.0, False)])
    >>> s["precision"], s["recall"], round(s["f1"], 4), s["accuracy"]
    (0.75, 1.0, 0.8571, 0.5)
    """
    precisions, recalls = [], []
    for c in counts:
        if c.fp == 0 and c.fn == 0 and c.tp > 0:
            precisions.append(1.0)
            recalls.append(1.0)
            continue
        if c.tp + c.fp > 0:
            precisions.append(c.tp / (c.tp + c.fp))
        if c.tp + c.fn > 0:
            recalls.append(c.tp / (c.tp + c.fn))
    p = sum(precisions) / len(precisions) if precisions else 0.0
    r = sum(recalls) / len(recalls) if recalls else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    acc = sum(c.exact for c in counts) / len(counts) if counts else 0.0
    return {"precision": p, "recall": r, "f1": f1, "accuracy": acc, "pages": len(counts)}


@dataclass(frozen=True)
class Sample:
    """One evaluation page: ``id``, ``html`` (str or bytes), ``gold_body``, ``url``."""

    id: str
    html: str | bytes
    gold_body: str
    url: str | None = None


def load_corpus(path: str | os.PathLike[str]) -> Iterator[Sample]:
    """Yield the pages of an evaluation corpus, sorted by id, one at a time.

    Two layouts are read:

    * the article-extraction-benchmark layout: a directory with ``ground-truth.json``
      (``{id: {"articleBody", "url"}}``) and ``html/<id>.html.gz`` (or ``.html``);
    * JSON lines: a ``.jsonl`` file (or a directory holding exactly one) whose records
      have ``html`` and ``gold_body``, and optionally ``id`` and ``url``.

    :raises FileNotFoundError: *path* does not exist or holds neither layout.
    :raises ValueError: a JSON-lines record lacks ``html`` or ``gold_body`` (the message
        gives the line number).
    """
    root = Path(path)
    if root.is_dir() and (root / "ground-truth.json").is_file():
        truth = json.loads((root / "ground-truth.json").read_text(encoding="utf-8"))
        for pid in sorted(truth):
            gz = root / "html" / f"{pid}.html.gz"
            if gz.is_file():
                html = gzip.decompress(gz.read_bytes())
            else:
                html = (root / "html" / f"{pid}.html").read_bytes()
            yield Sample(pid, html, truth[pid].get("articleBody", ""), truth[pid].get("url"))
        return
    if root.is_dir():
        found = sorted(root.glob("*.jsonl"))
        if len(found) != 1:
            raise FileNotFoundError(
                f"{root}: expected ground-truth.json with html/, or one .jsonl file with html and gold_body"
            )
        root = found[0]
    if not root.is_file():
        raise FileNotFoundError(f"{root}: no such corpus file or directory")
    with root.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            if "html" not in rec or "gold_body" not in rec:
                raise ValueError(f"{root}:{lineno}: a record needs 'html' and 'gold_body'")
            yield Sample(str(rec.get("id", lineno)), rec["html"], rec["gold_body"], rec.get("url"))


def corpus_digest(samples: Iterable[Sample]) -> str:
    """SHA-256 over the ids, HTML and gold bodies of *samples* in order: a fingerprint
    that changes whenever the corpus does (the quality gate pins it)."""
    h = hashlib.sha256()
    for s in samples:
        html = s.html.encode("utf-8") if isinstance(s.html, str) else s.html
        for part in (s.id.encode(), html, s.gold_body.encode("utf-8")):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()


def page_f1(counts: BenchmarkCounts) -> float:
    """One page's benchmark F1, ``2·tp / (2·tp + fp + fn)`` of its normalised shingle
    counts (spec §6): 1 for an exact match, 0 when nothing is right.

    >>> round(page_f1(BenchmarkCounts(0.5, 0.25, 0.25, False)), 4)
    0.6667
    """
    denom = 2 * counts.tp + counts.fp + counts.fn
    return 2 * counts.tp / denom if denom else 0.0


@dataclass(frozen=True)
class PageLoss:
    """What a method got wrong on one page (see :func:`page_loss`).

    ``f1``, ``precision``, ``recall`` are the page's benchmark scores in [0, 1];
    ``kept`` the predicted lines that are (mostly) not in the gold body, ``missed`` the
    gold lines that are (mostly) not in the prediction, each as short excerpts (at most
    ``width`` characters), longest first.
    """

    id: str
    url: str | None
    f1: float
    precision: float
    recall: float
    kept: list[str]
    missed: list[str]


def _line_misses(lines: Iterable[str], other: str, n: int = 4) -> list[str]:
    """The *lines* whose 4-token shingles are mostly (over half) absent from *other*."""
    target = set(_shingles(other, n))
    out = []
    for line in lines:
        own = _shingles(line, n)
        total = sum(own.values())
        if total and sum(v for k, v in own.items() if k in target) * 2 < total:
            out.append(line.strip())
    return out


def _excerpt(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def page_loss(sample_id: str, url: str | None, predicted: str, gold: str, *, excerpts: int = 3, width: int = 100) -> PageLoss:
    """Where the prediction of one page differs from its gold body, line by line.

    A predicted line is *kept* wrongly when most of its 4-token shingles (the benchmark's
    unit, spec §6) are not in the gold body; a gold line is *missed* when most of its
    shingles are not in the prediction. At most *excerpts* of each, longest first, cut to
    *width* characters.

    >>> loss = page_loss("p1", None, "Story one two three four.\\nShare this on your feed now",
    ...                  "Story one two three four.\\nA second paragraph of the story here.")
    >>> loss.kept, loss.missed
    (['Share this on your feed now'], ['A second paragraph of the story here.'])
    >>> round(loss.f1, 3)   # 2 shingles right, 6 wrong, 7 missed: 4 / 17
    0.235
    """
    counts = benchmark_counts(predicted, gold)
    p = counts.tp / (counts.tp + counts.fp) if counts.tp + counts.fp else 0.0
    r = counts.tp / (counts.tp + counts.fn) if counts.tp + counts.fn else 0.0
    kept = sorted(_line_misses(predicted.splitlines(), gold), key=len, reverse=True)[:excerpts]
    missed = sorted(_line_misses(gold.splitlines(), predicted), key=len, reverse=True)[:excerpts]
    return PageLoss(
        sample_id, url, page_f1(counts), p, r, [_excerpt(t, width) for t in kept], [_excerpt(t, width) for t in missed]
    )


def format_page_losses(method: str, losses: Sequence[PageLoss]) -> str:
    """A plain-text report of *losses* (worst first): per page its id, URL, F1/P/R and
    the excerpts it kept wrongly (``+``) and missed (``-``)."""
    lines = [f"{method}: {len(losses)} page(s) with the lowest F1"]
    for loss in losses:
        lines.append(
            f"\n{loss.id[:16]}  F1 {loss.f1:.3f}  P {loss.precision:.3f}  R {loss.recall:.3f}  {loss.url or ''}"
        )
        lines.extend(f"  + {t}" for t in loss.kept)
        lines.extend(f"  - {t}" for t in loss.missed)
    return "\n".join(lines)


#: Environment variable naming the WCXB development split (``wcxb-dev``: ``metadata.json``,
#: ``dev/html/NNNN.html.gz``, ``dev/ground-truth/NNNN.json``).
WCXB_ENV = "CEPR_WCXB_DIR"

#: WCXB's seven page types (Foley 2026), in the benchmark's order.
PAGE_TYPES = ("article", "forum", "product", "collection", "listing", "documentation", "service")



#: HTML5's sectioning and grouping elements and what :func:`plain_page` makes of them.
PLAIN_PAGE_RENAMES = {"article": "div", "main": "div", "section": "div", "nav": "div", "aside": "div",
                      "header": "div", "footer": "div", "figure": "div", "figcaption": "div", "time": "span"}
_MICRODATA = ("itemscope", "itemtype", "itemprop")


def plain_page(html: str | bytes) -> str:
    """*html* as a page of an older template that declares nothing about itself: a
    robustness probe for extractors and page-type models tuned on recent pages.

    Removed: JSON-LD ``<script>`` blocks, every ``<meta>`` but ``charset`` and
    ``http-equiv`` ones, a hidden element holding microdata (the machine-readable copy
    of the page's data that the page model drops too,
    :func:`~scrapy_cepr.core.page.drop_hidden_microdata`), and the microdata attributes
    (``itemscope``, ``itemtype``, ``itemprop``). Renamed (:data:`PLAIN_PAGE_RENAMES`): ``article``, ``main``, ``section``,
    ``nav``, ``aside``, ``header``, ``footer``, ``figure`` and ``figcaption`` become
    ``div``, ``time`` becomes ``span``; their text stays where it was. Bytes are decoded as
    :func:`scrapy_cepr.core.page.decode_html` does. Returns the serialised document (str).

    >>> plain_page('<html><head><meta property="og:type" content="article"></head><body>'
    ...            '<article itemscope><p>Text <time>today</time></p></article></body></html>')
    '<html><head></head><body><div><p>Text <span>today</span></p></div></body></html>'
    """
    from lxml import html as lxml_html

    return lxml_html.tostring(_plain_root(html), encoding="unicode")


def _plain_root(html: str | bytes):
    """:func:`plain_page`'s document as an lxml tree (parsed once, rewritten in place)."""
    from lxml import html as lxml_html

    from .core.page import decode_html, drop_hidden_microdata

    root = lxml_html.fromstring(decode_html(html).encode("utf-8"), parser=lxml_html.HTMLParser(encoding="utf-8"))
    for el in root.xpath('//script[@type="application/ld+json"] | //meta[not(@charset) and not(@http-equiv)]'):
        el.getparent().remove(el)
    drop_hidden_microdata(root)
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        for name in _MICRODATA:
            el.attrib.pop(name, None)
        if el.tag in PLAIN_PAGE_RENAMES:
            el.tag = PLAIN_PAGE_RENAMES[el.tag]
    return root


def br_page(html: str | bytes) -> str:
    """*html* as :func:`plain_page`, with its paragraphs written as pages of the 1990s
    and 2000s write them: each ``<p>`` becomes a ``<font>`` followed by two ``<br>``
    (HTML 3.2 had no style sheets; a blank line between paragraphs was two line breaks,
    and the text was wrapped in ``<font>`` for its face and size). The text and its order
    are unchanged; a browser shows the same lines. Returns the serialised document (str).

    >>> br_page('<html><body><div><p>One.</p><p>Two <b>bold</b>.</p></div></body></html>')
    '<html><body><div><font>One.</font><br><br><font>Two <b>bold</b>.</font><br><br></div></body></html>'
    """
    from lxml import html as lxml_html

    return lxml_html.tostring(_br_root(html), encoding="unicode")


def _br_root(html: str | bytes):
    """:func:`br_page`'s document as an lxml tree."""
    from lxml import html as lxml_html

    root = _plain_root(html)
    for p in list(root.iter("p")):
        p.tag = "font"
        p.attrib.clear()
        parent = p.getparent()
        at = parent.index(p)
        breaks = [lxml_html.Element("br"), lxml_html.Element("br")]
        breaks[1].tail, p.tail = p.tail, None
        parent[at + 1:at + 1] = breaks
    return root


#: The headings and the ``<font size>`` a browser gives them (HTML 3.2's sizes 1–7 against
#: the user agent style sheet: ``h1`` 2em is ``xx-large``, size 6; ``h6`` 0.67em, size 1).
FONT_SIZES = {"h1": "6", "h2": "5", "h3": "4", "h4": "3", "h5": "2", "h6": "1"}


def heading_free_page(html: str | bytes) -> str:
    """*html* as :func:`plain_page`, with its headings (``h1``–``h6``) written as styled
    ``div`` boxes, as templates that style a ``<div class="headline">`` write them. The text
    and its lines are unchanged. Returns the serialised document (str).

    >>> heading_free_page('<html><body><h1 class="t">Storm</h1><p>Text.</p></body></html>')
    '<html><body><div class="t">Storm</div><p>Text.</p></body></html>'
    """
    from lxml import html as lxml_html

    root = _plain_root(html)
    for heading in list(root.iter(*FONT_SIZES)):
        heading.tag = "div"
    return lxml_html.tostring(root, encoding="unicode")


def font_heading_page(html: str | bytes) -> str:
    """*html* as :func:`br_page`, with its headings written as pages of the 1990s wrote
    them: each ``h1``–``h6`` becomes ``<font size=N><b>…</b></font>`` (:data:`FONT_SIZES`)
    alone on its line, a ``<br>`` before and after it; its attributes go. The text and its
    lines are unchanged. Returns the serialised document (str).

    >>> font_heading_page('<html><body><div><h1 id="t">Storm</h1><p>Text.</p></div></body></html>')
    '<html><body><div><br><font size="6"><b>Storm</b></font><br><font>Text.</font><br><br></div></body></html>'
    """
    from lxml import html as lxml_html

    root = _br_root(html)
    for heading in list(root.iter(*FONT_SIZES)):
        size = FONT_SIZES[heading.tag]
        _wrap_content(heading, "b")
        heading.attrib.clear()
        heading.tag = "font"
        heading.set("size", size)
        after = lxml_html.Element("br")
        after.tail, heading.tail = heading.tail, None
        heading.addnext(after)
        heading.addprevious(lxml_html.Element("br"))
    return lxml_html.tostring(root, encoding="unicode")


def _wrap_content(el, tag: str):
    """Move *el*'s text and children into a new *tag* element, its only child (returned).

    >>> from lxml import html
    >>> div = html.fromstring("<div>One <b>two</b></div>")
    >>> _wrap_content(div, "td").tag, html.tostring(div)
    ('td', b'<div><td>One <b>two</b></td></div>')
    """
    inner = el.makeelement(tag, {})
    inner.text, el.text = el.text, None
    inner.extend(list(el))
    el.append(inner)
    return inner


#: The elements a ``<table>`` may stand in without the parser moving it (a table inside a
#: paragraph, a heading or a link is closed or moved out of it by the HTML parser).
_TABLE_CONTAINERS = frozenset(["html", "body", "div", "table", "tbody", "tr", "td", "form", "center",
                               "blockquote", "li", "dd", "fieldset"])


def table_page(html: str | bytes) -> str:
    """*html* as :func:`plain_page`, laid out in tables as pages of the late 1990s and
    2000s were: each ``div`` becomes a one-cell table (``table > tr > td``, the ``div``'s
    attributes on the ``table``), when all its ancestors may hold a table (a ``div`` inside
    a paragraph, a heading or a link stays, since the parser would move a table out of
    it). The text and its order are unchanged; a browser shows the same lines. Returns the
    serialised document (str).

    >>> table_page('<html><body><div id="story"><p>One.</p>Two.</div></body></html>')
    '<html><body><table id="story"><tr><td><p>One.</p>Two.</td></tr></table></body></html>'
    """
    from lxml import html as lxml_html

    root = _plain_root(html)
    divs = [div for div in root.iter("div") if all(a.tag in _TABLE_CONTAINERS for a in div.iterancestors())]
    for div in divs:
        _wrap_content(div, "td")
        _wrap_content(div, "tr")
        div.tag = "table"
    return lxml_html.tostring(root, encoding="unicode")


_CHARSET_DECLARATION_RE = re.compile(r"<meta\b[^>]*?\bcharset\s*=[^>]*>|<\?xml\b[^>]*>", re.IGNORECASE)
_HEAD_RE = re.compile(r"<head\b[^>]*>", re.IGNORECASE)


def _undeclared(html: str | bytes) -> str:
    """*html* decoded as :func:`scrapy_cepr.core.page.decode_html` does, without its charset
    declarations (every ``<meta>`` with a ``charset`` and the XML declaration)."""
    from .core.page import decode_html

    return _CHARSET_DECLARATION_RE.sub("", decode_html(html))


def stale_charset_page(html: str | bytes, charset: str) -> bytes:
    """*html* as a page transcoded to UTF-8 after it was fetched, whose markup still
    names the legacy *charset* it was served in: a robustness probe for decoders (an
    archive, a corpus or a saved page often keeps such a ``<meta>``). The page is decoded
    as :func:`scrapy_cepr.core.page.decode_html` does; its charset declarations (every
    ``<meta>`` with a ``charset`` and the XML declaration) are removed, ``<meta
    charset="…">`` naming *charset* is put first in the ``<head>`` (first in the page
    without one), and the result is encoded in UTF-8. The text is unchanged.

    >>> stale_charset_page('<html><head><meta charset="utf-8"><title>Café</title></head></html>', "gbk")
    b'<html><head><meta charset="gbk"><title>Caf\\xc3\\xa9</title></head></html>'
    """
    source = _undeclared(html)
    meta = f'<meta charset="{charset}">'
    head = _HEAD_RE.search(source)
    at = head.end() if head else 0
    return (source[:at] + meta + source[at:]).encode("utf-8")


def legacy_page(html: str | bytes) -> tuple[bytes, str]:
    """*html* as a page of the 2000s saved without its HTTP header: encoded in the legacy
    encoding that a browser expects of its script (windows-1252 for Latin, windows-1251
    for Cyrillic, GB18030 for Han, Shift_JIS when kana are among the ideographs, EUC-KR for
    Hangul, ISO-8859-7 for Greek, windows-1256 for Arabic, windows-1255 for Hebrew,
    windows-874 for Thai; the HTML standard's default encodings of those locales), its
    charset declarations removed (as :func:`stale_charset_page`), characters the encoding
    lacks written as numeric character references. The script is the one most of the
    page's non-ASCII letters are written in. Returns ``(bytes, encoding)``: a decoder must
    find the encoding without a declaration.

    >>> legacy_page("<html><head><meta charset=utf-8></head><p>Москва €</p></html>")
    (b'<html><head></head><p>\\xcc\\xee\\xf1\\xea\\xe2\\xe0 \\x88</p></html>', 'cp1251')
    """
    import unicodedata

    source = _undeclared(html)
    scripts: Counter[str] = Counter()
    for char in source:
        if ord(char) > 127 and char.isalpha():
            scripts[unicodedata.name(char, "LATIN").split(" ")[0]] += 1
    script = scripts.most_common(1)[0][0] if scripts else "LATIN"
    if script == "CJK":
        script = "HIRAGANA" if scripts["HIRAGANA"] + scripts["KATAKANA"] else "CJK"
    encoding = _SCRIPT_ENCODINGS.get(script, "cp1252")
    return source.encode(encoding, "xmlcharrefreplace"), encoding


#: :func:`legacy_page`'s encoding per script (Unicode character name prefix).
_SCRIPT_ENCODINGS = {
    "LATIN": "cp1252", "CYRILLIC": "cp1251", "CJK": "gb18030", "HIRAGANA": "shift_jis", "KATAKANA": "shift_jis",
    "HANGUL": "euc_kr", "GREEK": "iso8859_7", "ARABIC": "cp1256", "HEBREW": "cp1255", "THAI": "cp874",
}


#: The response head that :func:`http_head_page` puts before a page.
HTTP_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nServer: Apache\r\n\r\n"


def http_head_page(html: str | bytes) -> bytes:
    """*html* as a crawler that stores the whole HTTP response stores it: the status line
    and headers (:data:`HTTP_HEAD`) first, then the page, decoded as
    :func:`scrapy_cepr.core.page.decode_html` does and encoded in UTF-8 (the header says
    so). A robustness probe: the text before ``<html>`` starts the body, in a browser as
    in libxml2, and the page's ``<title>`` and ``<meta>`` follow it there.

    >>> http_head_page("<html><body><p>Hi</p></body></html>")[-39:]
    b'\\r\\n\\r\\n<html><body><p>Hi</p></body></html>'
    """
    from .core.page import decode_html

    return HTTP_HEAD + decode_html(html).encode("utf-8")


@dataclass(frozen=True)
class WcxbSample(Sample):
    """One WCXB page: a :class:`Sample` (``gold_body`` is ``ground_truth.main_content``)
    plus its ``page_type`` (one of :data:`PAGE_TYPES`), ``domain`` (for folds grouped by
    domain), gold ``title``, ``author`` and ``date`` (``YYYY-MM-DD``; each ``""`` when the
    gold has none) and the ``must``/``must_not`` snippets."""

    page_type: str = "article"
    domain: str = ""
    title: str = ""
    author: str = ""
    date: str = ""
    must: tuple[str, ...] = ()
    must_not: tuple[str, ...] = ()


def load_wcxb(path: str | os.PathLike[str]) -> Iterator[WcxbSample]:
    """Yield the pages of a WCXB split directory, sorted by file id, one at a time.

    *path* holds ``metadata.json`` and ``dev/`` (``html/NNNN.html.gz``,
    ``ground-truth/NNNN.json``), as WCXB (Foley 2026, CC-BY-4.0) ships them. Pages listed in
    the metadata without both files are passed over. The page type is WCXB's own reading
    (``_internal.page_type.primary``; ``category`` counts as ``collection``, as its
    ``evaluate.py`` does).

    :raises FileNotFoundError: *path* has no ``metadata.json``.
    """
    root = Path(path)
    meta_file = root / "metadata.json"
    if not meta_file.is_file():
        raise FileNotFoundError(f"{root}: no metadata.json (expected a WCXB split directory)")
    files = json.loads(meta_file.read_text(encoding="utf-8"))["files"]
    for fid in sorted(files):
        info = files[fid]
        split = info.get("split", "dev")
        html_file = root / split / "html" / f"{fid}.html.gz"
        gold_file = root / split / "ground-truth" / f"{fid}.json"
        if not (html_file.is_file() and gold_file.is_file()):
            continue
        data = json.loads(gold_file.read_text(encoding="utf-8"))
        gold = data.get("ground_truth") or {}
        internal = (data.get("_internal") or {}).get("page_type") or {}
        page_type = internal.get("primary") if isinstance(internal, dict) else internal
        page_type = "collection" if page_type == "category" else (page_type or info.get("page_type", "article"))
        yield WcxbSample(
            id=fid,
            html=gzip.decompress(html_file.read_bytes()),
            gold_body=gold.get("main_content") or "",
            url=data.get("url"),
            page_type=page_type,
            domain=info.get("domain", ""),
            title=gold.get("title") or "",
            author=gold.get("author") or "",
            date=gold.get("publish_date") or "",
            must=tuple(gold.get("with") or ()),
            must_not=tuple(gold.get("without") or ()),
        )


def word_f1(predicted: str, gold: str) -> tuple[float, float, float]:
    """WCXB's word-level (precision, recall, F1) of one page: bags of lowercased ``\\w+``
    tokens, overlap counted with multiplicity, as the benchmark's ``evaluate.py``. An empty
    gold scores 1.0 only against an empty prediction.

    >>> word_f1("The cat sat", "the cat sat down")
    (1.0, 0.75, 0.8571428571428571)
    >>> word_f1("", "")
    (1.0, 1.0, 1.0)
    """
    pred = Counter(re.findall(r"\w+", predicted.lower())) if predicted else Counter()
    ref = Counter(re.findall(r"\w+", gold.lower())) if gold else Counter()
    if not ref:
        return (1.0, 1.0, 1.0) if not pred else (0.0, 0.0, 0.0)
    if not pred:
        return (0.0, 0.0, 0.0)
    overlap = sum((pred & ref).values())
    p, r = overlap / sum(pred.values()), overlap / sum(ref.values())
    return (p, r, 2 * p * r / (p + r) if p + r else 0.0)


@dataclass(frozen=True)
class SnippetCounts:
    """Per-page counts of trafilatura's evaluation metric: ``tp`` = ``with`` snippets found,
    ``fn`` = ``with`` snippets missing, ``fp`` = ``without`` snippets found, ``tn`` =
    ``without`` snippets missing (integers)."""

    tp: int
    fn: int
    fp: int
    tn: int


def snippet_counts(predicted: str | None, must: Iterable[str], must_not: Iterable[str]) -> SnippetCounts:
    """Trafilatura's evaluation metric for one page (``tests/comparison*.py`` of trafilatura;
    the same ``with``/``without`` snippets as WCXB's ground truth): a snippet counts as found
    when it is an exact substring of *predicted* (``snippet in predicted``, no normalisation).
    A ``None`` or empty *predicted* finds nothing: every ``with`` is a false negative and every
    ``without`` a true negative.

    >>> snippet_counts("Rain fell. Home", ["Rain fell.", "Sun"], ["Home", "Login"])
    SnippetCounts(tp=1, fn=1, fp=1, tn=1)
    >>> snippet_counts(None, ["a"], ["b"])
    SnippetCounts(tp=0, fn=1, fp=0, tn=1)
    """
    text = predicted or ""
    must, must_not = list(must), list(must_not)
    tp = sum(1 for s in must if text and s in text)
    fp = sum(1 for s in must_not if text and s in text)
    return SnippetCounts(tp, len(must) - tp, fp, len(must_not) - fp)


def snippet_summary(counts: Iterable[SnippetCounts]) -> dict[str, float]:
    """Micro precision ``TP/(TP+FP)``, recall ``TP/(TP+FN)``, F1 (their harmonic mean) and
    accuracy ``(TP+TN)/all`` of :func:`snippet_counts` summed over pages, as trafilatura's
    evaluation reports them; a ratio with a zero denominator is 0. Also the sums ``tp``,
    ``fn``, ``fp``, ``tn``.

    >>> s = snippet_summary([SnippetCounts(3, 1, 1, 3), SnippetCounts(1, 1, 0, 2)])
    >>> s["precision"], round(s["recall"], 3), round(s["f1"], 3), s["accuracy"]
    (0.8, 0.667, 0.727, 0.75)
    """
    tp = fn = fp = tn = 0
    for c in counts:
        tp, fn, fp, tn = tp + c.tp, fn + c.fn, fp + c.fp, tn + c.tn
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    total = tp + fn + fp + tn
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0,
            "accuracy": (tp + tn) / total if total else 0.0, "tp": tp, "fn": fn, "fp": fp, "tn": tn}


# --------------------------------------------------------------------------- runner


@dataclass
class MethodResult:
    """Scores of one method on a corpus.

    ``benchmark``: :func:`~scrapy_cepr.evaluation.benchmark_summary` (precision, recall,
    f1, accuracy, pages); ``paper``: macro-averaged :class:`PaperScore` (CEPR Eqs. 7–8);
    ``times_ms``: end-to-end time per page (HTML to :class:`Extraction`), milliseconds;
    ``failures``: pages that raised :class:`NotHTMLError` (scored as empty output);
    ``params``: the parameters the method used (defaults filled in).
    """

    method: str
    counts: list[BenchmarkCounts] = field(default_factory=list)
    paper_scores: list[PaperScore] = field(default_factory=list)
    times_ms: list[float] = field(default_factory=list)
    failures: int = 0
    params: dict[str, Any] = field(default_factory=dict)
    #: The pages with the lowest F1 (``worst=N`` of :func:`evaluate_methods`), as a heap
    #: of ``(-f1, order, Sample, predicted body)``.
    worst: list = field(default_factory=list, repr=False)

    @property
    def benchmark(self) -> dict[str, float]:
        """Benchmark-metric summary (spec §6): precision, recall, f1, accuracy, pages."""
        return benchmark_summary(self.counts)

    @property
    def paper(self) -> PaperScore:
        """Macro-averaged CEPR paper scores (Eqs. 7–8)."""
        return macro_paper(self.paper_scores)

    @property
    def median_ms(self) -> float:
        """Median extraction time per page, in ms (0 for no pages)."""
        return statistics.median(self.times_ms) if self.times_ms else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary (no per-page lists)."""
        p = self.paper
        return {
            "method": self.method,
            "params": self.params,
            "benchmark": self.benchmark,
            "paper": {"precision": p.precision, "recall": p.recall, "f1": p.f1, "score": p.score},
            "median_ms": self.median_ms,
            "failures": self.failures,
        }


def evaluate_methods(
    samples: Iterable[Sample],
    methods: Sequence[str],
    params: dict[str, dict[str, Any]] | None = None,
    *,
    progress: bool = False,
    total: int | None = None,
    paper: bool = True,
    worst: int = 0,
) -> dict[str, MethodResult]:
    """Run every method on every sample (methods interleaved per page) and score them.

    :param samples: the corpus (read lazily, one page at a time).
    :param methods: names from :data:`~scrapy_cepr.METHOD_NAMES`.
    :param params: per-method keyword parameters (see :func:`scrapy_cepr.extract`).
    :param progress: show a tqdm progress bar on stderr.
    :param total: number of pages, for the progress bar (None: unknown).
    :param paper: also compute the CEPR paper's scores (False leaves them empty: the
        quality gate needs only the benchmark metric).
    :param worst: keep the *worst* pages with the lowest F1 per method, with their
        predicted body, in :attr:`MethodResult.worst` (memory bounded by *worst*).
    :returns: ``{method: MethodResult}`` in the order of *methods*.
    :raises ValueError: unknown method or bad parameters (before any page is read).
    """
    params = params or {}
    for name in methods:
        get_method(name).make_params(**params.get(name, {}))
    results = {name: MethodResult(name) for name in methods}
    from tqdm import tqdm

    for sample in tqdm(samples, total=total, disable=not progress, unit="page", file=sys.stderr, leave=False):
        for name in methods:
            res = results[name]
            start = time.perf_counter()
            try:
                extraction = extract(sample.html, url=sample.url, method=name, **params.get(name, {}))
            except NotHTMLError as exc:
                res.times_ms.append((time.perf_counter() - start) * 1000.0)
                logger.info("%s: %s: not HTML (%s); scored as empty", name, sample.id, exc)
                res.failures += 1
                body = ""
            else:
                res.times_ms.append((time.perf_counter() - start) * 1000.0)
                body = extraction.body
                if not res.params:
                    res.params = dict(extraction.params)
            res.counts.append(benchmark_counts(body, sample.gold_body))
            if worst:
                entry = (-page_f1(res.counts[-1]), len(res.counts), sample, body)
                (heapq.heappush if len(res.worst) < worst else heapq.heappushpop)(res.worst, entry)
            if paper:
                res.paper_scores.append(paper_score(body, sample.gold_body))
    return results


def floor_record(results: dict[str, MethodResult], digest: str) -> dict[str, Any]:
    """The quality-floor file (``tests/quality_floor.json``) for *results*: the corpus
    digest, the tolerance, and per method the benchmark F1, precision and recall
    (rounded to 4 decimals)."""
    pages = {r.benchmark["pages"] for r in results.values()}
    return {
        "corpus_digest": digest,
        "pages": max(pages) if pages else 0,
        "tolerance": FLOOR_TOLERANCE,
        "metric": "article-extraction-benchmark shingle F1 (scrapy_cepr.evaluation.benchmark_summary), default parameters",
        "repin": REPIN_COMMAND,
        "methods": {
            name: {k: round(r.benchmark[k], 4) for k in ("f1", "precision", "recall")}
            for name, r in results.items()
        },
    }
