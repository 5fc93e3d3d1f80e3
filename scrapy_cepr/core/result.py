"""The result of an extraction: :class:`Extraction`, with a cheap inspection view
(:class:`NodeTable`) on the arrays the method already computed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .page import dotted_paths
from .text import assemble_body

__all__ = ["Extraction", "NodeTable", "text_node_extraction"]


@dataclass(frozen=True, eq=False)
class NodeTable:
    """What the algorithm saw, per unit (text node, or source line for CETR), in document
    order. A *view*: it holds references to the arrays the method computed, and builds
    per-node strings only when asked.

    Columns (length N; a column a method does not have is None):

    * ``texts``: list of str, the unit's normalised text;
    * ``path_ids`` / ``paths``: int ``(N,)`` and the distinct tag paths, see :attr:`path`;
    * ``txt_num``: int ``(N,)``, characters (CEPR ``txtNum`` of the node);
    * ``punc_num``: int ``(N,)``, punctuation marks (``puncNum``);
    * ``h``: float ``(N,)``, the raw histogram (TPR or ETPR for CEPR, TR for CETR, the
      fused belief for CEDST);
    * ``h_smoothed``: float ``(N,)``, H' after smoothing (equals ``h`` when the method
      does not smooth);
    * ``keep``: bool ``(N,)``, the content mask;
    * ``title_index``: index of the unit that holds the title, or None.
    """

    texts: Sequence[str]
    h: np.ndarray
    h_smoothed: np.ndarray
    keep: np.ndarray
    path_ids: np.ndarray | None = None
    paths: Sequence[str] | None = None
    txt_num: np.ndarray | None = None
    punc_num: np.ndarray | None = None
    title_index: int | None = None

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def path(self) -> list[str] | None:
        """Dotted tag path of every unit (built on access), or None for line units."""
        if self.path_ids is None or self.paths is None:
            return None
        paths = self.paths
        return [paths[i] for i in self.path_ids.tolist()]

    def records(self) -> list[dict[str, Any]]:
        """One plain dict per unit: ``text, path, txt_num, punc_num, h, h_smoothed, keep``
        (JSON-serialisable; absent columns are None)."""
        path = self.path
        cols = {
            "txt_num": self.txt_num,
            "punc_num": self.punc_num,
            "h": self.h,
            "h_smoothed": self.h_smoothed,
            "keep": self.keep,
        }
        lists = {k: (v.tolist() if v is not None else None) for k, v in cols.items()}
        out = []
        for i, text in enumerate(self.texts):
            row: dict[str, Any] = {"text": text, "path": path[i] if path else None}
            for k, v in lists.items():
                row[k] = v[i] if v is not None else None
            out.append(row)
        return out


@dataclass(frozen=True, eq=False)
class Extraction:
    """The main content of one page.

    * ``title``: the headline as displayed, or None (see
      :func:`scrapy_cepr.core.title.pick_title`);
    * ``body``: plain text, one block (paragraph, heading, list item) per line, inline
      text joined as a browser renders it (:func:`~scrapy_cepr.core.text.assemble_body`:
      texts abut where the source has no white space between them unless two words
      would merge, a newline at a ``<br>``); ``""`` when nothing is content;
    * ``method``: the method's name (``"setpr"``, ``"cetr"`` …);
    * ``params``: the parameters used, defaults filled in;
    * ``tau``: the threshold τ the method applied (None when it has none or the page is
      empty);
    * ``url``: the page URL given to :func:`~scrapy_cepr.extract`;
    * ``nodes``: the :class:`NodeTable` inspection view, or None for an empty page;
    * ``source``: the decoded HTML the extraction was made from (or None). It is kept so
      that :attr:`body_html`, :attr:`body_markdown` and :attr:`metadata` can be computed
      on first access; it costs the page's size in characters while the result lives,
      while the lxml tree (several times larger) is never kept: the first access to
      :attr:`body_html` parses *source* again (see :mod:`scrapy_cepr.core.formats`);
    * ``page_types``: the probability of each of the seven page types
      (:func:`scrapy_cepr.core.pagetype.page_type_proba`) when the method computed them
      on its parse (or :func:`scrapy_cepr.extract` computed them for the confidence),
      else None; :attr:`page_type` reads it;
    * ``confidence``: the predicted word F1 of ``body``, a float in [0, 1]
      (:func:`scrapy_cepr.core.confidence.confidence`), set by
      :func:`scrapy_cepr.extract` for the methods whose units are the page's text nodes;
      None for an empty body and for the methods without those features (``cetr``,
      ``cetr-tm``, ``wang2009``).
    """

    title: str | None
    body: str
    method: str
    params: Mapping[str, Any] = field(default_factory=dict)
    tau: float | None = None
    url: str | None = None
    nodes: NodeTable | None = field(default=None, repr=False)
    source: str | None = field(default=None, repr=False)
    page_types: Mapping[str, float] | None = field(default=None, repr=False)
    confidence: float | None = None

    @cached_property
    def page_type(self) -> str | None:
        """The page's type, one of ``article, forum, product, collection, listing,
        documentation, service`` (:mod:`scrapy_cepr.core.pagetype`): the most probable of
        :attr:`page_types` when the method computed them, else computed on first access
        from a new parse of :attr:`source` (as :attr:`body_html`). None for a page
        without text or without a source."""
        from .pagetype import most_probable, page_type

        if self.page_types is not None:
            return most_probable(self.page_types)
        if not self.source:
            return None
        from .errors import ExtractionError
        from .page import Page

        try:
            return page_type(Page.from_html(self.source, url=self.url))
        except ExtractionError:  # not HTML, or too deep to parse whole: no type
            return None

    @cached_property
    def body_html(self) -> str:
        """The main content as clean, safe HTML (``p``, headings, lists, tables, figures,
        links and images with absolute URLs; no script, handler, style or ``javascript:``
        URL), computed on first access by :func:`scrapy_cepr.core.formats.body_html`
        from a new parse of :attr:`source`. Methods whose units are source lines (CETR)
        give their body lines as ``<p>`` paragraphs; ``""`` when nothing is content."""
        from .formats import body_html, lines_html

        if not self.body:
            return ""
        nodes = self.nodes
        if self.source is None or nodes is None or nodes.path_ids is None:
            return lines_html(self.body)
        from .page import Page

        page = Page.from_html(self.source, url=self.url)
        if len(page.texts) != len(nodes):  # not the page the mask was computed on
            return lines_html(self.body)
        return body_html(page, nodes.keep)

    @cached_property
    def body_markdown(self) -> str:
        """:attr:`body_html` converted to Markdown by ``markdownify``
        (:func:`scrapy_cepr.core.formats.html_to_markdown`), computed on first access."""
        from .formats import html_to_markdown

        return html_to_markdown(self.body_html)

    @cached_property
    def metadata(self) -> dict[str, Any]:
        """The article's metadata (headline, authors, dates, language, description, lead
        image, canonical URL, site name, section, tags, and the ``sources`` of each
        value), computed on first access by :func:`scrapy_cepr.core.metadata.extract_metadata`
        from :attr:`source`. When :attr:`body_html` was read before, its first image is
        the lead image of a page whose structured data names none."""
        from .metadata import extract_metadata

        content_html = self.__dict__.get("body_html")  # the lead image from the content, if already built
        return extract_metadata(self.source or "", url=self.url, headline=self.title, content_html=content_html,
                                page_types=self.page_types)

    @property
    def empty(self) -> bool:
        """True when no main content was found (``body == ""``)."""
        return not self.body

    def to_dict(self, *, nodes: bool = False, formats: Sequence[str] = (), metadata: bool = False) -> dict[str, Any]:
        """JSON-serialisable dict: ``url, title, body, method, params, tau, confidence``; with
        ``nodes=True``, the per-unit records of :meth:`NodeTable.records`; ``body_html``
        / ``body_markdown`` when *formats* holds ``"html"`` / ``"markdown"``; and
        ``metadata`` with ``metadata=True``."""
        out: dict[str, Any] = {
            "url": self.url,
            "title": self.title,
            "body": self.body,
            "method": self.method,
            "params": dict(self.params),
            "tau": self.tau,
            "confidence": self.confidence,
        }
        if nodes:
            out["nodes"] = self.nodes.records() if self.nodes is not None else []
        if "html" in formats:
            out["body_html"] = self.body_html
        if "markdown" in formats:
            out["body_markdown"] = self.body_markdown
        if metadata:
            out["metadata"] = self.metadata
        return out


def text_node_extraction(
    page: Any,
    *,
    method: str,
    params: Mapping[str, Any],
    title: tuple[str | None, int | None],
    h: np.ndarray,
    h_smoothed: np.ndarray,
    keep: np.ndarray,
    tau: float | None = None,
    punc_num: np.ndarray | None = None,
    body: bool = True,
) -> Extraction:
    """The :class:`Extraction` of a method whose units are the page's text nodes (CEPR,
    NCE, CEDST): the body is :func:`assemble_body` of the kept nodes, and ``nodes`` a
    :class:`NodeTable` view on the page's arrays and the method's histograms.

    :param page: a :class:`~scrapy_cepr.core.page.Page` with N text nodes.
    :param title: ``(title, index of its text node or None)`` as the method found it.
    :param h, h_smoothed, keep: the method's ``(N,)`` histogram, smoothed histogram
        and content mask.
    :param body: False gives ``body=""`` (a caller that reads only ``nodes``).
    """
    nodes = NodeTable(
        texts=page.texts,
        h=h,
        h_smoothed=h_smoothed,
        keep=keep,
        path_ids=page.path_ids,
        paths=_PagePaths(page.path_parents, page.path_names),
        txt_num=page.char_counts,
        punc_num=punc_num,
        title_index=title[1],
    )
    text = assemble_body(page.texts, page.blocks, keep, page.gap_before) if body else ""
    return Extraction(title=title[0], body=text, method=method, params=params, tau=tau, url=page.url, nodes=nodes,
                      source=page.source)


class _PagePaths(Sequence):
    """A page's dotted tag paths (index = path id), joined only when a caller reads them
    (the crawl never does). It keeps the page's two path lists, not the page, so an
    :class:`Extraction` never keeps the lxml tree alive."""

    __slots__ = ("_names", "_parents", "_paths")

    def __init__(self, parents: list[int], names: list[str]) -> None:
        self._parents = parents
        self._names = names
        self._paths: list[str] | None = None

    def _build(self) -> list[str]:
        if self._paths is None:
            self._paths = dotted_paths(self._parents, self._names)
        return self._paths

    def __getitem__(self, index):
        return self._build()[index]

    def __len__(self) -> int:
        return len(self._names)
