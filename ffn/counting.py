"""Counting a feed-forward block: parameters, FLOPs, LLaMA's hidden width, widths for a budget.

Attention's projections are counted too, to give the FFN's share of a transformer layer.
"""

from __future__ import annotations

from ffn._validate import check_bool, check_positive_int

__all__ = [
    "count_attention_parameters",
    "count_flops",
    "count_moe_flops",
    "count_moe_parameters",
    "count_parameters",
    "largest_d_ff",
    "llama_d_ff",
]


def count_parameters(d_model: int, d_ff: int, bias: bool = True, gated: bool = False) -> int:
    """Number of trainable parameters in a feed-forward block.

    Ungated, ``W1`` has ``d_model * d_ff`` entries and ``W2`` has ``d_ff * d_model``;
    the biases add ``d_ff`` (``b1``) and ``d_model`` (``b2``). A gated block (GLU,
    SwiGLU, ...) has a third matrix of shape ``(d_model, d_ff)`` for the gate, with its
    own ``d_ff`` bias.

    Raises:
        TypeError, ValueError: for arguments of the wrong type or non-positive sizes.
    """
    d_model = check_positive_int(d_model, "d_model")
    d_ff = check_positive_int(d_ff, "d_ff")
    n_in = 2 if check_bool(gated, "gated") else 1  # matrices d_model -> d_ff
    weights = (n_in + 1) * d_model * d_ff  # the input matrices and W2
    biases = n_in * d_ff + d_model if check_bool(bias, "bias") else 0
    return weights + biases


def count_flops(
    d_model: int, d_ff: int, n_tokens: int = 1, gated: bool = False, backward: bool = False
) -> int:
    """Floating-point operations of the block's matrix products for ``n_tokens`` tokens.

    A product of an ``(n, k)`` and a ``(k, m)`` matrix costs ``2 * n * k * m`` FLOPs
    (one multiply and one add per term). The forward pass does one such product per
    weight matrix; the backward pass does two per matrix (the gradient of the input
    and of the weight), so forward plus backward costs three times the forward pass.
    Biases, activations and the gate's elementwise product are not counted: they
    are smaller by a factor of about ``d_model``.

    Raises:
        TypeError, ValueError: for arguments of the wrong type or non-positive sizes.
    """
    d_model = check_positive_int(d_model, "d_model")
    d_ff = check_positive_int(d_ff, "d_ff")
    n_tokens = check_positive_int(n_tokens, "n_tokens")
    n_matrices = 3 if check_bool(gated, "gated") else 2
    forward = n_matrices * 2 * n_tokens * d_model * d_ff
    return 3 * forward if check_bool(backward, "backward") else forward


def llama_d_ff(d_model: int, multiple_of: int = 256) -> int:
    """Hidden width of LLaMA's SwiGLU block: ``8/3 * d_model``, rounded up to a multiple.

    LLaMA starts from the ungated ``4 * d_model``, takes two thirds of it (so the three
    gated matrices hold as many weights as two ungated ones would) and rounds up to a
    multiple of ``multiple_of`` for efficient hardware tiles. Integer arithmetic as in
    Meta's reference code: ``int(2 * 4 * d_model / 3)``, then round up.
    """
    d_model = check_positive_int(d_model, "d_model")
    multiple_of = check_positive_int(multiple_of, "multiple_of")
    hidden = int(2 * (4 * d_model) / 3)
    return multiple_of * -(-hidden // multiple_of)  # ceiling division


def count_attention_parameters(d_model: int, bias: bool = True, kv_dim: int | None = None) -> int:
    """Parameters of one attention sublayer's four projections: query, key, value, output.

    Each projection is a ``(d_model, d_model)`` matrix plus, with biases, a ``d_model``
    bias: ``4 * d_model**2 + 4 * d_model`` in all. The number of heads does not matter:
    the heads split the ``d_model`` columns among themselves. LayerNorm is not counted.
    With grouped-query attention, key and value are ``(d_model, kv_dim)`` instead.

    Raises:
        TypeError, ValueError: for arguments of the wrong type or non-positive sizes.
    """
    d_model = check_positive_int(d_model, "d_model")
    kv = d_model if kv_dim is None else check_positive_int(kv_dim, "kv_dim")
    biases = 2 * (d_model + kv) if check_bool(bias, "bias") else 0
    return 2 * d_model * (d_model + kv) + biases


def count_moe_parameters(d_model: int, d_ff: int, n_experts: int, top_k: int | None = None,
                         bias: bool = True, gated: bool = False) -> int:
    """Parameters of a mixture of experts: ``n_experts`` blocks and a router.

    Each expert has ``count_parameters(d_model, d_ff, bias, gated)``; the router is a
    ``(d_model, n_experts)`` matrix, no bias. With ``top_k``, only what one token uses:
    ``top_k`` experts and the router.

    Raises:
        TypeError, ValueError: for arguments of the wrong type, non-positive sizes, or a
            ``top_k`` above ``n_experts``.
    """
    n_experts = check_positive_int(n_experts, "n_experts")
    used = n_experts if top_k is None else _check_top_k(top_k, n_experts)
    return used * count_parameters(d_model, d_ff, bias, gated) + d_model * n_experts


def count_moe_flops(d_model: int, d_ff: int, n_experts: int, top_k: int, n_tokens: int = 1,
                    gated: bool = False, backward: bool = False) -> int:
    """FLOPs of a mixture of experts' matrix products: the router's and ``top_k`` experts'.

    As ``count_flops`` for each of the ``top_k`` experts a token uses, plus the router's
    ``(d_model, n_experts)`` product, ``2 * d_model * n_experts`` per token forward.

    Raises:
        TypeError, ValueError: as for ``count_moe_parameters``.
    """
    top_k = _check_top_k(top_k, check_positive_int(n_experts, "n_experts"))
    experts = top_k * count_flops(d_model, d_ff, n_tokens, gated, backward)
    router = 2 * n_tokens * d_model * n_experts  # d_model, n_tokens checked by count_flops
    return experts + (3 * router if backward else router)


def _check_top_k(top_k: object, n_experts: int) -> int:
    top_k = check_positive_int(top_k, "top_k")
    if top_k > n_experts:
        raise ValueError(f"top_k must be at most n_experts = {n_experts}, got {top_k}")
    return top_k


def largest_d_ff(budget: int, d_model: int, bias: bool = True, gated: bool = False) -> int:
    """The largest hidden width whose block fits a parameter budget.

    The largest ``d_ff`` with ``count_parameters(d_model, d_ff, bias, gated) <= budget``.
    The count grows by ``(n + 1) * d_model + n * bias`` per unit of ``d_ff`` (``n`` input
    matrices: 1, or 2 when gated), on top of ``d_model`` for ``b2``, so this is a floor
    division.

    Raises:
        TypeError, ValueError: for arguments of the wrong type or non-positive sizes.
    """
    budget = check_positive_int(budget, "budget")
    d_model = check_positive_int(d_model, "d_model")
    n_in = 2 if check_bool(gated, "gated") else 1
    with_bias = check_bool(bias, "bias")
    per_unit = (n_in + 1) * d_model + (n_in if with_bias else 0)  # cost of one more d_ff
    fixed = d_model if with_bias else 0  # b2 does not grow with d_ff
    d_ff = (budget - fixed) // per_unit
    if d_ff < 1:
        smallest = count_parameters(d_model, 1, bias=with_bias, gated=n_in == 2)
        raise ValueError(
            f"budget {budget} is below the {smallest} parameters of a block with d_ff = 1")
    return d_ff
