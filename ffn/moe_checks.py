"""``MixtureOfExperts``' arguments checked (the blocks' own checks are ``ffn.experts``'): the
router, ``top_k``, the routing options, the zero-computation experts and the token table."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ffn import _validate as check
from ffn import routing
from ffn._validate import FloatArray
from ffn.experts import Expert, check_experts, check_shared
from ffn.routing import SCORES, check_top_k

__all__ = ["Options", "check_options"]


class Options(NamedTuple):
    """``MixtureOfExperts``' arguments, checked and normalised."""

    router: FloatArray  # (d_model, n_experts + zero_experts)
    experts: tuple[Expert, ...]
    top_k: int
    normalize: bool
    score: str
    bias: FloatArray | None  # (n_experts + zero_experts,)
    n_groups: int
    top_groups: int
    scale: float
    shared_experts: tuple[Expert, ...]
    zero_experts: int
    table: np.ndarray | None  # (vocab_size, top_k), read-only


def check_options(router: object, experts: object, top_k: object, normalize: object,
                  score: object, bias: object, n_groups: object, top_groups: object,
                  scale: object, shared_experts: object, zero_experts: object = 0,
                  table: object = None) -> Options:
    """The arguments checked in their order: ``router`` and ``bias`` (or None) arrays of the
    experts' dtype with a column (an entry) for each expert, the zero experts included; a
    ``table`` refuses a choice ``bias`` and groups, which it would leave unused."""
    experts = check_experts(experts)
    first = experts[0]
    zero = check.positive_int(zero_experts, "zero_experts", zero_ok=True)
    n_choices = len(experts) + zero  # what the router scores: the experts, then the zero ones
    shape = np.shape(router) if isinstance(router, np.ndarray) else None
    if zero and shape is not None and shape != (first.d_model, n_choices):
        raise ValueError(f"router has shape {shape} but n_experts + zero_experts is "
                         f"{len(experts)} + {zero} = {n_choices}: router must be (d_model, "
                         f"n_experts + zero_experts) = ({first.d_model}, {n_choices})")
    w = check.params({"router": router}, {"router": "d_model n_experts"},
                     known={"d_model": first.d_model, "n_experts": n_choices})[0]
    if (r := w["router"]) is None or r.dtype != first.dtype:
        raise TypeError(f"router has dtype {None if r is None else r.dtype} but the experts "
                        f"{first.dtype}")
    top_k = check_top_k(top_k, n_choices)
    normalize = check.boolean(normalize, "normalize")
    score = check.choice(score, "score", SCORES)
    choice_bias = None if bias is None else routing.expert_vector(bias, "bias", n_choices,
                                                                    first.dtype)
    n_groups, top_groups = routing.check_groups(n_groups, top_groups, n_choices, top_k)
    scale = check.real(scale, "scale", 0.0, 1e6, high_open=False, low_open=True)
    shared = check_shared(shared_experts, first.d_model, first.dtype)
    hashed = None if table is None else routing.check_table(table, n_choices)
    if hashed is not None:
        if hashed.shape[1] != top_k:
            raise ValueError(f"table gives each token {hashed.shape[1]} experts but top_k is "
                             f"{top_k}")
        if choice_bias is not None or n_groups > 1:
            raise ValueError("a table chooses the experts: a choice bias or groups would "
                             "go unused, give neither")
    return Options(r, experts, top_k, normalize, score, choice_bias, n_groups, top_groups,
                   scale, shared, zero, hashed)
