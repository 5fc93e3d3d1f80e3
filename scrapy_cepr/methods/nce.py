"""NCE: News Content Extractor (Laber, de Souza, Jabour et al., PUC-Rio; CIKM 2009), spec §3.

NCE works on the DOM tree and has three phases (paper Sec. 2):

1. **Separator node search.** Visit the leaves (text nodes) in depth-first order until a
   leaf L with at least β1 characters has an ancestor u that (i) is not a ``<p>``,
   (ii) has ``|text(T_u)| ≥ β2`` characters and (iii) has at most one sibling u' with
   ``|text(T_u')| ≥ β_s`` characters and ``linkdensity(T_u') < α_s``; u is (iv) the closest
   such ancestor of L. The result is the forest ``F_{u,α} = {T_v | v child of u,
   linkdensity(T_v) ≤ α}``; without such a leaf, the whole tree.
2. **Comment removal.** Among the display blocks of that forest U, build a graph whose
   edges join *closely located* blocks with *similar content* (Assumption 2: comments
   repeat dates, permalinks …). The first connected component with 3 blocks marks the
   start of the comments: that block and everything after it is dropped (U → U').
3. **Title search.** Among the nodes before U' in the DFS, the ``<title>`` and every node
   with ``β3 ≤ |bag(text(T_u))| ≤ β4`` words, most of which occur in U', are candidates;
   the one with the most text is the title.

``linkdensity(F)`` is the number of characters inside ``<a>`` divided by the characters of
``text(F)``; characters are those of the page model's normalised text nodes
(:mod:`..core.page`), so the cleaned tree ``page.root`` (no script/style) is the DOM tree.

Choices where the paper is vague or its text is lost (spec §3 [open]):

* *Leaves and text-node children.* The paper's leaves are the text nodes: an element's
  ``.text`` and its children's tails (owned by the element, :attr:`Page.owners`). Text
  nodes directly under u belong to ``F_{u,α}`` (their link density is 0, or 1 inside a
  link) and count as siblings in condition (iii).
* *Phase 1 search.* Conditions (i)–(iii) hold for the root ``<html>`` as soon as the page
  has β2 characters, so the first leaf with β1 characters always finds its separator; the
  walk over further leaves can only matter when the page is smaller than β2, and then
  nothing can be found: NCE returns every text node. The sibling thresholds β_s
  (``min_sibling_chars``) and α_s (``sibling_link_density``) are parameters of their own.
* *Phase 2 blocks and similarity* (the paper's steps 1–3 are lost in the text). Blocks
  are the display blocks of U (:attr:`Page.blocks`: paragraph, list item, table cell …).
  Two blocks are *similar* when their first text nodes have the same tag path and the
  Jaccard index of their word sets, after lowercasing and mapping every digit run to
  ``0`` (so that dates and times match), is at least ``comment_similarity``; they are
  *closely located* when at most ``comment_window`` blocks apart. Blocks without words
  are not graph nodes, nor are blocks with fewer than ``comment_min_words`` distinct
  words (our addition: fitted, it keeps repeated lone numbers and labels out). The graph is built block by block with a union-find and stops at
  the first component of 3 blocks (paper: "stops as soon as the first connected component
  with at least 3 nodes is identified"); the cut starts at that component's first block.
  A component starting at U's first block is ignored, since Assumption 2 puts comments
  after the body.
* *Phase 3 candidates.* "Nodes with id smaller than the first node of U'" would include
  the ancestors of U', whose text contains U' itself; we take the elements whose whole
  text lies before U' in document order. ``|bag(·)|`` counts words: runs of Unicode word
  characters, and every CJK character as one word. The word-overlap condition is cut off
  in the paper's text: we require that at least ``title_overlap`` of the candidate's words
  (as a bag) occur in U'. "The largest amount of text" is taken in characters; ties go
  to the earlier (outer) node. When the winner is ``<title>``, a site name glued to it
  (``" | Site"``) is removed with :func:`..core.title.strip_site_name`. When there is no
  candidate at all, :func:`..core.title.pick_title` is used.
* *Title and body.* The title goes to :attr:`Extraction.title`; it is not added to the
  body (the benchmark's gold body has no title either).

Parameters (the paper publishes none; the link density example is α = 0.4). They were
fitted as the paper did, by a local search on a development part of the corpus, with
``benchmarks/fit_nce.py`` on the article-extraction-benchmark (181 pages):

* split: pages sorted by ``sha1(id)``; the first 60 are the development split, the other
  121 the test split;
* procedure: coordinate descent over a grid per parameter, starting from the paper's
  α = 0.4 and hand-picked sizes (α_s = 0.4, β1 = 100, β2 = 500, β_s = 200 characters,
  similarity 0.6, window 4, 1 word; β3 = 3, β4 = 30 words, overlap 0.5), sweeping the parameters in a fixed order and keeping a
  value only when it raises the development benchmark F1 by more than 1e-4, until a full
  sweep changes nothing; the title parameters (which do not change the body) are then
  fitted in the same way on the development split, scoring a title as right when its
  rapidfuzz ``ratio`` with the page's ``og:title`` is at least 90;
* result (the :class:`NCEParams` defaults; ``python3 benchmarks/fit_nce.py``, 225 s):
  α = 0.6, α_s = 0.4, β1 = 200, β2 = 1500, β_s = 300 characters; comment similarity 0.6,
  window 2 blocks, 2 words; β3 = 3, β4 = 8 words, overlap 0.75;
* benchmark F1 (:func:`~scrapy_cepr.evaluation.benchmark_summary`): development 0.904
  (start 0.796), test 0.869 (start 0.777); all 181 pages 0.881. Titles matching
  ``og:title``: development 0.855, test 0.873.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..core.page import Page
from ..core.region import DomTable
from ..core.params import check_int, check_real
from ..core.result import Extraction, text_node_extraction
from ..core.text import CJK_RE
from ..core.title import pick_title, strip_site_name

__all__ = ["ElementTable", "NCEParams", "comment_start", "run", "separator_node", "title_search"]

logger = logging.getLogger(__name__)

_CJK = CJK_RE.pattern[1:-1]
#: Words of ``bag(·)``: a CJK character, or a run of other Unicode word characters.
_WORD_RE = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")
_DIGITS_RE = re.compile(r"\d+")
#: ``_WORD_RE`` on ASCII text, where no CJK character can occur: runs of ``[A-Za-z0-9_]``.
_ASCII_WORD_RE = re.compile(r"\w+", re.ASCII)
#: ``_WORD_RE`` on text without a CJK character (the ``[CJK]`` branch never matches
#: there, the other is ``\w+``): the simpler pattern is matched faster.
_PLAIN_WORD_RE = re.compile(r"\w+")
_COMPONENT_SIZE = 3  # paper, Phase 2 step 3: "a connected component with at least 3 nodes"


@dataclass(frozen=True)
class NCEParams:
    """Validated NCE parameters (paper Sec. 2; fitted values as defaults, see the module
    docstring for the procedure). The paper's symbols are given for each.

    :param link_density: α in [0, 1]: a child tree of the separator node is kept when its
        link density is at most α (``F_{u,α}``). Paper example: 0.4.
    :param sibling_link_density: α_s in [0, 1], condition (iii): a sibling counts as
        "with text" only when its link density is below α_s.
    :param min_leaf_chars: β1 ≥ 1 characters of the leaf L that starts the search.
    :param min_separator_chars: β2 ≥ 1 characters of ``text(T_u)``, condition (ii).
    :param min_sibling_chars: β_s ≥ 1 characters of a sibling's text, condition (iii).
    :param comment_similarity: Jaccard index in [0, 1] of two blocks' digit-masked word
        sets above which they are similar (Phase 2).
    :param comment_window: 1 ≤ blocks apart for two blocks to be closely located (Phase 2).
    :param comment_min_words: ≥ 1 distinct digit-masked words of a block for it to be a
        node of the Phase 2 graph (so that lone numbers or one-word labels repeated in
        the body, such as "Advertisement", can be kept out).
    :param title_min_words: β3 ≥ 1 words of a title candidate (Phase 3).
    :param title_max_words: β4 ≥ β3 words of a title candidate (Phase 3).
    :param title_overlap: share in [0, 1] of a candidate's words that must occur in U'.
    :raises ValueError: naming the parameter and its allowed range.
    """

    link_density: float = 0.6
    sibling_link_density: float = 0.4
    min_leaf_chars: int = 200
    min_separator_chars: int = 1500
    min_sibling_chars: int = 300
    comment_similarity: float = 0.6
    comment_window: int = 2
    comment_min_words: int = 2
    title_min_words: int = 3
    title_max_words: int = 8
    title_overlap: float = 0.75

    def __post_init__(self) -> None:
        for name in ("link_density", "sibling_link_density", "comment_similarity", "title_overlap"):
            object.__setattr__(self, name, check_real(name, getattr(self, name), 0.0, 1.0))
        for name in ("min_leaf_chars", "min_separator_chars", "min_sibling_chars", "comment_window", "comment_min_words", "title_min_words"):
            object.__setattr__(self, name, check_int(name, getattr(self, name), 1, 10**9))
        object.__setattr__(
            self, "title_max_words", check_int("title_max_words", self.title_max_words, self.title_min_words, 10**9)
        )


#: NCE's element table (the paper's node ids are its pre-order indices): the shared
#: :class:`~scrapy_cepr.core.region.DomTable`, under the name this module always used.
ElementTable = DomTable


def separator_node(page: Page, table: ElementTable, params: NCEParams) -> int | None:
    """Phase 1: the separator node u (an index into *table*), or None when no leaf of β1
    characters has an ancestor satisfying conditions (i)–(iii) (paper Sec. 2, Phase 1).
    """
    leaves = np.flatnonzero(page.char_counts >= params.min_leaf_chars)
    if leaves.size == 0 or len(table) == 0 or table.chars[0] < params.min_separator_chars:
        return None
    checked: dict[int, bool] = {}
    for leaf in leaves.tolist():
        u = int(table.owner[leaf])
        while u >= 0:
            ok = checked.get(u)
            if ok is None:
                ok = checked[u] = _is_separator(page, table, params, u)
            if ok:
                return u
            u = int(table.parent[u])
    return None


def _is_separator(page: Page, table: ElementTable, params: NCEParams, u: int) -> bool:
    if table.tags[u] == "p" or table.chars[u] < params.min_separator_chars:  # (i), (ii)
        return False
    p = int(table.parent[u])
    if p < 0:
        return True
    sibs = table.children(p)
    sibs = sibs[sibs != u]
    wordy = (table.chars[sibs] >= params.min_sibling_chars) & (table.link_density(sibs) < params.sibling_link_density)
    count = int(np.count_nonzero(wordy))
    # Text-node siblings: text owned by the parent (link density 0, or 1 inside a link).
    own = table.owner == p
    if params.sibling_link_density > 0:
        own_ok = own & (page.char_counts >= params.min_sibling_chars) & ~page.in_link
        count += int(np.count_nonzero(own_ok))
    return count <= 1  # (iii)


def forest_mask(page: Page, table: ElementTable, params: NCEParams, u: int) -> np.ndarray:
    """Text nodes of ``F_{u,α}``: bool ``(N,)``. Child trees with link density ≤ α, and
    u's own text-node children (link density 0, or 1 inside a link)."""
    kids = table.children(u)
    kids = kids[(table.chars[kids] > 0) & (table.link_density(kids) <= params.link_density)]
    mark = np.zeros(len(table) + 1, dtype=np.int64)
    np.add.at(mark, kids, 1)
    np.add.at(mark, table.end[kids], -1)
    in_kept = np.cumsum(mark[:-1]) > 0
    own = table.owner == u
    if params.link_density < 1.0:
        own &= ~page.in_link
    return in_kept[table.owner] | own


def _block_words(text: str) -> frozenset[str]:
    """The digit-masked word set of a block (Phase 2).

    >>> sorted(_block_words("Posted 12:30, posted by Ann")), sorted(_block_words("新闻 2024"))
    (['0', 'ann', 'by', 'posted'], ['0', '新', '闻'])
    >>> sorted(_block_words("Café “Zoë” opens at 9:30 — 2nd floor"))
    ['0', '0nd', 'at', 'café', 'floor', 'opens', 'zoë']
    """
    text = text.lower()
    if text.isascii():
        pattern = _ASCII_WORD_RE
    else:
        pattern = _WORD_RE if CJK_RE.search(text) else _PLAIN_WORD_RE
    words = frozenset(pattern.findall(text))
    # Digits are word characters (and no CJK ones): masking the digit runs of the
    # distinct words gives the words of the masked text, at a fraction of the cost.
    # Only the words that are not all letters change (found by a C-level filter).
    odd = list(itertools.filterfalse(str.isalpha, words))
    if not odd:
        return words
    return words.difference(odd).union([_DIGITS_RE.sub("0", w) for w in odd])


def _has_close_twin(paths: np.ndarray, window: int, min_blocks: int = 2) -> np.ndarray:
    """bool ``(B,)``: the block lies in a *chain* of at least *min_blocks* blocks, a chain
    being a maximal sequence of blocks with the same tag path (*paths*, one id per
    block), each at most *window* blocks after the previous one. An edge of the Phase 2
    graph joins two blocks of one path at most *window* apart, hence of one chain: a
    component never spans two chains, and a block of a chain with fewer than
    ``_COMPONENT_SIZE`` blocks is never part of a component that large, so Phase 2 need
    not read its words. With ``min_blocks = 2``: the block has a same-path block at most
    *window* blocks away.

    >>> _has_close_twin(np.array([4, 7, 4, 9, 9, 5, 4]), 2).tolist()
    [True, False, True, True, True, False, False]
    >>> _has_close_twin(np.array([4, 7, 4, 9, 4, 5, 4, 9, 1, 1]), 2, 3).tolist()
    [True, False, True, False, True, False, True, False, False, False]
    """
    n = paths.size
    if n == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(paths, kind="stable")  # by path, then block number
    same = paths[order[1:]] == paths[order[:-1]]
    close = same & (order[1:] - order[:-1] <= window)
    chain = np.cumsum(np.concatenate(([True], ~close)))  # chain number, in sorted order
    out = np.empty(n, dtype=bool)
    out[order] = np.bincount(chain)[chain] >= min_blocks
    return out


def comment_start(page: Page, keep: np.ndarray, params: NCEParams) -> int | None:
    """Phase 2: the index of the first text node of the comment region in the forest
    *keep* (bool ``(N,)``), or None when no 3 closely located similar blocks exist
    (see the module docstring for "block", "similar" and "closely located").
    """
    idx = np.flatnonzero(keep)
    if idx.size == 0:
        return None
    blocks = page.blocks[idx]
    # Positions in ``idx`` where a display block starts, and where it ends.
    starts = np.concatenate(([0], np.flatnonzero(blocks[1:] != blocks[:-1]) + 1))
    ends = np.append(starts[1:], idx.size)
    paths = page.path_ids[idx[starts]]
    texts = page.texts
    nodes: list[tuple[int, int, frozenset[str], int]] = []  # (block number, path id, words, |words|)
    parent: list[int] = []
    size: list[int] = []

    def find(a: int) -> int:
        """Union-find root of block *a*, with path halving."""
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    node_of = idx.tolist()
    block_starts, block_ends, path_of = starts.tolist(), ends.tolist(), paths.tolist()
    window, similarity, min_words = params.comment_window, params.comment_similarity, params.comment_min_words
    for b in np.flatnonzero(_has_close_twin(paths, window, _COMPONENT_SIZE)).tolist():
        words = _block_words(" ".join(map(texts.__getitem__, node_of[block_starts[b] : block_ends[b]])))
        n_words = len(words)
        if n_words < min_words:
            continue
        me = len(nodes)
        path = path_of[b]
        nodes.append((b, path, words, n_words))
        parent.append(me)
        size.append(1)
        for other in range(me - 1, -1, -1):
            ob, opath, owords, n_owords = nodes[other]
            if b - ob > window:
                break
            if opath != path:
                continue
            # |A ∩ B| ≤ min(|A|, |B|) and |A ∪ B| ≥ max(|A|, |B|): sets of too unequal
            # sizes are never similar, and are not intersected (the same floating-point
            # test, as s·x is monotone in x).
            if n_words < n_owords:
                if n_words < similarity * n_owords:
                    continue
            elif n_owords < similarity * n_words:
                continue
            inter = len(words & owords)
            if inter and inter >= similarity * (len(words) + len(owords) - inter):
                ra, rb = find(me), find(other)
                if ra != rb:
                    parent[ra] = rb
                    size[rb] += size[ra]
                    if size[rb] >= _COMPONENT_SIZE:
                        first = min(n for n in range(len(nodes)) if find(n) == rb)
                        first_block = nodes[first][0]
                        if first_block == 0:
                            # A repeated pattern from U's first block on is the body's own
                            # layout, not comments after the body (Assumption 2).
                            return None
                        return int(idx[starts[first_block]])
    return None


def title_search(page: Page, table: ElementTable, keep: np.ndarray, params: NCEParams) -> tuple[str | None, int | None]:
    """Phase 3: ``(title, first text node)`` of the candidate with the most characters, or
    ``(None, None)`` when there is no candidate. ``<title>`` gives node None.

    :param keep: bool ``(N,)``, the text nodes of U'.
    """
    kept = np.flatnonzero(keep)
    t0 = int(kept[0]) if kept.size else len(page)
    best: tuple[int, str, int | None] | None = None
    if page.html_title:
        best = (len(page.html_title), page.html_title, None)
    if t0 > 0 and len(table):
        texts = page.texts
        words = np.zeros(len(page), dtype=np.int64)
        words[:t0] = np.fromiter((len(_WORD_RE.findall(t)) for t in texts[:t0]), np.int64, t0)
        sub_words = table.subtree_sum(np.bincount(table.owner, weights=words, minlength=len(table)))
        cand = np.flatnonzero(
            (table.last_text < t0)
            & (table.first_text <= table.last_text)
            & (sub_words >= params.title_min_words)
            & (sub_words <= params.title_max_words)
        )
        if cand.size:
            body = Counter(_WORD_RE.findall(" ".join(texts[i] for i in kept.tolist()).lower()))
            # Most characters first; ties to the earlier (outer) node.
            order = cand[np.lexsort((cand, -table.chars[cand]))]
            floor = best[0] if best else -1
            for e in order.tolist():
                if table.chars[e] <= floor:
                    break
                # The text nodes of T_e are contiguous in document order.
                first, last = int(table.first_text[e]), int(table.last_text[e])
                text = " ".join(texts[first : last + 1])
                bag = Counter(_WORD_RE.findall(text.lower()))
                common = sum((bag & body).values())
                if common >= params.title_overlap * sum(bag.values()):
                    best = (len(text), text, first)
                    break
    if best is None:
        return None, None
    if best[2] is None:
        return strip_site_name(best[1]), None
    return best[1], best[2]


def run(page: Page, params: NCEParams, table: ElementTable | None = None) -> Extraction:
    """Extract the title and the main content of *page* with NCE (paper Sec. 2, three
    phases; see the module docstring for the choices made).

    :param table: the page's :class:`ElementTable`, when it is already built (repeated
        runs on one page, as in ``benchmarks/fit_nce.py``); built here otherwise.
    :returns: an :class:`Extraction`; its ``nodes`` view has per text node ``h`` = the
        phase that dropped it (0: outside the separator's subtree, 1: in a child tree
        with link density > α, 2: a comment, 3: kept) and ``keep``. ``tau`` is None.
        A page without text nodes gives an empty body (title from ``<title>``, if any).
    """
    used = {f: getattr(params, f) for f in params.__dataclass_fields__}
    if len(page) == 0:
        title, _ = pick_title(page)
        return Extraction(title=title, body="", method="nce", params=used, url=page.url)
    if table is None:
        table = ElementTable(page)
    u = separator_node(page, table, params)
    stage = np.zeros(len(page), dtype=np.float64)
    if u is None:
        logger.debug("NCE: no separator node, keeping every text node")
        keep = np.ones(len(page), dtype=bool)
    else:
        stage[table.first_text[u] : table.last_text[u] + 1] = 1.0
        keep = forest_mask(page, table, params, u)
    cut = comment_start(page, keep, params)
    if cut is not None:
        stage[cut:][keep[cut:]] = 2.0
        keep[cut:] = False
    stage[keep] = 3.0
    title, title_index = title_search(page, table, keep, params)
    if title is None:
        title, title_index = pick_title(page)
    return text_node_extraction(
        page, method="nce", params=used, title=(title, title_index), h=stage, h_smoothed=stage, keep=keep
    )
