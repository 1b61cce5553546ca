"""Counting a feed-forward block: parameters, FLOPs, and LLaMA's hidden width."""

from __future__ import annotations

from ffn._validate import check_bool, check_positive_int

__all__ = ["count_flops", "count_parameters", "llama_d_ff"]


def count_parameters(d_model: int, d_ff: int, bias: bool = True, gated: bool = False) -> int:
    """Number of trainable parameters in a feed-forward block.

    Ungated, ``W1`` has ``d_model * d_ff`` entries and ``W2`` has ``d_ff * d_model``;
    the biases add ``d_ff`` (``b1``) and ``d_model`` (``b2``). A gated block (GLU,
    SwiGLU, ...) has a third matrix of shape ``(d_model, d_ff)`` for the gate, with its
    own ``d_ff`` bias.

    Args:
        d_model: model width, a positive int (bool is not accepted).
        d_ff: hidden width, a positive int (bool is not accepted).
        bias: whether the block has biases.
        gated: whether the block has a gate matrix (three matrices instead of two).

    Returns:
        The count, as a Python int (exact, no overflow).

    Raises:
        TypeError: if ``d_model`` or ``d_ff`` is not an int, or ``bias``/``gated`` is
            not a bool.
        ValueError: if ``d_model`` or ``d_ff`` is zero or negative.
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

    Args:
        d_model: model width, a positive int.
        d_ff: hidden width, a positive int.
        n_tokens: number of tokens (rows of ``x``), a positive int.
        gated: whether the block has a gate matrix.
        backward: count forward plus backward instead of forward only.

    Returns:
        The FLOP count, as a Python int.

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

    Args:
        d_model: model width, a positive int.
        multiple_of: the rounding granularity, a positive int (LLaMA uses 256).

    Returns:
        The hidden width ``d_ff``.
    """
    d_model = check_positive_int(d_model, "d_model")
    multiple_of = check_positive_int(multiple_of, "multiple_of")
    hidden = int(2 * (4 * d_model) / 3)
    return multiple_of * -(-hidden // multiple_of)  # ceiling division
