"""Argument checks, run before any arithmetic: a bad argument gets a message that names it."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

FloatArray = NDArray[np.floating[Any]]
"""A float32 or float64 array: the only dtypes the package computes in."""

FLOAT_DTYPES: tuple[np.dtype[Any], ...] = (np.dtype(np.float32), np.dtype(np.float64))


def describe(value: object) -> str:
    """A value's type and value for messages: ``"float 2.5"``, ``"str 'yes'"``."""
    shown = value.item() if isinstance(value, np.generic) else value  # np.True_ -> True
    return f"{type(value).__name__} {shown!r}"


def float_array(value: object, name: str) -> FloatArray:
    """``value`` as a native float32/float64 array (bool, int, float16 become float64)."""
    if value is None:
        raise TypeError(f"{name} must be a real numeric array, got None")
    if isinstance(value, np.ma.MaskedArray):  # np.asarray would drop the mask silently
        raise TypeError(f"{name} is a masked array; fill it first (e.g. {name}.filled(0.0))")
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} could not be converted to an array: {error}") from None
    if array.dtype in FLOAT_DTYPES:  # the common case, native float32/float64: nothing to do
        return array
    made_of_numbers = array.dtype == object and not isinstance(value, np.ndarray) and all(
        isinstance(v, (int, float)) for v in array.flat)
    if made_of_numbers:  # Python ints beyond int64, which numpy keeps as objects
        try:  # floats, as other ints
            return array.astype(np.float64)
        except OverflowError:
            raise ValueError(f"{name} holds an integer too large for a float (float64 reaches "
                             "about 1.8e308)") from None
    native = array.dtype.newbyteorder("=")  # '>f8' from np.fromfile or HDF5 is still float64
    if native in FLOAT_DTYPES:
        return array.astype(native, copy=False)
    if array.dtype.kind in "biu" or native == np.float16:
        return array.astype(np.float64)
    if array.dtype.kind == "f":  # float96/float128: rounding to float64 would hide a loss
        raise TypeError(f"{name} has dtype {array.dtype}; only float32 and float64 are supported")
    raise TypeError(f"{name} must be a real numeric array, got dtype {array.dtype}")


def float_dtype(dtype: DTypeLike, name: str = "dtype") -> np.dtype[np.floating[Any]]:
    """``np.dtype(dtype)`` if it is float32 or float64, else TypeError."""
    try:
        resolved: np.dtype[Any] = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name} must be float32 or float64, got {dtype!r}") from None
    if resolved.newbyteorder("=") not in FLOAT_DTYPES:
        raise TypeError(f"{name} must be float32 or float64, got {resolved}")
    return resolved.newbyteorder("=")


def positive_int(value: object, name: str, zero_ok: bool = False, kind: str = "an int") -> int:
    """``value`` as an int > 0 (>= 0 with ``zero_ok``); a bool is refused (``True`` as a width)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be {kind}, got {describe(value)}")
    if value < (0 if zero_ok else 1):
        raise ValueError(f"{name} must be {'non-negative' if zero_ok else 'positive'}, got {value}")
    return int(value)


def top_k(k: object, n_experts: int) -> int:
    """``k`` if it is an int in ``[1, n_experts]`` (the experts a token uses)."""
    k = positive_int(k, "top_k")
    if k > n_experts:
        raise ValueError(f"top_k must be at most n_experts = {n_experts}, got {k}")
    return k


def widths(d_model: object, d_ff: object) -> tuple[int, int]:
    """``d_model`` and ``d_ff`` as positive ints whose ``(d_model, d_ff)`` matrix numpy can hold."""
    d_model, d_ff = positive_int(d_model, "d_model"), positive_int(d_ff, "d_ff")
    if d_model * d_ff > np.iinfo(np.intp).max // 8:  # numpy's limit, in bytes of float64
        raise ValueError(f"d_model * d_ff = {d_model} * {d_ff} is too large for an array")
    return d_model, d_ff


def seed(value: object, name: str = "seed") -> int | None:
    """A seed for ``np.random.default_rng``: a non-negative int (not a bool), or None."""
    return None if value is None else positive_int(value, name, zero_ok=True, kind="an int or None")


def real(value: object, name: str, low: float, high: float, high_open: bool,
         low_open: bool = False) -> float:
    """``value`` as a float in ``[low, high]``, the ends open with ``low_open``/``high_open``."""
    is_real = isinstance(value, (int, float, np.integer, np.floating))
    if isinstance(value, (bool, np.bool_)) or not is_real:
        raise TypeError(f"{name} must be a real number, got {describe(value)}")
    ends = ("(" if low_open else "[", ")" if high_open else "]")
    try:
        number = float(value)  # type: ignore[arg-type]  # a real number, checked just above
    except OverflowError:  # an int beyond float64: outside every range here
        raise ValueError(f"{name} must be in {ends[0]}{low:g}, {high:g}{ends[1]}, got an int too "
                         "large for a float") from None
    above = low < number if low_open else low <= number
    if not (above and (number < high or (number == high and not high_open))):  # refuses nan
        raise ValueError(f"{name} must be in {ends[0]}{low:g}, {high:g}{ends[1]}, got {number!r}")
    return number


def boolean(value: object, name: str) -> bool:
    """``value`` if it is a bool, else TypeError."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {describe(value)}")
    return bool(value)


def text(value: object, name: str) -> str:
    """``value`` if it is a non-empty str, else TypeError."""
    if not isinstance(value, str) or not value:
        raise TypeError(f"{name} must be a non-empty str, got {describe(value)}")
    return value


def choice(value: object, name: str, valid: tuple[str, ...]) -> str:
    """``value`` if it is one of the strings in ``valid``; else an error listing them."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {describe(value)}")
    if value not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(map(repr, valid))}")
    return value


def layer_input(x: object, dtype: np.dtype[Any], width: int, width_name: str) -> FloatArray:
    """A layer input ``(..., width)``, cast to the layer's ``dtype`` (a copy only if needed)."""
    array = float_array(x, "x")
    if array.ndim == 0:
        raise ValueError(f"x must have at least 1 dimension (..., {width_name}), got a scalar "
                         "(shape ())")
    if array.shape[-1] != width:
        raise ValueError(f"x has last dimension {array.shape[-1]} but {width_name} is {width} "
                         f"(x.shape={array.shape})")
    # The layer's dtype wins, so outputs always have the weights' dtype.
    return array.astype(dtype, copy=False)


def shared_dtype(arrays: dict[str, FloatArray | None]) -> np.dtype[np.floating[Any]]:
    """The one dtype of the given weights (None skipped); mixing float32 and float64 is an error."""
    present = {name: a for name, a in arrays.items() if a is not None}
    if len({a.dtype for a in present.values()}) != 1:
        listing = ", ".join(f"{name} {a.dtype}" for name, a in present.items())
        raise TypeError(f"weights must share one float dtype, got {listing}")
    return float_dtype(next(iter(present.values())).dtype)


def _spec(names: list[str]) -> str:
    """``["d_model", "d_ff"]`` as ``"(d_model, d_ff)"``, ``["d_ff"]`` as ``"(d_ff,)"``."""
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"


def params(given: dict[str, object], axes: dict[str, str], optional: tuple[str, ...] = (),
           known: dict[str, int] | None = None
           ) -> tuple[dict[str, FloatArray | None], dict[str, int]]:
    """Parameters checked against their axes (``{"W1": "d_model d_ff"}``), and each axis' size.

    A size comes from ``known``, else from the first parameter with that axis.
    """
    arrays: dict[str, FloatArray | None] = {}
    size = dict(known or {})  # axis -> its size
    source: dict[str, str] = {}  # axis -> the parameter that set its size (not for `known`)
    for name, value in given.items():
        if value is None and name in optional:
            arrays[name] = None
            continue
        array = arrays[name] = float_array(value, name)
        names = axes[name].split()
        if len(names) == 1 and names[0] in size and array.shape != (size[names[0]],):
            raise ValueError(f"{name} must be 1-D with shape {_spec(names)} = ({size[names[0]]},), "
                             f"got shape {array.shape}")
        if array.ndim != len(names):
            raise ValueError(f"{name} must be {len(names)}-D with shape {_spec(names)}, "
                             f"got shape {array.shape}")
        if 0 in array.shape:
            raise ValueError(f"{name} has shape {array.shape}: both dimensions of {_spec(names)} "
                             "must be positive")
        want = tuple(size.get(a, n) for a, n in zip(names, array.shape, strict=True))
        if array.shape != want:
            axis = next(a for a, n, w in zip(names, array.shape, want, strict=True) if n != w)
            other = arrays.get(source.get(axis, ""))
            why = f"{axis} is {size[axis]}" if other is None else \
                f"{source[axis]} has shape {other.shape}"
            raise ValueError(f"{name} has shape {array.shape} but {why}: "
                             f"{name} must be {_spec(names)} = {want}")
        for axis, n in zip(names, array.shape, strict=True):
            if axis not in size:
                size[axis], source[axis] = int(n), name
    if any(a is not None for a in arrays.values()):
        shared_dtype(arrays)  # one dtype for all, or a TypeError
    return arrays, size


def output_grad(dy: object, out_shape: tuple[int, ...] | None, dtype: np.dtype[Any],
                caller: str) -> FloatArray:
    """``dy`` for a ``backward``: after a forward (``out_shape`` not None), of that shape."""
    if out_shape is None:
        raise RuntimeError(f"backward() called before a forward pass: call {caller}(x) first")
    dy_arr = float_array(dy, "dy")
    if dy_arr.shape != out_shape:
        raise RuntimeError(f"dy has shape {dy_arr.shape} but the last forward output has "
                           f"shape {out_shape}")
    return dy_arr.astype(dtype, copy=False)
