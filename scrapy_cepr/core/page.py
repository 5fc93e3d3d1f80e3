"""The page model: HTML (str or bytes) → decoded source, a safe lxml tree and the page's
text nodes in document order, each with its tag path and its display block.

This is the first stage of every method (page model → features → smoothing → threshold).
It knows nothing of Scrapy.

Units follow CEPR (Wu et al., CIKM 2013, Def. 1–2) and spec §1:

* ``script``, ``style``, ``noscript``, ``iframe``, ``template`` and comments are removed,
  and so are ``noframes`` and ``noembed`` (not rendered by a browser, raw text to libxml2);
* a *text node* is an element's ``.text`` or a child's ``.tail`` (the tail belongs to
  the parent element, so its tag path is the parent's);
* text is trimmed with whitespace runs collapsed; empty text is not a node;
* the *tag path* is the sequence of tag names from ``html`` down to the text node's parent
  element, e.g. ``html.body.div.p`` (names only, no attributes, no indices).

Our choice (the spec is silent): only the text under ``<body>`` is a unit. The ``<head>``
is not displayed; its ``<title>`` is kept aside for the title search. A layout table is
read as the ``div`` boxes it lays out (:func:`read_layout_tables`), so the tag paths of a
page laid out in tables are those of the same page laid out in ``div`` elements; and on a
page without an ``h1``, the element that displays the page's name (its ``<title>``) is read
as its ``h1`` (:func:`promote_displayed_headline`), so a headline written in a ``<font>``
or a styled ``<div>`` is the heading a reader sees.
"""

from __future__ import annotations

import codecs
import json
import logging
import re
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from typing import Any
from urllib.parse import urljoin, urlsplit

import numpy as np
from lxml import etree
from rapidfuzz import fuzz
from w3lib.encoding import html_to_unicode

from .errors import NotHTMLError
from .parse import REMOVED_TAGS, encode_source, parse_html, remove_keeping_tail
from .sitename import drop_site_name, is_site_name, page_name, page_site_names
from .text import CONTROL_RE, has_controls

__all__ = ["BLOCK_TAGS", "NOT_RENDERED_TAGS", "REMOVED_TAGS", "Page", "decode_html", "dotted_paths", "is_layout_table",
           "page_addresses", "promote_displayed_headline", "read_layout_tables", "sniff_not_html"]

logger = logging.getLogger(__name__)

#: Elements that start a new line of the body (block-level display).
#: Fallback elements a browser with frames and plug-ins does not render, removed with
#: their content like :data:`REMOVED_TAGS` (libxml2 reads their content as raw text, so
#: their markup would otherwise be text nodes of literal tags).
NOT_RENDERED_TAGS = ("noframes", "noembed")

#: The elements a browser displays as blocks (HTML, "Rendering": flow content, sections
#: and headings, lists, tables, form groups; ``center``, ``dir``, ``listing``, ``plaintext``
#: and ``xmp`` are the obsolete ones pages of the 2000s still carry).
BLOCK_TAGS = frozenset(
    ["address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
     "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
     "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li",
     "listing", "main", "menu", "nav", "ol", "p", "plaintext", "pre", "search", "section",
     "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "xmp"]
)
_HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3}
_BREAKING_TAGS = BLOCK_TAGS | {"br"}

# Leading bytes of common binary formats: PDF, PNG, GIF, JPEG, ZIP/Office, gzip, WebP/WAV,
# Ogg, MP3, MP4/ftyp is too loose to sniff this way.
_BINARY_MAGIC = ("%PDF", "\x89PNG", "GIF8", "\xff\xd8\xff", "PK\x03\x04", "\x1f\x8b", "RIFF", "OggS", "ID3")
_MARKUP_RE = re.compile(r"<[A-Za-z!?/]")
# WHATWG MIME Sniffing, "binary data byte": 0x00-0x08, 0x0B, 0x0E-0x1A, 0x1C-0x1F.
_BINARY_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])

_SNIFF_CHARS = 4096

def decode_html(html: str | bytes, encoding: str | None = None) -> str:
    """Decode page bytes to text with w3lib, as Scrapy's ``response.text`` does: BOM,
    then *encoding* (for example from the HTTP ``Content-Type`` header), then
    ``<meta charset>``; a page that declares none is ASCII or UTF-8 when its bytes decode
    so, else in the legacy encoding that :func:`_detect_encoding` finds as a browser would
    (a page saved without its HTTP header: windows-1252, windows-1251, GBK, Shift_JIS …;
    charset-normalizer's frequency analysis, which WHATWG Encoding's sniffing allows,
    among the encodings a browser decodes, with the HTML standard's default for the
    page's declared language when it is as plausible), else UTF-8.

    One exception to that order: without *encoding*, bytes that hold non-ASCII text and
    are valid UTF-8 are UTF-8 whatever their ``<meta charset>`` says. Such a ``<meta>`` is
    stale: the page was transcoded to UTF-8 after it was fetched (an archive, a corpus, a
    saved page), and text in a legacy encoding (windows-1251, GBK, Shift_JIS, EUC-KR,
    ISO-8859-x) with its non-ASCII letters is practically never valid UTF-8 by chance
    (Dürst, "The properties and promises of UTF-8", 1997). Bytes that are all ASCII keep
    their declaration (ISO-2022-JP and HZ write their text in 7-bit escapes). A crawl
    passes Scrapy's encoding as *encoding*, so its text stays ``response.text``.

    Invalid byte sequences become U+FFFD, never an exception. A label that names no text
    encoding (``uu``, ``rot13``, ``base64``, ``undefined`` …, where w3lib raises
    LookupError or UnicodeError) is ignored, as a browser ignores an unknown label
    (WHATWG Encoding, "get an encoding" fails): the next source of the list is used. A
    ``str`` is returned unchanged.

    >>> decode_html('<meta charset="gbk"><p>新闻</p>'.encode("gbk"))[-10:]
    '><p>新闻</p>'
    >>> decode_html(b'<meta charset="rot13"><p>Hello</p>')[-12:]
    '<p>Hello</p>'
    >>> decode_html(("<p>" + "Министр заявил, что программа начнётся весной. " * 3 + "</p>").encode("cp1251"))[3:10]
    'Министр'
    >>> decode_html('<meta charset="windows-1251"><p>Министр</p>'.encode("utf-8"))[-14:]
    '<p>Министр</p>'
    """
    if isinstance(html, str):
        return html
    if not isinstance(html, (bytes, bytearray, memoryview)):
        raise TypeError(f"html must be str or bytes, not {type(html).__name__}")
    data = bytes(html)
    if encoding is None and not data.isascii():
        try:  # valid UTF-8 is UTF-8 (docstring); the decode fails at the first invalid byte
            return data.decode("utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")
        except UnicodeDecodeError:
            pass
    headers: list[str | None] = [f"text/html; charset={encoding}"] if encoding else []
    headers += [None, "text/html; charset=utf-8"]  # then <meta charset>, then UTF-8
    for header in headers:
        try:
            return html_to_unicode(header, data, auto_detect_fun=_detect_encoding)[1]
        except (LookupError, UnicodeError, TypeError) as exc:
            logger.debug("charset ignored (%s): %s", header or "<meta charset>", exc)
    return data.decode("utf-8", "replace")  # not reached: UTF-8 with "replace" never fails


def is_utf8(data: bytes, piece: int = 1 << 16) -> bool:
    """Whether *data* is valid UTF-8 (strict, as ``data.decode("utf-8")``), checked in
    *piece*-byte pieces whose text is dropped at once (a whole page decoded into one
    ``str`` costs more in memory traffic than the check itself).

    >>> is_utf8("café".encode()), is_utf8("café".encode("cp1252"))
    (True, False)
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    view = memoryview(data)
    try:
        for start in range(0, len(data), piece):
            decoder.decode(view[start:start + piece])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


#: The legacy encodings a browser decodes (WHATWG Encoding, "Legacy single-byte
#: encodings" and the multi-byte ones, under Python's codec names): the candidates of
#: :func:`_detect_encoding`. DOS and EBCDIC code pages are no web encodings.
WEB_ENCODINGS = (
    "cp1252", "cp1250", "cp1251", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "cp874",
    "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_5", "iso8859_6", "iso8859_7", "iso8859_8", "iso8859_10",
    "iso8859_13", "iso8859_14", "iso8859_15", "iso8859_16", "koi8_r", "koi8_u", "mac_roman", "mac_cyrillic",
    "cp866", "gb18030", "big5", "euc_jp", "iso2022_jp", "shift_jis", "euc_kr",
)
#: A page's language (BCP 47 primary subtag; ``zh-tw``/``zh-hk`` whole) → the legacy
#: encoding a browser expects of it: the HTML standard's suggested default encodings by
#: locale (HTML §13.2.3.2, "Determining the character encoding"), windows-1252 for the
#: languages it does not list.
LOCALE_ENCODINGS = {
    "ar": "cp1256", "ba": "cp1251", "be": "cp1251", "bg": "cp1251", "cs": "cp1250", "el": "iso8859_7",
    "et": "cp1257", "fa": "cp1256", "he": "cp1255", "hr": "cp1250", "hu": "iso8859_2", "ja": "shift_jis",
    "kk": "cp1251", "ko": "euc_kr", "ku": "cp1254", "ky": "cp1251", "lt": "cp1257", "lv": "cp1257",
    "mk": "cp1251", "pl": "iso8859_2", "ru": "cp1251", "sah": "cp1251", "sk": "cp1250", "sl": "iso8859_2",
    "sr": "cp1251", "tg": "cp1251", "th": "cp874", "tr": "cp1254", "tt": "cp1251", "uk": "cp1251",
    "vi": "cp1258", "zh": "gb18030", "zh-tw": "big5", "zh-hk": "big5",
}
#: How much more "chaos" (charset-normalizer's measure of implausible characters, 0–1)
#: than the least a candidate may have and still be taken by the locale's preference.
CHAOS_TOLERANCE = 0.01
_LANG_RE = re.compile(
    rb"""<html\b[^>]*?\slang\s*=\s*["']?([A-Za-z]{2,3}(?:-[A-Za-z]{2})?)"""
    rb"""|<meta\b[^>]*?content-language[^>]*?content\s*=\s*["']?([A-Za-z]{2,3}(?:-[A-Za-z]{2})?)""",
    re.IGNORECASE)
_C1_BYTES_RE = re.compile(rb"[\x80-\x9f]")


def _c1_controls(encoding: str) -> frozenset[int]:
    """The bytes 0x80–0x9F that *encoding* decodes to C1 control characters (the
    ISO-8859 parts map all of them so; no text is written with them)."""
    out = set()
    for byte in range(0x80, 0xA0):
        try:
            char = bytes([byte]).decode(encoding)
        except UnicodeDecodeError:
            continue
        if len(char) == 1 and 0x80 <= ord(char) <= 0x9F:
            out.add(byte)
    return frozenset(out)


_C1_CONTROLS = {encoding: _c1_controls(encoding) for encoding in WEB_ENCODINGS}


def _declared_language(data: bytes) -> str | None:
    """The page's language from ``<html lang>`` or a ``Content-Language`` meta in its
    first 64 kB, lower case (``"cs"``, ``"zh-tw"``), or None."""
    found = _LANG_RE.search(data, 0, 1 << 16)
    if not found:
        return None
    return (found.group(1) or found.group(2)).decode("ascii").lower()


def _detect_encoding(data: bytes) -> str | None:
    """The encoding of undeclared page bytes (w3lib's ``auto_detect_fun``, called only when
    no BOM, header or ``<meta>`` names one): None (UTF-8, w3lib's default) when they are
    ASCII or valid UTF-8; else, of the :data:`WEB_ENCODINGS` that charset-normalizer finds
    least implausible (its chaos within :data:`CHAOS_TOLERANCE` of the least, an encoding
    that would turn a byte of the page into a C1 control character left out), the one a
    browser expects for the page's declared language (:data:`LOCALE_ENCODINGS`;
    windows-1252 for a page that declares none or another language), else the least
    implausible (None when there is no candidate).

    >>> _detect_encoding(("<p>" + "A câmara votou a reconstrução da ponte. " * 4).encode("cp1252"))
    'cp1252'
    >>> _detect_encoding(('<html lang="cs"><p>' + "Městská rada odhlasovala přestavbu mostu přes řeku. " * 4).encode("cp1250"))
    'cp1250'
    """
    if data.isascii() or is_utf8(data):
        return None
    from charset_normalizer import from_bytes

    used = {data[m.start()] for m in _C1_BYTES_RE.finditer(data)}
    candidates = [
        (match.chaos, encoding) for match in from_bytes(data, cp_isolation=list(WEB_ENCODINGS))
        for encoding in match.could_be_from_charset
        if encoding in _C1_CONTROLS and not used & _C1_CONTROLS[encoding]
    ]
    if not candidates:
        return None
    least = min(chaos for chaos, _ in candidates)
    near = {encoding: chaos for chaos, encoding in candidates if chaos <= least + CHAOS_TOLERANCE}
    language = _declared_language(data)
    preferred = LOCALE_ENCODINGS.get(language or "", LOCALE_ENCODINGS.get((language or "").split("-")[0], "cp1252"))
    if preferred in near:
        return preferred
    if preferred not in {encoding for _, encoding in candidates} and not used & _C1_CONTROLS[preferred]:
        # charset-normalizer stops at the first plausible candidates: measure this one too.
        own = from_bytes(data, cp_isolation=[preferred]).best()
        if own is not None and own.chaos <= least + CHAOS_TOLERANCE:
            return preferred
    return min(near, key=lambda encoding: (near[encoding], WEB_ENCODINGS.index(encoding)))


def sniff_not_html(source: str, raw: bytes | None = None) -> str | None:
    """Why *source* is not an HTML page, or None if it may be one.

    Looks at the first 4,096 characters (and, for bytes input, the first raw bytes):
    binary magic numbers (PDF, PNG, GIF, JPEG, ZIP, gzip, RIFF, Ogg, MP3); binary data,
    i.e. more than 1 % of the characters are WHATWG "binary data bytes" (C0 controls
    other than whitespace, the MIME Sniffing standard's rule for text vs binary, with a
    tolerance for a few stray ones); a JSON document; and text without any tag. Empty or
    whitespace-only input is *not* flagged (it is an empty page).

    >>> sniff_not_html('%PDF-1.7 ...')
    'binary data (PDF), not HTML'
    >>> sniff_not_html('{"title": "<b>x</b>"}')
    'JSON, not HTML'
    >>> sniff_not_html('<p>' + '\\x03\\x91\\x00' * 100)
    'binary data (control characters), not HTML'
    >>> sniff_not_html('<!doctype html><p>Hi</p>') is None
    True
    """
    head = source[:_SNIFF_CHARS].lstrip("\ufeff \t\r\n\f")
    heads = [head]
    if raw is not None and not raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        heads.append(bytes(raw[:64]).decode("latin-1").lstrip(" \t\r\n\f"))
    for start in heads:
        for magic in _BINARY_MAGIC:
            if start.startswith(magic):
                kind = "PDF" if magic == "%PDF" else repr(magic)[1:-1].lstrip("\\x0123456789")
                return f"binary data ({kind or 'magic number'}), not HTML"
    if not head:
        return None
    data = head.encode("utf-8", "surrogatepass")
    controls = len(data) - len(data.translate(None, _BINARY_BYTES))
    if controls > max(4, len(head) // 100):
        return "binary data (control characters), not HTML"
    if head[0] in "{[" and _is_json(source):
        return "JSON, not HTML"
    if not _MARKUP_RE.search(head):
        return "text without markup, not HTML"
    return None


def _is_json(source: str) -> bool:
    try:
        json.loads(source)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, eq=False)
class Page:
    """A parsed page and its text nodes in document (pre-order) order.

    Build it with :meth:`Page.from_html`. Arrays have shape ``(N,)`` for ``N`` text nodes:

    * ``texts``: list of N normalised strings (trimmed, whitespace collapsed);
    * ``path_ids``: int64, index of the node's tag path in ``paths``;
    * ``blocks``: int64, display-block id; nodes with the same id print on one line (a
      new block starts where the nearest block element changes and after a ``<br>``);
    * ``in_link``: bool, the node is inside an ``<a>``;
    * ``owners``: list of N lxml elements that own each text (the parent for a tail).

    The distinct tag paths form a tree: path ``p`` is its parent path ``path_parents[p]``
    (-1 for ``html``) plus the tag ``path_names[p]``. :attr:`paths` gives them dotted
    (``html.body.div.p``, built on first access), ``path_codes`` as strings of one character per tag name (for token-level
    edit distances, see :func:`~scrapy_cepr.core.smoothing.adjacent_path_weights`), and
    ``headings`` are ``(level, first_node, end_node)`` ranges of ``h1``–``h3`` elements.
    ``root`` is the cleaned lxml tree (or None for an empty page); ``source`` the decoded
    HTML; ``body_nodes`` the list of the nodes of ``<body>``'s subtree in pre-order, as
    the walk visited them (``body`` first; empty without a body), ``body_parents`` the
    index in it of each one's parent (int64, -1 for ``body``) and ``owner_nodes`` that of
    each text node's owner (int64 ``(N,)``: ``owners[i] is body_nodes[owner_nodes[i]]``);
    ``gap_before`` (int8 ``(N,)``) what separates each text node from the one before it in
    the source: 0 nothing, 1 white space, 2 a ``<br>`` (:func:`_gaps_before`;
    :func:`~scrapy_cepr.core.text.assemble_body` joins the kept nodes as a browser renders
    them);
    ``json_ld`` the text of
    the page's JSON-LD blocks (read before the scripts are removed) and ``itemtypes`` its
    microdata ``itemtype`` values, in source order (both for the page type); ``derived``
    memoises values that the layers above compute from this parse and that several of them
    read (the page-type probabilities: the title, cepr-typed, the confidence and the crawl's
    worker each need them), so each is computed once per page. Holding the nodes keeps
    their lxml proxies alive, so a later pass over the tree
    (:class:`~scrapy_cepr.core.region.DomTable`) does not build them again. Treat
    everything as read-only.
    """

    source: str
    url: str | None
    root: etree._Element | None
    texts: list[str]
    path_ids: np.ndarray
    path_parents: list[int]
    path_names: list[str]
    path_codes: list[str]
    blocks: np.ndarray
    in_link: np.ndarray
    owners: list
    headings: list[tuple[int, int, int]]
    html_title: str | None
    meta_title: str | None
    body_nodes: list = field(default_factory=list, repr=False)  # the walk's nodes, see above
    body_parents: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    owner_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    gap_before: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int8), repr=False)
    json_ld: tuple[str, ...] = field(default=(), repr=False)
    itemtypes: tuple[str, ...] = field(default=(), repr=False)
    derived: dict[str, Any] = field(default_factory=dict, repr=False)  # per-parse memo, see above

    @classmethod
    def from_html(cls, html: str | bytes, *, url: str | None = None, encoding: str | None = None) -> Page:
        """Decode, sniff, parse and walk *html*.

        :param html: the page, ``str`` or ``bytes`` (decoded by :func:`decode_html`).
        :param url: the page's URL, kept for the result only.
        :param encoding: a charset from the transport (HTTP header), tried before
            ``<meta charset>``.
        :raises NotHTMLError: binary data, JSON or text without markup
            (:func:`sniff_not_html`).
        :raises ParseError: the page is nested too deep to be parsed whole
            (:func:`~scrapy_cepr.core.parse.parse_html`).
        :raises TooComplexError: too many attributes on one element, attributes or
            elements (:func:`~scrapy_cepr.core.parse.check_bounds`, before the parse).
        :raises TypeError: *html* is neither str nor bytes.

        Empty, whitespace-only and text-less pages give a Page with no text nodes. The
        tree is laid out as a browser displays it (:mod:`scrapy_cepr.core.parse`: a head
        that swallowed the body, content after an early ``</html>``, nesting deeper than
        libxml2's limit); the walk is iterative, so no input can exhaust the Python stack.
        Control characters (C0 and C1 except whitespace) are not part of any text.
        """
        source = decode_html(html, encoding)
        reason = sniff_not_html(source, html if isinstance(html, (bytes, bytearray, memoryview)) else None)
        if reason:
            raise NotHTMLError(reason)
        data = encode_source(source)
        json_ld: list[str] = []
        itemtypes, itemprop = _microdata(data)
        root = _parse(data, json_ld, itemprop)
        if root is None:
            return cls._empty(source, url)
        return cls._walk(source, url, root, tuple(json_ld), itemtypes)

    @classmethod
    def _empty(cls, source: str, url: str | None, root=None, html_title=None, meta_title=None,
               json_ld: tuple[str, ...] = (), itemtypes: tuple[str, ...] = ()) -> Page:
        return cls(
            source=source, url=url, root=root, texts=[], path_ids=np.zeros(0, np.int64), path_parents=[],
            path_names=[], path_codes=[], blocks=np.zeros(0, np.int64), in_link=np.zeros(0, bool), owners=[],
            headings=[], html_title=html_title, meta_title=meta_title, json_ld=json_ld,
            itemtypes=itemtypes,
        )

    @classmethod
    def _walk(cls, source: str, url: str | None, root: etree._Element, json_ld: tuple[str, ...] = (),
              itemtypes: tuple[str, ...] = ()) -> Page:
        html_title = _clean(root.findtext("head/title"))
        meta_title = None
        for meta in root.iterfind("head/meta"):
            if meta.get("property") == "og:title" or meta.get("name") in ("og:title", "twitter:title"):
                meta_title = _clean(meta.get("content"))
                break
        promote_displayed_headline(root, url, meta_title or html_title)
        body = root.find("body")
        if body is None:
            return cls._empty(source, url, root, html_title, meta_title, json_ld, itemtypes)

        texts, owner_ids, node_paths, node_blocks, breaks, paths, elements, parents, gaps = _text_nodes(body)
        path_parents, path_names, path_codes, path_level, path_link = paths
        pids = _array(node_paths, np.int64)
        block_el = _array(node_blocks, np.int64)
        gap_before = _array(gaps, np.int8)
        # Lines: a new one where the block element changes, after a block's tail, and
        # after a <br> wherever the next text is (``<br><font>Next paragraph</font>``
        # starts a line as its tail would).
        new_line = _array(breaks, bool) | (gap_before == 2)
        if new_line.size:
            new_line[1:] |= block_el[1:] != block_el[:-1]
            new_line[0] = True
        blocks = new_line.cumsum(dtype=np.int64)
        return cls(
            source=source,
            url=url,
            root=root,
            texts=texts,
            path_ids=pids,
            path_parents=path_parents,
            path_names=path_names,
            path_codes=path_codes,
            blocks=blocks,
            in_link=_array(path_link, bool)[pids],
            owners=list(map(elements.__getitem__, owner_ids)),
            headings=_heading_runs(_array(path_level, np.int64)[pids], blocks),
            html_title=html_title,
            meta_title=meta_title,
            body_nodes=elements,
            body_parents=_array(parents, np.int64),
            owner_nodes=_array(owner_ids, np.int64),
            gap_before=gap_before,
            json_ld=json_ld,
            itemtypes=itemtypes,
        )

    @cached_property
    def paths(self) -> list[str]:
        """Each distinct tag path dotted, e.g. ``html.body.div.p`` (index = path id)."""
        return dotted_paths(self.path_parents, self.path_names)

    def __len__(self) -> int:
        """Number of text nodes N."""
        return len(self.texts)

    @cached_property
    def char_counts(self) -> np.ndarray:
        """``txtNum`` per text node: characters of the normalised text, int64 ``(N,)``."""
        return np.fromiter(map(len, self.texts), dtype=np.int64, count=len(self.texts))

    @cached_property
    def latin_counts(self) -> np.ndarray:
        """The characters of each text node as in a Latin script, int64 ``(N,)``: a Han,
        kana or Hangul character counts 3 (:func:`~scrapy_cepr.core.text.latin_lengths`);
        :attr:`char_counts` itself when the page has none. Length thresholds of a sentence
        or a heading read this, so that they mean the same content in every script."""
        from .text import latin_lengths

        return latin_lengths(self.texts, self.char_counts)

    @cached_property
    def punct_counts(self) -> np.ndarray:
        """``puncNum`` per text node: Unicode P* characters, int64 ``(N,)``
        (:func:`~scrapy_cepr.core.text.count_punctuation`)."""
        from .text import count_punctuation

        return count_punctuation(self.texts, self.char_counts)

    def node_path(self, i: int) -> str:
        """Dotted tag path of text node *i*."""
        return self.paths[self.path_ids[i]]

    def block_element(self, i: int) -> int:
        """The index in :attr:`body_nodes` of the nearest element of :data:`BLOCK_TAGS`
        that holds text node *i* (``<body>``, 0, at most): the lines of one element that
        only ``<br>`` separates share it.

        >>> page = Page.from_html("<div><b>Ann</b><br>2 March 2008</div><p>Nice.</p>")
        >>> [page.block_element(i) for i in range(len(page))]
        [1, 1, 4]
        """
        nodes, parents = self.body_nodes, self.body_parents
        e = int(self.owner_nodes[i])
        while e > 0 and nodes[e].tag not in BLOCK_TAGS:
            e = int(parents[e])
        return e


def _text_nodes(body: etree._Element) -> tuple:
    """The non-blank text nodes under *body* in document order, in one pass.

    ``body.iter()`` visits the elements in pre-order (in C); a stack of the open elements
    (closed when the next element's parent is further up) places each tail after its
    element's subtree, where it is displayed. Tag paths are interned as a tree (parent
    path id, tag → path id), so no string is built per node.

    Returns ``(texts, owners, path_ids, block_ids, breaks, paths, nodes, node_parents, gaps)``:
    per text node its normalised text, the index in *nodes* of its owner element (the
    parent, for a tail), its path id, the id of its nearest block element (of its table
    row, for a cell of a data-table row: :func:`_data_rows`), and whether it
    follows a block element or ``<br>`` (a tail that starts a new line); and ``paths =
    (parents, names, codes, heading levels, link flags)`` per distinct tag path; then the
    list of the nodes of *body*'s subtree in pre-order (:attr:`Page.body_nodes`) and the
    index in it of each node's parent (-1 for *body*), which the stack knows, so that the
    element table (:class:`~scrapy_cepr.core.region.DomTable`) need not look them up
    again; and per text node what separates it from the one before (:func:`_gaps_before`).
    Adjacent text left by a removed element
    (``2000-<script>…</script> MacRumors``) is one node, as ``.text``/``.tail`` give it.
    """
    path_parents = [-1, 0]
    path_names = ["html", "body"]
    path_level = [0, 0]  # innermost h1-h3 on the path (0: none)
    path_link = [False, False]  # the path passes through an <a>
    children: list[dict] = [{"body": 1}, {}]  # per path id: tag -> child path id
    tag_codes: dict[object, str] = {"html": _code(0), "body": _code(1)}
    path_codes = [tag_codes["html"], tag_codes["html"] + tag_codes["body"]]
    # One record (text, owner, path id, block id, starts a line) per text node.
    records: list[tuple] = []
    add = records.append
    # This loop is the page model's cost (Python per element): the open elements are one
    # stack of (element, path id, block id, breaks a line, child paths by tag) tuples with
    # its top in locals, and each tag name is read from lxml once.
    block_tags, breaking_tags, heading_tags = BLOCK_TAGS, _BREAKING_TAGS, _HEADING_TAGS
    stack = [(body, 1, 1, True, children[1], 0)]  # the open elements from <body> down
    push, pop = stack.append, stack.pop
    top, top_path, top_block, known, top_i = body, 1, 1, children[1], 0
    next_block = 2
    blanks: list[int] = []  # before which record a whitespace-only text lies
    line_breaks: list[int] = []  # before which record a <br> lies
    cell_row: dict[int, int] = {}  # block id of a td/th child of a tr -> the tr's block id
    layout_rows: set[int] = set()  # block ids of the rows with a cell that holds a line break
    text = body.text
    if text:
        if text.isspace():
            blanks.append(0)
        else:
            add((text, 0, 1, 1, False))
    elements = list(body.iter())
    parents = [-1]  # per node, its parent's index in ``elements``
    add_parent = parents.append
    for i, el in enumerate(islice(elements, 1, None), 1):  # after <body> itself
        parent = el.getparent()
        while top is not parent:
            # Close the open elements below the parent: their tails come now, innermost
            # first, each owned by the element it is displayed in.
            closed = pop()
            top, top_path, top_block, _, known, top_i = stack[-1]
            tail = closed[0].tail
            if tail:
                if tail.isspace():
                    blanks.append(len(records))
                else:
                    add((tail, top_i, top_path, top_block, closed[3]))
        add_parent(top_i)
        tag = el.tag
        child = known.get(tag)
        if child is None:
            child = known[tag] = len(path_names)
            children.append({})
            path_parents.append(top_path)
            path_names.append(tag if isinstance(tag, str) else "#")
            path_level.append(heading_tags.get(tag, path_level[top_path]))
            path_link.append(tag == "a" or path_link[top_path])
            code = tag_codes.get(tag)
            if code is None:
                code = tag_codes[tag] = _code(len(tag_codes))
            path_codes.append(path_codes[top_path] + code)
        known = children[child]
        if tag in block_tags:
            row = cell_row.get(top_block)
            if row is not None:  # block content in a cell: a layout row
                layout_rows.add(row)
            elif (tag == "td" or tag == "th") and path_names[top_path] == "tr":
                cell_row[next_block] = top_block
                blanks.append(len(records))  # cells of a row are apart on its line
            top_block = next_block
            next_block += 1
            push((el, child, top_block, True, known, i))
        elif tag in breaking_tags:  # <br>: the next text starts a line, wherever it is
            if top_block in cell_row:  # a line break in a cell: a layout row
                layout_rows.add(cell_row[top_block])
            line_breaks.append(len(records))
            push((el, child, top_block, True, known, i))
        else:
            push((el, child, top_block, False, known, i))
        top, top_path, top_i = el, child, i
        text = el.text
        if text:
            if text.isspace():
                blanks.append(len(records))
            else:
                add((text, i, child, top_block, False))
    while top is not body:
        closed = pop()
        top, top_path, top_block, _, known, top_i = stack[-1]
        tail = closed[0].tail
        if tail:
            if tail.isspace():
                blanks.append(len(records))
            else:
                add((tail, top_i, top_path, top_block, closed[3]))
    if records:
        raw, owner_ids, node_paths, node_blocks, breaks = map(list, zip(*records))
    else:
        raw, owner_ids, node_paths, node_blocks, breaks = [], [], [], [], []
    if cell_row:
        node_blocks = _data_rows(node_blocks, cell_row, layout_rows)
    texts = [" ".join(t.split()) for t in raw]
    if has_controls("".join(texts)):  # rare
        raw = [CONTROL_RE.sub("", t) for t in raw]
        keep = [i for i, t in enumerate(raw) if t.split()]
        gaps = _kept_gaps(_gaps_before(raw, blanks, line_breaks), raw, keep)
        texts = [" ".join(raw[i].split()) for i in keep]
        owner_ids = [owner_ids[i] for i in keep]
        node_paths = [node_paths[i] for i in keep]
        node_blocks = [node_blocks[i] for i in keep]
        breaks = [breaks[i] for i in keep]
    else:
        gaps = _gaps_before(raw, blanks, line_breaks)
    paths = (path_parents, path_names, path_codes, path_level, path_link)
    return texts, owner_ids, node_paths, node_blocks, breaks, paths, elements, parents, gaps


def _gaps_before(raw: list[str], blanks: list[int], line_breaks: list[int]) -> list[int]:
    """Per raw text of the walk, what separates it from the text before it in the source,
    as a browser renders it: 2 a ``<br>`` (a line break, HTML "The br element"; its record
    index is in *line_breaks*), else 1 white space (it starts with some, the text before
    ends with some, or a whitespace-only text lies between them: its index is in
    *blanks*), which collapses to one space across inline element boundaries (CSS Text 3,
    §4.1.1), else 0: the two texts abut (``<b>Bold</b>, plain`` reads ``Bold, plain``).

    >>> _gaps_before(["a ", "b", "c", " d", "e"], [2], [4])
    [0, 1, 1, 1, 2]
    """
    gap = [0] * len(raw)
    trail = False
    for i, t in enumerate(raw):
        if trail or t[:1].isspace():
            gap[i] = 1
        if t:  # an empty text (controls only, removed) passes the white space before it on
            trail = t[-1].isspace()
    n = len(gap)
    for k in blanks:
        if k < n:
            gap[k] = 1
    for k in line_breaks:
        if k < n:
            gap[k] = 2
    return gap


def _kept_gaps(gap: list[int], raw: list[str], keep: list[int]) -> list[int]:
    """:func:`_gaps_before` of the texts *keep* (indices into *raw*, ascending) once the
    others (blank after the removal of control characters) are gone: the widest gap of a
    text that is gone (at least a space when it held white space) or before it, and the
    kept text's own.

    >>> _kept_gaps([0, 0, 1, 0, 2, 0], ["a", "", " ", "b", "", "c"], [0, 3, 5])
    [0, 1, 2]
    """
    out: list[int] = []
    carry = 0
    kept = set(keep)
    for i, (g, t) in enumerate(zip(gap, raw)):
        if i in kept:
            out.append(max(g, carry))
            carry = 0
        else:
            carry = max(carry, g, 1 if t else 0)
    return out


def _data_rows(node_blocks: list[int], cell_row: dict[int, int], layout_rows: set[int]) -> list[int]:
    """*node_blocks* with the cells of each data-table row on the row's line: a ``td`` or
    ``th`` of a ``tr`` that no cell of breaks into lines (no block element, no ``<br>``)
    takes the row's block id, as a browser lays the cells of a row side by side (CSS 2.1
    §17). A row with block content or a line break in a cell (a layout table: a navigation
    column beside the story) keeps one block per cell.

    >>> _data_rows([3, 4, 6, 7], {3: 2, 4: 2, 6: 5, 7: 5}, {5})
    [2, 2, 6, 7]
    """
    merged = {cell: row for cell, row in cell_row.items() if row not in layout_rows}
    if not merged:
        return node_blocks
    get = merged.get
    return [get(b, b) for b in node_blocks]


def _array(values: list, dtype: Any) -> np.ndarray:
    """*values* (a list of ints or bools) as a 1-D array of *dtype* (``np.fromiter`` with
    the length known: a fifth cheaper than ``np.array`` on a list)."""
    return np.fromiter(values, dtype, len(values))


def dotted_paths(parents: list[int], names: list[str]) -> list[str]:
    """The dotted tag paths of a path tree given as parent ids and tag names (a parent
    always precedes its children, -1 is the root's parent).

    >>> dotted_paths([-1, 0, 1, 1], ["html", "body", "div", "p"])
    ['html', 'html.body', 'html.body.div', 'html.body.p']
    """
    paths: list[str] = []
    for parent, name in zip(parents, names):
        paths.append(f"{paths[parent]}.{name}" if parent >= 0 else name)
    return paths


def _code(index: int) -> str:
    """The one-character code of the *index*-th distinct tag name of a page."""
    return chr(0x4E00 + index)


def _heading_runs(level: np.ndarray, blocks: np.ndarray) -> list[tuple[int, int, int]]:
    """``(level, first, end)`` for each run of consecutive text nodes inside an ``h1``–``h3``
    of one line (one heading element)."""
    inside = level > 0
    if not inside.any():
        return []
    start = inside.copy()
    start[1:] &= ~inside[:-1] | (blocks[1:] != blocks[:-1]) | (level[1:] != level[:-1])
    firsts = start.nonzero()[0].tolist()
    runs = []
    for first in firsts:
        end = first + 1
        while end < level.size and inside[end] and not start[end]:
            end += 1
        runs.append((int(level[first]), first, end))
    return runs


def _clean(text: str | None) -> str | None:
    """*text* trimmed, whitespace runs collapsed and control characters removed; None
    if nothing is left."""
    if not text:
        return None
    text = " ".join(CONTROL_RE.sub("", text).split())
    return text or None


def _parse(data: bytes, json_ld: list[str] | None, itemprop: bool) -> etree._Element | None:
    """Parse UTF-8 *data* into a repaired tree without :data:`REMOVED_TAGS`
    (:mod:`.parse`) and :data:`NOT_RENDERED_TAGS`; None if empty. *json_ld* receives the
    page's JSON-LD blocks (:func:`~scrapy_cepr.core.parse.parse_html`). Hidden
    microdata copies are removed too (:func:`drop_hidden_microdata`), on a page whose
    source holds ``itemprop`` (*itemprop*, from :func:`_microdata`), and layout tables are
    read as boxes (:func:`read_layout_tables`)."""
    root = parse_html(data, json_ld=json_ld, also_removed=NOT_RENDERED_TAGS)
    if root is not None and itemprop:
        drop_hidden_microdata(root)
    if root is not None:
        read_layout_tables(root)
    return root


# For promote_displayed_headline. Elements whose text is not a displayed headline
# (controls, graphics, captions):
_NOT_HEADLINE_TAGS = frozenset(["button", "option", "select", "label", "textarea", "svg", "figcaption", "caption",
                                "legend", "summary", "title"])
# Structural elements a headline is not climbed above or promoted at (a cell, a row, a list
# item: their siblings are the page's data):
_HEADLINE_STOPS = frozenset(["td", "th", "tr", "table", "tbody", "thead", "tfoot", "li", "ul", "ol", "dl", "dt", "dd",
                             "menu", "form", "body", "html"])
_ITEM_TAGS = frozenset(["li", "ul", "ol", "dl", "dt", "dd", "nav", "menu"])  # in a list or the navigation
_ALL_HEADINGS = frozenset(["h1", "h2", "h3", "h4", "h5", "h6"])
_HEADLINE_MATCH = 85.0  # rapidfuzz ratio of a displayed text to the page's name
_HEADLINE_COVER = 0.6  # share of the page's name that a displayed part of it covers
_MAX_TIES = 16  # equal candidates at most (a name shown more often is a list item, not a headline)


def promote_displayed_headline(root: etree._Element, url: str | None, reference: str | None) -> etree._Element | None:
    """On a page whose body has no ``h1``, read the element that displays the page's name
    as its ``h1``: rename it (or wrap a link in one) in place, and return it; None when
    nothing is promoted. A headline written as ``<font size=6><b>…</b></font><br>`` or in
    a ``<div class="headline">`` is then the page's heading for every layer above (the
    title search, the page type, the block features, the body's anchor), as the ``h1``
    of the same page's newer template would be.

    *reference* is the page's ``og:title`` or ``<title>``; the page's name is what is left
    of it without the site's name (:func:`~scrapy_cepr.core.sitename.page_name` and
    :func:`~scrapy_cepr.core.sitename.drop_site_name`, with the names of
    :func:`~scrapy_cepr.core.sitename.page_site_names`). A *candidate* is an element with
    its own text whose whole text matches the page's name, ignoring case and spaces: it is a
    part of the name between word boundaries covering ≥ 60 % of it (``<title>`` "Review:
    Storm hits the coast", shown "Storm hits the coast"), or its rapidfuzz ``ratio`` is ≥
    85 (80 for the ``h1``–``h3`` of :func:`~scrapy_cepr.core.title.pick_title`; here
    every element of the page competes). Not candidates: the site's name (a logo), text
    in a control, a graphic or a caption, text in a list or the navigation (``ul``,
    ``ol``, ``dl``, their items, ``nav``, ``menu``), text in a link unless the link is
    one of the page's own addresses (a permalink: *url*, or the address the page declares,
    :func:`page_addresses`), and text that has no box of
    its own: the element promoted is the first block element holding that text alone, up
    from the text through inline ones (the ``div`` of ``<div><font><b>…</b></font></div>``)
    and below any table cell, list item or form, else an inline one alone on its line (not
    a lead-in in bold that shares its line with the story).

    The best match wins. Of several equal ones, those outside links win over permalinks
    (a card linking to the page itself, in a "recommended" list), and of these the one
    followed by the most text before the next (the name shown in a bar at the top and
    again above the story). Nothing is promoted when a best match stands in an
    ``h2``–``h6`` (the page's headings show it), when more than 16 match equally (the name
    of a list's items, not a headline), or when several equal ones are all permalinks
    (cards).

    >>> from lxml import html
    >>> root = html.fromstring("<html><head><title>Storm hits coast - Herald</title></head><body>"
    ...     "<font size=6><b>Storm hits coast</b></font><br>The storm hit the coast.</body></html>")
    >>> promote_displayed_headline(root, None, "Storm hits coast - Herald").tag
    'h1'
    >>> html.tostring(root.find("body"))
    b'<body><h1 size="6"><b>Storm hits coast</b></h1><br>The storm hit the coast.</body>'
    >>> root = html.fromstring("<html><body><p><b>Storm hits coast</b> as the tide rises.</p></body></html>")
    >>> promote_displayed_headline(root, None, "Storm hits coast") is None
    True
    """
    body = root.find("body")
    if body is None or not reference or next(body.iter("h1"), None) is not None:
        return None
    names = page_site_names(root, url, reference)
    refs = {" ".join(r.split()).casefold() for r in (page_name(reference, names), drop_site_name(reference, names))}
    refs.discard("")
    if not refs:
        return None
    addresses = page_addresses(root, url)
    shortest, longest = min(map(len, refs)), max(map(len, refs))
    low, high = int(_HEADLINE_COVER * shortest), int(longest * (200 - _HEADLINE_MATCH) / _HEADLINE_MATCH) + 1
    # The best score and its candidates (element to promote, or None in a heading; text;
    # whether it is in a link), in document order.
    best = 0.0
    ties: list[tuple[etree._Element | None, str, bool]] = []
    for el in body.iter():
        own = el.text
        if not own or own.isspace() or not isinstance(el.tag, str):
            continue
        text = _capped_text(el, high)
        if text is None or len(text) < low or not any(c.isalpha() for c in text):
            continue
        score = max(_name_match(text, ref) for ref in refs)
        if score < max(best, _HEADLINE_MATCH):
            continue
        if score == best and len(ties) > _MAX_TIES:  # the name in a list: read no further
            continue
        if names and is_site_name(text, names) or not _may_be_headline(el, url, addresses):
            continue
        in_heading = el.tag in _ALL_HEADINGS or any(a.tag in _ALL_HEADINGS for a in el.iterancestors())
        top = None if in_heading else _headline_box(el, text)
        if top is None and not in_heading:
            continue
        if score > best:
            best, ties = score, []
        linked = el.tag == "a" or any(a.tag == "a" for a in el.iterancestors())
        ties.append((top, text, linked))
    boxes = [(top, text) for top, text, _ in ties if top is not None]
    if not boxes or len(boxes) < len(ties) or len(ties) > _MAX_TIES:  # none, in a heading, or a list
        return None
    if len(boxes) > 1:
        # A card linking to the page itself ties with the headline shown as text; several
        # such links and no text are cards (a list of teasers), not a headline.
        boxes = [(top, text) for top, text, linked in ties if not linked]
        if not boxes:
            return None
    top = boxes[0][0] if len(boxes) == 1 else _heading_most_text(body, boxes)
    if top.tag == "a":  # a permalink stays a link, in a heading
        heading = top.makeelement("h1", {})
        heading.tail, top.tail = top.tail, None
        top.addprevious(heading)
        heading.append(top)
        return heading
    top.tag = "h1"
    return top


def _headline_box(el: etree._Element, text: str) -> etree._Element | None:
    """The element to promote for the candidate *el* whose whole text is *text*: up from it
    through inline elements holding that text alone, to the first block one, below any
    table cell, list item or form; an inline one must be alone on its line. None when
    there is no such element."""
    top = el
    while top.tag not in BLOCK_TAGS and (parent := top.getparent()) is not None \
            and parent.tag not in _HEADLINE_STOPS and _capped_text(parent, len(text)) == text:
        top = parent
    if top.tag in _HEADLINE_STOPS or (top.tag not in BLOCK_TAGS and not _alone_on_line(top)):
        return None
    return top


def _heading_most_text(body: etree._Element, ties: list[tuple[etree._Element, str]]) -> etree._Element:
    """Of the *ties* (elements showing the page's name equally well, in document order),
    the one followed by the most text before the next of them (or the end of *body*):
    the headline heads the story, a copy in a bar at the top or the foot heads little."""
    starts = {el: i for i, (el, _) in enumerate(ties)}
    after = [0] * len(ties)
    current = -1
    for event, el in etree.iterwalk(body, events=("start", "end")):
        if event == "start":
            current = starts.get(el, current)
            if current >= 0 and el.text and isinstance(el.tag, str):
                after[current] += len(el.text.strip())
        elif current >= 0 and el.tail and el is not body:
            after[current] += len(el.tail.strip())
    return ties[max(range(len(ties)), key=lambda i: (after[i], -i))][0]


def _capped_text(el: etree._Element, most: int) -> str | None:
    """*el*'s text with spaces collapsed, case-folded; None when it has more than *most*
    characters (read no further than that, give or take one text)."""
    parts, size = [], 0
    for piece in el.itertext():
        parts.append(piece)
        size += len(piece)
        if size > 4 * most + 64:  # raw text: collapsed white space aside
            return None
    text = " ".join("".join(parts).split()).casefold()
    return text if len(text) <= most else None


def _name_match(text: str, name: str) -> float:
    """100 when *text* is a part of *name* between word boundaries that covers at least
    :data:`_HEADLINE_COVER` of it, else their rapidfuzz ``ratio`` (0–100).

    >>> _name_match("storm hits the coast", "review: storm hits the coast"), _name_match("storm", "storms")
    (100.0, 90.9090909090909)
    """
    at = name.find(text) if len(text) >= _HEADLINE_COVER * len(name) else -1
    if at >= 0 and (at == 0 or not name[at - 1].isalnum()) and (
            at + len(text) == len(name) or not name[at + len(text)].isalnum()):
        return 100.0
    return fuzz.ratio(text, name)


def page_addresses(root: etree._Element, url: str | None) -> frozenset[tuple[str | None, str]]:
    """The page's own addresses as ``(host, path)`` pairs (host lower case, None when
    unknown; path without its trailing ``/``): *url*, and the addresses the page declares
    for itself, its ``<link rel="canonical">`` (RFC 6596) and ``og:url``, resolved against
    *url*. A permalink to any of them links the page to itself.

    >>> from lxml import html
    >>> root = html.fromstring('<html><head><link rel="canonical" href="https://news.example/2018/storm/">'
    ...                        '</head><body></body></html>')
    >>> sorted(page_addresses(root, None))
    [('news.example', '/2018/storm')]
    >>> sorted(page_addresses(root, "http://m.news.example/2018/storm?utm=x"))
    [('m.news.example', '/2018/storm'), ('news.example', '/2018/storm')]
    """
    values = [url] if url else []
    for el in root.iterfind("head/link"):
        if "canonical" in (el.get("rel") or "").lower().split():
            values.append(el.get("href"))
    for el in root.iterfind("head/meta"):
        if (el.get("property") or el.get("name")) == "og:url":
            values.append(el.get("content"))
    out = set()
    for value in values:
        address = _address(value, url)
        if address is not None:
            out.add(address)
    return frozenset(out)


def _address(href: str | None, base: str | None) -> tuple[str | None, str] | None:
    """``(host, path)`` of *href* resolved against *base* (either may be None), or None
    for an empty, fragment-only or malformed one."""
    href = (href or "").strip()
    if not href or href.startswith("#"):
        return None
    try:
        parts = urlsplit(urljoin(base, href) if base else href)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme not in ("", "http", "https"):
        return None
    return host, parts.path.rstrip("/")


def _may_be_headline(el: etree._Element, url: str | None, addresses: frozenset[tuple[str | None, str]]) -> bool:
    """Whether the text of *el* may be the displayed headline: not in a control, a graphic
    or a caption, not in a list or the navigation (``ul``, ``ol``, ``dl``, their items,
    ``nav``, ``menu``: a menu entry or a teaser can carry the page's name), and not in a
    link unless that link is one of the page's own *addresses* (:func:`page_addresses`;
    the link resolved against *url*, the hosts compared when both are known)."""
    link = el if el.tag == "a" else None
    for a in el.iterancestors():
        if a.tag in _NOT_HEADLINE_TAGS or a.tag in _ITEM_TAGS:
            return False
        if a.tag == "a" and link is None:
            link = a
    if el.tag in _NOT_HEADLINE_TAGS or el.tag in _ITEM_TAGS:
        return False
    if link is None:
        return True
    if not addresses:  # no address known: no link can be shown to be a permalink
        return False
    there = _address(link.get("href"), url)
    if there is None:
        return False
    return any(path == there[1] and (host is None or there[0] is None or host == there[0])
               for host, path in addresses)


def _alone_on_line(el: etree._Element) -> bool:
    """Whether the inline element *el* is the only text of its line: nothing but white space
    between it and the ``<br>`` or block boundary before and after it."""
    while True:
        parent = el.getparent()
        if parent is None:
            return True
        prev = el.getprevious()
        while prev is not None and not isinstance(prev.tag, str):  # a comment: its tail counts
            if prev.tail and not prev.tail.isspace():
                return False
            prev = prev.getprevious()
        if prev is None:
            if parent.text and not parent.text.isspace():
                return False
        elif (prev.tail and not prev.tail.isspace()) or prev.tag not in _BREAKING_TAGS:
            return False
        if el.tail and not el.tail.isspace():
            return False
        nxt = el.getnext()
        while nxt is not None and not isinstance(nxt.tag, str):
            if nxt.tail and not nxt.tail.isspace():
                return False
            nxt = nxt.getnext()
        if nxt is not None:
            return nxt.tag in _BREAKING_TAGS
        if parent.tag in BLOCK_TAGS:
            return True
        el = parent


#: A table with one of these children holds data (a caption, a header row group, column
#: groups): HTML's own table structure, which a layout table has no use for.
_DATA_TABLE_CHILDREN = frozenset(["caption", "thead", "tfoot", "colgroup", "col"])
#: ARIA roles that take the table semantics away (WAI-ARIA 1.2, "presentation").
_PRESENTATION_ROLES = frozenset(["presentation", "none"])


def is_layout_table(table: etree._Element) -> bool:
    """Whether *table* lays out the page rather than holding data, as the browsers'
    accessibility trees decide it (Gecko's ``IsProbablyLayoutTable``, the order that
    readability's ``_markDataTables`` follows too), from the markup alone:

    1. ``role="presentation"`` or ``"none"``: layout (WAI-ARIA 1.2);
    2. a ``summary``, a ``caption``, ``thead``, ``tfoot``, ``colgroup`` or ``col`` child, or
       a ``th`` cell: data (the structures of a data table);
    3. a table nested in it: layout;
    4. one column or one row: layout;
    5. five columns or more: data;
    6. otherwise layout when it has at most 10 cells (rows × columns; Gecko's "many rows"
       rule, twenty rows or more, is in this one).

    Rows are the ``tr`` children of the table and of its ``tbody``; columns, the most
    ``td`` in a row. No class name, no style.

    >>> from lxml import html
    >>> is_layout_table(html.fromstring('<table><tr><td><p>Story</p></td><td>Menu</td></tr></table>'))
    True
    >>> is_layout_table(html.fromstring('<table><tr><th>Team</th><th>Pts</th></tr>'
    ...                                 '<tr><td>Ajax</td><td>31</td></tr></table>'))
    False
    """
    if (table.get("role") or "").strip().lower() in _PRESENTATION_ROLES:
        return True
    if (table.get("summary") or "").strip() or any(child.tag in _DATA_TABLE_CHILDREN for child in table):
        return False
    rows, _ = _table_rows(table)
    columns = 0
    for row in rows:
        cells = 0
        for cell in row:
            if cell.tag == "th":
                return False
            cells += cell.tag == "td"
        columns = max(columns, cells)
    if next(islice(table.iter("table"), 1, None), None) is not None:
        return True
    if columns <= 1 or len(rows) <= 1:
        return True
    if columns >= 5:
        return False
    return len(rows) * columns <= 10


def read_layout_tables(root: etree._Element) -> int:
    """Read every layout table of *root* (:func:`is_layout_table`) as the boxes it lays
    out, in place; returns how many there were.

    Pages of the 1990s and 2000s lay the whole page out in nested tables (the navigation
    column, the story and the sidebar are cells), where a page of today uses ``div``
    elements. Such a table is not data, and its markup would tell the page model, the page
    type and the block classifier that the story is a table cell. So a layout ``table``,
    its ``tbody``, ``tr`` and ``td`` become ``div`` elements, as a ``role="presentation"``
    table loses its table semantics in a browser's accessibility tree; and a box that adds
    nothing of its own is replaced by its content when it carries no attribute: the only
    row of a table (and its only cell, if it has one), and the only cell of a row (or the
    row, when the cell carries an attribute), so that one box stays per row. A row whose
    cells hold no block element and no ``<br>`` is one line in a browser (CSS 2.1 §17):
    its cells become ``span`` elements a space apart, so it stays one line. The text and
    its order are unchanged. Data tables are left as they are (the page model puts
    each of their rows on one line).

    >>> from lxml import html
    >>> root = html.fromstring('<div><table><tr><td><a>Home</a></td><td><a>News</a></td></tr>'
    ...                        '<tr><td><p>Story.</p></td><td>Menu</td></tr></table></div>')
    >>> read_layout_tables(root), html.tostring(root)
    (1, b'<div><div><div><span><a>Home</a></span> <span><a>News</a></span></div><div><div><p>Story.</p></div><div>Menu</div></div></div></div>')
    """
    tables = [table for table in root.iter("table") if is_layout_table(table)]
    for table in tables:
        rows, groups = _table_rows(table)
        # The boxes replaced by their content, outermost first: row groups, rows, cells.
        boxes: tuple[list, list, list] = ([group for group in groups if not group.attrib], [], [])
        for row in rows:
            cells = [cell for cell in row if cell.tag == "td"]
            if len(cells) > 1 and not any(_breaks_line(cell) for cell in cells):
                for cell in cells[:-1]:
                    if not (cell.tail and cell.tail[:1].isspace()):
                        cell.tail = " " + (cell.tail or "")
                for cell in cells:
                    cell.tag = "span"
            else:
                for cell in cells:
                    cell.tag = "div"
            row.tag = "div"
            # One box each: the only row is the table's box, the only cell its row's.
            row_goes = not row.attrib and (len(rows) == 1 or (len(cells) == 1 and cells[0].attrib))
            if row_goes:
                boxes[1].append(row)
            if len(cells) == 1 and not cells[0].attrib and (len(rows) == 1 or not row_goes):
                boxes[2].append(cells[0])
        for group in groups:
            group.tag = "div"
        table.tag = "div"
        for level in boxes:
            _unwrap(level)
    return len(tables)


def _table_rows(table: etree._Element) -> tuple[list[etree._Element], list[etree._Element]]:
    """The rows of *table* (its ``tr`` children and those of its ``tbody`` children, in
    order) and its ``tbody`` children."""
    rows: list[etree._Element] = []
    groups: list[etree._Element] = []
    for child in table:
        if child.tag == "tr":
            rows.append(child)
        elif child.tag == "tbody":
            groups.append(child)
            rows.extend(row for row in child if row.tag == "tr")
    return rows, groups


def _breaks_line(cell: etree._Element) -> bool:
    """Whether an element inside *cell* starts a line (a block element or ``<br>``)."""
    return any(el.tag in _BREAKING_TAGS for el in islice(cell.iter(), 1, None))


def _unwrap(elements: list[etree._Element]) -> None:
    """Replace each of *elements* in its parent by its text and children (its tail stays
    after them), one pass over each parent's children (a parent with thousands of rows
    to unwrap costs one pass, not one per row).

    >>> root = etree.fromstring("<div>a<i>b<b>c</b>d</i>e<u>f</u><i>g</i></div>")
    >>> _unwrap(root.findall("i")), etree.tostring(root)
    (None, b'<div>ab<b>c</b>de<u>f</u>g</div>')
    """
    by_parent: dict[etree._Element, set[etree._Element]] = {}
    for el in elements:
        parent = el.getparent()
        if parent is not None:
            by_parent.setdefault(parent, set()).add(el)
    for parent, gone in by_parent.items():
        kept: list[etree._Element] = []
        for child in list(parent):
            if child not in gone:
                kept.append(child)
                continue
            _append_text(parent, kept, child.text)
            kept.extend(child)
            _append_text(parent, kept, child.tail)
        parent[:] = kept


def _append_text(parent: etree._Element, kept: list[etree._Element], text: str | None) -> None:
    """Add *text* after the last of *kept* (the children of *parent* so far)."""
    if not text:
        return
    if kept:
        kept[-1].tail = (kept[-1].tail or "") + text
    else:
        parent.text = (parent.text or "") + text


# An inline style that hides the element: display none or visibility hidden (CSS 2.1
# §9.2.4, §11.2), as a whole declaration.
_HIDDEN_STYLE_RE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!\s*important\s*)?(?:;|$)",
                              re.IGNORECASE)
# The ``hidden`` and ``style`` attributes of the elements below the root, in document
# order (an element's two attributes side by side). An attribute step is about three times
# cheaper in libxml2 than ``descendant::*[@hidden or @style]`` (a predicate per element).
_HIDDEN_OR_STYLE_ATTRS = etree.XPath("descendant::*/@hidden | descendant::*/@style")


def drop_hidden_microdata(root: etree._Element) -> int:
    """Remove from *root* the elements that a browser does not render and that hold
    schema.org microdata: a machine-readable copy of the page's data (an article's
    headline, dates, publisher and often its whole text again), never shown to a reader.

    Not rendered: the ``hidden`` attribute (HTML, "The hidden attribute") or an inline
    ``display: none`` / ``visibility: hidden``. Holding microdata: ``itemscope`` or
    ``itemprop`` on the element or inside it. Other hidden elements stay: tabs,
    accordions and "read more" text are hidden until a script shows them, and they are
    content. The removed element's tail text stays. Returns how many were removed.

    >>> root = etree.fromstring('<body><p>Story.</p><div style="display: none" itemscope="">'
    ...     '<div itemprop="articleBody">Story.</div></div>After.<div hidden="">Tab.</div></body>')
    >>> drop_hidden_microdata(root), etree.tostring(root)
    (1, b'<body><p>Story.</p>After.<div hidden="">Tab.</div></body>')
    """
    removed = 0
    for el in _hidden_or_styled(root):
        if el.get("hidden") is None and not _HIDDEN_STYLE_RE.search(el.get("style") or ""):
            continue
        if el.tag in ("html", "body", "head") or not _holds_microdata(el):
            continue
        removed += remove_keeping_tail(el)
    return removed


def _hidden_or_styled(root: etree._Element) -> list[etree._Element]:
    """The elements below *root* with a ``hidden`` or ``style`` attribute, in document
    order, each once: the owners of the attributes that one libxml2 XPath pass finds.

    >>> root = etree.fromstring('<body><p style="a" hidden="">x</p><b/><i hidden=""><u style="b"/></i></body>')
    >>> [el.tag for el in _hidden_or_styled(root)]
    ['p', 'i', 'u']
    """
    out: list[etree._Element] = []
    last = None
    for value in _HIDDEN_OR_STYLE_ATTRS(root):
        el = value.getparent()
        if el is not last:
            out.append(el)
            last = el
    return out


def _holds_microdata(el: etree._Element) -> bool:
    """Whether *el* or an element inside it has ``itemscope`` or ``itemprop``."""
    return el.get("itemscope") is not None or el.get("itemprop") is not None or el.find(".//*[@itemprop]") is not None


_ITEMTYPE = b"itemtype"
_ITEMTYPE_RE = re.compile(rb"""itemtype\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)


def _microdata(data: bytes) -> tuple[tuple[str, ...], bool]:
    """The microdata ``itemtype`` values of the page's UTF-8 source (a scan of the bytes:
    attribute values survive the parse, but finding them in the tree costs a walk): the
    values after each ``itemtype`` in document order, then after each ``itemType``; and
    whether the source holds ``itemprop`` (``b"itemprop" in data``).

    The spellings are found with numpy over the bytes (a few vector steps, several
    times faster than ``bytes.find`` scans of a whole page; one scan for both)."""
    arr = np.frombuffer(data, np.uint8)
    size = arr.size - len(_ITEMTYPE) + 1
    if size <= 0:
        return (), False
    # "i..m" over the whole page (two vector comparisons), then "te" on the few hits
    # (as few as for "item": a hit costs little, a pass over the page much more).
    item = arr[:size] == _ITEMTYPE[0]
    item &= arr[3:size + 3] == _ITEMTYPE[3]
    hits = item.nonzero()[0]
    for k in (1, 2):
        hits = hits[arr[hits + k] == _ITEMTYPE[k]]
    prop = hits
    for k, byte in enumerate(b"prop", 4):  # "itemprop"
        prop = prop[arr[prop + k] == byte]
    at = hits
    for k in (5, 6, 7):  # "item?ype"
        at = at[arr[at + k] == _ITEMTYPE[k]]
    fifth = arr[at + 4]
    found = []
    for spelling in (ord("t"), ord("T")):  # itemtype, then itemType
        for start in at[fifth == spelling].tolist():
            m = _ITEMTYPE_RE.match(data, start)
            if m:
                found.append(m.group(1).decode("utf-8", "replace"))
    return tuple(found), bool(prop.size)
