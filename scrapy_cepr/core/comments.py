"""The parts of NCE (News Content Extractor; Laber et al., CIKM 2009, spec §3) that other
methods use: its parameters :class:`NCEParams` and its Phase 2, comment removal
(:func:`comment_start`), which CEPR-Article applies to its body.

Phase 2 among the display blocks of a forest U: a graph whose edges join *closely
located* blocks with *similar content* (paper Assumption 2: comments repeat dates,
permalinks …); the first connected component of 3 blocks marks the start of the
comments. The choices where the paper is vague (what a block is, similarity, closeness)
are listed in :mod:`scrapy_cepr.methods.nce`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .page import Page
from .params import check_int, check_real
from .text import CJK_RE, DATE_RE, latin_length

__all__ = ["WORD_RE", "NCEParams", "comment_start", "dated_thread"]

_CJK = CJK_RE.pattern[1:-1]
#: Words of ``bag(·)``: a CJK character, or a run of other Unicode word characters.
WORD_RE = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")
_DIGITS_RE = re.compile(r"\d+")
#: ``WORD_RE`` on text without a CJK character (the ``[CJK]`` branch never matches
#: there, the other is ``\w+``): the simpler pattern is matched faster.
_PLAIN_WORD_RE = re.compile(r"\w+")
#: A date with the word written right before its day ("March 20, 2008"), which
#: :data:`~scrapy_cepr.core.text.DATE_RE` leaves out.
_DATED_RE = re.compile(r"(?:[^\W\d_]+\.?\s)?(?:" + DATE_RE.pattern + ")")
#: Words of a name written on the line above a comment's date (:func:`dated_thread`).
_NAME_WORDS = 4
_COMPONENT_SIZE = 3  # paper, Phase 2 step 3: "a connected component with at least 3 nodes"


@dataclass(frozen=True)
class NCEParams:
    """Validated NCE parameters (paper Sec. 2; fitted values as defaults, see
    :mod:`scrapy_cepr.methods.nce` for the procedure). The paper's symbols are given for each.

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


def _block_words(text: str) -> frozenset[str]:
    """The digit-masked word set of a block (Phase 2).

    >>> sorted(_block_words("Posted 12:30, posted by Ann")), sorted(_block_words("新闻 2024"))
    (['0', 'ann', 'by', 'posted'], ['0', '新', '闻'])
    >>> sorted(_block_words("Café “Zoë” opens at 9:30 — 2nd floor"))
    ['0', '0nd', 'at', 'café', 'floor', 'opens', 'zoë']
    """
    text = text.lower()
    if text.isascii():
        words = frozenset(_word_runs(text))
    elif CJK_RE.search(text):
        words = frozenset(WORD_RE.findall(text))
    else:
        words = frozenset(_word_runs(text))
    # Digits are word characters (and no CJK ones): masking the digit runs of the
    # distinct words gives the words of the masked text, at a fraction of the cost.
    # Only the words that are not all letters change (found by a C-level filter).
    odd = list(itertools.filterfalse(str.isalpha, words))
    if not odd:
        return words
    return words.difference(odd).union([_DIGITS_RE.sub("0", w) for w in odd])


# Every ASCII byte that is no word character (``\w``: letters, digits, ``_``) as a space;
# the other bytes (and so every byte of a multi-byte UTF-8 sequence) unchanged.
_NOT_WORD_ASCII = bytes(32 if c < 128 and not (chr(c).isalnum() or c == 95) else c for c in range(256))


def _word_runs(text: str) -> list[str]:
    r"""The runs of word characters of *text* without a CJK character, in order: what
    ``re.findall(r"\w+", text)`` gives (``\w`` is ``str.isalnum`` or ``_``), found
    mostly in C. The ASCII non-word characters become spaces (one byte translation of the
    UTF-8 form) and the text is split on whitespace (never a word character); a piece
    that still holds a non-word character (a curly quote, a dash) is split by the
    pattern.

    >>> _word_runs("l’été, 2nd—floor_3 (x)")
    ['l', 'été', '2nd', 'floor_3', 'x']
    """
    pieces = text.encode("utf-8", "surrogatepass").translate(_NOT_WORD_ASCII).decode("utf-8", "surrogatepass").split()
    if text.isascii():
        return pieces  # only word characters are left
    out: list[str] = []
    for piece in pieces:
        if piece.isalnum():
            out.append(piece)
        else:  # a non-word character inside, or "_"
            out += _PLAIN_WORD_RE.findall(piece)
    return out


_CELLS = ("td", "th")


def _table_row(page: Page, first: int, last: int) -> bool:
    """Whether the display block of text nodes *first* … *last* is a row of a data table
    (its nodes lie in two cells of it: the page model puts a row whose cells hold no
    block on one line). A table's rows repeat their columns by construction: they are
    the table's own structure, not a comment thread (a thread laid out in a table has
    block content in its cells, so each cell is a block of its own).

    >>> page = Page.from_html("<table><tr><th>N</th><th>Name</th></tr><tr><td>1</td><td>Ann</td></tr></table>"
    ...                       "<p>Ann <b>x</b></p>")
    >>> _table_row(page, 2, 3), _table_row(page, 4, 5)
    (True, False)
    """
    if first == last:
        return False
    owners = page.owners
    cell = _cell(owners[first])
    return cell is not None and cell is not _cell(owners[last])


def _cell(el) -> object | None:
    """The table cell *el* lies in (itself, or its nearest ``td``/``th`` ancestor)."""
    return el if el.tag in _CELLS else next(el.iterancestors(*_CELLS), None)


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
    chain = np.concatenate(([True], ~close)).cumsum()  # chain number, in sorted order
    out = np.empty(n, dtype=bool)
    out[order] = np.bincount(chain)[chain] >= min_blocks
    return out


def comment_start(page: Page, keep: np.ndarray, params: NCEParams) -> int | None:
    """Phase 2: the index of the first text node of the comment region in the forest
    *keep* (bool ``(N,)``), or None when no 3 closely located similar blocks exist
    (see :mod:`scrapy_cepr.methods.nce` for "block", "similar" and "closely
    located").
    """
    idx = keep.nonzero()[0]
    if idx.size == 0:
        return None
    blocks = page.blocks[idx]
    # Positions in ``idx`` where a display block starts, and where it ends.
    starts = np.concatenate(([0], (blocks[1:] != blocks[:-1]).nonzero()[0] + 1))
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
    for b in _has_close_twin(paths, window, _COMPONENT_SIZE).nonzero()[0].tolist():
        words = _block_words(" ".join(map(texts.__getitem__, node_of[block_starts[b] : block_ends[b]])))
        n_words = len(words)
        if n_words < min_words or _table_row(page, node_of[block_starts[b]], node_of[block_ends[b] - 1]):
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


def dated_thread(lines: Sequence[str], paths: Sequence[int], headings: Sequence[bool] | None = None, *,
                 min_records: int = 3, window: int = 8, max_chars: int = 120,
                 similarity: float = 0.4, min_before: float = 0.0, min_before_records: float = 0.0,
                 unit: Callable[[int], object] | None = None) -> tuple[int, int] | None:
    """The span ``(first, end)`` of positions in *lines* of the first comment thread of
    dated records, or None: NCE's Assumption 2 (Laber et al. 2009, Sec. 2: comments
    repeat dates and one template, closely located), read on the author lines of a
    thread that wraps no comment in an element of its own (a ``<dt>`` author line and a
    ``<dd>`` text; a bold author line and the comment's paragraphs, all siblings), which
    lie further apart than Phase 2's window.

    *lines* are display blocks in document order, *paths* their tag path ids,
    *headings* whether each is a heading (``h1``–``h6``; None: none is), ``unit(i)``
    the element holding line *i* (:meth:`~scrapy_cepr.core.page.Page.block_element`;
    None: each line its own).

    * A *header* (author line) has at most *max_chars* characters (Latin-equivalent,
      :func:`~scrapy_cepr.core.text.latin_length`) and holds a date
      (:data:`~scrapy_cepr.core.text.DATE_RE`).
    * A *run* is at least *min_records* headers of one tag path, each 2 to *window*
      lines after the one before (the comment's text between them, no heading: a record
      with a section heading is a round-up's entry), each similar to the one before
      (Jaccard index of their digit-masked word sets, Phase 2's ``bag``, at least
      *similarity*: the template's words and the month are shared, the names are not).
    * Its headers are *signed*: not all the same words outside their dates (the word
      right before a date's day, a month's name, counts as the date). A name above the
      date in the same element (a ``<br>`` between), of at most 4 words, signs it too;
      a teaser's longer text above its date does not. A line repeated with only its
      dates changed is a card's notice.
    * The span runs from the first header (or the name above it) to the end of the last
      comment: the lines after the last header whose tag path is one of the comments'
      text lines', at most ``window - 1``. When none follows, the comments are signed
      below their text ("Posted by Ann at …"), and the span starts at the first
      comment's text (the same paths, at most ``window - 1`` lines before the first
      header).
    * A thread follows a story: a run that starts at the first line is the text's own
      layout (a diary, dated sections, a forum thread whose first post is signed as its
      replies), as in :func:`comment_start`, and so is a span with less than
      *min_before* of the lines' characters before it (a listing's dated entries, a
      forum's posts), or with fewer characters before it than
      *min_before_records* times its mean record (the span's characters over its
      headers): a story is longer than one of its readers' comments, a forum thread's
      title or a live blog's lead is not. The first signed run decides, as NCE's first
      connected component does: when it is refused, a later one (a forum's later posts)
      is not tried.

    >>> lines = ["Story.", "Ann wrote on March 2, 2008:", "Nice.", "Bo wrote on March 3, 2008:",
    ...          "No.", "Too long.", "Cy wrote on March 5, 2008:", "Yes.", "(Reporting by Di)"]
    >>> dated_thread(lines, [1, 2, 3, 2, 3, 3, 2, 3, 1])
    (1, 8)
    >>> dated_thread(["Story.", "Nice.", "Ann, 2 March 2008", "No.", "Bo, 3 March 2008", "Yes.", "Cy, 5 March 2008"],
    ...              [1, 3, 2, 3, 2, 3, 2])  # signed below the text
    (1, 7)
    >>> dated_thread([s.replace("Ann", "Bo").replace("Cy", "Bo") for s in lines], [1, 2, 3, 2, 3, 3, 2, 3, 1]) is None
    True
    >>> dated_thread(lines, [1, 2, 3, 2, 3, 3, 2, 3, 1], min_before=0.1) is None  # "Story." is too short
    True
    >>> forum = [f"{name} wrote on March {day}, 2008:" for name, day in (("Ann", 2), ("Bo", 3), ("Cy", 5), ("Di", 6))]
    >>> dated_thread([line for header in forum for line in (header, "Text.")], [2, 3] * 4) is None  # the first post too
    True
    >>> dated_thread(lines, [1, 2, 3, 2, 3, 3, 2, 3, 1], min_before_records=1.0) is None  # and shorter than a comment
    True
    >>> long = ["A story of three sentences. It goes on. And on."] + lines[1:]
    >>> dated_thread(long, [1, 2, 3, 2, 3, 3, 2, 3, 1], min_before=0.3), dated_thread(long, [1, 2, 3, 2, 3, 3, 2, 3, 1], min_before_records=1.0)
    (None, (1, 8))
    >>> table = ["Story.", "Ann", "March 2, 2008", "Nice.", "Bo", "March 3, 2008", "No.", "Cy", "March 5, 2008", "Yes."]
    >>> paths, cells = [1, 4, 2, 3, 4, 2, 3, 4, 2, 3], [0, 1, 1, 2, 3, 3, 4, 5, 5, 6]
    >>> dated_thread(table, paths) is None, dated_thread(table, paths, unit=cells.__getitem__)  # name<br>date
    (True, (1, 10))
    >>> dated_thread(lines, [1, 2, 3, 2, 3, 3, 4, 3, 1]) is None  # the third header on another path
    True
    >>> dated_thread(lines, [1, 2, 3, 2, 3, 3, 2, 3, 1], [False] * 4 + [True] + [False] * 4) is None  # a headed record
    True
    >>> dated_thread(["2008-03-02 Story, part one", "Ann, 2008-03-03", "Bo, 2008-03-04", "x"], [1, 2, 2, 3]) is None
    True
    """
    # A Latin-equivalent length is at least the length: the long lines are passed over
    # first, and the lines without a digit (most short ones) before the date pattern.
    dated = [i for i in range(len(lines)) if len(lines[i]) <= max_chars and _DIGITS_RE.search(lines[i])
             and DATE_RE.search(lines[i]) and latin_length(lines[i]) <= max_chars]
    runs: dict[int, tuple[list[int], frozenset[str]]] = {}  # per tag path: its open run, the last header's words
    found: list[list[int]] = []
    for i in dated:
        mine = _block_words(lines[i])
        open_run = runs.get(paths[i])
        if open_run is not None:
            run, words = open_run
            inter = len(mine & words)
            if (2 <= i - run[-1] <= window and inter and inter >= similarity * (len(mine) + len(words) - inter)
                    and not (headings is not None and any(headings[run[-1] + 1:i]))):
                run.append(i)
                runs[paths[i]] = (run, mine)
                continue
            if len(run) >= min_records:
                found.append(run)
        runs[paths[i]] = ([i], mine)
    found += [run for run, _ in runs.values() if len(run) >= min_records]
    if not found:
        return None

    def name_above(i: int) -> frozenset[str]:
        """The words of the name above header *i* in its element, or none."""
        if unit is None or i < 2 or unit(i - 1) != unit(i):
            return frozenset()
        name = _block_words(lines[i - 1])
        return name if len(name) <= _NAME_WORDS else frozenset()

    chars = list(map(latin_length, lines)) if min_before > 0.0 or min_before_records > 0.0 else []
    for run in sorted(found):
        if len({_block_words(_DATED_RE.sub(" ", lines[i])) | name_above(i) for i in run}) < 2:
            continue  # unsigned: a notice repeated with its dates changed
        if run[0] == 0:
            return None  # the text's own layout (a forum's first post is signed as its replies)
        headers = set(run)
        text_paths = {paths[i] for i in range(run[0], run[-1]) if i not in headers}
        start, end = run[0] - (1 if name_above(run[0]) else 0), run[-1] + 1
        while end < len(lines) and end - run[-1] < window and paths[end] in text_paths:
            end += 1
        if end == run[-1] + 1:  # signed below the text: the first comment starts before its footer
            while start > 1 and run[0] - start < window - 1 and paths[start - 1] in text_paths:
                start -= 1
        before = sum(chars[:start])
        if (min_before > 0.0 and before < min_before * sum(chars)
                or min_before_records > 0.0 and before < min_before_records * sum(chars[start:end]) / len(run)):
            return None  # the first signed run decides
        return start, end
    return None
