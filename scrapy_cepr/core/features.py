"""CEPR features per tag path: TPR (Def. 3) and ETPR (Def. 4, Eq. 2).

Wu, Li, Hu, Wu: "Web News Extraction via Path Ratios", CIKM 2013; restored formulas in
spec §1. All functions are pure and work on numpy arrays over the N text nodes of a page;
results are per *path* (shape ``(P,)``) and are spread back to nodes by indexing with
``path_ids``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["etpr", "path_stats", "tpr"]


def path_stats(path_ids: np.ndarray, values: np.ndarray, n_paths: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-path count, sum and population standard deviation of a per-node value.

    :param path_ids: int ``(N,)``, the tag path of each text node.
    :param values: ``(N,)`` numbers (characters or punctuation marks per node).
    :param n_paths: ``P``, the number of distinct paths (``path_ids < P``).
    :returns: ``(pathNum, total, std)``, each float64 ``(P,)``. A path with no node has
        count 0, total 0 and std 0. The std divides by N (population), spec §1.

    >>> n, tot, sd = path_stats(np.array([0, 1, 1]), np.array([40, 300, 345]), 2)
    >>> n.tolist(), tot.tolist(), sd.tolist()
    ([1.0, 2.0], [40.0, 645.0], [0.0, 22.5])
    """
    values = np.asarray(values, dtype=np.float64)
    count = np.bincount(path_ids, minlength=n_paths).astype(np.float64)
    total = np.bincount(path_ids, weights=values, minlength=n_paths)
    squares = np.bincount(path_ids, weights=values * values, minlength=n_paths)
    safe = np.maximum(count, 1.0)
    mean = total / safe
    var = np.maximum(squares / safe - mean * mean, 0.0)
    return count, total, np.sqrt(var)


def tpr(path_ids: np.ndarray, char_counts: np.ndarray, n_paths: int) -> np.ndarray:
    """Text to tag Path Ratio per path: ``TPR(p) = txtNum(p) / pathNum(p)`` (CEPR Def. 3).

    :returns: float64 ``(P,)``, characters per text node on each path (0 for an unused
        path).

    Example 2 of the paper: an ``h1`` path with 40 characters on one node gives 40, a
    ``div.div.div.p`` path with 645 characters over 2 nodes gives 322.5 and a ``p.a`` path
    with 7 characters gives 7.

    >>> tpr(np.array([0, 1, 1, 2]), np.array([40, 300, 345, 7]), 3).tolist()
    [40.0, 322.5, 7.0]
    """
    count, total, _ = path_stats(path_ids, char_counts, n_paths)
    return total / np.maximum(count, 1.0)


def etpr(path_ids: np.ndarray, char_counts: np.ndarray, punct_counts: np.ndarray, n_paths: int) -> np.ndarray:
    """Extended TPR per path (CEPR Def. 4, Eq. 2; spec §1, the authors' plain product)::

        ETPR(p) = TPR(p) · (puncNum(p) / pathNum(p)) · σ_cs(p) · σ_ps(p)

    with ``σ_cs`` and ``σ_ps`` the population standard deviations of the per-node
    character and punctuation counts on ``p``. No normalisation and no +1 term, so a path
    with a single node (a headline's ``h1``) has ETPR 0, as the paper says.

    :returns: float64 ``(P,)``.

    >>> etpr(np.array([0, 1, 1]), np.array([40, 10, 30]), np.array([1, 1, 3]), 2).tolist()
    [0.0, 400.0]
    """
    count, total_chars, sd_chars = path_stats(path_ids, char_counts, n_paths)
    _, total_punct, sd_punct = path_stats(path_ids, punct_counts, n_paths)
    safe = np.maximum(count, 1.0)
    return (total_chars / safe) * (total_punct / safe) * sd_chars * sd_punct
