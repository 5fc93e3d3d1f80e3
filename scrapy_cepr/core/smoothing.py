"""Gaussian smoothing of a per-node histogram, weighted by tag-path edit distance
(CEPR Eqs. 3–6, "SETPR"; spec §1). CEDST reuses it (Zhang et al. 2018, Sec. 3.4).

The edit distances are computed in C by rapidfuzz, once per distinct pair of tag paths
that stand within the window of each other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein

__all__ = ["adjacent_path_weights", "encode_paths", "gaussian_kernel", "path_weight", "smooth"]


def gaussian_kernel(radius: int) -> np.ndarray:
    """The normalised Gaussian kernel of CEPR Eqs. 3–4: ``k_j = exp(-j²/(2r²))`` for
    ``j = -r … r``, divided by its sum.

    :param radius: ``r ≥ 0``; the window has ``2r + 1`` weights. ``r = 0`` gives ``[1.0]``.
    :returns: float64 ``(2r+1,)`` summing to 1.
    :raises ValueError: ``radius < 0``.

    >>> gaussian_kernel(1).round(5).tolist()
    [0.27407, 0.45186, 0.27407]
    """
    if radius < 0:
        raise ValueError(f"radius must be an int >= 0, got {radius!r}")
    if radius == 0:
        return np.ones(1)
    j = np.arange(-radius, radius + 1, dtype=np.float64)
    k = np.exp(-(j * j) / (2.0 * radius * radius))
    return k / k.sum()


def path_weight(distance: int | np.ndarray, lambda_: float) -> float | np.ndarray:
    """The smoothing weight of CEPR Eq. 6: 1 for the same path (distance 0), else
    ``1 / dist^λ``. ``dist`` is the token-level Levenshtein distance of two tag paths.

    >>> path_weight(2, 1.0), path_weight(2, 2.0), path_weight(0, 1.0)
    (0.5, 0.25, 1.0)
    """
    d = np.asarray(distance, dtype=np.float64)
    w = np.where(d > 0, np.power(np.maximum(d, 1.0), -float(lambda_)), 1.0)
    return float(w) if w.ndim == 0 else w


def encode_paths(path_tags: Sequence[Sequence[str]]) -> list[str]:
    """Each tag path as a string of one character per tag name, so that rapidfuzz's
    character-level Levenshtein distance is the token-level distance over tags (spec §1:
    inserting, deleting or substituting one tag costs 1). The page model builds these
    codes during its walk (``Page.path_codes``); this function is for other callers.

    >>> a, b = encode_paths([("html", "body", "div", "p"), ("html", "body", "ul", "li", "a")])
    >>> Levenshtein.distance(a, b)
    3
    """
    alphabet: dict[str, str] = {}
    return ["".join([alphabet.setdefault(t, chr(0x4E00 + len(alphabet))) for t in tags]) for tags in path_tags]


def adjacent_path_weights(path_ids: np.ndarray, path_codes: Sequence[str], radius: int, lambda_: float) -> np.ndarray:
    """Weights ``w(p_i, p_{i+j})`` for every node ``i`` and offset ``j = 1 … r``.

    :param path_ids: int ``(N,)``, tag path of each text node.
    :param path_codes: each distinct tag path (index = path id) as a string of one
        character per tag (``Page.path_codes`` or :func:`encode_paths`).
    :returns: float64 ``(r, N)``; row ``j-1``, column ``i`` holds the weight between
        nodes ``i`` and ``i+j`` (columns past ``N-j`` are 0). The weight is symmetric, so
        the same row serves the offset ``-j``.

    Each distinct unordered pair of different paths is measured once, in C (rapidfuzz).
    """
    n = path_ids.size
    out = np.zeros((radius, n))
    if n < 2 or radius == 0:
        return out
    distance = Levenshtein.distance
    cache: dict[tuple[int, int], int] = {}
    for j in range(1, min(radius, n - 1) + 1):
        a, b = path_ids[:-j], path_ids[j:]
        row = out[j - 1]
        row[: n - j] = 1.0  # the same path: weight 1
        diff = np.flatnonzero(a != b)
        if diff.size:
            dist = []
            for x, y in zip(a[diff].tolist(), b[diff].tolist()):
                key = (x, y) if x < y else (y, x)
                d = cache.get(key)
                if d is None:
                    d = cache[key] = distance(path_codes[x], path_codes[y])
                dist.append(d)
            row[diff] = path_weight(np.array(dist, dtype=np.float64), lambda_)
    return out


def smooth(h: np.ndarray, weights: np.ndarray | None, radius: int, *, edges: str = "keep") -> np.ndarray:
    """Edit-distance weighted Gaussian smoothing (CEPR Eq. 5)::

        H'_i = Σ_{j=-r..r} w(p_i, p_{i+j}) · k'_j · H_{i+j}

    with no renormalisation by ``Σ w·k'`` (spec §1).

    :param h: float ``(N,)`` histogram over text nodes in document order.
    :param weights: ``(r, N)`` from :func:`adjacent_path_weights`, or None for plain
        Gaussian smoothing (all weights 1, the λ = 0 case).
    :param radius: ``r ≥ 0``.
    :param edges: the boundary rule, an [open] point of the spec. ``"keep"`` (default,
        the authors' code) leaves the first and last ``r`` nodes unsmoothed; ``"pad"``
        smooths them too, treating nodes beyond the ends as 0.
    :returns: float64 ``(N,)``.
    :raises ValueError: unknown *edges*.

    >>> smooth(np.array([0.0, 10.0, 0.0, 10.0]), None, 1).round(3).tolist()
    [0.0, 4.519, 5.481, 10.0]
    """
    if edges not in ("keep", "pad"):
        raise ValueError(f"edges must be 'keep' or 'pad', got {edges!r}")
    h = np.asarray(h, dtype=np.float64)
    n = h.size
    if radius == 0 or n == 0:
        return h.copy()
    k = gaussian_kernel(radius)
    out = k[radius] * h
    for j in range(1, min(radius, n - 1) + 1):
        w = np.ones(n - j) if weights is None else weights[j - 1, : n - j]
        out[:-j] += k[radius + j] * w * h[j:]  # neighbour i+j
        out[j:] += k[radius - j] * w * h[:-j]  # neighbour i-j
    if edges == "keep":
        r = min(radius, n)
        out[:r] = h[:r]
        out[n - r :] = h[n - r :]
    return out
