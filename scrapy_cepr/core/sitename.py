"""A site's names and a page's own name in its ``<title>``: pure functions over strings,
and over the parsed tree for the names a page declares or links to its home page with.

The title search (:mod:`scrapy_cepr.core.title`), the metadata (authors that are the
site's name) and the page model (:func:`scrapy_cepr.core.page.promote_displayed_headline`)
read them. A site's name is compared on its letters and digits (:func:`site_key`).
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urljoin, urlsplit

from lxml import etree

__all__ = ["declared_site_names", "drop_site_name", "home_link_names", "is_site_name", "page_name",
           "page_site_names", "site_key", "site_names", "strip_site_name"]

_SEPARATORS = re.compile(r"\s+(?:[|\-–—:»·•]|::|//)\s+")
_SEPARATORS_KEPT = re.compile(r"(\s+(?:[|\-–—:»·•/]|::|//)\s+)")
_MIN_KEY = 4  # a site-name key shorter than this only matches a part exactly
_MAX_EXTRA = 10  # a part may hold its site name plus this many more letters ("Acme Docs")


def site_key(text: str) -> str:
    """Letters and digits of *text*, case-folded (NFKC first)."""
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


def site_names(url: str | None, *declared: str | None) -> set[str]:
    """The comparison keys (:func:`site_key`) of a site's names: the *declared* names
    (``og:site_name``, ``application-name``, a publisher) and the labels of *url*'s host
    name, without ``www`` and the last label (the top-level domain).

    >>> sorted(site_names("https://www.daily-planet.co.uk/news/1", "The Daily Planet"))
    ['co', 'dailyplanet', 'thedailyplanet']
    """
    keys = {site_key(d) for d in declared if d}
    host = (urlsplit(url).hostname or "") if url else ""
    labels = [x for x in host.split(".") if x and x != "www"][:-1]
    keys.update(site_key(x) for x in labels)
    return {k for k in keys if k}


def is_site_name(text: str, names: set[str]) -> bool:
    """Whether *text* is one of the site's *names* (:func:`site_names`): the same letters
    and digits, or, for names of at least 4 of them, a text that holds the name and at most
    10 more (``"Acme Docs"`` on ``acme.com``) or that the name holds (``"Acme"`` for
    ``"Acme Corp"``)."""
    k = site_key(text)
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


def declared_site_names(root: etree._Element | None) -> list[str]:
    """The names the page declares for its site in its ``<head>``: ``og:site_name`` and
    ``application-name`` (empty without a tree)."""
    out: list[str] = []
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
    :func:`home_link_names` resolving the page's other links (most of them).

    >>> [_may_be_index(h) for h in ("/", "../index.html", "..", "/news/story-1", "https://x.example")]
    [True, True, True, False, False]
    """
    last = href.translate(_URL_IGNORED).partition("?")[0].rpartition("/")[2]
    return not last or last.endswith(_INDEX_ENDINGS)


def home_link_names(root: etree._Element | None, url: str | None) -> list[str]:
    """The names of the first links (at most 3) to the site's home page: a link to the
    index of a directory above the page (``/`` on a web server; not the page itself), on
    the same host, without a query or fragment. Its name is its text, else its ``aria-label`` or ``title``, else
    the ``alt`` of an image in it: a site's logo links to its home page and carries its
    name ("Riverside Courier Online"). Empty without the page's URL."""
    if root is None or not url:
        return []
    here = urlsplit(url)
    own_index = _index_dir(here.path)  # the page's own directory, when it is an index
    out: list[str] = []
    for link in root.iter("a"):
        href = (link.get("href") or "").strip()
        if not href or "#" in href or not _may_be_index(href):
            continue
        try:
            there = urlsplit(urljoin(url, href))
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


def page_site_names(root: etree._Element | None, url: str | None, title: str) -> set[str]:
    """The site's names (:func:`site_names`) for reducing *title*: the declared ones and
    the URL's, and the names of the links to the home page (:func:`home_link_names`)
    only when they can matter, i.e. *title* has a separator (" | ", " - " …) or there
    is no other name (without a separator :func:`page_name` and :func:`drop_site_name`
    read no name; reading the links costs a pass over them)."""
    names = site_names(url, *declared_site_names(root))
    if not names or _SEPARATORS_KEPT.search(title):
        names |= site_names(None, *home_link_names(root, url))
    return names
