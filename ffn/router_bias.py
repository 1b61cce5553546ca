"""gpt-oss's router: a learned bias on the logits, and a softmax over the chosen logits only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import random_weights
from ffn._validate import FloatArray
from ffn.clamped import ClampedSwiGLU
from ffn.moe import Expert, MixtureOfExperts, expert_vector

__all__ = ["RouterBiasMoE"]


class RouterBiasMoE(MixtureOfExperts):
    """A mixture of experts whose logits are ``z = x @ router + router_bias`` (gpt-oss).

    The ``top_k`` largest ``z`` choose the experts (ties: the lower index, where
    ``torch.topk`` may take others) and a softmax over those ``top_k`` logits alone weighs
    their outputs: ``y = sum_j softmax(z_chosen)_j * expert_j(x)``. That is
    ``MixtureOfExperts``' default routing (a softmax, renormalised over the chosen) with the
    bias inside the logits, so it moves both the choice and the weights.
    Unlike DeepSeek-V3's choice ``bias``, ``router_bias`` is a parameter: ``grads`` has
    ``"router_bias"`` beside ``"router"`` and the experts' (gpt-oss's experts are
    ``ClampedSwiGLU`` blocks). ``load_balancing_grad`` is the loss's gradient for ``router``
    alone, as ``MixtureOfExperts``' (the loss itself sees the bias).

    Args:
        router: router matrix ``(d_model, n_experts)`` (the transpose of PyTorch's weight).
        router_bias: ``(n_experts,)``, added to every row's logits.
        experts: ``n_experts`` blocks of one kind, ``d_model``, ``d_ff`` and dtype.
        top_k: how many experts each row uses (gpt-oss: 4).

    Raises:
        TypeError, ValueError: as ``MixtureOfExperts``, and for a ``router_bias`` not of shape
            ``(n_experts,)``, not of the experts' dtype or not finite.
    """

    router_bias: FloatArray  # (n_experts,), a read-only copy

    def __init__(self, router: object, router_bias: object, experts: Sequence[Expert],
                 top_k: int = 4) -> None:
        super().__init__(router, experts, top_k)
        self.router_bias = expert_vector(router_bias, "router_bias", self.n_experts, self.dtype)

    @classmethod
    def random(cls, d_model: int, d_ff: int, n_experts: int, top_k: int = 4,
               variant: str | None = None, seed: int | np.integer[Any] | None = 0,
               dtype: DTypeLike = np.float64) -> RouterBiasMoE:
        """A random router and bias (``random_weights``) and ``n_experts`` random
        ``ClampedSwiGLU`` experts (zero biases); ``variant`` only ``"clamped_swiglu"``."""
        d_model, n_experts = check.positive_int(d_model, "d_model"), check.positive_int(
            n_experts, "n_experts")
        if variant is not None:
            check.choice(variant, "variant", ("clamped_swiglu",))
        seeds = np.random.default_rng(check.seed(seed)).integers(2**32, size=n_experts + 1)
        router, bias = random_weights(seeds[0], dtype, (d_model, n_experts), (1, n_experts))
        experts = [ClampedSwiGLU.random(d_model, d_ff, seed=s, dtype=dtype) for s in seeds[1:]]
        return cls(router, bias[0], experts, top_k=top_k)

    def _logits(self, x: FloatArray) -> FloatArray:
        logits: FloatArray = x @ self.router + self.router_bias  # (N, n_experts)
        return logits

    def _router_grads(self, x: FloatArray, dlogits: FloatArray) -> dict[str, FloatArray]:
        # z = x @ router + router_bias: the bias's gradient sums dL/dz over the rows
        return {**super()._router_grads(x, dlogits), "router_bias": dlogits.sum(axis=0)}

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """``router``, ``router_bias``, then the experts' as ``experts.{i}.{name}``."""
        params = super().named_parameters()
        return {"router": params.pop("router"), "router_bias": self.router_bias, **params}

    def __repr__(self) -> str:
        return (f"RouterBiasMoE(n_experts={self.n_experts}, top_k={self.top_k}, "
                f"experts={type(self.experts[0]).__name__}, d_model={self.d_model}, "
                f"d_ff={self.d_ff}, dtype={self.dtype})")
