"""Title search: the headline as displayed on the page, not the raw ``<title>``.

How the title is picked (documented in the README too):

1. The *reference* is the page's ``og:title`` / ``twitter:title`` meta, else ``<title>``.
2. The *candidates* are the displayed ``h1``, then ``h2``, then ``h3`` headings of the
   body, in document order (text of 2 to 300 characters with at least one letter: a
   heading of digits and signs only is a count, a score or a price, "94", never a title).
3. With a reference, the candidate that best matches it wins, if the match is good
   (rapidfuzz ``ratio`` ≥ 80 against the reference or against the reference without
   its site name, see :func:`strip_site_name`).
   Ties go to the higher heading level, then to the earlier heading.
4. With no matching heading, a page that has exactly one ``h1`` uses it (``h1`` elements
   with the same letters and digits count once: a headline repeated for another screen
   size), unless, below the site's home page, that ``h1`` is the site's name (a logo:
   the same letters and digits as a declared name or a label of the URL's host name);
   otherwise the
   reference is used, reduced to the page's own name (:func:`page_name`: its parts that
   are the site's name dropped, then the first part of what is left: a ``<title>`` or
   ``og:title`` is written "Page | Site" or "Page | Section | Site").
5. With neither headings nor reference, the title is None. Never an exception.
6. Whatever its origin, a leading or trailing part of the title that is the site's own
   name (``og:site_name``, ``application-name`` or a label of the URL's host name, compared
   on their letters and digits, see :func:`drop_site_name`) is removed, as is a
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
   (:func:`page_name`, then step 6) instead of the heading; the heading stays the
   headline node that the methods anchor on. Measured on WCXB dev in docs/formats.rst.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urljoin, urlsplit

from rapidfuzz import fuzz

from .page import Page
from .text import drop_invisible

__all__ = ["drop_site_name", "page_name", "pick_title", "site_names", "strip_site_name"]

_SEPARATORS = re.compile(r"\s+(?:[|\-–—:»·•]|::|//)\s+")
_SEPARATORS_KEPT = re.compile(r"(\s+(?:[|\-–—:»·•/]|::|//)\s+)")
_MIN_MATCH = 80.0
_SENTENCE_END = set("?!.)]}\"'’”»")
_MIN_KEY = 4  # a site-name key shorter than this only matches a part exactly
_MAX_EXTRA = 10  # a part may hold its site name plus this many more letters ("Acme Docs")
_MIN_CAPS = 8  # letters of a heading in capitals only before its case is restored (not "NASA")
_HEADING_TAGS = frozenset({"h1", "h2", "h3"})
_NOT_WORDS = frozenset({"button", "svg"})  # elements whose text is not part of a heading


def _key(text: str) -> str:
    """Letters and digits of *text*, case-folded (NFKC first)."""
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


def site_names(url: str | None, *declared: str | None) -> set[str]:
    """The comparison keys (:func:`_key`) of a site's names: the *declared* names
    (``og:site_name``, ``application-name``, a publisher) and the labels of *url*'s host
    name, without ``www`` and the last label (the top-level domain).

    >>> sorted(site_names("https://www.daily-planet.co.uk/news/1", "The Daily Planet"))
    ['co', 'dailyplanet', 'thedailyplanet']
    """
    keys = {_key(d) for d in declared if d}
    host = (urlsplit(url).hostname or "") if url else ""
    labels = [x for x in host.split(".") if x and x != "www"][:-1]
    keys.update(_key(x) for x in labels)
    return {k for k in keys if k}


def is_site_name(text: str, names: set[str]) -> bool:
    """Whether *text* is one of the site's *names* (:func:`site_names`): the same letters
    and digits, or, for names of at least 4 of them, a text that holds the name and at most
    10 more (``"Acme Docs"`` on ``acme.com``) or that the name holds (``"Acme"`` for
    ``"Acme Corp"``)."""
    k = _key(text)
    if not k:
        return False
    for name in names:
        if k == name:
            return True
        if len(name) >= _MIN_KEY and len(k) >= _MIN_KEY and (
                (name in k and len(k) <= len(name) + _MAX_EXTRA) or k in name):
            return True
    return False


def drop_site_name(title: str, names: set[str]) -> str:
    """*title* without its leading and trailing parts (split at ``" | "``, ``" - "`` …)
    that are the site's name (:func:`is_site_name`); never empty.

    >>> drop_site_name("Storm hits the coast | Daily Planet", {"dailyplanet"})
    'Storm hits the coast'
    >>> drop_site_name("Planet Earth: a guide - Daily Planet", {"dailyplanet"})
    'Planet Earth: a guide'
    >>> drop_site_name("Daily Planet", {"dailyplanet"})
    'Daily Planet'
    """
    parts = _SEPARATORS_KEPT.split(title)  # text, sep, text, sep, text …
    while len(parts) >= 3 and is_site_name(parts[-1], names):
        parts = parts[:-2]
    while len(parts) >= 3 and is_site_name(parts[0], names):
        parts = parts[2:]
    return "".join(parts).strip() or title


def _drop_permalink_mark(text: str) -> str:
    """A heading without its trailing permalink mark (``"Install ¶"`` -> ``"Install"``)."""
    head, _, last = text.rpartition(" ")
    if head.strip() and 1 <= len(last) <= 2 and not (set(last) & _SENTENCE_END) and all(
            unicodedata.category(c)[0] in "SP" for c in last):
        return head.rstrip()
    return text


def _declared_site_names(page: Page) -> list[str]:
    out: list[str] = []
    root = page.root
    if root is None:
        return out
    for meta in root.iterfind("head/meta"):
        name = meta.get("property") or meta.get("name")
        if name in ("og:site_name", "application-name") and meta.get("content"):
            out.append(meta.get("content"))
    return out


_INDEX_FILES = frozenset({"", "index.html", "index.htm", "index.php", "default.aspx"})
# What a link's href ends with, before any query, when its URL's path can end in one of
# _INDEX_FILES: one of them, or a dot segment ("." and ".."); "" ends with anything.
_INDEX_ENDINGS = (".", *sorted(_INDEX_FILES - {""}))
_URL_IGNORED = str.maketrans("", "", "\t\r\n")  # urlsplit drops them anywhere in a URL
_HOME_LINKS = 3  # links to the home page read for the site's name (the logo comes first)
_MAX_HOME_NAME = 60  # characters of a home link's name


def _index_dir(path: str) -> str | None:
    """The directory a URL path names when it is a directory or its index file
    (``/`` or ``/index.html`` -> ``/``; ``/a/b.html`` -> None)."""
    head, _, last = path.rpartition("/")
    return head + "/" if path.startswith("/") and last in _INDEX_FILES else None


def _may_be_index(href: str) -> bool:
    """Whether *href* can resolve to a path that ends in an index file or ``/``: the last
    segment of its path (what follows its last ``/``, before ``?``) is one, ends with one
    (``http:index.html``) or is a dot segment. A string test that spares
    :func:`_home_link_names` resolving the page's other links (most of them).

    >>> [_may_be_index(h) for h in ("/", "../index.html", "..", "/news/story-1", "https://x.example")]
    [True, True, True, False, False]
    """
    last = href.translate(_URL_IGNORED).partition("?")[0].rpartition("/")[2]
    return not last or last.endswith(_INDEX_ENDINGS)


def _home_link_names(page: Page) -> list[str]:
    """The names of the first links (at most 3) to the site's home page: a link to the
    index of a directory above the page (``/`` on a web server; not the page itself), on
    the same host, without a query or fragment. Its name is its text, else its ``aria-label`` or ``title``, else
    the ``alt`` of an image in it: a site's logo links to its home page and carries its
    name ("Riverside Courier Online"). Empty without the page's URL."""
    root = page.root
    if root is None or not page.url:
        return []
    here = urlsplit(page.url)
    own_index = _index_dir(here.path)  # the page's own directory, when it is an index
    out: list[str] = []
    for link in root.iter("a"):
        href = (link.get("href") or "").strip()
        if not href or "#" in href or not _may_be_index(href):
            continue
        try:
            there = urlsplit(urljoin(page.url, href))
        except ValueError:
            continue
        home = _index_dir(there.path)
        if (home is None or there.query or there.hostname != here.hostname or not here.path.startswith(home)
                or own_index == home):  # a link to the page itself
            continue
        text = " ".join("".join(link.itertext()).split()) or link.get("aria-label") or link.get("title") or ""
        if not text:
            text = next((img.get("alt") or "" for img in link.iter("img") if img.get("alt")), "")
        text = " ".join(text.split())
        if text and len(text) <= _MAX_HOME_NAME:
            out.append(text)
        if len(out) >= _HOME_LINKS:
            break
    return out


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


def page_name(title: str, names: set[str]) -> str:
    """The page's own name in a ``<title>`` or ``og:title``: the parts that are the site's
    name (*names*, :func:`site_names`) dropped from both ends (:func:`drop_site_name`),
    then the first of the parts left (split at ``" | "``, ``" - "`` … as
    :func:`strip_site_name`, and at ``" / "``): "Page | Section | Site" is the convention, the page's name
    first and what it belongs to after it. Never empty.

    >>> page_name("Dental Care | Northside Clinic", {"northsideclinic"})
    'Dental Care'
    >>> page_name("Charges | Acme API Reference", {"acme"})
    'Charges'
    >>> page_name("Acme | Payments for the internet", {"acme"})
    'Payments for the internet'
    >>> page_name("Storm hits the coast", {"dailyplanet"})
    'Storm hits the coast'
    """
    rest = drop_site_name(title, names) if names else title
    # (Also at " / ", "Thread / Board"; strip_site_name, which the headings are matched
    # against, does not split there.)
    first = _SEPARATORS_KEPT.split(rest)[0].strip()
    return first or rest


def _page_site_names(page: Page, title: str) -> set[str]:
    """The site's names (:func:`site_names`) for reducing *title*: the declared ones and
    the URL's, and the names of the links to the home page (:func:`_home_link_names`)
    only when they can matter, i.e. *title* has a separator (" | ", " - " …) or there
    is no other name (without a separator :func:`page_name` and :func:`drop_site_name`
    read no name; reading the links costs a pass over them)."""
    names = site_names(page.url, *_declared_site_names(page))
    if not names or _SEPARATORS_KEPT.search(title):
        names |= site_names(None, *_home_link_names(page))
    return names


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
    names = _page_site_names(page, title)
    if from_head:
        title = page_name(title, names)
    if names:
        title = drop_site_name(title, names)
    return drop_invisible(title) or title, index


def _restore_case(heading: str, reference: str) -> str:
    """*heading* in the reference's letter case when the heading is written in capitals
    only (which keeps no case) and the reference, with or without its site name
    (:func:`strip_site_name`), has the same letters and digits in mixed case.

    >>> _restore_case("TIPS FOR ONLINE SUCCESS", "Tips for Online Success | College")
    'Tips for Online Success'
    >>> _restore_case("NASA", "Nasa")
    'NASA'
    """
    cased = [c for c in heading if c.isalpha() and c.lower() != c.upper()]
    if len(cased) < _MIN_CAPS or any(c.islower() for c in cased):
        return heading
    for ref in (reference, strip_site_name(reference)):
        if _key(ref) == _key(heading) and any(c.islower() for c in ref):
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
    h1 = list({_key(c[2]): c for c in reversed(candidates) if c[0] == 1}.values())
    if len(h1) == 1 and not (reference and _below_home(page.url)
                             and _key(h1[0][2]) in site_names(page.url, *_declared_site_names(page))):
        return h1[0][2], h1[0][1]
    if reference:
        return reference, None  # reduced to the page's name by pick_title
    if candidates:
        level, first, text = min(candidates, key=lambda c: (c[0], c[1]))
        return text, first
    return None, None
