"""The CEPR paper's Figures 5–7 for one page: the TPR, ETPR and smoothed-ETPR (SETPR)
histograms over the text nodes, with each variant's threshold τ, the content nodes and
the title node.

matplotlib is an optional extra (``pip install scrapy-cepr[plot]``); it is imported
only when :func:`plot_page` is called, with the non-interactive Agg backend.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np

from .core.page import Page
from .core.result import Extraction
from .methods import get_method

__all__ = ["VARIANTS", "histograms", "plot_page", "title_font"]

logger = logging.getLogger(__name__)

#: (method, panel heading, y label) of the three panels, as in CEPR Figs. 5, 6 and 7.
VARIANTS: tuple[tuple[str, str, str], ...] = (
    ("tpr", "CEPR-TPR (paper Fig. 5)", "TPR (characters / node)"),
    ("etpr", "CEPR-ETPR (paper Fig. 6)", "ETPR"),
    ("setpr", "CEPR-SETPR (paper Fig. 7)", "smoothed ETPR H'"),
)

_CONTENT = "#1f77b4"
_OTHER = "#b0b0b0"
_TITLE = "#d62728"
_TAU = "#ff7f0e"


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "plotting needs matplotlib, which is not installed: pip install 'scrapy-cepr[plot]'"
        ) from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def title_font(text: str) -> tuple[Any, str]:
    """The font to draw *text* with, and the text to draw.

    matplotlib's default font (DejaVu Sans) has no CJK glyphs: a Chinese or Japanese
    title is drawn as boxes, with one warning per character. When the default font lacks
    a character of *text*, matplotlib's font list and then the system's fonts are searched
    for one that has a glyph of its own for every character, and it is returned as a
    ``FontProperties``. When no
    installed font has them (install one: ``apt-get install fonts-noto-cjk`` or
    ``fonts-wqy-microhei``), those characters are replaced by "?" and one warning says so.

    :returns: ``(None, text)`` when the default font has every character, else
        ``(FontProperties or None, text)``.
    """
    from matplotlib import font_manager, ft2font

    default = font_manager.findfont(font_manager.FontProperties())
    needed = {ord(c) for c in text if not c.isspace()}
    charmap = _charmap(ft2font, default)
    missing = {c for c in needed if c not in charmap}
    if not missing:
        return None, text
    seen = {default}
    listed = [entry.fname for entry in font_manager.fontManager.ttflist]
    for path in _candidates(listed, font_manager.findSystemFonts):
        if path in seen:
            continue
        seen.add(path)
        charmap = _charmap(ft2font, path)
        # Every character with a glyph of its own (a fallback font such as LastResort
        # maps a whole Unicode block to one placeholder glyph).
        if all(c in charmap for c in needed) and len({charmap[c] for c in needed}) == len(needed):
            return font_manager.FontProperties(fname=path), text
    logger.warning(
        "no installed font has glyphs for %d characters of the title (drawn as '?'); "
        "install one, e.g. apt-get install fonts-noto-cjk",
        len(missing),
    )
    return None, "".join("?" if ord(c) in missing else c for c in text)


def _candidates(listed: list[str], system_fonts: Any):
    yield from listed
    try:
        yield from sorted(system_fonts())
    except (OSError, RuntimeError):  # no fc-list: only matplotlib's own list
        return


def _charmap(ft2font: Any, path: str) -> dict[int, int]:
    try:
        return ft2font.FT2Font(path).get_charmap()
    except (OSError, RuntimeError, ValueError):
        return {}


def histograms(page: Page, *, lambda_: float = 1.0, radius: int = 1) -> dict[str, Extraction]:
    """Run CEPR-TPR, -ETPR and -SETPR on one parsed *page*, each with its paper α.

    :param lambda_: SETPR's λ (≥ 0).
    :param radius: SETPR's smoothing radius r (≥ 0).
    :returns: ``{"tpr": Extraction, "etpr": …, "setpr": …}``; each ``nodes`` holds H, H',
        the keep mask and the title index (None for a page without text nodes).
    :raises ValueError: a bad *lambda_* or *radius* (naming it).
    """
    out = {}
    for name, _, _ in VARIANTS:
        spec = get_method(name)
        params = spec.make_params(lambda_=lambda_, radius=radius)
        out[name] = spec.run(page, params)
    return out


def plot_page(
    html: str | bytes,
    output: str | os.PathLike[str],
    *,
    url: str | None = None,
    encoding: str | None = None,
    lambda_: float = 1.0,
    radius: int = 1,
    scale: str = "symlog",
    dpi: int = 120,
) -> dict[str, Extraction]:
    """Draw CEPR Figs. 5–7 for one page into *output* (PNG, SVG or PDF by its suffix).

    Three stacked panels share the x axis (text node index in document order, 0-based):
    the TPR histogram (Def. 3), the ETPR histogram (Def. 4, Eq. 2) and the SETPR
    histogram H' (Eqs. 3–6). Bars of content nodes (``H'_i > τ``) are blue, others grey;
    the dashed line is ``τ = α·σ(H')`` with the variant's paper α (1.7, 0.7, 0.8); the
    title node (:attr:`NodeTable.title_index`) is marked in red.

    :param scale: y axis, ``"symlog"`` (default: the histograms span several orders of
        magnitude and ETPR is often 0) or ``"linear"``.
    :returns: the three extractions, as :func:`histograms`.
    :raises ImportError: matplotlib is not installed (the message says how to get it).
    :raises NotHTMLError: *html* is not an HTML page.
    :raises ValueError: a bad parameter, or a page without text nodes (nothing to plot).
    """
    if scale not in ("symlog", "linear"):
        raise ValueError(f"scale must be one of symlog, linear; got {scale!r}")
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    page = Page.from_html(html, url=url, encoding=encoding)
    results = histograms(page, lambda_=lambda_, radius=radius)
    if len(page) == 0:
        raise ValueError("the page has no text nodes: nothing to plot")
    n = len(page)
    x = np.arange(n)
    fig, axes = plt.subplots(3, 1, figsize=(max(10.0, min(18.0, 8.0 + n / 60.0)), 9.5), sharex=True)
    for ax, (name, heading, ylabel) in zip(axes, VARIANTS):
        res = results[name]
        nodes = res.nodes
        assert nodes is not None
        h = nodes.h_smoothed
        keep = nodes.keep
        width = 0.8 if n <= 200 else 1.0
        ax.bar(x[~keep], h[~keep], width=width, color=_OTHER, label="other node", linewidth=0)
        ax.bar(x[keep], h[keep], width=width, color=_CONTENT, label="content node (H' > τ)", linewidth=0)
        tau = res.tau if res.tau is not None else 0.0
        alpha = res.params.get("alpha")
        ax.axhline(
            tau, color=_TAU, linestyle="--", linewidth=1.3, label=f"τ = α·σ = {tau:,.1f} (α = {alpha:g})"
        )
        if nodes.title_index is not None:
            ti = nodes.title_index
            ax.axvline(ti, color=_TITLE, linestyle=":", linewidth=1.2)
            ax.plot(
                [ti],
                [h[ti]],
                marker="v",
                color=_TITLE,
                markersize=9,
                linestyle="none",
                label=f"title node #{ti}",
            )
        if scale == "symlog":
            # Linear below 1 (ETPR is often 0), logarithmic above.
            ax.set_yscale("symlog", linthresh=1.0, linscale=0.5)
            ax.set_ylim(bottom=0, top=max(10.0, float(h.max()), tau) * 2.0)
        extra = f", λ = {res.params['lambda_']:g}, r = {res.params['radius']}" if name == "setpr" else ""
        ax.set_title(f"{heading}: {int(keep.sum())} of {n} text nodes kept{extra}", fontsize=10, loc="left")
        ax.set_ylabel(ylabel + (" (symlog)" if scale == "symlog" else ""))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0.0)
    axes[-1].set_xlabel("text node index (document order)")
    axes[-1].set_xlim(-1, n)
    axes[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    title = results["setpr"].title or page.html_title or "(no title)"
    where = f"\n{url}" if url else ""
    font, text = title_font(f"{title[:90]}{where}")
    if font is None:
        fig.suptitle(text, fontsize=11)
    else:
        font.set_size(11)
        fig.suptitle(text, fontproperties=font)
    fig.tight_layout()
    fig.savefig(output, dpi=dpi)
    plt.close(fig)
    logger.info("wrote %s (%d text nodes)", output, n)
    return results
