"""Layer normalisation over the last axis, with its backward pass."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, quiet
from ffn._validate import FloatArray


def power_of_two_rows(x: FloatArray) -> tuple[np.ndarray[Any, np.dtype[np.intc]], FloatArray]:
    """``(e, x / 2**e)`` for rows ``x`` ``(N, d)``, e ``(N, 1)`` the exponent of each row's largest
    entry: exact (a power of two), and the scaled entries lie in (-1, 1)."""
    e = np.frexp(np.abs(x).max(axis=1, keepdims=True))[1]  # (N, 1)
    return e, np.ldexp(x, -e)  # (N, d_model): x / 2**e


def root_of_eps(eps: float, dtype: np.dtype[Any], norm: str) -> np.floating[Any]:
    """``sqrt(eps)`` in ``dtype``, the only form a norm adds eps in: the root taken in float64,
    then rounded once. A ValueError unless it is 0 or a normal number of ``dtype``: in float32,
    eps = 0 or eps between 1.4e-76 and 1.15e77 (a float32 eps would be 0 below 1.4e-45 and
    inf above 3.4e38); in float64, every eps the constructor accepts."""
    with np.errstate(over="ignore"):  # an overflow to inf is refused just below
        root: np.floating[Any] = dtype.type(math.sqrt(eps))
    info = np.finfo(dtype)
    if eps != 0 and not info.tiny <= root <= info.max:
        # the ends of the range, moved 1% inwards so the shown digits are inside it
        low, high = 1.01 * float(info.tiny) ** 2, 0.99 * float(info.max) ** 2
        raise ValueError(f"eps={eps!r} is outside the range a {dtype} {norm} can use: its square "
                         f"root, which the norm adds, would be {float(root):.3g} in {dtype}; "
                         f"give eps = 0 or eps between {low:.3g} and {high:.3g}")
    return root


class LayerNorm(Layer):
    """``y = (x - mean) / sqrt(var + eps) * gamma + beta``, over the last axis of each row.

    The variance is the biased one, as in PyTorch. ``eps`` keeps a row of equal entries from
    giving 0 / 0 (``eps=0`` is allowed, to show that NaN).

    Args:
        d_model: width of the rows, a positive int.
        eps: added to the variance, a finite float >= 0 (PyTorch's default 1e-5). Computed
            right, never rounded to float32 first: a float32 norm adds ``sqrt(eps)`` formed in
            float64; it refuses an eps whose root is no normal float32 (``root_of_eps``).
        gamma: scale ``(d_model,)``, or None for ones.
        beta: shift ``(d_model,)``, or None for zeros.
        dtype: float32 or float64; None takes gamma's/beta's, or float64.

    Raises:
        TypeError: for arguments of the wrong type, or dtypes that differ.
        ValueError: for a non-positive ``d_model``, a bad ``eps``, or the wrong shapes.
    """

    _caller = "norm"
    gamma: FloatArray  # (d_model,), read-only copies
    beta: FloatArray  # (d_model,)

    def __init__(self, d_model: int, eps: float = 1e-5, gamma: object = None,
                 beta: object = None, dtype: DTypeLike | None = None) -> None:
        d_model = check.positive_int(d_model, "d_model")
        self.eps = check.real(eps, "eps", 0.0, math.inf, high_open=True)
        w, _ = check.params({"gamma": gamma, "beta": beta}, {"gamma": "d_model", "beta": "d_model"},
                            ("gamma", "beta"), known={"d_model": d_model})
        found = [a.dtype for a in w.values() if a is not None]
        resolved = check.float_dtype(dtype if dtype is not None else found[0] if found
                                     else np.float64)
        if found and found[0] != resolved:
            raise TypeError(f"dtype {resolved} does not match the dtype of gamma/beta ({found[0]})")
        default = {"gamma": np.ones(d_model, resolved), "beta": np.zeros(d_model, resolved)}
        super().__init__(resolved, d_model, d_model, "d_model",
                         {k: default[k] if a is None else a for k, a in w.items()})
        self._sqrt_eps = root_of_eps(self.eps, resolved, "LayerNorm")
        self.d_model = d_model

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """Normalise every row of ``x``, of shape ``(..., d_model)``."""
        x = self._flatten(x)  # (N, d_model)
        # Each row is divided by 2**e, e the exponent of its largest entry (exact: a power of two),
        # so its entries lie in (-1, 1): their squares can neither overflow (huge x) nor underflow
        # to 0 (tiny x, which gave +-inf with eps = 0). eps joins through hypot, which squares
        # neither term: eps / 4**e would underflow (huge x: 0 / 0 for an equal row) or overflow.
        e, xs = power_of_two_rows(x)  # (N, 1), (N, d_model): x / 2**e
        centered = xs - xs.mean(axis=1, keepdims=True)  # (N, d_model): (x - mean) / 2**e
        var = np.mean(centered * centered, axis=1, keepdims=True)  # (N, 1): var(x) / 4**e, biased
        sqrt_eps = self._sqrt_eps
        std = np.hypot(np.sqrt(var), np.ldexp(sqrt_eps, -e))  # (N, 1): sqrt(var(x) + eps) / 2**e
        x_hat = centered / std  # (N, d_model)
        # backward divides by sqrt(var + eps) in x's units, formed there: in units of 2**e it
        # can overflow (tiny x) or lose digits as a subnormal (huge x)
        self._save_for_backward(x_hat, np.hypot(np.ldexp(np.sqrt(var), e), sqrt_eps))  # (N, 1)
        return self._unflatten(x_hat * self.gamma + self.beta)  # (..., d_model)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` (gamma, beta), returns ``dL/dx``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x_hat, std = self._saved_tensors
        self._set_grads(gamma=np.sum(dy * x_hat, axis=0), beta=np.sum(dy, axis=0))
        dx_hat = dy * self.gamma  # (N, d_model)
        # The mean and the variance depend on every entry of the row: these are their shares.
        dx = dx_hat - dx_hat.mean(axis=1, keepdims=True)  # (N, d_model)
        dx -= x_hat * np.mean(dx_hat * x_hat, axis=1, keepdims=True)
        return self._unflatten(dx / std)  # (..., d_model)

    def __repr__(self) -> str:
        return f"LayerNorm(d_model={self.d_model}, eps={self.eps!r}, dtype={self.dtype})"
