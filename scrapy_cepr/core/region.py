"""The page's element tree as flat arrays, for region selection (CEPR-Article).

:class:`DomTable` lists the elements of ``page.root`` in document (pre-order) order, so
that a subtree ``T_u`` is the index range ``[u, end[u])`` and its text nodes are the
range ``[first_text[u], last_text[u]]``; subtree sums are prefix-sum differences.
It offers what :class:`scrapy_cepr.methods.nce.ElementTable` offers, built with less
Python work per element (one ``getparent`` and one ``getnext`` call each, no loop over
tree levels), since CEPR-Article runs it on every page of a crawl.
"""

from __future__ import annotations

import logging

import numpy as np
from lxml import etree

from .page import Page

__all__ = ["DomTable"]

logger = logging.getLogger(__name__)


class DomTable:
    """The elements of ``page.root`` in pre-order, as arrays of length E:

    * ``elements``: list of E lxml elements; ``tags``: list of E tag names;
    * ``index``: dict element → index;
    * ``parent``: int64 ``(E,)``, index of the parent (-1 for the root);
    * ``end``: int64 ``(E,)``, one past the last descendant (``T_u = [u, end[u])``);
    * ``owner``: int64 ``(N,)``, the element owning each text node (``page.owners``);
    * ``chars`` / ``link_chars``: float64 ``(E,)``, characters of ``text(T_u)`` and of
      its part inside ``<a>``;
    * ``first_text`` / ``last_text``: int64 ``(E,)``, the text nodes of ``T_u``
      (``first_text > last_text`` when ``T_u`` has none).

    >>> page = Page.from_html("<html><body><div><p>One, two.</p><a href='#'>x</a></div><p>Three</p></body></html>")
    >>> t = DomTable(page)
    >>> t.tags, t.parent.tolist(), t.end.tolist()
    (['html', 'body', 'div', 'p', 'a', 'p'], [-1, 0, 1, 2, 2, 1], [6, 6, 5, 4, 5, 6])
    >>> t.chars.tolist(), t.link_chars.tolist(), t.first_text.tolist(), t.last_text.tolist()
    ([15.0, 15.0, 10.0, 9.0, 1.0, 5.0], [1.0, 1.0, 1.0, 0.0, 1.0, 0.0], [0, 0, 0, 0, 1, 2], [2, 2, 1, 0, 1, 2])
    """

    def __init__(self, page: Page) -> None:
        root = page.root
        self.elements = els = list(root.iter(etree.Element)) if root is not None else []
        n = len(els)
        self.tags = [el.tag for el in els]
        index = dict(zip(els, range(n)))
        self.index = index
        index_get = index.get
        parent = [index_get(el.getparent(), -1) for el in els]
        nxt = [index_get(el.getnext(), -1) for el in els]
        # Pre-order: a subtree ends where the next sibling of the element, or of its
        # nearest ancestor that has one, starts.
        end = [n] * n
        for u in range(n):
            s = nxt[u]
            if s >= 0:
                end[u] = s
            elif parent[u] >= 0:
                end[u] = end[parent[u]]
        self.parent = np.array(parent, dtype=np.int64)
        self.end = np.array(end, dtype=np.int64)
        n_text = len(page)
        self.owner = np.fromiter(map(index.__getitem__, page.owners), np.int64, n_text)
        chars = page.char_counts.astype(np.float64)
        self.chars = self.subtree_sum(np.bincount(self.owner, weights=chars, minlength=n))
        self.link_chars = self.subtree_sum(np.bincount(self.owner, weights=chars * page.in_link, minlength=n))
        # T_u is the element range [u, end[u]): reduce the first and last text node
        # owned by each element over it (one sentinel slot for end == E).
        ids = np.arange(n_text, dtype=np.int64)
        first_owned = np.full(n + 1, n_text, dtype=np.int64)
        last_owned = np.full(n + 1, -1, dtype=np.int64)
        np.minimum.at(first_owned, self.owner, ids)
        np.maximum.at(last_owned, self.owner, ids)
        if n:
            bounds = np.empty(2 * n, dtype=np.int64)
            bounds[0::2] = np.arange(n)
            bounds[1::2] = self.end
            self.first_text = np.minimum.reduceat(first_owned, bounds)[0::2]
            self.last_text = np.maximum.reduceat(last_owned, bounds)[0::2]
        else:
            self.first_text = self.last_text = np.zeros(0, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.elements)

    def subtree_sum(self, owned: np.ndarray) -> np.ndarray:
        """Sum over ``T_u`` of a per-element quantity *owned* ``(E,)``: float64 ``(E,)``."""
        prefix = np.concatenate(([0.0], np.cumsum(owned, dtype=np.float64)))
        return prefix[self.end] - prefix[: len(self)]

    def covered(self, roots: np.ndarray) -> np.ndarray:
        """bool ``(E,)``: the element lies in the subtree of an element flagged in *roots*
        (bool ``(E,)``)."""
        idx = np.flatnonzero(roots)
        mark = np.zeros(len(self) + 1, dtype=np.int64)
        np.add.at(mark, idx, 1)
        np.add.at(mark, self.end[idx], -1)
        return np.cumsum(mark[:-1]) > 0

    def descendants_tagged(self, u: int, tags: frozenset[str]) -> np.ndarray:
        """bool ``(E,)``: the elements strictly below *u* whose tag is in *tags* (found by
        lxml in C)."""
        out = np.zeros(len(self), dtype=bool)
        if tags:
            index = self.index
            found = [index[el] for el in self.elements[u].iter(*tags) if el is not self.elements[u]]
            out[found] = True
        return out
