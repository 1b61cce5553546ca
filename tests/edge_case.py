"""A probe call and its outcome: right, clear error, unclear error, or silent wrong.

Shared by ``tests/test_edge_calls.py`` (the runner) and the modules of cases it imports.
"""

from __future__ import annotations

import math
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import ffn

FFN_DIR = Path(ffn.__file__).resolve().parent
F32, F64 = np.float32, np.float64
REFUSALS = (TypeError, ValueError)


@dataclass(frozen=True)
class Case:
    """A call; the argument a refusal must name; the right answer's test, if there is one."""

    id: str
    call: Callable[[], object]
    arg: str  # a refusal's message must name it
    right: Callable[[Any], bool] | None = None  # None: the call must be refused
    words: str = ""  # a refusal's message must also say this
    refusable: bool | None = None  # may it be refused? Default: when there is no right answer
    errors: tuple[type[Exception], ...] = REFUSALS  # what a clear refusal may raise
    known: str = ""  # a problem found and left unfixed: why (pytest marks it xfail, strict)


def outcome(case: Case) -> str:
    """``"right"``, ``"clear error"``, ``"unclear error"`` or ``"silent wrong"``."""
    refusable = case.right is None if case.refusable is None else case.refusable
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a warning beside a wrong answer does not make it right
        try:  # the right answer's test runs here too: it may use the result (ModelDims' totals)
            result = case.call()
            right = case.right is not None and case.right(result)
        except Exception as error:  # any other type than case.errors is an unclear refusal
            origin = Path(traceback.extract_tb(error.__traceback__)[-1].filename).resolve()
            clear = (refusable and isinstance(error, case.errors) and case.arg in str(error)
                     and case.words in str(error) and FFN_DIR in origin.parents)
            return "clear error" if clear else "unclear error"
    return "right" if right else "silent wrong"


# ---------------------------------------------------------------- checks of a right answer


def equals(expected: object) -> Callable[[Any], bool]:
    return lambda result: type(result) is type(expected) and bool(result == expected)


def array_equals(expected: Sequence[float] | float, dtype: type = F64) -> Callable[[Any], bool]:
    return lambda y: (isinstance(y, np.ndarray) and y.dtype == dtype
                      and np.array_equal(y, np.asarray(expected, dtype)))


def tolerances(dtype: type) -> tuple[float, float]:
    """(relative, absolute) tolerance: a few roundings of ``dtype``; float32 also allows the
    documented error of ``ffn.fast``'s fitted erfc (below 2e-7 absolute)."""
    return (1e-5, 1e-6) if dtype == F32 else (1e-12, 1e-16)


def close(expected: np.ndarray, dtype: type, scaled: bool = False) -> Callable[[Any], bool]:
    """An ndarray of ``expected``'s shape and of ``dtype``: NaN and inf where expected has them,
    else within tolerance of each entry (``scaled``: of the largest entry, for sums of products).
    """
    expected = np.asarray(expected, np.float64)

    def check(y: Any) -> bool:
        if not isinstance(y, np.ndarray) or y.shape != expected.shape or y.dtype != dtype:
            return False
        y = y.astype(np.float64)
        finite = np.isfinite(expected)
        if not np.array_equal(y[~finite], expected[~finite], equal_nan=True):
            return False
        rel, abs_ = tolerances(dtype)
        size = np.abs(expected[finite])
        scale = size.max(initial=1.0) if scaled else size
        return bool(np.all(np.abs(y[finite] - expected[finite]) <= rel * scale + abs_))

    return check


def all_of(*checks: Callable[[Any], bool]) -> Callable[[Sequence[Any]], bool]:
    """A result that is a sequence, each item passing its check."""
    return lambda items: len(items) == len(checks) and all(
        c(item) for c, item in zip(checks, items, strict=True))


def is_close_float(expected: float, rel: float = 1e-12) -> Callable[[Any], bool]:
    return lambda y: type(y) is float and math.isclose(y, expected, rel_tol=rel, abs_tol=0.0)
