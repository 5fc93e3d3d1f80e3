"""CEPR-Article: SETPR's content score, restricted to the one article region below the
headline, with the region's comment thread and boilerplate removed.

The content score is CEPR-SETPR's smoothed histogram H' (Wu et al., CIKM 2013, Eqs. 2–6,
spec §1; :func:`.cepr.histogram`) with its threshold ``τ = α·σ(H')``, so ``CEPR_ALPHA``,
``CEPR_LAMBDA`` and ``CEPR_RADIUS`` act on it as on SETPR. What SETPR lacks is a notion
of *one* article: a global threshold over all text nodes keeps whatever block has the
densest tag paths (a comment thread, a footer with a legal notice, a link list). This
method adds the seed papers' answers, one step each (every step can be switched off by
a parameter, see ``benchmarks/ablation.py``):

1. **Body evidence** (CEPR). ETPR multiplies four per-path statistics, so H' spans
   orders of magnitude and a few outlier paths (a footer's one long legal paragraph)
   set σ. We read H' on a log scale relative to τ: a text node outside ``<a>`` is
   *body evidence* when ``log(1+H'_i) ≥ content_level · log(1+τ)``. With
   ``content_level = 1`` this is SETPR's own rule ``H'_i ≥ τ``. When σ(H') = 0 (one
   paragraph, or paragraphs with equal counts) τ = 0 and every node outside a link is
   evidence, so the body never empties.
2. **Headline anchor** (Wang et al., WWW 2009, Sec. 3.1.3, observation 1: "the top
   border of news bodies [is] inside the first screen … a news body is unlikely to be
   far away from the news title"). The title node comes from
   :func:`..core.title.pick_title` (when the title comes from the ``<head>``, the text
   node that shows it, :func:`displayed_headline`); the *anchor* is the first text node
   after it that is body evidence with at least ``anchor_min_chars`` characters (in
   Latin characters, :attr:`Page.latin_counts`: a Han, kana or Hangul character counts
   3, so that the threshold means one sentence in every script), or,
   when at most 3 lines of evidence (a dateline, a byline) lie above it, the first such
   node whose line ends a sentence (``anchor_sentence``). Without a displayed headline
   (or no evidence after it) the whole tree is searched.
3. **Body subtree** (Wang et al. 2009, Sec. 3.1: the *body subtree* T_BODY, the one DOM
   subtree that holds the whole news body; NCE's separator node, Laber et al. 2009,
   Phase 1, plays the same role). Among the ancestors of the anchor, the element u
   maximising ``G(u) − β·B(u)`` is the region, G and B being the characters of body
   evidence and of the other text in T_u (β = ``boilerplate_weight``). A larger
   ancestor wins only when the text it adds is mostly body evidence. The text of step
   8's comment records, which step 8 drops wherever it lies, is not in B
   (``region_free_records``): a thread below a short story does not keep the region
   from the story's container.
   *3b. Story path* (CEPR's premise, Wu et al. 2013: the paragraphs of one article
   share a tag path): the tag path with the most evidence characters in that region is
   the story's paragraph path; the region is chosen again along the same ancestors,
   evidence on other paths counting ``story_path_weight`` (0: nothing). A larger
   ancestor then wins only by adding more of the story's own paragraphs (the parts of
   a body split by ads), not a legal notice, a cookie banner or a teaser block with
   sentences of its own.
   *3c. Growth* (``grow``): the region is chosen a third time along the same ancestors,
   now with the text that steps 4, 5 and 8 drop wherever it lies (page chrome: ``nav``,
   ``aside``, ``footer``, link-dense lines, comment records, the text up to the
   headline) costing nothing, the other text off the story's path costing
   ``grow_cost`` per character, and the text on the story's paragraph path outside
   links counting as story whether or not it is evidence (``grow_path``). The larger
   ancestor is taken only when it holds at least ``1 + grow_min_gain`` times the
   story-path characters of the region: a multi-section article, a round-up or a
   documentation page split into sibling subtrees is kept whole, while an author box
   or a legal notice that shares the story's path does not move the region.
4. **Before the headline** (Wang et al. 2009: the body lies *below* the title): text
   nodes of the region up to the end of the headline (kicker, breadcrumbs, the
   headline itself) are dropped, unless the region holds more body evidence above the
   headline than below it (then the "headline" is a heading inside the story, such as
   a recipe card's).
5. **Boilerplate inside the region** (CEDST, Zhang et al. 2018, Sec. 3.3, the
   hyperlink evidence, Eq. 10, taken per display block as in :mod:`.cedst`; NCE's
   ``F_{u,α}`` link-density filter): a display block (line) whose share of characters
   inside ``<a>`` exceeds ``link_density`` (0.6, NCE's α as fitted in :mod:`.nce`) is
   dropped (related-link lists, "Read more »" lines, tag lists). Elements whose HTML semantics say "not the article" are dropped
   when they lie inside the region: ``nav``, ``aside``, ``footer``, ``menu``, ``form``
   and form controls (``button``, ``select``, ``option``, ``label``, ``input``,
   ``textarea``: a comment form's "Name (required)").
6. **Figures** (``captions=False``): ``figure`` and ``figcaption`` subtrees are dropped.
   The article-extraction-benchmark's gold bodies leave image captions out; set
   ``captions=True`` to keep them.
7. **Repeated blocks** (applied last, after step 8, so that NCE's comment phase still
   sees the blocks it compares): a display block of more than 20 characters whose exact text
   occurs twice or more on the page is a repeated caption, teaser or slide label, not
   a paragraph of the story, and is dropped. A story printed twice in the HTML (a print
   or AMP copy, a hidden duplicate) keeps one copy, the first kept one, of each of its
   lines: of every repeated line when the repeated lines hold at least
   ``duplicate_story`` of the kept characters, and of each repeated line that is body
   evidence on the story's paragraph path (``duplicate_path``).
8. **Comment thread** (NCE, Laber et al. 2009, Phase 2, :func:`.nce.comment_start`):
   the first connected component of 3 closely located, similar blocks of the region
   starts the comments; it and everything after it are dropped, unless the story's
   paragraph path goes on after it (``story_continues``: then the repeated blocks were
   a gallery or a list inside the story). *Comment records* go too: 3 or more
   consecutive sibling elements with the same tag and child-tag sequence that hold a
   link (:func:`record_lists`, the same assumption read on the DOM; read below
   single-child wrappers, a run of repeated block children counting once). A run that
   only this looser reading finds (a wrapped record, or records with different numbers
   of paragraphs) is a thread only where a thread sits: below the headline, after at
   least ``anchor_min_chars`` characters of body evidence, with at most
   ``comment_after_share`` of that much evidence on the same paragraph path after it
   (story sections and a page's cards are not). They are found
   first and are no body evidence for steps 2–3, so a comment thread denser than a
   short story cannot become the region; the run of records that holds the body's
   first sentence below the headline is the body's own layout and is kept.
   A run of records is no comment thread, and is released (the region is then chosen
   again from the same anchor), when its text is at least ``comment_evidence_share``
   body evidence on the story's paragraph path (the story's own sections), when it
   starts after the headline and the story's path holds at least
   ``comment_after_share`` of its evidence after it (comments follow the story's end,
   NCE's Assumption 2; they do not sit inside it), or, with ``comment_headed``, when
   its records hold a heading ``h1``–``h6`` (sections and cards introduce their text
   with one; a reader's comment does not). NCE's cut is refused when less than
   ``cut_min_before`` of the kept characters lie before it (a schedule or a table at
   the top of the body, not a thread after it). With ``comment_dated``, a thread whose
   comments no element wraps (author lines in ``dt``, texts in ``dd``; an author line
   and paragraphs, all siblings) is found by its dated author lines among the kept
   display blocks (:func:`~scrapy_cepr.core.comments.dated_thread`, refused as the cut
   is) and dropped.
9. **Orphan headings** (:func:`orphan_headings`): a short line (< ``orphan_chars``
   Latin characters, not ending a sentence) whose following text in the region was dropped
   up to the next kept line introduced boilerplate ("Related", "Share this:", "Most
   read") and goes with it.

Everything else inside the region is kept: short paragraphs, subheadings, lists and
quotes that belong to the story (the recall the global threshold loses). No rule is
keyed to a site, a language or class/id names; the signals are H', link density, tag
names' HTML semantics, DOM containment and the position relative to the headline.

What each step brings, on the article-extraction-benchmark and on WCXB's dev split,
is measured by ``benchmarks/ablation.py`` (docs: *Methods*, "How CEPR-Article works").
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass, fields

import numpy as np

from .comments import NCEParams, comment_start, dated_thread
from .page import BLOCK_TAGS, Page
from .params import check_int, check_real
from .region import DomTable
from .result import Extraction, text_node_extraction
from .setpr import PAPER_ALPHA, CEPRParams, histogram
from .text import DATE_RE, ends_sentence
from .threshold import std_threshold
from .title import pick_title

__all__ = ["ArticleParams", "ArticleState", "NON_ARTICLE_TAGS", "analyse", "body_evidence", "body_subtree", "run",
           "thread_records"]

logger = logging.getLogger(__name__)

#: Elements that HTML defines as not the main content of their section (navigation,
#: tangential content, section footer) or as form controls; dropped inside the region.
NON_ARTICLE_TAGS = frozenset(
    ["nav", "aside", "footer", "menu", "form", "button", "select", "option", "label", "input", "textarea"]
)
#: Image figures and their captions (dropped unless ``captions=True``).
FIGURE_TAGS = frozenset(["figure", "figcaption"])
_HEADINGS = frozenset(["h1", "h2", "h3", "h4", "h5", "h6"])
#: Repeated display blocks shorter than this (characters) are kept ("Share", "Reply").
_MIN_REPEATED_CHARS = 21
#: NCE's fitted parameters, for its comment phase (step 8); immutable.
_NCE_PARAMS = NCEParams()


@dataclass(frozen=True)
class ArticleParams:
    """Validated CEPR-Article parameters (see the module docstring for each step).

    SETPR's parameters, with the same names and meaning (Wu et al. 2013, Sec. 5.2):

    :param alpha: α ≥ 0 of ``τ = α·σ(H')``; None means SETPR's paper value 0.8.
    :param lambda_: λ ≥ 0 of the smoothing weight ``1/dist^λ``.
    :param radius: smoothing window radius r ≥ 0.
    :param edges: ``"keep"`` or ``"pad"`` (:func:`..core.smoothing.smooth`).

    Parameters of the article steps:

    :param content_level: in [0, 1], step 1: a node is body evidence when
        ``log(1+H') ≥ content_level·log(1+τ)`` (1 is SETPR's ``H' ≥ τ``).
    :param boilerplate_weight: β ≥ 0, step 3: cost of one non-evidence character in
        the region score ``G − β·B`` (characters in Latin characters,
        :attr:`Page.latin_counts`, as the anchor's and the short lines' lengths).
    :param anchor_min_chars: ≥ 1 characters of the anchor text node (step 2), in Latin
        characters (:attr:`Page.latin_counts`).
    :param link_density: in [0, 1], step 5: display blocks with a larger share of
        characters inside ``<a>`` are dropped (1 keeps them all).
    :param story_path_weight: in [0, 1], step 3b: weight of body evidence off the
        story's paragraph path when the region is chosen again (1: step 3b off).
    :param orphan_chars: ≥ 0, step 9: kept lines shorter than this (Latin characters) that do
        not end a sentence and only introduce dropped text are dropped (0: step off).
    :param story_continues: ≥ 0, step 8: a comment cut is refused when the story's
        paragraph path holds at least this share of its evidence characters after the
        cut (0: never refused).
    :param anchor_sentence: step 2 prefers an anchor whose line ends a sentence.
    :param anchor: step 2 on/off (off: the region is the best subtree of the page).
    :param region: step 3 on/off (off: the whole page is the region).
    :param pre_title: step 4 on/off.
    :param boilerplate: step 5 on/off.
    :param captions: keep ``figure``/``figcaption`` text (step 6 off).
    :param duplicates: step 7 on/off.
    :param comments: step 8 on/off.
    :param comment_records: step 8's comment records on/off.
    :param comment_cut: step 8's NCE cut on/off.
    :param comment_dated: step 8 drops a thread of dated, unwrapped records
        (:func:`~scrapy_cepr.core.comments.dated_thread`) on/off.
    :param comment_evidence: step 8 releases record runs with story evidence.
    :param comment_evidence_share: in [0, 1], share of a run's characters that must be
        evidence on the story's path for it to be released.
    :param comment_after_share: in [0, 1], a run after the headline is released when the
        story's path holds at least this share of its evidence characters after the run
        (0: off).
    :param comment_headed: step 8 releases runs whose records hold a heading.
    :param comment_wrapped: step 8's records are also read below single-child wrappers
        and with repeated block children counted once (:func:`record_lists`), the runs
        found only so kept where a thread sits; off: the strict reading only.
    :param cut_min_before: in [0, 1], NCE's cut is refused when less than this share of
        the kept characters lies before it (0: never refused).
    :param region_free_records: steps 3 and 3b leave the comment records' text (which
        step 8 drops) out of the region's cost B, as step 3c does; False counts it.
    :param grow: step 3c on/off.
    :param grow_path: step 3c counts text on the story's path as story, evidence or not.
    :param grow_weight: in [0, 1], step 3c's weight of evidence off the story's path.
    :param grow_cost: ≥ 0, step 3c's cost of one kept character that is not story.
    :param grow_min_gain: ≥ 0, step 3c grows only when the story-path characters grow
        by at least this share.
    :param duplicate_story: in [0, 1], step 7 keeps one copy of each repeated line when
        the repeated lines hold at least this share of the kept characters (1: off).
    :param duplicate_path: step 7 keeps one copy of a repeated line that is evidence on
        the story's path.
    :raises ValueError: naming the parameter and its allowed range.
    """

    alpha: float | None = None
    lambda_: float = 1.0
    radius: int = 1
    edges: str = "keep"
    content_level: float = 0.75
    boilerplate_weight: float = 0.5
    anchor_min_chars: int = 50
    link_density: float = 0.6
    anchor: bool = True
    region: bool = True
    pre_title: bool = True
    boilerplate: bool = True
    captions: bool = False
    duplicates: bool = True
    comments: bool = True
    story_continues: float = 0.25
    story_path_weight: float = 0.0
    orphan_chars: int = 60
    anchor_sentence: bool = True
    comment_records: bool = True
    comment_cut: bool = True
    comment_dated: bool = True
    comment_evidence: bool = True
    comment_evidence_share: float = 0.3
    comment_after_share: float = 0.1
    comment_headed: bool = True
    comment_wrapped: bool = True
    cut_min_before: float = 0.3
    region_free_records: bool = True
    grow: bool = True
    grow_path: bool = True
    duplicate_story: float = 0.7
    duplicate_path: bool = True
    grow_weight: float = 0.0
    grow_cost: float = 0.1
    grow_min_gain: float = 0.5

    def __post_init__(self) -> None:
        setpr = CEPRParams(alpha=self.alpha, lambda_=self.lambda_, radius=self.radius, edges=self.edges)
        for name in ("alpha", "lambda_", "radius"):  # SETPR's own checks and conversions
            object.__setattr__(self, name, getattr(setpr, name))
        if setpr.alpha is None:  # the paper's α, resolved once rather than per page
            setpr = CEPRParams(alpha=PAPER_ALPHA["setpr"], lambda_=setpr.lambda_, radius=setpr.radius,
                               edges=setpr.edges)
        object.__setattr__(self, "_setpr", setpr)
        object.__setattr__(self, "content_level", check_real("content_level", self.content_level, 0.0, 1.0))
        object.__setattr__(self, "boilerplate_weight", check_real("boilerplate_weight", self.boilerplate_weight))
        object.__setattr__(self, "anchor_min_chars", check_int("anchor_min_chars", self.anchor_min_chars, 1, 10**9))
        object.__setattr__(self, "link_density", check_real("link_density", self.link_density, 0.0, 1.0))
        object.__setattr__(self, "story_continues", check_real("story_continues", self.story_continues))
        object.__setattr__(self, "orphan_chars", check_int("orphan_chars", self.orphan_chars, 0, 10**9))
        object.__setattr__(
            self, "comment_evidence_share", check_real("comment_evidence_share", self.comment_evidence_share, 0.0, 1.0)
        )
        object.__setattr__(self, "duplicate_story", check_real("duplicate_story", self.duplicate_story, 0.0, 1.0))
        object.__setattr__(self, "grow_min_gain", check_real("grow_min_gain", self.grow_min_gain))
        object.__setattr__(self, "grow_cost", check_real("grow_cost", self.grow_cost))
        object.__setattr__(
            self, "comment_after_share", check_real("comment_after_share", self.comment_after_share, 0.0, 1.0)
        )
        object.__setattr__(self, "cut_min_before", check_real("cut_min_before", self.cut_min_before, 0.0, 1.0))
        object.__setattr__(self, "grow_weight", check_real("grow_weight", self.grow_weight, 0.0, 1.0))
        object.__setattr__(self, "story_path_weight", check_real("story_path_weight", self.story_path_weight, 0.0, 1.0))
        for name in (
            "anchor", "region", "pre_title", "boilerplate", "captions", "duplicates", "comments", "anchor_sentence",
            "comment_records", "comment_cut", "comment_evidence", "grow", "duplicate_path", "comment_headed",
            "grow_path", "comment_wrapped", "comment_dated", "region_free_records",
        ):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be a bool (True or False), got {value!r}")

    def setpr_params(self) -> CEPRParams:
        """SETPR's parameters of step 1, with the paper's α when ``alpha`` is None
        (validated once, with this object)."""
        setpr: CEPRParams = self.__dict__["_setpr"]
        return setpr


def body_evidence(h_smoothed: np.ndarray, tau: float, in_link: np.ndarray, level: float) -> np.ndarray:
    """Step 1: bool ``(N,)``, the text nodes outside ``<a>`` whose H' reaches the level
    on a log scale: ``log(1+H'_i) ≥ level·log(1+τ)``.

    τ = 0 (σ(H') = 0: a one-paragraph story) makes every node outside a link evidence.

    >>> body_evidence(np.array([0.0, 9.0, 99.0, 99.0]), 99.0, np.array([False, False, False, True]), 0.5).tolist()
    [False, True, True, False]
    >>> body_evidence(np.array([0.0, 0.0]), 0.0, np.array([False, True]), 0.75).tolist()
    [True, False]
    """
    h = np.maximum(np.asarray(h_smoothed, dtype=np.float64), 0.0)
    ok = np.log1p(h) >= level * np.log1p(max(tau, 0.0)) - 1e-12
    return ok & ~np.asarray(in_link, dtype=bool)


def displayed_headline(page: Page, title: str | None) -> int | None:
    """The text node showing *title* when the title came from the ``<head>`` (no ``h1``–``h3``
    matched it): the first text node outside links equal to it, ignoring case and
    spaces, else None. A headline in a styled ``<div>`` is still the anchor of step 2.

    >>> page = Page.from_html("<html><body><div>Storm hits coast</div><p>Text.</p></body></html>")
    >>> displayed_headline(page, "storm hits  coast"), displayed_headline(page, "Other")
    (0, None)
    """
    if not title:
        return None
    wanted = " ".join(title.split()).casefold()
    size = len(wanted)
    chars = page.char_counts
    for i in ((chars == size) & ~page.in_link).nonzero()[0].tolist():
        if page.texts[i].casefold() == wanted:
            return int(i)
    return None


def _sentence_anchor(page: Page, candidates: np.ndarray, after: int) -> int | None:
    """The first of the *candidates* (bool ``(N,)``) after index *after* whose display
    block (line) ends a sentence (:func:`~scrapy_cepr.core.text.ends_sentence`: a
    sentence mark of any script, closing quotes and brackets aside); None if there is
    none.

    >>> page = Page.from_html("<p>Updated: 11:02 today</p><p>He <a href=#>left</a> the town.</p>")
    >>> _sentence_anchor(page, np.array([True, True, False, True]), -1)
    1
    """
    blocks = page.blocks
    texts = page.texts
    n = len(texts)
    for i in (candidates[after + 1 :].nonzero()[0] + after + 1).tolist():
        last = i
        while last + 1 < n and blocks[last + 1] == blocks[i]:
            last += 1
        if ends_sentence(texts[last]):
            return i
    return None


def _anchor_node(evidence: np.ndarray, chars: np.ndarray, after: int, min_chars: int) -> int | None:
    """Step 2: the first evidence node after index *after* with ≥ *min_chars* characters."""
    found = (evidence[after + 1 :] & (chars[after + 1 :] >= min_chars)).nonzero()[0]
    return int(found[0]) + after + 1 if found.size else None


def _region(page: Page, table: DomTable, params: ArticleParams, headline: int | None, evidence: np.ndarray,
            in_records: np.ndarray, chars: np.ndarray, dropped: np.ndarray | None = None,
            anchor: int | None = None) -> tuple[int, np.ndarray, int | None, int | None]:
    """Steps 2–3c: ``(u, evidence, story, start)``, the region's element (0: the whole
    page when step 3 is off), the body evidence used (every text outside links and
    records when none lies below the headline), the story's paragraph path id and the
    anchor text node (None without an anchor). *anchor*: a text node to use as the
    anchor instead of step 2's."""
    if not (params.region and len(table)):
        return 0, evidence, None, None
    start = anchor
    if start is None and params.anchor and headline is not None:
        # A sentence (a paragraph of the story), not a dateline or a byline.
        start = _anchor_node(evidence, page.latin_counts, headline, params.anchor_min_chars)
        if params.anchor_sentence and start is not None:
            # Prefer a sentence (a paragraph of the story) to a dateline or byline
            # line, if no more than 3 lines of evidence lie above it.
            sentence = _sentence_anchor(page, evidence & (page.latin_counts >= params.anchor_min_chars), headline)
            if sentence is not None:
                lines = _distinct_sorted(page.blocks[headline + 1 : sentence][evidence[headline + 1 : sentence]])
                if lines <= 3:
                    start = sentence
        if start is None:
            # No evidence below the headline (H' is dominated by other blocks): every
            # text outside links and comment records counts, as when σ(H') = 0.
            plain = ~page.in_link & ~in_records
            start = _anchor_node(plain, page.latin_counts, headline, params.anchor_min_chars)
            if start is not None:
                evidence = plain
    good = np.where(evidence, chars, 0.0)
    # Step 8 drops the comment records' text wherever it lies: it costs the region nothing.
    bad = np.where(in_records, 0.0, chars - good) if params.region_free_records else chars - good
    u = body_subtree(table, good, bad, params.boilerplate_weight, start)
    story = None
    if start is not None:
        lo, hi = table.text_range(u)
        story = story_path(page.path_ids[lo : hi + 1], good[lo : hi + 1], len(page.path_names))
        if params.story_path_weight < 1.0:
            # Step 3b: again, with evidence off the story's paragraph path discounted.
            weighted = np.where(page.path_ids == story, good, params.story_path_weight * good)
            u = body_subtree(table, weighted, bad, params.boilerplate_weight, start)
        if dropped is not None:
            # Step 3c: again, the cost counting only the text the later steps keep.
            on_path = page.path_ids == story
            if params.grow_path:
                # The story's paragraph path is the story (CEPR's premise), evidence or not.
                path_good = np.where(on_path & ~page.in_link & ~in_records & ~dropped, chars, 0.0)
                good = np.maximum(good, path_good)
            weighted = np.where(on_path, good, params.grow_weight * good)
            grown = body_subtree(table, weighted, np.where(dropped, 0.0, chars - good), params.grow_cost, start)
            if grown != u and grown <= u < table.end[grown]:
                # Only when the story grows by a share of itself (a section beside it),
                # not by a box or a paragraph that shares its path.
                lo, hi = table.text_range(grown)
                gain = float(weighted[lo : hi + 1].sum())
                lo, hi = table.text_range(u)
                if gain >= (1.0 + params.grow_min_gain) * float(weighted[lo : hi + 1].sum()):
                    u = grown
    return u, evidence, story, start


def _tag_depths(page: Page, *tag_sets: frozenset[str]) -> list[np.ndarray]:
    """Per set of *tag_sets*, int64 ``(P,)`` over the page's tag paths: the depth
    (``html`` = 0) of the deepest element with a tag in the set on the path, -1 if there
    is none. A text node lies inside such an element strictly below an element of depth
    d exactly when its path's value exceeds d; read off the paths (a few hundred per
    page) instead of the tree, for all the sets in one pass.

    >>> page = Page.from_html("<html><body><nav><p>a</p></nav><p>b</p></body></html>")
    >>> [d[page.path_ids].tolist() for d in _tag_depths(page, frozenset(["nav"]), frozenset(["p"]))]
    [[2, -1], [3, 2]]
    """
    n = len(page.path_names)
    out = np.full((len(tag_sets), n), -1, dtype=np.int64)
    hits = [np.fromiter(map(tags.__contains__, page.path_names), bool, n) for tags in tag_sets if tags and n]
    if not any(hit.any() for hit in hits):
        return list(out)
    depth = np.fromiter(map(len, page.path_codes), np.int64, n) - 1
    row = 0
    for r, tags in enumerate(tag_sets):
        if tags:
            out[r, hits[row]] = depth[hits[row]]
            row += 1
    # Pointer jumping up the path tree: after k rounds each path has seen its 2^k
    # nearest ancestors.
    anc = np.asarray(page.path_parents, dtype=np.int64)
    anc = np.where(anc < 0, np.arange(n), anc)
    for _ in range(int(depth.max()).bit_length() + 1):
        out = np.maximum(out, out[:, anc])
        anc = anc[anc]
    return list(out)


def _story_records(table: DomTable, records: np.ndarray, on_story: np.ndarray, evidence: np.ndarray,
                   chars: np.ndarray, share: float, after_share: float = 0.0, after: int = -1,
                   headed: bool = False) -> np.ndarray:
    """The runs of comment records (bool ``(E,)`` *records*) whose text is at least
    *share* body evidence on the story's paragraph path (*on_story*, bool ``(N,)``):
    bool ``(E,)``, the members of those runs. A run is a maximal sequence of flagged
    consecutive siblings; a text node belongs to the run whose range ``[first, end)``
    of elements holds its owner.

    With *after_share* > 0, a run that starts after text node *after* (the headline) is
    released too when the story's path holds, after the run, at least *after_share* of
    the story's evidence characters outside the runs: a comment thread follows the
    story's end (NCE's Assumption 2, Laber et al. 2009), it does not sit inside it.
    """
    idx = records.nonzero()[0]
    out = np.zeros(records.size, dtype=bool)
    if idx.size == 0:
        return out
    parent, end = table.parent, table.end
    new_run = np.ones(idx.size, dtype=bool)
    new_run[1:] = ~((parent[idx[1:]] == parent[idx[:-1]]) & (idx[1:] == end[idx[:-1]]))
    run_of = new_run.cumsum() - 1
    firsts = idx[new_run]
    lasts = np.append(idx[new_run.nonzero()[0][1:] - 1], idx[-1])
    stops = end[lasts]
    owner = table.owner
    k = firsts.searchsorted(owner, side="right") - 1
    inside = (k >= 0) & (owner < stops[np.maximum(k, 0)])
    kk = k[inside]
    total = np.bincount(kk, weights=chars[inside], minlength=firsts.size)
    story = np.bincount(kk, weights=(chars * (evidence & on_story))[inside], minlength=firsts.size)
    released = (story >= share * total) & (story > 0)
    if after_share > 0 or headed:
        nodes = inside.nonzero()[0]
        first = np.full(firsts.size, owner.size, dtype=np.int64)
        np.minimum.at(first, kk, nodes)
        later_than_headline = first > after
    if after_share > 0:
        last = np.full(firsts.size, -1, dtype=np.int64)
        np.maximum.at(last, kk, nodes)
        outside = np.where(inside, 0.0, chars * (evidence & on_story))
        cum = np.concatenate(([0.0], outside.cumsum()))
        story_total = cum[-1]
        later = story_total - cum[np.minimum(last + 1, owner.size)]
        released |= later_than_headline & (last >= 0) & (later >= after_share * story_total) & (story_total > 0)
    if headed:
        # Records that hold a heading (h1–h6; the run's first record is read) are
        # sections or cards of the page (each introduces its own text), not the
        # records of a reader's thread.
        for r in (later_than_headline & ~released).nonzero()[0].tolist():
            if next(table.elements[int(firsts[r])].iter(*_HEADINGS), None) is not None:
                released[r] = True
    out[idx] = released[run_of]
    return out


def body_subtree(table: DomTable, good: np.ndarray, bad: np.ndarray, beta: float, start: int | None) -> int:
    """Step 3: the body subtree, an element index of *table*.

    :param good: float ``(N,)`` characters of body evidence per text node (0 elsewhere).
    :param bad: float ``(N,)`` the other characters per text node.
    :param beta: β, cost of a non-evidence character.
    :param start: the anchor text node; the region is the ancestor of its owner element
        with the largest ``G − β·B``. None: the best element of the whole tree.
    """
    n = len(table)
    if start is None:
        g = table.subtree_sum(np.bincount(table.owner, weights=good, minlength=n))
        b = table.subtree_sum(np.bincount(table.owner, weights=bad, minlength=n))
        return int((g - beta * b).argmax())
    # Only the ancestors of the anchor's owner are scored: the same prefix-sum
    # differences as DomTable.subtree_sum, read at the chain alone.
    chain = []
    e = int(table.owner[start])
    parent = table.parent
    while e >= 0:
        chain.append(e)
        e = int(parent[e])
    chain_arr = np.array(chain, dtype=np.int64)
    # T_e's text nodes are one contiguous range (the text of e, its descendants and
    # their tails): prefix sums over the text nodes, read at the chain's ranges.
    lo = table.first_text[chain_arr]
    hi = table.last_text[chain_arr] + 1
    g = np.concatenate(([0.0], good.cumsum(dtype=np.float64)))
    b = np.concatenate(([0.0], bad.cumsum(dtype=np.float64)))
    score = (g[hi] - g[lo]) - beta * (b[hi] - b[lo])
    return int(chain_arr[score.argmax()])


def story_path(path_ids: np.ndarray, good: np.ndarray, n_paths: int) -> int:
    """The story's paragraph path: the tag path id holding the most characters of body
    evidence among the given text nodes (CEPR's premise, Wu et al. 2013, Sec. 3: the
    paragraphs of one article share a tag path).

    >>> story_path(np.array([0, 1, 1, 2]), np.array([50.0, 300.0, 200.0, 400.0]), 3)
    1
    """
    return int(np.bincount(path_ids, weights=good, minlength=n_paths).argmax())


#: The block children of a comment record that its author writes (HTML's grouping content
#: for text: paragraphs, quotations, lists, preformatted text, figures): a comment holds
#: any number of them in any order, so the loose reading of :func:`record_lists` reads a
#: run of them as one child.
AUTHORED_TAGS = frozenset({"p", "blockquote", "pre", "ul", "ol", "dl", "figure"})


def record_lists(table: DomTable, min_records: int = 3, keep_runs: tuple[int, ...] = (), *,
                 loose: bool = True) -> np.ndarray:
    """Comment records, bool ``(E,)``: elements that are one of at least *min_records*
    consecutive siblings with the same tag and the same sequence of child tags (at least
    two children, one of them or a descendant a link), the repeated structure of a
    comment thread (NCE's Assumption 2, Laber et al. 2009: comments repeat a pattern),
    read on the DOM instead of the words. The sequence is read below single-child
    wrappers (``li > div > [author, p, p, reply]``: the structure is the wrapped
    element's), and a block-level child with the same tag as the one before it does not
    extend it (a comment has as many paragraphs as its author wrote; paragraphs,
    quotations, lists, code and figures, :data:`AUTHORED_TAGS`, read as one tag, since
    an author writes them in any order); inline children
    all count (*loose* False: neither, the records' own children, all of them).
    Article paragraphs are leaves or hold inline text only, so they never form records. *keep_runs*: elements (owners of the
    body's first text nodes); the run of records among the ancestors of each is not
    flagged, since comments follow the body (NCE's Assumption 2), they do not start it.

    Runs are found first on the numbers of children alone (numpy over all elements);
    only the members of runs long enough, and their children, have their tags read
    (:meth:`DomTable.tag_codes`).
    """
    record, run, _ = _record_runs(table, min_records, loose=loose)
    return _release_runs(table, record, run, keep_runs) if keep_runs else record


def _record_runs(table: DomTable, min_records: int = 3, *, loose: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`record_lists` without *keep_runs*: ``(record, run, relaxed)``, bool, int64
    and bool ``(E,)``: the records, the run of sibling records each element belongs to,
    and the records of the runs that only reading below single-child wrappers or
    collapsing repeated block children made records (:func:`_unplaced_runs` decides
    them); with *loose* False, the strict reading only (no relaxed runs)."""
    n = len(table)
    out = np.zeros(n, dtype=bool)
    if n == 0:
        return out, np.zeros(n, dtype=np.int64), out
    parent = table.parent
    # A record's structure is read below its single-child wrappers (``li > div.body``,
    # ``li > article``): in pre-order an element's first child follows it, so the first
    # element at or after e with other than one child is what e wraps.
    not_single = (table.n_children != 1).nonzero()[0] if loose else np.zeros(0, dtype=np.int64)
    inner = not_single[np.minimum(np.searchsorted(not_single, np.arange(n)), not_single.size - 1)] \
        if not_single.size else np.arange(n)
    kids = table.n_children[inner]
    candidate = (kids >= 2) & (table.link_chars > 0)
    if np.count_nonzero(candidate) < min_records:
        return out, np.zeros(n, dtype=np.int64), out
    # Siblings, grouped by parent in document order.
    order = np.argsort(parent, kind="stable")
    par = parent[order]
    first_of_group = np.concatenate(([True], par[1:] != par[:-1]))
    # In sorted order, element k continues the run of k-1 when both are candidates,
    # siblings, and have the same number of children (then also the same tag and
    # child-tag sequence, below).
    a, b = order[1:], order[:-1]
    # (Different numbers of children can only read the same once repeated block
    # children count once, which takes at least three: [author, p, p, reply].)
    same_kids = kids[a] == kids[b]
    link = (~first_of_group[1:]) & candidate[a] & candidate[b] & \
        (same_kids | ((kids[a] >= 3) & (kids[b] >= 3)) if loose else same_kids)
    member = candidate & (_run_sizes(order, link, candidate)[0] >= min_records)
    if not member.any():
        return out, np.zeros(n, dtype=np.int64), out
    # The sequence of child tags of the members' inner elements, hashed:
    # Σ (code(tag)+1)·B^rank (mod 2^64) per parent, rank being the child's position
    # among its siblings.
    wrapped = np.zeros(n, dtype=bool)
    wrapped[inner[member]] = True
    child = (wrapped[np.maximum(parent, 0)] & (parent >= 0)).nonzero()[0]
    compared = member | wrapped
    compared[child] = True
    tag_code = table.tag_codes(compared)
    # A record holds as many paragraphs as its author wrote: a block-level child with the
    # same tag as the sibling before it adds nothing to the sequence ([div, p, p, div]
    # reads [div, p, div]); inline children (a paragraph's links) all count.
    child = child[np.argsort(parent[child], kind="stable")]
    same_parent = np.concatenate(([False], parent[child[1:]] == parent[child[:-1]]))
    seq_code = tag_code
    repeat = np.zeros(child.size, dtype=bool)
    if loose:
        child_tags = [table.elements[c].tag for c in child.tolist()]
        # ... and writes paragraphs, quotations, lists and code in any order: those
        # children read as one kind ([div, p, blockquote, p, div] reads [div, p, div]).
        authored = np.fromiter((tag in AUTHORED_TAGS for tag in child_tags), bool, child.size)
        if authored.any():
            seq_code = tag_code.copy()
            seq_code[child[authored]] = -2
        block = np.fromiter((tag in BLOCK_TAGS for tag in child_tags), bool, child.size)
        repeat = same_parent & np.concatenate(([False], seq_code[child[1:]] == seq_code[child[:-1]])) & block
    full_hash = child_hash = _sequence_hash(n, parent, child, same_parent, tag_code)
    if repeat.any():
        child, same_parent = child[~repeat], same_parent[~repeat]
        same_parent[1:] &= parent[child[1:]] == parent[child[:-1]]
        child_hash = _sequence_hash(n, parent, child, same_parent, seq_code)
    ia, ib = inner[a], inner[b]
    link &= member[a] & member[b] & (tag_code[a] == tag_code[b]) & (tag_code[ia] == tag_code[ib]) \
        & (child_hash[ia] == child_hash[ib])
    size, run = _run_sizes(order, link, candidate)
    record = candidate & (size >= min_records)
    # The runs that the strict reading (the records themselves, every child) does not
    # find: one of their links joins a member read below a wrapper, or two members
    # whose full child sequences differ.
    loose_link = link & ((ia != a) | (ib != b) | (full_hash[a] != full_hash[b]))
    relaxed = out
    if loose_link.any():
        relaxed = record & np.isin(run, run[a[loose_link]])
    return record, run, relaxed


def _sequence_hash(n: int, parent: np.ndarray, child: np.ndarray, same_parent: np.ndarray,
                   tag_code: np.ndarray) -> np.ndarray:
    """Per element, a hash of the tag sequence of its children among *child* (grouped by
    parent in document order, *same_parent* False at each group's first):
    Σ (code(tag)+1)·B^rank (mod 2^64), uint64 ``(n,)``."""
    pos = np.arange(child.size, dtype=np.int64)
    rank = pos - np.maximum.accumulate(np.where(same_parent, 0, pos))
    # uint64 array arithmetic wraps around silently (numpy warns on scalars only).
    weight = (tag_code[child] + 1).astype(np.uint64) * np.power(np.uint64(1_000_003), rank.astype(np.uint64))
    out = np.zeros(n, dtype=np.uint64)
    np.add.at(out, parent[child], weight)
    return out


def thread_records(table: DomTable, page: Page, evidence: np.ndarray, headline: int | None,
                   params: ArticleParams) -> np.ndarray:
    """The comment records that only the looser reading of :func:`record_lists` finds
    (below single-child wrappers, repeated block children counted once) and that sit where
    a thread sits (step 8, :func:`_unplaced_runs`), without, when
    ``params.comment_headed``, the runs whose records hold a heading or are long and
    undated (:func:`_long_undated`): bool ``(E,)``. *evidence* is step 1's body evidence
    (``(N,)``), *headline* the headline's text node or None."""
    record, run, relaxed = _record_runs(table)
    if not relaxed.any():
        return relaxed
    thread = relaxed & ~_unplaced_runs(table, record, run, relaxed, evidence, page, headline,
                                       params.anchor_min_chars, params.comment_after_share)
    if params.comment_headed:
        # As in step 8 (:func:`_story_records`): records that hold a heading (h1–h6) are
        # the sections or cards of the page, each introducing its own text, not the
        # records of a reader's thread; on a page without HTML5's sectioning elements a
        # story's sections are such wrapped records. So are long records that carry no
        # comment's date line, whatever element shows their subheading.
        for r in np.unique(run[thread]).tolist():
            members = (thread & (run == r)).nonzero()[0]
            if any(next(table.elements[int(e)].iter(*_HEADINGS), None) is not None for e in members.tolist()) \
                    or _long_undated(table, page, members):
                thread[members] = False
    return thread


#: :func:`thread_records`: a run of records averaging at least this many characters
#: (:attr:`~.page.Page.latin_counts`, the same in every script; about 120 English
#: words) ...
SECTION_MIN_CHARS = 700
#: ... of which fewer than half show a date or a clock time in their first this many
#: text nodes (a comment's author and date line) is a story's sections, not a thread.
RECORD_HEAD_NODES = 8
_CLOCK_RE = re.compile(r"(?<!\d)\d{1,2}:\d{2}(?!\d)")


def _long_undated(table: DomTable, page: Page, members: np.ndarray) -> bool:
    """Whether the records *members* (element indices, one run) read as a story's
    sections: they average at least :data:`SECTION_MIN_CHARS` characters, and fewer than
    half of them show a date (:data:`~.text.DATE_RE`) or a clock time in their first
    :data:`RECORD_HEAD_NODES` text nodes. A reader's comment opens with its author and
    date; a story's section opens with its subheading, which a page without heading
    elements writes in a ``div``, a ``<b>`` or a ``<font>``."""
    chars = 0
    dated = 0
    for e in members.tolist():
        first, last = table.text_range(int(e))
        if first > last:
            continue
        chars += int(page.latin_counts[first : last + 1].sum())
        head = " ".join(page.texts[first : min(last + 1, first + RECORD_HEAD_NODES)])
        dated += bool(DATE_RE.search(head) or _CLOCK_RE.search(head))
    return chars >= SECTION_MIN_CHARS * members.size and 2 * dated < members.size


def _unplaced_runs(table: DomTable, record: np.ndarray, run: np.ndarray, relaxed: np.ndarray, evidence: np.ndarray,
                   page: Page, headline: int | None, min_before: int, after_share: float) -> np.ndarray:
    """The *relaxed* runs of records (:func:`_record_runs`) that do not sit where a
    comment thread does, bool ``(E,)``: a thread follows the story and ends it (NCE's
    Assumption 2). A relaxed run stays a run of comment records only below a headline,
    with at least *min_before* characters of body evidence outside records between the
    headline and the element that holds the run (a thread's other comments are inside
    it), and with at most *after_share* times as many characters of evidence on that
    story's paragraph path (the path with the most of them) after it: the sections of a
    story, which the story goes on after, and a page's cards, with no story above them,
    are no thread."""
    out = np.zeros(len(table), dtype=bool)
    members = relaxed.nonzero()[0]
    if headline is None:
        out[members] = True
        return out
    chars = page.latin_counts.astype(np.float64)  # *min_before* means the same in every script
    story = evidence & ~table.covered(record)[table.owner]
    paths = page.path_ids
    for r in np.unique(run[members]).tolist():
        m = members[run[members] == r]
        holder = int(table.parent[m[0]])
        first, last = table.text_range(holder)
        before = story.copy()
        before[: headline + 1] = False
        before[first:] = False
        chars_before = float(chars[before].sum())
        if chars_before < min_before:
            out[m] = True
            continue
        path = int(np.bincount(paths[before], weights=chars[before]).argmax())
        after = story[last + 1 :] & (paths[last + 1 :] == path)
        if float(chars[last + 1 :][after].sum()) > after_share * chars_before:
            out[m] = True
    return out


def _release_runs(table: DomTable, record: np.ndarray, run: np.ndarray, keep_runs: tuple[int, ...]) -> np.ndarray:
    """*record* without the runs holding the elements *keep_runs* (:func:`record_lists`),
    a new array."""
    parent = table.parent
    record = record.copy()
    for e in keep_runs:
        # A run that holds the start of the body is the body's own layout.
        while e >= 0 and not record[e]:
            e = int(parent[e])
        if e >= 0:
            record &= run != run[e]
    return record


def _run_sizes(order: np.ndarray, link: np.ndarray, counted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(size, run)``, int64 ``(E,)`` each: the run of every element, runs being the
    maximal sequences of *order* whose consecutive entries are joined by *link*
    (bool ``(E−1,)``), and the number of *counted* elements in the element's run.

    >>> _run_sizes(np.array([0, 1, 2, 3]), np.array([True, False, True]), np.ones(4, bool))[0].tolist()
    [2, 2, 2, 2]
    """
    run_sorted = np.concatenate(([True], ~link)).cumsum()
    run = np.empty(order.size, dtype=np.int64)
    run[order] = run_sorted
    size = np.bincount(run[counted], minlength=int(run_sorted[-1]) + 1)
    return size[run], run


def _story_continues(page: Page, evidence: np.ndarray, cut: int, share: float) -> bool:
    """Whether the story's paragraph path goes on after a comment cut at node *cut*.

    The story's paragraph path is the tag path holding the most characters of kept body
    evidence before the cut. Comments follow the body (NCE's Assumption 2) and sit on
    their own paths; when the paragraph path still holds at least *share* times as many
    evidence characters after the cut as before it, the repeated blocks were a gallery
    ("Image 1 of 5") or a list inside the story, and the cut is refused.
    """
    idx = evidence.nonzero()[0]
    if share <= 0 or idx.size == 0:
        return False
    before = idx[idx < cut]
    if before.size == 0:
        return False
    chars = page.latin_counts
    paths = page.path_ids
    per_path = np.bincount(paths[before], weights=chars[before])
    story = int(per_path.argmax())
    after = idx[(idx >= cut) & (paths[idx] == story)]
    return float(chars[after].sum()) >= share * float(per_path[story])




def orphan_headings(page: Page, region: np.ndarray, keep: np.ndarray, starts: np.ndarray, ends: np.ndarray, max_chars: int) -> np.ndarray:
    """Short kept lines that only introduce dropped text: bool ``(N,)``.

    A heading belongs to the section it introduces ("Related", "Share this:", "Most
    read"). A kept display block of fewer than *max_chars* characters that does not end
    a sentence, and after which the region's next text up to the next kept block (or
    the region's end) was dropped, lost its section: it is dropped too. A subheading
    followed by kept paragraphs stays.
    """
    n_blocks = starts.size
    chars = page.latin_counts.astype(np.float64)  # the same length in every script
    kept = np.add.reduceat(keep.astype(np.int64), starts) > 0
    size = np.add.reduceat(chars, starts)
    dropped = np.add.reduceat(chars * (region & ~keep), starts)
    out = np.zeros(keep.size, dtype=bool)
    kept_idx = kept.nonzero()[0]
    if kept_idx.size == 0:
        return out
    cum = np.concatenate(([0.0], dropped.cumsum()))
    nxt = np.append(kept_idx[1:], n_blocks)
    after = cum[nxt] - cum[kept_idx + 1]
    texts = page.texts
    for b, a in zip(kept_idx.tolist(), after.tolist()):
        if a <= 0 or size[b] >= max_chars:
            continue
        if ends_sentence(texts[int(ends[b]) - 1]):
            continue
        out[starts[b] : ends[b]] = True
    return out & keep


def repeated_lines(texts: list[str], char_counts: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Step 7: bool ``(B,)`` over the display blocks ``[starts[b], ends[b])`` of the
    text nodes: the block's line (its text nodes joined by a space) has at least 21
    characters and occurs twice or more on the page.

    Two equal lines have equal lengths, which numpy reads off the per-node character
    counts (*char_counts*, ``(N,)``), so only the lines whose length occurs twice among
    the long ones are built and compared.

    >>> texts = ["Photo: the harbour at dawn", "Story text.", "Photo: the harbour at dawn", "Short", "Short"]
    >>> chars = np.array([len(t) for t in texts])
    >>> repeated_lines(texts, chars, np.arange(5), np.arange(1, 6)).tolist()
    [True, False, True, False, False]
    """
    out = np.zeros(starts.size, dtype=bool)
    if starts.size == 0:
        return out
    length = np.add.reduceat(char_counts, starts) + (ends - starts - 1)
    long = (length >= _MIN_REPEATED_CHARS).nonzero()[0]
    if long.size < 2:
        return out
    # The long lines whose length another long line shares (sorted lengths, neighbours).
    order = np.argsort(length[long], kind="stable")
    by_length = length[long][order]
    same = by_length[1:] == by_length[:-1]
    shared = np.zeros(long.size, dtype=bool)
    shared[1:] = same
    shared[:-1] |= same
    maybe = np.sort(long[order[shared]])
    if maybe.size == 0:
        return out
    lines = [" ".join(texts[a:b]) for a, b in zip(starts[maybe].tolist(), ends[maybe].tolist())]
    seen = Counter(lines)
    out[maybe] = np.fromiter((seen[line] > 1 for line in lines), dtype=bool, count=len(lines))
    return out


def first_copies(texts: list[str], starts: np.ndarray, ends: np.ndarray, which: np.ndarray) -> np.ndarray:
    """bool ``(B,)``: among the display blocks flagged in *which* (bool ``(B,)``), the
    first one of each distinct line (text nodes joined by a space).

    >>> first_copies(["a b", "c", "a b", "c"], np.arange(4), np.arange(1, 5), np.array([True, True, True, False])).tolist()
    [True, True, False, False]
    """
    out = np.zeros(starts.size, dtype=bool)
    seen: set[str] = set()
    for b in which.nonzero()[0].tolist():
        line = " ".join(texts[starts[b] : ends[b]])
        if line not in seen:
            seen.add(line)
            out[b] = True
    return out


def _distinct_sorted(values: np.ndarray) -> int:
    """Number of distinct values of a sorted array (``np.unique(values).size``).

    >>> _distinct_sorted(np.array([3, 3, 4, 7, 7])), _distinct_sorted(np.array([], dtype=int))
    (3, 0)
    """
    return int(values.size and 1 + np.count_nonzero(values[1:] != values[:-1]))


def _block_ranges(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = blocks.size
    starts = np.concatenate(([True], blocks[1:] != blocks[:-1])).nonzero()[0]
    ends = np.append(starts[1:], n)
    return starts, ends


@dataclass(frozen=True)
class ArticleState:
    """What :func:`analyse` computed on the way to CEPR-Article's extraction, for methods
    that build on it (CEPR-Typed) without computing it again.

    :param extraction: the :class:`Extraction` of :func:`run`.
    :param table: the page's :class:`DomTable` (None for a page without text nodes).
    :param starts, ends: int64 ``(B,)``, the text-node ranges of the display blocks.
    :param records: bool ``(E,)``, :func:`record_lists` of the table without
        *keep_runs* (the repeated sibling records of the whole page), or None when the
        comment-record step is off.
    :param repeated: bool ``(B,)``, :func:`repeated_lines` of the blocks (before one
        copy of a story is kept), or None when the duplicate step is off.
    :param headline: the displayed headline's text node (step 4), or None.
    """

    extraction: Extraction
    table: DomTable | None = None
    starts: np.ndarray | None = None
    ends: np.ndarray | None = None
    records: np.ndarray | None = None
    repeated: np.ndarray | None = None
    headline: int | None = None


def run(page: Page, params: ArticleParams) -> Extraction:
    """Extract the title and the article body of *page* (module docstring, steps 1–9).

    :returns: an :class:`Extraction` whose ``nodes`` view has SETPR's H and H' per text
        node and the final keep mask; ``tau`` is SETPR's τ. A page without text nodes
        gives an empty body.
    """
    return analyse(page, params).extraction


@dataclass
class _Work:
    """The small mutable state that :func:`analyse`'s steps read and update, one page.

    Arrays over the text nodes are ``(N,)``, over the elements of *table* ``(E,)``, over
    the display blocks ``(B,)``, over the tag paths ``(P,)``.
    """

    page: Page
    params: ArticleParams
    #: The text node of the displayed headline, or None.
    headline: int | None
    #: float64 ``(N,)``, characters per text node.
    chars: np.ndarray
    table: DomTable
    #: int64 ``(B,)``, the text-node ranges ``[starts[b], ends[b])`` of the display blocks.
    starts: np.ndarray
    ends: np.ndarray
    #: bool ``(N,)``, step 1's body evidence, before comment records are taken out.
    evidence_all: np.ndarray
    #: bool ``(N,)``, the body evidence steps 2–9 use (step 1 without comment records,
    #: or step 2's fallback).
    evidence: np.ndarray
    #: bool ``(E,)``, step 8's comment records, and their text nodes, bool ``(N,)``.
    records: np.ndarray
    in_records: np.ndarray
    #: bool ``(N,)``, the region's text nodes (step 3), and those kept so far.
    region_keep: np.ndarray
    keep: np.ndarray
    #: bool ``(E,)``, the records of the whole page (:class:`ArticleState`), or None.
    page_records: np.ndarray | None = None
    #: bool ``(N,)``, text in link-dense display blocks (step 5), or None when off.
    dense: np.ndarray | None = None
    #: int64 ``(P,)``, :func:`_tag_depths` of step 5's and step 6's tags, and of the
    #: headings (step 8's dated threads).
    chrome_depth: np.ndarray | None = None
    figure_depth: np.ndarray | None = None
    heading_depth: np.ndarray | None = None
    #: bool ``(N,)``, the text steps 4–6 and 8 drop wherever it lies (step 3c), or None.
    dropped: np.ndarray | None = None
    #: The region's element (step 3), the story's paragraph path id (3b), the anchor (2).
    u: int = 0
    story: int | None = None
    start: int | None = None
    #: bool ``(B,)``, :func:`repeated_lines` of the blocks (:class:`ArticleState`), or None.
    repeated: np.ndarray | None = None


def analyse(page: Page, params: ArticleParams, *, body: bool = True) -> ArticleState:
    """:func:`run`, with the intermediate arrays (:class:`ArticleState`). With
    ``body=False`` the extraction's body is ``""`` (not joined; for a caller that reads
    only its keep mask, as CEPR-Typed does).

    The steps of the module docstring, one function each, over one :class:`_Work`.
    """
    cepr = params.setpr_params()
    alpha = PAPER_ALPHA["setpr"] if cepr.alpha is None else cepr.alpha  # (never None)
    used = {f.name: getattr(params, f.name) for f in fields(params)}
    used["alpha"] = alpha
    title, title_index = pick_title(page)
    n = len(page)
    headline = title_index if title_index is not None else displayed_headline(page, title)
    if n == 0:
        return ArticleState(Extraction(title=title, body="", method="cepr-article", params=used, url=page.url))
    h, h_smoothed = histogram(page, "setpr", cepr)
    tau = std_threshold(h_smoothed, alpha)
    evidence = _step_evidence(page, params, h_smoothed, tau)
    table = DomTable(page)
    starts, ends = _block_ranges(page.blocks)
    w = _Work(
        page=page, params=params, headline=headline, chars=page.latin_counts.astype(np.float64), table=table,
        starts=starts, ends=ends, evidence_all=evidence, evidence=evidence,
        records=np.zeros(len(table), dtype=bool), in_records=np.zeros(n, dtype=bool),
        region_keep=np.ones(n, dtype=bool), keep=np.ones(n, dtype=bool),
    )
    # Step 8's comment records are found first: they are no body evidence for steps 2–3.
    _step_comment_records(w)
    # What steps 4–6 and 8 will drop, which step 3c's growth does not pay for.
    _step_chrome(w)
    _step_region(w)  # steps 2–3c
    # Step 8 again: record runs on the story's paragraph path are released, then
    # steps 2–3c run again from the same anchor.
    _step_release_records(w)
    _step_pre_title(w)  # step 4
    _step_boilerplate(w)  # step 5
    _step_figures(w)  # step 6
    # Out of the numbering: step 8, then 9, then 7 last, so that NCE's comment phase
    # (step 8) still sees the repeated blocks it compares.
    _step_comments(w)  # step 8
    _step_orphans(w)  # step 9
    _step_duplicates(w)  # step 7
    extraction = text_node_extraction(
        page, method="cepr-article", params=used, title=(title, title_index), h=h, h_smoothed=h_smoothed,
        keep=w.keep, tau=tau, punc_num=page.punct_counts, body=body,
    )
    return ArticleState(extraction, table, starts, ends, w.page_records, w.repeated, headline)


def _step_evidence(page: Page, params: ArticleParams, h_smoothed: np.ndarray, tau: float) -> np.ndarray:
    """Step 1: :func:`body_evidence` of the page, bool ``(N,)``."""
    return body_evidence(h_smoothed, tau, page.in_link, params.content_level)


def _step_comment_records(w: _Work) -> None:
    """Step 8, first part: the comment records (:func:`record_lists`), except the run
    that holds the body's first sentence below the headline; their text is taken out of
    the body evidence. Sets *records*, *in_records*, *page_records* and *evidence*."""
    page, params, table, headline = w.page, w.params, w.table, w.headline
    if not (params.comments and params.comment_records and len(table)):
        return
    starts_of_body = []
    if headline is not None:
        # The first sentence-sized text below the headline starts the body, and so
        # does its first evidence unless a heading (a comment section's) comes first.
        first = _anchor_node(~page.in_link, page.latin_counts, headline, params.anchor_min_chars)
        if first is not None:
            starts_of_body.append(int(table.owner[first]))
        first = _anchor_node(w.evidence, page.latin_counts, headline, params.anchor_min_chars)
        if first is not None and not any(headline < h < first for _, h, _ in page.headings):
            starts_of_body.append(int(table.owner[first]))
    page_records, runs, relaxed = _record_runs(table, loose=params.comment_wrapped)
    if relaxed.any():
        page_records &= ~_unplaced_runs(table, page_records, runs, relaxed, w.evidence, page, headline,
                                        params.anchor_min_chars, params.comment_after_share)
    w.page_records = page_records
    w.records = _release_runs(table, page_records, runs, tuple(starts_of_body)) if starts_of_body else page_records.copy()
    w.in_records = table.covered(w.records)[table.owner]
    w.evidence = w.evidence & ~w.in_records


def _step_chrome(w: _Work) -> None:
    """The masks of steps 5 and 6 (link-dense lines, :func:`_tag_depths` of their tags)
    and, for step 3c, the text that steps 4–6 and 8 drop wherever it lies."""
    page, params = w.page, w.params
    starts, ends, chars = w.starts, w.ends, w.chars
    if params.boilerplate and params.link_density < 1.0:
        link_chars = np.add.reduceat(chars * page.in_link, starts)
        all_chars = np.add.reduceat(chars, starts)
        w.dense = (link_chars > params.link_density * np.maximum(all_chars, 1.0)).repeat(ends - starts)
    w.chrome_depth, w.figure_depth, w.heading_depth = _tag_depths(
        page, NON_ARTICLE_TAGS if params.boilerplate else frozenset(), frozenset() if params.captions else FIGURE_TAGS,
        _HEADINGS if params.comments and params.comment_dated else frozenset())
    if params.grow and len(w.table):
        # Text that steps 4–6 and 8 drop wherever it lies costs the region nothing.
        dropped = w.in_records.copy()
        if w.dense is not None:
            dropped |= w.dense
        dropped |= (w.chrome_depth[page.path_ids] >= 0) | (w.figure_depth[page.path_ids] >= 0)
        if params.pre_title and w.headline is not None:
            dropped[: w.headline + 1] = True
        w.dropped = dropped


def _step_region(w: _Work, anchor: int | None = None) -> None:
    """Steps 2–3c (:func:`_region`): sets *u*, *evidence*, *story*, *start*, and the
    region's text nodes *region_keep* and *keep* (every node when step 3 is off)."""
    w.u, w.evidence, w.story, w.start = _region(
        w.page, w.table, w.params, w.headline, w.evidence, w.in_records, w.chars, w.dropped, anchor
    )
    keep = np.ones(len(w.page), dtype=bool)
    if w.params.region and len(w.table):
        keep[:] = False
        first, last = w.table.text_range(w.u)
        if first <= last:
            keep[first : last + 1] = True
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("article region: <%s> with %d text nodes", w.table.elements[w.u].tag, int(keep.sum()))
    w.region_keep = keep.copy()
    w.keep = keep


def _step_release_records(w: _Work) -> None:
    """Step 8: the runs of comment records that carry the story's paragraph path are
    sections of the story, not a comment thread (:func:`_story_records`): released,
    and the region is chosen again from the same anchor."""
    params, table, page = w.params, w.table, w.page
    if w.story is None or not params.comment_evidence or not w.in_records.any():
        return
    released = _story_records(table, w.records, page.path_ids == w.story, w.evidence_all & ~page.in_link, w.chars,
                              params.comment_evidence_share, params.comment_after_share,
                              -1 if w.headline is None else w.headline, params.comment_headed)
    if not released.any():
        return
    in_records_before = w.in_records
    w.records &= ~released
    w.in_records = table.covered(w.records)[table.owner]
    w.evidence = w.evidence_all & ~w.in_records | (w.evidence & ~w.evidence_all)
    if w.dropped is not None:
        w.dropped &= ~(in_records_before & ~w.in_records)
    # The story still starts at its anchor; the released runs only add to it.
    _step_region(w, w.start)


def _step_pre_title(w: _Work) -> None:
    """Step 4: the region's text nodes up to the end of the headline are dropped, unless
    the region holds more body evidence above the headline than below it."""
    keep, headline = w.keep, w.headline
    if not (w.params.pre_title and headline is not None):
        return
    end = headline + 1
    for _, first, stop in w.page.headings:
        if first == headline:
            end = stop
    # A "headline" with more body evidence above it than below it, inside the
    # region, is a heading of the story (a recipe card, a box), not the headline.
    chars, evidence = w.chars, w.evidence
    above = float(chars[:end][keep[:end] & evidence[:end]].sum())
    below = float(chars[end:][keep[end:] & evidence[end:]].sum())
    if above <= below:
        keep[:end] = False


def _region_depth(w: _Work) -> int:
    """The depth of the region's element (``html`` = 0)."""
    depth, e = -1, w.u
    while e >= 0:
        depth += 1
        e = int(w.table.parent[e])
    return depth


def _drop_tagged(w: _Work, tag_depth: np.ndarray | None) -> None:
    """Drop the text inside elements of *tag_depth* (:func:`_tag_depths`) strictly below
    the region's element."""
    if len(w.table) and tag_depth is not None and tag_depth.size:
        w.keep &= tag_depth[w.page.path_ids] <= _region_depth(w)


def _step_boilerplate(w: _Work) -> None:
    """Step 5: ``NON_ARTICLE_TAGS`` inside the region and link-dense display blocks."""
    if w.params.boilerplate:
        _drop_tagged(w, w.chrome_depth)
    if w.dense is not None:
        w.keep &= ~w.dense


def _step_figures(w: _Work) -> None:
    """Step 6: ``figure``/``figcaption`` inside the region, unless ``captions``."""
    if not w.params.captions:
        _drop_tagged(w, w.figure_depth)


def _step_comments(w: _Work) -> None:
    """Step 8: the comment records' text, and NCE's comment thread (:func:`comment_start`)
    with everything after it, unless the cut is refused (``cut_min_before``,
    :func:`_story_continues`)."""
    params, keep, page, chars = w.params, w.keep, w.page, w.chars
    if not params.comments:
        return
    keep &= ~w.in_records
    cut = comment_start(page, keep, _NCE_PARAMS) if params.comment_cut else None
    if cut is not None and params.cut_min_before > 0:
        # A comment thread follows the story: a cut with (almost) none of the kept
        # text before it would take the story itself (a schedule, a table, a list).
        kept = chars * keep
        if float(kept[:cut].sum()) < params.cut_min_before * float(kept.sum()):
            cut = None
    if cut is not None and not _story_continues(page, keep & w.evidence, cut, params.story_continues):
        keep[cut:] = False
    if params.comment_dated:
        keep &= ~_dated_thread_nodes(page, keep, w.starts, w.ends, w.heading_depth, params.cut_min_before)


def _dated_thread_nodes(page: Page, keep: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                        heading_depth: np.ndarray | None, min_before: float) -> np.ndarray:
    """Step 8's thread of dated, unwrapped records among the display blocks (text-node
    ranges ``[starts, ends)``) that hold a kept node (*keep*, bool ``(N,)``): bool
    ``(N,)``, the text nodes of its blocks (:func:`~scrapy_cepr.core.comments.dated_thread`,
    refused with less than *min_before* of the blocks' characters before it, as NCE's cut
    is). *heading_depth* is :func:`_tag_depths` of ``h1``–``h6`` per tag path (None:
    no block is a heading)."""
    out = np.zeros(keep.size, dtype=bool)
    kept = np.flatnonzero(np.logical_or.reduceat(keep, starts)) if keep.size else np.zeros(0, np.int64)
    texts = page.texts
    lines = [" ".join(texts[a:b]) for a, b in zip(starts[kept].tolist(), ends[kept].tolist())]
    paths = page.path_ids[starts[kept]].tolist()

    def unit(k: int) -> int:  # the element holding kept block k (a name and a date after a <br> share it)
        return page.block_element(int(starts[kept[k]]))

    heading = None
    if heading_depth is not None:
        heading = np.logical_or.reduceat(heading_depth[page.path_ids] >= 0, starts)[kept].tolist()
    span = dated_thread(lines, paths, heading, min_before=min_before, unit=unit)
    if span is not None:
        first, end = span
        out[starts[kept[first]]:ends[kept[end - 1]]] = True
    return out & keep


def _step_orphans(w: _Work) -> None:
    """Step 9: :func:`orphan_headings` of the region, dropped."""
    if w.params.orphan_chars:
        w.keep &= ~orphan_headings(w.page, w.region_keep, w.keep, w.starts, w.ends, w.params.orphan_chars)


def _step_duplicates(w: _Work) -> None:
    """Step 7: repeated display blocks (:func:`repeated_lines`) are dropped, except one
    copy, the first kept one, of a story printed twice. Sets *repeated*."""
    params, keep, page, chars, starts, ends = w.params, w.keep, w.page, w.chars, w.starts, w.ends
    if not params.duplicates:
        return
    repeated = repeated_lines(page.texts, page.char_counts, starts, ends)
    w.repeated = repeated.copy()
    if repeated.any() and (params.duplicate_story < 1.0 or params.duplicate_path):
        # The story itself appears twice (a print or AMP copy, a hidden duplicate):
        # one copy of its lines, the first kept one, stays when the repeated lines
        # hold most of the kept text, or, line by line, when the copy is body
        # evidence on the story's paragraph path.
        kept_chars = np.add.reduceat(chars * keep, starts)
        total = float(kept_chars.sum())
        story_copy = np.zeros(starts.size, dtype=bool)
        if params.duplicate_story < 1.0 and total > 0:
            if float(kept_chars[repeated].sum()) >= params.duplicate_story * total:
                story_copy[:] = True
        if params.duplicate_path and w.story is not None:
            story_copy |= np.add.reduceat(chars * (keep & w.evidence & (page.path_ids == w.story)), starts) > 0
        first_copy = first_copies(page.texts, starts, ends, repeated & (kept_chars > 0))
        repeated &= ~(first_copy & story_copy)
    keep &= ~repeated.repeat(ends - starts)
