"""A learned gate for a publication date found in the page's text, not declared:
:func:`candidate_features` and :func:`gate_probability`.

When no article item, OpenGraph or ``<meta>`` declares a publication date and the URL has
none, :func:`scrapy_cepr.core.metadata.extract_metadata` has one *candidate*: the date
next to the headline (htmldate on the headline's surroundings), else htmldate's search of
the whole page (its fast mode). Such a date belongs to the
article or to something else on the page (a copyright year, a sidebar of dated teasers,
a comment). The gate reads generic properties of the candidate and of the page, none
keyed to a site, a language or a class name:

* where the candidate comes from, and whether the other searches and the page's other
  declarations (a modification date, a ``WebPage`` item, any ``<time datetime>``) give
  the same day;
* where the page shows that day (numbers of that day and year close together, in any
  language's order: ``2025-09-28``, ``28/09/2025``, ``September 28, 2025``,
  ``2025年9月28日``): its distance in characters from the headline, its place in the
  text, whether it is inside a link, a list item, an ``aside``/``nav``/``footer`` or an
  ``article``/``main`` (HTML's sectioning elements), how many of the page's elements show
  a date;
* how many distinct dates the page shows and how recent the candidate is among them;
* the page-type probabilities (:func:`scrapy_cepr.core.pagetype.page_type_proba`): an
  article has a publication date, a product or a service page seldom does.

The model (``scrapy_cepr/models/dates.json``, :mod:`scrapy_cepr.core.trees` format) is
trained by ``benchmarks/train_dates.py`` on WCXB dev with folds grouped by domain; its
out-of-fold numbers are in docs/measurements.md.

This module knows nothing of Scrapy, and nothing of :mod:`scrapy_cepr.core.metadata`
(which calls it).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from functools import lru_cache

import numpy as np
from lxml import etree

from .pagetype import PAGE_TYPES
from .text import DATE_RE
from .trees import TreeEnsemble, load_packaged

__all__ = ["FEATURE_NAMES", "MIN_SEARCH_CHARS", "MODEL_FILE", "SOURCES", "candidate_features", "gate_probability",
           "load_model", "shown_in_the_text", "text_nodes", "visible_text_length"]

logger = logging.getLogger(__name__)

#: The model file in ``scrapy_cepr/models/``.
MODEL_FILE = "dates.json"
#: Where a candidate comes from: the headline's surroundings, htmldate's fast mode on the
#: whole page (its extensive search there added 2 right and 9 spurious dates out of fold,
#: docs/measurements.md, and most of the cost).
SOURCES: tuple[str, ...] = ("near", "fast")
#: The features of :func:`candidate_features`, in order.
FEATURE_NAMES: tuple[str, ...] = (
    "from_near", "from_fast",
    "agree_near", "agree_fast", "agree_modified", "agree_item", "agree_time",
    "first_of_month", "url_year",
    "shown", "shown_count", "from_headline", "place", "in_link", "in_list", "in_aside", "in_article",
    "in_heading_zone",
    "dated_elements", "distinct_days", "time_elements", "newer_days", "older_days", "age_vs_newest",
    "modified_gap", "headline_found", "log_text",
    *(f"p_{name}" for name in PAGE_TYPES),
)
#: The whole page is searched only when it has at least this many characters of visible
#: text: on WCXB dev, 26 of its 604 candidates came from smaller pages and none was right
#: (the headline's surroundings are then most of the page, and the model saw few such pages).
MIN_SEARCH_CHARS = 2000
_INDEX = {name: i for i, name in enumerate(FEATURE_NAMES)}
_SKIP = ("script", "style", "noscript", "template")
_YEAR_RE = re.compile(r"(?<!\d)(?:199\d|20[0-4]\d)(?!\d)")
_MAX_NODES = 5000  # text nodes read per page (bounded work on hostile pages)


def _day_pattern(day: str) -> re.Pattern[str] | None:
    """A pattern for the day *day* (``YYYY-MM-DD``) as pages write it, in any order of its
    numbers, any separators, a month word between day and year; None if *day* is not a
    date."""
    try:
        d = date.fromisoformat(day[:10])
    except ValueError:
        return None
    y, yy, m, dd = d.year, f"{d.year % 100:02d}", d.month, d.day
    dpat, mpat = rf"0?{dd}", rf"0?{m}"
    forms = (
        rf"{y}\D{{1,3}}{mpat}\D{{1,3}}{dpat}",
        rf"{dpat}[-/.]{mpat}[-/.](?:{y}|{yy})",
        rf"{mpat}[-/.]{dpat}[-/.](?:{y}|{yy})",
        rf"{dpat}(?:st|nd|rd|th)?\D{{1,16}}?{y}",
        rf"{y}\D{{1,16}}?{dpat}",
    )
    return re.compile(r"(?<!\d)(?:" + "|".join(forms) + r")(?!\d)")


def text_nodes(tree) -> list[tuple[str, object]]:
    """The visible text nodes of the body of *tree*, stripped, in document order, at most
    ``_MAX_NODES``: ``(text, element)`` pairs, the element being the one whose ``text`` or
    ``tail`` it is (as lxml's ``getparent()`` of a text node). Text inside ``script``,
    ``style``, ``noscript`` and ``template`` and comments are left out; an empty list
    without a ``body``."""
    body = tree.find("body")
    if body is None:
        return []
    out: list[tuple[str, object]] = []
    walk = etree.iterwalk(body, events=("start", "end"))
    for event, el in walk:
        if event == "start":
            if not isinstance(el.tag, str) or el.tag in _SKIP:
                walk.skip_subtree()  # its text is not shown; its tail is (at its "end")
                continue
            value = el.text
        elif el is body:
            break
        else:
            value = el.tail
        if value and (value := value.strip()):
            out.append((value, el))
            if len(out) >= _MAX_NODES:
                break
    return out


def visible_text_length(nodes: Sequence[tuple[str, object]]) -> int:
    """Characters of visible text in *nodes* (:func:`text_nodes`), one space between them."""
    return sum(len(t) + 1 for t, _ in nodes)


def _days(values: Iterable[str | None]) -> set[str]:
    return {v[:10] for v in values if v and len(v) >= 10}


def _to_date(day: str | None) -> date | None:
    try:
        return date.fromisoformat(day[:10]) if day else None
    except ValueError:
        return None


def candidate_features(tree, heading, candidate: tuple[str, str], *, near: str | None, fast: str | None,
                       modified: Sequence[str], item_dates: Sequence[str],
                       url: str | None, page_types: Mapping[str, float] | None,
                       nodes: Sequence[tuple[str, object]] | None = None) -> np.ndarray:
    """The gate's features (:data:`FEATURE_NAMES`) for one candidate date.

    :param tree: the page (``lxml.html`` document).
    :param heading: the element that shows the headline, or None.
    :param candidate: ``(source, day)``: a source of :data:`SOURCES` and ``YYYY-MM-DD``.
    :param near: the date next to the headline (``YYYY-MM-DD``), or None; likewise *fast*
        for htmldate's fast mode on the whole page.
    :param modified: declared modification dates (ISO 8601).
    :param item_dates: dates of structured-data items that are not the article's (a
        ``WebPage``'s).
    :param url: the page URL, or None.
    :param page_types: the page-type probabilities
        (:func:`scrapy_cepr.core.pagetype.page_type_proba`), or None (a page without text).
    :param nodes: :func:`text_nodes` of *tree* when the caller has them (else read here).
    :returns: a float array of shape ``(len(FEATURE_NAMES),)``; NaN where a feature does
        not apply (the day is not shown, the page has no headline).
    """
    source, day = candidate
    x = np.full(len(FEATURE_NAMES), np.nan)
    x[_INDEX["from_" + source]] = 1.0
    for other in SOURCES:
        if other != source:
            x[_INDEX["from_" + other]] = 0.0
    x[_INDEX["agree_near"]] = float(near is not None and near[:10] == day)
    x[_INDEX["agree_fast"]] = float(fast is not None and fast[:10] == day)
    x[_INDEX["agree_modified"]] = float(day in _days(modified))
    x[_INDEX["agree_item"]] = float(day in _days(item_dates))
    times = [t.get("datetime") or "" for t in tree.iter("time")]
    time_days = _days(t for t in times if re.match(r"\s*\d{4}-\d{2}-\d{2}", t))
    x[_INDEX["agree_time"]] = float(day in time_days)
    x[_INDEX["time_elements"]] = float(len(times))
    x[_INDEX["first_of_month"]] = float(day.endswith("-01"))
    x[_INDEX["url_year"]] = float(bool(url) and day[:4] in (url or ""))
    for name in PAGE_TYPES:
        if page_types is not None:
            x[_INDEX["p_" + name]] = float(page_types.get(name, 0.0))
    nodes = text_nodes(tree) if nodes is None else nodes
    x[_INDEX["log_text"]] = math.log1p(sum(len(t) for t, _ in nodes))
    _placement(x, nodes, heading, day)
    _page_dates(x, nodes, day, time_days, modified)
    return x


def _placement(x: np.ndarray, nodes: Sequence[tuple[str, object]], heading, day: str) -> None:
    """Where the page shows *day*: the first text node that does, its distance from the
    headline and its place in the text (features ``shown`` … ``in_heading_zone``)."""
    pattern = _day_pattern(day)
    heading_at = None
    inside = set(heading.iter()) if heading is not None else set()
    offsets = []
    total = 0
    for text, el in nodes:
        if heading_at is None and el in inside:
            heading_at = total
        offsets.append(total)
        total += len(text) + 1
    x[_INDEX["headline_found"]] = float(heading_at is not None)
    hits = [i for i, (text, _) in enumerate(nodes) if pattern is not None and pattern.search(text)]
    x[_INDEX["shown"]] = float(bool(hits))
    x[_INDEX["shown_count"]] = float(len(hits))
    if not hits:
        return
    i = hits[0] if heading_at is None else min(hits, key=lambda k: abs(offsets[k] - heading_at))
    el = nodes[i][1]
    x[_INDEX["place"]] = offsets[i] / max(total, 1)
    if heading_at is not None:
        x[_INDEX["from_headline"]] = float(offsets[i] - heading_at)
        x[_INDEX["in_heading_zone"]] = float(-300 <= offsets[i] - heading_at <= 700)
    ancestors = [el, *el.iterancestors()]  # type: ignore[attr-defined]
    x[_INDEX["in_link"]] = float(any(a.tag == "a" for a in ancestors))
    x[_INDEX["in_list"]] = float(any(a.tag == "li" for a in ancestors))
    # HTML's sectioning elements: content beside the page's own (aside, nav, footer) or
    # the page's own (article, main).
    x[_INDEX["in_aside"]] = float(any(a.tag in ("aside", "nav", "footer") for a in ancestors))
    x[_INDEX["in_article"]] = float(any(a.tag in ("article", "main") for a in ancestors))


def _page_dates(x: np.ndarray, nodes: Sequence[tuple[str, object]], day: str, time_days: set[str],
                modified: Sequence[str]) -> None:
    """How many dates the page shows and how recent *day* is among the days it declares
    in ``<time datetime>`` (features ``dated_elements`` … ``modified_gap``)."""
    dated = [m.group(0) for text, _ in nodes for m in DATE_RE.finditer(text)]
    x[_INDEX["dated_elements"]] = float(sum(1 for text, _ in nodes if DATE_RE.search(text)))
    x[_INDEX["distinct_days"]] = float(len(set(dated)))
    this = _to_date(day)
    others = [d for d in (_to_date(t) for t in time_days) if d is not None]
    if this is not None:
        x[_INDEX["newer_days"]] = float(sum(d > this for d in others))
        x[_INDEX["older_days"]] = float(sum(d < this for d in others))
        if others:
            x[_INDEX["age_vs_newest"]] = float((max(others) - this).days)
        mod = [d for d in (_to_date(m) for m in modified) if d is not None]
        if mod:
            x[_INDEX["modified_gap"]] = float((max(mod) - this).days)


def shown_in_the_text(features: np.ndarray) -> bool:
    """Whether the candidate of *features* (:func:`candidate_features`) is shown in the
    page's text outside an ``aside``, ``nav`` or ``footer`` and outside a list item: the
    evidence a date found by a search of the whole page needs before the gate judges it
    (elsewhere it is a teaser's, a comment's or the page's last change)."""
    return (features[_INDEX["shown"]] == 1 and features[_INDEX["in_aside"]] == 0
            and features[_INDEX["in_list"]] == 0)


@lru_cache(maxsize=1)
def load_model() -> TreeEnsemble:
    """The packaged date gate (``scrapy_cepr/models/dates.json``), loaded once.

    :raises ValueError: the file is not a binary model over :data:`FEATURE_NAMES`.
    """
    return load_packaged(MODEL_FILE, FEATURE_NAMES, objective="binary")


def gate_probability(features: np.ndarray) -> float:
    """The gate's probability (in [0, 1]) that the candidate of *features* (shape
    ``(len(FEATURE_NAMES),)``) is the article's publication day."""
    return float(load_model().predict(features[None, :])[0])
