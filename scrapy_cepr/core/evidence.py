"""Dempster–Shafer evidence: basic mass assignment (BMA) and Dempster's rule of
combination, vectorised over many mass functions at once.

Source: Zhang, Zhang, Chen, Tan, "Automatic Web News Extraction Based on DS Theory
Considering Content Topics", ICCS 2018 (CEDST), Sec. 3.1, Eqs. 1–5; the rule itself is
Dempster's (Sentz & Ferson 2002, ref. [16] of the paper).

Representation (generic, any small frame of discernment Θ with n hypotheses):

* a *focal set* ``A ⊆ Θ`` is the bitmask ``Σ 2^i`` over the hypotheses ``i`` it holds, so
  index 0 is ∅ and index ``2^n − 1`` is Θ;
* a *mass function* is a float array ``(..., 2^n)`` whose last axis is indexed by focal
  set and sums to 1 with ``m(∅) = 0``; the leading axes batch many independent mass
  functions (for CEDST: one per text node).

CEDST's frame is ``Θ = {news, ~news}`` (n = 2): index 0 = ∅, 1 = {news}, 2 = {~news},
3 = Θ (:data:`NEWS`, :data:`NOT_NEWS`, :data:`THETA`).
"""

from __future__ import annotations

import functools

import numpy as np

from .errors import TotalConflictError as TotalConflictError

__all__ = [
    "NEWS",
    "NOT_NEWS",
    "THETA",
    "bma",
    "conjunctive",
    "dempster",
]

#: Focal-set indices on CEDST's frame Θ = {news, ~news}.
NEWS, NOT_NEWS, THETA = 1, 2, 3


def bma(h: np.ndarray, weight: float, *, positive: bool) -> np.ndarray:
    """Basic mass assignment of a feature on Θ = {news, ~news} (CEDST Eqs. 1–2).

    A *positive* feature gives ``m({news}) = α·h``, ``m({~news}) = 0``,
    ``m(Θ) = 1 − α·h`` (Eq. 1); a *negative* one gives ``m({news}) = 0``,
    ``m({~news}) = β·h``, ``m(Θ) = 1 − β·h`` (Eq. 2). ``m(∅) = 0`` always.

    :param h: feature values normalised to ``[0, 1]``, float array of any shape ``S``.
    :param weight: α (positive) or β (negative) in ``[0, 1]``.
    :returns: float64 ``S + (4,)``, indexed by focal set (∅, {news}, {~news}, Θ).
    :raises ValueError: *weight* outside ``[0, 1]`` or any *h* outside ``[0, 1]``.

    >>> bma(np.array([0.5, 1.0]), 0.9, positive=True).tolist()
    [[0.0, 0.45, 0.0, 0.55], [0.0, 0.9, 0.0, 0.09999999999999998]]
    >>> bma(np.array(0.5), 0.8, positive=False).tolist()
    [0.0, 0.0, 0.4, 0.6]
    """
    h = np.asarray(h, dtype=np.float64)
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be a float in [0, 1], got {weight!r}")
    if not ((h >= 0.0) & (h <= 1.0)).all():  # NaN fails both comparisons
        raise ValueError("feature values h must lie in [0, 1]")
    m = np.zeros(h.shape + (4,))
    belief = weight * h
    m[..., NEWS if positive else NOT_NEWS] = belief
    m[..., THETA] = 1.0 - belief
    return m


@functools.cache
def _intersection_table(size: int) -> np.ndarray:
    """One-hot ``T[a, b, c] = 1`` iff focal sets ``a ∩ b = c`` (bitwise and), float64
    ``(size, size, size)``, read-only (cached per frame size)."""
    idx = np.arange(size)
    table = np.zeros((size, size, size))
    a, b = np.meshgrid(idx, idx, indexing="ij")
    table[a, b, a & b] = 1.0
    table.flags.writeable = False
    return table


def _check(masses: np.ndarray) -> int:
    size = masses.shape[-1]
    if size < 2 or size & (size - 1):
        raise ValueError(f"the last axis of a mass function must have 2^n entries (n >= 1), got {size}")
    return size


def conjunctive(*masses: np.ndarray) -> np.ndarray:
    """The unnormalised conjunctive combination ``m∩(C) = Σ_{A_1∩…∩A_k = C} Π_j m_j(A_j)``
    of k ≥ 1 mass functions (the sums of CEDST Eqs. 3 and 5 before division by K).

    :param masses: arrays ``(..., 2^n)`` on the same frame; leading axes broadcast.
    :returns: float64 ``(..., 2^n)``; entry 0 holds the conflict ``m∩(∅) = 1 − K``.
    :raises ValueError: no mass function, or a last axis that is not a power of 2 or
        differs between them.
    """
    if not masses:
        raise ValueError("conjunctive() needs at least one mass function")
    size = _check(np.asarray(masses[0]))
    out = np.asarray(masses[0], dtype=np.float64)
    table = _intersection_table(size)
    for m in masses[1:]:
        m = np.asarray(m, dtype=np.float64)
        if m.shape[-1] != size:
            raise ValueError(f"mass functions on different frames: {size} and {m.shape[-1]} focal sets")
        # joint[..., a, b] = m1(a)·m2(b), summed into the focal set a ∩ b by one matmul.
        joint = out[..., :, None] * m[..., None, :]
        out = joint.reshape(joint.shape[:-2] + (size * size,)) @ table.reshape(size * size, size)
    return out


def dempster(*masses: np.ndarray) -> np.ndarray:
    """Dempster's rule ``m_1 ⊕ … ⊕ m_k`` (CEDST Eqs. 3–5)::

        (m_1 ⊕ … ⊕ m_k)(A) = (1/K) Σ_{A_1∩…∩A_k = A} Π_j m_j(A_j)   for A ≠ ∅,
        (m_1 ⊕ … ⊕ m_k)(∅) = 0,
        K = 1 − Σ_{A_1∩…∩A_k = ∅} Π_j m_j(A_j).

    Combining all k sources at once equals combining them pairwise in any order (the rule
    is associative and commutative); normalisation happens once, at the end.

    :param masses: k ≥ 1 arrays ``(..., 2^n)`` on the same frame (see the module doc);
        leading axes broadcast, so one call fuses the evidence of every text node.
    :returns: float64 ``(..., 2^n)`` with ``m(∅) = 0`` and each mass function summing to 1.
    :raises TotalConflictError: K = 0 for some mass function (total conflict); the message
        gives the first batch index concerned.
    :raises ValueError: as :func:`conjunctive`.

    Two sources on Θ = {news, ~news}: ``m1 = (0, .6, 0, .4)``, ``m2 = (0, 0, .5, .5)``;
    conflict ``.6·.5 = .3``, K = .7, ``m({news}) = .6·.5/.7 = 3/7``:

    >>> dempster(np.array([0, .6, 0, .4]), np.array([0, 0, .5, .5])).round(4).tolist()
    [0.0, 0.4286, 0.2857, 0.2857]
    """
    joint = conjunctive(*masses)
    k = 1.0 - joint[..., 0]
    # A sum of products of masses can leave K at a rounding residue instead of 0.
    bad = k <= 1e-12
    if np.any(bad):
        where = np.argwhere(np.atleast_1d(bad))[0].tolist() if np.ndim(bad) else []
        at = f" at index {tuple(where)}" if where else ""
        raise TotalConflictError(f"total conflict (K = 0){at}: Dempster's rule is undefined")
    out = joint / k[..., None]
    out[..., 0] = 0.0
    return out
