"""The transformer feed-forward block ``y = act(x @ W1 + b1) @ W2 + b2``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, or_zero, quiet, random_weights
from ffn._validate import FloatArray
from ffn.activations import ACTIVATIONS, FUNCTIONS

AXES = {"W1": "d_model d_ff", "b1": "d_ff", "W2": "d_ff d_model", "b2": "d_model"}


@dataclass(frozen=True, eq=False)
class FeedForwardTrace:
    """The arrays of one forward pass, shaped like the input, read-only (``y`` is yours)."""

    x: FloatArray  # (..., d_model), the input in the block's dtype
    h_pre: FloatArray  # (..., d_ff), x @ W1 + b1
    h: FloatArray  # (..., d_ff), act(h_pre)
    y: FloatArray  # (..., d_model), h @ W2 + b2


class FeedForward(Layer):
    """The position-wise feed-forward block: ``y = act(x @ W1 + b1) @ W2 + b2`` on every row.

    ``W1`` and ``W2`` are the transposes of PyTorch's ``nn.Linear.weight``. The weights share
    one dtype, float32 or float64 (bool, int and float16 data become float64).

    Args:
        W1: first weight matrix ``(d_model, d_ff)``.
        b1: first bias ``(d_ff,)``, or None.
        W2: second weight matrix ``(d_ff, d_model)``.
        b2: second bias ``(d_model,)``, or None.
        activation: one of ``ffn.ACTIVATIONS``: ``"relu"``, ``"gelu"`` (exact),
            ``"gelu_tanh"``, ``"silu"``, ``"relu2"`` (squared ReLU).

    Raises:
        TypeError: for weights that are not real numbers, or of two dtypes.
        ValueError: for shapes that do not fit (the message shows them), an unknown activation.
    """

    _caller = "block"
    W1: FloatArray  # (d_model, d_ff); the weights are read-only copies
    b1: FloatArray | None  # (d_ff,)
    W2: FloatArray  # (d_ff, d_model)
    b2: FloatArray | None  # (d_model,)

    def __init__(self, W1: object, b1: object, W2: object, b2: object,
                 activation: str = "gelu") -> None:
        self.activation = check.choice(activation, "activation", ACTIVATIONS)
        self.act, self.act_grad = FUNCTIONS[activation]
        w, size = check.params({"W1": W1, "b1": b1, "W2": W2, "b2": b2}, AXES, ("b1", "b2"))
        super().__init__(check.shared_dtype(w), size["d_model"], size["d_model"], "d_model", w)
        self.d_model, self.d_ff = size["d_model"], size["d_ff"]

    @classmethod
    def random(cls, d_model: int, d_ff: int, activation: str = "gelu",
               seed: int | np.integer[Any] | None = 0, dtype: DTypeLike = np.float64,
               bias: bool = True) -> FeedForward:
        """Random weights (``random_weights``; ``seed``: int >= 0 or None), zero biases or none."""
        d_model, d_ff = check.widths(d_model, d_ff)
        check.choice(activation, "activation", ACTIVATIONS)  # before drawing anything
        W1, W2 = random_weights(seed, dtype, (d_model, d_ff), (d_ff, d_model))
        b1, b2 = (np.zeros(d_ff, W1.dtype), np.zeros(d_model, W1.dtype)) if check.boolean(
            bias, "bias") else (None, None)
        return cls(W1, b1, W2, b2, activation=activation)

    # --8<-- [start:forward]
    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``y = act(x @ W1 + b1) @ W2 + b2``; ``x`` is ``(..., d_model)``."""
        W1, b1, W2, b2 = self.W1, or_zero(self.b1), self.W2, or_zero(self.b2)
        x = self._flatten(x)  # (N, d_model)
        h_pre = x @ W1 + b1  # (N, d_ff)
        h = self.act(h_pre)  # (N, d_ff)
        y = h @ W2 + b2  # (N, d_model)
        self._save_for_backward(x, h_pre, h)  # what backward needs
        return self._unflatten(y)  # (..., d_model)
    # --8<-- [end:forward]

    # --8<-- [start:backward]
    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``,
        from ``dL/dy``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, h_pre, h = self._saved_tensors
        dW2 = h.T @ dy  # (d_ff, d_model)
        db2 = dy.sum(axis=0)  # (d_model,)
        dh = dy @ self.W2.T  # (N, d_ff)
        dh_pre = dh * self.act_grad(h_pre)  # (N, d_ff), the chain rule through act
        dW1 = x.T @ dh_pre  # (d_model, d_ff)
        db1 = dh_pre.sum(axis=0)  # (d_ff,)
        self._set_grads(W1=dW1, b1=db1, W2=dW2, b2=db2)
        return self._unflatten(dh_pre @ self.W1.T)  # dL/dx: (..., d_model)
    # --8<-- [end:backward]

    @one_thread
    def forward_trace(self, x: object) -> FeedForwardTrace:
        """Like ``forward``, but return every intermediate array."""
        y = self.forward(x)
        x2, h_pre, h = self._saved_views()
        return FeedForwardTrace(x=x2, h_pre=h_pre, h=h, y=y)

    def __repr__(self) -> str:
        has = [name for name in ("b1", "b2") if getattr(self, name) is not None]
        bias = len(has) == 2 if len(has) != 1 else f"{has[0]} only"
        return (f"{type(self).__name__}(d_model={self.d_model}, d_ff={self.d_ff}, "
                f"activation={self.activation!r}, bias={bias!r}, dtype={self.dtype})")
