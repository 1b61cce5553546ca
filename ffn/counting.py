"""Counting a feed-forward block (and attention, for the FFN's share): parameters and FLOPs.

Every function raises TypeError or ValueError for an argument of the wrong type or size.
"""

from __future__ import annotations

from ffn import _validate as check


def count_parameters(d_model: int, d_ff: int, bias: bool = True, gated: bool = False) -> int:
    """Trainable parameters of a block: ``W1``, ``W2`` (and a gate's ``V``), and their biases."""
    d_model = check.positive_int(d_model, "d_model")
    d_ff = check.positive_int(d_ff, "d_ff")
    n_in = 2 if check.boolean(gated, "gated") else 1  # matrices d_model -> d_ff
    weights = (n_in + 1) * d_model * d_ff  # the input matrices and W2
    biases = n_in * d_ff + d_model if check.boolean(bias, "bias") else 0
    return weights + biases


def count_flops(
    d_model: int, d_ff: int, n_tokens: int = 1, gated: bool = False, backward: bool = False
) -> int:
    """FLOPs of the block's matrix products for ``n_tokens`` tokens (``backward``: plus backward).

    An ``(n, k) @ (k, m)`` product costs ``2 n k m`` (a multiply and an add per term); backward
    does two per weight (for the input and the weight). Biases and activations are left out:
    about ``d_model`` times smaller.
    """
    d_model = check.positive_int(d_model, "d_model")
    d_ff = check.positive_int(d_ff, "d_ff")
    n_tokens = check.positive_int(n_tokens, "n_tokens")
    n_matrices = 3 if check.boolean(gated, "gated") else 2
    forward = n_matrices * 2 * n_tokens * d_model * d_ff
    return 3 * forward if check.boolean(backward, "backward") else forward


def llama_d_ff(d_model: int, multiple_of: int = 256) -> int:
    """LLaMA's SwiGLU hidden width: ``int(2 * 4 * d_model / 3)`` rounded up to ``multiple_of``."""
    d_model = check.positive_int(d_model, "d_model")
    multiple_of = check.positive_int(multiple_of, "multiple_of")
    # Two thirds of 4 * d_model: three gated matrices hold what two ungated ones would.
    hidden = int(2 * (4 * d_model) / 3)  # integer arithmetic as in Meta's reference code
    return multiple_of * -(-hidden // multiple_of)  # ceiling division


def count_attention_parameters(d_model: int, bias: bool = True, kv_dim: int | None = None) -> int:
    """Parameters of one attention sublayer's query, key, value and output projections.

    Heads split the ``d_model`` columns, so their number does not matter; with grouped-query
    attention, key and value are ``(d_model, kv_dim)``.
    """
    d_model = check.positive_int(d_model, "d_model")
    kv = d_model if kv_dim is None else check.positive_int(kv_dim, "kv_dim")
    biases = 2 * (d_model + kv) if check.boolean(bias, "bias") else 0
    return 2 * d_model * (d_model + kv) + biases


def count_moe_parameters(d_model: int, d_ff: int, n_experts: int, top_k: int | None = None,
                         bias: bool = True, gated: bool = False) -> int:
    """Parameters of ``n_experts`` blocks and their ``(d_model, n_experts)`` router.

    With ``top_k``, only what one token uses: ``top_k`` experts and the router.

    Raises:
        ValueError: also for a ``top_k`` above ``n_experts``.
    """
    n_experts = check.positive_int(n_experts, "n_experts")
    used = n_experts if top_k is None else check_top_k(top_k, n_experts)
    return used * count_parameters(d_model, d_ff, bias, gated) + d_model * n_experts


def count_moe_flops(d_model: int, d_ff: int, n_experts: int, top_k: int, n_tokens: int = 1,
                    gated: bool = False, backward: bool = False) -> int:
    """FLOPs of the router's product and of the ``top_k`` experts each token uses."""
    top_k = check_top_k(top_k, check.positive_int(n_experts, "n_experts"))
    experts = top_k * count_flops(d_model, d_ff, n_tokens, gated, backward)
    router = 2 * n_tokens * d_model * n_experts  # d_model, n_tokens checked by count_flops
    return experts + (3 * router if backward else router)


def check_top_k(top_k: object, n_experts: int) -> int:
    """``top_k`` if it is an int in ``[1, n_experts]``."""
    top_k = check.positive_int(top_k, "top_k")
    if top_k > n_experts:
        raise ValueError(f"top_k must be at most n_experts = {n_experts}, got {top_k}")
    return top_k


def largest_d_ff(budget: int, d_model: int, bias: bool = True, gated: bool = False) -> int:
    """The largest ``d_ff`` with ``count_parameters(d_model, d_ff, bias, gated) <= budget``.

    Raises:
        ValueError: also if even ``d_ff = 1`` is over the budget.
    """
    budget = check.positive_int(budget, "budget")
    d_model = check.positive_int(d_model, "d_model")
    n_in = 2 if check.boolean(gated, "gated") else 1
    with_bias = check.boolean(bias, "bias")
    per_unit = (n_in + 1) * d_model + (n_in if with_bias else 0)  # cost of one more d_ff
    fixed = d_model if with_bias else 0  # b2 does not grow with d_ff
    d_ff = (budget - fixed) // per_unit
    if d_ff < 1:
        smallest = count_parameters(d_model, 1, bias=with_bias, gated=n_in == 2)
        raise ValueError(
            f"budget {budget} is below the {smallest} parameters of a block with d_ff = 1")
    return d_ff
