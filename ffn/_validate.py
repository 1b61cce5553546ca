"""Shared argument checks, so every public entry point fails the same way.

All checks run at the boundary (before any arithmetic), so a bad argument
gives a short message that names it instead of a numpy traceback from deep
inside a matmul.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

FloatArray = NDArray[np.floating[Any]]
"""A float32 or float64 array: the only dtypes the package computes in."""

FLOAT_DTYPES: tuple[np.dtype[Any], ...] = (np.dtype(np.float32), np.dtype(np.float64))

# dtype kinds that are promoted to float64: bool, signed and unsigned integers.
_PROMOTED_KINDS = frozenset("biu")


def describe(value: object) -> str:
    """A value's type and value for messages: ``"float 2.5"``, ``"str 'yes'"``."""
    shown = value.item() if isinstance(value, np.generic) else value  # np.True_ -> True
    return f"{type(value).__name__} {shown!r}"


def as_float_array(value: object, name: str) -> FloatArray:
    """Convert ``value`` to a float32 or float64 array without copying if possible.

    float32 and float64 arrays are returned as they are (no copy, so read-only
    arrays stay untouched). bool, integer and float16 data is promoted to
    float64. Everything else is rejected.

    Raises:
        TypeError: for None, strings, bytes, objects, complex numbers,
            datetimes and extended precision floats (float96/float128).
        ValueError: if ``value`` cannot be turned into an array at all
            (e.g. a ragged nested list).
    """
    if value is None:
        raise TypeError(f"{name} must be a real numeric array, got None")
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{name} could not be converted to an array: {error}"
        ) from None
    dtype = array.dtype
    if dtype in FLOAT_DTYPES:
        return array
    if dtype.kind in _PROMOTED_KINDS or dtype == np.float16:
        return array.astype(np.float64)
    if dtype.kind == "f":
        # float96/float128: silently rounding to float64 would hide a precision loss.
        raise TypeError(
            f"{name} has dtype {dtype}; only float32 and float64 are supported"
        )
    raise TypeError(f"{name} must be a real numeric array, got dtype {dtype}")


def check_float_dtype(
    dtype: DTypeLike, name: str = "dtype"
) -> np.dtype[np.floating[Any]]:
    """Return ``np.dtype(dtype)`` if it is float32 or float64, else raise TypeError."""
    try:
        resolved: np.dtype[Any] = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name} must be float32 or float64, got {dtype!r}") from None
    if resolved not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float32 or float64, got {resolved}")
    return resolved


def check_positive_int(value: object, name: str) -> int:
    """Return ``value`` as a Python int if it is a positive integer.

    ``bool`` is rejected even though it subclasses ``int``: ``True`` as a
    layer width is almost certainly a mistake.

    Raises:
        TypeError: if ``value`` is not an integer (or is a bool).
        ValueError: if ``value`` is zero or negative.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {describe(value)}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return int(value)


def check_bool(value: object, name: str) -> bool:
    """Return ``value`` as a bool, rejecting anything that is not a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {describe(value)}")
    return bool(value)


def check_choice(value: object, name: str, valid: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of the strings in ``valid``.

    Raises:
        TypeError: if ``value`` is not a str.
        ValueError: listing the valid names if ``value`` is unknown.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {describe(value)}")
    if value not in valid:
        names = ", ".join(repr(v) for v in valid)
        raise ValueError(f"unknown {name} {value!r}; valid: {names}")
    return value


def check_input(
    x: object, dtype: np.dtype[Any], width: int, width_name: str
) -> FloatArray:
    """Convert a layer input to ``dtype`` and check its last dimension.

    Args:
        x: array-like of shape ``(..., width)`` with at least one dimension.
        dtype: the layer's dtype; ``x`` is cast to it (a copy only if needed).
        width: the expected size of the last dimension.
        width_name: how the message names ``width``, e.g. ``"d_model"``.

    Raises:
        TypeError: if ``x`` is not real numeric data.
        ValueError: if ``x`` is 0-d or its last dimension is not ``width``.
    """
    array = as_float_array(x, "x")
    if array.ndim == 0:
        raise ValueError(
            f"x must have at least 1 dimension (..., {width_name}), got a scalar (shape ())"
        )
    if array.shape[-1] != width:
        raise ValueError(
            f"x has last dimension {array.shape[-1]} but {width_name} is {width} "
            f"(x.shape={array.shape})"
        )
    # Casting to the layer dtype (not upcasting the layer) keeps the output
    # dtype equal to the weights' dtype, whatever the caller passes in.
    return array.astype(dtype, copy=False)


def shared_dtype(arrays: dict[str, FloatArray | None]) -> np.dtype[np.floating[Any]]:
    """Return the one dtype shared by the given weights, or raise TypeError.

    ``None`` entries (absent biases) are skipped. Mixing float32 and float64
    is an error rather than a silent cast: it is almost always a mistake, and
    picking either dtype would surprise someone.
    """
    present = {name: a for name, a in arrays.items() if a is not None}
    dtypes = {a.dtype for a in present.values()}
    if len(dtypes) != 1:
        listing = ", ".join(f"{name} {a.dtype}" for name, a in present.items())
        raise TypeError(f"weights must share one float dtype, got {listing}")
    return check_float_dtype(dtypes.pop())


def check_matrix(W: FloatArray, name: str, axes: str) -> None:
    """Check that ``W`` is 2-D with no empty axis; ``axes`` names them for the message."""
    if W.ndim != 2:
        raise ValueError(f"{name} must be 2-D with shape {axes}, got shape {W.shape}")
    if 0 in W.shape:
        raise ValueError(
            f"{name} has shape {W.shape}: both dimensions of {axes} must be positive"
        )


def check_bias(b: FloatArray | None, name: str, size: int, size_name: str) -> None:
    """Check that a bias is absent or 1-D with ``size`` entries."""
    if b is not None and b.shape != (size,):
        raise ValueError(
            f"{name} must be 1-D with shape ({size_name},) = ({size},), got shape {b.shape}"
        )


def check_dy(
    dy: object, out_shape: tuple[int, ...] | None, dtype: np.dtype[Any], caller: str
) -> FloatArray:
    """``dy`` for a ``backward``: after a forward, with its output's shape, in the layer's dtype.

    ``out_shape`` is ``None`` when no forward pass has run; ``caller`` names the call
    that would run one (``"block"``, ``"norm"``, ...), for the message.

    Raises:
        RuntimeError: if no forward pass has run, or ``dy`` has another shape.
        TypeError: if ``dy`` is not real numeric data.
    """
    if out_shape is None:
        raise RuntimeError(f"backward() called before a forward pass: call {caller}(x) first")
    dy_arr = as_float_array(dy, "dy")
    if dy_arr.shape != out_shape:
        raise RuntimeError(
            f"dy has shape {dy_arr.shape} but the last forward output has shape {out_shape}"
        )
    return dy_arr.astype(dtype, copy=False)
