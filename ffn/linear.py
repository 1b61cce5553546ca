"""An affine layer ``y = x @ W + b`` in the row-vector convention."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ffn._validate import (
    FloatArray,
    as_float_array,
    check_bias,
    check_input,
    check_matrix,
    shared_dtype,
)

__all__ = ["Linear"]


class Linear:
    """An affine map ``y = x @ W + b``.

    Row-vector convention: an input row ``x`` of length ``in_features`` is
    multiplied from the left, so ``W`` has shape ``(in_features, out_features)``
    (the transpose of PyTorch's ``nn.Linear.weight``).

    ``W`` and ``b`` must share one dtype, float32 or float64; bool, integer,
    float16 and list data is converted to float64 first. float32 and float64
    arrays are stored without copying and never written to.

    Args:
        W: weight matrix, shape ``(in_features, out_features)``.
        b: bias, shape ``(out_features,)``, or ``None`` for no bias.

    Raises:
        TypeError: if ``W`` or ``b`` is not real numeric data, or their dtypes differ.
        ValueError: if ``W`` is not 2-D with positive sizes, or ``b`` does not
            have shape ``(out_features,)``.
    """

    def __init__(self, W: object, b: object = None) -> None:
        W_arr = as_float_array(W, "W")
        b_arr = None if b is None else as_float_array(b, "b")
        check_matrix(W_arr, "W", "(in_features, out_features)")
        check_bias(b_arr, "b", W_arr.shape[1], "out_features")
        self._dtype = shared_dtype({"W": W_arr, "b": b_arr})
        self._W = W_arr
        self._b = b_arr

    @property
    def W(self) -> FloatArray:
        """Weight matrix, shape ``(in_features, out_features)``."""
        return self._W

    @property
    def b(self) -> FloatArray | None:
        """Bias, shape ``(out_features,)``, or ``None``."""
        return self._b

    @property
    def in_features(self) -> int:
        """Size of the last dimension of the input."""
        return int(self._W.shape[0])

    @property
    def out_features(self) -> int:
        """Size of the last dimension of the output."""
        return int(self._W.shape[1])

    @property
    def dtype(self) -> np.dtype[np.floating[Any]]:
        """The dtype of the weights, which is also the dtype of every output."""
        return self._dtype

    def __call__(self, x: object) -> FloatArray:
        """Apply the layer: ``x @ W + b``.

        Args:
            x: real array-like of shape ``(..., in_features)``; any number of
                leading dimensions, including none (a single vector). It is
                cast to ``dtype`` and never written to.

        Returns:
            A new array of shape ``(..., out_features)`` and dtype ``dtype``.
            NaN and inf propagate (a NaN or inf in a row of ``x`` can make that
            row of the output NaN or inf) without exceptions or warnings.

        Raises:
            TypeError: if ``x`` is not real numeric data.
            ValueError: if ``x`` is 0-d or its last dimension is not ``in_features``.
        """
        x_arr = check_input(x, self._dtype, self.in_features, "in_features")
        lead = x_arr.shape[:-1]
        n_rows = math.prod(lead)
        x2 = x_arr.reshape(
            n_rows, self.in_features
        )  # (N, in_features), no copy if possible
        # invalid/over: inf - inf in a sum is nan, silently (matmul would warn).
        with np.errstate(invalid="ignore", over="ignore"):
            y = x2 @ self._W  # (N, out_features)
            if self._b is not None:
                y += self._b  # in place: no second (N, out_features) array
        return y.reshape(*lead, self.out_features)  # (..., out_features)

    def __repr__(self) -> str:
        return (
            f"Linear(in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self._b is not None}, dtype={self._dtype})"
        )
