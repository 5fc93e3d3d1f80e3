"""HTML source → a safe lxml tree laid out as a browser displays it.

libxml2's HTML parser (through lxml) is fast and safe (no network, no entity expansion),
but a few of its quirks lose text that every browser shows. This module parses with it
and repairs, after the fact and only when a cheap check finds one, the three ways a page
can lose its body (issue "parse as a browser would"):

1. **A ``<head>`` that swallowed the body.** An unknown element or table markup inside
   ``<head>`` (``<fb:app>``, ``<td>`` …) stays open in the head, and libxml2 then nests
   ``<body>`` *inside* the head: the tree has no ``html/body``. A browser (WHATWG HTML,
   §13.2.6.4.4 "in head" insertion mode) closes the head at the first element that is not
   head metadata and puts it, and all that follows, in the body. :func:`repair_layout`
   does the same: the displayed content of the head moves to the start of the body;
   ``title``, ``meta``, ``link`` … stay in the head.
2. **A tree cut off early.** Content after an early ``</html>`` becomes a second root
   element, and content after an early ``</body>`` a child of ``<html>`` after the body;
   both are outside ``html/body``. A browser puts them in the body ("after body" and
   "after after body" modes reprocess the token "in body"): :func:`repair_layout` moves
   them there. A str with a lone surrogate makes libxml2 stop at the first byte
   (``ERR_INVALID_ENCODING``): the source is encoded to UTF-8 first, each lone surrogate
   replaced by U+FFFD. NUL characters are dropped, as a browser does in body text.
3. **Nesting deeper than libxml2's limit.** libxml2 stops at 256 open elements (2,048 with
   ``huge_tree``) and silently drops the rest of the page; a text node over 10 MB stops
   it too. Both end the parse with a fatal ``ERR_RESOURCE_LIMIT`` error, which is
   checked after every parse (the last error of the log: the parser halts on it). The
   page is then parsed again with ``huge_tree`` (memory stays linear in the input, whose
   size the caller bounds, e.g. ``CEPR_MAX_HTML_BYTES``); if it is still deeper than
   2,048 levels, the start tags beyond :data:`MAX_DEPTH` open elements are dropped from
   the source (their text is kept, :func:`flatten_source`) and it is parsed once more
   (with a lower bound if needed).
   Any tree deeper than :data:`MAX_DEPTH` is then flattened as Blink does
   (``kMaximumHTMLParserDOMTreeDepth`` = 512: deeper elements become siblings,
   :func:`flatten_tree`). A page that still cannot be parsed whole raises
   :class:`~.errors.ParseError` rather than giving a body made from part of it.

Two more repairs keep a page's text (issue 17):

4. **A ``<title>`` without its end tag** holds the rest of the page as raw text (the
   title is markup, the body empty): :func:`close_runaway_title` ends it at its first
   tag and the page is parsed again.
5. **Content only inside ``<noscript>``** (forum engines, script-rendered sites) would be
   removed with the other :data:`REMOVED_TAGS`: :func:`noscript_fallback` keeps it when
   it is the page.
6. **Head metadata in the body.** Text before the head (a stored page that begins with
   its HTTP response headers, a "URL: …" line, a stray word), or an element that cannot
   be in a head (an ad's ``<center>``, a tracking pixel's ``<img>``) before the
   ``<title>``, starts the body at once, in a browser as in libxml2 (WHATWG HTML
   §13.2.6.4.1–4: text "before html" and "in head", and any other start tag "in head",
   close the head), so the page's ``<title>``, ``<meta>`` and ``<link>`` elements land in
   the body, where a browser does not display them (HTML §15.3.1) and still reads the
   first ``<title>`` as the document's title (§4.2.2). A script-built page may also write
   its ``<title>`` after its content. libxml2 also drops the attributes of a late
   ``<html>`` start tag (``lang``), which a browser adds to the root.
   :func:`restore_head` moves that metadata into the ``<head>`` and gives the root the
   attributes.

On an ordinary page the checks cost a look at the parser's last error, at the children
of ``<html>`` and at those of ``<head>``; nothing is re-parsed or moved.

**Bounds checked before the parse** (:func:`check_bounds`, issue "a page can stall the
crawl"). libxml2 checks each new attribute of an element against the ones before it, so
an element with *k* attributes costs time quadratic in *k*, and the tree's memory grows
with the number of elements and attributes. Before parsing, :func:`markup_bounds` gives
cheap upper bounds of the counts from a few numpy passes over the bytes; only when one is
above its limit does :func:`count_markup`'s exact pass run, which tokenizes the start tags
as the HTML standard's tokenizer does (the one libxml2 2.14 follows: quoted values,
raw-text elements, comments) in one linear regular-expression pass. A page above
:data:`MAX_ATTRIBUTES_PER_ELEMENT`, :data:`MAX_ATTRIBUTES` or :data:`MAX_ELEMENTS` raises
:class:`~.errors.TooComplexError`. The limits, their measurements and the check's cost
are in ``docs/parsing.md``.
"""

from __future__ import annotations

import logging
import re

import numpy as np
from lxml import etree

from .errors import ParseError, TooComplexError

__all__ = [
    "HEAD_TAGS",
    "MAX_ATTRIBUTES",
    "MAX_ATTRIBUTES_PER_ELEMENT",
    "MAX_DEPTH",
    "MAX_ELEMENTS",
    "REMOVED_TAGS",
    "check_bounds",
    "close_runaway_title",
    "count_markup",
    "flatten_source",
    "flatten_tree",
    "markup_bounds",
    "noscript_fallback",
    "parse_html",
    "remove_keeping_tail",
    "repair_layout",
]

logger = logging.getLogger(__name__)

#: Elements removed with their content before the walk (spec §1 "Units").
REMOVED_TAGS = ("script", "style", "noscript", "iframe", "template")

#: Elements that a browser keeps in ``<head>`` (WHATWG HTML §13.2.6.4.4, "in head").
HEAD_TAGS = frozenset(
    ["base", "basefont", "bgsound", "link", "meta", "noframes", "noscript", "script", "style", "template", "title"]
)

#: Deepest element depth kept as is (``html`` is depth 1); deeper elements become
#: siblings. Blink's ``kMaximumHTMLParserDOMTreeDepth``.
MAX_DEPTH = 512

# A parser with safe defaults (as parsel does): no network, no entity tricks, libxml2's
# own limits on depth and text size in force on the first parse; comments and processing
# instructions dropped at parse time; no table of ID attributes (nothing looks elements up
# by ID; 4 % of the parse). The source is given as UTF-8 bytes.
_PARSER_OPTIONS = {
    "collect_ids": False,
    "remove_comments": True,
    "remove_pis": True,
    "no_network": True,
    "remove_blank_text": False,
    "default_doctype": False,
    "encoding": "utf-8",
}

_XML_DECL_RE = re.compile(rb"^\s*<\?xml[^>]*\?>")
# Characters that libxml2's HTML parser keeps in text but lxml refuses to assign
# (``ValueError: All strings must be XML compatible``): whitespace ones become a space,
# the others (never displayed) are dropped, when repairs move text around.
_XML_SPACE_RE = re.compile("[\x0b\x0c\x1c-\x1f]")
_XML_BAD_RE = re.compile("[\x00-\x08\x0e-\x1b\ufffe\uffff]")
_DEPTH_MESSAGE = "Excessive depth"

# Void elements and elements whose end tag may be left out never stay open for long;
# :func:`flatten_source` does not count them as open.
_NOT_NESTING = frozenset(
    b"area base basefont bgsound br col embed frame hr img input keygen link meta param source track wbr "
    b"p li dt dd tr td th thead tbody tfoot option optgroup rb rt rp colgroup caption html head body".split()
)
_RAW_TEXT = frozenset([b"script", b"style", b"textarea", b"title", b"xmp", b"plaintext", b"noembed", b"noframes"])
_TAG_RE = re.compile(rb"<(/?)([A-Za-z][^\s/>]*)[^>]*>|<!--.*?(?:-->|\Z)", re.S)


def encode_source(source: str) -> bytes:
    """*source* as UTF-8 bytes for libxml2, NUL characters dropped (a browser ignores
    them in body text) and each lone surrogate replaced by U+FFFD (valid pairs are
    joined).

    >>> encode_source("a\\x00b \\ud83d\\ude00 \\udc00")
    b'ab \\xf0\\x9f\\x98\\x80 \\xef\\xbf\\xbd'
    """
    try:
        data = source.encode("utf-8")
    except UnicodeEncodeError:
        data = source.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")
    if b"\x00" in data:
        data = data.replace(b"\x00", b"")
    return data


def parse_html(data: bytes, *, json_ld: list[str] | None = None, also_removed: tuple[str, ...] = ()) -> etree._Element | None:
    """Parse UTF-8 *data* into the root of a repaired tree (see the module doc), with
    :data:`REMOVED_TAGS` stripped; None when there is nothing to parse.

    :param json_ld: a list that receives the text of each JSON-LD block
        (``<script type="application/ld+json">``), in document order, before the scripts
        are removed (the page type reads the page's schema.org declarations from them).
    :param also_removed: more tags removed with their content (not their tail) in the
        same pass over the tree as :data:`REMOVED_TAGS`.

    :raises ParseError: the page is nested too deep to be parsed whole, even flattened.
    :raises TooComplexError: the page is above a bound of :func:`check_bounds`.
    """
    data = _XML_DECL_RE.sub(b"", data, count=1)
    if not data.strip():
        return None
    check_bounds(data)
    root, cut = _parse_once(data, huge=False)
    if cut:
        logger.debug("libxml2 stopped early (%s); parsing again with huge_tree", cut)
        root, cut = _parse_once(data, huge=True)
        # Still too deep: drop the start tags beyond MAX_DEPTH open elements, or beyond
        # fewer when elements the count leaves out (tr, td …) add levels of their own.
        limit = MAX_DEPTH
        while cut and _DEPTH_MESSAGE in cut and limit >= 16:
            root, cut = _parse_once(flatten_source(data, limit), huge=True)
            limit //= 4
        if cut:
            raise ParseError(f"the page cannot be parsed whole: {cut}")
        if root is not None:
            flatten_tree(root, MAX_DEPTH)
    if root is None:
        return None
    fixed = close_runaway_title(root, data)
    if fixed is not None:
        again, cut = _parse_once(fixed, huge=True)
        if again is not None and not cut:
            flatten_tree(again, MAX_DEPTH)
            logger.debug("the <title> had no end tag and held the page: closed at its first tag")
            root = again
    repair_layout(root)
    restore_head(root, data)
    noscript_fallback(root)
    if json_ld is not None:
        for script in root.iter("script"):
            kind = script.get("type")
            if kind and "ld+json" in kind.lower() and script.text:
                json_ld.append(script.text)
    etree.strip_elements(root, *REMOVED_TAGS, *also_removed, with_tail=False)
    return root


_TITLE_START_RE = re.compile(rb"<title\b[^>]*>", re.IGNORECASE)
_TAG_START_RE = re.compile(rb"<[A-Za-z/!]")


def close_runaway_title(root: etree._Element, data: bytes) -> bytes | None:
    """*data* with ``</title>`` inserted before the first tag inside the page's
    ``<title>``, when that title has no end tag and swallowed the page; None when the
    title is fine.

    A ``<title>`` is raw text up to its end tag (WHATWG HTML §13.2.5.2, RCDATA): without
    one, libxml2 (like the tokenizer) reads the rest of the page as the title, so the
    title is raw markup and the body is empty. This is the case when the title's text
    holds a tag and the body has less text than the title; a title with a literal
    ``<b>`` in it and a page with text is left alone.

    >>> data = b"<html><head><title>Storm | Courier<meta x=y></head><body><p>A long story.</p></body></html>"
    >>> root = etree.fromstring(data, etree.HTMLParser())
    >>> close_runaway_title(root, data)[:52]
    b'<html><head><title>Storm | Courier</title><meta x=y>'
    """
    title = root.find("head/title")
    if title is None:
        title = root.find(".//title")
    text = title.text if title is not None else None
    if not text or not _MARKUP_TEXT_RE.search(text):
        return None
    body = root.find("body")
    shown = _text_chars(body) if body is not None else 0
    if shown >= len(text.strip()):
        return None
    start = _TITLE_START_RE.search(data)
    if start is None:
        return None
    tag = _TAG_START_RE.search(data, start.end())
    if tag is None or data[tag.start():tag.start() + 7].lower() == b"</title":
        return None
    return data[:tag.start()] + b"</title>" + data[tag.start():]


#: A ``<noscript>`` fallback replaces the page when it holds at least this many
#: characters of text ...
NOSCRIPT_MIN_CHARS = 200
#: ... and the text displayed outside every ``<noscript>`` is less than this share of it.
NOSCRIPT_OUTSIDE_SHARE = 0.25
_MARKUP_TEXT_RE = re.compile(r"<[A-Za-z/!]")


def noscript_fallback(root: etree._Element) -> bool:
    """Keep the content of the body's ``<noscript>`` elements (unwrapped, in place) when
    it is the page: when it holds at least :data:`NOSCRIPT_MIN_CHARS` characters of text
    and the text displayed outside every ``<noscript>`` is less than
    :data:`NOSCRIPT_OUTSIDE_SHARE` of it. Some forum engines and script-rendered sites
    put the whole page there, for browsers without JavaScript (a browser with scripting
    disabled displays it, WHATWG HTML §4.12.2). The ``<noscript>`` becomes a ``<div>``. A
    ``<noscript>`` whose content came as
    text holding markup is parsed as HTML first. Otherwise (a "please enable JavaScript"
    line, a tracking pixel, a fallback beside the page's own text) nothing changes and
    the ``<noscript>`` elements are removed with the other :data:`REMOVED_TAGS`.
    Returns True if the tree was changed.

    >>> root = etree.fromstring(b"<html><body><div id=app></div><noscript><p>" + b"Story. " * 40
    ...                         + b"</p></noscript></body></html>", etree.HTMLParser())
    >>> noscript_fallback(root), etree.tostring(root)[:44]
    (True, b'<html><body><div id="app"/><div><p>Story. St')
    """
    body = root.find("body")
    if body is None:
        return False
    noscripts = [el for el in body.iter("noscript") if not any(a.tag == "noscript" for a in el.iterancestors())]
    if not noscripts:
        return False
    inside = sum(_text_chars(el) for el in noscripts)
    if inside < NOSCRIPT_MIN_CHARS:
        return False
    outside = _text_chars(body) - inside
    if outside >= NOSCRIPT_OUTSIDE_SHARE * inside:
        return False
    for el in noscripts:
        if len(el) == 0 and el.text and _MARKUP_TEXT_RE.search(el.text):
            fragment = etree.fromstring(b"<html><body>" + el.text.encode("utf-8") + b"</body></html>",
                                        etree.HTMLParser(**_PARSER_OPTIONS))
            inner = fragment.find("body") if fragment is not None else None
            el.text = None
            if inner is not None:
                el.text = inner.text
                el.extend(list(inner))
        el.tag = "div"  # unwrapped: its content is displayed in place
    logger.debug("the page's text is inside <noscript> (%d characters, %d outside): kept", inside, outside)
    return True


def _text_chars(el: etree._Element) -> int:
    """Characters of the non-blank text under *el*, without the content of scripts,
    styles and templates."""
    total = sum(len(t.strip()) for t in el.itertext())
    hidden = sum(len(t.strip()) for node in el.iter("script", "style", "template") for t in node.itertext())
    return total - hidden


def _parse_once(data: bytes, huge: bool) -> tuple[etree._Element | None, str | None]:
    """The root of *data* parsed by libxml2, and the message of the fatal resource-limit
    error that cut the parse short (None if it ran to the end)."""
    parser = etree.HTMLParser(huge_tree=huge, **_PARSER_OPTIONS)
    try:
        root = etree.fromstring(data, parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None, None
    last = parser.error_log.last_error
    if last is not None and last.level == etree.ErrorLevels.FATAL and last.type == etree.ErrorTypes.ERR_RESOURCE_LIMIT:
        return root, last.message
    return root, None


def repair_layout(root: etree._Element) -> bool:
    """Put every displayed element of the page under ``html/body``, as a browser does
    (cases 1 and 2 of the module doc). Returns True if the tree was changed.

    >>> root = etree.fromstring(b"<html><head><title>T</title><fb:like><td><body><p>Story</p>",
    ...                         etree.HTMLParser())
    >>> root.find("body") is None
    True
    >>> repair_layout(root), etree.tostring(root)
    (True, b'<html><head><title>T</title></head><body><fb:like><td><p>Story</p></td></fb:like></body></html>')
    """
    head = body = None
    strays = False
    for child in root:
        tag = child.tag
        if tag == "head" and head is None and body is None:
            head = child
        elif tag == "body" and body is None:
            body = child
        else:
            strays = True
    from_head: list = []
    if head is not None:
        for i, child in enumerate(head):
            if child.tag not in HEAD_TAGS or (child.tail and child.tail.strip(" \t\n\f\r")):
                from_head = _displayed(head[i:])
                break
    following = root.getnext()
    if not strays and not from_head and following is None and body is not None:
        return False
    if body is None:
        body = etree.SubElement(root, "body")
    # The head's displayed content and html-level elements before the body come first,
    # then the body's own content, then html-level elements after it and the content of
    # any root element after </html>.
    before = from_head + [c for c in root[: root.index(body)] if c is not head]
    after = list(root[root.index(body) + 1 :])
    while following is not None:
        nxt = following.getnext()
        for child in following:
            after.extend(_displayed(child) if child.tag == "head" else [child])
        following = nxt
    own_text, body.text = body.text, None
    last = None
    for item in before:
        if isinstance(item, str):
            _add_text(body, last, item)
        else:
            body.insert(0 if last is None else body.index(last) + 1, item)
            last = item
    _add_text(body, last, own_text)
    for item in after:
        if isinstance(item, str):
            _add_text(body, body[-1] if len(body) else None, item)
        else:
            body.append(item)
    if body.tail and not body.tail.isspace():
        _add_text(body, body[-1] if len(body) else None, body.tail)
    body.tail = None
    # Tags that a browser ignores inside the body: their content stays in place.
    etree.strip_tags(body, "html", "head", "body")
    return True


#: Head metadata that :func:`restore_head` moves back into the head (the scripts and
#: styles that come with them are removed wherever they are).
_HEAD_METADATA = frozenset(["title", "meta", "link", "base"])
_NOT_SHOWN = frozenset([*REMOVED_TAGS, "title"])
_HTML_START_RE = re.compile(rb"<html\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE_NAME_RE = re.compile(r"[A-Za-z_][-A-Za-z0-9_.:]*")


def restore_head(root: etree._Element, data: bytes = b"") -> bool:
    """Case 6 of the module doc: on a page whose ``<head>`` (if any) has no ``<title>``
    while its body has one, move into the head (created when missing) the ``title``,
    ``meta``, ``link`` and ``base`` elements of the body's opening run (its first
    children up to the first that shows text; a ``meta`` or ``link`` with an ``itemprop``
    is microdata and stays), and the body's first ``title`` outside ``svg`` and ``math``
    when the run has none (a title written after the content). Their tails stay in the
    body. A head created here also gives the root the attributes of the first ``<html>``
    start tag of *data* that it lacks (WHATWG HTML §13.2.6.4.7, an ``html`` start tag "in
    body"). Returns True if the tree was changed; nothing is done on a page whose head has
    a title, or whose body has none.

    >>> data = (b"HTTP/1.1 200 OK <html lang=de><head><title>T</title><meta name=a content=b></head>"
    ...         b"<body><p>Story</p></body></html>")
    >>> root = etree.fromstring(data, etree.HTMLParser())
    >>> etree.tostring(root)
    b'<html><body>HTTP/1.1 200 OK <title>T</title><meta name="a" content="b"/><p>Story</p></body></html>'
    >>> restore_head(root, data), etree.tostring(root)
    (True, b'<html lang="de"><head><title>T</title><meta name="a" content="b"/></head><body>HTTP/1.1 200 OK <p>Story</p></body></html>')
    >>> data = b"<html><head><center><img src=ad.gif></center><title>T</title></head><body><p>Story</p></body></html>"
    >>> root = etree.fromstring(data, etree.HTMLParser())
    >>> etree.tostring(root)
    b'<html><head/><body><center><img src="ad.gif"/></center><title>T</title><p>Story</p></body></html>'
    >>> restore_head(root, data), etree.tostring(root)
    (True, b'<html><head><title>T</title></head><body><center><img src="ad.gif"/></center><p>Story</p></body></html>')
    """
    head = root.find("head")
    if head is not None and head.find("title") is not None:
        return False
    body = root.find("body")
    if body is None:
        return False
    moved: list[etree._Element] = []
    for child in body:
        if not isinstance(child.tag, str):
            continue
        if child.tag in HEAD_TAGS:
            if child.tag in _HEAD_METADATA and child.get("itemprop") is None:
                moved.append(child)
            continue
        if child.tag == "p" and not len(child) and not moved:
            continue  # the stray text, in a paragraph of its own (libxml2 before 2.14)
        if _shows_text(child):
            break
    if not any(el.tag == "title" for el in moved):
        late = next((el for el in body.iter("title")
                     if not any(a.tag in ("svg", "math") for a in el.iterancestors())), None)
        if late is None:
            return False
        moved.append(late)
    created = head is None
    if head is None:
        head = etree.Element("head")
        root.insert(0, head)
    for el in moved:
        remove_keeping_tail(el)
        el.tail = None
        head.append(el)
    start = _HTML_START_RE.search(data) if created else None
    tag = etree.fromstring(start.group(0) + b"</html>", etree.HTMLParser(no_network=True)) if start else None
    if tag is not None and tag.tag == "html":
        for name, value in tag.attrib.items():
            if root.get(name) is None and _ATTRIBUTE_NAME_RE.fullmatch(name):  # (an XML name: lxml sets it)
                root.set(name, value)
    return True


def _shows_text(el: etree._Element) -> bool:
    """Whether *el* holds text a browser displays: its text, or that of a descendant
    outside :data:`REMOVED_TAGS` and ``title``, or a descendant's tail (its own tail not
    counted)."""
    if el.text and not el.text.isspace():
        return True
    for child in el:
        if child.tail and not child.tail.isspace():
            return True
        if isinstance(child.tag, str) and child.tag not in _NOT_SHOWN and _shows_text(child):
            return True
    return False


def remove_keeping_tail(el: etree._Element) -> bool:
    """Remove *el* and its subtree from its parent, keeping its tail (the text that
    follows it belongs to the parent). False, and nothing done, for an element without a
    parent.

    >>> root = etree.fromstring("<p>a<b>x</b>tail<i>y</i></p>")
    >>> remove_keeping_tail(root.find("b")), etree.tostring(root)
    (True, b'<p>atail<i>y</i></p>')
    """
    parent = el.getparent()
    if parent is None:
        return False
    if el.tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)
    return True


def _xml_safe(text: str | None) -> str | None:
    """*text* as lxml accepts it for ``.text``/``.tail`` (see ``_XML_BAD_RE``).

    >>> _xml_safe("a\x0cb\x01c")
    'a bc'
    """
    if not text or text.isprintable():
        return text
    return _XML_BAD_RE.sub("", _XML_SPACE_RE.sub(" ", text))


def _add_text(parent: etree._Element, last: etree._Element | None, text: str | None) -> None:
    """Add *text* after the child *last* of *parent* (at the start when None)."""
    if not text:
        return
    if last is None:
        parent.text = _xml_safe((parent.text or "") + text)
    else:
        last.tail = _xml_safe((last.tail or "") + text)


def _displayed(elements) -> list:
    """The displayed part of head *elements*: each element that is not head metadata,
    and the text after each metadata element (taken off it)."""
    out: list = []
    for el in list(elements):
        if el.tag in HEAD_TAGS:
            if el.tail and el.tail.strip(" \t\n\f\r"):
                out.append(el.tail)
                el.tail = None
        else:
            out.append(el)
    return out


def flatten_tree(root: etree._Element, max_depth: int = MAX_DEPTH) -> int:
    """Flatten the elements deeper than *max_depth* (``root`` is depth 1) as Blink's
    tree builder does: each element at depth *max_depth* gets all its descendants as
    children, in document order and empty, with their text moved between them, so that
    every text stays in place and in order. Returns the number of elements flattened.

    >>> root = etree.fromstring(b"<html><body><b><i><u>deep</u> tail</i>!</b></body></html>", etree.HTMLParser())
    >>> flatten_tree(root, 3), etree.tostring(root)
    (2, b'<html><body><b><i/><u/>deep tail!</b></body></html>')
    """
    moved = 0
    stack = [(root, 1)]
    while stack:
        el, depth = stack.pop()
        if depth < max_depth:
            stack.extend((child, depth + 1) for child in el)
        elif any(len(child) for child in el):
            moved += _flatten_below(el)
    return moved


def _flatten_below(anchor: etree._Element) -> int:
    """Make every descendant of *anchor* its child (see :func:`flatten_tree`)."""
    events = []
    for child in list(anchor):
        for event, el in etree.iterwalk(child, events=("start", "end")):
            events.append((event, el, el.text if event == "start" else el.tail))
    flat = [el for event, el, _ in events if event == "start"]
    text = anchor.text or ""
    pieces: list[list[str]] = [[] for _ in flat]
    head: list[str] = [text] if text else []
    current = head
    index = -1
    for event, _el, value in events:
        if event == "start":
            index += 1
            current = pieces[index]
        if value:
            current.append(value)
    for el in flat:
        el.text = None
    # Detach the deepest first, so that every move is of an element without children
    # (lxml walks the subtree of a moved element: moving the top first is quadratic).
    for el in reversed(flat):
        el.getparent().remove(el)
    anchor.extend(flat)
    anchor.text = _xml_safe("".join(head)) or None
    for el, parts in zip(flat, pieces):
        el.tail = _xml_safe("".join(parts)) or None
        el.text = None
    return len(flat)


def flatten_source(data: bytes, max_depth: int = MAX_DEPTH) -> bytes:
    """*data* without the start tags (and their end tags) that would open an element
    beyond *max_depth* open elements; the text they hold is kept.

    Used only when libxml2 cannot parse the page whole even with ``huge_tree`` (more
    than 2,048 open elements). Open elements are counted on the tags of the source:
    void elements and elements whose end tag may be left out (``p``, ``li``, ``td`` …)
    are not counted, an end tag closes up to the last open element of its name, and
    comments and raw-text elements (``script``, ``style``, ``textarea`` …) are skipped.

    >>> flatten_source(b"<div><div><div>x</div></div></div>", 2)
    b'<div><div>x</div></div>'
    """
    out: list[bytes] = []
    stack: list[bytes] = []
    dropped: dict[bytes, int] = {}
    pos = 0
    raw_until: bytes | None = None
    for m in _TAG_RE.finditer(data):
        closing, name = m.group(1), m.group(2)
        if name is None:  # a comment
            continue
        name = name.lower()
        if raw_until is not None:
            if closing and name == raw_until:
                raw_until = None
            continue
        if not closing:
            if name in _RAW_TEXT:
                raw_until = name
                continue
            if name in _NOT_NESTING or m.group(0).endswith(b"/>"):
                continue
            if len(stack) >= max_depth:
                dropped[name] = dropped.get(name, 0) + 1
                out.append(data[pos : m.start()])
                pos = m.end()
                continue
            stack.append(name)
        else:
            if dropped.get(name):
                dropped[name] -= 1
                out.append(data[pos : m.start()])
                pos = m.end()
                continue
            if name in stack:
                while stack and stack.pop() != name:
                    pass
    out.append(data[pos:])
    return b"".join(out)


#: Most attributes on one element (start tag) before the page is refused: libxml2's
#: duplicate-attribute check is quadratic in this number (see ``docs/parsing.md``).
MAX_ATTRIBUTES_PER_ELEMENT = 1_000

#: Most attributes on the whole page (they bound the tree's memory).
MAX_ATTRIBUTES = 200_000

#: Most elements (start tags) on the whole page (they bound the memory of the tree and
#: the page model, as trafilatura bounds its tree size).
MAX_ELEMENTS = 100_000

# The start tags, comments and raw-text elements of the HTML standard's tokenizer
# (WHATWG HTML §13.2.5; libxml2 >= 2.14 follows it): tag names and attribute names end
# at ASCII whitespace, "/" or ">"; a value is quoted (it may hold ">" and "<") or runs
# to whitespace or ">"; the content of script, style, textarea, title … (raw text) is
# not markup, up to the first end tag of the same name; a comment ends at the first
# "-->", "--!>" (or at once for "<!-->" and "<!--->"); as in libxml2, a raw-text start
# tag that ends with "/>" has no content. Each match gives (raw-text name, start tag
# without its "<"); an end tag or a comment gives empty ones. Every choice that could
# differ from the parser errs on the side of more markup (a raw-text element or comment
# ends at the earliest end a parser could give it), so the counts are never below
# libxml2's.
_ATTR_VALUE = rb"""(?:"[^"]*+(?:"|\Z)|'[^']*+(?:'|\Z)|[^\t\n\f\r >]*+)"""
_ATTR = rb"(?:=[^\t\n\f\r />=]*+|[^\t\n\f\r />=]++)(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+" + _ATTR_VALUE + rb")?+"
_RAW_NAMES = rb"script|style|xmp|iframe|noembed|noframes|title|textarea|plaintext"
_TAG_END = rb"(?:[\t\n\f\r /]++|" + _ATTR + rb")*+(?:>|\Z)"
_MARKUP_RE = re.compile(
    rb"<(?:!--(?:>|->|.*?(?:--!?>|\Z))"
    rb"|[!?][^>]*+>?"
    rb"|/[^A-Za-z>][^>]*+>?"
    rb"|/[A-Za-z][^\t\n\f\r />]*+" + _TAG_END
    + rb"|(?=((?i:" + _RAW_NAMES + rb"))(?:[\t\n\f\r />]|\Z))?+((?=[A-Za-z])[^\t\n\f\r />]++"
    rb"(?:[\t\n\f\r /]++|" + _ATTR + rb")*+)(?:>|\Z)"
    rb"(?(1)(?:(?<!/>)[^<]*+(?:<(?!/(?i:\1)[\t\n\f\r />])[^<]*+)*+)?+))",
    re.DOTALL,
)
_TAG_NAME_RE = re.compile(rb"[^\t\n\f\r />]++")
_ATTR_RE = re.compile(_ATTR, re.DOTALL)


def count_markup(data: bytes) -> tuple[int, int, int]:
    """``(elements, attributes, most attributes on one element)`` of the HTML *data*,
    counted on its start tags as the HTML standard's tokenizer reads them (see
    :func:`check_bounds`), in one linear pass; at least what libxml2 builds (it adds
    only ``html``, ``head`` and ``body`` when they are missing, and keeps one of each
    duplicate attribute).

    >>> count_markup(b'<p class=a id="x>y">One<br/><script>if (a<b) x="<i z>"</script>')
    (3, 2, 2)
    """
    return _count(data, 0, 0)


def _attributes(tag: bytes) -> int:
    """The attributes of a start *tag* (its name and attribute part, without ``<``)."""
    name = _TAG_NAME_RE.match(tag)
    return len(_ATTR_RE.findall(tag, name.end() if name else 0))


def _count(data: bytes, most_from: int, total_from: int, elements_to: int = 0) -> tuple[int, int, int]:
    """:func:`count_markup`; the attributes in all counted only if they may be more
    than *total_from* (else an upper bound), the most on one element only among the
    elements that may hold more than *most_from* (else 0); the count stops (the other
    two are 0) once it finds more than *elements_to* elements (0: never)."""
    if elements_to and data.count(b"<") > elements_to:  # maybe too many: stop at the bound
        tags = []
        for match in _MARKUP_RE.finditer(data):
            if match.group(2):
                tags.append(match.group(2))
                if len(tags) > elements_to:
                    return len(tags), 0, 0
    else:
        tags = [tag for _raw, tag in _MARKUP_RE.findall(data) if tag]
    if not tags:
        return 0, 0, 0
    # An attribute takes at least 2 bytes (a name and a separator; the tag name is one
    # more): a tag of n bytes holds at most n // 2 attributes.
    total = sum(map(len, tags)) // 2
    if total > total_from:
        total = sum(_attributes(tag) for tag in tags)
    most = 0
    if max(map(len, tags)) // 2 > most_from:
        for tag in sorted(tags, key=len, reverse=True):
            if len(tag) // 2 <= max(most, most_from):
                break
            most = max(most, _attributes(tag))
    return len(tags), total, most


def check_bounds(data: bytes, *, max_elements: int = MAX_ELEMENTS, max_attributes: int = MAX_ATTRIBUTES,
                 max_per_element: int = MAX_ATTRIBUTES_PER_ELEMENT) -> tuple[int, int, int]:
    """Refuse, before parsing, HTML *data* whose parse would be superlinear or too big:
    more than *max_per_element* attributes on one element, *max_attributes* in all, or
    *max_elements* elements (0 = no limit for that count). Returns upper bounds of the
    counts of :func:`count_markup` ``(elements, attributes, most on one element)``; each
    is exact only when a cheap bound (:func:`markup_bounds`) was not enough to show it
    within its limit.

    :raises TooComplexError: a count is above its bound (the message names it).

    >>> check_bounds(b"<p a b c>x</p>", max_per_element=2)
    Traceback (most recent call last):
    ...
    scrapy_cepr.core.errors.TooComplexError: page too complex: 3 attributes on one element (limit 2)
    """
    elements, attributes, most = bounds = markup_bounds(data, max_elements, max_attributes, max_per_element)
    if (not max_elements or elements <= max_elements) and (not max_attributes or attributes <= max_attributes) \
            and (not max_per_element or most <= max_per_element):
        return bounds
    # A cheap bound is above its limit: count exactly (the tokenizer pass).
    elements, attributes, most = counts = _count(data, max_per_element, max_attributes, max_elements)
    if max_per_element and most > max_per_element:
        raise TooComplexError(f"page too complex: {most:,} attributes on one element (limit {max_per_element:,})")
    if max_attributes and attributes > max_attributes:
        raise TooComplexError(f"page too complex: {attributes:,} attributes (limit {max_attributes:,})")
    if max_elements and elements > max_elements:
        # (the count stopped at the bound)
        raise TooComplexError(f"page too complex: more than {max_elements:,} elements (the limit)")
    return counts


# Cheap upper bounds (markup_bounds). Byte values: '"', "'", "/", "=", ">", "<".
_DQ, _SQ, _SLASH, _EQ, _GT, _LT = 34, 39, 47, 61, 62, 60
# Bytes looked at before a quote for the "=" that makes it open a value, whitespace
# runs longer than this count as an "=" (more values, never fewer).
_OPENER_LOOKBACK = 16
_START_TAG_RE = re.compile(rb"<[A-Za-z]")
# A start tag at "<" + letter as _MARKUP_RE reads it, up to "{0,N}+)" separators and
# attributes (N set per limit).
_START_TAG_HEAD = rb"<([A-Za-z][^\t\n\f\r />]*+(?:[\t\n\f\r /]++|" + _ATTR + rb")"
# Most possible start tags counted one by one in a long run between two '>' that end
# every tag (a long value, a script with "<"); beyond, the tokenizer pass counts.
_RUN_TAGS = 16


def markup_bounds(data: bytes, max_elements: int = 0, max_attributes: int = 0,
                  max_per_element: int = 0) -> tuple[int, int, int]:
    """Upper bounds of :func:`count_markup` ``(elements, attributes, most attributes on
    one element)`` of the HTML *data*, from a few vectorized passes over its bytes (no
    tokenizer); a bound is only refined while it is above its *max_* (0: never refined).
    Each is sound because of how the HTML standard's tokenizer (WHATWG HTML §13.2.5.32–
    13.2.5.40) reads a start tag:

    * an element needs a ``<`` and another byte, so elements ≤ bytes // 2 and ≤ the
      ``<`` bytes;
    * an attribute starts after a separator (ASCII whitespace or ``/``) or right after
      the closing quote of a value, at a byte that is none of those nor ``>``; so its
      start and the byte before it are its own, and attributes ≤ bytes // 2 and ≤ the
      (separator or closing quote, start byte) pairs ≤ the separators and closing
      quotes (this larger count is taken when it is within the limit);
    * a start tag ends at the first ``>`` outside its quoted values, and a quote opens a
      value only after ``=`` (and whitespace), up to the next quote of its kind. A ``>``
      whose last ``"`` and last ``'`` before it open no value ends every tag that reaches
      it; a tag between two such ``>`` holds at most half their bytes, at most the
      attribute starts from the first ``<`` + letter between them, and at most the most
      attributes of a start tag read at each ``<`` + letter there (up to
      *max_per_element* + 1 attributes, for at most 16 of them).

    Every doubt counts as more: any quote after ``=`` opens a value (even in text or a
    script), a control byte separates, whitespace longer than 16 bytes before a quote
    counts as an ``=``. Cost: a few numpy passes (see ``docs/parsing.md``).

    >>> markup_bounds(b'<p class=a id="x>y">One<br/>')
    (14, 14, 14)
    >>> markup_bounds(b'<p class=a id="x>y">One<br/>', 1, 1, 2)
    (2, 3, 2)
    """
    n = len(data)
    elements = attributes = most = n // 2
    if not (max_elements and elements > max_elements or max_attributes and attributes > max_attributes
            or max_per_element and most > max_per_element):
        return elements, attributes, most
    arr = np.frombuffer(data, np.uint8)
    if max_elements and elements > max_elements:
        elements = min(elements, int(np.count_nonzero(arr == _LT)))
    if not (max_attributes and attributes > max_attributes or max_per_element and most > max_per_element):
        return elements, attributes, most
    marks = arr == _GT
    marks |= arr == _DQ
    marks |= arr == _SQ
    pos = marks.nonzero()[0]
    kinds = arr[pos]
    # The quotes that may open a value, and those that close one.
    prev = arr[pos - 1]
    if len(pos) and pos[0] == 0:
        prev[0] = 0
    opens = prev == _EQ
    back = (prev <= 32).nonzero()[0]  # whitespace (or a control byte): look further back
    if len(back):
        before = pos[back] - 1
        at = before[:, None] - np.arange(_OPENER_LOOKBACK)
        stop = arr[np.maximum(at, 0)] > 32
        stop |= at < 0
        # The first byte back that is no whitespace (or the start of the data); none
        # within the look-back (argmax 0 on a row of False) counts as an "=".
        at = before - stop.argmax(axis=1)
        byte = arr[np.maximum(at, 0)]
        found = (byte > 32) | (at < 0)
        opens[back[~found | ((at >= 0) & (byte == _EQ))]] = True
    ends = (kinds == _GT).nonzero()[0]
    quote_sets = []  # per kind of quote: its positions in *pos*, and which may open a value
    bridged = np.zeros(len(ends), bool)
    for kind in (_DQ, _SQ):
        quotes = (kinds == kind).nonzero()[0]
        if len(quotes):
            quote_opens = opens[quotes]
            quote_sets.append((quotes, quote_opens))
            last = quotes.searchsorted(ends)  # 1 + the last quote of this kind before each '>'
            bridged |= np.concatenate(([False], quote_opens))[last]

    def closes() -> list[np.ndarray]:  # the quotes that may close a value (when needed)
        return [pos[quotes[1:][quote_opens[:-1]]] for quotes, quote_opens in quote_sets]

    if max_attributes and attributes > max_attributes:
        attributes = min(attributes, _attribute_starts(arr, closes(), 0, n, max_attributes))
    if max_per_element and most > max_per_element:
        edges = np.concatenate(([-1], pos[ends[~bridged]], [n - 1]))
        halves = np.diff(edges) // 2
        most = int(halves.max())
        if most > max_per_element:
            most = int(halves.max(initial=0, where=halves <= max_per_element))
            closing = closes()
            for i in (halves > max_per_element).nonzero()[0].tolist():
                start, end = int(edges[i]) + 1, int(edges[i + 1]) + 1
                tag = _START_TAG_RE.search(data, start, end)
                if tag is not None:
                    starts = _attribute_starts(arr, closing, tag.start(), end, max_per_element)
                    if starts > max_per_element:  # long values: count each possible tag
                        starts = _most_in_run(data, tag.start(), end, max_per_element, starts)
                    most = max(most, starts)
    return elements, attributes, most


def _most_in_run(data: bytes, start: int, end: int, limit: int, bound: int) -> int:
    """The most attributes of a start tag at any ``<`` + letter of ``data[start:end]``
    (a run that no tag reaches beyond), counted as the tokenizer does, when it is within
    *limit*; else *bound* (a bound already known, above *limit*), also when there are
    more than :data:`_RUN_TAGS` of them. Each tag is read up to *limit* + 1 attributes."""
    tag_re = re.compile(_START_TAG_HEAD + b"{0,%d}+)" % (2 * limit + 3), re.DOTALL)
    most = 0
    for number, match in enumerate(_START_TAG_RE.finditer(data, start, end)):
        tag = tag_re.match(data, match.start())
        if number == _RUN_TAGS or tag is None:  # (a match always: "<" + letter)
            return bound
        most = max(most, _attributes(tag.group(1)))
        if most > limit:
            return bound
    return most


def _attribute_starts(arr: np.ndarray, closes: list[np.ndarray], start: int, end: int, limit: int = 0) -> int:
    """At least the attributes whose start lies in ``arr[start:end]``: the bytes there
    that are a separator (or a control byte) or a quote in *closes* (arrays of sorted
    positions) and are followed by a byte that can start an attribute name.

    With a *limit* (> 0), the separators are first counted whatever byte follows them
    (three vector steps instead of eleven; at least as many, so still at least the
    attributes): that count is returned when it is within *limit*, else the exact one."""
    count = 0
    for positions in closes:
        lo, hi = np.searchsorted(positions, (start, end - 1))
        count += int(hi - lo)
    part = arr[start:end]
    before, after = part[:-1], part[1:]
    separator = before <= 32
    separator |= before == _SLASH
    if limit:
        coarse = count + int(np.count_nonzero(separator))
        if coarse <= limit:
            return coarse
    stop = (after >= 9) & (after <= 13) & (after != 11)
    stop |= after == 32
    stop |= after == _SLASH
    stop |= after == _GT
    return count + int(np.count_nonzero(separator & ~stop))
