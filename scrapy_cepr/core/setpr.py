"""The parts of CEPR (Wu, Li, Hu, Wu; CIKM 2013, spec §1) that other methods use: its
parameters :class:`CEPRParams`, the paper's α per variant (:data:`PAPER_ALPHA`) and the
path-ratio histogram with its SETPR smoothing (:func:`histogram`), which CEPR-Article
builds on. The method itself is :mod:`scrapy_cepr.methods.cepr`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .features import etpr, tpr
from .page import Page
from .params import check_choice, check_int, check_real
from .smoothing import adjacent_path_weights, smooth

__all__ = ["PAPER_ALPHA", "CEPRParams", "histogram"]

#: α of each variant in the paper's experiments (Sec. 5.2).
PAPER_ALPHA = {"tpr": 1.7, "etpr": 0.7, "setpr": 0.8}


@dataclass(frozen=True)
class CEPRParams:
    """Validated CEPR parameters.

    :param alpha: α ≥ 0 of ``τ = α·σ(H')``; None means the variant's paper value
        (:data:`PAPER_ALPHA`).
    :param lambda_: λ ≥ 0 of the weight ``1/dist^λ`` (SETPR only); 0 is plain Gaussian
        smoothing.
    :param radius: window radius r ≥ 0 (SETPR only); the window has 2r+1 nodes.
    :param edges: ``"keep"`` (authors' code) or ``"pad"``, see
        :func:`scrapy_cepr.core.smoothing.smooth`.
    :raises ValueError: naming the parameter and its allowed range.
    """

    alpha: float | None = None
    lambda_: float = 1.0
    radius: int = 1
    edges: str = "keep"

    def __post_init__(self) -> None:
        if self.alpha is not None:
            object.__setattr__(self, "alpha", check_real("alpha", self.alpha))
        object.__setattr__(self, "lambda_", check_real("lambda_", self.lambda_))
        object.__setattr__(self, "radius", check_int("radius", self.radius, 0, 1000))
        check_choice("edges", self.edges, ("keep", "pad"))


def histogram(page: Page, variant: str, params: CEPRParams) -> tuple[np.ndarray, np.ndarray]:
    """``(H, H')`` over the page's N text nodes for *variant* (``tpr``, ``etpr`` or
    ``setpr``): float64 ``(N,)`` each. H' is H itself for TPR and ETPR."""
    n_paths = len(page.path_names)
    if variant == "tpr":
        h = tpr(page.path_ids, page.char_counts, n_paths)[page.path_ids]
        return h, h
    h = etpr(page.path_ids, page.char_counts, page.punct_counts, n_paths)[page.path_ids]
    if variant == "etpr":
        return h, h
    weights = adjacent_path_weights(page.path_ids, page.path_codes, params.radius, params.lambda_)
    return h, smooth(h, weights, params.radius, edges=params.edges)
