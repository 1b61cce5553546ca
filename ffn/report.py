"""Compare numbers a tutorial printed with the ones `ffn` computes."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ffn import _validate as check


class Discrepancy(NamedTuple):
    """One printed value that is not a rounding of the computed value."""

    where: tuple[int, ...]  # index of the entry in the array
    published: float
    computed: float


def discrepancies(
    published: ArrayLike, computed: ArrayLike, decimals: int = 3, units: float = 0.5
) -> list[Discrepancy]:
    """Entries where `published`, printed to `decimals` places, cannot be a rounding of `computed`.

    Args:
        published: the printed values, any shape.
        computed: the values computed here, same shape as `published`.
        decimals: how many decimal places the publication printed.
        units: the tolerance in units of the last printed place: 0.5 accepts exactly the
            correct roundings (both at a tie); 1 also forgives a last digit one off.

    Returns:
        One `Discrepancy` per wrong entry, in row-major order (empty when all agree).

    Raises:
        TypeError: for complex, masked or non-numeric arrays, or a non-int ``decimals``.
        ValueError: for different shapes, a negative ``decimals`` or a bad ``units``.
    """
    p = check.float_array(published, "published").astype(np.float64)
    c = check.float_array(computed, "computed").astype(np.float64)
    if p.shape != c.shape:
        raise ValueError(f"published has shape {p.shape} but computed has shape {c.shape}")
    decimals = check.positive_int(decimals, "decimals", zero_ok=True, kind="a non-negative int")
    units = check.real(units, "units", 0.0, math.inf, high_open=True)
    tolerance = units * 10.0 ** -min(decimals, 400)  # 1e-400 is 0 already; 10.0 ** -10**400 raises
    # 1e-9 absorbs the binary representation error of values like 0.0005. A NaN or inf on
    # either side is never a rounding of anything: always a discrepancy.
    with np.errstate(invalid="ignore"):  # inf - inf
        wrong = ~(np.abs(p - c) <= tolerance + 1e-9) | ~np.isfinite(p) | ~np.isfinite(c)
    return [Discrepancy(tuple(int(i) for i in idx), float(p[tuple(idx)]), float(c[tuple(idx)]))
            for idx in np.argwhere(wrong)]  # argwhere, unlike nonzero, takes 0-d arrays

