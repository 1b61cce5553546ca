"""Llama 4's router: the sigmoid of the chosen logit scales the expert's input, not its output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn._layer import forward_pass, one_thread, quiet
from ffn._validate import FloatArray
from ffn.moe import Expert, MixtureOfExperts, ran_grads

__all__ = ["InputScaledMoE"]


class InputScaledMoE(MixtureOfExperts):
    """``y = sum_j expert_j(s_j * x) + sum_s shared_s(x)``, ``s_j = sigmoid(z_j)`` (Llama 4).

    The ``top_k`` largest logits ``z = x @ router`` choose the experts (Llama 4: one), each
    chosen expert runs on its row times the sigmoid of its logit, with no renormalisation,
    and the shared experts run on every row unscaled. ``route`` gives ``MixtureOfExperts``'
    sigmoid scores (``score="sigmoid"``, ``normalize=False``): the same ``s``, used on the
    input. An expert is not homogeneous (``silu(s a) * s b`` is not ``s * silu(a) * b``), so
    this is another function than scaling the output. transformers runs every expert, the
    unchosen ones on a zero row; here they do not run, the same sum for experts that map 0 to
    0, as Llama 4's bias-free SwiGLU experts do. ``grads`` as ``MixtureOfExperts``'.

    Args:
        router: router matrix ``(d_model, n_experts)`` (the transpose of PyTorch's weight).
        experts: ``n_experts`` blocks of one kind, ``d_model``, ``d_ff`` and dtype.
        top_k: how many experts each row uses (Llama 4: 1).
        shared_experts: blocks every row uses with weight 1 (Llama 4: one SwiGLU).

    Raises:
        TypeError, ValueError: as ``MixtureOfExperts``.
    """

    def __init__(self, router: object, experts: Sequence[Expert], top_k: int = 1, *,
                 shared_experts: Sequence[Expert] = ()) -> None:
        super().__init__(router, experts, top_k, normalize=False, score="sigmoid",
                         shared_experts=shared_experts)

    @classmethod
    def random(cls, d_model: int, d_ff: int, n_experts: int, top_k: int = 1,
               variant: str | None = "swiglu", seed: int | np.integer[Any] | None = 0,
               dtype: DTypeLike = np.float64) -> InputScaledMoE:
        """``MixtureOfExperts.random``'s router and experts with Llama 4's defaults: top-1,
        SwiGLU experts (``variant=None``: GELU ``FeedForward``), no shared expert."""
        moe = MixtureOfExperts.random(d_model, d_ff, n_experts, top_k, variant, seed, dtype)
        return cls(moe.router, list(moe.experts), moe.top_k)

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``sum_j expert_{chosen_j}(s_j * x) + sum_s shared_s(x)``, x ``(..., d_model)``."""
        x = self._flatten(x)  # (N, d_model)
        p, chosen, share = self._route(x)  # share: the chosen sigmoid scores (N, top_k)
        y = np.zeros_like(x)  # (N, d_model)
        for shared in self.shared_experts:  # every row, unscaled
            y += shared.forward(x)  # (N, d_model)
        for i, expert in enumerate(self.experts):
            rows, slot = np.nonzero(chosen == i)
            if rows.size:  # the score scales what goes in
                y[rows] += expert.forward(share[rows, slot, None] * x[rows])  # (n_i, d_model)
        self._save_for_backward(x, p, chosen, share)
        return self._unflatten(y)  # (..., d_model)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Sets ``grads`` and returns ``dL/dx`` from ``dL/dy``, through each expert's input
        ``u = s * x``: ``dL/dx = s * dL/du`` plus the score's part, ``dL/ds = sum(dL/du * x)``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, p, chosen, share = self._saved_tensors
        dx = np.zeros_like(x)  # (N, d_model)
        dshare = np.zeros_like(share)  # (N, top_k)
        expert_grads: dict[str, FloatArray | None] = {}
        for i, expert in enumerate(self.experts):
            rows, slot = np.nonzero(chosen == i)
            if rows.size:  # u = s * x: dL/ds = sum(dL/du * x), dL/dx = s * dL/du
                s = share[rows, slot, None]  # (n_i, 1)
                expert.forward(s * x[rows])  # again: its own last pass may be another's
                du = expert.backward(dy[rows])  # (n_i, d_model)
                dshare[rows, slot] = np.sum(du * x[rows], axis=-1)
                dx[rows] += s * du
            expert_grads.update({f"experts.{i}.{name}": g
                                 for name, g in ran_grads(expert, rows.size > 0).items()})
        self._shared_backward(x, dy, dx, expert_grads)
        # the chosen sigmoids, not renormalised: MixtureOfExperts' chain rule for them
        router_grads, dx_router = self._router_backward(x, p, chosen, share, dshare)
        self._set_grads(**router_grads, **expert_grads)
        return self._unflatten(dx + dx_router)  # dL/dx: (..., d_model)

    def __repr__(self) -> str:
        return (f"InputScaledMoE(n_experts={self.n_experts}, top_k={self.top_k}, "
                f"experts={type(self.experts[0]).__name__}, d_model={self.d_model}, "
                f"d_ff={self.d_ff}, shared_experts={len(self.shared_experts)}, "
                f"dtype={self.dtype})")
