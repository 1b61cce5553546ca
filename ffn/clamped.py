"""gpt-oss's expert: a SwiGLU whose gate and up branches are clamped, with biases everywhere;
DeepSeek-V4's clamped SwiGLU is the same block with another slope, shift and limit."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, or_zero, quiet, random_weights
from ffn._validate import FloatArray
from ffn.activations import sigmoid
from ffn.gated import AXES, GatedFeedForward, GatedFeedForwardTrace


def split_gate_up(gate_up: object, name: str = "gate_up") -> tuple[FloatArray, FloatArray]:
    """gpt-oss's fused matrix (or bias) split into gate and up: ``[..., ::2]``, ``[..., 1::2]``.

    The checkpoint stores the two products interleaved along their output axis (gate, up, gate,
    up, ...), transformers' ``GptOssExperts.gate_up_proj`` as ``(d_model, 2 * d_ff)`` per expert.

    Raises:
        TypeError, ValueError: for a non-float array, or an odd or empty last axis.
    """
    fused = check.float_array(gate_up, name)
    if fused.ndim == 0 or fused.shape[-1] == 0 or fused.shape[-1] % 2:
        raise ValueError(f"{name} must have an even, non-zero last axis (gate and up "
                         f"interleaved), got shape {fused.shape}")
    return fused[..., ::2], fused[..., 1::2]


class ClampedSwiGLU(GatedFeedForward):
    """gpt-oss's expert: ``y = (g * sigmoid(alpha * g) * (u + up_shift)) @ W2 + b2`` a row.

    ``g = min(x @ W + b, limit)`` and ``u = clip(x @ V + c, -limit, limit)``: the gate is
    clamped from above only, the up branch on both sides, and ``up_shift`` is added to it.
    Where a clamp is flat the backward pass sends no gradient (at the limit itself it does,
    as ``torch.clamp`` does). The defaults are gpt-oss's ``alpha = 1.702``, ``limit = 7`` and
    ``up_shift = 1``; ``deepseek_v4`` builds DeepSeek-V4's, ``silu(g) * u`` with ``limit =
    10``: ``alpha = 1`` (``g * sigmoid(g)`` is ``silu(g)``) and ``up_shift = 0``.

    Args:
        W: gate matrix ``(d_model, d_ff)``.
        V: up-projection matrix ``(d_model, d_ff)``.
        W2: down-projection matrix ``(d_ff, d_model)``.
        b: gate bias ``(d_ff,)``, or None.
        c: up-projection bias ``(d_ff,)``, or None.
        b2: output bias ``(d_model,)``, or None.
        alpha: the sigmoid's slope, a finite float > 0. Computed right at any such value: it
            is never rounded to a float32 layer's dtype (where 1e-50 would be 0 and 1e39
            inf), ``alpha * g`` and the sigmoid are formed in float64 and rounded once.
        limit: the clamp, a float > 0 (``inf``: no clamp).
        up_shift: added to the clamped up branch, a finite float (gpt-oss 1, DeepSeek-V4 0).

    Raises:
        TypeError, ValueError: as for ``ffn.GatedFeedForward``, or for a bad alpha or limit.
    """

    def __init__(self, W: object, V: object, W2: object, b: object = None, c: object = None,
                 b2: object = None, alpha: float = 1.702, limit: float = 7.0,
                 up_shift: float = 1.0) -> None:
        self.alpha = check.real(alpha, "alpha", 0.0, np.inf, high_open=True, low_open=True)
        self.limit = check.real(limit, "limit", 0.0, np.inf, high_open=False, low_open=True)
        self.up_shift = check.real(up_shift, "up_shift", -np.inf, np.inf, high_open=True,
                                   low_open=True)
        given = {"W": W, "V": V, "W2": W2, "b": b, "c": c, "b2": b2}
        w, size = check.params(given, AXES, ("b", "c", "b2"))
        Layer.__init__(self, check.shared_dtype(w), size["d_model"], size["d_model"], "d_model",
                       w)
        self.variant = "clamped_swiglu"  # not one of GATED_VARIANTS: the MoE tells them apart
        self.d_model, self.d_ff = size["d_model"], size["d_ff"]

    @classmethod
    def from_fused(cls, gate_up: object, gate_up_bias: object, W2: object, b2: object,
                   alpha: float = 1.702, limit: float = 7.0) -> ClampedSwiGLU:
        """One expert from gpt-oss's fused layout: ``gate_up`` ``(d_model, 2 * d_ff)`` and its
        bias ``(2 * d_ff,)``, interleaved (``split_gate_up``), as transformers stores them
        (``gate_up_proj[e]``, ``down_proj[e]``); OpenAI's own ``mlp1_weight[e]`` and
        ``mlp2_weight[e]`` are ``(out, in)``: pass their transposes. A wrong shape is named
        by the argument passed (``gate_up``, ``gate_up_bias``), not by the split halves."""
        W, V = split_gate_up(gate_up, "gate_up")
        b, c = split_gate_up(gate_up_bias, "gate_up_bias")
        fused = (*W.shape[:-1], 2 * W.shape[-1])  # gate_up's shape, as passed
        fused_bias = (*b.shape[:-1], 2 * b.shape[-1])
        if len(fused) != 2:
            raise ValueError(f"gate_up must be 2-D with shape (d_model, 2 * d_ff), got shape "
                             f"{fused}")
        if fused_bias != fused[1:]:
            raise ValueError(f"gate_up_bias has shape {fused_bias} but gate_up has shape "
                             f"{fused}: gate_up_bias must be (2 * d_ff,) = {fused[1:]}")
        return cls(W, V, W2, b, c, b2, alpha=alpha, limit=limit)

    @classmethod
    def deepseek_v4(cls, W: object, V: object, W2: object, limit: float = 10.0) -> ClampedSwiGLU:
        """DeepSeek-V4's expert and shared expert, ``silu(min(g, limit)) * clip(u, -limit,
        limit)`` then ``W2``, no biases: transformers' ``DeepseekV4Experts._apply_gate`` with
        ``swiglu_limit = 10`` (its config's default)."""
        return cls(W, V, W2, alpha=1.0, limit=limit, up_shift=0.0)

    @classmethod
    def random(cls, d_model: int, d_ff: int, variant: str = "clamped_swiglu",
               seed: int | np.integer[Any] | None = 0, dtype: DTypeLike = np.float64,
               bias: bool = True, **clamp: float) -> ClampedSwiGLU:
        """Random ``W``, ``V``, ``W2`` (drawn in that order); biases (zeros) unless ``bias=False``.
        ``variant`` is there for the signature of ``GatedFeedForward.random``: only
        ``"clamped_swiglu"``; ``clamp``: ``alpha``, ``limit``, ``up_shift`` (gpt-oss's
        unless given)."""
        d_model, d_ff = check.widths(d_model, d_ff)
        check.choice(variant, "variant", ("clamped_swiglu",))
        W, V, W2 = random_weights(seed, dtype, (d_model, d_ff), (d_model, d_ff), (d_ff, d_model))
        b, c, b2 = (np.zeros(n, W.dtype) if check.boolean(bias, "bias") else None
                    for n in (d_ff, d_ff, d_model))
        return cls(W, V, W2, b, c, b2, **clamp)

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``y = (g * sigmoid(alpha * g) * (u + 1)) @ W2 + b2`` for ``x``: ``(..., d_model)``."""
        b, c, b2 = or_zero(self.b), or_zero(self.c), or_zero(self.b2)
        limit = self.dtype.type(self.limit)
        x = self._flatten(x)  # (N, d_model)
        gate_pre = x @ self.W + b  # (N, d_ff)
        up_pre = x @ self.V + c  # (N, d_ff)
        g = np.minimum(gate_pre, limit)  # (N, d_ff): clamped above only
        u = np.clip(up_pre, -limit, limit)  # (N, d_ff)
        s = sigmoid(self._slope_times(g)).astype(self.dtype)  # (N, d_ff): sigmoid(alpha * g)
        gate = g * s  # (N, d_ff)
        up = u + self.dtype.type(self.up_shift)  # (N, d_ff): gpt-oss's "extra bias of 1"
        h = gate * up  # (N, d_ff)
        y = h @ self.W2 + b2  # (N, d_model)
        self._save_for_backward(x, gate_pre, up_pre, gate, up, h)
        return self._unflatten(y)  # (..., d_model)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``, from ``dL/dy``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, gate_pre, up_pre, gate, up, h = self._saved_tensors
        limit = self.dtype.type(self.limit)
        dh = dy @ self.W2.T  # (N, d_ff)
        # d/dg [g sigmoid(z)] with z = alpha g: s + z s (1 - s), s = sigmoid(z). 1 - s is
        # sigmoid(-z), exact where s rounds to 1; z is clipped to +-800, where s is already
        # exactly 0 or 1 and z s (1 - s) is 0 (its limit), so an alpha g beyond float64's range
        # (alpha = 1e308, g = 2) gives 1, not inf * 0 = NaN.
        z = np.clip(self._slope_times(np.minimum(gate_pre, limit)), -800.0, 800.0)  # (N, d_ff)
        s = sigmoid(z)  # (N, d_ff), float64
        dgate = (s + z * s * sigmoid(-z)).astype(self.dtype)  # (N, d_ff)
        # the clamps pass dh where they are not flat (the limit itself included, as in
        # torch.clamp), and 0 beyond
        dgate_pre = dh * up * dgate * (gate_pre <= limit)  # (N, d_ff)
        dup_pre = dh * gate * (np.abs(up_pre) <= limit)  # (N, d_ff)
        self._set_grads(W=x.T @ dgate_pre, V=x.T @ dup_pre, W2=h.T @ dy,
                        b=dgate_pre.sum(axis=0), c=dup_pre.sum(axis=0), b2=dy.sum(axis=0))
        return self._unflatten(dgate_pre @ self.W.T + dup_pre @ self.V.T)  # (..., d_model)

    @one_thread
    def forward_trace(self, x: object) -> GatedFeedForwardTrace:
        """Like ``forward``, but return every intermediate array: ``gate_pre`` and ``up`` are
        ``x @ W + b`` and ``clip(x @ V + c) + up_shift``, ``gate`` is ``g * sigmoid(alpha * g)``."""
        y = self.forward(x)
        x2, gate_pre, _, gate, up, h = self._saved_views()
        return GatedFeedForwardTrace(x=x2, gate_pre=gate_pre, gate=gate, up=up, h=h, y=y)

    def _slope_times(self, g: FloatArray) -> FloatArray:
        """``alpha * g`` in float64 (N, d_ff): a float32 layer keeps alpha unrounded."""
        return self.alpha * g.astype(np.float64)

    def __repr__(self) -> str:
        shift = "" if self.up_shift == 1.0 else f"up_shift={self.up_shift!r}, "  # gpt-oss's: 1
        return (f"ClampedSwiGLU(d_model={self.d_model}, d_ff={self.d_ff}, alpha={self.alpha!r}, "
                f"limit={self.limit!r}, {shift}bias={self._bias()!r}, dtype={self.dtype})")
