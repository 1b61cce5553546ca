"""Layer normalisation over the last dimension, with its backward pass."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn._validate import (
    FloatArray,
    as_float_array,
    check_bias,
    check_dy,
    check_float_dtype,
    check_input,
    check_positive_int,
    describe,
    shared_dtype,
)

__all__ = ["LayerNorm"]


def _check_eps(eps: object) -> float:
    """Return ``eps`` as a float if it is a finite number >= 0."""
    is_real = isinstance(eps, (int, float, np.integer, np.floating))
    if isinstance(eps, (bool, np.bool_)) or not is_real:
        raise TypeError(f"eps must be a real number, got {describe(eps)}")
    value = float(eps)  # type: ignore[arg-type]  # checked just above
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"eps must be a finite number >= 0, got {value!r}")
    return value


class LayerNorm:
    """Layer normalisation of each row: ``(x - mean) / sqrt(var + eps) * gamma + beta``.

    ``mean`` and ``var`` are taken over the last dimension of ``x``, separately
    for every token. The variance is the biased one (divided by ``d_model``, not
    ``d_model - 1``), as in PyTorch's ``nn.LayerNorm``.

    Why ``eps``: a row whose entries are all equal has variance 0, and
    ``(x - mean) / sqrt(var)`` is then ``0 / 0``, which is NaN. With
    ``eps > 0`` the same row normalises to zeros, and no row can be scaled up
    by more than ``1 / sqrt(eps)``. ``eps=0`` is accepted so that the NaN can
    be shown; it follows numpy (NaN and a RuntimeWarning, no exception).

    Dtypes: ``gamma`` and ``beta`` must share one dtype, float32 or float64
    (bool, integer, float16 and list data become float64). Without them, the
    layer has ``gamma = 1`` and ``beta = 0`` in ``dtype`` (float64 if not
    given). Inputs are cast to the layer's dtype; outputs and gradients have it.

    Args:
        d_model: width of the rows to normalise, a positive int.
        eps: the small number added to the variance, a finite float >= 0
            (PyTorch's default ``1e-5``).
        gamma: scale, shape ``(d_model,)``, or ``None`` for ones.
        beta: shift, shape ``(d_model,)``, or ``None`` for zeros.
        dtype: ``np.float32`` or ``np.float64``; ``None`` takes the dtype of
            ``gamma``/``beta``, or float64 when both are ``None``.

    Raises:
        TypeError: if ``d_model`` is not an int, ``eps`` is not a real number,
            ``gamma``/``beta`` are not real numeric data or their dtypes differ
            (from each other or from ``dtype``), or ``dtype`` is not float32/float64.
        ValueError: if ``d_model`` is not positive, ``eps`` is negative or not
            finite, or ``gamma``/``beta`` do not have shape ``(d_model,)``.
    """

    def __init__(
        self,
        d_model: int,
        eps: float = 1e-5,
        gamma: object = None,
        beta: object = None,
        dtype: DTypeLike | None = None,
    ) -> None:
        d_model = check_positive_int(d_model, "d_model")
        self._eps = _check_eps(eps)
        requested = None if dtype is None else check_float_dtype(dtype)
        gamma_arr = None if gamma is None else as_float_array(gamma, "gamma")
        beta_arr = None if beta is None else as_float_array(beta, "beta")
        check_bias(gamma_arr, "gamma", d_model, "d_model")
        check_bias(beta_arr, "beta", d_model, "d_model")

        if gamma_arr is None and beta_arr is None:
            resolved = requested if requested is not None else np.dtype(np.float64)
        else:
            resolved = shared_dtype({"gamma": gamma_arr, "beta": beta_arr})
            if requested is not None and requested != resolved:
                raise TypeError(
                    f"dtype {requested} does not match the dtype of gamma/beta ({resolved})"
                )
        self._dtype = resolved
        self._gamma = gamma_arr if gamma_arr is not None else np.ones(d_model, resolved)
        self._beta = beta_arr if beta_arr is not None else np.zeros(d_model, resolved)
        self._cache: tuple[FloatArray, FloatArray, tuple[int, ...]] | None = None
        self._grads: dict[str, FloatArray] = {}

    # ------------------------------------------------------------ attributes

    @property
    def gamma(self) -> FloatArray:
        """Scale, shape ``(d_model,)``."""
        return self._gamma

    @property
    def beta(self) -> FloatArray:
        """Shift, shape ``(d_model,)``."""
        return self._beta

    @property
    def eps(self) -> float:
        """The number added to the variance before the square root."""
        return self._eps

    @property
    def d_model(self) -> int:
        """Width of the rows that are normalised."""
        return int(self._gamma.shape[0])

    @property
    def dtype(self) -> np.dtype[np.floating[Any]]:
        """The layer's dtype: inputs are cast to it; outputs and gradients have it."""
        return self._dtype

    @property
    def grads(self) -> dict[str, FloatArray]:
        """Gradients from the last ``backward``: keys ``"gamma"`` and ``"beta"``.

        Each has shape ``(d_model,)``. Empty before the first backward; each
        backward replaces them.
        """
        return self._grads

    # ------------------------------------------------------------ forward

    def forward(self, x: object) -> FloatArray:
        """Normalise every row of ``x``. Same as ``norm(x)``.

        Args:
            x: real array-like of shape ``(..., d_model)``, cast to ``dtype``.

        Returns:
            A new array of shape ``(..., d_model)`` and dtype ``dtype``. With
            ``eps=0``, a row of equal entries gives NaN (numpy's "invalid value"
            RuntimeWarning, no exception).

        Raises:
            TypeError: if ``x`` is not real numeric data.
            ValueError: if ``x`` is 0-d or its last dimension is not ``d_model``.
        """
        self._cache = None  # a forward that fails leaves nothing for backward
        x_arr = check_input(x, self._dtype, self.d_model, "d_model")
        lead = x_arr.shape[:-1]
        x2 = x_arr.reshape(math.prod(lead), self.d_model)  # (N, d_model)

        centered = x2 - x2.mean(axis=1, keepdims=True)  # (N, d_model)
        var = np.mean(centered * centered, axis=1, keepdims=True)  # (N, 1), biased
        std = np.sqrt(var + self._eps)  # (N, 1)
        x_hat = centered / std  # (N, d_model): 0 / 0 = nan when var = eps = 0
        y: FloatArray = x_hat * self._gamma + self._beta  # (N, d_model)
        self._cache = (x_hat, std, lead)
        return y.reshape(*lead, self.d_model)

    def __call__(self, x: object) -> FloatArray:
        """Same as ``forward``."""
        return self.forward(x)

    # ------------------------------------------------------------ backward

    def backward(self, dy: object) -> FloatArray:
        """Backpropagate ``dy = dL/dy`` through the last forward pass.

        Sets ``grads`` to ``dL/dgamma`` and ``dL/dbeta`` and returns ``dL/dx``:
        ``(dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat)) / sqrt(var + eps)``
        with ``dx_hat = dy * gamma`` and the means over each row.

        Args:
            dy: real array-like with the shape of the last output, ``(..., d_model)``.

        Returns:
            ``dL/dx``: a new array with the shape of the last input and dtype ``dtype``.

        Raises:
            RuntimeError: if no forward pass has run yet, or ``dy`` does not
                have the output's shape (the message shows both).
            TypeError: if ``dy`` is not real numeric data.
        """
        cache = self._cache
        out_shape = None if cache is None else (*cache[2], self.d_model)
        dy_arr = check_dy(dy, out_shape, self._dtype, "norm")
        assert cache is not None  # check_dy raised otherwise
        x_hat, std, _ = cache
        dy2 = dy_arr.reshape(x_hat.shape)  # (N, d_model)

        dgamma = np.sum(dy2 * x_hat, axis=0)  # (d_model,)
        dbeta = np.sum(dy2, axis=0)  # (d_model,)
        dx_hat = dy2 * self._gamma  # (N, d_model)
        # The mean and the variance depend on every entry of the row: the two
        # subtracted terms are their share of the gradient.
        dx: FloatArray = dx_hat - dx_hat.mean(axis=1, keepdims=True)  # (N, d_model)
        dx -= x_hat * np.mean(dx_hat * x_hat, axis=1, keepdims=True)
        dx /= std
        self._grads = {"gamma": dgamma, "beta": dbeta}
        return dx.reshape(out_shape)

    def __repr__(self) -> str:
        return f"LayerNorm(d_model={self.d_model}, eps={self._eps!r}, dtype={self._dtype})"
