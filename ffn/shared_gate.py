"""Qwen2-MoE's shared expert behind a sigmoid gate: ``moe(x) + sigmoid(x @ gate) * shared(x)``."""

from __future__ import annotations

import numpy as np

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, quiet
from ffn._validate import FloatArray
from ffn.activations import sigmoid
from ffn.feedforward import FeedForward
from ffn.gated import GatedFeedForward
from ffn.moe import Expert, MixtureOfExperts

__all__ = ["GatedSharedMoE"]


class GatedSharedMoE(Layer):
    """``y = moe(x) + g * shared_expert(x)``, ``g = sigmoid(x @ shared_gate)`` a row (Qwen2-MoE).

    The routed part is ``moe``'s own (Qwen2-MoE: a softmax router, top-k, renormalised or not
    as ``norm_topk_prob`` says: ``moe.normalize``). One shared expert runs on every row, scaled
    by a learned scalar gate per row in (0, 1), where DeepSeek-V3's shared experts have weight
    1. ``grads`` has ``moe``'s keys, ``"shared_expert.{name}"`` and ``"shared_gate"``.

    Args:
        moe: the routed experts, a ``MixtureOfExperts``.
        shared_expert: an FFN block of ``moe``'s ``d_model`` and dtype (any width).
        shared_gate: ``(d_model, 1)``, the transpose of PyTorch's ``shared_expert_gate.weight``.

    Raises:
        TypeError: for a ``moe`` or ``shared_expert`` of the wrong kind, or dtypes that differ.
        ValueError: for shapes that do not fit ``moe.d_model``.
    """

    _caller = "moe"
    shared_gate: FloatArray  # (d_model, 1), a read-only copy

    def __init__(self, moe: MixtureOfExperts, shared_expert: Expert,
                 shared_gate: object) -> None:
        if not isinstance(moe, MixtureOfExperts):
            raise TypeError(f"moe must be a MixtureOfExperts, got {type(moe).__name__}")
        if not isinstance(shared_expert, (FeedForward, GatedFeedForward)):
            raise TypeError(f"shared_expert must be a FeedForward or GatedFeedForward, got "
                            f"{type(shared_expert).__name__}")
        if shared_expert.d_model != moe.d_model:
            raise ValueError(f"shared_expert has d_model {shared_expert.d_model} but moe "
                             f"{moe.d_model}")
        if shared_expert.dtype != moe.dtype:
            raise TypeError(f"shared_expert has dtype {shared_expert.dtype} but moe {moe.dtype}")
        g = check.float_array(shared_gate, "shared_gate")
        if g.shape != (moe.d_model, 1):
            raise ValueError(f"shared_gate must have shape (d_model, 1) = ({moe.d_model}, 1), "
                             f"got shape {g.shape}")
        if g.dtype != moe.dtype:
            raise TypeError(f"shared_gate has dtype {g.dtype} but moe {moe.dtype}")
        super().__init__(moe.dtype, moe.d_model, moe.d_model, "d_model", {"shared_gate": g})
        self.moe, self.shared_expert = moe, shared_expert
        self.d_model = moe.d_model

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """``moe``'s, then ``shared_expert.{name}``, then ``shared_gate``."""
        shared = self.shared_expert.named_parameters()
        return {**self.moe.named_parameters(),
                **{f"shared_expert.{name}": p for name, p in shared.items()},
                "shared_gate": self.shared_gate}

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``moe(x) + sigmoid(x @ shared_gate) * shared_expert(x)``, x ``(..., d_model)``."""
        x = self._flatten(x)  # (N, d_model)
        g = sigmoid(x @ self.shared_gate)  # (N, 1): one gate a row
        shared = self.shared_expert.forward(x)  # (N, d_model)
        y = self.moe.forward(x) + g * shared  # (N, d_model)
        self._save_for_backward(x, g)
        return self._unflatten(y)  # (..., d_model)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``, from ``dL/dy``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, g = self._saved_tensors
        self.moe.forward(x)  # again: their own last passes may be another's
        dx = self.moe.backward(dy)  # (N, d_model)
        shared = self.shared_expert.forward(x)  # (N, d_model), again: as moe above
        dx = dx + self.shared_expert.backward(g * dy)  # (N, d_model)
        dgate_pre = np.sum(dy * shared, axis=-1, keepdims=True) * g * (1 - g)  # (N, 1)
        dx = dx + dgate_pre @ self.shared_gate.T  # (N, d_model)
        self._set_grads(**self.moe.grads, **{f"shared_expert.{name}": grad for name, grad in
                                             self.shared_expert.grads.items()},
                        shared_gate=x.T @ dgate_pre)
        return self._unflatten(dx)  # (..., d_model)

    def __repr__(self) -> str:
        return (f"GatedSharedMoE({self.moe!r}, shared_expert="
                f"{type(self.shared_expert).__name__}(d_ff={self.shared_expert.d_ff}))")
