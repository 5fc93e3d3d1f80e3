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

from ..core.page import Page
from ..core.result import Extraction, text_node_extraction
from ..core.setpr import PAPER_ALPHA, CEPRParams, histogram
from ..core.threshold import std_content_mask
from ..core.title import pick_title

__all__ = ["run"]

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
