"""CEDST: Content Extraction based on DS Theory (Zhang, Zhang, Chen, Tan; ICCS 2018),
spec §4.

Pipeline (paper Fig. 1), over the page's N text nodes in document order:

1. **Topic feature** (Sec. 3.2, Eqs. 6–7). Each text node's keywords are the ``top_k``
   best of its words by TextRank, stop words removed (:mod:`..core.keywords`). Two
   keywords are *compatible* (relation R) when they are keywords together of more than
   γ text nodes; ``relate(x, y)`` is that number. The topics are the maximal
   compatibility blocks (the maximal cliques of R, found by Bron–Kerbosch with pivoting;
   the paper's left-to-right scan of the triangular matrix finds the same blocks), a
   topic's weight is ``tw = Σ relate(x, y)`` over its pairs (Eq. 6), and
   ``h_topic(text) = max tw(topic(text)) / max tw(topics)`` (Eq. 7).
2. **Non-content features** (Sec. 3.3): text cluster ``h_cluster`` (Eq. 8), text
   variance ``h_var`` (Eq. 9), both over a text node and its sibling text nodes, and the
   hyperlink ratio ``h_href`` (Eq. 10). ``size(text)`` is the node's number of words.
3. **Fusion** (Sec. 3.1, Eqs. 1–5): BMA of each feature, topic/cluster/variance as
   positive evidence (weight α_f), hyperlink as negative evidence (weight β_f), fused by
   Dempster's rule (:mod:`..core.evidence`); ``H_i = (m_topic ⊕ m_cluster ⊕ m_var ⊕
   m_href)({news})``.
4. **Smoothing** (Sec. 3.4): CEPR's Gaussian smoothing (:func:`..core.smoothing.smooth`).
5. **Threshold** (Sec. 3.4, Eqs. 11–12): Otsu over t ∈ {0, 0.1, …, 1}
   (:func:`..core.threshold.otsu_threshold`); node i is content iff ``H'_i > t``.

Choices on [open] points (their effect on the benchmark F1: ``docs/measurements.md``,
"CEDST"):

* **Weights α_f, β_f** ("near 1"): 0.9 for all four features. The negative
  weight must stay below 1 so that Dempster's K never reaches 0 (K ≥ 1 − β_href).
* **Keywords per node**: 5.
* **"More than γ times"** is read literally: R holds iff ``relate(x, y) > γ``.
* **topic(text)**: the topics that share at least ``topic_overlap`` keywords with the
  node's keywords (capped at the topic's size); 2.
* **Siblings** ``sb(text)``: text nodes taken literally as DOM children of the same
  element make every ``<p>`` paragraph its own group, so the variance is 0 for nearly
  every article paragraph. We group by *paragraph container*: the parent of the node's
  nearest block-level element (``siblings="container"``); ``"block"`` and ``"parent"``
  (the literal reading) are kept for comparison.
* **Hyperlink ratio**: a text node lies wholly inside or outside ``<a>``, so Eq. 10 per
  text node is 0 or 1. We take "the text" as its display block (line): the share of the
  block's words inside links; a block without words falls back to the node's own 0/1.
* **Words**: ``\\w+`` matches, jieba words for CJK text (:mod:`..core.keywords`).
* **Smoothing**: plain Gaussian (``lambda_=0``), the "one-dimensional Gaussian
  smoothing" both cited papers share, with CEPR's kernel and radius 1 and the authors'
  edge rule (``edges="keep"``); ``lambda_ > 0`` weights it by tag-path edit distance as
  in CEPR-SETPR.
* **Stop words**: every list of the ``stop-words`` package.

The topic feature (``weight_topic``; 0 is the paper's CEDST-NC) is measured in
``docs/measurements.md``, "CEDST"; on the benchmark it does not help.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ..core.evidence import NEWS, bma, dempster
from ..core.keywords import NodeKeywords, node_keywords, require_dependencies, stop_words
from ..core.page import BLOCK_TAGS, Page
from ..core.params import check_choice, check_int, check_real
from ..core.result import Extraction, text_node_extraction
from ..core.smoothing import adjacent_path_weights, smooth
from ..core.threshold import otsu_threshold
from ..core.title import pick_title

__all__ = ["CEDSTParams", "Topics", "cluster_variance_features", "fuse", "link_feature", "run", "sibling_groups", "topic_feature", "topics"]

logger = logging.getLogger(__name__)

#: Bron–Kerbosch stops after this many maximal compatibility blocks (a page built to
#: have exponentially many cliques would otherwise stall the crawl); logged when hit.
MAX_TOPICS = 5000

_SIBLING_SCOPES = ("container", "block", "parent")


def _check_weight(name: str, value: object, *, below_one: bool = False) -> float:
    v = check_real(name, value, 0.0, 1.0)
    if below_one and v >= 1.0:
        raise ValueError(f"{name} must be a float in [0, 1), got {value!r}")
    return v


@dataclass(frozen=True)
class CEDSTParams:
    """Validated CEDST parameters (paper values as defaults where the paper gives one).

    :param gamma: γ ≥ 0: two keywords are compatible when they are keywords together of
        more than γ text nodes (Sec. 3.2; the paper's value 2, Sec. 4.3).
    :param top_keywords: keywords per text node, the best by TextRank (≥ 1) [open; 5].
    :param topic_overlap: a topic belongs to a text node when the node's keywords hold at
        least this many of the topic's words, capped at the topic's size (≥ 1) [open; 2].
    :param stop_languages: stop lists of the ``stop-words`` package: ``"all"``, ``"none"``
        or comma-separated ISO 639-1 codes, e.g. ``"en,zh"`` [open; "all"].
    :param weight_topic: α_topic of Eq. 1, in [0, 1] [open: "near 1"; 0.9].
    :param weight_cluster: α_cluster of Eq. 1, in [0, 1] [open; 0.9].
    :param weight_variance: α_var of Eq. 1, in [0, 1] [open; 0.9].
    :param weight_link: β_href of Eq. 2, in [0, 1): below 1 so that K > 0 [open; 0.9].
    :param siblings: the scope of ``sb(text)`` in Eqs. 8–9: ``"container"`` (text nodes
        whose nearest block-level elements share a parent), ``"block"`` (same nearest
        block-level element) or ``"parent"`` (same owning element, the literal DOM
        reading) [open; "container"].
    :param radius: radius r ≥ 0 of the Gaussian kernel, as in CEPR (window 2r+1).
    :param lambda_: λ ≥ 0 of CEPR's tag-path weight ``1/dist^λ``; 0 is plain Gaussian
        smoothing (the default).
    :param edges: ``"keep"`` or ``"pad"``, as in CEPR (:func:`..core.smoothing.smooth`).
    :raises ValueError: naming the parameter and its allowed range.
    """

    gamma: int = 2
    top_keywords: int = 5
    topic_overlap: int = 2
    stop_languages: str = "all"
    weight_topic: float = 0.9
    weight_cluster: float = 0.9
    weight_variance: float = 0.9
    weight_link: float = 0.9
    siblings: str = "container"
    radius: int = 1
    lambda_: float = 0.0
    edges: str = "keep"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "gamma", check_int("gamma", self.gamma, 0, 10**6))
        set_(self, "top_keywords", check_int("top_keywords", self.top_keywords, 1, 1000))
        set_(self, "topic_overlap", check_int("topic_overlap", self.topic_overlap, 1, 1000))
        if not isinstance(self.stop_languages, str):  # bad params raise ValueError (project rule)
            raise ValueError(  # noqa: TRY004
                f"stop_languages must be 'all', 'none' or comma-separated ISO 639-1 codes; got {self.stop_languages!r}"
            )
        require_dependencies()  # jieba, stop-words: the "cedst" extra (ImportError naming it)
        stop_words(self.stop_languages)  # raises ValueError naming stop_languages
        for name in ("weight_topic", "weight_cluster", "weight_variance"):
            set_(self, name, _check_weight(name, getattr(self, name)))
        set_(self, "weight_link", _check_weight("weight_link", self.weight_link, below_one=True))
        check_choice("siblings", self.siblings, _SIBLING_SCOPES)
        set_(self, "radius", check_int("radius", self.radius, 0, 1000))
        set_(self, "lambda_", check_real("lambda_", self.lambda_))
        check_choice("edges", self.edges, ("keep", "pad"))


# --------------------------------------------------------------------------- topics


@dataclass(frozen=True, eq=False)
class Topics:
    """The maximal compatibility blocks of a page (Sec. 3.2).

    * ``words``: int64 ``(W,)``, the word ids (vocabulary of :class:`NodeKeywords`) that
      take part in relation R;
    * ``relate``: int64 ``(W, W)``, symmetric co-occurrence counts of those words as
      keywords of the same text node (0 on the diagonal and where R does not hold);
    * ``members``: bool ``(T, W)``, the words of each topic (T ≥ 0 topics, each ≥ 2 words);
    * ``weight``: float64 ``(T,)``, ``tw`` of Eq. 6.
    """

    words: np.ndarray
    relate: np.ndarray
    members: np.ndarray
    weight: np.ndarray


def _keyword_pairs(kw: NodeKeywords) -> tuple[np.ndarray, np.ndarray]:
    """Distinct unordered keyword pairs ``(x < y)`` and the number of text nodes in
    which both are keywords, as ``(pairs (P, 2), counts (P,))``."""
    node, word = kw.node, kw.word
    if node.size < 2:
        return np.zeros((0, 2), np.int64), np.zeros(0, np.int64)
    # Keywords of one node are contiguous; offset j pairs each keyword with the j-th next.
    first = np.concatenate(([0], np.flatnonzero(node[1:] != node[:-1]) + 1))
    longest = int(np.diff(np.concatenate((first, [node.size]))).max())
    n_words = int(word.max()) + 1
    keys = []
    for j in range(1, longest):
        same = node[:-j] == node[j:]
        a, b = word[:-j][same], word[j:][same]
        keys.append(np.minimum(a, b) * n_words + np.maximum(a, b))
    if not keys:
        return np.zeros((0, 2), np.int64), np.zeros(0, np.int64)
    unique, counts = np.unique(np.concatenate(keys), return_counts=True)
    return np.stack(np.divmod(unique, n_words), axis=1), counts


def _maximal_cliques(adjacency: list[set[int]], limit: int) -> list[list[int]]:
    """Maximal cliques of an undirected graph by Bron–Kerbosch with Tomita pivoting,
    iteratively (no recursion), vertices in increasing order; at most *limit* cliques."""
    out: list[list[int]] = []
    stack: list[tuple[list[int], set[int], set[int]]] = [([], set(range(len(adjacency))), set())]
    while stack:
        r, p, x = stack.pop()
        if not p:
            if not x:
                out.append(sorted(r))
                if len(out) >= limit:
                    logger.warning("CEDST: stopped at %d maximal compatibility blocks", limit)
                    break
            continue
        pivot = max(p | x, key=lambda u: (len(adjacency[u] & p), -u))
        for v in sorted(p - adjacency[pivot], reverse=True):
            stack.append((r + [v], p & adjacency[v], x & adjacency[v]))
            p = p - {v}
            x = x | {v}
    out.sort()
    return out


def topics(kw: NodeKeywords, gamma: int) -> Topics:
    """The maximal compatibility blocks over the keywords *kw* (Sec. 3.2, Def. 1) and
    their weights ``tw`` (Eq. 6). R holds iff ``relate(x, y) > γ``; a block of one word
    (a keyword with no compatible partner) has no pair and weight 0, and is left out.

    :returns: a :class:`Topics` (possibly with T = 0).
    """
    pairs, counts = _keyword_pairs(kw)
    strong = counts > gamma
    pairs, counts = pairs[strong], counts[strong]
    words = np.unique(pairs)
    w = words.size
    relate = np.zeros((w, w), np.int64)
    if w == 0:
        return Topics(words, relate, np.zeros((0, 0), bool), np.zeros(0))
    a = np.searchsorted(words, pairs[:, 0])
    b = np.searchsorted(words, pairs[:, 1])
    relate[a, b] = counts
    relate[b, a] = counts
    adjacency = [set(np.flatnonzero(row).tolist()) for row in relate]
    cliques = _maximal_cliques(adjacency, MAX_TOPICS)
    members = np.zeros((len(cliques), w), bool)
    for t, clique in enumerate(cliques):
        members[t, clique] = True
    m = members.astype(np.float64)
    weight = ((m @ relate) * m).sum(axis=1) / 2.0  # Σ over unordered pairs in the topic
    return Topics(words, relate, members, weight)


def topic_feature(kw: NodeKeywords, tp: Topics, n_nodes: int, overlap: int) -> np.ndarray:
    """``h_topic`` of Eq. 7 per text node, float64 ``(N,)`` in [0, 1]: the largest weight
    of the node's topics over the largest topic weight of the page; 0 for a node without
    topics and for every node of a page without topics.

    A topic is one of the node's topics when the node's keywords hold at least
    ``min(overlap, |topic|)`` of its words.
    """
    h = np.zeros(n_nodes)
    if tp.weight.size == 0 or tp.weight.max() <= 0:
        return h
    col = np.searchsorted(tp.words, kw.word)
    hit = (col < tp.words.size) & (tp.words[np.minimum(col, tp.words.size - 1)] == kw.word)
    incidence = np.zeros((n_nodes, tp.words.size))
    incidence[kw.node[hit], col[hit]] = 1.0
    shared = incidence @ tp.members.T.astype(np.float64)  # (N, T) keywords in common
    need = np.minimum(overlap, tp.members.sum(axis=1))
    own = shared >= need[None, :]
    h = np.where(own, tp.weight[None, :], 0.0).max(axis=1)
    return h / tp.weight.max()


# ------------------------------------------------------------- non-content features


def _block_element(el):
    """The nearest ancestor-or-self of *el* with a block-level tag (or the root)."""
    while el is not None and el.tag not in BLOCK_TAGS:
        parent = el.getparent()
        if parent is None:
            return el
        el = parent
    return el


def sibling_groups(page: Page, scope: str = "container") -> np.ndarray:
    """Group id of ``sb(text)`` (Eqs. 8–9) for each text node, int64 ``(N,)``.

    :param scope: ``"parent"``: text nodes owned by the same element (for a tail, the
        parent of the element it follows); ``"block"``: same nearest block-level
        ancestor-or-self of the owner; ``"container"``: same parent of that block
        element, so the ``<p>`` paragraphs of one ``<div>`` are siblings.
    :raises ValueError: unknown *scope*.
    """
    check_choice("siblings", scope, _SIBLING_SCOPES)
    owner_ids: dict[object, int] = {}
    intern = owner_ids.setdefault
    of_node = np.array([intern(o, len(owner_ids)) for o in page.owners], dtype=np.int64)
    keys: dict[object, int] = {}
    of_owner = np.empty(len(owner_ids), np.int64)
    for i, owner in enumerate(owner_ids):
        el = owner
        if scope != "parent":
            el = _block_element(owner)
            parent = el.getparent()
            if scope == "container" and parent is not None:
                el = parent
        of_owner[i] = keys.setdefault(el, len(keys))
    return of_owner[of_node] if of_node.size else of_node


def cluster_variance_features(sizes: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(h_cluster, h_var)`` of Eqs. 8–9, float64 ``(N,)`` each in [0, 1].

    :param sizes: int ``(N,)``, words per text node.
    :param groups: int ``(N,)``, the sibling group of each node (:func:`sibling_groups`).
    :returns: the group's total words, and the group's population variance of words per
        node, each divided by its maximum over the page (0 when that maximum is 0).

    >>> hc, hv = cluster_variance_features(np.array([10, 30, 2, 2]), np.array([0, 0, 1, 1]))
    >>> hc.tolist(), hv.tolist()
    ([1.0, 1.0, 0.1, 0.1], [1.0, 1.0, 0.0, 0.0])
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    if sizes.size == 0:
        return np.zeros(0), np.zeros(0)
    n = np.bincount(groups).astype(np.float64)
    total = np.bincount(groups, weights=sizes)
    square = np.bincount(groups, weights=sizes * sizes)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, total / n, 0.0)
        var = np.maximum(np.where(n > 0, square / n, 0.0) - mean * mean, 0.0)
    return _normalise(total)[groups], _normalise(var)[groups]


def _normalise(x: np.ndarray) -> np.ndarray:
    top = x.max() if x.size else 0.0
    return x / top if top > 0 else np.zeros_like(x)


def link_feature(sizes: np.ndarray, in_link: np.ndarray, blocks: np.ndarray) -> np.ndarray:
    """``h_href`` of Eq. 10 per text node, float64 ``(N,)`` in [0, 1]: the words of the
    node's display block that lie inside ``<a>``, over the block's words. A block without
    words gives each of its nodes 1 if the node is inside a link, else 0.

    >>> link_feature(np.array([4, 1, 3, 2, 0]), np.array([0, 1, 0, 1, 1], bool), np.array([0, 0, 0, 1, 2])).tolist()
    [0.125, 0.125, 0.125, 1.0, 1.0]
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    if sizes.size == 0:
        return np.zeros(0)
    _, block = np.unique(blocks, return_inverse=True)
    words = np.bincount(block, weights=sizes)
    linked = np.bincount(block, weights=sizes * in_link)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(words > 0, linked / words, 0.0)[block]
    return np.where(words[block] > 0, ratio, in_link.astype(np.float64))


def fuse(h_topic: np.ndarray, h_cluster: np.ndarray, h_var: np.ndarray, h_href: np.ndarray, params: CEDSTParams) -> np.ndarray:
    """``H = (m_topic ⊕ m_cluster ⊕ m_var ⊕ m_href)({news})`` per text node (Eqs. 1–5),
    float64 ``(N,)`` in [0, 1]. Topic, cluster and variance are positive evidence
    (Eq. 1), the hyperlink ratio negative (Eq. 2)."""
    fused = dempster(
        bma(h_topic, params.weight_topic, positive=True),
        bma(h_cluster, params.weight_cluster, positive=True),
        bma(h_var, params.weight_variance, positive=True),
        bma(h_href, params.weight_link, positive=False),
    )
    return fused[..., NEWS]


# --------------------------------------------------------------------------------- run


def histogram(page: Page, params: CEDSTParams) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``(H, H', features)`` over the page's N text nodes: the fused belief, its smoothed
    version (float64 ``(N,)`` each) and the four feature arrays by name
    (``topic, cluster, variance, link``)."""
    kw = node_keywords(page.texts, params.top_keywords, stop_languages=params.stop_languages)
    tp = topics(kw, params.gamma)
    n = len(page)
    h_topic = topic_feature(kw, tp, n, params.topic_overlap)
    groups = sibling_groups(page, params.siblings)
    h_cluster, h_var = cluster_variance_features(kw.sizes, groups)
    h_href = link_feature(kw.sizes, page.in_link, page.blocks)
    h = fuse(h_topic, h_cluster, h_var, h_href, params)
    weights = None
    if params.lambda_ > 0 and params.radius > 0:
        weights = adjacent_path_weights(page.path_ids, page.path_codes, params.radius, params.lambda_)
    h_smoothed = smooth(h, weights, params.radius, edges=params.edges)
    features = {"topic": h_topic, "cluster": h_cluster, "variance": h_var, "link": h_href}
    return h, h_smoothed, features


def run(page: Page, params: CEDSTParams) -> Extraction:
    """Extract the main content of *page* with CEDST (paper Fig. 1).

    :returns: an :class:`Extraction` with ``method="cedst"``, ``tau`` the Otsu threshold
        t, and a ``nodes`` view whose ``h`` is the fused belief H and ``h_smoothed`` H'.
        A page without text nodes gives an empty body.
    """
    used = {
        "gamma": params.gamma,
        "top_keywords": params.top_keywords,
        "topic_overlap": params.topic_overlap,
        "stop_languages": params.stop_languages,
        "weight_topic": params.weight_topic,
        "weight_cluster": params.weight_cluster,
        "weight_variance": params.weight_variance,
        "weight_link": params.weight_link,
        "siblings": params.siblings,
        "radius": params.radius,
        "lambda_": params.lambda_,
        "edges": params.edges,
    }
    title, title_index = pick_title(page)
    if len(page) == 0:
        return Extraction(title=title, body="", method="cedst", params=used, url=page.url)
    h, h_smoothed, _ = histogram(page, params)
    tau = otsu_threshold(h_smoothed)
    keep = h_smoothed > tau
    return text_node_extraction(
        page, method="cedst", params=used, title=(title, title_index), h=h, h_smoothed=h_smoothed, keep=keep,
        tau=tau,
    )
