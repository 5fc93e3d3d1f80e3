"""CEPR-Typed: CEPR-Article's region, a learned classifier over the page's display
blocks, and an assembly that depends on the page type.

Steps (each reads arrays the earlier ones built; the page is walked once, by the page
model):

1. **CEPR-Article** (:mod:`.article`) runs once: SETPR's H' and τ (Wu et al., CIKM 2013,
   Eqs. 2–6; ``CEPR_ALPHA``, ``CEPR_LAMBDA`` and ``CEPR_RADIUS`` act on them as on
   SETPR), its body evidence, its region below the headline and its keep mask.
2. **Page type** (:func:`scrapy_cepr.core.pagetype.page_type_proba`): the probabilities
   of WCXB's 7 types (article, forum, product, collection, listing, documentation,
   service), or one type forced by ``page_type``.
3. **Block features** (:mod:`scrapy_cepr.core.blocks`): per display block, CEPR's H and H'
   (log scale, relative to τ), its tag path's statistics, text and link statistics, the
   HTML semantics of its ancestors (and whether one of them is a dialog, by its WAI-ARIA
   role or HTML's ``dialog`` element), its position relative to the headline, whether
   CEPR-Article keeps it, how many ancestors up from CEPR-Article's region it lies,
   whether it lies in repeated sibling records (NCE's comment assumption, read on the
   DOM), its neighbours' values, and the page type probabilities.
4. **Block classifier**: a small gradient-boosted tree ensemble
   (``scrapy_cepr/models/blocks.json``, evaluated with numpy by
   :mod:`scrapy_cepr.core.trees`) gives each block its probability of being main content.
   It is trained by ``benchmarks/train_blocks.py`` on WCXB's dev pages and the
   article-extraction benchmark's pages, with folds grouped by domain.
5. **Assembly by page type**:

   * *article* (the most probable type, with probability ≥ ``article_confidence``): one
     story. Among CEPR-Article's region and its ancestors (Wang et al.
     2009's body subtree, grown), the subtree maximising ``Σ (p_b − region_threshold)·√words_b``
     over its blocks is chosen: a larger ancestor wins only when the blocks it adds are
     mostly content (the parts of a story cut into sections, or split by an ad). A
     block inside a comment record that the classifier reads as boilerplate costs
     nothing there (``region_free_records``): it is not kept wherever it lies, and a
     long thread below a short story must not keep the story out. Inside
     it, blocks with ``p ≥ article_threshold`` are kept, and the blocks CEPR-Article kept
     unless ``p < article_floor`` (an image credit, a gallery's "Close"); a short line
     outside HTML's paragraph-level elements that ends no sentence (an ad slot's label,
     a byline, a share bar, a "see also" link in a ``div``) needs ``p ≥
     article_loose_floor`` besides (:func:`loose_lines`). Teasers,
     comments and sidebars outside the chosen subtree are never kept; a comment thread
     that only CEPR-Article's looser reading of the comment records finds (wrapped
     records, none of them holding a heading, and not records averaging about 120 words
     without a date line: those are a story's sections) is dropped too (``drop_threads``), and so is
     one whose comments no element wraps, found by its dated author lines in the blocks
     from the first kept one to the page's end (``drop_dated_threads``,
     :func:`~scrapy_cepr.core.comments.dated_thread`). A page where
     CEPR-Article keeps nothing is assembled as the other types;
   * *forum, product, collection, listing, documentation, service*: every block with
     ``p ≥ threshold`` (posts, cards, specification tables, all sections of a document;
     the classifier has learned navigation, filters, tables of contents and sidebars
     from those pages). A page whose most probable type is ``article`` (below
     ``article_confidence``) keeps CEPR-Article's story assembled as an article when
     that holds more words than this assembly (no block reaches ``threshold``, or only
     part of a short story does: :func:`assemble_page`); on such a page the two comment
     threads above are dropped too (an article's text is one story, however it was
     assembled).

   On the pages of the types whose main text is not one author's story or document
   (forum, product, collection, listing, service), a kept block whose text (whitespace
   collapsed, case folded; two words or more, code exempt) a kept block before it already
   has is dropped (``drop_repeats``): a description printed again in a hidden tab or a
   mobile copy, a promotion's disclaimer under every card, a post quoted in the reply.
   In a story or a document a repeated line is the author's (a recipe's step, a code
   sample shown for several languages) and is kept, unless the page holds the story
   twice (a print, mobile or hidden copy): on pages assembled as an article and on
   documentation pages, when one stretch of consecutive kept blocks repeats earlier kept
   blocks in the same order and holds at least ``copy_share`` of the kept text, the
   later copies of the kept lines are dropped (``copy_share``; an author's repeats, a
   menu printed for every day, repeat a few lines at a time, not a stretch of the
   story).

No rule is keyed to a site, a language or class/id names. Measurements are in
``docs/methods.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from functools import lru_cache

import numpy as np

from ..core.article import (
    ArticleParams,
    ArticleState,
    body_evidence,
    record_lists,
    repeated_lines,
    thread_records,
)
from ..core.article import analyse as article_analyse
from ..core.blocks import (
    FEATURES,
    PAGE_TYPES,
    BlockFeatures,
    ancestor_ranges,
    block_features,
    dialog_nodes,
    with_page_type,
)
from ..core.comments import dated_thread
from ..core.page import Page
from ..core.params import check_int, check_real
from ..core.result import Extraction, text_node_extraction
from ..core.trees import TreeEnsemble, load_packaged

__all__ = ["MODEL_FILE", "TypedParams", "after_assembly", "analyse", "assemble", "assemble_page", "drop_repeated", "load_model", "loose_lines", "run",
           "story_copies"]

logger = logging.getLogger(__name__)

#: The block classifier's file in ``scrapy_cepr/models``.
MODEL_FILE = "blocks.json"
#: Names of the classifier's input columns: :data:`~scrapy_cepr.core.blocks.FEATURES`, then
#: the page type probabilities.
MODEL_FEATURES: tuple[str, ...] = (*FEATURES, *(f"type_{t}" for t in PAGE_TYPES))


@dataclass(frozen=True)
class TypedParams:
    """Validated CEPR-Typed parameters.

    SETPR's parameters, with the same names and meaning (Wu et al. 2013, Sec. 5.2), passed
    to CEPR-Article (step 1):

    :param alpha: α ≥ 0 of ``τ = α·σ(H')``; None means SETPR's paper value 0.8.
    :param lambda_: λ ≥ 0 of the smoothing weight ``1/dist^λ``.
    :param radius: smoothing window radius r ≥ 0.
    :param edges: ``"keep"`` or ``"pad"``.

    Assembly (step 5), probabilities in [0, 1]:

    :param threshold: blocks kept on non-article pages have ``p ≥ threshold``.
    :param region_threshold: the article subtree maximises ``Σ (p − region_threshold)·√words``.
    :param region_free_records: in that sum, a block inside a comment record (the block
        feature ``in_records``) counts ``max(0, …)``: below ``region_threshold`` it costs
        the subtree nothing; False counts it as any block.
    :param article_threshold: blocks kept inside the article subtree have ``p ≥`` this …
    :param article_floor: … or are kept by CEPR-Article with ``p ≥ article_floor``,
    :param article_loose_floor: … and ``p ≥ article_loose_floor`` for a line that
        :func:`loose_lines` finds (0 keeps them on CEPR-Article's word alone).
    :param article_loose_words: the most words of such a line (an integer ≥ 0).
    :param article_confidence: the article assembly is used when the page-type
        probability of ``article`` is at least this (and it is the most probable type).
    :param after_story_threshold: on a page whose most probable type is ``article`` but
        below ``article_confidence`` (assembled as the other types), blocks after the
        article subtree (comments, teasers) are kept only with ``p ≥`` this.
    :param headline: on a page whose most probable type is ``article``, keep the
        headline's heading (the title's text node) in the body, whatever the classifier
        gives it; False (default): it is the ``title`` and is not repeated in the body, as
        in CEPR-Article (step 4).
    :param drop_repeats: on pages assembled as the other types (not ``article``) whose
        most probable type is neither ``article`` nor ``documentation``, drop the kept
        blocks whose text a kept block before them has (module docstring, step 5); False
        keeps them.
    :param drop_threads: on pages read as an article (the most probable type, however
        assembled), drop the blocks of a comment thread that only CEPR-Article's looser
        reading of the comment records finds (:func:`~scrapy_cepr.core.article.thread_records`;
        the block classifier reads the strict records); False keeps them.
    :param drop_dated_threads: on pages read as an article, drop a comment thread
        whose records are not wrapped, found by its dated author lines
        (:func:`dated_thread_blocks`); False keeps it.
    :param copy_share: in [0, 1]; on pages assembled as an article and on documentation
        pages, drop the later copies of the kept lines when one stretch of consecutive
        kept blocks copying earlier ones in order holds at least this share of the kept
        characters (:func:`story_copies`); 1.0 switches it off.
    :param page_type: None (the page-type classifier decides) or one of the 7 types,
        forced.
    :raises ValueError: naming the parameter and its allowed range.
    """

    alpha: float | None = None
    lambda_: float = 1.0
    radius: int = 1
    edges: str = "keep"
    threshold: float = 0.4
    region_threshold: float = 0.6
    region_free_records: bool = True
    article_threshold: float = 0.7
    article_floor: float = 0.1
    article_loose_floor: float = 0.6
    article_loose_words: int = 20
    article_confidence: float = 0.5
    after_story_threshold: float = 0.5
    headline: bool = False
    drop_repeats: bool = True
    drop_threads: bool = True
    drop_dated_threads: bool = True
    copy_share: float = 0.1
    page_type: str | None = None

    def __post_init__(self) -> None:
        # The block classifier reads the strict comment records (it was trained on them;
        # the looser reading, CEPR-Article's default, did not raise it out of fold), and
        # the region of steps 3 and 3b with the records' text as cost (retrained on the
        # free records, it did not gain out of fold: docs/measurements.md).
        art = ArticleParams(alpha=self.alpha, lambda_=self.lambda_, radius=self.radius, edges=self.edges,
                            comment_wrapped=False, comment_dated=False, region_free_records=False)
        for name in ("alpha", "lambda_", "radius"):  # SETPR's own checks and conversions
            object.__setattr__(self, name, getattr(art, name))
        object.__setattr__(self, "_article", art)  # validated once, not per page
        for name in ("threshold", "region_threshold", "article_threshold", "article_floor", "article_loose_floor",
                     "article_confidence", "after_story_threshold", "copy_share"):
            object.__setattr__(self, name, check_real(name, getattr(self, name), 0.0, 1.0))
        object.__setattr__(self, "article_loose_words", check_int("article_loose_words", self.article_loose_words))
        for name in ("headline", "drop_repeats", "drop_threads", "drop_dated_threads", "region_free_records"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be a bool (True or False), got {getattr(self, name)!r}")
        if self.page_type is not None and self.page_type not in PAGE_TYPES:
            raise ValueError(f"page_type must be None or one of {', '.join(PAGE_TYPES)}; got {self.page_type!r}")

    def article_params(self) -> ArticleParams:
        """CEPR-Article's parameters with this method's SETPR parameters."""
        art: ArticleParams = self.__dict__["_article"]
        return art


@lru_cache(maxsize=1)
def load_model() -> TreeEnsemble:
    """The packaged block classifier (``scrapy_cepr/models/blocks.json``), loaded once.

    :raises ValueError: the file is not a model over :data:`MODEL_FEATURES`.
    """
    return load_packaged(MODEL_FILE, MODEL_FEATURES, objective="binary")


def warm_up() -> None:
    """Load the block classifier and the page-type model (no page is processed)."""
    load_model()
    from ..core import pagetype

    if hasattr(pagetype, "load_model"):
        pagetype.load_model()


def analyse(page: Page, article_params: ArticleParams, *,
            body: bool = True) -> tuple[Extraction, BlockFeatures | None, np.ndarray | None]:
    """Steps 1 and 3: CEPR-Article's extraction of *page*, the features of its blocks
    (without the page type) and CEPR-Article's region with its ancestors as block ranges
    (:func:`~scrapy_cepr.core.blocks.ancestor_ranges`); ``(extraction, None, None)`` for a
    page without text. ``body=False``: the extraction's body is ``""`` (not joined)."""
    _, art, feats, regions = _analyse(page, article_params, body=body)
    return art, feats, regions


def _analyse(page: Page, article_params: ArticleParams, *, body: bool = True,
             dialog: np.ndarray | None = None) -> tuple[ArticleState, Extraction, BlockFeatures | None, np.ndarray | None]:
    state = article_analyse(page, article_params, body=body)
    art = state.extraction
    nodes = art.nodes
    table, starts, ends = state.table, state.starts, state.ends
    if nodes is None or len(page) == 0 or table is None or starts is None or ends is None:
        return state, art, None, None
    repeated = state.repeated
    if repeated is None:
        repeated = repeated_lines(page.texts, page.char_counts, starts, ends)
    rep = repeated.repeat(ends - starts)
    block_of = np.arange(starts.size).repeat(ends - starts)
    regions = ancestor_ranges(table, nodes.keep, block_of)
    records = None
    if len(table):
        page_records = state.records if state.records is not None else record_lists(table, loose=False)
        records = table.covered(page_records)[table.owner]
    feats = block_features(page, nodes.h, nodes.h_smoothed, art.tau or 0.0, nodes.keep, nodes.title_index, rep,
                           regions, records, dialog)
    return state, art, feats, regions


def headline_blocks(page: Page, starts: np.ndarray, ends: np.ndarray, headline: int | None) -> np.ndarray:
    """The display blocks ``[starts[b], ends[b])`` of the headline: the ``h1``–``h3``
    range that starts at text node *headline*, and the block holding that node; bool
    ``(B,)`` (all False when *headline* is None)."""
    out = np.zeros(starts.size, dtype=bool)
    if headline is None or not starts.size or not 0 <= headline < len(page):
        return out
    stop = headline + 1
    for _, first, end in page.headings:
        if first == headline:
            stop = end
    out[(starts >= headline) & (ends <= stop)] = True
    out[int(starts.searchsorted(headline, side="right")) - 1] = True
    return out


def _words(x: np.ndarray) -> np.ndarray:
    """The blocks' words, float64 ``(B,)``, from their features *x* ``(B, F)`` (the
    ``log_words`` column is ``log1p`` of them)."""
    return np.expm1(x[:, FEATURES.index("log_words")].astype(np.float64))


def article_subtree(p: np.ndarray, x: np.ndarray, regions: np.ndarray,
                    params: TypedParams = TypedParams()) -> tuple[int, int]:
    """The block range ``[lo, hi)`` of the article subtree: among CEPR-Article's region
    and its ancestors *regions* ``(A, 2)``, the one maximising
    ``Σ (p_b − region_threshold)·√words_b`` (module docstring, step 5), a block inside a
    comment record counting no less than 0 with ``region_free_records``."""
    weight = np.sqrt(_words(x))
    score = (p - params.region_threshold) * weight
    if params.region_free_records:
        score = np.where(x[:, FEATURES.index("in_records")] > 0.5, np.maximum(score, 0.0), score)
    gain = np.concatenate(([0.0], score.cumsum()))
    lo, hi = regions[int((gain[regions[:, 1]] - gain[regions[:, 0]]).argmax())]
    return int(lo), int(hi)


def assemble(p: np.ndarray, x: np.ndarray, page_type: str, regions: np.ndarray | None,
             params: TypedParams = TypedParams()) -> np.ndarray:
    """Step 5: the blocks kept, bool ``(B,)``, from their content probabilities *p*
    ``(B,)``, their features *x* ``(B, F)`` (CEPR-Article's keep share and the words are
    read from it), the page type and CEPR-Article's region chain *regions* ``(A, 2)``."""
    col = FEATURES.index
    article_kept = x[:, col("article_keep")] > 0.5
    if page_type != "article" or regions is None or len(regions) == 0 or not (article_kept & (p >= params.article_floor)).any():
        return p >= params.threshold
    lo, hi = article_subtree(p, x, regions, params)
    keep = np.zeros(p.size, dtype=bool)
    keep[lo:hi] = True
    floor = np.where(loose_lines(x, params.article_loose_words), max(params.article_floor, params.article_loose_floor),
                     params.article_floor)
    return keep & ((p >= params.article_threshold) | (article_kept & (p >= floor)))


#: Block features of the HTML elements whose text is a paragraph of running text, as a
#: browser's reader view and the benchmarks' gold bodies read it (HTML §4.4 grouping
#: content ``p``, ``blockquote``, ``li``, ``dd``, ``dt``, ``pre``; §4.3 ``h1``–``h6``;
#: §4.9 table cells; ``code``): the flags of :data:`scrapy_cepr.core.blocks.FEATURES`.
_PARAGRAPH_FLAGS = ("in_p", "in_li", "heading", "in_table", "in_pre")


def loose_lines(x: np.ndarray, max_words: int) -> np.ndarray:
    """Which blocks are *loose lines*, bool ``(B,)`` from their features *x* ``(B, F)``:
    at most *max_words* words, no sentence end (``ends_sentence``: a terminal of any
    script, a colon or a semicolon), and no paragraph-level element among their
    ancestors (:data:`_PARAGRAPH_FLAGS`): text set in a bare ``div`` or ``span``. In a
    story such a line is mostly the page's own widgets between or around its paragraphs
    (an ad slot's "Advertisement", a byline and date, "Share", an image credit, "See
    also: …"), which CEPR-Article's region holds; the story's short lines (a subheading,
    a one-line paragraph) sit in ``p``, ``h2`` or ``li`` or end a sentence, and the
    lines of a page written with ``<br>`` between its paragraphs mostly end one.

    >>> from scrapy_cepr.core.blocks import FEATURES
    >>> x = np.zeros((3, len(FEATURES)), np.float32)
    >>> x[:, FEATURES.index("log_words")] = np.log1p([1, 1, 30])
    >>> x[1, FEATURES.index("in_p")] = 1.0
    >>> loose_lines(x, 20).tolist()
    [True, False, False]
    """
    col = FEATURES.index
    out = _words(x) <= max_words + 0.5
    out &= x[:, col("ends_sentence")] < 0.5
    for name in _PARAGRAPH_FLAGS:
        out &= x[:, col(name)] < 0.5
    return out


def _thread_blocks(page: Page, state: ArticleState, art: Extraction, feats: BlockFeatures,
                   article_params: ArticleParams) -> np.ndarray:
    """The display blocks (bool ``(B,)``) inside a comment thread that only CEPR-Article's
    looser reading of the records finds (:func:`~scrapy_cepr.core.article.thread_records`:
    a blog engine's wrapped comments below the story)."""
    nodes, table = art.nodes, state.table
    if nodes is None or table is None:
        return np.zeros(feats.starts.size, dtype=bool)
    evidence = body_evidence(nodes.h_smoothed, art.tau or 0.0, page.in_link, article_params.content_level)
    thread = thread_records(table, page, evidence, state.headline, article_params)
    if not thread.any():
        return np.zeros(feats.starts.size, dtype=bool)
    in_thread = table.covered(thread)[table.owner]
    return np.logical_or.reduceat(in_thread, feats.starts)


#: The block feature column :func:`dated_thread_blocks` reads (inside ``h1``–``h6``).
_HEADING = FEATURES.index("heading")
#: Assemblies whose kept blocks keep their repeated lines: one author's story or document.
AUTHORED_TYPES = frozenset({"article", "documentation"})
#: A kept block shorter than this many words (as :func:`~scrapy_cepr.core.text.text_measures`
#: counts them) keeps its repeats: "Yes", "Reply", a one-word heading.
REPEAT_MIN_WORDS = 2


def _line_key(text: str) -> str:
    """A block's text as repeats are compared: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


def _long_enough(x: np.ndarray) -> np.ndarray:
    """Per block of *x* ``(B, F)``, whether it has :data:`REPEAT_MIN_WORDS` words or more."""
    return _words(x) >= REPEAT_MIN_WORDS - 1e-3


def drop_repeated(keep: np.ndarray, x: np.ndarray, line: Callable[[int], str]) -> np.ndarray:
    """*keep* (bool ``(B,)``) without the kept blocks whose text a kept block before them
    already has: whitespace collapsed and case folded, blocks of at least
    :data:`REPEAT_MIN_WORDS` words (read from *x* ``(B, F)``) outside code (``in_pre``);
    ``line(b)`` gives block *b*'s text (only kept blocks are read). A new array."""
    candidates = keep & _long_enough(x) & (x[:, FEATURES.index("in_pre")] < 0.5)
    out = keep.copy()
    seen: set[str] = set()
    for b in np.flatnonzero(candidates).tolist():
        text = _line_key(line(b))
        if text in seen:
            out[b] = False
        else:
            seen.add(text)
    return out


def story_copies(keep: np.ndarray, x: np.ndarray, line: Callable[[int], str], min_share: float) -> np.ndarray:
    """The kept blocks (bool ``(B,)``, a subset of *keep*) that are later copies of kept
    lines when the kept text holds its story twice: one stretch of consecutive kept
    blocks, each a copy of the kept block after the one the block before it copies, holds
    at least *min_share* of the kept characters; else none. Lines compare as in
    :func:`drop_repeated` (whitespace collapsed, case folded, blocks of at least
    :data:`REPEAT_MIN_WORDS` words read from *x* ``(B, F)``); ``line(b)`` gives block
    *b*'s text (only kept blocks are read, and none when no kept block holds a line that
    repeats on the page, the feature ``repeated``: a copy of a story repeats its
    paragraphs).

    >>> lines = ["Head", "One two three.", "Four five six.", "Seven eight.", "One two three.",
    ...          "Four five six.", "Seven eight."]
    >>> x = np.zeros((7, len(FEATURES))); x[:, FEATURES.index("log_words")] = np.log1p(3)
    >>> x[1:, FEATURES.index("repeated")] = 1
    >>> story_copies(np.ones(7, bool), x, lines.__getitem__, 0.3).nonzero()[0].tolist()
    [4, 5, 6]
    >>> story_copies(np.ones(7, bool), x, lines.__getitem__, 0.5).nonzero()[0].tolist()
    []
    """
    out = np.zeros(keep.size, dtype=bool)
    if not (keep & (x[:, FEATURES.index("repeated")] > 0.5)).any():
        return out
    long_enough = _long_enough(x)
    kept = np.flatnonzero(keep).tolist()
    texts = [_line_key(line(b)) for b in kept]
    total = sum(map(len, texts))
    first: dict[str, int] = {}  # a line's text -> its first position among the kept blocks
    longest = stretch = 0
    previous = -2  # the position copied by the block before (-2: that block copied nothing)
    for k, (b, text) in enumerate(zip(kept, texts)):
        copied = first.get(text) if long_enough[b] else None
        if copied is None:
            first.setdefault(text, k)
            stretch, previous = 0, -2
            continue
        out[b] = True
        stretch = stretch + len(text) if copied == previous + 1 else len(text)
        previous = copied
        longest = max(longest, stretch)
    if not total or longest < min_share * total:
        out[:] = False
    return out


def assemble_page(p: np.ndarray, x: np.ndarray, ptype: str, article_proba: float, regions: np.ndarray | None,
                  params: TypedParams = TypedParams()) -> tuple[np.ndarray, str]:
    """Step 5's choice of assembly: ``(keep, assembly)``, the blocks kept (bool ``(B,)``,
    :func:`assemble`) and the assembly used (``"article"`` or ``"other"``), for a page
    whose most probable type is *ptype*, with article probability *article_proba*.

    The article assembly when *ptype* is ``article`` with probability ≥
    ``article_confidence``, the other types' otherwise. A page most probably an article,
    below ``article_confidence``, keeps CEPR-Article's story assembled as an article when
    that holds more words than the other types' assembly (which keeps nothing, or part of
    a short story whose blocks straddle ``threshold``): an article is one story, and an
    uncertain type does not cut it. The assembly stays ``"other"`` there (the clean-up of
    :func:`after_assembly` and :func:`story_chrome` read it so). The training script
    (``benchmarks/train_blocks.py``) scores its assemblies through this function too.
    """
    assembly = "article" if ptype == "article" and article_proba >= params.article_confidence else "other"
    keep = assemble(p, x, assembly, regions, params)
    if ptype == "article" and assembly != "article":
        story = assemble(p, x, "article", regions, params)
        words = _words(x)
        if float(words[story].sum()) > float(words[keep].sum()):
            keep = story
    return keep, assembly


def after_assembly(keep: np.ndarray, x: np.ndarray, line: Callable[[int], str], assembly: str, ptype: str,
                   thread: Callable[[], np.ndarray], params: TypedParams = TypedParams(),
                   paths: np.ndarray | None = None, unit: Callable[[int], object] | None = None) -> np.ndarray:
    """Step 5's clean-up of the kept blocks *keep* (bool ``(B,)``) of an assembly
    (*assembly*: ``"article"`` or another type) on a page whose most probable type is
    *ptype*: a line kept twice on the other types' pages (:func:`drop_repeated`,
    ``drop_repeats``); on a page assembled or read as an article, a wrapped comment
    thread (*thread()*, bool ``(B,)``, called only then; ``drop_threads``) and an
    unwrapped one found by its dated author lines (:func:`dated_thread_blocks`,
    ``drop_dated_threads``; *paths* int ``(B,)`` are the blocks' tag path ids, None
    skips it; ``unit(b)`` the element holding block *b*); a story printed twice on an
    article or a document (:func:`story_copies`, ``copy_share``). *x* ``(B, F)`` are the
    block features, ``line(b)`` block *b*'s text. A new array. The training script
    (``benchmarks/train_blocks.py``) scores its assemblies through this function too."""
    if params.drop_repeats and assembly != "article" and ptype not in AUTHORED_TYPES:
        keep = drop_repeated(keep, x, line)
    story = assembly == "article" or ptype == "article"
    if params.drop_threads and story:
        keep = keep & ~thread()
    if params.drop_dated_threads and story and paths is not None:
        keep = keep & ~dated_thread_blocks(keep, x, line, paths, unit=unit)
    if params.copy_share < 1.0 and (assembly == "article" or ptype in AUTHORED_TYPES) and keep.any():
        keep = keep & ~story_copies(keep, x, line, params.copy_share)
    return keep


def dated_thread_blocks(keep: np.ndarray, x: np.ndarray, line: Callable[[int], str], paths: np.ndarray,
                        min_before_records: float = 1.0, unit: Callable[[int], object] | None = None) -> np.ndarray:
    """The kept blocks (bool ``(B,)``) of the first comment thread of dated, unwrapped
    records (:func:`~scrapy_cepr.core.comments.dated_thread`) in the blocks from the
    first of *keep* (bool ``(B,)``) to the page's end, kept or not: the classifier may
    drop a comment's author line and keep its text, or keep the first comment and drop
    the others. *x* ``(B, F)`` are the block features (their ``heading`` column),
    ``line(b)`` is block *b*'s text, *paths* int ``(B,)`` its tag path id, ``unit(b)``
    the element holding it (:meth:`~scrapy_cepr.core.page.Page.block_element`; None:
    each block its own).

    A thread follows a story at least *min_before_records* times as long as its mean
    record. The page type has read the page as an article, so the story's share of the
    text (CEPR-Article's ``cut_min_before``, which guards a forum's or a listing's dated
    records on any page) is not asked: a short story with a long thread is common."""
    out = np.zeros(keep.size, dtype=bool)
    kept = np.flatnonzero(keep)
    if not kept.size:
        return out
    seq = np.arange(kept[0], keep.size)
    span = dated_thread([line(b) for b in seq.tolist()], paths[seq].tolist(),
                        (x[seq, _HEADING] > 0).tolist(), min_before_records=min_before_records,
                        unit=None if unit is None else (lambda i: unit(int(seq[i]))))
    if span is not None:
        out[seq[span[0]:span[1]]] = True
    return out & keep


#: Rows × trees per prediction chunk of :func:`predict_blocks`.
PREDICT_CELLS = 1 << 16


def predict_blocks(model: TreeEnsemble, x: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """Step 4: the content probability of each block, float64 ``(B,)``, from its features
    *x* ``(B, F)`` and the page type probabilities *proba* ``(7,)``. The rows go to the
    model in chunks of ``PREDICT_CELLS / num_trees`` rows, so that the tree walk's
    temporary arrays (several per row and tree) stay bounded on a page of many blocks;
    the result is one call's, up to floating-point rounding of the sum over trees."""
    rows = max(1, PREDICT_CELLS // max(model.num_trees, 1))
    if x.shape[0] <= rows:
        return model.predict(with_page_type(x, proba))
    out = np.empty(x.shape[0], dtype=np.float64)
    for lo in range(0, x.shape[0], rows):
        out[lo:lo + rows] = model.predict(with_page_type(x[lo:lo + rows], proba))
    return out


def story_chrome(page: Page, p: np.ndarray, feats: BlockFeatures, regions: np.ndarray | None,
                 headline: int | None, assembly: str, params: TypedParams = TypedParams()) -> np.ndarray:
    """On a page whose most probable type is ``article``: the blocks that are no part of
    the one story whichever assembly ran, bool ``(B,)``. The headline's blocks
    (:func:`headline_blocks`; the title, not repeated in the body, unless ``headline``)
    and, when the page was assembled as the other types (``assembly != "article"``), the
    blocks after the article subtree (:func:`article_subtree`; comments and teasers follow
    the story, NCE's Assumption 2, Laber et al. 2009) with ``p < after_story_threshold``."""
    out = np.zeros(p.size, dtype=bool)
    if not params.headline:
        out |= headline_blocks(page, feats.starts, feats.ends, headline)
    if assembly != "article" and regions is not None and len(regions):
        _, hi = article_subtree(p, feats.x, regions, params)
        out[hi:] |= p[hi:] < params.after_story_threshold
    return out


def _page_type_proba(page: Page, forced: str | None) -> np.ndarray:
    if forced is not None:
        return np.array([t == forced for t in PAGE_TYPES], dtype=np.float64)
    from ..core.pagetype import page_type_proba

    proba = page_type_proba(page)
    if not proba:
        return np.array([t == "article" for t in PAGE_TYPES], dtype=np.float64)
    return np.array([proba.get(t, 0.0) for t in PAGE_TYPES], dtype=np.float64)


def run(page: Page, params: TypedParams) -> Extraction:
    """Extract the title and main content of *page* (module docstring, steps 1–5).

    :returns: an :class:`Extraction` whose ``nodes`` view has SETPR's H and H' per text
        node and the final keep mask; ``tau`` is SETPR's τ; ``params`` holds the
        parameters used and the page type the assembly used (``page_type``);
        ``page_types`` the page-type probabilities it used. A page without text nodes gives
        an empty body.
    """
    used = {f.name: getattr(params, f.name) for f in fields(params)}
    # The dialogs first: their XPath walks the attributes of the tree, which the parse has
    # just left in the CPU cache (after CEPR-Article's steps it costs half as much again).
    dialog = dialog_nodes(page)
    state, art, feats, regions = _analyse(page, params.article_params(), body=False,  # its body is not used
                                          dialog=dialog)
    used["alpha"] = art.params.get("alpha", params.alpha)
    nodes = art.nodes
    if feats is None or len(feats) == 0 or nodes is None:
        used["page_type"] = params.page_type
        return Extraction(title=art.title, body="", method="cepr-typed", params=used, url=page.url)
    proba = _page_type_proba(page, params.page_type)
    ptype = PAGE_TYPES[int(proba.argmax())]
    used["page_type"] = ptype
    p = predict_blocks(load_model(), feats.x, proba)
    keep_blocks, assembly = assemble_page(p, feats.x, ptype, float(proba[0]), regions, params)
    texts, starts, ends = page.texts, feats.starts, feats.ends

    def block_line(b: int) -> str:  # a display block's text (read only for the blocks asked)
        return " ".join(texts[starts[b]:ends[b]])

    def thread() -> np.ndarray:
        if state.table is None or not len(state.table):
            return np.zeros(len(feats), dtype=bool)
        return _thread_blocks(page, state, art, feats, params.article_params())

    keep_blocks = after_assembly(keep_blocks, feats.x, block_line, assembly, ptype, thread, params,
                                 page.path_ids[starts], lambda b: page.block_element(int(starts[b])))
    if ptype == "article":
        if params.headline:  # the headline's heading in the body, whatever its probability
            keep_blocks |= headline_blocks(page, feats.starts, feats.ends, state.headline)
        keep_blocks &= ~story_chrome(page, p, feats, regions, state.headline, assembly, params)
    keep = keep_blocks.repeat(feats.ends - feats.starts)
    result = text_node_extraction(
        page, method="cepr-typed", params=used, title=(art.title, nodes.title_index), h=nodes.h,
        h_smoothed=nodes.h_smoothed, keep=keep, tau=art.tau, punc_num=page.punct_counts,
    )
    # The probabilities the assembly used, so that Extraction.page_type (and the crawl's
    # worker) read them instead of classifying the page again.
    return replace(result, page_types={t: float(v) for t, v in zip(PAGE_TYPES, proba)})
