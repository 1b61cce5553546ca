"""FFN by the Numbers: the transformer feed-forward block in plain numpy.

Row-vector convention throughout: ``y = act(x @ W1 + b1) @ W2 + b2`` with
``W1`` of shape ``(d_model, d_ff)`` and ``W2`` of shape ``(d_ff, d_model)``.
"""

from __future__ import annotations

from ffn.activations import (
    ACTIVATIONS,
    APPROXIMATIONS,
    gelu,
    gelu_grad,
    relu,
    relu_grad,
    silu,
    silu_grad,
)
from ffn.counting import count_flops, count_parameters, llama_d_ff
from ffn.feedforward import FeedForward, FeedForwardTrace
from ffn.linear import Linear

# Checking published numbers (ffn/report.py, used by the docs chapters).
from ffn.report import Discrepancy, discrepancies, markdown_table

__all__ = [
    "ACTIVATIONS",
    "APPROXIMATIONS",
    "Discrepancy",
    "FeedForward",
    "FeedForwardTrace",
    "Linear",
    "count_flops",
    "count_parameters",
    "discrepancies",
    "gelu",
    "gelu_grad",
    "llama_d_ff",
    "markdown_table",
    "relu",
    "relu_grad",
    "silu",
    "silu_grad",
]
