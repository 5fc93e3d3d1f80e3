"""The confidence of an extraction: the predicted word F1 of its body, from cheap
features of the page and of the extraction (:func:`confidence`).

Features (:data:`FEATURES`, one row per page, all computed from arrays the method
already built; no second parse, no second method):

* the page-type probabilities (:func:`scrapy_cepr.core.pagetype.page_type_proba`, or
  the ones the method used) and the largest of them;
* the size of the page and of the body: text nodes, characters, words (log scale),
  display blocks in the page and kept;
* the region's share of the page text (characters, text nodes, blocks kept);
* link density (characters inside ``<a>`` over characters) of the kept text, of the
  rest and of the page; punctuation density of the kept text;
* SETPR's H' (Wu et al., CIKM 2013, Eq. 4) of the kept and of the dropped text nodes
  relative to the threshold τ, and their separation;
* the shape of the kept mask: runs of kept text nodes, the span from the first to the
  last kept node and how full it is, where it starts, and whether the headline's text
  node precedes it.

Model: a small gradient-boosted regressor of the page's WCXB word F1 (LightGBM, exported
to ``scrapy_cepr/models/confidence.json`` and evaluated with numpy by
:mod:`scrapy_cepr.core.trees`), trained by ``benchmarks/train_confidence.py`` on the
output of ``cepr-typed`` on WCXB's dev pages and the article-extraction benchmark's
pages, with folds grouped by domain. The prediction is clipped to [0, 1].

It is defined for the methods whose units are the page's text nodes (``cepr-typed``,
``cepr-article``, ``setpr``, ``tpr``, ``etpr``, ``nce``, ``cedst``): their result has a
:class:`~scrapy_cepr.core.result.NodeTable` with tag paths over the page's N text
nodes. Methods whose units are source lines (``cetr``, ``cetr-tm``) or rendered boxes
(``wang2009``) get None. An empty body gets None.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from .blocks import block_ranges
from .pagetype import PAGE_TYPES
from .text import count_cjk
from .trees import TreeEnsemble, load_packaged

__all__ = ["FEATURES", "MODEL_FILE", "confidence", "features", "load_model"]

logger = logging.getLogger(__name__)

#: The model's file in ``scrapy_cepr/models``.
MODEL_FILE = "confidence.json"

#: Names of the feature columns, in order.
FEATURES: tuple[str, ...] = (
    *(f"type_{t}" for t in PAGE_TYPES),
    "type_max",
    "log_nodes",
    "log_page_chars",
    "log_body_words",
    "log_body_chars",
    "log_blocks",
    "log_kept_blocks",
    "kept_char_share",
    "kept_node_share",
    "kept_block_share",
    "kept_link_density",
    "dropped_link_density",
    "page_link_density",
    "kept_punct_density",
    "log_chars_per_kept_block",
    "kept_h_rel",
    "dropped_h_rel",
    "kept_above_tau",
    "h_separation",
    "log_kept_runs",
    "span_share",
    "span_fill",
    "first_kept",
    "title_before",
)


def features(page: Any, nodes: Any, body: str, page_types: Mapping[str, float] | None, tau: float | None) -> np.ndarray | None:
    """The :data:`FEATURES` row, float64 ``(F,)``, of one extraction; None when it has no
    body or its units are not the page's text nodes.

    :param page: the :class:`~scrapy_cepr.core.page.Page` the method ran on (N text nodes).
    :param nodes: the result's :class:`~scrapy_cepr.core.result.NodeTable` (or None).
    :param body: the result's body text.
    :param page_types: the page-type probabilities (type -> probability), or None to
        compute them on *page*.
    :param tau: the method's threshold τ on H', or None.
    """
    n = len(page)
    if not body or nodes is None or nodes.path_ids is None or n == 0 or len(nodes) != n:
        return None
    keep = np.asarray(nodes.keep, dtype=bool)
    if not keep.any():
        return None
    if page_types is None:
        from .pagetype import page_type_proba

        page_types = page_type_proba(page) or {}
    types = np.array([float(page_types.get(t, 0.0)) for t in PAGE_TYPES])
    chars = page.char_counts.astype(np.float64)
    link = np.asarray(page.in_link, dtype=bool)
    total = max(chars.sum(), 1.0)
    kept_chars = chars[keep].sum()
    drop_chars = total - kept_chars
    link_chars = chars[link].sum()
    kept_link = chars[keep & link].sum()
    blocks = np.asarray(page.blocks)
    # Display-block ids rise along the text nodes: the blocks are their runs.
    n_blocks = block_ranges(blocks)[0].size
    n_kept_blocks = block_ranges(blocks[keep])[0].size
    punct = nodes.punc_num if nodes.punc_num is not None else page.punct_counts
    kept_punct = float(np.asarray(punct)[keep].sum())
    hs = np.log1p(np.maximum(np.asarray(nodes.h_smoothed, dtype=np.float64), 0.0))
    t = np.log1p(max(float(tau), 0.0)) if tau is not None and np.isfinite(tau) else float(np.median(hs))
    kept_h = float(hs[keep].mean()) - t
    dropped_h = float(hs[~keep].mean()) - t if (~keep).any() else 0.0
    sd = float(hs.std()) or 1.0
    idx = keep.nonzero()[0]
    first, last = int(idx[0]), int(idx[-1])
    span = last - first + 1
    runs = int(np.count_nonzero(np.diff(keep.astype(np.int8)) == 1) + int(keep[0]))
    title = nodes.title_index
    # Words: the body's whitespace is normalised, so spaces and newlines separate them;
    # a CJK character is a word of its own (as in the paper metric's tokens).
    words = body.count(" ") + body.count("\n") + 1 + count_cjk(body)
    row = [
        *types.tolist(),
        float(types.max()) if types.size else 0.0,
        np.log1p(n),
        np.log1p(total),
        np.log1p(words),
        np.log1p(len(body)),
        np.log1p(n_blocks),
        np.log1p(n_kept_blocks),
        kept_chars / total,
        idx.size / n,
        n_kept_blocks / max(n_blocks, 1),
        kept_link / max(kept_chars, 1.0),
        (link_chars - kept_link) / max(drop_chars, 1.0),
        link_chars / total,
        kept_punct / max(kept_chars, 1.0),
        np.log1p(kept_chars / max(n_kept_blocks, 1)),
        kept_h,
        dropped_h,
        float(np.mean(hs[keep] >= t)),
        (kept_h - dropped_h) / sd,
        np.log1p(runs),
        span / n,
        idx.size / span,
        first / n,
        -1.0 if title is None else float(title <= first),
    ]
    return np.asarray(row, dtype=np.float64)


@lru_cache(maxsize=1)
def load_model() -> TreeEnsemble:
    """The packaged confidence model (``scrapy_cepr/models/confidence.json``), loaded once.

    :raises ValueError: the file is not a regression model over :data:`FEATURES`.
    """
    return load_packaged(MODEL_FILE, FEATURES, objective="regression")


def confidence(page: Any, nodes: Any, body: str, page_types: Mapping[str, float] | None = None,
               tau: float | None = None) -> float | None:
    """The predicted word F1 of *body*, a float in [0, 1] rounded to 4 digits, or None
    (no body, or units that are not the page's text nodes). Arguments as
    :func:`features`; deterministic (same page, same value)."""
    x = features(page, nodes, body, page_types, tau)
    if x is None:
        return None
    value = float(load_model().predict(x)[0])
    return round(min(max(value, 0.0), 1.0), 4)
