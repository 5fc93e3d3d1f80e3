"""Thresholds that split a histogram into main content and boilerplate.

* :func:`std_threshold`: ``τ = α · σ(H')`` (CEPR Sec. 4 and 5.2, spec §1), and
  :func:`std_content_mask`, the content nodes it selects (every node when σ = 0).
* :func:`otsu_threshold`: Otsu's between-class variance over a grid of candidate
  thresholds (CEDST Sec. 3.4, Eqs. 11–12, spec §4).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["OTSU_GRID", "otsu_threshold", "std_content_mask", "std_threshold"]


def std_threshold(h: np.ndarray, alpha: float) -> float:
    """``τ = α · σ(H')``, σ the population standard deviation (divide by N).

    A node is content iff ``H'_i > τ``. An empty histogram gives τ = 0.

    >>> std_threshold(np.array([1.0, 3.0]), 0.8)
    0.8
    """
    n = h.size
    if n == 0:
        return 0.0
    # np.std's own steps (pairwise sums, divide by N), without its Python overhead.
    d = h - np.add.reduce(h) / n
    np.multiply(d, d, out=d)
    return float(alpha * math.sqrt(np.add.reduce(d) / n))


def std_content_mask(h: np.ndarray, alpha: float) -> tuple[float, np.ndarray]:
    """The content nodes of CEPR's threshold: ``(τ, keep)`` with ``τ = α·σ(H')``
    (:func:`std_threshold`) and ``keep[i] = H'_i > τ`` (CEPR Sec. 4, spec §1).

    When σ(H') = 0 (every ``H'_i`` equal, e.g. all 0 on a page whose every tag path has
    one text node, where ETPR is 0), no node is below the mean and ``H'_i > τ = 0``
    would keep none, or all, depending only on the value: then every node, being at the
    mean, is kept and τ is 0 (see ``docs/methods.md``, "σ(H') = 0"). Values that differ
    only by rounding (a spread below 1e-12 of their magnitude) count as equal.

    :param h: float ``(N,)``, the (smoothed) histogram H'.
    :param alpha: α ≥ 0.
    :returns: ``(τ, keep)``, keep a bool ``(N,)`` array.

    >>> std_content_mask(np.array([0.0, 0.0]), 0.8)
    (0.0, array([ True,  True]))
    >>> std_content_mask(np.array([1.0, 3.0]), 0.8)
    (0.8, array([ True,  True]))
    """
    h = np.asarray(h, dtype=np.float64)
    if h.size == 0:
        return 0.0, np.zeros(0, dtype=bool)
    hi, lo = float(h.max()), float(h.min())
    if hi - lo <= 1e-12 * max(abs(hi), abs(lo)):
        return 0.0, np.ones(h.size, dtype=bool)
    tau = std_threshold(h, alpha)
    return tau, h > tau


#: CEDST's candidate thresholds t ∈ {0, 0.1, …, 1} (Sec. 3.4), exact one-decimal floats.
OTSU_GRID: np.ndarray = np.round(np.arange(11) / 10.0, 1)
OTSU_GRID.flags.writeable = False


def otsu_threshold(h: np.ndarray, candidates: np.ndarray | None = None) -> float:
    """Otsu's threshold: the candidate t that maximises the between-class variance
    (CEDST Sec. 3.4, Eqs. 11–12)::

        g(t) = w0·(u0 − μ)² + w1·(u1 − μ)²,   μ = w0·u0 + w1·u1,

    where class 0 holds the values ``≤ t`` and class 1 the values ``> t`` (a node is
    content iff ``H'_i > t``, as with :func:`std_threshold`), ``w0, w1`` are the classes'
    proportions of nodes and ``u0, u1`` their mean values. An empty class adds 0 to g.

    :param h: float ``(N,)``, the smoothed values (CEDST: fused beliefs in ``[0, 1]``).
    :param candidates: float ``(T,)`` thresholds to try, in increasing order; default
        :data:`OTSU_GRID` (``0, 0.1, …, 1``, the paper's grid).
    :returns: the best t. Ties (candidates that split the nodes identically, or g = 0
        everywhere, as for an empty or constant histogram) go to the smallest t.

    Values ``[0.1, 0.2, 0.8, 0.9]``: every t in ``0.2 … 0.7`` splits them into
    ``{0.1, 0.2}`` and ``{0.8, 0.9}``; μ = 0.5, g = ½·0.35² + ½·0.35² = 0.1225, the
    maximum; the smallest such t is 0.2.

    >>> otsu_threshold(np.array([0.1, 0.2, 0.8, 0.9]))
    0.2
    """
    grid = OTSU_GRID if candidates is None else np.asarray(candidates, dtype=np.float64)
    h = np.asarray(h, dtype=np.float64)
    if h.size == 0 or grid.size == 0:
        return float(grid[0]) if grid.size else 0.0
    n = h.size
    upper = h[None, :] > grid[:, None]  # (T, N): class 1 membership per candidate
    n1 = upper.sum(axis=1).astype(np.float64)
    n0 = n - n1
    s1 = (upper * h[None, :]).sum(axis=1)
    s0 = h.sum() - s1
    w0, w1 = n0 / n, n1 / n
    with np.errstate(invalid="ignore", divide="ignore"):
        u0 = np.where(n0 > 0, s0 / n0, 0.0)
        u1 = np.where(n1 > 0, s1 / n1, 0.0)
    mu = w0 * u0 + w1 * u1
    g = w0 * (u0 - mu) ** 2 + w1 * (u1 - mu) ** 2
    # Equal splits give equal g up to rounding; compare on a tolerance, take the first.
    best = (g >= g.max() - 1e-12).nonzero()[0][0]
    return float(grid[best])
