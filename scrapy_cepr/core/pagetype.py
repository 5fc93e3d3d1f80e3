"""What kind of page is this? One of WCXB's seven page types (Foley 2026):
:func:`page_type`, :func:`page_type_proba`.

``article`` (one story), ``forum`` (a thread of posts), ``product`` (one product),
``collection`` (a category or collection of products), ``listing`` (a list of articles,
courses, events …), ``documentation`` (a manual or reference page), ``service`` (a page
that presents a service, an organisation, a programme …).

A crawl reaches every kind of page, and each needs its own main content (a forum keeps
its posts, a listing its cards), so the page type is computed once per page from the
parsed :class:`~scrapy_cepr.core.page.Page` (no second parse) and from what the page
declares about itself:

* **declarations**: the schema.org ``@type`` of its JSON-LD blocks and microdata
  ``itemtype`` (grouped by page type) and the number of ``itemtype`` values, a few
  JSON-LD properties, Open Graph ``og:type`` and a few head ``meta`` names (generic
  vocabularies);
* **text**: characters, link share, the longest run of prose not cut by a headline link
  (an article's story), headline links, prose lines and segments, repeated tag paths
  and line starts (records of a list or posts of a thread), headings, a year near the
  story's start, digits and price-like tokens (a currency sign beside a number) in short
  text nodes;
* **markup**: the share of the text inside groups of HTML elements (program text
  ``pre``/``code``/``kbd``/``samp``, form controls, ``article``, ``time``, ``h2``–``h4``,
  the page chrome ``nav``/``aside``/``header``/``footer``, ``main``, tables, lists,
  quotes …) and the link share of the text in ``main``, ``article`` and the chrome
  (HTML's own tag names, never class names); characters per element;
* **elements and links**: the number of some elements (``time``, ``pre``, ``code``,
  ``button``, ``input``, ``form``, ``select``, ``img``, ``h2``, ``h3``, ``article``,
  ``li``, ``tr``: posts, code blocks, buy forms, cards, sections, rows), of headings
  with an ``id`` (targets of a table of contents), of links in ``nav``, of ``tel:``,
  ``mailto:`` and ``#fragment`` links, HTML's ``rel="next"``/``"prev"``, years and
  times of day in short text nodes (the dates of posts and cards);
* **URL shape**: path depth, digits and a date in the path, a trailing slash, a query,
  the length and hyphen count of the last segment (a story slug).

No rule is keyed to a site, a language or a list of class names. The features
(:data:`FEATURE_NAMES`, :func:`page_features`) go to a small gradient-boosted tree
ensemble (``scrapy_cepr/models/pagetype.json``, trained by
``benchmarks/train_pagetype.py`` on WCXB's development pages with folds grouped by
domain) evaluated with numpy by :mod:`scrapy_cepr.core.trees`.

This module never imports Scrapy.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from operator import attrgetter, methodcaller
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from .text import latin_length
from .trees import TreeEnsemble, load_packaged

__all__ = [
    "ARTICLE",
    "COLLECTION",
    "DOCUMENTATION",
    "FEATURE_NAMES",
    "FORUM",
    "LIST",
    "LISTING",
    "PAGE_TYPES",
    "PRODUCT",
    "SERVICE",
    "load_model",
    "most_probable",
    "page_features",
    "page_type",
    "page_type_proba",
    "small_page_type",
]

logger = logging.getLogger(__name__)

#: The seven page types (WCXB's, in its order).
ARTICLE = "article"
FORUM = "forum"
PRODUCT = "product"
COLLECTION = "collection"
LISTING = "listing"
DOCUMENTATION = "documentation"
SERVICE = "service"
PAGE_TYPES = (ARTICLE, FORUM, PRODUCT, COLLECTION, LISTING, DOCUMENTATION, SERVICE)
#: The list page of the former two-type detector is now a :data:`LISTING`.
LIST = LISTING

#: The model file in the package.
MODEL_FILE = "pagetype.json"

#: A link of at least this many characters reads as a headline (about 4 words).
HEADLINE_CHARS = 25
#: Pages with less text than this (characters; the 1st percentile of the training
#: pages) get the rule of :func:`page_type_proba` instead of the model.
MIN_MODEL_CHARS = 1000
#: The rule's list page: at least this many headline lines ...
MIN_HEADLINE_LINKS = 6
#: ... and no run of prose this long (characters; about 80 words, four sentences).
MIN_STORY_CHARS = 400
#: Text nodes read on each side of the story's first line for a byline (date, author
#: links).
BYLINE_NODES = 12
#: A line with at least this many characters of non-link text reads as prose (a sentence).
PROSE_CHARS = 150

# schema.org types (lower case) grouped by the page type they declare. Types not listed
# (WebPage, WebSite, Organization as a publisher …) say nothing.
_DECLARED = {
    "article": ("article", "newsarticle", "blogposting", "reportagenews", "analysisnewsarticle",
                "opinionnewsarticle", "reviewnewsarticle", "backgroundnewsarticle", "satiricalarticle",
                "scholarlyarticle", "report", "liveblogposting", "medicalscholarlyarticle"),
    "forum": ("discussionforumposting", "qapage", "question", "answer", "comment", "socialmediaposting",
              "posting"),
    "product": ("product", "offer", "aggregateoffer", "productgroup", "individualproduct", "productmodel",
                "vehicle", "car"),
    "list": ("collectionpage", "itemlist", "searchresultspage", "offercatalog", "blog", "listitem"),
    "doc": ("techarticle", "apireference", "howto", "faqpage", "softwaresourcecode", "learningresource"),
    "service": ("service", "localbusiness", "contactpage", "aboutpage", "professionalservice", "event",
                "course", "educationalorganization", "softwareapplication", "webapplication", "jobposting",
                "medicalorganization", "financialservice", "store"),
}
_DECLARED_GROUP = {name: group for group, names in _DECLARED.items() for name in names}
_GROUPS = tuple(_DECLARED)
_OG_TYPES = ("article", "product", "website", "other")

# HTML elements whose text is measured (share of the page's characters under them, text
# nodes they own): HTML's own tag names, grouped by what they mean, never class names.
_TAG_GROUPS = {
    "code": ("pre", "code", "kbd", "samp"),  # program text (documentation)
    "table": ("table",),
    "dl": ("dl",),
    "li": ("li",),
    "article": ("article",),  # self-contained records (posts, cards) or the story
    "chrome": ("nav", "aside", "header", "footer"),  # site navigation and sidebars
    "main": ("main",),
    "form": ("form", "label", "button", "select", "option"),  # controls (a buy form, a search)
    "quote": ("blockquote",),  # quoted posts (forum)
    "figure": ("figure",),
    "section": ("section",),
    "p": ("p",),
    "time": ("time",),
    "heading": ("h2", "h3", "h4"),
    "strong": ("strong", "b", "em"),
    "span": ("span",),
    "a": ("a",),
    "td": ("td", "th"),
}
_GROUP_NAMES = tuple(_TAG_GROUPS)
_TAG_BITS = {tag: 1 << i for i, tags in enumerate(_TAG_GROUPS.values()) for tag in tags}
_GROUP_BITS = tuple(1 << i for i in range(len(_TAG_GROUPS)))
# nav on its own (its text is measured with the chrome's): the links of a site's menus.
_NAV_BIT = 1 << len(_TAG_GROUPS)
_TAG_BITS["nav"] |= _NAV_BIT

_LD_TYPE_RE = re.compile(r'"@type"\s*:\s*(\[[^\]]*\]|"[^"]*")')
_LD_NAME_RE = re.compile(r'"([^"]*)"')
_DATE_PATH_RE = re.compile(r"/(?:19|20)\d\d/(?:[01]?\d)(?:/|$)|(?:19|20)\d\d-[01]\d-[0-3]\d")
_DIGIT_RE = re.compile(r"\d")
#: The currency signs counted in short text nodes (prices): the most used signs of
#: Unicode category Sc.
CURRENCY_SIGNS = "$€£¥₹₩₽₺₫₱¢₦₪฿"
# A price: a currency sign beside a number.
_PRICE_RE = re.compile(f"[{re.escape(CURRENCY_SIGNS)}]\\s?\\d|\\d\\s?[{re.escape(CURRENCY_SIGNS)}]")
_YEAR_RE = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
# Form controls (a buy form, a search, a calculator) and images: HTML's own elements.
_CONTROL_TAGS = ("input", "select", "textarea", "button")
_IMAGE_TAGS = ("img", "picture")
_TITLE_SEPARATORS = ("|", " - ", " – ", " — ", ": ", "·", "»", "::")

# Head declarations of the generic vocabularies (Open Graph and its article/product
# namespaces, HTML's own meta names) and schema.org properties in JSON-LD.
_META_KEYS = ("article:published_time", "article:modified_time", "author", "product:price:amount")
_LD_PROPERTIES = ("datePublished", "author", "offers", "aggregateRating", "itemListElement", "mainEntity",
                  "acceptedAnswer", "headline")

#: Elements counted one by one (``count_*``; the ``share_*`` features measure text, these
#: the number of records: posts with a ``time``, code blocks, buy buttons, form fields,
#: cards with an image, sections, rows): HTML's own tag names.
_COUNTED_TAGS = ("time", "pre", "code", "button", "input", "form", "select", "img", "h2", "h3", "article", "li",
                 "tr")
# A year 1900-2099 or a time of day (a post's or an event's time: hours and minutes, with
# a colon), not inside a longer number; one pass over the short text. The pattern starts
# with a digit (not a look-behind) so that the regex engine skips to the digits.
_DATE_TOKEN_RE = re.compile(r"\d(?<!\d\d)(?:(?<=1)9\d\d|(?<=2)0\d\d|:[0-5]\d|(?<=[0-2])\d:[0-5]\d)(?!\d)")
# href schemes of a contact link (a service's phone and mail) and HTML's rel values of
# a paged sequence (a thread, a list, a manual's chapters).
_REL_PAGED = ("next", "prev")
_TAG = attrgetter("tag")
_HREF = methodcaller("get", "href")
_CONTACT_STARTS = frozenset("tTmM# \t\n\r\f")

#: The model's inputs, in order (:func:`page_features`).
FEATURE_NAMES: tuple[str, ...] = (
    *(f"declared_{g}" for g in _GROUPS),
    *(f"og_{t}" for t in _OG_TYPES),
    "declared_breadcrumb", "itemtypes",
    *(f"meta_{k.replace(':', '_')}" for k in _META_KEYS),
    *(f"ld_{k}" for k in _LD_PROPERTIES),
    "url_depth", "url_trailing_slash", "url_query", "url_digits", "url_date", "url_last_len",
    "url_last_hyphens", "url_extension", "title_chars", "title_separators",
    "nodes", "chars", "blocks", "link_share", "link_node_share", "longest_prose_run", "prose_run_share",
    "headline_links", "headline_blocks_share", "prose_blocks", "prose_runs", "prose_segments", "link_lines",
    "top_block_chars", "mean_line_chars", "prose_share", "short_line_share", "run_start", "top_line_share",
    "year_before_run", "links_before_run",
    "paths", "top_path_nodes_share", "top_path_chars_share", "repeated_paths", "top_record_share",
    "record_count",
    "heading_nodes", "heading_share", "h1_chars", "subheadings", "chars_per_heading",
    "short_chars", "short_digit_share", "currency_signs", "prices",
    "elements", "chars_per_element",
    *(f"share_{g}" for g in _GROUP_NAMES),
    "link_share_main", "link_share_article", "link_share_chrome",
    "after_run_share", "line_chars_median",
    "controls", "images", "prices_per_record",
    *(f"count_{t}" for t in _COUNTED_TAGS),
    "short_years", "short_clocks", "years_per_record",
    "tel_links", "mailto_links", "fragment_links", "heading_ids", "nav_links", "rel_next",
)
_N = len(FEATURE_NAMES)
_INDEX = {name: i for i, name in enumerate(FEATURE_NAMES)}
_HEAD_META = {k: _INDEX[f"meta_{k.replace(':', '_')}"] for k in _META_KEYS}
_LD_KEYS = [(f'"{k}"', _INDEX[f"ld_{k}"]) for k in _LD_PROPERTIES]
_OG_SLOTS = {t: _INDEX[f"og_{t}"] for t in _OG_TYPES}
_URL_SLOTS = [i for i, name in enumerate(FEATURE_NAMES) if name.startswith("url_")]
_SHARE_SLOT = _INDEX[f"share_{_GROUP_NAMES[0]}"]
_GROUPS_N = len(_GROUP_NAMES)
_SHIFTS = np.arange(_GROUPS_N, dtype=np.int64)
#: The groups whose text's link share is a feature (``link_share_*``, in this order).
_LINK_GROUPS = np.array([_GROUP_NAMES.index(g) for g in ("main", "article", "chrome")])
_LINK_SLOT = _INDEX["link_share_main"]
#: Text nodes of at most this many characters are read for prices, dates and digits
#: (a price or a date is a short text node of its own; reading only those keeps the
#: cost low).
SHORT_CHARS = 40


def page_features(page: Any) -> np.ndarray:
    """The feature vector of a parsed :class:`~scrapy_cepr.core.page.Page`: float64,
    shape ``(len(FEATURE_NAMES),)``. An absent quantity is 0; the ``url_*`` features are
    NaN (missing) when the page has no URL.

    Counts are raw (the trees split on them); lengths are of the normalised text nodes,
    in Latin characters (:func:`~scrapy_cepr.core.text.latin_lengths`: a page without
    spaces between words reads as the same text in a Latin script); shares are in [0, 1] (``link_share_*`` is -1 when the page has no such
    element).
    """
    x = np.zeros(_N, dtype=np.float64)
    idx = _INDEX
    _declarations(page, x)
    _url(page.url, x)
    title = page.html_title or ""
    x[idx["title_chars"]] = latin_length(title)
    x[idx["title_separators"]] = sum(title.count(c) for c in _TITLE_SEPARATORS)
    texts = page.texts
    n = len(texts)
    if not n:
        return x
    chars = page.latin_counts
    link = page.in_link
    blocks = page.blocks
    total = float(chars.sum()) or 1.0
    link_node_chars = chars * link
    # Per display line: link chars and prose (non-link) chars. Block ids run 1..lines,
    # each line has at least one text node.
    all_chars = np.bincount(blocks, weights=chars)[1:]
    link_chars = np.bincount(blocks, weights=link_node_chars)[1:]
    prose_chars = all_chars - link_chars
    lines = link_chars.size
    headline = (link_chars >= HEADLINE_CHARS) & (link_chars > prose_chars)
    # Runs of prose lines not cut by a headline line: the story is one long run.
    run_id = headline.cumsum()
    runs = np.bincount(run_id, weights=prose_chars * ~headline)
    best = int(runs.argmax())
    longest = float(runs[best])
    # Segments of prose cut by lines that are only links (a post's author, a card's
    # title): a thread or a list has many, a story one or a few.
    link_line = (link_chars > 0) & (prose_chars < 20)
    segments = np.bincount(link_line.cumsum(), weights=prose_chars * ~link_line)
    prose = prose_chars >= PROSE_CHARS
    prose_total = float(prose_chars @ prose)
    headlines = float(np.count_nonzero(headline))
    x[idx["nodes"]] = n
    x[idx["chars"]] = total
    x[idx["blocks"]] = lines
    x[idx["link_share"]] = float(link_chars.sum()) / total
    x[idx["link_node_share"]] = float(np.count_nonzero(link)) / n
    x[idx["longest_prose_run"]] = longest
    x[idx["prose_run_share"]] = longest / total
    x[idx["headline_links"]] = headlines
    x[idx["headline_blocks_share"]] = headlines / lines
    x[idx["prose_blocks"]] = float(np.count_nonzero(prose))
    x[idx["prose_runs"]] = float(np.count_nonzero(runs >= 2 * PROSE_CHARS))
    x[idx["prose_segments"]] = float(np.count_nonzero(segments >= PROSE_CHARS))
    x[idx["link_lines"]] = float(np.count_nonzero(link_line)) / lines
    x[idx["top_block_chars"]] = float(prose_chars.max())
    x[idx["top_line_share"]] = float(all_chars.max()) / total
    x[idx["mean_line_chars"]] = total / lines
    x[idx["prose_share"]] = prose_total / total
    x[idx["short_line_share"]] = float(np.count_nonzero((prose_chars > 0) & (prose_chars < 40) & (link_chars == 0))) / lines
    # Where the story's run starts: the share of the text before it, and the lines around
    # its start (an article's headline, byline and date).
    first_line = int((run_id == best).argmax())
    x[idx["run_start"]] = float(all_chars[:first_line].sum()) / total
    # The first text node of each line (lines are runs of equal block ids).
    new_line = np.empty(n, dtype=bool)
    new_line[0] = True
    np.not_equal(blocks[1:], blocks[:-1], out=new_line[1:])
    starts = new_line.nonzero()[0]
    start = int(starts[first_line])
    lo, hi = max(0, start - BYLINE_NODES), start + BYLINE_NODES
    x[idx["year_before_run"]] = 1 if _YEAR_RE.search(" ".join(texts[lo:hi])) else 0
    x[idx["links_before_run"]] = float(np.count_nonzero(link[lo:hi]))
    # Tag paths: a list's records repeat one path (one card after another).
    pids = page.path_ids
    num_paths = len(page.path_names)
    per_path = np.bincount(pids, minlength=num_paths)
    chars_path = np.bincount(pids, weights=chars, minlength=num_paths)
    x[idx["paths"]] = float(np.count_nonzero(per_path))
    x[idx["top_path_nodes_share"]] = float(per_path.max()) / n
    x[idx["top_path_chars_share"]] = float(chars_path.max()) / total
    x[idx["repeated_paths"]] = float(np.count_nonzero(per_path >= 5))
    # Records: lines that start on the same tag path (a card, a post, a row).
    line_paths = pids[starts]
    by_start = np.bincount(line_paths)
    x[idx["record_count"]] = float(by_start.max())
    x[idx["top_record_share"]] = float(by_start.max()) / lines
    char_list = chars.tolist()
    heading_chars = 0
    subheadings = 0
    heading_nodes = 0
    for level, first, end in page.headings:
        size = sum(char_list[first:end])
        heading_chars += size
        heading_nodes += end - first
        if level == 1:
            if not x[idx["h1_chars"]]:
                x[idx["h1_chars"]] = size
        else:
            subheadings += 1
    x[idx["heading_nodes"]] = heading_nodes
    x[idx["heading_share"]] = heading_chars / total
    x[idx["subheadings"]] = subheadings
    x[idx["chars_per_heading"]] = total / (len(page.headings) + 1)
    # Short text nodes: prices, dates, numbers.
    short = " ".join([t for t, c in zip(texts, char_list) if c <= SHORT_CHARS])
    if short:
        short_len = latin_length(short)
        x[idx["short_chars"]] = short_len
        x[idx["short_digit_share"]] = sum(map(short.count, "0123456789")) / short_len
        signs = sum(map(short.count, CURRENCY_SIGNS))
        x[idx["currency_signs"]] = signs
        if signs:
            x[idx["prices"]] = len(_PRICE_RE.findall(short))
        if x[idx["short_digit_share"]]:
            dates = _DATE_TOKEN_RE.findall(short)
            clocks = "".join(dates).count(":")
            x[idx["short_years"]] = len(dates) - clocks
            x[idx["short_clocks"]] = clocks
    in_run = (run_id == best).nonzero()[0]
    last_line = int(in_run[-1]) if in_run.size else first_line
    x[idx["after_run_share"]] = float(all_chars[last_line + 1:].sum()) / total
    # The median line length (np.median's value, by a partial sort: cheaper on one page).
    mid = lines // 2
    if lines % 2:
        x[idx["line_chars_median"]] = float(np.partition(all_chars, mid)[mid])
    else:
        part = np.partition(all_chars, [mid - 1, mid])
        x[idx["line_chars_median"]] = float((part[mid - 1] + part[mid]) / 2)
    # Form controls and images: the distinct tag paths ending in one (the walk interned
    # every element's path; no second walk).
    names = page.path_names
    x[idx["controls"]] = float(sum(map(names.count, _CONTROL_TAGS)))
    x[idx["images"]] = float(sum(map(names.count, _IMAGE_TAGS)))
    x[idx["prices_per_record"]] = x[idx["prices"]] / max(x[idx["record_count"]], 1.0)
    x[idx["years_per_record"]] = x[idx["short_years"]] / max(x[idx["record_count"]], 1.0)
    _elements(page, x)
    elements = max(len(page.body_nodes), 1)
    x[idx["elements"]] = elements
    x[idx["chars_per_element"]] = total / elements
    _tag_groups(page, chars_path, link_node_chars, total, x)
    return x


def _tag_groups(page: Any, chars_path: np.ndarray, link_node_chars: np.ndarray,
                total: float, x: np.ndarray) -> None:
    """Per group of :data:`_TAG_GROUPS`, into *x*: the share of the text inside such an
    element (``share_*``), and the link share of the text in ``main``, ``article`` and the page chrome. One pass over
    the page's distinct tag paths (a path is inside an element when one of its tags is)."""
    bits = _TAG_BITS.get
    inside = [0] * len(page.path_names)
    for i, (parent, name) in enumerate(zip(page.path_parents, page.path_names)):
        if parent >= 0:
            inside[i] = inside[parent] | bits(name, 0)
    # (paths, groups) 0/1 matrix: the path is inside an element of the group.
    inside_bits = np.array(inside, dtype=np.int64)
    under = ((inside_bits[:, None] >> _SHIFTS) & 1).astype(np.float64)
    link_path = np.bincount(page.path_ids, weights=link_node_chars, minlength=len(inside))
    text = chars_path @ under
    x[_SHARE_SLOT:_SHARE_SLOT + _GROUPS_N] = text / total
    in_nav = (inside_bits & _NAV_BIT) != 0
    x[_INDEX["nav_links"]] = float(np.count_nonzero(page.in_link & in_nav[page.path_ids]))
    links = link_path @ under[:, _LINK_GROUPS]
    text = text[_LINK_GROUPS]
    x[_LINK_SLOT:_LINK_SLOT + len(_LINK_GROUPS)] = np.where(text > 0, links / np.maximum(text, 1.0), -1.0)


def _elements(page: Any, x: np.ndarray) -> None:
    """Counts of elements and links, into *x*: the elements of :data:`_COUNTED_TAGS`
    (``count_*``), ``h2``/``h3`` with an ``id`` (a heading a table of contents links
    to), links by ``href``: ``tel:`` and ``mailto:`` (contact links) and ``#fragment``
    (links into the page itself); ``rel_next`` is 1 when the head declares HTML's
    ``<link rel="next">``/``"prev"`` (a page of a paged sequence). Read off the walk's
    ``body_nodes`` (no second walk of the tree)."""
    idx = _INDEX
    nodes = page.body_nodes
    tags = list(map(_TAG, nodes))
    counts = Counter(tags)
    for tag in _COUNTED_TAGS:
        x[idx[f"count_{tag}"]] = counts.get(tag, 0)
    anchors = [n for n, tag in zip(nodes, tags) if tag == "a"] if counts.get("a") else []
    tel = mailto = fragment = 0
    # Only hrefs whose first character can start tel:, mailto: or # (or is a space before
    # one) are read further.
    for href in [h for h in map(_HREF, anchors) if h and h[0] in _CONTACT_STARTS]:
        head = href.lstrip()[:7].lower()
        if head.startswith("tel:"):
            tel += 1
        elif head.startswith("mailto:"):
            mailto += 1
        elif head.startswith("#") and len(head) > 1:
            fragment += 1
    if counts.get("h2") or counts.get("h3"):
        x[idx["heading_ids"]] = sum(1 for n, tag in zip(nodes, tags)
                                    if (tag == "h2" or tag == "h3") and n.get("id") is not None)
    head_el = page.root.find("head") if page.root is not None else None
    paged = head_el is not None and any((link.get("rel") or "").lower() in _REL_PAGED
                                        for link in head_el.iterchildren("link"))
    x[idx["tel_links"]] = tel
    x[idx["mailto_links"]] = mailto
    x[idx["fragment_links"]] = fragment
    x[idx["rel_next"]] = 1 if paged else 0


def _declarations(page: Any, x: np.ndarray) -> None:
    """What the page declares about itself, into *x*: the schema.org ``@type`` values of
    its JSON-LD blocks (``Page.json_ld``) and microdata ``itemtype`` (``Page.itemtypes``),
    counted per page-type group, a few JSON-LD properties, ``og:type`` (one-hot) and a
    few head ``meta`` names. ``@type`` values are read with a pattern, without parsing
    the JSON (a page's JSON-LD can be large, and a broken block still declares its
    type)."""
    for block in page.json_ld:
        for value in _LD_TYPE_RE.findall(block):
            for name in _LD_NAME_RE.findall(value):
                name = name.rsplit("/", 1)[-1].rsplit(":", 1)[-1].lower()
                group = _DECLARED_GROUP.get(name)
                if group is not None:
                    x[_INDEX[f"declared_{group}"]] += 1
                elif name == "breadcrumblist":
                    x[_INDEX["declared_breadcrumb"]] = 1
        for key, slot in _LD_KEYS:
            if key in block:
                x[slot] = 1
    x[_INDEX["itemtypes"]] = len(page.itemtypes)
    for value in set(page.itemtypes):
        group = _DECLARED_GROUP.get(value.rstrip("/").rsplit("/", 1)[-1].lower())
        if group is not None:
            x[_INDEX[f"declared_{group}"]] += page.itemtypes.count(value)
    og = None
    head = page.root.find("head") if page.root is not None else None
    if head is not None:
        for el in head.iterchildren("meta"):
            key = el.get("property") or el.get("name")
            if not key:
                continue
            key = key.lower()
            meta_slot = _HEAD_META.get(key)
            if meta_slot is not None:
                x[meta_slot] = 1
            elif key == "og:type" and og is None:
                og = (el.get("content") or "").strip().lower()
    if og:
        kind = og.split(".", 1)[0].split(":", 1)[0]
        x[_OG_SLOTS.get(kind, _OG_SLOTS["other"])] = 1


def _url(url: str | None, x: np.ndarray) -> None:
    """URL path shape into *x*; NaN (missing: the model was trained with and without
    URLs) when there is no URL, it cannot be split, or it is not a web URL (``http``,
    ``https``): the path of a ``file:`` URL tells where a copy of the page was saved,
    not what the page is.

    >>> x = np.zeros(_N)
    >>> _url("file:///home/ann/site/articles/harbour-storm.html", x)
    >>> bool(np.isnan(x[_INDEX["url_depth"]]))
    True
    >>> _url("https://news.example/2024/11/05/harbour-storm.html", x)
    >>> int(x[_INDEX["url_depth"]]), int(x[_INDEX["url_date"]])
    (4, 1)
    """
    try:
        parts = urlsplit(url) if url else None
    except ValueError:
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https"):
        x[_URL_SLOTS] = np.nan
        return
    path = parts.path or "/"
    segments = [s for s in path.split("/") if s]
    last = segments[-1] if segments else ""
    x[_INDEX["url_depth"]] = len(segments)
    x[_INDEX["url_trailing_slash"]] = 1 if path.endswith("/") and segments else 0
    x[_INDEX["url_query"]] = 1 if parts.query else 0
    x[_INDEX["url_digits"]] = len(_DIGIT_RE.findall(path))
    x[_INDEX["url_date"]] = 1 if _DATE_PATH_RE.search(path) else 0
    x[_INDEX["url_last_len"]] = len(last)
    x[_INDEX["url_last_hyphens"]] = last.count("-") + last.count("_")
    x[_INDEX["url_extension"]] = 1 if "." in last else 0


@lru_cache(maxsize=1)
def load_model() -> TreeEnsemble:
    """The packaged page-type model (``scrapy_cepr/models/pagetype.json``), loaded once.

    :raises ValueError: the file is not a valid model for :data:`FEATURE_NAMES` and
        :data:`PAGE_TYPES`.
    """
    return load_packaged(MODEL_FILE, FEATURE_NAMES, class_names=PAGE_TYPES)


def page_type_proba(page: Any) -> dict[str, float] | None:
    """The probability of each of :data:`PAGE_TYPES` for a parsed page (they sum to 1);
    None for a page without text.

    A page with less than :data:`MIN_MODEL_CHARS` characters of text is smaller than
    nearly every page the model was trained on, and its answer there is not to be
    trusted; such a page gets the former two-type rule, as probability 1: a
    :data:`LISTING` when it has at least :data:`MIN_HEADLINE_LINKS` headline lines and
    no run of prose of :data:`MIN_STORY_CHARS`, else an :data:`ARTICLE`.
    """
    memo = getattr(page, "derived", None)  # Page.derived: computed once per parse
    if memo is not None and _MEMO_KEY in memo:
        cached = memo[_MEMO_KEY]
        return None if cached is None else dict(cached)
    proba = _page_type_proba(page)
    if memo is not None:
        memo[_MEMO_KEY] = None if proba is None else dict(proba)
    return proba


_MEMO_KEY = "page_type_proba"


def _page_type_proba(page: Any) -> dict[str, float] | None:
    if not len(page):
        return None
    x = page_features(page)
    kind = small_page_type(x)
    if kind is not None:
        return {name: float(name == kind) for name in PAGE_TYPES}
    p = load_model().predict(x[None, :])[0]
    return {name: float(v) for name, v in zip(PAGE_TYPES, p, strict=True)}


def small_page_type(x: np.ndarray) -> str | None:
    """The type a page of features *x* (:func:`page_features`) gets without the model:
    for a page with less than :data:`MIN_MODEL_CHARS` characters of text, :data:`LISTING`
    when it has at least :data:`MIN_HEADLINE_LINKS` headline lines and no run of prose of
    :data:`MIN_STORY_CHARS`, else :data:`ARTICLE`; None for a larger page (the model
    decides)."""
    if x[_INDEX["chars"]] >= MIN_MODEL_CHARS:
        return None
    listing = x[_INDEX["headline_links"]] >= MIN_HEADLINE_LINKS and x[_INDEX["longest_prose_run"]] < MIN_STORY_CHARS
    return LISTING if listing else ARTICLE


def page_type(page: Any) -> str | None:
    """The most probable of :data:`PAGE_TYPES` for a parsed page; None for a page
    without text.

    >>> from scrapy_cepr.core.page import Page
    >>> story = "<p>" + "The council met on Monday, and the vote was close. " * 12 + "</p>"
    >>> page_type(Page.from_html(f"<html><body><h1>Vote</h1>{story}</body></html>"))
    'article'
    """
    return most_probable(page_type_proba(page))


def most_probable(proba: Mapping[str, float] | None) -> str | None:
    """The type with the highest probability in *proba* (None for None); ties go to the
    first in :data:`PAGE_TYPES`."""
    if not proba:
        return None
    return max(PAGE_TYPES, key=lambda t: (proba.get(t, 0.0), -PAGE_TYPES.index(t)))

