"""CEPR: Content Extraction via Path Ratios (Wu, Li, Hu, Wu; CIKM 2013), spec §1.

Three variants share one pipeline (paper Fig. 8):

1. page model: text nodes in document order with their tag paths (:mod:`..core.page`);
2. features: ``H_i = TPR(path(v_i))`` or ``ETPR(path(v_i))`` (Defs. 3–4, Eq. 2);
3. smoothing (SETPR only): Gaussian kernel weighted by ``1/dist^λ`` of the tag paths
   (Eqs. 3–6);
4. threshold: ``τ = α·σ(H')``; node i is content iff ``H'_i > τ`` (Sec. 4, 5.2); when
   σ(H') = 0 every node is kept (:func:`..core.threshold.std_content_mask`).

Paper values (Sec. 5.2): CEPR-TPR α = 1.7; CEPR-ETPR α = 0.7; CEPR-SETPR α = 0.8,
r = 1 (window 3), λ = 1.

Choices on [open] points of the spec:

* punctuation is Unicode category P* (:func:`..core.text.punctuation_table`);
* the first and last r nodes are left unsmoothed, as in the authors' code
  (``edges="keep"``; ``edges="pad"`` smooths them against zeros; measured in
  ``benchmarks/open_choices.py``);
* only text under ``<body>`` is a unit (the head is not displayed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.features import etpr, tpr
from ..core.page import Page
from ..core.params import check_choice, check_int, check_real
from ..core.result import Extraction, text_node_extraction
from ..core.smoothing import adjacent_path_weights, smooth
from ..core.threshold import std_content_mask
from ..core.title import pick_title

__all__ = ["PAPER_ALPHA", "CEPRParams", "run"]

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
        :func:`..core.smoothing.smooth`.
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


def run(page: Page, params: CEPRParams, variant: str = "setpr") -> Extraction:
    """Extract the main content of *page* with CEPR-*variant* (paper Fig. 8).

    :returns: an :class:`Extraction` whose ``nodes`` view holds txtNum, puncNum, H, H' and
        the keep mask per text node. A page without text nodes gives an empty body.
    """
    alpha = PAPER_ALPHA[variant] if params.alpha is None else params.alpha
    used = {"alpha": alpha}
    if variant == "setpr":
        used.update(lambda_=params.lambda_, radius=params.radius, edges=params.edges)
    title, title_index = pick_title(page)
    if len(page) == 0:
        return Extraction(title=title, body="", method=variant, params=used, url=page.url)
    h, h_smoothed = histogram(page, variant, params)
    tau, keep = std_content_mask(h_smoothed, alpha)
    return text_node_extraction(
        page, method=variant, params=used, title=(title, title_index), h=h, h_smoothed=h_smoothed, keep=keep,
        tau=tau, punc_num=page.punct_counts if variant != "tpr" else None,
    )
