"""Is a page an article, or a list of articles (a home, index, section or tag page)?
:func:`page_type`.

News crawls reach both kinds of page, and every extraction method returns *some* main
content for a list page (usually its headline list), so a crawl should know which is
which (trafilatura, news-please and Zyte API all report a page type).

The decision uses page-level features that hold across sites and languages, computed on
the text nodes of the parsed :class:`~scrapy_cepr.core.page.Page` (no second parse; no
site, class-name or language rules):

1. **Structured metadata, when the page gives it.** schema.org JSON-LD ``@type``
   (``NewsArticle``, ``Article``, ``BlogPosting``, ``ReportageNews`` … -> article;
   ``CollectionPage``, ``ItemList``, ``SearchResultsPage`` -> list) and Open Graph
   ``og:type`` (``article`` -> article). A page's own declaration wins.
2. **Otherwise, its text.** An article has one long run of prose (its paragraphs, one
   after the other); a list page has many *headline links* (anchors of a headline's
   length, at least :data:`HEADLINE_WORDS` words), and its non-link text is short
   teasers, each cut from the next by a headline. Lengths are in *text units*: a word of a space-separated script, or
   :data:`CJK_CHARS_PER_WORD` CJK characters (CJK text has no spaces; a Chinese word
   averages about 1.5–2 characters).

The rule (:func:`classify_features`): a list page has at least
:data:`MIN_HEADLINE_LINKS` headline links and no run of prose of :data:`MIN_PROSE_RUN`
units. The thresholds were set from what they mean (a headline has at least 4 words, a
story at least four sentences of about 20 words) and checked, not fitted, by
``benchmarks/page_type.py`` (181 article pages of the
article-extraction benchmark and the list pages of ``tests/fixtures/index_*.html``).

This module never imports Scrapy.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from .text import CJK_RE

__all__ = [
    "ARTICLE",
    "LIST",
    "PageFeatures",
    "classify_features",
    "page_features",
    "page_type",
]

logger = logging.getLogger(__name__)

#: The two page types.
ARTICLE = "article"
LIST = "list"

#: A link whose text has at least this many units is headline-like.
HEADLINE_WORDS = 4
#: An article has a run of prose (non-link text, not cut by a headline link) of at
#: least this many units: about four sentences.
MIN_PROSE_RUN = 80
#: A list page has at least this many headline links.
MIN_HEADLINE_LINKS = 6
#: CJK characters counted as one text unit.
CJK_CHARS_PER_WORD = 2.0

_ARTICLE_TYPES = frozenset({
    "article", "newsarticle", "blogposting", "reportagenews", "analysisnewsarticle", "opinionnewsarticle",
    "reviewnewsarticle", "backgroundnewsarticle", "askpublicnewsarticle", "satiricalarticle", "scholarlyarticle",
    "techarticle", "report", "liveblogposting", "posting", "socialmediaposting",
})
_LIST_TYPES = frozenset({"collectionpage", "itemlist", "searchresultspage", "blog"})
_WORD_RE = re.compile(r"\w+")
_JSONLD_RE = re.compile(r"<script\b[^>]*application/ld\+json[^>]*>(.*?)</script\s*>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class PageFeatures:
    """The page-level features (text units: see the module docstring).

    * ``metadata``: ``"article"``, ``"list"`` or None, from JSON-LD / ``og:type``;
    * ``units``: text units of the whole body;
    * ``headline_links``: links with at least :data:`HEADLINE_WORDS` units;
    * ``headline_link_units``: their units;
    * ``longest_prose_run``: units of the longest run of non-link text not cut by a
      headline block (a display line that is mostly a headline-length link).
    """

    metadata: str | None
    units: float
    headline_links: int
    headline_link_units: float
    longest_prose_run: float

    @property
    def link_share(self) -> float:
        """Share of the text units in headline links (0 for an empty page)."""
        return self.headline_link_units / self.units if self.units else 0.0


def text_units(text: str) -> float:
    """Text units of *text*: words of space-separated scripts plus CJK characters /
    :data:`CJK_CHARS_PER_WORD`.

    >>> text_units("Storm hits the coast")
    4.0
    >>> text_units("江心洲湿地迎来候鸟")
    4.5
    """
    cjk = len(CJK_RE.findall(text))
    words = len(_WORD_RE.findall(CJK_RE.sub(" ", text))) if cjk else len(_WORD_RE.findall(text))
    return float(words) + cjk / CJK_CHARS_PER_WORD


def page_features(page: Any) -> PageFeatures:
    """The :class:`PageFeatures` of a parsed :class:`~scrapy_cepr.core.page.Page`."""
    units = [text_units(t) for t in page.texts]
    link_units: dict[int, float] = {}
    prose_units: dict[int, float] = {}
    headline = []
    for u, link, block in zip(units, page.in_link, page.blocks, strict=True):
        b = int(block)
        if link:
            link_units[b] = link_units.get(b, 0.0) + u
            if u >= HEADLINE_WORDS:
                headline.append(u)
        else:
            prose_units[b] = prose_units.get(b, 0.0) + u
    # Runs of prose blocks not interrupted by a headline block (a line that is mostly a
    # headline-length link): an article's text is one long run; a list page's teasers
    # are cut by the headlines between them.
    run = longest = 0.0
    for b in sorted(set(link_units) | set(prose_units)):
        links, prose = link_units.get(b, 0.0), prose_units.get(b, 0.0)
        if links >= HEADLINE_WORDS and links > prose:
            run = 0.0
        else:
            run += prose
            longest = max(longest, run)
    return PageFeatures(
        metadata=_metadata_type(page.root, page.source),
        units=float(sum(units)),
        headline_links=len(headline),
        headline_link_units=float(sum(headline)),
        longest_prose_run=longest,
    )


def classify_features(f: PageFeatures) -> str:
    """``"article"`` or ``"list"`` from the features (see the module docstring).

    >>> classify_features(PageFeatures(None, 600, 3, 20, 120))
    'article'
    >>> classify_features(PageFeatures(None, 400, 30, 250, 25))
    'list'
    >>> classify_features(PageFeatures("article", 400, 30, 250, 25))
    'article'
    """
    if f.metadata is not None:
        return f.metadata
    if f.headline_links >= MIN_HEADLINE_LINKS and f.longest_prose_run < MIN_PROSE_RUN:
        return LIST
    return ARTICLE


def page_type(page: Any) -> str | None:
    """``"article"`` or ``"list"`` for a parsed page; None for a page without text.

    >>> from scrapy_cepr.core.page import Page
    >>> links = "".join(f'<li><a href="/n{i}">Council votes on new plan for the harbour {i}</a></li>'
    ...                 for i in range(10))
    >>> page_type(Page.from_html(f"<html><body><ul>{links}</ul></body></html>"))
    'list'
    >>> story = "<p>" + "The council met on Monday, and the vote was close. " * 8 + "</p>"
    >>> page_type(Page.from_html(f"<html><body><h1>Vote</h1>{story}</body></html>"))
    'article'
    """
    if not len(page):
        return None
    return classify_features(page_features(page))


def _metadata_type(root: Any, source: str) -> str | None:
    """Page type declared by JSON-LD ``@type`` (first recognised one) or ``og:type``.
    The parsed tree has no scripts (removed by the page model), so the JSON-LD blocks
    are found in the *source*: a ``<script>`` element's content ends at the first
    ``</script>`` (HTML's own rule), which the pattern follows."""
    if root is None:
        return None
    for match in _JSONLD_RE.finditer(source):
        for kind in _jsonld_types(match.group(1)):
            if kind in _ARTICLE_TYPES:
                return ARTICLE
            if kind in _LIST_TYPES:
                return LIST
    for meta in root.iterfind("head/meta"):
        if (meta.get("property") or meta.get("name")) == "og:type":
            return ARTICLE if (meta.get("content") or "").strip().lower() == "article" else None
    return None


def _jsonld_types(text: str) -> list[str]:
    """The lower-cased ``@type`` values of a JSON-LD block (top level and ``@graph``);
    [] for invalid JSON.

    >>> _jsonld_types('{"@context": "https://schema.org", "@graph": [{"@type": "WebSite"}, '
    ...               '{"@type": ["NewsArticle"]}]}')
    ['website', 'newsarticle']
    """
    try:
        data = json.loads(text)
    except ValueError:
        return []
    nodes = data if isinstance(data, list) else [data]
    found: list[str] = []
    for node in nodes:
        if not isinstance(node, dict):
            continue
        graph = node.get("@graph")
        for item in [node, *(graph if isinstance(graph, list) else [])]:
            if isinstance(item, dict):
                kinds = item.get("@type")
                for kind in kinds if isinstance(kinds, list) else [kinds]:
                    if isinstance(kind, str):
                        found.append(kind.lower())
    return found
