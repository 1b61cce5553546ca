"""A mixture of experts' blocks: what they must share, checked, and the gradients of one that
no row chose."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ffn import _validate as check
from ffn._validate import FloatArray
from ffn.feedforward import FeedForward
from ffn.gated import GatedFeedForward

__all__ = ["Expert", "check_experts", "check_gate", "check_shared", "kind", "ran_grads"]

Expert = FeedForward | GatedFeedForward


def kind(expert: Expert) -> str:
    """``"FeedForward('gelu')"``, ``"GatedFeedForward('swiglu')"``: what experts must share."""
    what = expert.activation if isinstance(expert, FeedForward) else expert.variant
    return f"{type(expert).__name__}({what!r})"


def check_experts(value: object) -> tuple[Expert, ...]:
    """``value`` checked to be a non-empty list or tuple of FFN blocks of one kind, ``d_model``,
    ``d_ff`` and dtype, as a tuple."""
    experts = tuple(_blocks(value, "experts", non_empty=True))
    first = experts[0]
    for i, e in enumerate(experts):
        for what, mine, theirs in (("kind", kind(e), kind(first)),
                                   ("d_model", e.d_model, first.d_model),
                                   ("d_ff", e.d_ff, first.d_ff), ("dtype", e.dtype, first.dtype)):
            if mine != theirs:
                error = TypeError if what == "dtype" else ValueError
                raise error(f"experts must share one {what}: experts[0] has {theirs}, "
                            f"experts[{i}] has {mine}")
    return experts


def _blocks(value: object, name: str, non_empty: bool = False) -> Sequence[Expert]:
    """``value`` checked to be a list or tuple of FFN blocks (and not empty, if asked)."""
    if not isinstance(value, (list, tuple)) or (non_empty and not value):
        what = "a non-empty list or tuple" if non_empty else "a list or tuple"
        raise TypeError(f"{name} must be {what}, got {check.describe(value)}")
    for i, e in enumerate(value):
        if not isinstance(e, (FeedForward, GatedFeedForward)):
            raise TypeError(f"{name}[{i}] must be a FeedForward or GatedFeedForward, "
                            f"got {type(e).__name__}")
    return value


def check_shared(shared: object, d_model: int, dtype: np.dtype[Any]) -> tuple[Expert, ...]:
    """The shared experts as a tuple, each an FFN block of ``d_model`` and ``dtype``."""
    blocks = tuple(_blocks(shared, "shared_experts"))
    for j, e in enumerate(blocks):
        if e.d_model != d_model:
            raise ValueError(f"shared_experts[{j}] has d_model {e.d_model} but the experts "
                             f"{d_model}")
        if e.dtype != dtype:
            raise TypeError(f"shared_experts[{j}] has dtype {e.dtype} but the experts {dtype}")
    return blocks


def ran_grads(expert: Expert, ran: bool) -> dict[str, FloatArray | None]:
    """``expert``'s gradients if it ran on some rows, else zeros (None for an absent bias)."""
    if ran:
        return expert.grads
    return {name: None if w is None else np.zeros_like(w)
            for name, w in expert.named_parameters().items()}


def check_gate(gate: object, shared: tuple[Expert, ...], d_model: int,
               dtype: np.dtype[Any]) -> FloatArray | None:
    """``shared_gate`` checked: None, or ``(d_model, n_shared)`` of the experts' dtype."""
    if gate is None:
        return None
    g = check.float_array(gate, "shared_gate")
    if g.shape != (d_model, len(shared)) or not shared:
        raise ValueError(f"shared_gate must have shape (d_model, n_shared) = ({d_model}, "
                         f"{len(shared)}), one column a shared expert, got shape {g.shape}")
    if g.dtype != dtype:
        raise TypeError(f"shared_gate has dtype {g.dtype} but the experts {dtype}")
    return g
