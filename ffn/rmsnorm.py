"""RMS normalisation over the last axis (LLaMA's norm), with its backward pass."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, quiet
from ffn._validate import FloatArray
from ffn.layernorm import power_of_two_rows, root_of_eps


class RMSNorm(Layer):
    """``y = x / sqrt(mean(x**2) + eps) * gamma``, over the last axis of each row.

    LayerNorm without the mean and the shift: no centring, no ``beta``. ``eps`` sits inside the
    square root, as in LLaMA's ``RMSNorm._norm`` (``x * rsqrt(x.pow(2).mean(-1) + eps)``);
    ``gamma`` is LLaMA's ``weight``. ``eps`` keeps a row of zeros from giving 0 / 0 (``eps=0``
    is allowed, to show that NaN).

    Args:
        d_model: width of the rows, a positive int.
        eps: added to the mean square, a finite float >= 0 (1e-6, the default of LLaMA's
            ``RMSNorm`` and of transformers' ``LlamaRMSNorm``). Computed right, never rounded
            to float32 first: a float32 norm adds ``sqrt(eps)`` formed in float64; it refuses
            an eps whose root is no normal float32 (``ffn.layernorm.root_of_eps``).
        gamma: scale ``(d_model,)``, or None for ones.
        dtype: float32 or float64; None takes gamma's, or float64.

    Raises:
        TypeError: for arguments of the wrong type, or a dtype that differs from gamma's.
        ValueError: for a non-positive ``d_model``, a bad ``eps``, or the wrong shape.
    """

    _caller = "norm"
    gamma: FloatArray  # (d_model,), a read-only copy

    def __init__(self, d_model: int, eps: float = 1e-6, gamma: object = None,
                 dtype: DTypeLike | None = None) -> None:
        d_model = check.positive_int(d_model, "d_model")
        self.eps = check.real(eps, "eps", 0.0, math.inf, high_open=True)
        w, _ = check.params({"gamma": gamma}, {"gamma": "d_model"}, ("gamma",),
                            known={"d_model": d_model})
        found = None if w["gamma"] is None else w["gamma"].dtype
        resolved = check.float_dtype(dtype if dtype is not None else found or np.float64)
        if found is not None and found != resolved:
            raise TypeError(f"dtype {resolved} does not match the dtype of gamma ({found})")
        weight = np.ones(d_model, resolved) if w["gamma"] is None else w["gamma"]
        super().__init__(resolved, d_model, d_model, "d_model", {"gamma": weight})
        self._sqrt_eps = root_of_eps(self.eps, resolved, "RMSNorm")
        self.d_model = d_model

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """Normalise every row of ``x``, of shape ``(..., d_model)``."""
        x = self._flatten(x)  # (N, d_model)
        # As in LayerNorm: each row is divided by 2**e (exact), e the exponent of its largest
        # entry, so its squares neither overflow nor underflow; eps joins through hypot.
        e, xs = power_of_two_rows(x)  # (N, 1), (N, d_model): x / 2**e
        ms = np.mean(xs * xs, axis=1, keepdims=True)  # (N, 1): mean(x**2) / 4**e
        sqrt_eps = self._sqrt_eps
        eps_scaled = np.ldexp(sqrt_eps, -e)  # (N, 1): sqrt(eps) / 2**e
        rms_scaled = np.hypot(np.sqrt(ms), eps_scaled)  # (N, 1): sqrt(mean(x**2) + eps) / 2**e
        # in x's units: what backward divides by (see LayerNorm.forward)
        rms = np.hypot(np.ldexp(np.sqrt(ms), e), sqrt_eps)  # (N, 1)
        # For tiny x, sqrt(eps) / 2**e can overflow; eps then outweighs x, and x / rms is exact
        x_hat = np.where(np.isinf(eps_scaled), x / rms, xs / rms_scaled)  # (N, d_model)
        self._save_for_backward(x_hat, rms)
        return self._unflatten(x_hat * self.gamma)  # (..., d_model)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` (gamma), returns ``dL/dx``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x_hat, rms = self._saved_tensors
        self._set_grads(gamma=np.sum(dy * x_hat, axis=0))
        dx_hat = dy * self.gamma  # (N, d_model)
        # The mean square depends on every entry of the row: its share (no mean term here).
        dx = dx_hat - x_hat * np.mean(dx_hat * x_hat, axis=1, keepdims=True)  # (N, d_model)
        return self._unflatten(dx / rms)  # (..., d_model)

    def __repr__(self) -> str:
        return f"RMSNorm(d_model={self.d_model}, eps={self.eps!r}, dtype={self.dtype})"
