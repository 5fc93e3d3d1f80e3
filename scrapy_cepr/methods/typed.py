"""CEPR-Typed: placeholder (being written)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields

import numpy as np

from ..core.blocks import BlockFeatures, block_features
from ..core.page import Page
from .article import ArticleParams, repeated_lines
from .article import run as article_run

logger = logging.getLogger(__name__)


def analyse(page: Page, article_params: ArticleParams):
    """CEPR-Article's extraction of *page* and the features of its blocks."""
    art = article_run(page, article_params)
    nodes = art.nodes
    if nodes is None:
        return art, None, None
    from ..core.blocks import ancestor_ranges, block_ranges
    from ..core.region import DomTable

    starts, ends = block_ranges(page.blocks)
    rep = np.repeat(repeated_lines(page.texts, page.char_counts, starts, ends), ends - starts)
    table = DomTable(page)
    block_of = np.repeat(np.arange(starts.size), ends - starts)
    anc = ancestor_ranges(table, nodes.keep, block_of)
    from .article import record_lists

    records = table.covered(record_lists(table))[table.owner] if len(table) else None
    feats = block_features(page, nodes.h, nodes.h_smoothed, art.tau or 0.0, nodes.keep, nodes.title_index, rep, anc,
                           records)
    return art, feats, anc


def assemble(p: np.ndarray, x: np.ndarray, proba: np.ndarray, threshold: float = 0.5) -> np.ndarray:
    """Blocks kept (bool ``(B,)``) from their content probabilities *p*."""
    return p >= threshold
