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
  are the display blocks of U (:attr:`Page.blocks`: paragraph, list item, table cell, the
  row of a data table …); a data table's rows are no graph nodes (they repeat their
  columns by construction: the table's structure, not a thread).
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
  (``" | Site"``) is removed with :func:`..core.sitename.strip_site_name`. When there is no
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

import logging
from collections import Counter

import numpy as np

from ..core.comments import WORD_RE as _WORD_RE
from ..core.comments import NCEParams, comment_start
from ..core.page import Page
from ..core.region import DomTable
from ..core.result import Extraction, text_node_extraction
from ..core.sitename import strip_site_name
from ..core.title import pick_title

__all__ = ["ElementTable", "run", "separator_node", "title_search"]

logger = logging.getLogger(__name__)

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
