"""The composition root :func:`extract`: the core's page model and the methods registry,
above both, so that :mod:`scrapy_cepr.core` never imports a method."""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

from .core.confidence import confidence
from .core.page import Page
from .core.pagetype import page_type_proba
from .core.result import Extraction
from .methods import DEFAULT_METHOD, get_method

__all__ = ["extract", "extract_with_page", "with_confidence"]


def extract(html: str | bytes, *, url: str | None = None, method: str = DEFAULT_METHOD, encoding: str | None = None, **params: Any) -> Extraction:
    """Extract the title and the main content (body) of a news page.

    :param html: the page as ``str`` or ``bytes`` (bytes are decoded as
        :func:`scrapy_cepr.core.page.decode_html` does: BOM, *encoding*, ``<meta
        charset>``, then UTF-8 with replacement characters; without *encoding*, valid
        UTF-8 bytes are UTF-8 whatever their ``<meta charset>`` says).
    :param url: the page's URL, copied into the result.
    :param method: one of :data:`scrapy_cepr.METHOD_NAMES`; default
        :data:`scrapy_cepr.methods.DEFAULT_METHOD`, ``"cepr-typed"`` (CEPR-Article's
        region and a learned block classifier, assembled per page type,
        :mod:`scrapy_cepr.methods.typed`); ``"cepr-article"`` is SETPR's H' in the
        headline-anchored body subtree (:mod:`scrapy_cepr.methods.article`);
        ``"setpr"`` is CEPR-SETPR as published.
    :param encoding: charset from the transport (the HTTP header), tried before
        ``<meta charset>``.
    :param params: the method's parameters (``get_method(method).param_names()``), each
        defaulting to its paper's (or fitted) value:

        * CEPR (``tpr``, ``etpr``, ``setpr``; Wu et al. 2013): ``alpha=None`` (the
          paper's 1.7, 0.7, 0.8), ``lambda_=1.0``, ``radius=1``, ``edges="keep"``;
        * CETR (``cetr``, ``cetr-tm``; Weninger et al. 2010): ``cetr_radius=3``,
          ``cetr_kernel="radius"``, ``lookahead=3``, ``clusters=3``, ``tm_lambda=1.0``,
          ``wrap_width=60``, ``kmeans_iterations=100``;
        * NCE (Laber et al. 2009): ``link_density``, ``sibling_link_density``,
          ``min_leaf_chars``, ``min_separator_chars``, ``min_sibling_chars``,
          ``comment_similarity``, ``comment_window``, ``comment_min_words``,
          ``title_min_words``, ``title_max_words``, ``title_overlap`` (fitted by
          ``benchmarks/fit_nce.py``);
        * CEPR-Article: SETPR's ``alpha``, ``lambda_``, ``radius``, ``edges``, plus
          ``content_level=0.75``, ``boilerplate_weight=0.5``, ``anchor_min_chars=50``,
          ``link_density=0.6``, ``story_path_weight=0.0``, ``story_continues=0.25``,
          ``orphan_chars=60``, the step switches ``anchor``, ``region``,
          ``pre_title``, ``boilerplate``, ``captions=False``, ``duplicates``, ``comments``,
          and the growth, repeated-story and comment-guard parameters of
          :class:`~scrapy_cepr.methods.article.ArticleParams` (``grow``, ``grow_path``,
          ``grow_weight``, ``grow_cost``, ``grow_min_gain``, ``duplicate_story``,
          ``duplicate_path``, ``comment_records``, ``comment_cut``, ``comment_dated``, ``comment_evidence``,
          ``comment_evidence_share``, ``comment_after_share``, ``comment_headed``,
          ``cut_min_before``, ``region_free_records``);
        * CEDST (Zhang et al. 2018): ``gamma=2``, ``top_keywords=5``, ``topic_overlap=2``,
          ``stop_languages="all"``, ``weight_topic``/``weight_cluster``/
          ``weight_variance``/``weight_link=0.9``, ``siblings="container"``,
          ``radius=1``, ``lambda_=0.0``, ``edges="keep"``.
    :returns: an :class:`Extraction`, with its ``confidence`` (the predicted word F1 of
        the body, :mod:`scrapy_cepr.core.confidence`; None for an empty body or a method
        whose units are not text nodes). A page with no text (empty, whitespace-only, no
        body text) gives ``title=None`` or the head's title, and ``body=""``.
    :raises ValueError: unknown method, unknown parameter, or a value out of range
        (the message names it and the allowed range). Checked before any parsing.
    :raises NotHTMLError: the input is binary (PDF, image …), JSON or text without
        markup.
    :raises TooComplexError: the page is above a parse bound (too many attributes on
        one element, attributes or elements; :func:`scrapy_cepr.core.parse.check_bounds`).
    :raises TypeError: *html* is neither str nor bytes.

    >>> r = extract("<html><head><title>Hi | Site</title></head><body><h1>Hi</h1>"
    ...             "<div><p>One, two. Three.</p><p>Four, five; six.</p></div></body></html>")
    >>> r.title
    'Hi'
    """
    return extract_with_page(html, url=url, method=method, encoding=encoding, **params)[1]


def extract_with_page(html: str | bytes, *, url: str | None = None, method: str = DEFAULT_METHOD,
                      encoding: str | None = None, **params: Any) -> tuple[Page, Extraction]:
    """:func:`extract`, also returning the parsed :class:`Page` the method ran on, for
    callers that read more from the same parse (the crawl's worker: page type, body
    formats, metadata). Same parameters and errors as :func:`extract`."""
    spec = get_method(method)
    validated = spec.make_params(**params) if params else _default_params(spec.name)
    page = Page.from_html(html, url=url, encoding=encoding)
    result = spec.run(page, validated)
    if result.source is None:  # methods that build their own Extraction (CETR, empty pages)
        result = replace(result, source=page.source)
    return page, with_confidence(page, result)


@cache
def _default_params(method: str) -> Any:
    """The validated default parameters of *method* (frozen, so one object serves every
    call without parameters: validating them cost about 0.05 of the parse per page)."""
    return get_method(method).make_params()


def with_confidence(page: Page, result: Extraction, page_types: Any = None) -> Extraction:
    """*result* with its ``confidence`` (:func:`scrapy_cepr.core.confidence.confidence`)
    computed on *page*, the page it was extracted from; when the method gave no
    page-type probabilities, the ones computed for it (*page_types*, or the page-type
    classifier's) are kept in ``page_types`` too, so that nothing classifies the page
    again. *result* itself when it has no body or no text-node view."""
    nodes = result.nodes
    if result.confidence is not None or not result.body or nodes is None or nodes.path_ids is None \
            or len(nodes) != len(page):
        return result
    types = result.page_types if result.page_types is not None else page_types
    if types is None:
        types = page_type_proba(page)
        if types is None:
            return result
    value = confidence(page, nodes, result.body, types, result.tau)
    return replace(result, confidence=value, page_types=types)
