"""Wang et al. 2009: a learned, template-independent news wrapper over rendered pages
(KDD 2009, "Can we learn a template-independent wrapper for news article extraction
from a single training site?"), spec §5.

The page is rendered by Chromium (:mod:`scrapy_cepr.render`); every element of
``<body>`` gets its bounding rectangle, computed font size and visibility. Then, as in the
paper:

1. **Body** (Sec. 3, Fig. 11). The candidate subtrees are the elements that are displayed,
   have visible text and pass the filters: *BigEnough* (area ≥ ``min_area`` px²) and,
   when ``first_screen`` is on, *top inside the first screen* (top < ScreenHeight). Fig. 11
   stops the traversal at an element that fails a filter, assuming a child is never
   larger or higher than its parent; with CSS floats and positioning that is false (a
   container of floated columns can be 0 px high), so each element is tested on its own
   (our deviation). Each candidate gets the body features and the body SVM's Platt
   probability; the most probable one is ``T_BODY``.
2. **Title** (Sec. 4, Fig. 12). The candidates are the smallest subtrees holding a piece
   of visible text (an element none of whose children holds all its text) that pass
   *WholeInScreen*, contain no anchor text, and are not a category name
   (*NotCategoryName*: no link above the body has the same text). Each gets the title
   features, computed against the chosen body, and the title SVM's probability; the most
   probable one is ``T_TITLE``.
3. **Output.** The title is the text of ``T_TITLE``; the body is the visible text of
   ``T_BODY`` (without the title, when the title lies inside it), one display block per
   line like the other methods. With ``styled_html=True`` the result also holds
   ``body_styled_html``: the title and body subtrees as HTML with their computed styles
   inlined (Sec. 2, "News Article Generation"; see :func:`styled_html`).

**Features.** Body, the paper's set (``features="paper"``, Sec. 3.1):

* ``formatting_elements_num``: formatting elements among the children of the root,
  divided by all formatting elements of the page (Sec. 3.1.1);
* ``formatted_content_len``: characters of visible text in those children, divided by
  the sum of that length over every formatting element of the page;
* ``rect_left``, ``rect_width``: left and width / ScreenWidth; ``rect_top``,
  ``rect_height``: top and height / H, where H is the page height when the page is at
  most TwoScreensHeight high, and TwoScreensHeight otherwise (Sec. 3.1.2: "for a long
  news page, the content in the first two screens is the most important");

the extended set (``features="extended"``, the default) adds ``link_density``
(characters inside links / characters of the subtree) and ``text_share`` (characters
of the subtree / characters of the page), which a site-grouped cross-validation on the
article-extraction-benchmark found to help on renders without the sites' stylesheets.

Title (Sec. 4.1): ``rect_left``, ``rect_top``, ``rect_width``, ``rect_height`` (by
ScreenWidth and ScreenHeight), ``overlap`` (horizontal overlap with the body / body
width), ``distance`` ((body top − title bottom) / ScreenHeight, signed: negative when the
title starts inside the body), ``flat`` (shorter / longer side), ``font_size`` (/ the
largest font size among the title candidates), ``end_with_full_stop`` (1 when the text
ends with ``.``, ``。`` or ``．``) and ``word_num`` (words / MaxWordNum = 60; a CJK
character is a word).

**Values the paper's text lost** (also in ``docs/wang2009_choices.md``): ScreenWidth =
1024 px, ScreenHeight = 768 px, TwoScreensHeight = 1,536 px (a 1024×768 screen, the
common one in 2009; the renders use that viewport); BigEnough's minimum area = 30,000 px²
(e.g. 600×50 px: three lines of a column of text); the formatting elements are
:data:`FORMATTING_TAGS`. Without ``first_screen`` (the default: offline renders lack
the sites' stylesheets, and only 47 of the corpus's 181 bodies start in a first 768-px
screen), WholeInScreen is replaced by a bound relative to the body: the title must end
at most one ScreenHeight below the body's top (anywhere above it is allowed: without
their stylesheets, pages put navigation lists of any height between title and body).

**Models.** Both are RBF-kernel SVMs with Platt's sigmoid (``P = 1 / (1 + exp(A·f +
B))`` on the decision value ``f``, Sec. 3.2.1), trained by
``benchmarks/train_wang2009.py`` with scikit-learn and shipped as JSON
(``scrapy_cepr/models/wang2009.json``: standardisation, support vectors, dual
coefficients, γ, intercept, A, B). Inference needs numpy only (:class:`SVMModel`).

Its scores (cross-validated and of the shipped model) are in ``docs/measurements.md``
and ``docs/wang2009_choices.md``.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
from lxml import html as lxml_html

from ..core.formats import base_url, image_url, make_xml_safe, safe_url
from ..core.page import Page
from ..core.params import check_choice, check_real
from ..core.parse import remove_keeping_tail
from ..core.region import DomTable
from ..core.result import Extraction, text_node_extraction
from ..core.text import CJK_RE

__all__ = [
    "BODY_FEATURES",
    "FORMATTING_TAGS",
    "TITLE_FEATURES",
    "Layout",
    "SVMModel",
    "Wang2009Extraction",
    "Wang2009Params",
    "body_candidates",
    "load_models",
    "run",
    "styled_html",
    "title_candidates",
    "warm_up",
]

logger = logging.getLogger(__name__)

#: The paper's constants (their values are lost from the text; our choices).
SCREEN_WIDTH = 1024
SCREEN_HEIGHT = 768
TWO_SCREENS_HEIGHT = 2 * SCREEN_HEIGHT
MAX_WORD_NUM = 60  # paper, Sec. 4.1
#: Without the first-screen filter: how far above the body's top a title may start (px;
#: unbounded: site-grouped CV title accuracy 0.66 at 1,536 px, 0.70 at 3,072, 0.75 unbounded).
TITLE_ABOVE_BODY = float("inf")
#: Formatting elements (Sec. 3.1.1 names ``<p>`` and ``<strong>``; the rest of its list is lost).
FORMATTING_TAGS = frozenset(
    ["p", "br", "b", "strong", "i", "em", "u", "s", "font", "small", "big", "center", "blockquote", "pre",
     "sub", "sup", "mark", "h2", "h3", "h4", "h5", "h6"]
)
#: Body feature names per feature set.
BODY_FEATURES: dict[str, tuple[str, ...]] = {
    "paper": ("formatting_elements_num", "formatted_content_len", "rect_left", "rect_top", "rect_width", "rect_height"),
    "extended": ("formatting_elements_num", "formatted_content_len", "rect_left", "rect_top", "rect_width",
                 "rect_height", "link_density", "text_share"),
}
TITLE_FEATURES: tuple[str, ...] = ("rect_left", "rect_top", "rect_width", "rect_height", "overlap", "distance", "flat",
                                   "font_size", "end_with_full_stop", "word_num")
_FEATURE_CAP = 8.0  # |feature| bound: a 30-screen page must not dominate the RBF distances
_WORD_RE = re.compile(f"[{CJK_RE.pattern[1:-1]}]|[^\\W{CJK_RE.pattern[1:-1]}]+")
_FULL_STOPS = (".", "。", "．")
_MODEL_RESOURCE = ("scrapy_cepr", "models/wang2009.json")
_KEEP_ATTRS = {"href", "src", "alt", "title", "width", "height", "colspan", "rowspan", "datetime", "lang", "dir"}
_DROP_TAGS = ("object", "embed", "applet", "form", "input", "button", "select", "textarea", "svg", "canvas",
              "link", "meta", "base")
_STYLE_PROPS = ("font-family", "font-size", "font-weight", "font-style", "color", "text-align", "line-height")


@dataclass(frozen=True)
class Wang2009Params:
    """Validated ``wang2009`` parameters.

    :param features: body feature set, ``"extended"`` (default: the paper's six plus link
        density and text share) or ``"paper"`` (the paper's six, Sec. 3.1).
    :param first_screen: the paper's first-screen filters (body top inside the first
        768 px; title whole inside it). Default False: see the module docstring.
    :param min_area: BigEnough's minimum body area in px² (≥ 0; default 30,000).
    :param styled_html: also return ``body_styled_html`` (the styled article, Sec. 2).
    :param render_timeout: seconds (> 0) allowed to load and to capture a page.
    :param scripts: run the page's scripts while rendering (default False).
    :raises ValueError: naming the parameter and its allowed values.
    """

    features: str = "extended"
    first_screen: bool = False
    min_area: float = 30000.0
    styled_html: bool = False
    render_timeout: float = 15.0
    scripts: bool = False

    def __post_init__(self) -> None:
        check_choice("features", self.features, tuple(BODY_FEATURES))
        for name in ("first_screen", "styled_html", "scripts"):
            object.__setattr__(self, name, _check_bool(name, getattr(self, name)))
        object.__setattr__(self, "min_area", check_real("min_area", self.min_area, 0.0))
        timeout = check_real("render_timeout", self.render_timeout, 0.0)
        if timeout <= 0:
            raise ValueError(f"render_timeout must be a float > 0, got {self.render_timeout!r}")
        object.__setattr__(self, "render_timeout", timeout)


def _check_bool(name: str, value: object) -> bool:
    """*value* as a bool; ``"true"``/``"false"`` (``--param styled_html=true``) and 0/1
    are accepted.

    >>> _check_bool("styled_html", "true"), _check_bool("styled_html", 0)
    (True, False)
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise ValueError(f"{name} must be True or False, got {value!r}")


@dataclass(frozen=True, eq=False)
class Wang2009Extraction(Extraction):
    """An :class:`~scrapy_cepr.Extraction` with the styled article: ``body_styled_html`` (str,
    with ``styled_html=True``; else None), and the probabilities of the chosen body and
    title subtrees (``body_probability``, ``title_probability``, in [0, 1] or None)."""

    body_styled_html: str | None = None
    body_probability: float | None = None
    title_probability: float | None = None
    timings: dict[str, float] = field(default_factory=dict, repr=False)

    def to_dict(self, *, nodes: bool = False, formats: Sequence[str] = (), metadata: bool = False) -> dict[str, Any]:
        """:meth:`Extraction.to_dict` (same arguments) plus ``body_styled_html`` when it
        was asked for."""
        out = super().to_dict(nodes=nodes, formats=formats, metadata=metadata)
        if self.body_styled_html is not None:
            out["body_styled_html"] = self.body_styled_html
        return out


# --------------------------------------------------------------------------- models


@dataclass(frozen=True, eq=False)
class SVMModel:
    """An RBF-kernel SVM with Platt's sigmoid, evaluated with numpy.

    ``P(positive | x) = 1 / (1 + exp(A·f(z) + B))`` with ``z = (x − mean) / scale`` and
    ``f(z) = Σ_i coef_i · exp(−γ‖sv_i − z‖²) + intercept`` (paper Sec. 3.2.1; Platt 1999).
    """

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    gamma: float
    sv: np.ndarray
    coef: np.ndarray
    intercept: float
    prob_a: float
    prob_b: float

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SVMModel:
        """Build from the JSON object written by ``benchmarks/train_wang2009.py``.

        :raises ValueError: missing key or inconsistent shapes.
        """
        try:
            m = cls(tuple(d["features"]), np.asarray(d["mean"], float), np.asarray(d["scale"], float), float(d["gamma"]),
                    np.asarray(d["sv"], float).reshape(-1, len(d["features"])), np.asarray(d["coef"], float),
                    float(d["intercept"]), float(d["prob_a"]), float(d["prob_b"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"bad SVM model: {exc}") from None
        if m.sv.shape[0] != m.coef.shape[0] or m.mean.shape != m.scale.shape or m.mean.shape[0] != len(m.features):
            raise ValueError("bad SVM model: inconsistent shapes")
        return m

    def decision(self, x: np.ndarray) -> np.ndarray:
        """Decision values ``f``, float ``(n,)``, of the rows of *x* ``(n, d)``."""
        z = (np.asarray(x, float) - self.mean) / self.scale
        d2 = (z * z).sum(1)[:, None] + (self.sv * self.sv).sum(1)[None, :] - 2.0 * z @ self.sv.T
        return np.exp(-self.gamma * np.maximum(d2, 0.0)) @ self.coef + self.intercept

    def probability(self, x: np.ndarray) -> np.ndarray:
        """Platt probabilities of the positive class, float ``(n,)`` in [0, 1]."""
        t = self.prob_a * self.decision(x) + self.prob_b
        return 1.0 / (1.0 + np.exp(np.clip(t, -500, 500)))


@lru_cache(maxsize=1)
def load_models() -> dict[str, Any]:
    """The shipped models: ``{"body": {"paper": SVMModel, "extended": SVMModel},
    "title": SVMModel, "meta": dict}``, read once per process from
    ``scrapy_cepr/models/wang2009.json`` (JSON, no pickle).

    :raises FileNotFoundError: the model file is missing (run
        ``benchmarks/train_wang2009.py``).
    """
    pkg, name = _MODEL_RESOURCE
    data = json.loads(resources.files(pkg).joinpath(*name.split("/")).read_text(encoding="utf-8"))
    return {
        "body": {k: SVMModel.from_dict(v) for k, v in data["body"].items()},
        "title": SVMModel.from_dict(data["title"]),
        "meta": {k: v for k, v in data.items() if k not in ("body", "title")},
    }


def warm_up() -> None:
    """One-off loading for a worker (:func:`scrapy_cepr.worker.warm_up`): the models and
    the rendering module, but no browser: pages that carry their geometry (rendered by
    scrapy-playwright, :func:`scrapy_cepr.render.embedded_geometry`) never need one, and
    the first page that does starts it (inside that page's ``CEPR_TIMEOUT``).

    :raises FileNotFoundError: the model file is missing.
    """
    from .. import render  # noqa: F401  (its imports, not a browser)

    load_models()


# --------------------------------------------------------------------------- layout


class Layout:
    """A page's elements joined to their rendered geometry (all arrays over the ``E``
    elements of :class:`~scrapy_cepr.core.region.DomTable`, pre-order):

    * ``table``: the element table (parents, subtree ranges, text node ranges);
    * ``rect``: float ``(E, 4)`` px (zeros for elements without geometry), ``font``,
      ``shown`` (bool: has geometry, displayed, non-empty box);
    * ``visible``: bool ``(N,)`` per text node: its owner is shown;
    * ``chars``, ``link_chars``: int ``(E,)``, visible characters of the subtree and
      those inside links;
    * ``page_height``: the document height in px;
    * ``body``: index of ``<body>`` (or -1).
    """

    def __init__(self, page: Page, geometry: Any) -> None:
        self.page = page
        self.geometry = geometry
        t = self.table = DomTable(page)
        n = len(t)
        gi = np.full(n, -1, dtype=np.int64)
        ng = len(geometry)
        for k, el in enumerate(t.elements):
            v = el.get("data-cepr-i")
            if v is not None and v.isdigit() and int(v) < ng:
                gi[k] = int(v)
        self.geo_index = gi
        has = gi >= 0
        g = np.maximum(gi, 0)
        self.rect = np.where(has[:, None], geometry.rect[g], 0.0) if n else np.zeros((0, 4))
        self.font = np.where(has, geometry.font[g], 0.0) if n else np.zeros(0)
        self.shown = has & geometry.shown[g] & (self.rect[:, 2] > 0) & (self.rect[:, 3] > 0) if n else np.zeros(0, bool)
        self.visible = self.shown[t.owner] if len(page) else np.zeros(0, bool)
        chars = page.char_counts * self.visible
        self.chars = t.subtree_sum(np.bincount(t.owner, weights=chars, minlength=n)) if n else np.zeros(0, np.int64)
        self.link_chars = (t.subtree_sum(np.bincount(t.owner, weights=chars * page.in_link, minlength=n))
                           if n else np.zeros(0, np.int64))
        self.page_height = float(max(geometry.page[1], 1))
        tags = t.tags
        self.body = tags.index("body") if "body" in tags else -1
        self.is_formatting = np.fromiter((tg in FORMATTING_TAGS for tg in tags), bool, n)

    def text(self, e: int) -> str:
        """Visible text of element *e*'s subtree, text nodes joined with spaces."""
        first, last = int(self.table.first_text[e]), int(self.table.last_text[e])
        texts = self.page.texts
        return " ".join(texts[i] for i in range(first, last + 1) if self.visible[i])

    def in_subtree(self, e: int) -> np.ndarray:
        """bool ``(E,)``: the elements of ``T_e``."""
        mask = np.zeros(len(self.table), bool)
        mask[e : self.table.end[e]] = True
        return mask


def body_candidates(layout: Layout, params: Wang2009Params) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The body candidates and their features (Sec. 3.1, Fig. 11).

    :returns: ``(ids, {"paper": X6, "extended": X8})``: int ``(C,)`` element indices and
        float ``(C, 6)`` / ``(C, 8)`` feature matrices (columns :data:`BODY_FEATURES`).
    """
    t = layout.table
    rect = layout.rect
    ok = layout.shown & (layout.chars > 0) & (rect[:, 2] * rect[:, 3] >= params.min_area)
    if params.first_screen:
        ok &= rect[:, 1] < SCREEN_HEIGHT
    ok[: max(layout.body, 0)] = False
    if layout.body >= 0:
        ok[t.end[layout.body]:] = False
    ids = np.flatnonzero(ok)
    n = len(t)
    # Formatting elements among each element's children, and their text.
    fe = layout.is_formatting & layout.shown
    parent = t.parent
    fe_num = np.bincount(parent[fe & (parent >= 0)], minlength=n).astype(float)
    fe_len = np.bincount(parent[fe & (parent >= 0)], weights=layout.chars[fe & (parent >= 0)], minlength=n)
    total_fe = max(float(np.count_nonzero(fe)), 1.0)
    total_fe_len = max(float(layout.chars[fe].sum()), 1.0)
    total_chars = max(float(layout.chars[layout.body]) if layout.body >= 0 else 0.0, 1.0)
    h_norm = layout.page_height if layout.page_height <= TWO_SCREENS_HEIGHT else float(TWO_SCREENS_HEIGHT)
    r = rect[ids]
    paper = np.column_stack([
        fe_num[ids] / total_fe,
        fe_len[ids] / total_fe_len,
        r[:, 0] / SCREEN_WIDTH,
        r[:, 1] / h_norm,
        r[:, 2] / SCREEN_WIDTH,
        r[:, 3] / h_norm,
    ]) if ids.size else np.zeros((0, 6))
    chars = np.maximum(layout.chars[ids], 1).astype(float)
    extra = np.column_stack([layout.link_chars[ids] / chars, layout.chars[ids] / total_chars]) if ids.size else np.zeros((0, 2))
    paper = np.clip(paper, -_FEATURE_CAP, _FEATURE_CAP)
    return ids, {"paper": paper, "extended": np.hstack([paper, extra])}


def title_candidates(layout: Layout, body: int, params: Wang2009Params) -> tuple[np.ndarray, np.ndarray]:
    """The title candidates for the chosen *body* element and their features (Sec. 4,
    Fig. 12).

    :returns: ``(ids, X)``: int ``(C,)`` element indices, float ``(C, 10)`` features
        (columns :data:`TITLE_FEATURES`).
    """
    t = layout.table
    n = len(t)
    if layout.body < 0 or body < 0:
        return np.zeros(0, np.int64), np.zeros((0, len(TITLE_FEATURES)))
    rect = layout.rect
    chars = layout.chars
    # Smallest subtrees holding a piece of text: no child holds all the element's text.
    max_child = np.zeros(n, np.int64)
    has_parent = t.parent >= 0
    np.maximum.at(max_child, t.parent[has_parent], chars[has_parent])
    ok = layout.shown & (chars > 0) & (max_child < chars) & (layout.link_chars == 0)
    b_left, b_top, b_w, b_h = rect[body]
    top, bottom = rect[:, 1], rect[:, 1] + rect[:, 3]
    if params.first_screen:  # WholeInScreen
        ok &= (top >= 0) & (bottom <= SCREEN_HEIGHT) & (rect[:, 0] >= 0) & (rect[:, 0] + rect[:, 2] <= SCREEN_WIDTH + 1)
    else:  # a screen placed at the body
        ok &= (top >= b_top - TITLE_ABOVE_BODY) & (bottom <= b_top + SCREEN_HEIGHT)
    ok[: layout.body + 1] = False
    ok[t.end[layout.body]:] = False
    ids = np.flatnonzero(ok)
    if ids.size == 0:
        return ids, np.zeros((0, len(TITLE_FEATURES)))
    texts = [layout.text(e) for e in ids.tolist()]
    # NotCategoryName: no link above the body with the same text.
    links = set()
    for e in np.flatnonzero((np.array(t.tags, dtype=object) == "a") & layout.shown & (top < b_top)).tolist():
        links.add(_norm(layout.text(e)))
    keep = np.array([_norm(s) not in links for s in texts], bool)
    ids = ids[keep]
    texts = [s for s, k in zip(texts, keep.tolist()) if k]
    if ids.size == 0:
        return ids, np.zeros((0, len(TITLE_FEATURES)))
    r = rect[ids]
    overlap = np.clip(np.minimum(r[:, 0] + r[:, 2], b_left + b_w) - np.maximum(r[:, 0], b_left), 0, None) / max(b_w, 1.0)
    distance = (b_top - (r[:, 1] + r[:, 3])) / SCREEN_HEIGHT
    longer = np.maximum(r[:, 2], r[:, 3])
    flat = np.minimum(r[:, 2], r[:, 3]) / np.maximum(longer, 1.0)
    font = layout.font[ids] / max(float(layout.font[ids].max()), 1.0)
    stop = np.array([s.rstrip().endswith(_FULL_STOPS) for s in texts], float)
    words = np.array([len(_WORD_RE.findall(s)) for s in texts], float) / MAX_WORD_NUM
    x = np.column_stack([r[:, 0] / SCREEN_WIDTH, r[:, 1] / SCREEN_HEIGHT, r[:, 2] / SCREEN_WIDTH, r[:, 3] / SCREEN_HEIGHT,
                         overlap, distance, flat, font, stop, words])
    return ids, np.clip(x, -_FEATURE_CAP, _FEATURE_CAP)


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


# --------------------------------------------------------------------------- run


def run(page: Page, params: Wang2009Params, *, geometry: Any = None) -> Wang2009Extraction:
    """Extract the title and body of *page* with the Wang et al. 2009 wrapper.

    The geometry is, in order: *geometry* if given (with *page* parsed from the DOM it was
    captured on), else the capture a scrapy-playwright page method embedded in the page
    (:func:`scrapy_cepr.render.embedded_geometry`), else an offline render of
    ``page.source`` by this process's shared :class:`~scrapy_cepr.render.Renderer`.

    :raises RenderError: the page could not be rendered (browser crash, timeout).
    :raises BrowserNotFound: no Chromium or no playwright (names the install command).
    """
    from ..render import embedded_geometry, shared_renderer

    timings: dict[str, float] = {}
    if page.root is None or page.root.find("body") is None or not len(page):
        return _empty(page, params, timings)
    if geometry is None:
        geometry = embedded_geometry(page.source)
        if geometry is None:
            rendered = shared_renderer(params.render_timeout, params.scripts).render(page.source)
            timings["load_ms"], timings["capture_ms"] = rendered.load_ms, rendered.capture_ms
            page = Page.from_html(rendered.html, url=page.url)
            geometry = rendered.geometry
    t0 = time.perf_counter()
    layout = Layout(page, geometry)
    models = load_models()
    ids, feats = body_candidates(layout, params)
    t1 = time.perf_counter()
    if ids.size == 0:
        return _empty(page, params, timings)
    p_body = models["body"][params.features].probability(feats[params.features])
    best = int(np.argmax(p_body))
    body = int(ids[best])
    t2 = time.perf_counter()
    tids, tx = title_candidates(layout, body, params)
    t3 = time.perf_counter()
    title_el, title, p_title = -1, None, None
    if tids.size:
        pt = models["title"].probability(tx)
        k = int(np.argmax(pt))
        title_el, p_title = int(tids[k]), float(pt[k])
        title = layout.text(title_el) or None
    t4 = time.perf_counter()
    keep = np.zeros(len(page), bool)
    tab = layout.table
    keep[int(tab.first_text[body]) : int(tab.last_text[body]) + 1] = True
    if title_el >= 0 and body <= title_el < tab.end[body]:
        keep[int(tab.first_text[title_el]) : int(tab.last_text[title_el]) + 1] = False
    keep &= layout.visible
    timings.update(features_ms=((t1 - t0) + (t3 - t2)) * 1000, svm_ms=((t2 - t1) + (t4 - t3)) * 1000)
    base = text_node_extraction(page, method="wang2009", params=_params_dict(params), title=(title, None),
                                h=np.zeros(len(page)), h_smoothed=np.zeros(len(page)), keep=keep)
    html_out = styled_html(layout, body, title_el) if params.styled_html else None
    return Wang2009Extraction(title=base.title, body=base.body, method=base.method, params=base.params, tau=None,
                              url=page.url, nodes=base.nodes, body_styled_html=html_out,
                              body_probability=float(p_body[best]), title_probability=p_title, timings=timings)


def _params_dict(params: Wang2009Params) -> dict[str, Any]:
    return {f: getattr(params, f) for f in params.__dataclass_fields__}


def _empty(page: Page, params: Wang2009Params, timings: dict[str, float]) -> Wang2009Extraction:
    return Wang2009Extraction(title=page.meta_title or page.html_title, body="", method="wang2009",
                              params=_params_dict(params), url=page.url,
                              body_styled_html="" if params.styled_html else None, timings=timings)


# --------------------------------------------------------------------------- styled output


def styled_html(layout: Layout, body: int, title: int = -1) -> str:
    """The article as HTML in its rendered style (paper Sec. 2, "News Article Generation").

    A copy of the title subtree (when it lies outside the body) followed by the body
    subtree, inside ``<article>``: elements that were not displayed are dropped; every
    element whose computed style differs from its parent's gets a ``style`` attribute
    with the computed font family, size, weight, style, colour, text alignment and line
    height (the root gets all of them, and its rendered width as ``max-width``); an image keeps its rendered width and height (px);
    ``href``/``src`` are made absolute against the
    page URL (and ``<base href>``) and kept only when ``body_html`` would keep them
    (:func:`~scrapy_cepr.core.formats.safe_url`: ``http``, ``https``, ``mailto``), a
    lazy image's ``data-src`` becomes its ``src`` and an image without a safe source is
    dropped (:func:`~scrapy_cepr.core.formats.image_url`); a ``<body>`` root becomes a
    ``<div>``; scripts, event handlers (``on*``), classes, ids and form controls are
    removed.

    :returns: a ``str`` of HTML (``""`` when *body* is -1).
    """
    if body < 0:
        return ""
    base = base_url(layout.page.root, layout.page.url)
    parts = []
    tab = layout.table
    if title >= 0 and not (body <= title < tab.end[body]):
        parts.append(_styled_copy(layout, title, base))
    parts.append(_styled_copy(layout, body, base))
    return "<article>" + "".join(parts) + "</article>"


def _styled_copy(layout: Layout, root: int, base: str | None) -> str:
    tab = layout.table
    geo = layout.geometry
    index = {el: k for k, el in enumerate(tab.elements[root : tab.end[root]], start=root)}
    src = tab.elements[root]
    copy = deepcopy(src)
    copy.tail = None
    if copy.tag in ("html", "body"):  # a block inside <article>, not a second document
        copy.tag = "div"
    make_xml_safe(copy)  # text and attributes set below must be XML compatible
    # Walk the original and the copy in parallel (a deep copy has the same structure).
    originals = list(src.iter())
    copies = list(copy.iter())
    drop = []
    for orig, el in zip(originals, copies):
        k = index.get(orig, -1)
        if not isinstance(el.tag, str):  # comments, processing instructions
            drop.append(el)
            continue
        if k >= 0 and not layout.shown[k] and orig.tag not in ("br", "img", "source", "picture"):
            drop.append(el)
            continue
        if el.tag in _DROP_TAGS:
            drop.append(el)
            continue
        attrs = dict(el.attrib)
        image = el.tag in ("img", "source")
        img_src = image_url(el, base) if image else None
        el.attrib.clear()
        for name, value in attrs.items():  # URLs through body_html's allow-list
            if name not in _KEEP_ATTRS or (name == "src" and image):
                continue
            if name in ("href", "src"):
                value = safe_url(value, base)
            if value is not None:
                el.set(name, value)
        if image:
            if img_src is None and el.tag == "img":  # as in body_html: no safe source, no image
                drop.append(el)
                continue
            if img_src is not None:
                el.set("src", img_src)
        if el.tag == "img" and k >= 0 and layout.rect[k, 2] > 0:  # keep the rendered size
            el.set("width", str(int(layout.rect[k, 2])))
            el.set("height", str(int(layout.rect[k, 3])))
        if k >= 0:
            g = int(layout.geo_index[k])
            pk = int(tab.parent[k])
            pg = int(layout.geo_index[pk]) if pk >= 0 else -1
            if g >= 0 and (k == root or pg < 0 or geo.style[g] != geo.style[pg]):
                values = geo.styles[int(geo.style[g])]
                style = "; ".join(f"{p}: {v}" for p, v in zip(_STYLE_PROPS, values))
                if k == root and layout.rect[k, 2] > 0:  # the column width it was read at
                    style += f"; max-width: {int(layout.rect[k, 2])}px"
                el.set("style", style)
    for el in drop:
        if el is copy:
            return ""
        remove_keeping_tail(el)
    return lxml_html.tostring(copy, encoding="unicode", with_tail=False)
