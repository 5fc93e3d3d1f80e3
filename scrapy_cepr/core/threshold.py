"""Thresholds that split a histogram into main content and boilerplate.

* :func:`std_threshold`: ``τ = α · σ(H')`` (CEPR Sec. 4 and 5.2, spec §1).
"""

from __future__ import annotations

import numpy as np

__all__ = ["std_threshold"]


def std_threshold(h: np.ndarray, alpha: float) -> float:
    """``τ = α · σ(H')``, σ the population standard deviation (divide by N).

    A node is content iff ``H'_i > τ``. An empty histogram gives τ = 0.

    >>> std_threshold(np.array([1.0, 3.0]), 0.8)
    0.8
    """
    if h.size == 0:
        return 0.0
    return float(alpha * np.std(h))
