"""Validation of method parameters: every bad value raises :class:`ValueError` naming the
parameter, the value and the allowed range."""

from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = ["check_choice", "check_int", "check_real"]


def check_real(name: str, value: object, low: float = 0.0, high: float = math.inf) -> float:
    """*value* as a finite float in ``[low, high]``.

    :raises ValueError: not a real number (bools are refused), NaN, or out of range.

    >>> check_real("alpha", 0.8)
    0.8
    >>> check_real("alpha", -1)
    Traceback (most recent call last):
    ...
    ValueError: alpha must be a float >= 0, got -1
    """
    if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(value):
        raise ValueError(f"{name} must be a float {_range(low, high)}, got {value!r}")
    number = float(value)
    if not low <= number <= high or math.isinf(number):
        raise ValueError(f"{name} must be a float {_range(low, high)}, got {value!r}")
    return number


def check_int(name: str, value: object, low: int = 0, high: float = math.inf) -> int:
    """*value* as an int in ``[low, high]``.

    :raises ValueError: not an integer (bools and floats are refused) or out of range.

    >>> check_int("radius", 2)
    2
    >>> check_int("radius", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: radius must be an int >= 0, got 1.5
    """
    if isinstance(value, bool) or not isinstance(value, Integral) or not low <= int(value) <= high:
        raise ValueError(f"{name} must be an int {_range(low, high)}, got {value!r}")
    return int(value)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """*value* if it is one of *choices*.

    :raises ValueError: naming the allowed values.
    """
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _range(low: float, high: float) -> str:
    if math.isinf(high):
        return f">= {low:g}"
    return f"in [{low:g}, {high:g}]"
