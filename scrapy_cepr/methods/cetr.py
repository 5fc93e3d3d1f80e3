"""CETR: Content Extraction via Tag Ratios (Weninger, Hsu, Han; WWW 2010), spec §2.

The units are *lines of HTML source*, not DOM nodes. Two variants share one pipeline:

1. lines: the page's ``<body>`` as HTML source, with ``script``, ``style`` and comments
   removed; a minified page (almost no newlines) is broken into lines of about
   ``wrap_width`` = 60 characters, never inside a tag (paper FAQ,
   :func:`break_minified`); empty lines are dropped;
2. tag ratios: ``TR_l = text characters on line l / tags on line l``, a line without tags
   counting 1 tag (:func:`tag_ratios`);
3. smoothing: ``T' = gaussian(TR)`` (:func:`gaussian_smooth`);
4. CETR (``variant="cetr"``): the look-ahead derivative ``G_i = |mean(T'_{i+1..i+α}) −
   T'_i|``, smoothed the same way (:func:`lookahead_derivative`), and k-means on the points
   ``(T'_i, G_i)`` with one centroid fixed at the origin (:func:`kmeans_fixed_origin`);
   lines of the origin cluster are boilerplate, all others content;
   CETR-TM (``variant="cetr-tm"``): a line is content iff ``T'_l ≥ λ·σ(T')``.

Paper values: Gaussian "radius of 3", α = 3, k = 3 (the paper also tried k = 2), line
breaks after about 60 characters.

Choices on [open] or unstated points of the spec. F1 is the article-extraction-benchmark
F1 on its 181 pages (default parameters unless said; CETR / CETR-TM):

* **Source of the lines.** The serialisation (lxml, ``method="html"``) of the cleaned
  ``page.root``'s ``<body>``: the page model already removed ``script``, ``style``,
  ``noscript``, ``iframe``, ``template`` and comments with a real parser (no regex over
  raw HTML), text newlines are kept as they were in the source, every ``<`` and ``>`` of
  the serialisation belongs to a tag (text and attribute values are escaped), and the
  ``<head>`` is left out as in CEPR (it is not displayed; the title is searched
  separately). A tag that spans a newline (a newline inside an attribute value) joins its
  two lines.
* **Characters.** Text characters of a line are counted on its text with tags replaced by a
  space, entities decoded (w3lib), trimmed and whitespace runs collapsed: the paper's
  ``<div id="author">James Smith</div>`` has 11 characters and 2 tags (TR 5.5).
* **Minified pages.** A page is minified when its lines are on average longer than
  :data:`MINIFIED_LINE_CHARS` characters; its lines are then cut after ``wrap_width``
  characters, extended to the end of a tag the cut falls in ("never inside a tag") or to
  the end of a word (so that no word of the body is split). 43 of the 181 pages are
  minified by this rule; without the cuts F1 is 0.782 / 0.784, with them 0.810 / 0.822
  (other line widths: ``docs/measurements.md``, "CETR").
* **Smoothing** (``cetr_kernel``): ``"radius"`` (default) is the paper's "radius of 3":
  the normalised kernel ``exp(−j²/(2r²))``, ``j = −r…r`` (σ = r, as CEPR's
  :func:`..core.smoothing.gaussian_kernel`); ``"std"`` is the 3rd-party reading σ =
  std(TR), r = ⌈σ⌉. Values beyond both ends count as 0 (zero padding); σ = std(TR)
  is tens of lines wide and smears the content's edges.
* **Derivative at the end.** The window ``i+1..i+α`` is cut at the last line; the last line
  has an empty window and G = 0.
* **k-means.** Deterministic Lloyd iterations (at most ``kmeans_iterations``) on the raw
  (unscaled) points; the ``k−1`` free centroids start farthest-first (the point farthest
  from the origin, then the point farthest from the centroids placed so far), not at
  the points of norm quantile ``j/k``. A point goes to the nearest centroid, ties to
  the lower index (so to the origin cluster); an empty cluster keeps its centroid. The
  default is the paper's k = 3.
* **τ.** CETR-TM reports ``τ = λ·σ(T')`` (σ the population standard deviation). CETR
  (k-means) has no scalar threshold: its boundary is the set of bisectors between the
  origin and each free centroid, so ``tau`` is None (the centroids are logged at DEBUG).
* **CETR-TM λ** (``tm_lambda``): 1.0, one standard deviation, chosen before measuring
  (the paper gives no value).

The effect of each choice on the benchmark F1, and the paper's own figures (not
comparable: its data and token metric), are in ``docs/measurements.md``, "CETR".
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass

import numpy as np
from lxml import etree
from w3lib.html import replace_entities

from ..core.page import Page
from ..core.params import check_choice, check_int, check_real
from ..core.result import Extraction, NodeTable
from ..core.smoothing import gaussian_kernel
from ..core.text import CONTROL_RE, has_controls
from ..core.title import pick_title

__all__ = [
    "MINIFIED_LINE_CHARS",
    "CETRParams",
    "body_source",
    "break_minified",
    "gaussian_smooth",
    "kmeans_fixed_origin",
    "lookahead_derivative",
    "run",
    "tag_ratios",
]

logger = logging.getLogger(__name__)

#: A page whose lines are on average longer than this (characters) is minified and gets
#: its lines broken after about ``wrap_width`` characters (paper FAQ: "all of the code on
#: one line").
MINIFIED_LINE_CHARS = 600

# Every tag of the serialisation: lxml escapes "<" and ">" in text and attribute values.
_TAG_RE = re.compile(r"<[^>]*>")
_TAG_NEWLINE_RE = re.compile(r"<[^>\n]*\n[^>]*>")


@dataclass(frozen=True)
class CETRParams:
    """Validated CETR parameters (paper values as defaults). As Scrapy settings they are
    ``CEPR_CETR_RADIUS``, ``CEPR_CETR_KERNEL``, ``CEPR_LOOKAHEAD``, ``CEPR_CLUSTERS``,
    ``CEPR_TM_LAMBDA``, ``CEPR_WRAP_WIDTH`` and ``CEPR_KMEANS_ITERATIONS``.

    :param cetr_radius: radius r ≥ 0 (lines) of the Gaussian kernel that smooths TR and G
        when ``cetr_kernel="radius"``; the paper's "radius of 3". 0 turns smoothing off.
    :param cetr_kernel: ``"radius"`` (σ = r = ``cetr_radius``) or ``"std"`` (σ = std(TR),
        r = ⌈σ⌉, ``cetr_radius`` unused).
    :param lookahead: α ≥ 1 (lines) of the derivative ``G_i = |mean(T'_{i+1..i+α}) −
        T'_i|``; paper 3.
    :param clusters: k ≥ 2 of the k-means, the origin cluster included; paper 3 (also 2).
    :param tm_lambda: λ ≥ 0 of the CETR-TM threshold ``τ = λ·σ(T')``; default 1.0.
    :param wrap_width: about how many characters (≥ 10) a line of a minified page gets;
        paper 60.
    :param kmeans_iterations: the most Lloyd iterations (1 … 10,000); default 100.
    :raises ValueError: naming the parameter and its allowed range.
    """

    cetr_radius: int = 3
    cetr_kernel: str = "radius"
    lookahead: int = 3
    clusters: int = 3
    tm_lambda: float = 1.0
    wrap_width: int = 60
    kmeans_iterations: int = 100

    def __post_init__(self) -> None:
        object.__setattr__(self, "cetr_radius", check_int("cetr_radius", self.cetr_radius, 0, 1000))
        check_choice("cetr_kernel", self.cetr_kernel, ("radius", "std"))
        object.__setattr__(self, "lookahead", check_int("lookahead", self.lookahead, 1, 1000))
        object.__setattr__(self, "clusters", check_int("clusters", self.clusters, 2, 20))
        object.__setattr__(self, "tm_lambda", check_real("tm_lambda", self.tm_lambda, 0.0, 100.0))
        object.__setattr__(self, "wrap_width", check_int("wrap_width", self.wrap_width, 10, 100_000))
        object.__setattr__(
            self, "kmeans_iterations", check_int("kmeans_iterations", self.kmeans_iterations, 1, 10_000)
        )


def body_source(page: Page) -> str:
    """The HTML source that CETR splits into lines: the lxml serialisation of the cleaned
    ``<body>`` of *page* (``script``, ``style``, ``noscript``, ``iframe``, ``template`` and
    comments removed by the page model). ``""`` when the page has no body.

    >>> body_source(Page.from_html("<p>Hi<script>x()</script>\\n<b>there</b></p>"))
    '<body><p>Hi\\n<b>there</b></p></body>'
    """
    body = page.root.find("body") if page.root is not None else None
    if body is None:
        return ""
    return etree.tostring(body, method="html", encoding="unicode", with_tail=False)


_ANGLE_RE = re.compile("[<>]")
_WORD_END_RE = re.compile(r"[^\s<>]*")


def break_minified(html: str, wrap_width: int = 60) -> str:
    """Insert line breaks into a minified HTML source (paper FAQ: "we insert a newline
    character into the HTML code after 60 (or so) characters. If that 60th character is
    in the middle of a tag, then we insert the newline after the end of the tag").

    A source whose lines are on average longer than :data:`MINIFIED_LINE_CHARS`
    characters is minified: each of its lines is cut after *wrap_width* characters, the
    cut moved to the end of the tag it falls in (never inside a tag) or else to the end of
    the word it falls in (no word of the body is split). Any other source is returned
    unchanged.

    :param html: HTML source in which every ``<`` and ``>`` belongs to a tag (as in
        :func:`body_source`).
    :returns: the source with newlines inserted (runs of whitespace at a cut stay on the
        next line).

    >>> break_minified('<a href="x">' * 60, 60).split("\\n")[:2]
    ['<a href="x"><a href="x"><a href="x"><a href="x"><a href="x">', '<a href="x"><a href="x"><a href="x"><a href="x"><a href="x">']
    """
    if len(html) <= MINIFIED_LINE_CHARS * (html.count("\n") + 1):
        return html
    # Each chunk: up to wrap_width characters of one line, then either the rest of the tag
    # the cut falls in (when the first "<" or ">" after the cut is a ">": only inside a
    # tag is a ">" reached before a "<") or the rest of the word it falls in. The "<"/">"
    # positions are found once, so the whole is linear in the source (a regex that looks
    # for the ">" from every cut is quadratic on a long run of text without tags).
    marks = [m.start() for m in _ANGLE_RE.finditer(html)]
    n = len(html)
    chunks: list[str] = []
    pos = 0
    k = 0  # marks[k] is the first "<" or ">" at or after the cut
    while pos < n:
        if html[pos] == "\n":
            pos += 1
            continue
        newline = html.find("\n", pos, pos + wrap_width)
        cut = newline if newline != -1 else min(pos + wrap_width, n)
        while k < len(marks) and marks[k] < cut:
            k += 1
        if k < len(marks) and html[marks[k]] == ">":
            end = marks[k] + 1
        else:
            end = _WORD_END_RE.match(html, cut).end()
        chunks.append(html[pos:end])
        pos = end
    return "\n".join(chunks)


def tag_ratios(html: str) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """Text, text characters, tags and tag ratio of each non-empty line of *html* (paper,
    "Tag Ratios" and its table; spec §2).

    ``TR_l = chars_l / max(tags_l, 1)``. ``tags_l`` counts the tags ``<…>`` that start on
    line l; the line's text is the line with each tag replaced by a space, entities decoded
    (w3lib), trimmed and whitespace runs collapsed, and ``chars_l`` is its length in
    characters. A newline inside a tag does not end a line. Lines with neither tags nor
    text (empty or whitespace-only) are dropped.

    :param html: HTML source in which every ``<`` and ``>`` belongs to a tag (as in
        :func:`body_source`), already broken by :func:`break_minified`.
    :returns: ``(texts, chars, tags, tr)`` over the M non-empty lines: list of M strings,
        int64 ``(M,)``, int64 ``(M,)`` and float64 ``(M,)``.

    >>> texts, chars, tags, tr = tag_ratios('<div id="author">James Smith</div>\\n\\n  no tags here')
    >>> texts, chars.tolist(), tags.tolist(), tr.tolist()
    (['James Smith', 'no tags here'], [11, 12], [2, 0], [5.5, 12.0])
    """
    if not html:
        empty = np.zeros(0, dtype=np.int64)
        return [], empty, empty, np.zeros(0)
    lines = html.split("\n")
    text = _TAG_RE.sub(" ", html)  # every "<" and ">" belongs to a tag
    if text.count("\n") != len(lines) - 1:  # a tag spans a newline: make it a space
        html = _TAG_NEWLINE_RE.sub(_newlines_to_spaces, html)
        lines = html.split("\n")
        text = _TAG_RE.sub(" ", html)
    n = len(lines)
    tags = np.fromiter([line.count("<") for line in lines], dtype=np.int64, count=n)
    if "&" in text:
        text = replace_entities(text)
    raw_texts = text.split("\n")
    if len(raw_texts) != n:  # an entity decoded to a newline: decode line by line
        raw_texts = [replace_entities(t) for t in _TAG_RE.sub(" ", html).split("\n")]
    texts = [" ".join(t.split()) for t in raw_texts]
    if has_controls("".join(texts)):  # rare: control characters are not displayed
        texts = [" ".join(CONTROL_RE.sub("", t).split()) for t in raw_texts]
    chars = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    nonempty = (chars > 0) | (tags > 0)
    if not nonempty.all():
        idx = np.flatnonzero(nonempty)
        texts = [texts[i] for i in idx.tolist()]
        chars, tags = chars[idx], tags[idx]
    tr = chars / np.maximum(tags, 1)
    return texts, chars, tags, tr


def _newlines_to_spaces(match: re.Match) -> str:
    return match.group().replace("\n", " ")


def gaussian_smooth(x: np.ndarray, kernel: str = "radius", radius: int = 3) -> np.ndarray:
    """Gaussian smoothing of a line histogram (paper, "Smoothing the TTR
    Ratio"; spec §2 [open]), values beyond both ends counting as 0.

    :param x: float ``(N,)``.
    :param kernel: ``"radius"``: σ = r = *radius* (the paper's "radius of 3"); ``"std"``:
        σ = std(x), r = ⌈σ⌉ (capped at N lines).
    :returns: float64 ``(N,)``; ``x`` itself (a copy) when r = 0.

    >>> gaussian_smooth(np.array([0.0, 10.0, 0.0]), radius=1).round(3).tolist()
    [2.741, 4.519, 2.741]
    """
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    if kernel == "std":
        sigma = float(np.std(x)) if n else 0.0
        r = min(math.ceil(sigma), n)
        if r == 0:
            return x.copy()
        j = np.arange(-r, r + 1, dtype=np.float64)
        k = np.exp(-(j * j) / (2.0 * sigma * sigma))
        k /= k.sum()
    else:
        r = radius
        if r == 0 or n == 0:
            return x.copy()
        k = gaussian_kernel(r)
    out = np.convolve(x, k, mode="full")[r : r + n]
    return out


def lookahead_derivative(t: np.ndarray, lookahead: int = 3) -> np.ndarray:
    """Absolute look-ahead derivative ``G_i = |mean(T'_{i+1..i+α}) − T'_i|`` (paper,
    "Finding the beginning and end of content sections"; spec §2), α = *lookahead*. Near the end the window is cut at the last line; the last line
    (empty window) gets G = 0. Not smoothed here.

    :param t: float ``(N,)``, the smoothed tag ratios T'.
    :returns: float64 ``(N,)``.

    >>> lookahead_derivative(np.array([0.0, 3.0, 6.0, 9.0, 0.0]), 3).tolist()
    [6.0, 2.0, 1.5, 9.0, 0.0]
    """
    t = np.asarray(t, dtype=np.float64)
    n = t.size
    csum = np.concatenate(([0.0], np.cumsum(t)))
    i = np.arange(n)
    last = np.minimum(i + lookahead, n - 1)
    count = last - i
    window = csum[last + 1] - csum[i + 1]
    mean = np.divide(window, count, out=t.copy(), where=count > 0)
    return np.abs(mean - t)


def kmeans_fixed_origin(
    points: np.ndarray, clusters: int = 3, iterations: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """k-means with centroid 0 fixed at the origin (paper, "Extraction in
    two dimensions"; spec §2).

    Lloyd iterations: assign each point to its nearest centroid (squared Euclidean; ties
    to the lower index, so to the origin), move every free centroid to the mean of its
    points (an empty cluster keeps its centroid), stop when no assignment changes or after
    *iterations* rounds. The free centroids start farthest-first (deterministic maximin,
    Gonzalez 1985): centroid j is the first point whose squared distance to the nearest of
    centroids 0…j−1 is largest, so the result is deterministic.

    :param points: float ``(N, d)``.
    :param clusters: k ≥ 2, the origin cluster included.
    :returns: ``(labels, centroids)``: int64 ``(N,)`` in ``0…k−1`` (0 = origin cluster)
        and float64 ``(k, d)`` with row 0 all zeros.

    >>> labels, c = kmeans_fixed_origin(np.array([[0.0, 0.0], [1.0, 0.0], [9.0, 0.0], [11.0, 0.0]]), 2)
    >>> labels.tolist(), c.tolist()
    ([0, 0, 1, 1], [[0.0, 0.0], [10.0, 0.0]])
    """
    points = np.asarray(points, dtype=np.float64)
    n, d = points.shape
    centroids = np.zeros((clusters, d))
    if n == 0:
        return np.zeros(0, dtype=np.int64), centroids
    sq_norms = np.einsum("ij,ij->i", points, points)
    # Farthest-first initialisation: centroid j is the (first) point farthest from the
    # centroids 0 … j−1 already placed.
    nearest = sq_norms.copy()
    for j in range(1, clusters):
        centroids[j] = points[int(nearest.argmax())]
        diff = points - centroids[j]
        np.minimum(nearest, np.einsum("ij,ij->i", diff, diff), out=nearest)
    labels = np.full(n, -1, dtype=np.int64)
    coords = np.ascontiguousarray(points.T)  # (d, N)
    for _ in range(iterations):
        diff = coords[:, None, :] - centroids.T[:, :, None]  # (d, k, N)
        new = np.einsum("dkn,dkn->kn", diff, diff).argmin(axis=0)  # ties: lowest index
        if np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=clusters)
        moved = counts > 0
        moved[0] = False
        for dim in range(d):
            sums = np.bincount(labels, weights=coords[dim], minlength=clusters)
            centroids[moved, dim] = sums[moved] / counts[moved]
    return labels, centroids


def run(page: Page, params: CETRParams, variant: str = "cetr") -> Extraction:
    """Extract the main content of *page* with CETR (``variant="cetr"``, k-means on
    ``(T', G)``) or CETR-TM (``variant="cetr-tm"``, threshold on T').

    :returns: an :class:`Extraction` whose body holds the text of the content lines, one
        per line (lines without text are skipped), and whose ``nodes`` view has one row per
        source line: ``texts`` (line text), ``txt_num`` (characters), ``h`` (TR),
        ``h_smoothed`` (T'), ``keep``. A page without a body or without lines gives an
        empty body.
    :raises ValueError: unknown *variant*.
    """
    check_choice("variant", variant, ("cetr", "cetr-tm"))
    used: dict = {"cetr_kernel": params.cetr_kernel, "wrap_width": params.wrap_width}
    if params.cetr_kernel == "radius":
        used["cetr_radius"] = params.cetr_radius
    if variant == "cetr":
        used.update(
            lookahead=params.lookahead, clusters=params.clusters, kmeans_iterations=params.kmeans_iterations
        )
    else:
        used["tm_lambda"] = params.tm_lambda
    title, title_node = pick_title(page)
    texts, chars, _tags, tr = tag_ratios(break_minified(body_source(page), params.wrap_width))
    if not texts or not chars.any():
        return Extraction(title=title, body="", method=variant, params=used, url=page.url)
    smoothed = gaussian_smooth(tr, params.cetr_kernel, params.cetr_radius)
    tau: float | None
    if variant == "cetr-tm":
        tau = float(params.tm_lambda * np.std(smoothed))
        keep = smoothed >= tau
    else:
        g = gaussian_smooth(
            lookahead_derivative(smoothed, params.lookahead), params.cetr_kernel, params.cetr_radius
        )
        labels, centroids = kmeans_fixed_origin(
            np.column_stack((smoothed, g)), params.clusters, params.kmeans_iterations
        )
        keep = labels != 0
        tau = None
        logger.debug("cetr centroids (T', G): %s", centroids.round(3).tolist())
    keep &= chars > 0
    kept = np.flatnonzero(keep).tolist()
    body = "\n".join(texts[i] for i in kept)
    title_index = None
    if title is not None and title_node is not None:
        title_index = next((i for i, text in enumerate(texts) if title in text), None)
    nodes = NodeTable(
        texts=texts, h=tr, h_smoothed=smoothed, keep=keep, txt_num=chars, title_index=title_index
    )
    logger.debug("%s: %d of %d lines kept", variant, len(kept), len(texts))
    return Extraction(title=title, body=body, method=variant, params=used, tau=tau, url=page.url, nodes=nodes)
