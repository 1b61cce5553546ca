"""Figures of the activation functions: ReLU, exact and tanh GELU, SiLU."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

import ffn


def activation_curves() -> Figure:
    x = np.linspace(-4.0, 4.0, 801)  # (801,)
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot(x, ffn.relu(x), label="ReLU")
    ax.plot(x, ffn.gelu(x), label="GELU (exact)")
    ax.plot(x, ffn.silu(x), label="SiLU")
    ax.set_xlabel("x")
    ax.set_ylabel("activation(x)")
    ax.set_ylim(-0.6, 4.0)
    ax.legend()
    return fig


FIGURES = {"activation-curves": activation_curves}
