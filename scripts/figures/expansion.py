"""Figures of chapter 4 (docs/expand-contract.md): hidden-unit activity and fits by width.

Both use exactly the setups of the chapter's code blocks (same sizes, seeds and steps), so
the curves are the numbers the page prints.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from matplotlib.figure import Figure

import ffn
from scripts.figures._common import NARROW, layout


def layer_normalised(n: int, d_model: int, seed: int) -> np.ndarray:
    """Random tokens with zero mean and unit variance across each row, as the page makes them."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d_model))  # (n, d_model)
    return (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True)


def activation_sparsity() -> Figure:
    """Fraction of hidden units with |h| above a threshold, ReLU and exact GELU."""
    x = layer_normalised(1000, 512, seed=0)  # (tokens, d_model)
    thresholds = np.linspace(0.0, 1.0, 201)  # (201,)
    fig = Figure()
    ax = fig.add_subplot()
    for activation, label in (("relu", "ReLU"), ("gelu", "GELU (exact)")):
        block = ffn.FeedForward.random(512, 2048, activation=activation, seed=1)
        size = np.sort(np.abs(block.forward_trace(x).h).ravel())  # (tokens * d_ff,)
        above = 1.0 - np.searchsorted(size, thresholds, side="right") / size.size
        ax.plot(thresholds, above, label=label)
    ax.set_xlabel("threshold t")
    ax.set_ylabel("fraction of hidden units with |h| > t")
    ax.set_ylim(0.0, 1.02)
    ax.legend()
    return fig


D_FFS = (2, 4, 8, 16, 32, 64)
D_MODEL, N_PAIRS, STEPS, LR = 8, 64, 10_000, 0.1  # as on the page


@cache
def memorisation_losses() -> tuple[float, dict[int, np.ndarray]]:
    """The best linear map's loss, and each width's loss history (computed once per process).

    The page's 64 random pairs, trained by full-batch gradient descent: unlike Adam near zero
    loss, its losses do not depend on rounding in the last bits, so the figure's bytes are
    stable across machines.
    """
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N_PAIRS, D_MODEL))
    X = (X - X.mean(axis=1, keepdims=True)) / X.std(axis=1, keepdims=True)  # (n, d_model)
    Y = rng.standard_normal((N_PAIRS, D_MODEL))  # (n, d_model)
    X1 = np.hstack([X, np.ones((N_PAIRS, 1))])  # (n, d_model + 1)
    best_linear = ffn.mean_squared_error(X1 @ np.linalg.lstsq(X1, Y, rcond=None)[0], Y)
    losses = {}
    for d_ff in D_FFS:
        block = ffn.FeedForward.random(D_MODEL, d_ff, activation="gelu", seed=1)
        losses[d_ff] = ffn.fit(block, X, Y, steps=STEPS, lr=LR, optimizer="sgd").losses
    return best_linear, losses


def memorisation_curves() -> Figure:
    """Training loss against step, one curve per d_ff, on a log scale."""
    best_linear, histories = memorisation_losses()
    fig = Figure()
    ax = fig.add_subplot()
    for d_ff, losses in histories.items():
        steps = np.arange(0, losses.size, 50)  # every 50th step keeps the SVG small
        ax.plot(steps, losses[steps], label=f"d_ff = {d_ff}")
    ax.axhline(best_linear, color=ax.xaxis.label.get_color(), linestyle="--",
               linewidth=1.0, label="best linear map")
    ax.set_yscale("log")
    ax.set_xlabel("gradient-descent step")
    ax.set_ylabel("mean squared error")
    if layout() is NARROW:  # below the plot: the narrow axes have no empty corner
        ax.legend(ncols=2, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.3))
    else:
        ax.legend(ncols=2, fontsize=9)
    return fig


FIGURES = {"activation-sparsity": activation_sparsity,
           "memorisation-curves": memorisation_curves}
