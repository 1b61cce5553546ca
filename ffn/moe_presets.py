"""The 2025 routers and the grouped form, as named configurations of ``MixtureOfExperts``.

Each is ``MixtureOfExperts`` with one or two options set, and a name a chapter reads better:
no method of the layer is written again here.

- ``InputScaledMoE``: Llama 4, ``score="sigmoid"``, ``normalize=False``, ``combine="inputs"``;
- ``RouterBiasMoE``: gpt-oss, a ``router_bias`` inside the logits;
- ``GatedSharedMoE``: Qwen2-MoE, a ``MixtureOfExperts`` plus one shared expert behind a
  ``shared_gate``;
- ``GroupedExperts``: a ``MixtureOfExperts`` run with ``grouped=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import random_weights
from ffn.clamped import ClampedSwiGLU
from ffn.experts import Expert
from ffn.feedforward import FeedForward
from ffn.gated import GatedFeedForward
from ffn.moe import MixtureOfExperts

__all__ = ["GatedSharedMoE", "GroupedExperts", "InputScaledMoE", "RouterBiasMoE"]


class InputScaledMoE(MixtureOfExperts):
    """``y = sum_j expert_j(s_j * x) + sum_s shared_s(x)``, ``s_j = sigmoid(z_j)`` (Llama 4).

    ``MixtureOfExperts(router, experts, top_k, normalize=False, score="sigmoid",
    combine="inputs", shared_experts=...)``: the ``top_k`` largest logits choose the experts
    (Llama 4: one), each runs on its row times the sigmoid of its logit, not renormalised, and
    the shared experts run on every row unscaled. An expert is not homogeneous
    (``silu(s a) * s b`` is not ``s * silu(a) * b``), so this is another function than scaling
    the output. transformers runs every expert, the unchosen ones on a zero row; here they do
    not run, the same sum for experts that map 0 to 0, as Llama 4's bias-free SwiGLU experts do.
    """

    def __init__(self, router: object, experts: Sequence[Expert], top_k: int = 1, *,
                 shared_experts: Sequence[Expert] = ()) -> None:
        super().__init__(router, experts, top_k, normalize=False, score="sigmoid",
                         shared_experts=shared_experts, combine="inputs")

    @classmethod
    def random(cls, d_model: int, d_ff: int, n_experts: int, top_k: int = 1,
               variant: str | None = "swiglu", seed: int | np.integer[Any] | None = 0,
               dtype: DTypeLike = np.float64) -> InputScaledMoE:
        """``MixtureOfExperts.random``'s router and experts with Llama 4's defaults: top-1,
        SwiGLU experts (``variant=None``: GELU ``FeedForward``), no shared expert."""
        moe = MixtureOfExperts.random(d_model, d_ff, n_experts, top_k, variant, seed, dtype)
        return cls(moe.router, list(moe.experts), moe.top_k)


class RouterBiasMoE(MixtureOfExperts):
    """A mixture of experts whose logits are ``z = x @ router + router_bias`` (gpt-oss).

    ``MixtureOfExperts(router, experts, top_k, router_bias=router_bias)``: the ``top_k``
    largest ``z`` choose the experts (ties: the lower index, where ``torch.topk`` may take
    others) and a softmax over those ``top_k`` logits alone weighs their outputs, Mixtral's
    rule with the bias inside the logits, so it moves both the choice and the weights. Unlike
    DeepSeek-V3's choice ``bias``, ``router_bias`` is a parameter with a gradient (gpt-oss's
    experts are ``ClampedSwiGLU`` blocks).
    """

    def __init__(self, router: object, router_bias: object, experts: Sequence[Expert],
                 top_k: int = 4) -> None:
        # None here is a missing bias, not MixtureOfExperts' "no bias": refused by name
        super().__init__(router, experts, top_k,
                         router_bias=check.float_array(router_bias, "router_bias"))

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


class GatedSharedMoE(MixtureOfExperts):
    """``y = moe(x) + g * shared_expert(x)``, ``g = sigmoid(x @ shared_gate)`` a row (Qwen2-MoE).

    ``moe``'s router and experts (Qwen2-MoE: a softmax router, top-k, renormalised or not as
    ``norm_topk_prob`` says: ``moe.normalize``) with ``shared_experts=[shared_expert]`` and
    ``shared_gate``: one shared expert on every row, scaled by a learned gate per row in
    (0, 1), where DeepSeek-V3's shared experts have weight 1. The blocks are ``moe``'s own.

    Args:
        moe: the routed experts, a ``MixtureOfExperts`` without shared experts.
        shared_expert: an FFN block of ``moe``'s ``d_model`` and dtype (any width).
        shared_gate: ``(d_model, 1)``, the transpose of PyTorch's ``shared_expert_gate.weight``.
    """

    def __init__(self, moe: MixtureOfExperts, shared_expert: Expert,
                 shared_gate: object) -> None:
        if not isinstance(moe, MixtureOfExperts):
            raise TypeError(f"moe must be a MixtureOfExperts, got {type(moe).__name__}")
        if not isinstance(shared_expert, (FeedForward, GatedFeedForward)):
            raise TypeError(f"shared_expert must be a FeedForward or GatedFeedForward, got "
                            f"{type(shared_expert).__name__}")
        if moe.shared_experts:
            raise ValueError(f"moe has {len(moe.shared_experts)} shared experts already: "
                             "give GatedSharedMoE one without")
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
        super().__init__(**{**moe.options(), "shared_experts": (shared_expert,),
                            "shared_gate": g})


class GroupedExperts(MixtureOfExperts):
    """``moe`` run grouped: the same results and gradients, each expert's rows found by one
    sort of the (row, expert) pairs (``ffn.routing.sort_by_expert``), as grouped GEMM and
    MegaBlocks' dropless MoE find them, not by a mask each. No row is dropped: a segment is as
    long as the router made it. The blocks are ``moe``'s own."""

    _caller = "grouped"

    def __init__(self, moe: MixtureOfExperts) -> None:
        if not isinstance(moe, MixtureOfExperts):
            raise TypeError(f"moe must be a MixtureOfExperts, got {type(moe).__name__}")
        super().__init__(**{**moe.options(), "grouped": True})
