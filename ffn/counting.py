"""Counting the parameters of a feed-forward block."""

from __future__ import annotations

from ffn._validate import check_bool, check_positive_int

__all__ = ["count_parameters"]


def count_parameters(d_model: int, d_ff: int, bias: bool = True) -> int:
    """Number of trainable parameters in a feed-forward block.

    ``W1`` has ``d_model * d_ff`` entries and ``W2`` has ``d_ff * d_model``;
    the biases add ``d_ff`` (``b1``) and ``d_model`` (``b2``). So the total is
    ``2 * d_model * d_ff + d_ff + d_model`` with biases and
    ``2 * d_model * d_ff`` without. For GPT-2 small (768, 3072) that is
    4,722,432.

    Args:
        d_model: model width, a positive int (bool is not accepted).
        d_ff: hidden width, a positive int (bool is not accepted).
        bias: whether the block has the biases ``b1`` and ``b2``.

    Returns:
        The count, as a Python int (exact, no overflow).

    Raises:
        TypeError: if ``d_model`` or ``d_ff`` is not an int, or ``bias`` is not a bool.
        ValueError: if ``d_model`` or ``d_ff`` is zero or negative.
    """
    d_model = check_positive_int(d_model, "d_model")
    d_ff = check_positive_int(d_ff, "d_ff")
    weights = 2 * d_model * d_ff  # W1 and W2
    biases = d_ff + d_model if check_bool(bias, "bias") else 0  # b1 and b2
    return weights + biases
