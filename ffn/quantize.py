"""Weights in 8 bits, simulated: int8 absmax and FP8 E4M3, one scale per tensor, column or row.

A matrix ``w (rows, cols)`` becomes one byte a number (``codes``) and float64 scales:
``w ~ value(codes) * scale``, with ``scale = max|w| / 127`` (int8) or ``max|w| / 448`` (E4M3),
the maximum taken over the whole tensor, each column, or each row. For ``W1 (d_model, d_ff)``
a column is an output channel (one hidden unit); for activations ``X (n, d_model)`` a row is a
token. The arithmetic is numpy's float64: only the rounding is 8-bit. The scales are float64
(real kernels keep float32 or bfloat16) so that every finite matrix, from subnormal weights
near 1e-320 to 1.7e308, gets a finite, positive scale and comes back finite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ffn import _validate as check
from ffn._validate import FloatArray

QUANT_FORMATS: tuple[str, ...] = ("int8", "e4m3")
"""Valid ``format`` values: symmetric int8 in [-127, 127], or FP8 E4M3 (E4M3FN)."""

QUANT_GRANULARITIES: tuple[str, ...] = ("tensor", "column", "row")
"""Valid ``per`` values: one scale for the matrix, one per column, or one per row."""

INT8_MAX = 127  # symmetric: -128 is never used, as in absmax quantization

E4M3_MAX = 448.0
"""E4M3's largest value, S.1111.110 = 1.75 * 2**8 (S.1111.111 is NaN; there is no infinity)."""


def _e4m3_magnitudes() -> FloatArray:
    """The 127 non-negative finite E4M3 values, indexed by their bit pattern 0x00 ... 0x7E."""
    code = np.arange(127)  # (127,): 4 exponent bits, 3 mantissa bits, sign bit 0
    exponent, mantissa = code >> 3, code & 7
    subnormal = mantissa * 2.0**-9  # exponent field 0: m/8 * 2**(1 - bias), bias 7
    normal = (1.0 + mantissa / 8.0) * 2.0 ** (exponent - 7)
    return np.where(exponent == 0, subnormal, normal)


E4M3_MAGNITUDES: FloatArray = _e4m3_magnitudes()
"""The non-negative E4M3 values in increasing order: entry ``i`` has bit pattern ``i``."""
E4M3_MAGNITUDES.flags.writeable = False


def nearest_even_index(a: FloatArray, grid: FloatArray) -> NDArray[np.int64]:
    """Index of the entry of ``grid`` nearest to each ``a`` (0 <= a <= grid[-1]), ties to even.

    ``grid`` is a format's non-negative values in increasing order, entry ``i`` with bit
    pattern ``i``, so an even index is an even mantissa: IEEE's roundTiesToEven.
    """
    i = np.clip(np.searchsorted(grid, a), 1, grid.size - 1)  # grid[i-1] < a <= grid[i]
    midpoint = (grid[i - 1] + grid[i]) / 2  # exact in float64, as are the comparisons
    up = (a > midpoint) | ((a == midpoint) & (i % 2 == 0))  # a tie goes to the even code
    return np.where(up, i, i - 1)


def e4m3_codes(x: object) -> NDArray[np.uint8]:
    """The E4M3 bit pattern of each value of ``x`` rounded to nearest, ties to even; beyond
    +-448 (inf too) saturating to +-448, NaN as 0x7F. Same shape as ``x``; `e4m3_value` reads
    them back."""
    array = check.float_array(x, "x")
    a = np.abs(array.astype(np.float64))
    grid = E4M3_MAGNITUDES
    code = nearest_even_index(np.where(np.isnan(a), 0.0, np.minimum(a, E4M3_MAX)), grid)
    code = np.where(a >= E4M3_MAX, grid.size - 1, code)  # beyond 448 (inf too): 448
    code = code | (np.signbit(array).astype(np.int64) << 7)
    return np.where(np.isnan(array), 0x7F, code).astype(np.uint8)


def e4m3_value(codes: object) -> FloatArray:
    """The float64 value of each E4M3 bit pattern (a uint8 array); 0x7F and 0xFF are NaN."""
    array = np.asarray(codes)
    if array.dtype != np.uint8:
        raise TypeError(f"codes must be a uint8 array of E4M3 bit patterns, got dtype "
                        f"{array.dtype}")
    table = np.concatenate([E4M3_MAGNITUDES, [np.nan], -E4M3_MAGNITUDES, [np.nan]])  # (256,)
    values: FloatArray = table[array]
    return values


def round_to_e4m3(x: object) -> FloatArray:
    """``x`` rounded to the nearest FP8 E4M3 value, ties to even.

    Finite values beyond +-448 and +-inf saturate to +-448 (E4M3 has no infinity); NaN stays
    NaN and -0.0 stays -0.0. Same shape and float dtype as ``x`` (every E4M3 value is exact in
    float32).
    """
    array = check.float_array(x, "x")
    return e4m3_value(e4m3_codes(array)).astype(array.dtype)


@dataclass(frozen=True)
class Quantized:
    """A matrix in 8 bits: one byte a number and the float64 scales that map them back.

    Built by hand, its fields are checked: ``format`` one of ``QUANT_FORMATS``; ``codes`` a
    non-empty 2-D matrix of integers, in [-127, 127] for int8 (stored as int8) or bit patterns
    in [0, 255] for E4M3 (stored as uint8); ``scale`` positive and finite, of shape ``(1, 1)``,
    ``(1, cols)`` or ``(rows, 1)`` (stored as float64). TypeError or ValueError otherwise.
    """

    format: str  # "int8": codes are integers in [-127, 127]; "e4m3": E4M3 bit patterns
    codes: NDArray[Any]  # (rows, cols), int8 or uint8: one byte each
    scale: NDArray[np.float64]  # (1, 1), (1, cols) per column or (rows, 1) per row

    def __post_init__(self) -> None:
        check.choice(self.format, "format", QUANT_FORMATS)
        codes = _codes(self.codes, self.format)
        scale = check.float_array(self.scale, "scale").astype(np.float64)
        (rows, cols), shapes = codes.shape, ((1, 1), (1, codes.shape[1]), (codes.shape[0], 1))
        if scale.shape not in shapes:
            raise ValueError(f"scale must have shape (1, 1), (1, {cols}) or ({rows}, 1) for "
                             f"codes of shape {codes.shape}, got shape {scale.shape}")
        if not np.all(np.isfinite(scale) & (scale > 0)):
            raise ValueError("scale must be positive and finite (each entry in (0, 1.8e308))")
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "scale", scale)

    def dequantize(self) -> FloatArray:
        """``value(codes) * scale``, in float64: ``(rows, cols)``."""
        values = self.codes.astype(np.float64) if self.format == "int8" else \
            e4m3_value(self.codes)
        return values * self.scale

    @property
    def nbytes(self) -> int:
        """Bytes to store it: one a code, eight a scale."""
        return int(self.codes.nbytes + self.scale.nbytes)


def _codes(codes: object, format: str) -> NDArray[Any]:
    """``codes`` as the int8 or uint8 matrix of ``format``, or an error naming ``codes``."""
    raw = np.asarray(codes) if isinstance(codes, (list, tuple, np.ndarray)) else None
    values = check.float_array(codes, "codes")  # a TypeError for None, str, complex, ...
    if values.ndim != 2 or 0 in values.shape:
        raise ValueError(f"codes must be a non-empty 2-D matrix (rows, cols), got shape "
                         f"{values.shape}")
    if format == "e4m3" and (raw is None or raw.dtype.kind not in "iu"):
        raise TypeError(f"codes for format 'e4m3' must be integer bit patterns (uint8), got "
                        f"dtype {values.dtype if raw is None else raw.dtype}")
    if not np.all(values == np.rint(values)):  # NaN and inf are no integers either
        raise ValueError(f"codes must be integers for format {format!r}")
    low, high, dtype = (-INT8_MAX, INT8_MAX, np.int8) if format == "int8" else (0, 255, np.uint8)
    if values.min() < low or values.max() > high:
        raise ValueError(f"codes for format {format!r} must be in [{low}, {high}], got "
                         f"[{values.min():g}, {values.max():g}]")
    return values.astype(dtype)


def quantize_absmax(w: object, format: str = "int8", per: str = "tensor") -> Quantized:
    """``w (rows, cols)`` in 8 bits with absmax scaling: its largest magnitude maps to the
    format's largest value (127 or 448).

    ``per``: ``"tensor"``, ``"column"`` (an output channel of a weight matrix) or ``"row"``
    (a token of activations). int8 rounds half to even (``np.rint``) and clips to [-127, 127];
    E4M3 rounds to nearest, ties to even, saturating at 448. A part that is all zeros gets
    scale 1 (its codes are 0). The scales are float64: finite and positive for every finite
    ``w`` (a float32 scale is 0 below about 1e-43 and inf above 3.4e38).
    """
    check.choice(format, "format", QUANT_FORMATS)
    check.choice(per, "per", QUANT_GRANULARITIES)
    array = check.float_array(w, "w").astype(np.float64)
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"w must be a non-empty 2-D matrix (rows, cols), got shape "
                         f"{array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("w holds NaN or inf: absmax scaling needs finite values")
    axis = {"tensor": None, "column": 0, "row": 1}[per]
    amax = np.max(np.abs(array), axis=axis, keepdims=True)  # (1, 1), (1, cols) or (rows, 1)
    largest = INT8_MAX if format == "int8" else E4M3_MAX
    scale = np.where(amax > 0, amax / largest, 1.0)  # float64: 1.7e308 / 448 and 5e-324 / 127
    scaled = array / scale  # (rows, cols), |scaled| <= largest (+ rounding)
    if format == "int8":
        codes: NDArray[Any] = np.clip(np.rint(scaled), -INT8_MAX, INT8_MAX).astype(np.int8)
    else:
        codes = e4m3_codes(scaled)
    return Quantized(format, codes, scale)
