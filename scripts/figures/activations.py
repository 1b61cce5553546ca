"""Figures of the activation functions: ReLU, exact and tanh GELU, SiLU, their derivatives, and
gpt-oss's clamped gate."""

from __future__ import annotations

import numpy as np
import scipy.optimize
from matplotlib.figure import Figure

import ffn
from scripts.figures._common import NARROW, layout

# Typographic characters for labels, written as escapes so the source stays plain ASCII.
MINUS, PRIME, TIMES = "\u2212", "\u2032", "\u00d7"


def activation_curves() -> Figure:
    x = np.linspace(-4.0, 4.0, 401)  # (401,)
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


def _gelu_gap(x: float) -> float:
    """exact GELU minus tanh GELU at one point."""
    return float(ffn.gelu(x) - ffn.gelu(x, approximate="tanh"))


def gelu_error() -> Figure:
    x = np.linspace(-6.0, 6.0, 481)  # (481,)
    gap = ffn.gelu(x) - ffn.gelu(x, approximate="tanh")  # (481,)
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot(x, gap * 1e4, label=f"exact {MINUS} tanh")
    # The two extremes (the gap is even in x), refined from the grid like on the page.
    for guess in (-2.7, 2.7):
        found = scipy.optimize.minimize_scalar(
            lambda t: -abs(_gelu_gap(t)), bounds=(guess - 0.2, guess + 0.2), method="bounded"
        )
        ax.plot([found.x], [_gelu_gap(found.x) * 1e4], "o", color="C1")
        label = f"x = {found.x:+.3f}".replace("-", MINUS)
        ax.annotate(label, (found.x, _gelu_gap(found.x) * 1e4),
                    textcoords="offset points", xytext=(0, -16), ha="center")
    ax.set_xlabel("x")
    ax.set_ylabel(f"GELU difference ({TIMES} 10⁻⁴)")
    ax.set_ylim(-6.0, 4.5 if layout() is NARROW else 3.0)  # narrow: room for the legend
    ax.legend(loc="upper right")
    return fig


def activation_derivatives() -> Figure:
    x = np.linspace(-4.0, 4.0, 401)  # (401,); 0 is a grid point, where relu_grad gives 0
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot(x, ffn.relu_grad(x), label=f"ReLU{PRIME}", drawstyle="steps-mid")
    ax.plot(x, ffn.gelu_grad(x), label=f"GELU{PRIME} (exact)")
    ax.plot(x, ffn.silu_grad(x), label=f"SiLU{PRIME}")
    ax.set_xlabel("x")
    ax.set_ylabel("derivative")
    ax.set_ylim(-0.2, 1.25)
    ax.legend(loc="upper left")
    return fig


def clamped_gate() -> Figure:
    """gpt-oss's gate, g sigmoid(1.702 g) with g = min(x, 7), beside SiLU and exact GELU."""
    x = np.linspace(-5.0, 10.0, 601)  # (601,)
    one = np.ones((1, 1))
    expert = ffn.ClampedSwiGLU(one, one, one)  # d_model = d_ff = 1: the gate is the curve
    gate = expert.forward_trace(x[:, None]).gate[:, 0]  # (601,)
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot(x, ffn.silu(x), label="SiLU, x sigmoid(x)")
    ax.plot(x, ffn.gelu(x), label="GELU (exact)")
    ax.plot(x, gate, label=f"gpt-oss gate, limit {expert.limit:g}", linestyle="--")
    top = float(expert.forward_trace(np.array([[expert.limit]])).gate[0, 0])
    ax.axvline(expert.limit, color=ax.xaxis.label.get_color(), linewidth=0.8, linestyle=":")
    narrow = layout() is NARROW  # narrow: on two lines, nearer the point, inside the axes
    ax.annotate(f"flat beyond x = {expert.limit:g},{chr(10) if narrow else ' '}at {top:.5f}",
                (expert.limit, top), textcoords="offset points",
                xytext=(-20, 30) if narrow else (-70, 45), ha="right",
                arrowprops={"arrowstyle": "-", "color": ax.xaxis.label.get_color()})
    ax.set_xlabel("x (the gate's pre-activation)")
    ax.set_ylabel("activation(x)")
    ax.set_ylim(-1.0, 10.5)
    ax.legend(loc="lower right")
    return fig


FIGURES = {
    "activation-curves": activation_curves,
    "gelu-error": gelu_error,
    "activation-derivatives": activation_derivatives,
    "clamped-gate": clamped_gate,
}
