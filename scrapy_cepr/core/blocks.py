"""Display blocks of a page and their features, for the learned block classifier of
CEPR-Typed (:mod:`scrapy_cepr.methods.typed`).

A *block* is a display block (a line) of the page model: the text nodes that share an id
in :attr:`Page.blocks <scrapy_cepr.core.page.Page>`, which the page model's walk already
computed. Nothing is walked again: every feature is a numpy reduction over the per-node
arrays the page, CEPR-SETPR and CEPR-Article have (``np.add.reduceat`` over the block
starts), and over the page's tag paths (a few hundred at most).

Features per block (:data:`FEATURES`, one float32 column each):

* CEPR (Wu et al., CIKM 2013, Eqs. 2–6): ETPR H and SETPR's smoothed H' of the block's
  text nodes (mean and max on a log scale, and relative to the threshold τ on a log scale,
  as CEPR-Article's body evidence reads them);
* the block's tag path (its longest text node's): the number of text nodes on that path
  and the share of the page's characters on it (CEPR's premise: paragraphs of one story
  share a path), its depth, its innermost heading level, and whether it passes through
  an element whose HTML semantics is navigation, tangential content, header/footer, form,
  list item, table cell, preformatted text, figure, or link;
* whether it lies inside a dialog (:func:`dialog_nodes`: WAI-ARIA's ``dialog`` and
  ``alertdialog`` roles and ``aria-modal="true"``, HTML's ``dialog`` element): a consent,
  sign-in or newsletter overlay, not the page's own content;
* text: characters and words (as the same text in a Latin script would have them:
  :func:`~scrapy_cepr.core.text.text_measures`), text nodes, punctuation share, link density (NCE, CEDST's
  hyperlink evidence), a CETR-like tag ratio (characters per text node; Weninger et al.
  2010), whether the line ends a sentence, whether its text repeats elsewhere and how often its longest text node occurs on the page;
* position: relative position in the page (characters before it), signed distance to the
  headline in blocks and characters;
* CEPR-Article (:mod:`scrapy_cepr.core.article`): whether the block is kept by it,
  and whether it lies between its first and last kept node;
* neighbours: the values of a few of the above for the previous and next blocks and
  over a window of ±3 blocks;
* the page: characters, blocks, τ, CEPR-Article's kept share.

The page's type probabilities are appended by the caller (:func:`with_page_type`).
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

import numpy as np
from lxml import etree

from .page import Page
from .text import SENTENCE_TERMINALS, ends_sentence, text_measures

__all__ = ["FEATURES", "PAGE_TYPES", "BlockFeatures", "block_features", "block_ranges", "dialog_nodes", "with_page_type"]

logger = logging.getLogger(__name__)

#: WCXB's 7 page types, the order of the page-type columns.
PAGE_TYPES = ("article", "forum", "product", "collection", "listing", "documentation", "service")

# Ancestor elements by their HTML semantics (one flag each).
_CONTEXT = (
    ("in_nav", frozenset(["nav", "menu"])),
    ("in_aside", frozenset(["aside"])),
    ("in_header", frozenset(["header"])),
    ("in_footer", frozenset(["footer"])),
    ("in_form", frozenset(["form", "button", "select", "option", "label", "input", "textarea"])),
    ("in_li", frozenset(["li", "dd", "dt"])),
    ("in_table", frozenset(["table", "td", "th"])),
    ("in_pre", frozenset(["pre", "code"])),
    ("in_figure", frozenset(["figure", "figcaption"])),
    ("in_article", frozenset(["article", "main"])),
    ("in_p", frozenset(["p", "blockquote"])),
)
# Tag name -> bit mask of its context flags (bit k: _CONTEXT[k]; the last bit: a link).
_FLAG_SETS = [tags for _, tags in _CONTEXT] + [frozenset(["a"])]
_NAME_BITS = {tag: sum(1 << k for k, tags in enumerate(_FLAG_SETS) if tag in tags)
              for tag in frozenset().union(*_FLAG_SETS)}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# A block ends a sentence (feature ends_sentence) on a sentence terminal of any script
# (core.text) or on a colon or semicolon (ASCII or full-width), past closing quotes and
# brackets (core.text.ends_sentence).
_SENTENCE_END = SENTENCE_TERMINALS | frozenset(":;：；")

_OWN = [
    "log_chars", "log_words", "log_nodes", "punct_share", "link_density", "tag_ratio",
    "log_h_mean", "log_h_max", "log_hs_mean", "log_hs_max", "hs_rel_mean", "hs_rel_max",
    "log_path_nodes", "path_char_share", "depth", "heading",
    *[name for name, _ in _CONTEXT], "in_link_path",
    "ends_sentence", "repeated", "position", "head_dist_blocks", "head_dist_chars", "after_head",
    "article_keep", "article_span", "region_level", "region_level_share", "in_records",
    "log_repeats", "in_dialog",
]
_NEIGHBOUR = ["log_chars", "link_density", "hs_rel_max", "article_keep", "path_char_share", "heading", "region_level", "in_records"]
_PAGE = ["page_log_chars", "page_log_blocks", "page_log_tau", "page_article_share"]

#: Names of the feature columns of :func:`block_features`, in order.
FEATURES: tuple[str, ...] = (
    *_OWN,
    *[f"prev_{n}" for n in _NEIGHBOUR],
    *[f"next_{n}" for n in _NEIGHBOUR],
    *[f"win_{n}" for n in _NEIGHBOUR],
    *_PAGE,
)


@dataclass(frozen=True)
class BlockFeatures:
    """The blocks of a page: ``starts``/``ends`` int64 ``(B,)`` (text node ranges
    ``[starts[b], ends[b])``), ``x`` float32 ``(B, len(FEATURES))``, ``chars`` float64
    ``(B,)``."""

    starts: np.ndarray
    ends: np.ndarray
    x: np.ndarray
    chars: np.ndarray

    def __len__(self) -> int:
        return int(self.starts.size)


def block_ranges(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)``, int64 ``(B,)``: the text-node ranges of the runs of equal
    display-block ids.

    >>> [a.tolist() for a in block_ranges(np.array([1, 1, 2, 4, 4, 4]))]
    [[0, 2, 3], [2, 3, 6]]
    """
    n = blocks.size
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], blocks[1:] != blocks[:-1])))
    return starts, np.append(starts[1:], n)


def _path_tables(page: Page) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per tag path: depth, innermost heading level (h1–h6), context flags ``(P, C)`` and
    the link flag, following ``path_parents`` (a parent precedes its children). The flags
    are one bit each of an int per path, OR-ed down from the parent path."""
    names = page.path_names
    parents = page.path_parents
    n = len(names)
    depth = np.fromiter(map(len, page.path_codes), np.float64, n)
    bits_of = _NAME_BITS.get
    heading_of = _HEADINGS.get
    bits = [0] * n
    heading = [0] * n
    for p, (parent, name) in enumerate(zip(parents, names)):
        if parent >= 0:
            heading[p] = heading_of(name, heading[parent])
            bits[p] = bits[parent] | bits_of(name, 0)
        else:
            bits[p] = bits_of(name, 0)
    flags = (np.array(bits, dtype=np.int64)[:, None] >> np.arange(len(_CONTEXT) + 1)) & 1
    flags = flags.astype(bool).reshape(n, len(_CONTEXT) + 1)
    return depth, np.array(heading, dtype=np.float64), flags[:, :-1], flags[:, -1]


# The elements that open a dialog (dialog_nodes) by WAI-ARIA's roles or its modal flag:
# each ``descendant-or-self::*/@name`` step walks the elements' attributes of one name in
# libxml2, several times faster than a predicate on every element (and than ``//@name``,
# which visits the text nodes too). HTML's ``dialog`` elements are read with lxml's C walk
# filtered by tag, only when the page model's walk met one (``Page.path_names``).
_DIALOG_ATTRS = etree.XPath("descendant-or-self::*/@role[. = 'dialog' or . = 'alertdialog']/.. | "
                            "descendant-or-self::*/@aria-modal[. = 'true']/..")


def dialog_nodes(page: Page) -> np.ndarray:
    """Per text node, whether it is displayed inside a dialog: bool ``(N,)``.

    A dialog is an element of WAI-ARIA 1.2's ``dialog`` or ``alertdialog`` role, one that
    declares itself modal (``aria-modal="true"``), or HTML's ``dialog`` element: a window
    over the page (a consent, sign-in, newsletter or size-chart overlay). A text node is
    inside when its owner (:attr:`Page.owners`) is the dialog or lies below it, so the
    dialog's tail is not. Read on the parsed tree (names as the parser gives them,
    character references resolved).

    >>> page = Page.from_html('<body><div role="dialog"><p>Accept <b>all</b></p></div>Story'
    ...     '<dialog open>Sign in</dialog><div aria-modal="true">Join</div></body>')
    >>> dialog_nodes(page).tolist()
    [True, True, False, True, True]
    """
    n = len(page.texts)
    root = page.root
    if n == 0 or root is None:
        return np.zeros(n, dtype=bool)
    found = _DIALOG_ATTRS(root)
    if "dialog" in page.path_names:  # a <dialog> element below <body>
        found += root.iter("dialog")
    inside: dict[etree._Element, None] = {}
    for el in found:
        if el not in inside:  # a dialog inside one found before is already in
            inside.update(dict.fromkeys(el.iter()))
    if not inside:
        return np.zeros(n, dtype=bool)
    return np.fromiter(map(inside.__contains__, page.owners), bool, n)


def _shift(values: np.ndarray, by: int) -> np.ndarray:
    out = np.zeros_like(values)
    if by > 0:
        out[by:] = values[:-by]
    else:
        out[:by] = values[-by:]
    return out


def _window_mean(values: np.ndarray, radius: int) -> np.ndarray:
    n = values.shape[0]
    csum = np.concatenate((np.zeros((1,) + values.shape[1:]), np.cumsum(values, axis=0)))
    idx = np.arange(n)
    lo = np.maximum(idx - radius, 0)
    hi = np.minimum(idx + radius + 1, n)
    return (csum[hi] - csum[lo]) / (hi - lo)[:, None]


def block_features(
    page: Page,
    h: np.ndarray,
    h_smoothed: np.ndarray,
    tau: float,
    article_keep: np.ndarray,
    headline: int | None,
    repeated: np.ndarray | None = None,
    regions: np.ndarray | None = None,
    records: np.ndarray | None = None,
    dialog: np.ndarray | None = None,
) -> BlockFeatures:
    """The blocks of *page* and their features (module docstring; no page type yet).

    :param h, h_smoothed: float ``(N,)``, CEPR-SETPR's H (ETPR) and H' per text node.
    :param tau: SETPR's threshold τ.
    :param article_keep: bool ``(N,)``, CEPR-Article's keep mask.
    :param headline: the headline's text node (or None).
    :param repeated: bool ``(N,)``, text nodes of a line that repeats on the page, or None.
    :param regions: int ``(A, 2)``, CEPR-Article's region and its ancestors as block
        ranges (:func:`ancestor_ranges`), or None.
    :param records: bool ``(N,)``, text nodes inside repeated sibling records
        (:func:`scrapy_cepr.core.article.record_lists`), or None.
    :param dialog: bool ``(N,)``, :func:`dialog_nodes` of *page* when the caller has
        them, or None (computed here).
    :returns: :class:`BlockFeatures` with ``B`` rows (``B = 0`` for a page without text).
    """
    starts, ends = block_ranges(page.blocks)
    b = starts.size
    if b == 0:
        return BlockFeatures(starts, ends, np.zeros((0, len(FEATURES)), np.float32), np.zeros(0))
    texts = page.texts
    # Characters and words as the same text in a Latin script would have them.
    latin, words = text_measures(texts, page.char_counts)
    chars = latin.astype(np.float64)
    punct = page.punct_counts.astype(np.float64)
    in_link = page.in_link
    pid = page.path_ids
    n_paths = len(page.path_names)
    depth, heading, context, link_path = _path_tables(page)

    bchars = np.add.reduceat(chars, starts)
    safe = np.maximum(bchars, 1.0)
    bwords = np.add.reduceat(words, starts)
    nodes = (ends - starts).astype(np.float64)
    log_h = np.log1p(np.maximum(h, 0.0))
    log_hs = np.log1p(np.maximum(h_smoothed, 0.0))
    log_tau = np.log1p(max(tau, 0.0))
    rel = log_hs / log_tau if log_tau > 0 else np.where(log_hs > 0, 2.0, 1.0)
    # The block's own path: its longest text node's (the first of equal ones).
    block_of = np.repeat(np.arange(b), ends - starts)
    longest = np.maximum.reduceat(chars, starts)
    is_longest = chars == longest[block_of]
    first_longest = np.flatnonzero(is_longest)
    # The first of each block's longest nodes: where the (rising) block number changes.
    pick = first_longest[block_ranges(block_of[first_longest])[0]]
    main_path = pid[pick]
    path_nodes = np.bincount(pid, minlength=n_paths).astype(np.float64)
    path_chars = np.bincount(pid, weights=chars, minlength=n_paths)
    total = float(chars.sum()) or 1.0

    sentence_end = np.fromiter((ends_sentence(texts[i], _SENTENCE_END) for i in (ends - 1).tolist()), np.float64, b)
    before = np.concatenate(([0.0], np.cumsum(bchars)[:-1]))
    if headline is not None and 0 <= headline < len(texts):
        hb = int(block_of[headline])
        head_blocks = (np.arange(b) - hb) / max(b, 1)
        head_chars = (before - before[hb]) / total
        after_head = (np.arange(b) > hb).astype(np.float64)
    else:
        head_blocks = np.zeros(b)
        head_chars = np.zeros(b)
        after_head = np.full(b, -1.0)
    kept = np.flatnonzero(article_keep)
    akeep = np.add.reduceat(chars * article_keep, starts) / safe
    span = np.zeros(b)
    if kept.size:
        span[int(block_of[kept[0]]) : int(block_of[kept[-1]]) + 1] = 1.0
    if regions is not None and len(regions):
        # How many ancestors up from CEPR-Article's region the block's nearest enclosing
        # subtree is (0: inside the region), and that share of the chain.
        marks = np.zeros(b + 1)
        np.add.at(marks, regions[:, 0], 1.0)
        np.add.at(marks, regions[:, 1], -1.0)
        level = len(regions) - np.cumsum(marks)[:b]
        level_share = level / len(regions)
    else:
        level = np.full(b, 30.0)
        level_share = np.ones(b)
    rep = np.add.reduceat(repeated.astype(np.float64), starts) > 0 if repeated is not None else np.zeros(b)
    # How often the block's longest text node occurs on the page (a card's "Sponsored",
    # a post's "Reply", a disclaimer printed under every carousel item).
    counts = Counter(texts)
    repeats = np.fromiter(map(counts.__getitem__, [texts[i] for i in pick.tolist()]), np.float64, b) - 1.0
    in_dialog = np.add.reduceat(chars * (dialog_nodes(page) if dialog is None else dialog), starts) / safe

    own = np.array(  # (features, B), then its transpose (B, features): one copy
        [
            np.log1p(bchars), np.log1p(bwords), np.log1p(nodes),
            np.add.reduceat(punct, starts) / safe,
            np.add.reduceat(chars * in_link, starts) / safe,
            bchars / nodes,
            np.add.reduceat(log_h * chars, starts) / safe, np.maximum.reduceat(log_h, starts),
            np.add.reduceat(log_hs * chars, starts) / safe, np.maximum.reduceat(log_hs, starts),
            np.add.reduceat(rel * chars, starts) / safe, np.maximum.reduceat(rel, starts),
            np.log1p(path_nodes[main_path]), path_chars[main_path] / total,
            depth[main_path], heading[main_path],
            *context[main_path].T, link_path[main_path].astype(np.float64),
            sentence_end, rep.astype(np.float64), before / total,
            head_blocks, head_chars, after_head,
            akeep, span, level, level_share,
            np.add.reduceat(chars * records, starts) / safe if records is not None else np.zeros(b),
            np.log1p(repeats),
            in_dialog,
        ]
    ).T
    col = {name: k for k, name in enumerate(_OWN)}
    neigh = own[:, [col[n] for n in _NEIGHBOUR]]
    page_cols = np.tile(
        [np.log1p(total), np.log1p(b), log_tau, float(chars[article_keep].sum()) / total], (b, 1)
    )
    x = np.hstack([own, _shift(neigh, 1), _shift(neigh, -1), _window_mean(neigh, 3), page_cols])
    return BlockFeatures(starts, ends, x.astype(np.float32), bchars)


def with_page_type(x: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """*x* ``(B, F)`` with the page's type probabilities *proba* ``(7,)`` (order
    :data:`PAGE_TYPES`) appended to every row: float32 ``(B, F + 7)``."""
    proba = np.asarray(proba, dtype=np.float32).reshape(1, -1)
    return np.hstack([x, np.repeat(proba, x.shape[0], axis=0)]).astype(np.float32)


def ancestor_ranges(table, node_mask: np.ndarray, block_of: np.ndarray) -> np.ndarray:
    """The region's subtree and its ancestors, as block ranges: int64 ``(A, 2)``, rows
    ``[first block, end block)`` from the lowest element holding every text node flagged
    in *node_mask* (bool ``(N,)``) up to the root, smallest first; ``(0, 2)`` when no
    node is flagged.

    :param table: the page's :class:`~scrapy_cepr.core.region.DomTable`.
    :param block_of: int ``(N,)``, the block index of each text node.
    """
    idx = np.flatnonzero(node_mask)
    if idx.size == 0 or len(table) == 0:
        return np.zeros((0, 2), np.int64)
    owners = table.owner[idx]
    lo, hi = int(owners.min()), int(owners.max())
    parent, end = table.parent, table.end
    a = int(table.owner[idx[0]])
    while a > 0 and not (a <= lo and end[a] > hi):
        a = int(parent[a])
    chain = []
    while a >= 0:
        chain.append(a)
        a = int(parent[a])
    chain_arr = np.array(chain, dtype=np.int64)
    # The text nodes of each subtree are one range (DomTable.first_text/last_text, which
    # CEPR-Article's region search has built already); a subtree without text has none.
    first, last = table.first_text[chain_arr], table.last_text[chain_arr]
    has = last >= 0
    out = np.column_stack([block_of[first[has]], block_of[last[has]] + 1])
    return out.astype(np.int64)
