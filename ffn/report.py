"""Compare numbers a tutorial printed with the ones `ffn` computes; lay them out as tables."""

from __future__ import annotations

from collections.abc import Sequence
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


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub-style Markdown table; cells are written with `str()`."""
    if any(len(r) != len(headers) for r in rows):
        raise ValueError(f"every row needs {len(headers)} cells")
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


_FRACTIONS = {"tenth": 1 / 10, "fifth": 1 / 5, "quarter": 1 / 4, "third": 1 / 3, "half": 1 / 2,
              "two-thirds": 2 / 3, "three-quarters": 3 / 4, "twice": 2.0}


def fraction_word(value: float, tolerance: float = 0.05) -> str:
    """The word for the simple fraction nearest `value`, for prose like "about a quarter".

    Raises:
        ValueError: if no fraction is within `tolerance` (relative) of `value`.
    """
    word, exact = min(_FRACTIONS.items(), key=lambda item: abs(item[1] - value))
    if not abs(value - exact) <= tolerance * exact:
        raise ValueError(f"{value!r} is not within {tolerance:.0%} of a simple fraction")
    return word


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth", "eleventh", "twelfth")


def differing_decimal(a: float, b: float) -> int:
    """The first decimal place (1 = tenths) where `a` and `b`, written to 12 places, differ.

    Raises:
        ValueError: if they agree to 12 places or differ before the decimal point.
    """
    digits_a, digits_b = f"{a:.12f}", f"{b:.12f}"
    if digits_a.split(".")[0] != digits_b.split(".")[0]:
        raise ValueError(f"{a!r} and {b!r} differ before the decimal point")
    point = digits_a.index(".")
    for place, (x, y) in enumerate(zip(digits_a[point + 1:], digits_b[point + 1:], strict=True), 1):
        if x != y:
            return place
    raise ValueError(f"{a!r} and {b!r} agree to 12 decimal places")


def ordinal(n: int) -> str:
    """``1`` -> ``"first"``, ..., ``12`` -> ``"twelfth"``: for ties like "the fourth decimal"."""
    if not isinstance(n, int) or not 1 <= n <= len(_ORDINALS):
        raise ValueError(f"no ordinal word for {n!r}")
    return _ORDINALS[n - 1]
