"""What a token costs in a mixture of experts with zero-computation experts (LongCat-Flash):
the FFN FLOPs of the real experts it chose, token by token, and their mean over the tokens."""

from __future__ import annotations

import numpy as np

from ffn import _validate as check
from ffn.counting import count_flops

__all__ = ["expected_flops", "token_flops"]


def token_flops(chosen: object, n_experts: int, d_model: int, d_ff: int,
                gated: bool = True) -> np.ndarray:
    """Each token's routed-expert FLOPs ``(...)``: ``count_flops`` of one expert times the
    real experts among its ``chosen`` ``(..., top_k)``; an index ``>= n_experts`` is a zero
    expert, which costs nothing (its weight times the row is ``d_model`` multiplies, not
    counted, as ``count_flops`` counts no weighting either)."""
    n_experts = check.positive_int(n_experts, "n_experts")
    picks = np.asarray(chosen)
    if picks.ndim == 0 or not np.issubdtype(picks.dtype, np.integer):
        raise TypeError(f"chosen must be an integer array of experts (..., top_k), got shape "
                        f"{picks.shape} and dtype {picks.dtype}")
    if picks.size and picks.min() < 0:
        raise ValueError(f"chosen must hold experts >= 0, got {picks.min()}")
    real = np.sum(picks < n_experts, axis=-1)  # (...): real experts per token
    return real * count_flops(d_model, d_ff, gated=gated)  # type: ignore[no-any-return]


def expected_flops(chosen: object, n_experts: int, d_model: int, d_ff: int,
                   gated: bool = True) -> float:
    """The mean of ``token_flops`` over the tokens: what a token costs on average under this
    routing; a ValueError for no tokens."""
    flops = token_flops(chosen, n_experts, d_model, d_ff, gated)
    if flops.size == 0:
        raise ValueError("chosen has no tokens: their mean cost is undefined")
    return float(flops.mean())
