"""The article's metadata: authors, dates, language, description, lead image, canonical
URL, site name, section and tags, read from the page's structured data and head
(:func:`extract_metadata`).

Libraries do the reading (no parser of our own):

* **extruct** reads JSON-LD, microdata (both schema.org, walked for the first
  ``*Article`` / ``BlogPosting`` / ``Report`` item) and OpenGraph (``og:*``,
  ``article:*``);
* **htmldate** (fast mode) reads a date from the URL, and from the headline's
  surroundings (the ``h1``–``h3`` that holds our headline, its parent and grandparent,
  this one up to where its text starts; for a heading right in ``body``, the 3 elements
  after it; the short elements between the headline and the body's first paragraph; the
  short elements just before the headline; the ``<article>`` around the headline)
  when no article item of the structured data declares one, then, only there, its
  extensive search (dates in free text) in the closest of those places; and the
  publication date of the head's ``<meta>`` elements (its list of names). Its search of
  the whole page (which finds a date on pages that have none: a copyright year, a
  comment) and the date next to the headline are judged by a learned gate
  (:mod:`scrapy_cepr.core.dates`) when nothing declares a date;
* the head's ``<meta name=…>``, ``<link rel="canonical">`` and ``<html lang>`` are read
  with lxml, as is ``<a rel="author">`` in the page;
* the language, when the page declares none, is guessed from the stop words of the
  ``stop-words`` package (a base requirement; CJK scripts by their Unicode blocks).

Which source wins, per key (the first that has a value): JSON-LD, then microdata, then
OpenGraph, then ``<meta>``, then the page text. Authors are cleaned (a leading "By"
removed, several names split, a trailing date cut; the site's own name dropped when people
are named beside it) and, when the structured data names only the site, the byline after
the headline (a link to an author page, or a short text starting with "By") names the
person. Dates: an article item's ``datePublished`` (JSON-LD, microdata; a ``QAPage``'s
main entity counts as its article), OpenGraph ``article:published_time``, a
publication date in ``<meta>``; a ``WebPage`` item's date only when the URL or the headline's
surroundings show the same day; then the date in the URL; then the date in the headline's
surroundings; else htmldate's search of the whole page; the last two only when the gate
accepts them (source ``"page search"`` for the whole page); else none. A declared
timestamp in UTC (``+00:00``) whose day is one day before or after the date in the URL
gives way to the URL's day (the publisher's calendar day; source ``"url"``). Each value's
origin is recorded in ``metadata["sources"]`` as ``"json-ld"``, ``"microdata"``,
``"opengraph"``, ``"meta"``, ``"url"``, ``"byline"``, ``"page text"`` or ``"page
search"``, and ``metadata["confidence"]`` gives per key a float in [0, 1]: the share
of right values of that key's source measured on WCXB dev (docs/formats.rst).
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

from .sitename import is_site_name, site_key, site_names

__all__ = ["METADATA_KEYS", "empty_metadata", "extract_metadata", "guess_language", "move_byline"]

logger = logging.getLogger(__name__)

#: The keys of :func:`extract_metadata`'s dict, besides ``sources``.
METADATA_KEYS: tuple[str, ...] = (
    "headline", "authors", "date_published", "date_modified", "language", "description", "image",
    "canonical_url", "site_name", "section", "tags", "breadcrumbs",
)
_LIST_KEYS = ("authors", "tags", "breadcrumbs")
_ARTICLE_TYPE_RE = re.compile(r"(Article|BlogPosting|Report|Posting)$")
_MAX_ITEMS = 200  # structured-data items walked per page (bounded work on hostile pages)
_MAX_LIST = 20  # authors / tags kept
_HEADLINE_MATCH = 80.0  # rapidfuzz ratio of an article item's headline to ours (as pick_title's)


def empty_metadata(headline: str | None = None) -> dict[str, Any]:
    """The metadata dict with every key absent (None, or [] for lists).

    >>> m = empty_metadata("Hi"); m["headline"], m["authors"], m["image"], m["sources"]
    ('Hi', [], None, {})
    """
    out: dict[str, Any] = {k: ([] if k in _LIST_KEYS else None) for k in METADATA_KEYS}
    out["headline"] = headline
    out["sources"] = {}
    out["confidence"] = {}
    return out


def extract_metadata(source: str | bytes, *, url: str | None = None, headline: str | None = None,
                     content_html: str | None = None, page_types: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Read the metadata of one page.

    :param source: the page's HTML (decoded ``str``, or bytes: UTF-8 unless declared).
    :param url: the page URL; relative image and canonical URLs are resolved against it
        (and ``<base href>``). htmldate also looks for a date in it.
    :param headline: our headline (:attr:`Extraction.title
        <scrapy_cepr.core.result.Extraction.title>`), copied to ``headline``.
    :param content_html: the ``body_html`` of the main content, when it is computed
        anyway: its first image is the lead image (source ``"page text"``) when the
        structured data and the head name none.
    :param page_types: the page-type probabilities
        (:attr:`Extraction.page_types <scrapy_cepr.core.result.Extraction.page_types>`)
        when the method computed them; the date gate computes them otherwise (a second
        parse of the page, only for a page whose date is read from its text).
    :returns: a dict with the keys of :data:`METADATA_KEYS` (None or ``[]`` when
        absent), ``sources`` (key -> where its value came from) and ``confidence`` (key ->
        float in [0, 1], by source, see the module docstring). Dates are ISO 8601:
        ``YYYY-MM-DD`` from htmldate, the full timestamp as written when the structured
        data gives one. An unparseable or empty page gives :func:`empty_metadata`.

    >>> html = ('<html lang="en-GB"><head><meta property="og:site_name" content="Courier">'
    ...         '<script type="application/ld+json">{"@type": "NewsArticle", '
    ...         '"author": {"@type": "Person", "name": "Ann Lee"}, "datePublished": "2024-03-05T10:00:00Z"}'
    ...         '</script></head><body><p>Text</p></body></html>')
    >>> m = extract_metadata(html, url="https://c.example/a", headline="Storm")
    >>> m["authors"], m["date_published"], m["language"], m["site_name"]
    (['Ann Lee'], '2024-03-05T10:00:00+00:00', 'en-GB', 'Courier')
    >>> m["sources"]["authors"], m["sources"]["language"]
    ('json-ld', 'meta')
    """
    return _read_metadata(source, url=url, headline=headline, content_html=content_html, page_types=page_types)[0]


def _read_metadata(source: str | bytes, *, url: str | None = None, headline: str | None = None,
                   content_html: str | None = None, page_types: Mapping[str, float] | None = None,
                   gate: bool = True) -> tuple[dict[str, Any], DateCandidate | None]:
    """:func:`extract_metadata`, and the date read from the page's text that the gate
    judged (None when a declaration or the URL gave the date). Without *gate*, the
    metadata are those of the rules alone (the date next to the headline kept, the whole
    page not searched): ``benchmarks/train_dates.py`` reads the candidates this way."""
    out = empty_metadata(headline)
    tree = _parse(source)
    if tree is None:
        return out, None
    base = _base_url(tree, url)
    data = _structured(tree, base)
    head = _head_meta(tree)
    og = data["opengraph"]
    ld = _article(data["json-ld"], headline=headline, url=url)
    md = _article(data["microdata"], headline=headline, url=url)
    candidates: dict[str, list[tuple[str, Any]]] = {k: [] for k in METADATA_KEYS if k != "headline"}

    def add(key: str, source_name: str, value: Any) -> None:
        candidates[key].append((source_name, value))

    unconfirmed_dates: list[tuple[str, str]] = []
    for name, item in (("json-ld", ld), ("microdata", md)):
        if not item:
            continue
        add("authors", name, _names(item.get("author")) or _names(item.get("creator")))
        published = _iso(item.get("datePublished") or item.get("dateCreated"))
        if _is_article(item):
            add("date_published", name, published)
        elif published:
            # A WebPage's date is the page's, not an article's: kept only when the URL or
            # the headline's surroundings show the same day (below).
            unconfirmed_dates.append((name, published))
        add("date_modified", name, _iso(item.get("dateModified")))
        add("language", name, _language_tag(_first_text(item.get("inLanguage"))))
        add("description", name, _first_text(item.get("description")))
        add("image", name, _image_url(item.get("image") or item.get("thumbnailUrl"), base))
        add("canonical_url", name, _url(_first_text(item.get("mainEntityOfPage")) or _first_text(item.get("url")), base))
        add("site_name", name, _first_text(_names(item.get("publisher"))))
        add("section", name, _first_text(item.get("articleSection")))
        add("tags", name, _keywords(item.get("keywords")))
    for name in ("json-ld", "microdata"):
        add("breadcrumbs", name, _breadcrumbs(data[name], base))
    add("authors", "opengraph", [a for a in _all(og, "article:author") if not _looks_like_url(a)])
    add("date_published", "opengraph", _iso(_one(og, "article:published_time")))
    add("date_published", "meta", _meta_date(tree))
    add("date_modified", "opengraph", _iso(_one(og, "article:modified_time") or _one(og, "og:updated_time")))
    add("language", "opengraph", _language_tag(_one(og, "og:locale")))
    add("description", "opengraph", _one(og, "og:description"))
    add("image", "opengraph", _url(_one(og, "og:image") or _one(og, "og:image:url"), base))
    add("canonical_url", "opengraph", _url(_one(og, "og:url"), base))
    add("site_name", "opengraph", _one(og, "og:site_name"))
    add("section", "opengraph", _one(og, "article:section"))
    add("tags", "opengraph", _dedupe(_all(og, "article:tag")))
    add("authors", "meta", [a for a in _split_names(head.get("author")) if not _looks_like_url(a)])
    add("language", "meta", _language_tag(tree.get("lang") or tree.get("xml:lang") or head.get("content-language")))
    add("description", "meta", head.get("description") or head.get("twitter:description"))
    add("image", "meta", _url(head.get("twitter:image") or head.get("twitter:image:src"), base))
    add("canonical_url", "meta", _url(_canonical(tree), base))
    add("site_name", "meta", head.get("application-name"))
    add("tags", "meta", _keywords(head.get("news_keywords") or head.get("keywords")))
    add("authors", "page text", _rel_authors(tree))
    # <html lang> and the head are the page's own declaration: prefer them to og:locale.
    candidates["language"].sort(key=lambda c: {"json-ld": 0, "microdata": 1, "meta": 2}.get(c[0], 3))

    site = _site_keys(url, head, og, ld, md)
    candidates["authors"] = [(src, _clean_authors(v, site)) for src, v in candidates["authors"]]
    heading = _headline_element(tree, headline)
    byline = _byline_authors(heading, site)
    for i, (_src, names) in enumerate(candidates["authors"]):
        if names and all(is_site_name(n, site) for n in names) and byline:
            # The site named as the author: a person in the byline is the better answer;
            # without one the site stays (an organisation can be the author).
            candidates["authors"].insert(i, ("byline", byline))
            break
    candidates["authors"].append(("byline", byline))
    for key, options in candidates.items():
        for source_name, value in options:
            if value:
                out[key] = value[:_MAX_LIST] if isinstance(value, list) else value
                out["sources"][key] = source_name
                break
    url_day = _url_date(url)
    if out["sources"].get("date_published") == "meta":
        # A <meta> date is read by htmldate from whatever the page wrote ("03-09-2026"):
        # the date next to the headline tells day from month.
        near = _near_date(heading)
        if near:
            out["date_published"] = _swap_confirmed(out["date_published"], {near[:10]})
    candidate = None
    if out["date_published"] is None:
        out["date_published"], date_source = _evidenced_date(url_day, heading, unconfirmed_dates)
        if out["date_published"] and date_source:
            out["sources"]["date_published"] = date_source
        if date_source in (None, "page text"):
            modified = [v for _src, v in candidates["date_modified"] if v]
            candidate = _text_candidate(tree, heading, url, out["date_published"], modified,
                                        [v for _src, v in unconfirmed_dates],
                                        lambda: page_types if page_types is not None else _page_types(source, url))
            if gate:
                _apply_gate(out, candidate)
    elif url_day and _utc_day_apart(out["date_published"], url_day):
        # A timestamp given in UTC falls on the day before or after the publisher's own
        # calendar day, which the URL (the permalink) shows.
        out["date_published"] = url_day
        out["sources"]["date_published"] = "url"
    if out["image"] is None and content_html:
        out["image"] = _first_image(content_html)
        if out["image"]:
            out["sources"]["image"] = "page text"
    if out["language"] is None:
        text = " ".join(tree.xpath("string(//body)").split())[:5000] if tree.find("body") is not None else ""
        out["language"] = guess_language(text)
        if out["language"]:
            out["sources"]["language"] = "page text"
    out["confidence"] = {key: _SOURCE_CONFIDENCE.get(key, {}).get(src, _DEFAULT_CONFIDENCE.get(src, 0.5))
                         for key, src in out["sources"].items()}
    return out, candidate


def htmldate_date(source: str | bytes, url: str | None = None, *, original: bool = True) -> str | None:
    """htmldate's own date for *source* (``YYYY-MM-DD``), None when it finds none: the
    publication date with *original*, else the most recent date. For the benchmark's
    comparison with JSON-LD (``benchmarks/metadata_coverage.py``)."""
    tree = _parse(source)
    return _htmldate(tree, url, original=original) if tree is not None else None


def move_byline(body: str, authors: Sequence[str], *, max_lines: int = 4, max_chars: int = 120) -> tuple[str, str | None]:
    """Remove the byline from *body*: the first of its first *max_lines* lines that is at
    most *max_chars* characters long and names one of *authors* (case-insensitive).

    :returns: ``(body without that line, the line)``, or ``(body, None)`` when no line
        qualifies (or *authors* is empty: a byline is only recognised by a known author).

    >>> move_byline("Ann Lee, Coast correspondent\\nThe wall fell.", ["Ann Lee"])
    ('The wall fell.', 'Ann Lee, Coast correspondent')
    >>> move_byline("The wall fell, Ann Lee said.", ["Ann Lee"], max_chars=20)
    ('The wall fell, Ann Lee said.', None)
    """
    names = [a.casefold() for a in authors if a and a.strip()]
    if not body or not names:
        return body, None
    lines = body.split("\n")
    for i, line in enumerate(lines[:max_lines]):
        folded = line.casefold()
        if len(line) <= max_chars and any(n in folded for n in names):
            return "\n".join(lines[:i] + lines[i + 1:]), line
    return body, None


def guess_language(text: str, *, min_hits: int = 3) -> str | None:
    """A guess at the language of *text* (an ISO 639-1 code), or None.

    Han characters make it ``"zh"`` (``"ja"`` with kana, ``"ko"`` for Hangul) when they
    are most of the letters; otherwise the language whose stop words (``stop-words``
    package) cover the most words wins, with at least *min_hits* of them and 15 % of the
    words.

    >>> guess_language("The council said that the wall was one of the oldest in the town.")
    'en'
    >>> guess_language("湿地公园的鸟类数量今年增加了三成。")
    'zh'
    >>> guess_language("xyz") is None
    True
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    cjk = {"zh": 0, "ja": 0, "ko": 0}
    for c in letters:
        o = ord(c)
        if 0x3040 <= o <= 0x30FF:
            cjk["ja"] += 1
        elif 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF:
            cjk["ko"] += 1
        elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
            cjk["zh"] += 1
    if sum(cjk.values()) > len(letters) / 2:
        if cjk["ja"] > len(letters) / 20:
            return "ja"
        return max(cjk, key=cjk.__getitem__)
    words = re.findall(r"\w+", text.casefold())
    if not words:
        return None
    best, best_hits = None, 0
    for code, stop in _stop_word_sets():
        hits = sum(1 for w in words if w in stop)
        if hits > best_hits:
            best, best_hits = code, hits
    if best_hits >= min_hits and best_hits >= 0.15 * len(words):
        return best
    return None


# -- evidence: the headline's surroundings, bylines, site names ----------------------------

#: Per field and source, the share of right values among those given by that source on
#: WCXB dev (``benchmarks/metadata_wcxb.py --by-source``; docs/formats.rst). Rounded to
#: 0.05; a source with fewer than 20 values there keeps the default of its kind.
_SOURCE_CONFIDENCE: dict[str, dict[str, float]] = {
    "authors": {"json-ld": 0.85, "microdata": 0.85, "meta": 0.85, "byline": 0.65},
    # "page text" and "page search" are gated: the share of right values among all those
    # the gate kept out of fold, spurious ones included (train_dates.py).
    "date_published": {"json-ld": 0.85, "microdata": 0.95, "opengraph": 0.9, "meta": 0.65, "page text": 0.8,
                       "page search": 0.4},
}
#: Where a field has no measurement: declarations of the page rank above what is read from
#: its text or guessed.
_DEFAULT_CONFIDENCE = {"json-ld": 0.9, "microdata": 0.85, "opengraph": 0.85, "meta": 0.8, "url": 0.8,
                       "page text": 0.6, "byline": 0.6}
_NEAR_LEVELS = 2  # the headline's surroundings: the heading, its parent and grandparent
_NEAR_EXTENSIVE = 2  # htmldate's extensive search: the heading and its parent only
_EXTENSIVE_CHARS = 2000  # … and places with at most this much text
_ZONE_ELEMENTS = 30
_ZONE_CHARS = 200
_NEAR_SIBLINGS = 3  # or, for a heading right in body, the elements after it
_SKIP_TAGS = {"script", "style", "noscript", "template"}  # no text a reader sees
_SECTION_TAGS = {"aside", "nav", "footer", "header", "section", "article", "main", "h1", "h2", "h3", "h4", "h5", "h6"}
_BYLINE_TEXTS = 40  # elements read after the headline for a byline
_MAX_BYLINE = 100  # characters of a byline
_BYLINE_RE = re.compile(r"^\s*by\b\s*:?\s+(.+)$", re.IGNORECASE)
# "By" as a word, then names; "BySummer Swann" (no space before a capital) as well.
_BY_RE = re.compile(r"\b[Bb][Yy](?:\s*:\s*|\s+|(?=[A-Z])|$)")
_NAME_SPLIT_RE = re.compile(r"\s*(?:[,;|/]|\band\b|&)\s*")
_DATE_TAIL_RE = re.compile(r"\s*(?:[|•·—–-]\s*)?\b\d{1,4}\s*[-/.]\s*\d{1,2}\s*[-/.]\s*\d{1,4}\b.*$|\s+\d{4}$")
_NULL_NAMES = {"undefined", "null", "none", "nan", "admin"}


def _is_article(item: dict) -> bool:
    """Whether an item of :func:`_article` is the article (an article type, or a page's
    main entity), not a ``WebPage`` (whose date is the page's)."""
    types = _types(item)
    return any(_ARTICLE_TYPE_RE.search(t) for t in types) or not any(t.endswith("Page") for t in types)


def _site_keys(url: str | None, head: dict[str, str], og: dict[str, list[str]], *items: dict | None) -> set[str]:
    """The site's names (:func:`~scrapy_cepr.core.sitename.site_names`): ``og:site_name``,
    ``application-name``, the publisher of the article item(s) and the host name."""
    declared = [_one(og, "og:site_name"), head.get("application-name")]
    for item in items:
        if item:
            declared += _names(item.get("publisher"))
    return site_names(url, *declared)


def _clean_authors(names: Sequence[str], site: set[str]) -> list[str]:
    """Author names as people: HTML entities decoded, a leading "By" removed, several
    names split (``,`` ``;`` ``|`` ``/`` ``and`` ``&``), a trailing date cut, URLs,
    bare numbers and null literals dropped, and the names that are the site's own
    (:func:`~scrapy_cepr.core.sitename.is_site_name`) dropped when people are named beside
    them.

    >>> _clean_authors(["By Ann Lee and Bo Chen, The Courier", "12345"], {"thecourier", "courier"})
    ['Ann Lee', 'Bo Chen']
    >>> _clean_authors(["The Courier"], {"thecourier", "courier"})
    ['The Courier']
    """
    import html as html_lib

    out: list[str] = []
    for raw in names or ():
        if not isinstance(raw, str):
            continue
        text = " ".join(html_lib.unescape(raw).split())
        match = _BYLINE_RE.match(text)
        if match:
            text = match.group(1)
        for part in _NAME_SPLIT_RE.split(text):
            part = _DATE_TAIL_RE.sub("", part).strip(" .:-–—")
            if (not part or _looks_like_url(part) or not any(c.isalpha() for c in part)
                    or part.casefold() in _NULL_NAMES or len(part) > 80):
                continue
            out.append(part)
    people = [n for n in out if not is_site_name(n, site)]
    # The site's name beside people ("Ann Lee, The Courier") is the publisher, not an author.
    return _dedupe(people or out)


def _headline_element(tree, headline: str | None):
    """The ``h1``–``h3`` whose text is *headline* (or holds it: the title may have lost a
    site name), else the first element whose own text is *headline*, else the page's
    first ``h1``; None without one."""
    want = site_key(headline or "")
    first = None
    for el in tree.iter("h1", "h2", "h3"):
        text = site_key(el.text_content())
        if first is None and el.tag == "h1":
            first = el
        if want and text and (text == want or (want in text and len(text) <= 2 * len(want))):
            return el
    if want:
        # A headline shown in another element (<div class="headline">, <p><b>…): the first
        # element of the body whose own text is the headline. It comes before the first
        # h1, which may hold the site's name on a blog's every page.
        body = tree.find("body")
        for el in body.iter() if body is not None else ():
            if isinstance(el.tag, str) and el.text and site_key(el.text) == want:
                return el
    return first


def _surroundings(heading) -> list:
    """The heading, its parent and its grandparent (not ``body``)."""
    out = [heading]
    node = heading
    for _ in range(_NEAR_LEVELS):
        node = node.getparent()
        if node is None or node.tag in ("body", "html"):
            break
        out.append(node)
    return out


def _after(container, heading) -> Iterator:
    """Elements of *container* after *heading* in document order (not inside it)."""
    inside = set(heading.iter())
    passed = False
    for el in container.iter():
        if el is heading:
            passed = True
            continue
        if passed and el not in inside and isinstance(el.tag, str):
            yield el


def _byline_authors(heading, site: set[str]) -> list[str]:
    """Authors named by the byline after the headline, within its surroundings: a link to
    an author page (a segment of its path starts with ``author``) or, in a short text (at most 100
    characters), the capitalised names after the word "by" ("By Ann Lee", "Written by Ann
    Lee", "Posted by ann on …" is not read: names start with a capital). "By" is the one
    byline word read; the structured data comes first."""
    if heading is None:
        return []
    container = _surroundings(heading)[-1]
    following = [x for sib in _next_siblings(heading) for x in sib.iter() if isinstance(x.tag, str)]
    zone = _byline_zone(heading, count_empty=True)
    for i, el in enumerate([*_after(container, heading), *following, *zone]):
        if i >= _BYLINE_TEXTS + _ZONE_ELEMENTS:
            break
        if el.tag == "a" and any(seg.startswith("author") for seg in urlsplit(el.get("href") or "").path.lower().split("/")):
            name = " ".join(el.text_content().split())
            if 2 <= len(name) <= 80:
                return _clean_authors([name], site)
        if len(" ".join(el.text_content().split())) > _MAX_BYLINE:
            continue
        # Text nodes apart: a name ends where its element does ("Ann Lee" "Published …").
        pieces = [" ".join(t.split()) for t in el.itertext()]
        pieces = [t for t in pieces if t]
        for k, piece in enumerate(pieces):
            for match in _BY_RE.finditer(piece):
                rest = piece[match.end():].strip() or (pieces[k + 1] if k + 1 < len(pieces) else "")
                found = _clean_authors(_capitalised_names(rest), site)
                if found:
                    return found
    return []


def _capitalised_names(text: str) -> list[str]:
    """The names at the start of *text*: runs of up to 4 words that begin with a capital
    letter, joined by ``and`` / ``&``; they end at a comma, a word in lower case, a digit
    or a separator (``|``, ``•``, ``-`` …).

    >>> _capitalised_names("Ann Lee and Bo Chen | 5 May 2024")
    ['Ann Lee', 'Bo Chen']
    >>> _capitalised_names("Summer Swann on Monday")
    ['Summer Swann']
    """
    names: list[str] = []
    current: list[str] = []
    for word in text.split():
        end = word[-1] in ",;"
        word = word.rstrip(",;")
        if word in ("and", "&") and current:
            names.append(" ".join(current))
            current = []
            continue
        if not word or not word[0].isupper() or any(c.isdigit() for c in word) or len(current) >= 4:
            break
        current.append(word)
        if end:  # "Ann Lee, Reporter": what follows a comma is a role as often as a name
            break
    if current:
        names.append(" ".join(current))
    return names


def _find_date_in(html: str, url: str | None = None, *, extensive: bool = False) -> str | None:
    from htmldate import find_date

    try:
        return find_date(html, url=url, original_date=True, extensive_search=extensive)
    except Exception as exc:  # noqa: BLE001 - a third-party parser on untrusted markup
        logger.debug("htmldate failed: %s", exc)
        return None


def _near_date(heading) -> str | None:
    """htmldate's date in the headline's surroundings, None without a heading or a date
    there.

    First its fast mode (dates in ``<time>``, in elements whose class names a date …):
    the heading alone, else with its parent, else with its grandparent, else the elements
    after a heading right in ``body`` (:func:`_next_siblings`), else the byline zone
    (:func:`_byline_zone`), else the short elements just before it (:func:`_before_zone`),
    else the ``<article>`` around it. Then, when none of them
    holds one, its extensive search, which reads dates written in free text ("Published
    on Oct 21, 2025"), on the closer places only: the heading, with its parent, the
    elements after it and the byline zone, each with at most 2,000 characters of text; a
    date on the first of a month is refused there (it is how htmldate completes a month
    and year alone, "March 2020", or a year alone). The grandparent is read up to where
    its text starts (:func:`_head_part`): below that, a date is the page's last change or
    another item's. Each place's elements are read once (:func:`_outermost`)."""
    if heading is None:
        return None
    levels = _surroundings(heading)
    if len(levels) > _NEAR_LEVELS:
        # The grandparent may hold the whole article and its last line ("last modified
        # on …"): only its part before the text starts is the headline's surroundings.
        levels[_NEAR_LEVELS] = _head_part(levels[_NEAR_LEVELS], heading)
    for extensive in (False, True):
        places = [[el] for el in (levels if not extensive else levels[:_NEAR_EXTENSIVE])]
        places += [x for x in (_next_siblings(heading), _byline_zone(heading)) if x]
        if not extensive:
            before = _before_zone(heading)
            container = _semantic_container(heading)
            places += [x for x in (before, [container] if container is not None else None) if x]
        for elements in places:
            elements = _outermost(elements)
            if extensive and sum(len(el.text_content()) for el in elements) > _EXTENSIVE_CHARS:
                continue  # bounded work: dateparser's time grows with the text
            found = _date_in(elements, with_tail=len(elements) == 1 and elements[0] in levels, extensive=extensive)
            if found and not (extensive and found.endswith("-01")):
                return _swap_confirmed(found, _time_days(elements))
    return None


def _outermost(elements: Sequence) -> list:
    """*elements* without those inside an earlier one of them, in their order: a zone
    holds a container and its children, whose text is then serialised (and counted)
    once.

    >>> import lxml.html
    >>> div = lxml.html.fromstring("<div><p>a</p><p>b</p></div>")
    >>> [el.tag for el in _outermost([div, div[0], div[1]])]
    ['div']
    """
    out: list = []
    inside: set = set()
    for el in elements:
        if el in inside:
            continue
        out.append(el)
        inside.update(el.iter())
    return out


def _head_part(container, heading):
    """*container* up to where its text starts: a copy of it cut at the first element
    after *heading* (document order, not inside it; scripts and styles passed over)
    whose own text is longer than 200 characters, that element and all that follows
    removed; *container* itself when no such element follows.

    >>> import lxml.html
    >>> div = lxml.html.fromstring("<div><h1>Storm</h1><p>5 May 2024</p><p>" + "x" * 300
    ...                            + "</p><p>Last modified 9 June 2025</p></div>")
    >>> lxml.html.tostring(_head_part(div, div[0]), encoding="unicode")
    '<div><h1>Storm</h1><p>5 May 2024</p></div>'
    """
    cut = None
    for el in _after(container, heading):
        if el.tag in _SKIP_TAGS:
            continue
        own = (el.text or "") + "".join(child.tail or "" for child in el)
        if len(" ".join(own.split())) > _ZONE_CHARS:
            cut = el
            break
    if cut is None:
        return container
    path = []
    node = cut
    while node is not container:
        parent = node.getparent()
        path.append(parent.index(node))
        node = parent
    clone = copy.deepcopy(container)
    clone.tail = None
    node = clone
    for i in reversed(path):
        node = node[i]
    # the cut element and everything after it, up to the container
    for sibling in list(node.itersiblings()):
        node.getparent().remove(sibling)
    parent = node.getparent()
    parent.remove(node)
    node = parent
    while node is not clone:
        parent = node.getparent()
        for sibling in list(node.itersiblings()):
            parent.remove(sibling)
        node = parent
    return clone


_ISO_DAY_RE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})")


def _time_days(elements) -> set[str]:
    """The days (``YYYY-MM-DD``) that the ``<time datetime>`` attributes in *elements*
    (the elements and their descendants) give in ISO 8601: the machine-readable form of
    the dates they display (HTML's ``time`` element)."""
    days = set()
    for el in elements:
        for time in el.iter("time"):
            match = _ISO_DAY_RE.match(time.get("datetime") or "")
            if match:
                days.add(match.group(1))
    return days


def _swap_confirmed(day: str, evidence: set[str]) -> str:
    """*day* (``YYYY-MM-DD``), or the same numbers with day and month swapped when both are
    at most 12 and the swapped day, not *day*, is in *evidence*: a numeric date such as
    ``03/01/2017`` reads either way, and the page's own unambiguous date tells which.

    >>> _swap_confirmed("2017-01-03", {"2017-03-01"}), _swap_confirmed("2017-01-03", {"2017-01-03", "2017-03-01"})
    ('2017-03-01', '2017-01-03')
    >>> _swap_confirmed("2017-01-23", {"2017-03-01"})
    '2017-01-23'
    """
    year, month, rest = day[:4], day[5:7], day[8:10]
    if len(day) < 10 or day[:10] in evidence or not (month.isdigit() and rest.isdigit()):
        return day
    swapped = f"{year}-{rest}-{month}"
    if int(rest) <= 12 and swapped != day[:10] and swapped in evidence:
        return swapped
    return day


def _meta_date(tree) -> str | None:
    """The publication date the page's ``<meta>`` elements declare, read by htmldate (fast
    mode) from those whose ``name``/``property`` is one of htmldate's publication-date
    names (``DATE_ATTRIBUTES``: ``article:published_time`` as a ``name``,
    ``parsely-pub-date``, ``DC.date`` …) or, without one, whose ``itemprop`` is one of its
    original-date properties (``datePublished`` …); modification dates are not read. None
    without such an element."""
    import lxml.html
    from htmldate.core import DATE_ATTRIBUTES, ITEMPROP_ATTRS_ORIGINAL

    chosen = []
    for meta in tree.iter("meta"):
        name = (meta.get("name") or meta.get("property") or "").strip().lower()
        prop = (meta.get("itemprop") or "").strip().lower()
        if (name in DATE_ATTRIBUTES) if name else (prop in ITEMPROP_ATTRS_ORIGINAL and not _in_item(meta)):
            chosen.append(lxml.html.tostring(meta, encoding="unicode", with_tail=False))
        if len(chosen) >= _ZONE_ELEMENTS:
            break
    if not chosen:
        return None
    return _find_date_in("<html><head>" + "".join(chosen) + "</head><body></body></html>")


def _in_item(element) -> bool:
    """Whether *element* is inside a microdata item (an ancestor with ``itemscope``): its
    ``itemprop`` is that item's property, not the page's."""
    return any(el.get("itemscope") is not None for el in element.iterancestors())


def _date_in(elements, *, with_tail: bool = False, extensive: bool = False) -> str | None:
    """htmldate's date (fast mode, or its extensive search) in *elements*, serialised
    into one small page."""
    import lxml.html

    return _find_date_in("<html><body>" + "".join(lxml.html.tostring(el, encoding="unicode", with_tail=with_tail)
                                                  for el in elements) + "</body></html>", extensive=extensive)


def _byline_zone(heading, *, count_empty: bool = False) -> list:
    """The elements between the headline and the first paragraph of prose, in document
    order (:func:`_short_run` of the elements after it). With *count_empty* (for the
    byline), the elements without text count to its 30 and are part of it: the byline is
    read closer to the headline than the date."""
    return _short_run(heading.xpath("following::*"), count_empty=count_empty)


def _before_zone(heading) -> list:
    """The elements just before the headline (a kicker, a date above it), in document
    order (:func:`_short_run` of the elements before it, walking back; the headline's
    ancestors are not part of it)."""
    return _short_run(_preceding(heading))[::-1]


def _short_run(elements: Iterable, *, count_empty: bool = False) -> list:
    """The run of short elements at the start of *elements*: up to 30 whose text is at
    most 200 characters and not empty (icons and spacers are passed over, not counted,
    unless *count_empty*); it ends at a heading or sectioning element or at an element
    whose own text (not its children's) is longer (the body starts, or something else
    ends). A longer element that is only a container is passed over: its children come
    next."""
    out: list = []
    for el in elements:
        if el.tag in _SKIP_TAGS:
            continue
        if len(out) >= _ZONE_ELEMENTS or el.tag in _SECTION_TAGS:
            break
        own = (el.text or "") + "".join(child.tail or "" for child in el)
        if len(" ".join(own.split())) > _ZONE_CHARS:
            break
        text = " ".join(el.text_content().split())
        if (text or count_empty) and len(text) <= _ZONE_CHARS:
            out.append(el)
    return out


def _preceding(node) -> Iterator:
    """The elements of the body before *node*, nearest first, its ancestors left out
    (XPath's ``preceding`` axis, read lazily, not into ``head``), each element before its
    own children (so that a walk stops at a ``nav`` before it reads the menu's items)."""
    while node is not None and node.tag not in ("body", "html"):
        for sibling in node.itersiblings(preceding=True):
            stack = [sibling]
            while stack:
                el = stack.pop()
                if isinstance(el.tag, str):
                    yield el
                    stack.extend(el)
        node = node.getparent()


def _semantic_container(heading):
    """The nearest ``article`` (HTML5: a self-contained composition) around *heading*,
    else None."""
    for el in heading.iterancestors():
        if el.tag == "article":
            return el
        if el.tag in ("body", "html"):
            break
    return None


def _next_siblings(heading) -> list:
    """Up to 3 elements after the top of the headline's surroundings, when that top is a
    child of ``body`` (a heading with no container of its own); they end at the next
    heading or sectioning element (``aside``, ``nav``, ``footer`` …: another part of the page)."""
    top = _surroundings(heading)[-1]
    parent = top.getparent()
    if parent is None or parent.tag not in ("body", "html"):
        return []
    out: list = []
    for el in top.itersiblings():
        if not isinstance(el.tag, str):
            continue
        if el.tag in _SECTION_TAGS or len(out) >= _NEAR_SIBLINGS:
            break
        out.append(el)
    return out


def _url_date(url: str | None) -> str | None:
    """The date in *url* (``YYYY-MM-DD``, htmldate's reading of the URL), else None."""
    return _find_date_in("<html><body></body></html>", url) if url else None


def _utc_day_apart(timestamp: str, day: str) -> bool:
    """Whether *timestamp* is a time of day in UTC (``+00:00``) whose calendar day is one
    day before or after *day* (``YYYY-MM-DD``): the same moment may fall on *day* in the
    publisher's time zone.

    >>> _utc_day_apart("2025-12-19T02:41:41+00:00", "2025-12-18"), _utc_day_apart("2025-12-19", "2025-12-18")
    (True, False)
    >>> _utc_day_apart("2025-12-19T02:41:41-05:00", "2025-12-18"), _utc_day_apart("2025-12-19T02:41:41+00:00", "2025-12-16")
    (False, False)
    """
    try:
        moment = datetime.fromisoformat(timestamp)
        other = datetime.fromisoformat(day)
    except ValueError:
        return False
    if len(timestamp) <= 10 or moment.utcoffset() != timedelta(0):
        return False
    return abs((moment.date() - other.date()).days) == 1


def _evidenced_date(url_day: str | None, heading, unconfirmed: Sequence[tuple[str, str]]) -> tuple[str | None, str | None]:
    """The publication date when no article item declares one: a ``WebPage`` item's date
    that the URL or the headline's surroundings confirm (same day), else the date in the
    URL (source ``"url"``), else the date next to the headline (``"page text"``), which
    the date gate then judges (:func:`_text_candidate`)."""
    near = _near_date(heading)
    days = {d[:10] for d in (url_day, near) if d}
    for source_name, value in unconfirmed:
        if value[:10] in days:
            return value, source_name
    if url_day:
        return url_day, "url"
    if near:
        return near, "page text"
    return None, None


class DateCandidate(NamedTuple):
    """A publication date read from the page's text, and the gate's view of it."""

    source: str  #: one of :data:`scrapy_cepr.core.dates.SOURCES`
    day: str  #: ``YYYY-MM-DD``
    features: Any  #: :func:`scrapy_cepr.core.dates.candidate_features` (numpy array)


#: The gate's threshold (``benchmarks/train_dates.py``: the median of the folds' choices,
#: each the best same-day score on the other folds with no more spurious dates than the
#: rules alone gave, 12 %).
_GATE_THRESHOLD = 0.10
#: The source name of each candidate's source in ``metadata["sources"]``.
_CANDIDATE_SOURCE = {"near": "page text", "fast": "page search"}


def _text_candidate(tree, heading, url: str | None, near: str | None, modified: Sequence[str],
                    item_dates: Sequence[str],
                    page_types: Callable[[], Mapping[str, float] | None]) -> DateCandidate | None:
    """The date read from the page's text: the one next to the headline (*near*), else
    htmldate's search of the whole page (its fast mode; only on a
    page with at least :data:`~scrapy_cepr.core.dates.MIN_SEARCH_CHARS` of text, and only
    a day the page shows outside an ``aside``/``nav``/``footer`` and outside a list item:
    :func:`~scrapy_cepr.core.dates.shown_in_the_text`), with the gate's features
    (:mod:`scrapy_cepr.core.dates`); None when none is found. *page_types* gives the
    page-type probabilities (called only when there is a candidate)."""
    from .dates import (
        MIN_SEARCH_CHARS,
        candidate_features,
        shown_in_the_text,
        text_nodes,
        visible_text_length,
    )

    found = {"near": near[:10] if near else None, "fast": None}
    nodes = text_nodes(tree)
    if near is None and visible_text_length(nodes) >= MIN_SEARCH_CHARS:
        found["fast"] = _htmldate(tree, url, original=True)
    for source_name, value in found.items():
        if not value:
            continue
        features = candidate_features(tree, heading, (source_name, value[:10]), near=found["near"],
                                      fast=found["fast"], modified=modified,
                                      item_dates=item_dates, url=url, page_types=page_types(), nodes=nodes)
        if source_name == "near" or shown_in_the_text(features):
            return DateCandidate(source_name, value[:10], features)
    return None


def _page_types(source: str | bytes, url: str | None) -> Mapping[str, float] | None:
    """The page-type probabilities of *source* (:func:`scrapy_cepr.core.pagetype.page_type_proba`
    on a page parsed for it); None when it cannot be parsed or has no text."""
    from .errors import ExtractionError
    from .page import Page
    from .pagetype import page_type_proba

    try:
        return page_type_proba(Page.from_html(source, url=url))
    except (ExtractionError, ValueError) as exc:
        logger.debug("no page type for the date gate: %s", exc)
        return None


def _apply_gate(out: dict[str, Any], candidate: DateCandidate | None) -> None:
    """Keep the candidate date in *out* when the gate accepts it, else no date."""
    from .dates import gate_probability

    out["date_published"] = None
    out["sources"].pop("date_published", None)
    if candidate is not None and gate_probability(candidate.features) >= _GATE_THRESHOLD:
        out["date_published"] = candidate.day
        out["sources"]["date_published"] = _CANDIDATE_SOURCE[candidate.source]


# -- reading ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _stop_word_sets() -> tuple[tuple[str, frozenset[str]], ...]:
    import stop_words

    sets = []
    for name, code in sorted(stop_words.LANGUAGE_MAPPING.items()):
        try:
            sets.append((name, frozenset(w.casefold() for w in stop_words.get_stop_words(code))))
        except stop_words.StopWordError:  # pragma: no cover - a list missing from the package
            continue
    return tuple(sets)


def _parse(source: str | bytes):
    """The page as an ``lxml.html`` tree (scripts kept: JSON-LD lives there), or None."""
    import lxml.html
    from lxml import etree

    if isinstance(source, str):
        if not source.strip():
            return None
        data = source.encode("utf-8", "replace")
        encoding = "utf-8"
    else:
        if not source.strip():
            return None
        data, encoding = bytes(source), None
    parser = lxml.html.HTMLParser(encoding=encoding, no_network=True, huge_tree=False, remove_comments=True)
    try:
        return lxml.html.document_fromstring(data, parser=parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def _base_url(tree, url: str | None) -> str | None:
    for base in tree.iterfind("head/base"):
        href = (base.get("href") or "").strip()
        if href:
            return urljoin(url, href) if url else href
    return url


def _structured(tree, base: str | None) -> dict[str, Any]:
    """JSON-LD and microdata items (uniform dicts) and OpenGraph properties, via extruct.
    A syntax that fails to read is logged and left empty."""
    import copy

    import extruct
    import lxml.html

    out: dict[str, Any] = {"json-ld": [], "microdata": [], "opengraph": {}}
    # JSON-LD one script at a time (each copied into a document of its own), so that one
    # broken script does not hide the others.
    for script in tree.xpath('//script[@type="application/ld+json"]')[:_MAX_ITEMS]:
        holder = lxml.html.Element("div")
        holder.append(copy.copy(script))
        try:
            out["json-ld"] += extruct.extract(holder, base_url=base, syntaxes=["json-ld"], uniform=True,
                                              errors="strict").get("json-ld") or []
        except Exception as exc:  # noqa: BLE001 - third-party parsers of untrusted markup
            logger.debug("extruct could not read a JSON-LD script: %s", exc)
    for syntax in ("microdata", "opengraph"):
        try:
            found = extruct.extract(tree, base_url=base, syntaxes=[syntax], uniform=True, errors="strict")
        except Exception as exc:  # noqa: BLE001 - third-party parsers of untrusted markup
            logger.debug("extruct could not read %s: %s", syntax, exc)
            continue
        items = found.get(syntax) or []
        if syntax == "opengraph":
            props: dict[str, list[str]] = {}
            for item in items:
                for k, v in item.items():
                    if isinstance(v, str) and not k.startswith("@"):
                        props.setdefault(k, []).append(v)
                    elif isinstance(v, list):
                        props.setdefault(k, []).extend(x for x in v if isinstance(x, str))
            out[syntax] = props
        else:
            out[syntax] = items
    return out


def _walk(items: Iterable[Any]) -> Iterator[dict]:
    """Every dict in *items*, nested ones (``@graph``, properties) included, breadth
    first, at most ``_MAX_ITEMS``."""
    queue = [x for x in items]
    seen = 0
    while queue and seen < _MAX_ITEMS:
        item = queue.pop(0)
        if isinstance(item, list):
            queue.extend(item)
            continue
        if not isinstance(item, dict):
            continue
        seen += 1
        yield item
        for value in item.values():
            if isinstance(value, (dict, list)):
                queue.append(value)


def _types(item: dict) -> list[str]:
    t = item.get("@type")
    types = t if isinstance(t, list) else [t]
    return [x.rsplit("/", 1)[-1] for x in types if isinstance(x, str)]


def _article(items: Sequence[Any], *, headline: str | None = None, url: str | None = None) -> dict | None:
    """The page's schema.org article item (``NewsArticle``, ``BlogPosting`` …), else the
    ``mainEntity`` of a page item when it is one dated item (a ``QAPage``'s
    ``Question``: schema.org's primary entity of the page; not a list, as an
    ``FAQPage``'s), else the first ``WebPage`` item, else None.

    One article item is the page's. Of several (a list of related posts beside, or
    instead of, the page's own), the page's is the first whose ``headline``/``name``
    matches *headline* (rapidfuzz ``ratio`` of at least 80, case folded) or whose
    ``url``/``mainEntityOfPage`` has the path of *url*; when none does, none is taken.

    >>> _article([{"@type": "QAPage", "mainEntity": {"@type": "Question", "dateCreated": "2014-02-04"}}])
    {'@type': 'Question', 'dateCreated': '2014-02-04'}
    >>> posts = [{"@type": "BlogPosting", "headline": "Other post"}, {"@type": "BlogPosting", "headline": "Storm hits"}]
    >>> _article(posts, headline="Storm hits")["headline"], _article(posts, headline="Snow") is None
    ('Storm hits', True)
    """
    page = main = None
    articles: list[dict] = []
    for item in _walk(items):
        types = _types(item)
        if any(_ARTICLE_TYPE_RE.search(t) for t in types):
            articles.append(item)
            continue
        if any(t.endswith("Page") for t in types):
            entity = item.get("mainEntity")
            if main is None and isinstance(entity, dict) and (entity.get("datePublished") or entity.get("dateCreated")):
                main = entity
            if page is None and any(t.endswith("WebPage") for t in types):
                page = item
    if len(articles) == 1:
        return articles[0]
    if articles:
        return next((a for a in articles if _is_pages_item(a, headline, url)), None) or main or page
    return main or page


def _is_pages_item(item: dict, headline: str | None, url: str | None) -> bool:
    """Whether *item* names the page: its ``headline``/``name`` matches *headline*
    (``ratio`` >= 80, case folded) or its ``url``/``mainEntityOfPage`` has the path of
    *url* (trailing ``/`` aside)."""
    from rapidfuzz import fuzz

    name = _first_text(item.get("headline") or item.get("name"))
    if name and headline and fuzz.ratio(name.casefold(), headline.casefold()) >= _HEADLINE_MATCH:
        return True
    link = _first_text(item.get("url")) or _first_text(item.get("mainEntityOfPage"))
    return bool(link and url and _url_path(link) == _url_path(url))


def _url_path(value: str) -> str:
    try:
        return urlsplit(value).path.rstrip("/")
    except ValueError:
        return ""


def _breadcrumbs(items: Sequence[Any], base: str | None) -> list[dict[str, str | None]]:
    """The trail of the first schema.org ``BreadcrumbList`` in *items*: ``{"name", "url"}``
    per ``ListItem`` in ``position`` order (document order without one), the URL made
    absolute; ``[]`` without a list.

    >>> _breadcrumbs([{"@type": "BreadcrumbList", "itemListElement": [
    ...     {"@type": "ListItem", "position": 2, "name": "Local", "item": {"@id": "/local"}},
    ...     {"@type": "ListItem", "position": 1, "name": "News", "item": "/news"}]}], "https://c.example/a")
    [{'name': 'News', 'url': 'https://c.example/news'}, {'name': 'Local', 'url': 'https://c.example/local'}]
    """
    for item in _walk(items):
        if "BreadcrumbList" not in _types(item):
            continue
        elements = item.get("itemListElement")
        elements = elements if isinstance(elements, list) else [elements]
        crumbs = []
        for i, el in enumerate(elements):
            if not isinstance(el, dict):
                continue
            target = el.get("item")
            name = _first_text(el.get("name")) or (_first_text(target.get("name")) if isinstance(target, dict) else None)
            url = _url(_first_text(target.get("@id") or target.get("url")) if isinstance(target, dict)
                       else _first_text(target), base)
            if name or url:
                try:
                    position = float(el["position"])
                except (KeyError, TypeError, ValueError):
                    position = float(i)
                crumbs.append((position, i, {"name": name, "url": url}))
        if crumbs:
            return [c for _, _, c in sorted(crumbs, key=lambda c: (c[0], c[1]))][:_MAX_LIST]
    return []


def _head_meta(tree) -> dict[str, str]:
    """``<meta name|property|http-equiv=… content=…>`` of the page, lower-cased names,
    first value wins."""
    out: dict[str, str] = {}
    for meta in tree.iter("meta"):
        name = meta.get("name") or meta.get("property") or meta.get("http-equiv")
        content = meta.get("content")
        if name and content and content.strip():
            out.setdefault(name.strip().lower(), " ".join(content.split()))
    return out


def _canonical(tree) -> str | None:
    for link in tree.iter("link"):
        if "canonical" in (link.get("rel") or "").lower().split() and link.get("href"):
            return link.get("href").strip()
    return None


def _rel_authors(tree) -> list[str]:
    """Names of ``<a rel="author">`` links; none when there are more than 3 (a listing of
    other articles, each with its author)."""
    names = []
    for a in tree.iter("a"):
        if "author" in (a.get("rel") or "").lower().split():
            text = " ".join(a.text_content().split())
            if text and len(text) <= 80:
                names.append(text)
    names = _dedupe(names)
    return names if len(names) <= 3 else []


def _first_image(content_html: str) -> str | None:
    """The ``src`` of the first ``<img>`` of a ``body_html`` (already absolute and checked)."""
    import lxml.html

    try:
        images = lxml.html.fragments_fromstring(content_html)
    except (ValueError, TypeError):
        return None
    for block in images:
        if isinstance(block, str):
            continue
        for img in block.iter("img"):
            if img.get("src"):
                return img.get("src")
    return None


def _htmldate(tree, url: str | None, *, original: bool) -> str | None:
    from htmldate import find_date

    try:
        # Fast mode: the extensive search hands text to dateparser, which took 15 s on one
        # page of the demo site (it tries every locale); the fast mode stays in htmldate's
        # own patterns (URL, meta, time elements, page text) and takes milliseconds.
        return find_date(tree, url=url, original_date=original, extensive_search=False)
    except Exception as exc:  # noqa: BLE001 - a third-party parser on untrusted markup
        logger.debug("htmldate failed on %s: %s", url, exc)
        return None


# -- values ----------------------------------------------------------------------------


def _first_text(value: Any) -> str | None:
    """The first string in *value* (a string, a list, or a dict's ``@id``/``url``/``name``)."""
    if isinstance(value, str):
        value = " ".join(value.split())
        return value or None
    if isinstance(value, list):
        for v in value:
            text = _first_text(v)
            if text:
                return text
        return None
    if isinstance(value, dict):
        return _first_text(value.get("@id") or value.get("url") or value.get("name"))
    return None


def _names(value: Any) -> list[str]:
    """Person or organisation names from a schema.org ``author``/``publisher`` value.

    >>> _names([{"@type": "Person", "name": "Ann Lee"}, "Bo Chen", {"name": ["C D"]}])
    ['Ann Lee', 'Bo Chen', 'C D']
    """
    out: list[str] = []
    values = value if isinstance(value, list) else [value]
    for v in values:
        if isinstance(v, dict):
            v = v.get("name")
            if isinstance(v, list):
                v = next((x for x in v if isinstance(x, str)), None)
        if isinstance(v, str):
            v = " ".join(v.split())
            if v and not _looks_like_url(v):
                out.append(v)
    return _dedupe(out)


def _split_names(value: str | None) -> list[str]:
    """A ``<meta name="author">`` value split on ``,``/``;``/``|``/`` and ``.

    >>> _split_names("Ann Lee and Bo Chen; C. Dee")
    ['Ann Lee', 'Bo Chen', 'C. Dee']
    """
    if not value:
        return []
    parts = re.split(r"\s*(?:[,;|]|\band\b|&)\s*", value)
    return _dedupe(p.strip() for p in parts if p and p.strip())


def _keywords(value: Any) -> list[str]:
    if isinstance(value, str):
        return _dedupe(p.strip() for p in value.split(",") if p.strip())
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            out += _keywords(v)
        return _dedupe(out)
    return []


def _image_url(value: Any, base: str | None) -> str | None:
    if isinstance(value, dict):
        value = value.get("url") or value.get("contentUrl") or value.get("@id")
    return _url(_first_text(value), base)


def _url(value: str | None, base: str | None) -> str | None:
    """*value* made absolute against *base*; None unless http(s)."""
    if not value:
        return None
    url = urljoin(base, value.strip()) if base else value.strip()
    return url if urlsplit(url).scheme.lower() in ("http", "https") else None


def _looks_like_url(value: str) -> bool:
    return bool(re.match(r"^(https?:)?//|^www\.", value.strip(), re.IGNORECASE))


def _iso(value: Any) -> str | None:
    """An ISO 8601 date or timestamp as written in structured data, normalised by
    :meth:`datetime.fromisoformat`; None when it is not ISO 8601, or outside htmldate's
    plausible range (from its ``MIN_DATE``, 1995-01-01, to a year from now: CMSs write
    placeholders such as ``0001-01-01``).

    >>> _iso("2024-03-05T10:00:00Z"), _iso("2024-03-05"), _iso("March 5, 2024"), _iso("0001-01-01T00:00:00Z")
    ('2024-03-05T10:00:00+00:00', '2024-03-05', None, None)
    """
    from htmldate.settings import MIN_DATE

    text = _first_text(value)
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    naive = parsed.replace(tzinfo=None)
    if naive < MIN_DATE or naive > datetime.now() + timedelta(days=366):
        return None
    if len(text) == 10:
        return parsed.date().isoformat()
    return parsed.isoformat()


def _language_tag(value: str | None) -> str | None:
    """A BCP 47 tag from ``en_US``/``en-us``/``EN``.

    >>> _language_tag("en_us"), _language_tag("zh-Hans-CN"), _language_tag("  ")
    ('en-US', 'zh-Hans-CN', None)
    """
    if not value or not value.strip():
        return None
    parts = re.split(r"[-_]", value.strip().split(",")[0].strip())
    if not parts[0].isalpha() or not 2 <= len(parts[0]) <= 3:
        return None
    tag = [parts[0].lower()]
    for p in parts[1:]:
        tag.append(p.upper() if len(p) == 2 else p.title() if len(p) == 4 else p)
    return "-".join(tag)


def _one(props: dict[str, list[str]], key: str) -> str | None:
    values = props.get(key)
    return " ".join(values[0].split()) if values else None


def _all(props: dict[str, list[str]], key: str) -> list[str]:
    return _dedupe(" ".join(v.split()) for v in props.get(key, []) if v.strip())


def _dedupe(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for v in values:
        k = v.casefold()
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out
