"""Title search: the headline as displayed on the page, not the raw ``<title>``.

How the title is picked (documented in the README too):

1. The *reference* is the page's ``og:title`` / ``twitter:title`` meta, else ``<title>``.
2. The *candidates* are the displayed ``h1``, then ``h2``, then ``h3`` headings of the
   body, in document order (text of 2 to 300 characters).
3. With a reference, the candidate that best matches it wins, if the match is good
   (rapidfuzz ``ratio`` ≥ 80 against the reference or against the reference without
   its site name, see :func:`strip_site_name`).
   Ties go to the higher heading level, then to the earlier heading.
4. With no matching heading, a page that has exactly one ``h1`` uses it; otherwise the
   reference is used, with a trailing or leading site name (`` | Site``, `` - Site``)
   removed from ``<title>``.
5. With neither headings nor reference, the title is None. Never an exception.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from .page import Page

__all__ = ["pick_title", "strip_site_name"]

_SEPARATORS = re.compile(r"\s+(?:[|\-–—:»·•]|::|//)\s+")
_MIN_MATCH = 80.0


def strip_site_name(title: str) -> str:
    """Remove a site name glued to a ``<title>`` with ``" | "``, ``" - "``, ``" – "``, ``" — "``,
    ``" : "``, ``" :: "``, ``" // "``, ``" » "``, ``" · "`` or ``" • "``: the longest part is kept.

    >>> strip_site_name("Storm hits the coast | Daily Planet")
    'Storm hits the coast'
    >>> strip_site_name("News - Sports - Local team wins the cup at last")
    'Local team wins the cup at last'
    >>> strip_site_name("Harbour storm floods the old town :: Coastal Herald")
    'Harbour storm floods the old town'
    """
    parts = _SEPARATORS.split(title)
    return max(parts, key=len) if len(parts) > 1 else title


def pick_title(page: Page) -> tuple[str | None, int | None]:
    """The displayed headline of *page* and the index of its first text node.

    :returns: ``(title, node_index)``; ``node_index`` is None when the title comes from
        the ``<head>`` (no displayed heading), and both are None when the page has no
        title at all.
    """
    candidates = []
    for level, first, end in page.headings:
        text = " ".join(page.texts[first:end])
        if 2 <= len(text) <= 300:
            candidates.append((level, first, text))
    reference = page.meta_title or page.html_title
    if reference and candidates:
        best: tuple[tuple[float, int, int], str, int] | None = None
        refs = {reference.lower(), strip_site_name(reference).lower()}
        for level, first, text in candidates:
            score = max(fuzz.ratio(text.lower(), ref) for ref in refs)
            key = (score, -level, -first)
            if best is None or key > best[0]:
                best = (key, text, first)
        if best is not None and best[0][0] >= _MIN_MATCH:
            return best[1], best[2]
    h1 = [c for c in candidates if c[0] == 1]
    if len(h1) == 1:
        return h1[0][2], h1[0][1]
    if page.meta_title:
        return page.meta_title, None
    if page.html_title:
        return strip_site_name(page.html_title), None
    if candidates:
        level, first, text = min(candidates, key=lambda c: (c[0], c[1]))
        return text, first
    return None, None
