"""Output formats of the main content: the kept text nodes as clean, safe HTML
(:func:`body_html`) and as Markdown (:func:`html_to_markdown`).

Any method whose units are the page's text nodes (CEPR TPR/ETPR/SETPR, NCE, CEDST and the
default article method, all built by :func:`~scrapy_cepr.core.result.text_node_extraction`)
gives a boolean keep mask over :attr:`Page.texts <scrapy_cepr.core.page.Page.texts>`; this
module turns that mask back into markup. Methods whose units are source lines (CETR) have
no such mask: :func:`lines_html` writes their body lines as escaped paragraphs.

How :func:`body_html` works (an allow-list serializer on the lxml tree, our choice):

1. characters XML does not allow are removed (:func:`make_xml_safe`); every text node
   that the method did not keep is blanked in the tree;
2. elements that hold no kept text are dropped (their kept tails stay), except images
   whose nearest block (``p``, ``figure``, ``li`` …) holds kept text, and ``<br>``; an
   inline element that holds a block is unwrapped (a link stays), so that no ``<p>``
   made of loose inline content holds a block;
3. the remaining elements are mapped to an allow-list: ``p``, ``h1``–``h6``, lists,
   ``blockquote``, ``pre``, tables, ``figure``/``figcaption``, ``a``, ``img`` and inline
   emphasis. Any other element is unwrapped (its content stays); a container that holds
   loose inline content (a ``div`` with text) gets it wrapped in ``<p>``;
4. only the attributes of :data:`ALLOWED_ATTRIBUTES` survive (no ``on*`` handler, no
   ``style``, no ``class``); ``href``/``src`` are resolved against ``<base href>`` and the
   page URL, and kept only with an ``http``, ``https`` or ``mailto`` scheme (so never
   ``javascript:`` or ``data:``; :func:`safe_url`, which wang2009's
   ``body_styled_html`` uses too). ``script``, ``style``, ``iframe`` … are gone already
   (:data:`~scrapy_cepr.core.page.REMOVED_TAGS`) and are not in the allow-list either.

Without a page URL or ``<base>``, relative URLs cannot be made absolute and are kept
relative.
"""

from __future__ import annotations

import html as html_lib
import logging
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

import numpy as np
from lxml import etree

from .page import BLOCK_TAGS, Page
from .parse import _xml_safe
from .text import assemble_body

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_TAGS",
    "BODY_FORMATS",
    "base_url",
    "body_html",
    "html_to_markdown",
    "image_url",
    "lines_html",
    "make_xml_safe",
    "safe_url",
    "text_slots",
]

logger = logging.getLogger(__name__)

#: The formats of the body an :class:`~scrapy_cepr.core.result.Extraction` offers (and
#: the values ``CEPR_BODY_FORMATS`` accepts).
BODY_FORMATS: tuple[str, ...] = ("text", "html", "markdown")

_BLOCK_OUT = ("p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd", "blockquote", "pre",
              "table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td", "figure", "figcaption")
_INLINE_OUT = ("a", "img", "br", "b", "strong", "i", "em", "u", "s", "sub", "sup", "code", "q", "cite", "abbr",
               "time", "mark", "small")
#: Elements kept in ``body_html``; any other element is unwrapped (its content stays).
ALLOWED_TAGS: frozenset[str] = frozenset(_BLOCK_OUT + _INLINE_OUT)
#: Attributes kept per element (every other attribute is removed).
ALLOWED_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "a": ("href", "title"),
    "img": ("src", "alt", "title", "width", "height"),
    "td": ("colspan", "rowspan"),
    "th": ("colspan", "rowspan", "scope"),
    "ol": ("start",),
    "time": ("datetime",),
    "abbr": ("title",),
}
_URL_ATTRIBUTES = ("href", "src")
_SAFE_SCHEMES = ("http", "https", "mailto")
#: Elements whose content is a block of its own in the output (a run of loose inline
#: content inside one of them that holds blocks too is wrapped in ``<p>``).
_CONTAINERS = BLOCK_TAGS - ALLOWED_TAGS
_TEXT_BLOCKS = frozenset(("p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "dt", "dd", "pre", "th", "td", "caption",
                          "figcaption", "blockquote"))
_IMG_SOURCES = ("src", "data-src", "data-original", "data-lazy-src")
# Characters lxml refuses to assign (see core.parse._xml_safe).
_XML_UNSAFE_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def text_slots(body: etree._Element) -> list[tuple[etree._Element, bool]]:
    """Where each text node of :meth:`Page.from_html <scrapy_cepr.core.page.Page.from_html>`
    lives in the tree: ``(element, is_tail)`` per non-blank ``.text`` / ``.tail`` under
    *body*, in the page model's order (an element's text when it opens, its tail when it
    closes; *body*'s own tail excluded).

    >>> from lxml import etree
    >>> body = etree.fromstring("<body>a<p>b<i>c</i>d</p>e</body>")
    >>> [(el.tag, tail) for el, tail in text_slots(body)]
    [('body', False), ('p', False), ('i', False), ('i', True), ('p', True)]
    """
    slots: list[tuple[etree._Element, bool]] = []
    for event, el in etree.iterwalk(body, events=("start", "end")):
        if event == "start":
            if el.text and not el.text.isspace():
                slots.append((el, False))
        elif el is not body and el.tail and not el.tail.isspace():
            slots.append((el, True))
    return slots


def body_html(page: Page, keep: np.ndarray | Sequence[bool]) -> str:
    """The kept text nodes of *page* as clean, safe HTML (see the module docstring).

    :param page: the parsed page the mask refers to. **Its tree is modified in place**
        (blanked and pruned): call this last, or on a page parsed for the purpose.
    :param keep: bool ``(N,)`` content mask over ``page.texts``.
    :returns: one block element per line, no wrapper; ``""`` when nothing is kept.
    :raises ValueError: *keep* does not have one entry per text node.

    >>> page = Page.from_html('<body><nav><a href="/">Home</a></nav><div>Lead text'
    ...     '<p>See <a href="/b" onclick="x()">this</a>.</p></div></body>', url="http://n.example/a/")
    >>> body_html(page, [False, True, True, True, True])
    '<p>Lead text</p>\\n<p>See <a href="http://n.example/b">this</a>.</p>'
    """
    keep = np.asarray(keep, dtype=bool)
    if keep.shape != (len(page.texts),):
        raise ValueError(f"keep must have one entry per text node ({len(page.texts)}); got shape {keep.shape}")
    if not keep.any() or page.root is None:
        return ""
    body = page.root.find("body")
    if body is None:
        return ""
    slots = _slots_from_owners(page)
    if slots is None:
        slots = text_slots(body)
    if len(slots) != len(page.texts) or any(
        (el.getparent() if tail else el) is not owner for (el, tail), owner in zip(slots, page.owners)
    ):  # the page model walks differently: fall back on the kept text, one block per line
        logger.warning("text nodes do not map onto the tree (%d slots, %d nodes); body_html has no markup",
                       len(slots), len(page.texts))
        return lines_html(_kept_lines(page, keep))
    base = base_url(page.root, page.url)
    make_xml_safe(body)
    live = _blank_and_mark(body, slots, keep)
    _prune(body, live)
    _unwrap_inline_around_blocks(body)
    _rewrite(body, base)
    body.tag = "div"
    body.attrib.clear()
    _wrap_loose_inline(body)
    body.text = None
    _collapse_whitespace(body)
    blocks = [etree.tostring(child, method="html", encoding="unicode", with_tail=False) for child in body]
    return "\n".join(blocks)


def _slots_from_owners(page: Page) -> list[tuple[etree._Element, bool]] | None:
    """:func:`text_slots` from the page model's owners, visiting only the owners and
    their children (not the whole tree): an owner's first node is its ``.text`` when that
    is not blank, its other nodes are the non-blank tails of its children, in order.
    None when that does not match the page's texts (the caller then walks the tree)."""
    slots: list[tuple[etree._Element, bool]] = []
    tails: dict[etree._Element, list] = {}
    used: dict[etree._Element, int] = {}
    texts = page.texts
    for i, owner in enumerate(page.owners):
        n = used.get(owner)
        if n is None:
            n = 0
            text = owner.text
            if text and not text.isspace():
                used[owner] = 0
                slots.append((owner, False))
                if " ".join(text.split()) != texts[i]:
                    return None
                continue
        children = tails.get(owner)
        if children is None:
            children = tails[owner] = [c for c in owner if c.tail and not c.tail.isspace()]
        if n >= len(children) or " ".join(children[n].tail.split()) != texts[i]:
            return None
        slots.append((children[n], True))
        used[owner] = n + 1
    return slots


def lines_html(lines: Sequence[str] | str) -> str:
    """Plain text lines as escaped ``<p>`` paragraphs (the ``body_html`` of methods whose
    units are source lines, e.g. CETR). *lines* may be a body string, one block per line.

    >>> lines_html("A <b> & c\\n\\nNext")
    '<p>A &lt;b&gt; &amp; c</p>\\n<p>Next</p>'
    """
    if isinstance(lines, str):
        lines = lines.split("\n")
    return "\n".join(f"<p>{html_lib.escape(line, quote=False)}</p>" for line in lines if line.strip())


def html_to_markdown(html: str) -> str:
    """*html* (a ``body_html``) as Markdown, converted by ``markdownify`` (ATX headings,
    ``-`` bullets, pipe tables, inline links and images, indented code blocks). Runs of
    blank lines are collapsed to one.

    The Markdown is safe to render with the defaults of common renderers (CommonMark,
    markdown-it, python-markdown), raw HTML enabled: text can make no markup. In text and
    in image ``alt``, ``<``/``>`` become ``&lt;``/``&gt;``, an ``&`` that would start a
    character reference becomes ``&amp;``, and ``\\``, ``[``, ``]``, backticks, ``*`` and a
    text node's final ``!`` get a backslash; titles are written with character references.
    A link or image keeps its target only when it is an absolute ``http``, ``https`` or
    ``mailto`` URL (characters that could end the target are percent-encoded); otherwise
    the link's text or the image's ``alt`` stays, as text. Preformatted text becomes an
    indented code block at the top level (a fence could be closed by its text, and
    python-markdown has no fences by default); inside a list, quote, heading or table
    cell it becomes one line of escaped text.

    :raises ImportError: ``markdownify`` is not installed (``pip install markdownify``).

    >>> html_to_markdown('<h2>Title</h2>\\n<p>A <a href="http://x.example/">link</a>.</p>')
    '## Title\\n\\nA [link](http://x.example/).'
    >>> html_to_markdown('<p>&lt;b&gt; [x](javascript:y) <a href="javascript:y">z</a></p>')
    '&lt;b&gt; \\\\[x\\\\](javascript:y) z'
    """
    if not html:
        return ""
    text = _markdown_converter().convert(html)
    lines = [line.rstrip() for line in text.strip("\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out)


# -- Markdown ----------------------------------------------------------------------------

# A "&" that starts a character reference in CommonMark and python-markdown.
_MD_ENTITY_RE = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
_MD_BACKSLASHED_RE = re.compile(r"([\\\[\]`])")
# Characters percent-encoded in a link target: those that end or escape it (space, "<",
# ">", "(", ")", quotes, "\", backticks, brackets) and controls.
_MD_URL_UNSAFE_RE = re.compile(r"[\x00-\x20\x7f<>()\[\]\"'\\`]")
# Where a ``<pre>`` can be an indented code block: at the top level (in a list, quote or
# cell, renderers disagree on the indentation, and the text could become live markup).
_MD_CODE_BLOCK_PARENTS = frozenset(("[document]", "div", "section", "article", "figure"))
_MD_TITLE_REFS = {"&": "&amp;", '"': "&quot;", "'": "&#39;", "<": "&lt;", ">": "&gt;", "\\": "&#92;", "(": "&#40;",
                  ")": "&#41;", "[": "&#91;", "]": "&#93;", "`": "&#96;", "*": "&#42;", "_": "&#95;"}


def _md_text(text: str) -> str:
    """*text* escaped for Markdown (see :func:`html_to_markdown`); ``*`` is left to
    markdownify's own escape.

    >>> _md_text("<img src=x> [a](b) & &amp; Wow!")
    '&lt;img src=x&gt; \\\\[a\\\\](b) & &amp;amp; Wow\\\\!'
    """
    text = _MD_BACKSLASHED_RE.sub(r"\\\1", text)
    text = _MD_ENTITY_RE.sub("&amp;", text)
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    if text.endswith("!"):  # "!" then a link would make an image
        text = text[:-1] + "\\!"
    return text


def _md_url(url: str | None) -> str | None:
    """*url* as a Markdown link target: None unless an absolute http(s)/mailto URL.

    >>> _md_url("https://a.example/x y(1)?a=1&amp;b"), _md_url("javascript:alert(1)"), _md_url("/rel")
    ('https://a.example/x%20y%281%29?a=1&amp;amp;b', None, None)
    """
    url = (url or "").strip()
    scheme, sep, _ = url.partition(":")
    if not sep or scheme.lower() not in _SAFE_SCHEMES:
        return None
    url = _MD_URL_UNSAFE_RE.sub(lambda m: f"%{ord(m.group()):02X}", url)
    return _MD_ENTITY_RE.sub("&amp;", url)


def _md_title(title: str | None) -> str:
    """`` "title"`` for a link or image (character references only), or ``""``."""
    title = " ".join((title or "").split())
    if not title:
        return ""
    return ' "' + "".join(_MD_TITLE_REFS.get(c, c) for c in title) + '"'


def _markdown_converter() -> Any:
    """A markdownify converter that writes safe Markdown (see :func:`html_to_markdown`)."""
    # markdownify's stub (__init__.pyi) leaves out chomp, MarkdownConverter.escape and
    # .options, which exist at run time: hence the three ignores below.
    from markdownify import MarkdownConverter, chomp  # type: ignore[attr-defined]

    class SafeMarkdownConverter(MarkdownConverter):
        def escape(self, text: str, parent_tags: Any) -> str:
            return super().escape(_md_text(text), parent_tags) if text else ""  # type: ignore[misc]

        def convert_a(self, el: Any, text: str, parent_tags: Any) -> str:
            if "_noformat" in parent_tags:
                return text
            prefix, suffix, text = chomp(text)
            if not text:
                return ""
            href = _md_url(el.get("href"))
            if href is None:
                return f"{prefix}{text}{suffix}"
            return f"{prefix}[{text}]({href}{_md_title(el.get('title'))}){suffix}"

        def convert_img(self, el: Any, text: str, parent_tags: Any) -> str:
            alt = self.escape(" ".join((el.get("alt") or "").split()), parent_tags)
            src = _md_url(el.get("src"))
            if src is None or ("_inline" in parent_tags and el.parent.name not in self.options["keep_inline_images_in"]):  # type: ignore[attr-defined]
                return alt
            return f"![{alt}]({src}{_md_title(el.get('title'))})"

        def convert_pre(self, el: Any, text: str, parent_tags: Any) -> str:
            text = text.strip("\n")
            if not text.strip():
                return ""
            if not parent_tags <= _MD_CODE_BLOCK_PARENTS:  # in a list, quote, cell …: escaped text
                return self.escape(" ".join(text.split()), parent_tags)
            return "\n\n" + "\n".join("    " + line for line in text.split("\n")) + "\n\n"

    return SafeMarkdownConverter(heading_style="ATX", bullets="-", escape_underscores=False, escape_asterisks=True,
                                 autolinks=False, strip_document=None)


# -- steps of body_html ----------------------------------------------------------------


def _kept_lines(page: Page, keep: np.ndarray) -> list[str]:
    return assemble_body(page.texts, page.blocks, keep, page.gap_before).split("\n")


def base_url(root: etree._Element | None, url: str | None) -> str | None:
    """The URL relative links of the page *root* resolve against: its ``<base href>``
    (itself resolved against the page URL *url*) when that has a safe scheme or the
    page's own, else *url*. Shared by ``body_html`` and wang2009's ``body_styled_html``."""
    if root is None:
        return url
    for base in root.iterfind("head/base"):
        href = (base.get("href") or "").strip()
        resolved = urljoin(url, href) if url and href else href
        page_scheme = urlsplit(url).scheme.lower() if url else ""
        if href and urlsplit(resolved).scheme.lower() in (*_SAFE_SCHEMES, page_scheme or "http"):
            return resolved
    return url


def make_xml_safe(body: etree._Element) -> None:
    """Make the text and attribute values under *body* assignable, in place (libxml2
    keeps U+0008 and other XML-incompatible characters, lxml refuses them when
    ``body_html`` moves text): whitespace controls become a space, the others are
    dropped. *body*'s own tail is left alone."""
    for el in body.iter():
        if el.text and _XML_UNSAFE_RE.search(el.text):
            el.text = _xml_safe(el.text)
        if el.tail and el is not body and _XML_UNSAFE_RE.search(el.tail):
            el.tail = _xml_safe(el.tail)
        if isinstance(el.tag, str):
            for name, value in el.attrib.items():
                if _XML_UNSAFE_RE.search(value):
                    el.set(name, _xml_safe(value))


def _blank_and_mark(body: etree._Element, slots: list, keep: np.ndarray) -> set:
    """Blank the slots of dropped text nodes; return the elements on the way from *body*
    to a kept text node, plus images whose nearest block holds kept text."""
    live: set = {body}

    def mark(el: etree._Element | None) -> None:
        while el is not None and el not in live:
            live.add(el)
            el = el.getparent()

    for (el, tail), kept in zip(slots, keep.tolist()):
        if kept:
            mark(el.getparent() if tail else el)
        elif tail:
            el.tail = None
        else:
            el.text = None
    for img in body.iter("img"):
        block = img.getparent()
        while block is not None and block.tag not in BLOCK_TAGS:
            block = block.getparent()
        if block is not None and block is not body and block in live:
            mark(img)
    return live


def _prune(body: etree._Element, live: set) -> None:
    """Remove the elements outside *live* (keeping their tails, which may be content);
    ``<br>`` stays where its parent does. Top-down: a removed subtree is not visited."""
    stack = [body]
    while stack:
        el = stack.pop()
        for child in list(el):
            if child in live:
                stack.append(child)
            elif child.tag != "br":
                _remove_keep_tail(child)


def _remove_keep_tail(el: etree._Element) -> None:
    parent = el.getparent()
    tail = el.tail
    if tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(el)


def _is_block(el: Any) -> bool:
    return isinstance(el.tag, str) and (el.tag in BLOCK_TAGS or el.tag in _BLOCK_OUT)


def _holds_block(el: Any) -> bool:
    """*el* is a block, or a link around blocks (kept as is, as HTML allows)."""
    return _is_block(el) or (el.tag == "a" and any(_is_block(d) for d in el.iterdescendants()))


def _unwrap_inline_around_blocks(body: etree._Element) -> None:
    """Unwrap inline elements (``span``, ``b`` …) that hold a block, so that no block
    ends up inside a ``<p>`` made of its container's loose inline content; a link around
    blocks stays (:func:`_holds_block`). One bottom-up pass."""
    holding: set = set()
    for el in reversed(list(body.iterdescendants())):
        parent = el.getparent()
        if _is_block(el):
            holding.add(parent)
        elif el in holding:
            holding.add(parent)
            if el.tag != "a" and isinstance(el.tag, str):
                _unwrap(el)


def _unwrap(el: etree._Element) -> None:
    """Replace *el* by its content (text, children, tail) in its parent."""
    parent = el.getparent()
    index = parent.index(el)
    prev = el.getprevious()
    if el.text:
        if prev is not None:
            prev.tail = (prev.tail or "") + el.text
        else:
            parent.text = (parent.text or "") + el.text
    children = list(el)
    tail = el.tail
    parent.remove(el)
    for offset, child in enumerate(children):
        parent.insert(index + offset, child)
    if tail:
        if children:
            children[-1].tail = (children[-1].tail or "") + tail
        elif prev is not None:
            prev.tail = (prev.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail


def _rewrite(body: etree._Element, base: str | None) -> None:
    """Apply the tag and attribute allow-lists; resolve and check URLs."""
    unwrap: list[str] = []
    for el in list(body.iterdescendants()):
        tag = el.tag
        if not isinstance(tag, str):
            continue
        if tag == "img":
            url = image_url(el, base)
            attrs = {k: el.get(k) for k in ALLOWED_ATTRIBUTES["img"] if el.get(k) is not None}
            el.attrib.clear()
            if url is None:
                _remove_keep_tail(el)
                continue
            attrs["src"] = url
            for k, v in attrs.items():
                el.set(k, v)
            continue
        if tag in _CONTAINERS:
            _wrap_loose_inline(el)
            tag = el.tag
        allowed = ALLOWED_ATTRIBUTES.get(tag, ())
        kept = {k: v for k, v in el.attrib.items() if k in allowed} if tag in ALLOWED_TAGS else {}
        el.attrib.clear()
        for k, v in kept.items():
            if k in _URL_ATTRIBUTES:
                v = safe_url(v, base)
                if v is None:
                    continue
            el.set(k, v)
        if tag not in ALLOWED_TAGS or (tag == "a" and el.get("href") is None):  # a link without a safe URL
            el.tag = "_unwrap"
    unwrap.append("_unwrap")
    etree.strip_tags(body, *unwrap)
    # Blocks left without any text or image (an emptied <p>, a list of dropped items).
    for el in list(body.iter(*_BLOCK_OUT)):
        if el.getparent() is not None and not _has_content(el):
            _remove_keep_tail(el)


def _collapse_whitespace(root: etree._Element) -> None:
    """Collapse whitespace runs to one space outside ``<pre>`` (a block then prints on
    one line) and trim it at the start and end of each block."""
    for el in root.iterdescendants():
        if not isinstance(el.tag, str) or el.tag == "pre" or any(a.tag == "pre" for a in el.iterancestors()):
            continue
        if el.text:
            el.text = re.sub(r"\s+", " ", el.text)
        if el.tail:
            el.tail = re.sub(r"\s+", " ", el.tail)
    for el in root.iter(*_TEXT_BLOCKS):
        if el.tag == "pre":
            continue
        if el.text:
            el.text = el.text.lstrip() or None
        last = el[-1] if len(el) else None
        if last is not None and last.tail:
            last.tail = last.tail.rstrip() or None
        elif last is None and el.text:
            el.text = el.text.rstrip() or None


def _usable_src(value: str | None) -> bool:
    return bool(value and value.strip() and not value.strip().lower().startswith("data:"))


def image_url(img: etree._Element, base: str | None) -> str | None:
    """The URL an ``<img>`` shows, through :func:`safe_url`: its first ``src``,
    ``data-src``, ``data-original`` or ``data-lazy-src`` that is not a ``data:`` URL (a
    lazy image's placeholder); None when there is none or it is not safe."""
    return safe_url(next((img.get(a) for a in _IMG_SOURCES if _usable_src(img.get(a))), None), base)


def safe_url(value: str | None, base: str | None) -> str | None:
    """*value* resolved against *base*, or None if its scheme is not http(s)/mailto
    (the URL allow-list of ``body_html`` and of wang2009's ``body_styled_html``). A
    relative URL of a page read from a ``file://`` URL stays a ``file://`` URL; an
    absolute ``file:``, ``data:``, ``javascript:`` … URL is refused.

    >>> safe_url("/a b", "http://x.example/c/d"), safe_url("JavaScript:alert(1)", None)
    ('http://x.example/a b', None)
    >>> safe_url(" java\\tscript:alert(1)", "http://x.example/")
    >>> safe_url("img/a.jpg", "file:///site/p.html"), safe_url("file:///etc/passwd", "http://x.example/")
    ('file:///site/img/a.jpg', None)
    """
    if value is None:
        return None
    value = "".join(value.split()) if ":" in value.split("/")[0] else value.strip()
    if not value:
        return None
    relative = not urlsplit(value).scheme
    url = urljoin(base, value) if base else value
    scheme = urlsplit(url).scheme.lower()
    if scheme and scheme not in _SAFE_SCHEMES and not (relative and scheme == "file"):
        return None  # a relative URL of a page read from a file:// URL stays a file:// URL
    if not scheme and ":" in url.split("/")[0]:
        return None
    return url


def _has_content(el: etree._Element) -> bool:
    if el.find(".//img") is not None:
        return True
    return any(t.strip() for t in el.itertext())


def _wrap_loose_inline(el: etree._Element) -> None:
    """Wrap each run of loose inline content (text, inline children) of a container that
    also holds blocks (or is the fragment root) in a ``<p>``; a container without any
    block child is renamed ``<p>`` itself (when it is not inside a text block)."""
    children = list(el)
    has_block = any(_holds_block(c) for c in children)
    if not has_block:
        if el.tag not in ("div",) and el.getparent() is None:
            return
        if _inside_text_block(el):
            return
        if (el.text and el.text.strip()) or children:
            el.tag = "p"
            el.attrib.clear()
        return
    runs: list[list[Any]] = []
    current: list[Any] = [el.text] if el.text and el.text.strip() else []
    el.text = None
    for child in children:
        if _holds_block(child):
            if current:
                runs.append(current)
            current = []
            tail = child.tail
            child.tail = None
            if tail and tail.strip():
                current.append(tail)
            runs.append([child])
        else:
            current.append(child)
    if current:
        runs.append(current)
    for child in children:
        el.remove(child)
    for run in runs:
        if len(run) == 1 and not isinstance(run[0], str) and _holds_block(run[0]):
            el.append(run[0])
            continue
        if all(isinstance(x, str) or x.tag == "br" for x in run) and not any(
                (x if isinstance(x, str) else x.tail or "").strip() for x in run):
            continue  # only line breaks and spaces (a <br>'s tail is text too)
        p = etree.SubElement(el, "p")
        for x in run:
            if isinstance(x, str):
                if len(p):
                    p[-1].tail = (p[-1].tail or "") + x
                else:
                    p.text = (p.text or "") + x
            else:
                p.append(x)


def _inside_text_block(el: etree._Element) -> bool:
    parent = el.getparent()
    while parent is not None:
        if parent.tag in _TEXT_BLOCKS:
            return True
        parent = parent.getparent()
    return False
