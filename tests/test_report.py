"""ffn.report: spotting printed values that are not roundings of the computed ones."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ffn.report import Discrepancy, discrepancies
from tests.test_errors import raises


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
    with raises(ValueError, "decimals must be non-negative, got -1"):
        discrepancies([1], [1], decimals=-1)


def test_units_widens_the_tolerance_to_forgive_a_last_digit_one_off() -> None:
    computed = np.array([0.6024, 0.4, 0.3, 0.60194])
    # 0.6 of a unit off (the rounding is 0.602), two units off, right, 1.06 units off
    published = [0.603, 0.402, 0.3, 0.603]
    assert discrepancies(published, computed, units=0.5) == discrepancies(published, computed)
    assert [d.where for d in discrepancies(published, computed)] == [(0,), (1,), (3,)]
    assert [d.where for d in discrepancies(published, computed, units=1)] == [(1,), (3,)]
    assert discrepancies(published, computed, units=2) == []
    with raises(ValueError, "units must be in [0, inf), got -1.0"):
        discrepancies([1], [1], units=-1)


# Issue 26, item 5: complex input gave [] (only a ComplexWarning), a masked array's hidden
# entries were compared, 0-d input raised numpy's "Calling nonzero on 0d arrays", bools were
# taken as decimals and units, and numpy's int64 / float32 refused with a contradicting message.
MASKED = np.ma.masked_array([0.5, 9.0], mask=[False, True])
FILL = "{0} is a masked array; fill it first (e.g. {0}.filled(0.0))"


@pytest.mark.parametrize(
    ("published", "computed", "message"),
    [
        (np.array([1 + 1j]), [1.0], "published must be a real numeric array, got dtype complex128"),
        ([1.0], np.array([1 + 1j]), "computed must be a real numeric array, got dtype complex128"),
        (MASKED, [0.5, 0.5], FILL.format("published")),
        ([0.5, 0.5], MASKED, FILL.format("computed")),
        (None, [0.5], "published must be a real numeric array, got None"),
        (["0.5"], [0.5], "published must be a real numeric array, got dtype <U3"),
        ([0.5], np.array([None]), "computed must be a real numeric array, got dtype object"),
    ],
)
def test_complex_masked_and_non_numeric_arrays_are_refused(
    published: object, computed: object, message: str
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning is not a refusal
        with raises(TypeError, message):
            discrepancies(published, computed)  # type: ignore[arg-type]


def test_zero_d_inputs_are_compared_like_any_shape() -> None:
    assert discrepancies(0.5, 0.5) == []
    assert discrepancies(np.float64(0.5), 0.6) == [Discrepancy((), 0.5, 0.6)]


@pytest.mark.parametrize(
    ("kwargs", "exception", "message"),
    [
        ({"decimals": True}, TypeError, "decimals must be a non-negative int, got bool True"),
        ({"decimals": 2.0}, TypeError, "decimals must be a non-negative int, got float 2.0"),
        ({"units": True}, TypeError, "units must be a real number, got bool True"),
        ({"units": "1"}, TypeError, "units must be a real number, got str '1'"),
        ({"units": float("nan")}, ValueError, "units must be in [0, inf), got nan"),
    ],
)
def test_bools_and_non_numbers_are_refused_as_decimals_and_units(
    kwargs: dict[str, object], exception: type[Exception], message: str
) -> None:
    with raises(exception, message):
        discrepancies([1.0], [1.0], **kwargs)  # type: ignore[arg-type]


def test_numpy_scalars_serve_as_decimals_and_units() -> None:
    assert discrepancies([0.6], [0.64], decimals=np.int64(1)) == []  # type: ignore[arg-type]
    assert discrepancies([0.6], [0.66], decimals=np.int64(1)) == [Discrepancy((0,), 0.6, 0.66)]
    assert discrepancies([0.6], [0.68], 1, units=np.float32(1.0)) == []  # type: ignore[arg-type]
    assert discrepancies([1.0], [1.5], decimals=10**400) == [Discrepancy((0,), 1.0, 1.5)]
