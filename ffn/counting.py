"""Counting a feed-forward block (and attention, for the FFN's share): parameters and FLOPs.

Every function raises TypeError or ValueError for an argument of the wrong type or size.
"""

from __future__ import annotations

from ffn import _validate as check


def count_parameters(d_model: int, d_ff: int, bias: bool = True, gated: bool = False) -> int:
    """Trainable parameters of a block: ``W1``, ``W2`` (and a gate's ``V``), and their biases."""
    return _parameters(*_block_args(d_model, d_ff, bias, gated))


def _block_args(d_model: object, d_ff: object, bias: object,
                gated: object) -> tuple[int, int, bool, bool]:
    """``count_parameters``' arguments checked: positive ints, then bools (``gated`` first)."""
    d_model = check.positive_int(d_model, "d_model")
    d_ff = check.positive_int(d_ff, "d_ff")
    gated = check.boolean(gated, "gated")
    return d_model, d_ff, check.boolean(bias, "bias"), gated


def _parameters(d_model: int, d_ff: int, bias: bool, gated: bool) -> int:
    """``count_parameters`` of checked arguments (a ``ModelDims``' fields, say)."""
    n_in = 2 if gated else 1  # matrices d_model -> d_ff
    weights = (n_in + 1) * d_model * d_ff  # the input matrices and W2
    biases = n_in * d_ff + d_model if bias else 0
    return weights + biases


def count_flops(d_model: int, d_ff: int, n_tokens: int = 1, gated: bool = False,
                backward: bool = False) -> int:
    """FLOPs of the block's matrix products for ``n_tokens`` tokens (``backward``: plus backward).

    An ``(n, k) @ (k, m)`` product costs ``2 n k m`` (a multiply and an add per term); backward
    does two per weight (for the input and the weight). Biases and activations are left out:
    about ``d_model`` times smaller.
    """
    return _flops(*_flop_args(d_model, d_ff, n_tokens, gated, backward))


def _flop_args(d_model: object, d_ff: object, n_tokens: object, gated: object,
               backward: object) -> tuple[int, int, int, bool, bool]:
    """``count_flops``' arguments checked, in their order: positive ints, then bools."""
    return (check.positive_int(d_model, "d_model"), check.positive_int(d_ff, "d_ff"),
            check.positive_int(n_tokens, "n_tokens"), check.boolean(gated, "gated"),
            check.boolean(backward, "backward"))


def _flops(d_model: int, d_ff: int, n_tokens: int, gated: bool, backward: bool) -> int:
    """``count_flops`` of checked arguments."""
    n_matrices = 3 if gated else 2
    forward = n_matrices * 2 * n_tokens * d_model * d_ff
    return 3 * forward if backward else forward


def llama_d_ff(d_model: int, multiple_of: int = 256,
               ffn_dim_multiplier: float | None = None) -> int:
    """LLaMA's SwiGLU hidden width, by the steps of Meta's reference code (``FeedForward``).

    Two thirds of ``4 * d_model``, truncated; then, for LLaMA 2 and 3, times
    ``ffn_dim_multiplier`` and truncated again; then rounded up to a multiple of ``multiple_of``.
    All of it is integer arithmetic except the multiplier: floating point enters only there, in
    ``int(ffn_dim_multiplier * hidden)``, a float product truncated as Meta's code truncates it
    (``int(0.29 * 200)`` is 57, not 58). Meta computes the two thirds in floating point too,
    ``int(2 * hidden / 3)``; ffn's floor division is the mathematically right value, and the
    two agree for every ``d_model`` up to ``3 * 2**49``. From ``d_model = 3 * 2**49 + 1`` on,
    ``8 * d_model / 3`` is beyond 2**52, a float has no fractions left, ``n + 2/3`` rounds up,
    and Meta's formula gives one more hidden unit for every third ``d_model`` (before rounding
    up to ``multiple_of``); past 2**53 the float's spacing grows and so does the difference.

    A ValueError unless the multiplier is positive and finite, for a width that truncates to
    zero (where Meta's code returns 0), and for a multiplier beside a width too large for a
    float.
    """
    d_model = check.positive_int(d_model, "d_model")
    multiple_of = check.positive_int(multiple_of, "multiple_of")
    multiplier = None if ffn_dim_multiplier is None else check.real(
        ffn_dim_multiplier, "ffn_dim_multiplier", 0.0, float("inf"), high_open=True,
        low_open=True)
    if multiplier is not None and (8 * d_model // 3).bit_length() > 1023:  # float() overflows
        raise ValueError(f"d_model must be at most 3.3e307 with an ffn_dim_multiplier (its "
                         "8 * d_model // 3 hidden units are multiplied as a float), got an "
                         f"int of {d_model.bit_length()} bits")
    return _llama_d_ff(d_model, multiple_of, multiplier)


def _llama_d_ff(d_model: int, multiple_of: int, multiplier: float | None) -> int:
    """``llama_d_ff`` of checked arguments; a ValueError where the widened width is inf or 0."""
    # Two thirds of 4 * d_model: three gated matrices hold what two ungated ones would. Meta
    # writes int(2 * (4 * d_model) / 3), a float division: the same up to d_model = 3 * 2**49.
    hidden = 8 * d_model // 3
    if multiplier is not None:
        widened = multiplier * hidden  # the one floating-point step, truncated like Meta's
        if widened == float("inf"):  # int() would raise OverflowError
            raise ValueError(f"ffn_dim_multiplier {multiplier!r} times {hidden} hidden units is "
                             "too large for a float")
        hidden = int(widened)
        if hidden == 0:  # Meta's code would round 0 up to 0: a block without hidden units
            raise ValueError(f"ffn_dim_multiplier {multiplier!r} times {8 * d_model // 3} "
                             "hidden units truncates to zero hidden units")
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


def largest_d_ff(budget: int, d_model: int, bias: bool = True, gated: bool = False) -> int:
    """The largest ``d_ff`` with ``count_parameters(d_model, d_ff, bias, gated) <= budget``.

    A ValueError if even ``d_ff = 1`` is over the budget.
    """
    budget = check.positive_int(budget, "budget")
    smallest = count_parameters(d_model, 1, bias, gated)  # and checks the other arguments
    per_unit = count_parameters(d_model, 2, bias, gated) - smallest  # the cost of each d_ff unit
    if budget < smallest:
        raise ValueError(
            f"budget {budget} is below the {smallest} parameters of a block with d_ff = 1")
    return 1 + (budget - smallest) // per_unit
