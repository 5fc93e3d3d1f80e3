"""Title search: the headline as displayed on the page, not the raw ``<title>``.

How the title is picked (documented in the README too):

1. The *reference* is the page's ``og:title`` / ``twitter:title`` meta, else ``<title>``.
2. The *candidates* are the displayed ``h1``, then ``h2``, then ``h3`` headings of the
   body, in document order (text of 2 to 300 characters with at least one letter: a
   heading of digits and signs only is a count, a score or a price, "94", never a title).
3. With a reference, the candidate that best matches it wins, if the match is good
   (rapidfuzz ``ratio`` ≥ 80 against the reference or against the reference without
   its site name, see :func:`~scrapy_cepr.core.sitename.strip_site_name`).
   Ties go to the higher heading level, then to the earlier heading.
4. With no matching heading, a page that has exactly one ``h1`` uses it (``h1`` elements
   with the same letters and digits count once: a headline repeated for another screen
   size), unless, below the site's home page, that ``h1`` is the site's name (a logo:
   the same letters and digits as a declared name or a label of the URL's host name);
   otherwise the
   reference is used, reduced to the page's own name (:func:`~scrapy_cepr.core.sitename.page_name`: its parts that
   are the site's name dropped, then the first part of what is left: a ``<title>`` or
   ``og:title`` is written "Page | Site" or "Page | Section | Site").
5. With neither headings nor reference, the title is None. Never an exception.
6. Whatever its origin, a leading or trailing part of the title that is the site's own
   name (``og:site_name``, ``application-name`` or a label of the URL's host name, compared
   on their letters and digits, see :func:`~scrapy_cepr.core.sitename.drop_site_name`) is removed, as is a
   permalink mark that a heading carries at its end (a last token of one or two symbols
   or punctuation marks such as ``¶`` or ``#``, other than ``?``, ``!``, ``.``, closing
   brackets and quotes, written as a link: an emoji that ends a headline stays). The title
   is never emptied. A heading written in capitals only
   takes the letter case of a reference with the same letters and digits (the capitals
   keep no case; "TIPS FOR ONLINE SUCCESS" -> "Tips for Online Success"). Characters that
   render nothing (:func:`~scrapy_cepr.core.text.drop_invisible`: a soft hyphen, a zero
   width space or no-break space) are dropped, as from the body.
7. On a page that the page-type classifier calls ``service`` (a company's or product's
   landing page, :mod:`scrapy_cepr.core.pagetype`), whose headings are slogans ("You
   deserve to be happy."), the title is the reference reduced to the page's own name
   (:func:`~scrapy_cepr.core.sitename.page_name`, then step 6) instead of the heading; the heading stays the
   headline node that the methods anchor on. Measured on WCXB dev in docs/formats.rst.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

from rapidfuzz import fuzz

from .page import Page
from .sitename import (
    declared_site_names,
    drop_site_name,
    page_name,
    page_site_names,
    site_key,
    site_names,
    strip_site_name,
)
from .text import drop_invisible

__all__ = ["pick_title"]

_MIN_MATCH = 80.0
_SENTENCE_END = set("?!.)]}\"'’”»")
_MIN_CAPS = 8  # letters of a heading in capitals only before its case is restored (not "NASA")
_HEADING_TAGS = frozenset({"h1", "h2", "h3"})
_NOT_WORDS = frozenset({"button", "svg"})  # elements whose text is not part of a heading


def _drop_permalink_mark(text: str) -> str:
    """A heading without its trailing permalink mark (``"Install ¶"`` -> ``"Install"``)."""
    head, _, last = text.rpartition(" ")
    if head.strip() and 1 <= len(last) <= 2 and not (set(last) & _SENTENCE_END) and all(
            unicodedata.category(c)[0] in "SP" for c in last):
        return head.rstrip()
    return text


def pick_title(page: Page) -> tuple[str | None, int | None]:
    """The displayed headline of *page* and the index of its first text node.

    :returns: ``(title, node_index)``; ``node_index`` is None when the title comes from
        the ``<head>`` (no displayed heading), and both are None when the page has no
        title at all. On a ``service`` page (step 7 of the module docstring) the title
        is the ``<head>``'s while ``node_index`` stays the displayed heading's.
    """
    title, index = _pick(page)
    if not title:
        return title, index
    reference = page.meta_title or page.html_title
    from_head = index is None  # the <head>'s title, reduced to the page's name below
    if index is not None and reference:
        title = _restore_case(title, reference)
        if _is_service_page(page):
            title, from_head = reference, True
    names = page_site_names(page.root, page.url, title)
    if from_head:
        title = page_name(title, names)
    if names:
        title = drop_site_name(title, names)
    return drop_invisible(title) or title, index


def _restore_case(heading: str, reference: str) -> str:
    """*heading* in the reference's letter case when the heading is written in capitals
    only (which keeps no case) and the reference, with or without its site name
    (:func:`~scrapy_cepr.core.sitename.strip_site_name`), has the same letters and digits in mixed case.

    >>> _restore_case("TIPS FOR ONLINE SUCCESS", "Tips for Online Success | College")
    'Tips for Online Success'
    >>> _restore_case("NASA", "Nasa")
    'NASA'
    """
    cased = [c for c in heading if c.isalpha() and c.lower() != c.upper()]
    if len(cased) < _MIN_CAPS or any(c.islower() for c in cased):
        return heading
    for ref in (reference, strip_site_name(reference)):
        if site_key(ref) == site_key(heading) and any(c.islower() for c in ref):
            return " ".join(ref.split())
    return heading


def _is_service_page(page: Page) -> bool:
    """Whether the page-type classifier (:func:`scrapy_cepr.core.pagetype.page_type`)
    calls *page* a ``service`` page (a product or company landing page)."""
    from .pagetype import page_type

    return page_type(page) == "service"


def _displayed_nodes(page: Page, first: int, end: int) -> list[int]:
    """The indexes of the text nodes ``first:end`` of a heading that are words of it: not
    those inside a ``<button>`` (a control: "Copy item path"), an element with the
    ``hidden`` attribute (not rendered, HTML's ``hidden``) or an ``<svg>`` (a graphic's
    title: "Artboard Created with Sketch.")."""
    kept = []
    for i in range(first, end):
        el = page.owners[i] if i < len(page.owners) else None
        while el is not None and el.tag not in _HEADING_TAGS:
            if el.tag in _NOT_WORDS or el.get("hidden") is not None:
                break
            el = el.getparent()
        else:
            kept.append(i)
    return kept


def _below_home(url: str | None) -> bool:
    """Whether *url* is a page below its site's home page (a path other than ``/``, or a
    query): there, a heading that is the site's name is its logo, not the page's name.

    >>> _below_home("https://forum.example/viewtopic.php?id=3"), _below_home("https://blog.example/")
    (True, False)
    """
    if not url:
        return False
    parts = urlsplit(url)
    return parts.path not in ("", "/") or bool(parts.query)


def _pick(page: Page) -> tuple[str | None, int | None]:
    candidates = []
    for level, first, end in page.headings:
        kept = _displayed_nodes(page, first, end)
        text = " ".join(page.texts[i] for i in kept)
        if kept and page.in_link[kept[-1]]:  # a permalink mark is a link to the heading
            text = _drop_permalink_mark(text)
        if 2 <= len(text) <= 300 and any(c.isalpha() for c in text):
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
    # The same headline twice (a layout for small screens and one for large ones) is one h1.
    h1 = list({site_key(c[2]): c for c in reversed(candidates) if c[0] == 1}.values())
    if len(h1) == 1 and not (reference and _below_home(page.url)
                             and site_key(h1[0][2]) in site_names(page.url, *declared_site_names(page.root))):
        return h1[0][2], h1[0][1]
    if reference:
        return reference, None  # reduced to the page's name by pick_title
    if candidates:
        level, first, text = min(candidates, key=lambda c: (c[0], c[1]))
        return text, first
    return None, None
