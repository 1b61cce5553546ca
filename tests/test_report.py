"""ffn.report: spotting printed values that are not roundings of the computed ones."""

from __future__ import annotations

import numpy as np
import pytest

from ffn.report import Discrepancy, discrepancies


def test_correct_roundings_are_not_discrepancies() -> None:
    computed = np.array([0.60194, -0.10535, 0.0005, 1.2345])
    published = [0.602, -0.105, 0.001, 1.234]  # 0.0005 and 1.2345 are ties: either rounding is fine
    assert discrepancies(published, computed) == []
    assert discrepancies([0.000, 1.235], computed[2:]) == []


def test_off_by_one_in_the_last_place_is_reported_with_its_index() -> None:
    computed = np.array([[0.60194, -0.10535], [0.3, 0.4]])
    published = [[0.603, -0.105], [0.3, 0.41]]
    assert discrepancies(published, computed) == [
        Discrepancy((0, 0), 0.603, 0.60194),
        Discrepancy((1, 1), 0.41, 0.4),
    ]
    assert discrepancies(published, computed, decimals=1) == []


def test_shape_mismatch_and_bad_decimals_are_named() -> None:
    with pytest.raises(ValueError, match=r"published has shape \(2,\) but computed has shape"):
        discrepancies([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="decimals must be a non-negative int, got -1"):
        discrepancies([1], [1], decimals=-1)


def test_units_widens_the_tolerance_to_forgive_a_last_digit_one_off() -> None:
    computed = np.array([0.6024, 0.4, 0.3, 0.60194])
    # 0.6 of a unit off (the rounding is 0.602), two units off, right, 1.06 units off
    published = [0.603, 0.402, 0.3, 0.603]
    assert discrepancies(published, computed, units=0.5) == discrepancies(published, computed)
    assert [d.where for d in discrepancies(published, computed)] == [(0,), (1,), (3,)]
    assert [d.where for d in discrepancies(published, computed, units=1)] == [(1,), (3,)]
    assert discrepancies(published, computed, units=2) == []
    with pytest.raises(ValueError, match="units must be a non-negative number, got -1"):
        discrepancies([1], [1], units=-1)
