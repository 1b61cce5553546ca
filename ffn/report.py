"""Compare numbers a tutorial printed with the ones `ffn` computes."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike


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
    """
    p = np.asarray(published, dtype=np.float64)
    c = np.asarray(computed, dtype=np.float64)
    if p.shape != c.shape:
        raise ValueError(f"published has shape {p.shape} but computed has shape {c.shape}")
    if not isinstance(decimals, int) or decimals < 0:
        raise ValueError(f"decimals must be a non-negative int, got {decimals!r}")
    if not isinstance(units, (int, float)) or not units >= 0:
        raise ValueError(f"units must be a non-negative number, got {units!r}")
    tolerance = units * 10.0**-decimals
    # 1e-9 absorbs the binary representation error of values like 0.0005. A NaN or inf on
    # either side is never a rounding of anything: always a discrepancy.
    with np.errstate(invalid="ignore"):  # inf - inf
        wrong = ~(np.abs(p - c) <= tolerance + 1e-9) | ~np.isfinite(p) | ~np.isfinite(c)
    return [Discrepancy(tuple(int(i) for i in idx), float(p[idx]), float(c[idx]))
            for idx in zip(*np.nonzero(wrong), strict=True)]

