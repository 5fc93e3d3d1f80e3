"""Keywords of each text node: word segmentation, stop-word removal and TextRank, for
CEDST's topic feature (Zhang et al., ICCS 2018, Sec. 3.2 and Fig. 2; spec §4).

* **Segmentation.** A text that contains CJK characters is cut into words by jieba
  (imported, and its dictionary loaded, only when such a text first appears: once per
  process, quietly, from jieba's cache file; its cost is in ``docs/measurements.md``);
  any other text is cut into the matches of ``\\w+``.
  Words are case-folded. ``size(text)`` of the paper (Eq. 8) is the number of these
  words, stop words included.
* **Candidates.** A word is a keyword candidate unless it is a stop word, all digits, or
  one character long (as jieba's own TextRank does). The stop words are those shipped by
  the PyPI package ``stop-words`` (BSD-3-Clause; release 2025.11.4 has 33 languages
  including Chinese, older releases lack Chinese), so no data is downloaded at run time.
* **TextRank** (Mihalcea & Tarau, EMNLP 2004, Sec. 3, ref. [18] of the CEDST paper): per
  text node, an undirected co-occurrence graph over its candidate words, with an edge
  between candidates that stand within ``window`` positions of each other (default 2,
  i.e. adjacent candidates, the window the TextRank paper found best) weighted by the
  number of such co-occurrences, and the score
  ``WS(v) = (1 − d) + d · Σ_{u ~ v} w_uv / (Σ_{x ~ u} w_ux) · WS(u)`` with damping
  d = 0.85, iterated from 1 until no score moves more than ``tol`` (1e-4) or for
  ``max_iter`` (100) rounds. All nodes' graphs are disjoint, so one vectorised power
  iteration over their union ranks every node's words at once.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import logging
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .text import CJK_RE

__all__ = ["NodeKeywords", "node_keywords", "require_dependencies", "segment", "stop_words", "textrank"]

logger = logging.getLogger(__name__)

_WORD_RE = re.compile(r"\w+")


#: The optional packages of this module (CEDST only): import name -> PyPI name.
OPTIONAL = {"jieba": "jieba", "stop_words": "stop-words"}

_INSTALL_HINT = 'CEDST needs {names}: pip install "scrapy-cepr[cedst]"'


def require_dependencies() -> None:
    """Check that CEDST's optional packages (jieba, stop-words; the ``cedst`` extra) are
    installed, without importing them.

    :raises ImportError: one is missing; the message names the ``pip install`` command.
    """
    missing = []
    for module, package in OPTIONAL.items():
        if module in sys.modules:
            found = sys.modules[module] is not None
        else:
            found = importlib.util.find_spec(module) is not None
        if not found:
            missing.append(package)
    if missing:
        raise ImportError(_INSTALL_HINT.format(names=" and ".join(missing)))


@functools.cache
def _stop_words_module():
    try:
        import stop_words as module  # the PyPI package "stop-words"
    except ImportError:
        raise ImportError(_INSTALL_HINT.format(names="stop-words")) from None
    return module


def _available_languages() -> tuple[str, ...]:
    """ISO 639-1 codes of the stop lists shipped by the ``stop-words`` package."""
    return tuple(sorted(_stop_words_module().LANGUAGE_MAPPING))


@functools.cache
def stop_words(languages: str = "all") -> frozenset[str]:
    """The union of the stop lists of *languages*, case-folded.

    :param languages: ``"all"`` (every list of the ``stop-words`` package), ``"none"``
        (no stop words), or comma-separated ISO 639-1 codes such as ``"en,zh"``.
    :returns: a frozenset of words (cached per argument; immutable).
    :raises ValueError: an unknown language code (the message lists the known ones).

    >>> "the" in stop_words("en"), "的" in stop_words("zh"), stop_words("none")
    (True, True, frozenset())
    """
    if languages == "none":
        return frozenset()
    module = _stop_words_module()
    known = _available_languages()
    codes = known if languages == "all" else tuple(c.strip() for c in languages.split(",") if c.strip())
    unknown = [c for c in codes if c not in known]
    if unknown or not codes:
        raise ValueError(
            f"stop_languages must be 'all', 'none' or comma-separated codes among {', '.join(known)}; got {languages!r}"
        )
    words: set[str] = set()
    for code in codes:
        words.update(w.casefold() for w in module.get_stop_words(code))
    return frozenset(words)


@functools.cache
def _jieba():
    """jieba, imported and initialised once per process with its INFO/DEBUG messages
    ("Building prefix dict …", "Loading model cost …") silenced."""
    logging.getLogger("jieba").setLevel(logging.WARNING)
    try:
        import jieba
    except ImportError:
        raise ImportError(_INSTALL_HINT.format(names="jieba")) from None

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def segment(texts: Sequence[str]) -> list[list[str]]:
    """The case-folded words of each text: jieba for texts with CJK characters, ``\\w+``
    matches otherwise (punctuation and spaces are never words).

    >>> segment(["Hello, World 2018!", "北京欢迎你"])
    [['hello', 'world', '2018'], ['北京', '欢迎', '你']]
    """
    if not CJK_RE.search("".join(texts)):
        return [_WORD_RE.findall(text.casefold()) for text in texts]
    out: list[list[str]] = []
    for text in texts:
        if CJK_RE.search(text):
            words = [w for w in _jieba().lcut(text.casefold()) if _WORD_RE.fullmatch(w)]
        else:
            words = _WORD_RE.findall(text.casefold())
        out.append(words)
    return out


def textrank(
    node: np.ndarray,
    word: np.ndarray,
    *,
    window: int = 2,
    damping: float = 0.85,
    max_iter: int = 100,
    tol: float = 1e-4,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TextRank scores of the words of many texts at once (Mihalcea & Tarau 2004, Eq. 1
    with co-occurrence weights).

    :param node: int ``(T,)``, the text each token belongs to; tokens of a text are
        contiguous and in reading order.
    :param word: int ``(T,)``, the word id of each token (candidate words only).
    :param window: tokens of one text at distance ``< window`` are linked (≥ 2).
    :returns: ``(v_node, v_word, score)``, float64/int64 ``(V,)`` over the distinct
        ``(text, word)`` vertices, sorted by text then word id. A word with no neighbour
        scores ``1 − d``.

    Text 0 = "a b a c" (word ids 0 1 0 2), window 2: edges a–b of weight 2 and a–c of
    weight 1; a collects from both neighbours and ranks first, b (weight 2) before c:

    >>> v_node, v_word, s = textrank(np.array([0, 0, 0, 0]), np.array([0, 1, 0, 2]))
    >>> v_word[np.argsort(-s)].tolist()
    [0, 1, 2]
    """
    node = np.asarray(node, dtype=np.int64)
    word = np.asarray(word, dtype=np.int64)
    if node.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    n_words = int(word.max()) + 1
    keys, vertex = np.unique(node * n_words + word, return_inverse=True)
    v_node, v_word = np.divmod(keys, n_words)
    # Co-occurrence edges (undirected) within the window, in the same text, no self-loops.
    src_parts, dst_parts = [], []
    for j in range(1, window):
        same = (node[:-j] == node[j:]) & (vertex[:-j] != vertex[j:])
        src_parts.append(vertex[:-j][same])
        dst_parts.append(vertex[j:][same])
    src = np.concatenate(src_parts) if src_parts else np.zeros(0, np.int64)
    dst = np.concatenate(dst_parts) if dst_parts else np.zeros(0, np.int64)
    n_v = keys.size
    score: np.ndarray = np.ones(n_v)
    if src.size:
        # Both directions; repeated pairs add up to the co-occurrence weight.
        a = np.concatenate((src, dst))
        b = np.concatenate((dst, src))
        strength = np.bincount(a, minlength=n_v).astype(np.float64)  # Σ_x w_ax
        share = 1.0 / strength[a]  # w_ab / Σ_x w_ax, per unit edge a→b
        for _ in range(max_iter):
            new = (1.0 - damping) + damping * np.bincount(b, weights=share * score[a], minlength=n_v)
            delta = np.abs(new - score).max()
            score = new
            if delta < tol:
                break
        isolated = strength == 0
        score[isolated] = 1.0 - damping
    else:
        score[:] = 1.0 - damping
    return v_node, v_word, score


@dataclass(frozen=True, eq=False)
class NodeKeywords:
    """The keywords of a page's N text nodes.

    * ``node``, ``word``: int64 ``(K,)``, one row per (text node, keyword), grouped by
      node, best keyword first;
    * ``score``: float64 ``(K,)``, the TextRank score;
    * ``vocab``: the words, indexed by word id (ids in order of first appearance);
    * ``sizes``: int64 ``(N,)``, ``size(text)``: words per node, stop words included.
    """

    node: np.ndarray
    word: np.ndarray
    score: np.ndarray
    vocab: list[str]
    sizes: np.ndarray

    def words_of(self, i: int) -> list[str]:
        """The keywords of node *i*, best first."""
        return [self.vocab[w] for w in self.word[self.node == i].tolist()]


def node_keywords(
    texts: Sequence[str],
    top_k: int,
    *,
    stop_languages: str = "all",
    window: int = 2,
    damping: float = 0.85,
) -> NodeKeywords:
    """Segment *texts*, drop stop words, rank each text's words by TextRank and keep the
    *top_k* best of each (CEDST Fig. 2). Ties go to the word seen first on the page.

    :param texts: N text nodes.
    :param top_k: keywords kept per text node (≥ 1).
    :param stop_languages: see :func:`stop_words`.
    :raises ValueError: bad *stop_languages*.

    "storm" is linked three times; "moved" takes all of "north"'s score besides half of
    its own links to "storm", so it beats "hit" and "coast" (linked to "storm" and each
    other only):

    >>> kw = node_keywords(["The storm hit the coast; the storm moved north.", "Sport"], 2, stop_languages="en")
    >>> kw.words_of(0), kw.words_of(1), kw.sizes.tolist()
    (['storm', 'moved'], ['sport'], [9, 1])
    """
    stop = stop_words(stop_languages)
    words = segment(texts)
    sizes = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    # Word ids in order of first appearance; the candidate test runs once per distinct word.
    vocab_ids: dict[str, int] = {}
    intern = vocab_ids.setdefault
    ids = np.array([intern(w, len(vocab_ids)) for w in itertools.chain.from_iterable(words)], dtype=np.int64)
    candidate = np.array([len(w) > 1 and w not in stop and not w.isdigit() for w in vocab_ids], dtype=bool)
    keep = candidate[ids] if ids.size else np.zeros(0, bool)
    tok_node = np.repeat(np.arange(len(words), dtype=np.int64), sizes)[keep]
    tok_word = ids[keep]
    v_node, v_word, score = textrank(tok_node, tok_word, window=window, damping=damping)
    # Best first within each node; ties to the earlier word (lower id).
    order = np.lexsort((v_word, -score, v_node))
    v_node, v_word, score = v_node[order], v_word[order], score[order]
    if v_node.size:
        first = np.concatenate(([0], np.flatnonzero(v_node[1:] != v_node[:-1]) + 1))
        start = np.repeat(first, np.diff(np.concatenate((first, [v_node.size]))))
        chosen = (np.arange(v_node.size) - start) < top_k
        v_node, v_word, score = v_node[chosen], v_word[chosen], score[chosen]
    return NodeKeywords(node=v_node, word=v_word, score=score, vocab=list(vocab_ids), sizes=sizes)
