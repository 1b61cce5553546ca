"""The key-value memory example of docs/purpose.md: one small real ReLU block and one token.

The figure (scripts/figures/diagrams.py, `key_value`) and the memory explorer (the widget
`memory`, widgets/memory/) both start from `memory_block()` and `memory_token()`, so the
widget opens on the very numbers the figure draws.
"""

from __future__ import annotations

import functools

import numpy as np

import ffn

D_MODEL, D_FF, SEED, TOKEN_SEED = 3, 6, 0, 3  # the block's widths and seeds, the token's seed


@functools.cache
def memory_block(activation: str = "relu") -> ffn.FeedForward:
    """The block: `ffn.FeedForward.random` with d_model 3, d_ff 6, seed 0 (zero biases)."""
    return ffn.FeedForward.random(D_MODEL, D_FF, activation=activation, seed=SEED)


def memory_token() -> np.ndarray:
    """The token x: 3 standard normal numbers from seed 3 (a fresh array each call)."""
    return np.random.default_rng(TOKEN_SEED).standard_normal(D_MODEL)
