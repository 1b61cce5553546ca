"""Figures of the training-dynamics page (docs/dynamics.md): scale through depth, gradient flow.

Both use exactly the setups of the page's code blocks (same sizes, seeds and scales), so the
curves are the numbers the page prints.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

import ffn

# Section "Initialisation": plain blocks stacked with no residual and no norm.
INIT_D_MODEL, INIT_D_FF, INIT_TOKENS, INIT_DEPTH = 128, 512, 256, 8
INIT_SCALES = {"0.5 x": (0.5, 0.5), "1 x (1/sqrt(fan_in))": (1.0, 1.0),
               "He: W2 x sqrt(2)": (1.0, math.sqrt(2.0)), "2 x": (2.0, 2.0)}

# Section "Gradient flow": Sublayers of a GELU block, pre-norm (with a final LayerNorm) or post.
FLOW_D_MODEL, FLOW_D_FF, FLOW_TOKENS, FLOW_DEPTH = 64, 256, 64, 24


def std_through_depth(s1: float, s2: float) -> list[float]:
    """Std of the output of each of INIT_DEPTH ReLU blocks, W1 scaled by s1 and W2 by s2."""
    x = np.random.default_rng(0).standard_normal((INIT_TOKENS, INIT_D_MODEL))  # (n, d_model)
    stds = []
    for layer in range(INIT_DEPTH):
        base = ffn.FeedForward.random(INIT_D_MODEL, INIT_D_FF, "relu", seed=10 + layer,
                                      bias=False)
        block = ffn.FeedForward(s1 * base.W1, None, s2 * base.W2, None, activation="relu")
        x = block(x)  # (n, d_model)
        stds.append(float(x.std()))
    return stds


def init_depth() -> Figure:
    """Std of the activations after each block, one line per scale, on a log scale."""
    fig = Figure()
    ax = fig.add_subplot()
    depth = np.arange(1, INIT_DEPTH + 1)
    for label, (s1, s2) in INIT_SCALES.items():
        ax.plot(depth, std_through_depth(s1, s2), marker="o", markersize=4, label=label)
    ax.axhline(1.0, color=ax.xaxis.label.get_color(), linestyle="--", linewidth=1.0)
    ax.set_yscale("log")
    ax.set_xlabel("blocks passed (ReLU, no residual, no norm)")
    ax.set_ylabel("std of the activations")
    ax.legend(fontsize=9)
    return fig


def gradient_norms(placement: str, depth: int) -> list[float]:
    """||dL/dW1|| of each block, bottom to top, for a random linear loss on the stack's output."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((FLOW_TOKENS, FLOW_D_MODEL))  # (n, d_model)
    dy = rng.standard_normal((FLOW_TOKENS, FLOW_D_MODEL))  # dL/d(output), (n, d_model)
    stack = [ffn.Sublayer(ffn.FeedForward.random(FLOW_D_MODEL, FLOW_D_FF, "gelu", seed=100 + i),
                          ffn.LayerNorm(FLOW_D_MODEL), placement=placement)
             for i in range(depth)]
    final = ffn.LayerNorm(FLOW_D_MODEL)  # pre-norm only: GPT-2's last LayerNorm
    for sub in stack:
        x = sub(x)
    if placement == "pre":
        final(x)
        dy = final.backward(dy)
    norms = []
    for sub in reversed(stack):
        dy = sub.backward(dy)
        norms.append(float(np.linalg.norm(sub.grads["W1"])))
    return norms[::-1]


def gradient_flow() -> Figure:
    """Gradient norm of each block's W1 against its depth, pre-norm and post-norm."""
    fig = Figure()
    ax = fig.add_subplot()
    layer = np.arange(1, FLOW_DEPTH + 1)
    for placement, label in (("pre", "pre-norm (final LayerNorm)"), ("post", "post-norm")):
        ax.plot(layer, gradient_norms(placement, FLOW_DEPTH), marker="o", markersize=4,
                label=label)
    ax.set_xlabel("block (1 = next to the input)")
    ax.set_ylabel("gradient norm ||dL/dW1||")
    ax.set_ylim(bottom=0.0)
    ax.legend(fontsize=9)
    return fig


FIGURES = {"dynamics-init-depth": init_depth, "dynamics-gradient-flow": gradient_flow}
