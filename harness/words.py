"""Numbers as words, for prose ties: ``about a quarter<!--= {words.fraction(share)} -->``.

A tie's f-string sees this module as ``words`` (beside the names of the page's blocks): the
words serve the page's prose, not the FFN, so they live with the checker, not in ``ffn``.
"""

from __future__ import annotations

FRACTIONS = {"tenth": 1 / 10, "fifth": 1 / 5, "quarter": 1 / 4, "third": 1 / 3, "half": 1 / 2,
             "two-thirds": 2 / 3, "three-quarters": 3 / 4, "twice": 2.0}

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
            "ninth", "tenth", "eleventh", "twelfth")


def fraction(value: float, tolerance: float = 0.05) -> str:
    """The word for the simple fraction nearest ``value``, for prose like "about a quarter".

    Raises:
        ValueError: if no fraction is within ``tolerance`` (relative) of ``value``.
    """
    word, exact = min(FRACTIONS.items(), key=lambda item: abs(item[1] - value))
    if not abs(value - exact) <= tolerance * exact:
        raise ValueError(f"{value!r} is not within {tolerance:.0%} of a simple fraction")
    return word


def differing_decimal(a: float, b: float) -> int:
    """The first decimal place (1 = tenths) where ``a`` and ``b``, written to 12 places, differ.

    Raises:
        ValueError: if they agree to 12 places or differ before the decimal point.
    """
    (int_a, digits_a), (int_b, digits_b) = f"{a:.12f}".split("."), f"{b:.12f}".split(".")
    if int_a != int_b:
        raise ValueError(f"{a!r} and {b!r} differ before the decimal point")
    for place, (x, y) in enumerate(zip(digits_a, digits_b, strict=True), 1):
        if x != y:
            return place
    raise ValueError(f"{a!r} and {b!r} agree to 12 decimal places")


def ordinal(n: int) -> str:
    """``1`` -> ``"first"``, ..., ``12`` -> ``"twelfth"``: for ties like "the fourth decimal"."""
    if not isinstance(n, int) or not 1 <= n <= len(ORDINALS):
        raise ValueError(f"no ordinal word for {n!r}")
    return ORDINALS[n - 1]
