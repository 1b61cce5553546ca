"""Gated feed-forward blocks (GLU variants): ``(act(x @ W + b) * (x @ V + c)) @ W2 + b2``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, or_zero, quiet, random_weights
from ffn._validate import FloatArray
from ffn.activations import FUNCTIONS, sigmoid

GATED_VARIANTS: tuple[str, ...] = ("glu", "reglu", "geglu", "geglu_tanh", "swiglu")
"""Valid ``variant`` names for ``ffn.GatedFeedForward``."""

AXES = {"W": "d_model d_ff", "V": "d_model d_ff", "W2": "d_ff d_model",
        "b": "d_ff", "c": "d_ff", "b2": "d_model"}


def _sigmoid_grad(x: object) -> FloatArray:
    s: FloatArray = sigmoid(x)
    return s * (1.0 - s)


# The gate's activation and its derivative, per variant (Shazeer 2020).
Function = Callable[[Any], FloatArray]
GATES: dict[str, tuple[Function, Function]] = {
    "glu": (sigmoid, _sigmoid_grad), "reglu": FUNCTIONS["relu"], "geglu": FUNCTIONS["gelu"],
    "geglu_tanh": FUNCTIONS["gelu_tanh"], "swiglu": FUNCTIONS["silu"]}


@dataclass(frozen=True, eq=False)
class GatedFeedForwardTrace:
    """The arrays of one gated forward pass, shaped like the input, read-only (``y`` is yours)."""

    x: FloatArray  # (..., d_model), the input in the block's dtype
    gate_pre: FloatArray  # (..., d_ff), x @ W + b
    gate: FloatArray  # (..., d_ff), act(gate_pre)
    up: FloatArray  # (..., d_ff), x @ V + c
    h: FloatArray  # (..., d_ff), gate * up
    y: FloatArray  # (..., d_model), h @ W2 + b2


class GatedFeedForward(Layer):
    """A gated block: ``y = (act(x @ W + b) * (x @ V + c)) @ W2 + b2`` on every row.

    ``W``, ``V``, ``W2`` are LLaMA's ``w1, w3, w2`` (Hugging Face's ``gate_proj, up_proj,
    down_proj``), transposed. The variant names the gate's activation: ``"glu"`` sigmoid,
    ``"reglu"`` ReLU, ``"geglu"`` GELU, ``"geglu_tanh"``, ``"swiglu"`` SiLU.

    Args:
        W: gate matrix ``(d_model, d_ff)``.
        V: up-projection matrix ``(d_model, d_ff)``.
        W2: down-projection matrix ``(d_ff, d_model)``.
        b: gate bias ``(d_ff,)``, or None (as in LLaMA).
        c: up-projection bias ``(d_ff,)``, or None.
        b2: output bias ``(d_model,)``, or None.
        variant: one of ``ffn.GATED_VARIANTS``.

    Raises:
        TypeError, ValueError: as for ``ffn.FeedForward``.
    """

    _caller = "block"
    W: FloatArray  # (d_model, d_ff); the weights are read-only copies
    V: FloatArray  # (d_model, d_ff)
    W2: FloatArray  # (d_ff, d_model)
    b: FloatArray | None  # (d_ff,)
    c: FloatArray | None  # (d_ff,)
    b2: FloatArray | None  # (d_model,)

    def __init__(self, W: object, V: object, W2: object, b: object = None, c: object = None,
                 b2: object = None, variant: str = "swiglu") -> None:
        self.variant = check.choice(variant, "variant", GATED_VARIANTS)
        self.act, self.act_grad = GATES[variant]
        given = {"W": W, "V": V, "W2": W2, "b": b, "c": c, "b2": b2}
        w, size = check.params(given, AXES, ("b", "c", "b2"))
        super().__init__(check.shared_dtype(w), size["d_model"], size["d_model"], "d_model", w)
        self.d_model, self.d_ff = size["d_model"], size["d_ff"]

    @classmethod
    def random(cls, d_model: int, d_ff: int, variant: str = "swiglu",
               seed: int | np.integer[Any] | None = 0, dtype: DTypeLike = np.float64,
               bias: bool = False) -> GatedFeedForward:
        """Random ``W``, ``V``, ``W2`` (drawn in that order), zero biases with ``bias``."""
        d_model, d_ff = check.widths(d_model, d_ff)
        check.choice(variant, "variant", GATED_VARIANTS)  # before drawing anything
        W, V, W2 = random_weights(seed, dtype, (d_model, d_ff), (d_model, d_ff), (d_ff, d_model))
        b, c, b2 = (np.zeros(n, W.dtype) if check.boolean(bias, "bias") else None
                    for n in (d_ff, d_ff, d_model))
        return cls(W, V, W2, b, c, b2, variant=variant)

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``y = (act(x @ W + b) * (x @ V + c)) @ W2 + b2`` for ``x``: ``(..., d_model)``."""
        W, V, W2 = self.W, self.V, self.W2
        b, c, b2 = or_zero(self.b), or_zero(self.c), or_zero(self.b2)
        x = self._flatten(x)  # (N, d_model)
        gate_pre = x @ W + b  # (N, d_ff)
        gate = self.act(gate_pre)  # (N, d_ff)
        up = x @ V + c  # (N, d_ff)
        h = gate * up  # (N, d_ff)
        y = h @ W2 + b2  # (N, d_model)
        self._save_for_backward(x, gate_pre, gate, up, h)
        return self._unflatten(y)  # (..., d_model)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``, from ``dL/dy``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, gate_pre, gate, up, h = self._saved_tensors
        dh = dy @ self.W2.T  # (N, d_ff)
        dup = dh * gate  # (N, d_ff)
        dgate_pre = dh * up * self.act_grad(gate_pre)  # (N, d_ff)
        self._set_grads(W=x.T @ dgate_pre, V=x.T @ dup, W2=h.T @ dy, b=dgate_pre.sum(axis=0),
                        c=dup.sum(axis=0), b2=dy.sum(axis=0))
        # x feeds both branches: their gradients add up.
        return self._unflatten(dgate_pre @ self.W.T + dup @ self.V.T)  # (..., d_model)

    @one_thread
    def forward_trace(self, x: object) -> GatedFeedForwardTrace:
        """Like ``forward``, but return every intermediate array."""
        y = self.forward(x)
        x2, gate_pre, gate, up, h = self._saved_views()
        return GatedFeedForwardTrace(x=x2, gate_pre=gate_pre, gate=gate, up=up, h=h, y=y)

    def _bias(self) -> bool | str:
        """True or False when all three biases are there or none, else which: ``"b+c"``."""
        has = [n for n in ("b", "c", "b2") if getattr(self, n) is not None]
        return len(has) == 3 if len(has) in (0, 3) else "+".join(has)

    def __repr__(self) -> str:
        return (f"GatedFeedForward(d_model={self.d_model}, d_ff={self.d_ff}, "
                f"variant={self.variant!r}, bias={self._bias()!r}, dtype={self.dtype})")
