"""The page's element tree as flat arrays, for region selection (CEPR-Article).

:class:`DomTable` lists the elements of ``page.root`` in document (pre-order) order, so
that a subtree ``T_u`` is the index range ``[u, end[u])`` and its text nodes are the
range ``[first_text[u], last_text[u]]``; subtree sums are prefix-sum differences.
It is the element table of every method that works on subtrees (NCE, where the paper's
node ids are its indices; CEPR-Article; wang2009), built with little Python work per
element, since CEPR-Article runs it on every page of a crawl: lxml lists
the elements and their parents in C (``iter``, ``map`` over ``getparent``), the
children counts are a ``bincount`` of the parents, and the subtree ends follow from the
counts in pre-order with one numpy sort (:func:`preorder_ends`); no Python loop over the
elements.
"""

from __future__ import annotations

import itertools
import logging
import operator  # noqa: F401 - the doctests use it
from functools import cached_property
from operator import attrgetter

import numpy as np
from lxml import etree

from .page import Page

__all__ = ["DomTable", "preorder_ends", "preorder_links"]

logger = logging.getLogger(__name__)

_TAG = attrgetter("tag")
_GETPARENT = etree._Element.getparent


def preorder_ends(n_children: np.ndarray) -> np.ndarray:
    """``end``, int64 ``(M,)``, of a tree given by the number of children of each node in
    pre-order (one root first): ``T_u`` is ``[u, end[u])``.

    With ``P[k] = Σ_{v<k} (n_children[v] − 1)`` (the nodes still to visit before k, less
    one; ``P[M] = −1``), P stays ≥ ``P[u]`` inside ``T_u`` and falls by one at
    ``end[u]``, so ``end[u]`` is the first ``v > u`` with ``P[v] = P[u] − 1`` (P never
    falls by more than one per step): one ``searchsorted`` over keys sorted by
    (value, position).

    :raises ValueError: the counts do not describe one tree (``Σ n_children ≠ M − 1``).

    >>> preorder_ends(np.array([2, 1, 0, 0])).tolist()  # r(a(x), b)
    [4, 3, 3, 4]
    """
    m = int(n_children.size)
    if m == 0:
        return np.zeros(0, np.int64)
    n_children = n_children.astype(np.int64, copy=False)
    if int(n_children.sum()) != m - 1 or int(n_children.min()) < 0:
        raise ValueError(f"children counts of {m} nodes do not describe one tree")
    pos = np.arange(m + 1, dtype=np.int64)
    pending = np.zeros(m + 1, dtype=np.int64)
    (n_children - 1).cumsum(out=pending[1:])
    # Keys (P + 1, position) in one int64, sorted: the first key above (P[u] − 1 + 1, u)
    # is the first position after u whose P is P[u] − 1.
    key = (pending + 1) * (m + 1) + pos
    order = np.argsort(key)
    keys = key[order]
    # The searched values, key − (m + 1), are searched in the keys' sorted order, which
    # numpy's binary search does faster than in position order.
    found = np.empty(m + 1, dtype=np.int64)
    found[order] = keys.searchsorted(keys - (m + 1), side="right")
    return keys[found[:m]] % (m + 1)


def preorder_links(n_children: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(parent, end)`` of a tree given by the number of children of each node in
    pre-order (one root first), int64 ``(M,)`` each: ``parent[0] = -1`` and ``T_u`` is
    ``[u, end[u])`` (:func:`preorder_ends`).

    The depth is a prefix sum (+1 after each inner node, −1 at its end), and
    ``parent[u]`` is the last node before u one level up: one ``searchsorted`` over keys
    sorted by (depth, position).

    :raises ValueError: the counts do not describe one tree (``Σ n_children ≠ M − 1``).

    >>> parent, end = preorder_links(np.array([2, 1, 0, 0]))  # r(a(x), b)
    >>> parent.tolist(), end.tolist()
    ([-1, 0, 1, 0], [4, 3, 3, 4])
    """
    end = preorder_ends(n_children)
    m = int(end.size)
    if m == 0:
        return np.zeros(0, np.int64), end
    pos = np.arange(m, dtype=np.int64)
    inner = n_children.nonzero()[0]
    depth = (np.bincount(inner + 1, minlength=m + 1)[:m] - np.bincount(end[inner], minlength=m + 1)[:m]).cumsum()
    # Keys (depth, position), sorted: the last key below (depth[u] − 1, u) is u's parent.
    keys = np.sort(depth * m + pos)
    parent = keys[np.maximum(keys.searchsorted((depth - 1) * m + pos) - 1, 0)] % m
    parent[0] = -1
    return parent, end


def _elements(page: Page) -> tuple[list, np.ndarray | None, np.ndarray | None]:
    """The elements of *page*'s tree in pre-order, ``list(root.iter(etree.Element))``,
    with the index of each one's parent (int64, -1 for the root) and of each text node's
    owner when the page model's walk gave them, else None and None.

    The page model's walk already listed the nodes of ``<body>``'s subtree
    (:attr:`Page.body_nodes`) and their parents; when all of them are elements (no tag
    path ``#`` of a comment or processing instruction), they are reused and only the
    nodes outside ``<body>`` (the ``<head>``) are listed again and their parents looked up.

    >>> page = Page.from_html("<html><head><title>T</title></head><body><p>a <b>b</b></p><ul><li>c</li></ul></body></html>")
    >>> els, parent, owner = _elements(page)
    >>> [el.tag for el in els], parent.tolist(), owner.tolist()
    (['html', 'head', 'title', 'body', 'p', 'b', 'ul', 'li'], [-1, 0, 1, 0, 3, 4, 3, 6], [4, 5, 7])
    >>> all(map(operator.is_, els, page.root.iter(etree.Element)))
    True
    """
    root = page.root
    if root is None:
        return [], None, None
    body_nodes = page.body_nodes
    if not body_nodes or "#" in page.path_names or page.body_parents.size != len(body_nodes):
        return list(root.iter(etree.Element)), None, None
    body = body_nodes[0]
    if body.getparent() is not root:
        return list(root.iter(etree.Element)), None, None
    els = [root]
    parts = [np.full(1, -1, dtype=np.int64)]
    body_at = 0
    for child in root:
        at = len(els)
        if child is body:
            body_at = at
            els += body_nodes
            parents = page.body_parents + at
            parents[0] = 0
        else:
            sub = list(child.iter(etree.Element))
            els += sub
            local = dict(zip(sub, range(at, at + len(sub))))
            local[root] = 0
            parents = np.fromiter(map(local.__getitem__, map(_GETPARENT, sub)), np.int64, len(sub))
        parts.append(parents)
    return els, np.concatenate(parts), page.owner_nodes + body_at


class DomTable:
    """The elements of ``page.root`` in pre-order, as arrays of length E:

    * ``elements``: list of E lxml elements; ``tags``: list of E tag names (built on
      first access);
    * ``index``: dict element → index (built on first access);
    * ``parent``: int64 ``(E,)``, index of the parent (-1 for the root);
    * ``n_children``: int64 ``(E,)``, number of element children;
    * ``end``: int64 ``(E,)``, one past the last descendant (``T_u = [u, end[u])``);
    * ``owner``: int64 ``(N,)``, the element owning each text node (``page.owners``);
    * ``chars`` / ``link_chars``: float64 ``(E,)``, characters of ``text(T_u)`` and of
      its part inside ``<a>`` (``chars`` built on first access);
    * ``first_text`` / ``last_text``: int64 ``(E,)``, the text nodes of ``T_u``
      (``first_text > last_text`` when ``T_u`` has none; built on first access,
      :meth:`text_range` gives them for one element).

    Comments, processing instructions and entities (the page parser drops them) are no
    elements: the links are those of the elements (a node's parent is an element).

    >>> page = Page.from_html("<html><body><div><p>One, two.</p><a href='#'>x</a></div><p>Three</p></body></html>")
    >>> t = DomTable(page)
    >>> t.tags, t.parent.tolist(), t.end.tolist(), t.n_children.tolist()
    (['html', 'body', 'div', 'p', 'a', 'p'], [-1, 0, 1, 2, 2, 1], [6, 6, 5, 4, 5, 6], [1, 2, 2, 0, 0, 0])
    >>> t.tag_codes(np.array([False, False, True, True, True, True])).tolist()
    [-1, -1, 0, 1, 2, 1]
    >>> t.chars.tolist(), t.link_chars.tolist(), t.first_text.tolist(), t.last_text.tolist()
    ([15.0, 15.0, 10.0, 9.0, 1.0, 5.0], [1.0, 1.0, 1.0, 0.0, 1.0, 0.0], [0, 0, 0, 0, 1, 2], [2, 2, 1, 0, 1, 2])
    """

    def __init__(self, page: Page) -> None:
        els, parent, owner = _elements(page)
        self.elements = els
        n = len(els)
        if parent is None or owner is None:
            # Parents by lxml (in C); the page model's walk gives them for <body>.
            index = self.index
            parent = np.full(n, -1, dtype=np.int64)
            parent[1:] = np.fromiter(map(index.__getitem__, map(_GETPARENT, els[1:])), np.int64, n - 1 if n else 0)
            owner = np.fromiter(map(index.__getitem__, page.owners), np.int64, len(page))
        # The element children counts from the parents (comments and processing
        # instructions are no elements), the subtree ends by prefix sums.
        self.parent = parent
        self.n_children = np.bincount(parent[1:], minlength=n)
        self.end = preorder_ends(self.n_children)
        self.owner = owner
        self._char_counts = page.char_counts.astype(np.float64)
        self.link_chars = self.subtree_sum(
            np.bincount(self.owner, weights=self._char_counts * page.in_link, minlength=n)
        )

    def __len__(self) -> int:
        return len(self.elements)

    @cached_property
    def index(self) -> dict:
        """Element → its index (built on first access)."""
        return dict(zip(self.elements, range(len(self.elements))))

    @cached_property
    def chars(self) -> np.ndarray:
        """Characters of ``text(T_u)``, float64 ``(E,)`` (built on first access)."""
        return self.subtree_sum(np.bincount(self.owner, weights=self._char_counts, minlength=len(self)))

    @cached_property
    def first_text(self) -> np.ndarray:
        """The first text node of each ``T_u``, int64 ``(E,)`` (N when ``T_u`` has none;
        built on first access, see :meth:`text_range` for one element)."""
        return self._reduce_owned(np.minimum, len(self.owner))

    @cached_property
    def last_text(self) -> np.ndarray:
        """The last text node of each ``T_u``, int64 ``(E,)`` (-1 when ``T_u`` has none)."""
        return self._reduce_owned(np.maximum, -1)

    def _reduce_owned(self, ufunc: np.ufunc, empty: int) -> np.ndarray:
        # T_u is the element range [u, end[u]): reduce the text nodes owned by each
        # element over it (one sentinel slot for end == E).
        n = len(self)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        owned = np.full(n + 1, empty, dtype=np.int64)
        ufunc.at(owned, self.owner, np.arange(self.owner.size, dtype=np.int64))
        bounds = np.empty(2 * n, dtype=np.int64)
        bounds[0::2] = np.arange(n)
        bounds[1::2] = self.end
        return ufunc.reduceat(owned, bounds)[0::2]

    def text_range(self, u: int) -> tuple[int, int]:
        """``(first_text[u], last_text[u])`` for one element, without the arrays: the
        text nodes whose owner lies in ``[u, end[u])`` (``(N, -1)`` when none).

        >>> t = DomTable(Page.from_html("<div><p>One</p><p>Two <b>three</b> four</p></div>"))
        >>> t.text_range(4), t.text_range(5), t.text_range(0)
        ((1, 3), (2, 2), (0, 3))
        """
        inside = ((self.owner >= u) & (self.owner < self.end[u])).nonzero()[0]
        if inside.size == 0:
            return self.owner.size, -1
        return int(inside[0]), int(inside[-1])

    @cached_property
    def tags(self) -> list[str]:
        """The tag name of each element, list of E strings."""
        return list(map(_TAG, self.elements))

    def tag_codes(self, which: np.ndarray) -> np.ndarray:
        """The tags of the elements flagged in *which* (bool ``(E,)``) as integers, for
        equality tests in numpy: int64 ``(E,)``, equal codes for equal tags (a tag's
        code is the rank of its first flagged element), -1 for the elements not flagged.

        Reading a tag from lxml builds a string, the largest per-element cost of the
        table; callers ask only for the elements they compare.
        """
        out = np.full(len(self), -1, dtype=np.int64)
        idx = which.nonzero()[0]
        codes: dict[str, int] = {}
        tags = map(_TAG, map(self.elements.__getitem__, idx.tolist()))
        out[idx] = np.fromiter(map(codes.setdefault, tags, itertools.count()), np.int64, idx.size)
        return out

    def subtree_sum(self, owned: np.ndarray) -> np.ndarray:
        """Sum over ``T_u`` of a per-element quantity *owned* ``(E,)``: float64 ``(E,)``."""
        prefix = np.concatenate(([0.0], owned.cumsum(dtype=np.float64)))
        return prefix[self.end] - prefix[: len(self)]

    def children(self, u: int) -> np.ndarray:
        """Indices of the element children of *u* (E-level ids, document order).

        >>> DomTable(Page.from_html("<div><p>One</p><p>Two</p></div>")).children(2).tolist()
        [3, 4]
        """
        kids = []
        c, end = u + 1, int(self.end[u])
        while c < end:
            kids.append(c)
            c = int(self.end[c])
        return np.array(kids, dtype=np.int64)

    def link_density(self, u: np.ndarray | int) -> np.ndarray | float:
        """``linkdensity(T_u)`` (NCE, Laber et al. 2009): link characters / characters
        of ``text(T_u)``, 0 for a subtree without text."""
        chars = self.chars[u]
        return np.where(chars > 0, self.link_chars[u] / np.maximum(chars, 1), 0.0)

    def covered(self, roots: np.ndarray) -> np.ndarray:
        """bool ``(E,)``: the element lies in the subtree of an element flagged in *roots*
        (bool ``(E,)``)."""
        idx = roots.nonzero()[0]
        mark = np.zeros(len(self) + 1, dtype=np.int64)
        np.add.at(mark, idx, 1)
        np.add.at(mark, self.end[idx], -1)
        return mark[:-1].cumsum() > 0

    def descendants_tagged(self, u: int, tags: frozenset[str]) -> np.ndarray:
        """bool ``(E,)``: the elements strictly below *u* whose tag is in *tags* (found by
        lxml in C)."""
        out = np.zeros(len(self), dtype=bool)
        if tags:
            index = self.index
            found = [index[el] for el in self.elements[u].iter(*tags) if el is not self.elements[u]]
            out[found] = True
        return out
