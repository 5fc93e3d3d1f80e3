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

On an ordinary page the checks cost a look at the parser's last error, at the children
of ``<html>`` and at those of ``<head>``; nothing is re-parsed or moved.
"""

from __future__ import annotations

import logging
import re

from lxml import etree

from .errors import ParseError

__all__ = ["HEAD_TAGS", "MAX_DEPTH", "REMOVED_TAGS", "flatten_source", "flatten_tree", "parse_html", "repair_layout"]

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


def parse_html(data: bytes, *, json_ld: list[str] | None = None) -> etree._Element | None:
    """Parse UTF-8 *data* into the root of a repaired tree (see the module doc), with
    :data:`REMOVED_TAGS` stripped; None when there is nothing to parse.

    :param json_ld: a list that receives the text of each JSON-LD block
        (``<script type="application/ld+json">``), in document order, before the scripts
        are removed (the page type reads the page's schema.org declarations from them).

    :raises ParseError: the page is nested too deep to be parsed whole, even flattened.
    """
    data = _XML_DECL_RE.sub(b"", data, count=1)
    if not data.strip():
        return None
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
    repair_layout(root)
    if json_ld is not None:
        for script in root.iter("script"):
            kind = script.get("type")
            if kind and "ld+json" in kind.lower() and script.text:
                json_ld.append(script.text)
    etree.strip_elements(root, *REMOVED_TAGS, with_tail=False)
    return root


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
    for event, el, value in events:
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
