"""The speed path: the same blocks and activations as ``ffn``, faster, held to it by tests.

``ffn.fast.FeedForward`` takes the same arguments and gives the same results (within the
tolerances of ``tests/test_fast.py``) as ``ffn.FeedForward``; the activations here run blocked
and on every core. The chapters show the reference code in ``ffn``; ``scripts/bench.py``
times both.
"""

from __future__ import annotations

from ffn.fast.feedforward import FeedForward
from ffn.fast.kernels import (
    gelu,
    gelu_grad,
    relu,
    relu2,
    relu2_grad,
    relu_grad,
    silu,
    silu_grad,
)

__all__ = ["FeedForward", "gelu", "gelu_grad", "relu", "relu2", "relu2_grad", "relu_grad", "silu",
           "silu_grad"]
