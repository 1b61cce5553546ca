"""The activation explorer (docs/gelu.md): each activation of ffn.activations, its derivative
and its gate g (f(x) = x g(x), ffn.activations.gate), at nine points for the fallback tables
(`activation_numbers`, which tests/browser/test_widgets.py also compares with the page); its
data is each curve's colour in both schemes, the figures' (scripts/figures/palette.py)."""

from __future__ import annotations

import ffn
from ffn.activations import FUNCTIONS, gate
from scripts.figures.palette import ACTIVATION_COLORS, scheme_colors
from widgets._shared import fallback

ACTIVATION_XS = (-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0)  # as the GELU chapter's table
ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU, exact", "gelu_tanh": "GELU, tanh",
                    "silu": "SiLU", "relu2": "Squared ReLU"}
GATE_NAMES = {"relu": "step", "gelu": "\N{GREEK CAPITAL LETTER PHI}(x)",
              "gelu_tanh": "(1 + tanh z) / 2", "silu": "\N{GREEK SMALL LETTER SIGMA}(x)",
              "relu2": "max(x, 0)"}
"""Each gate's name, as the explorer's table shows it beside the activation's."""


def activation_numbers(x: float) -> dict[str, str]:
    """What the explorer shows at x: each activation, its derivative and its gate, and the
    GELU gap."""
    shown = {}
    for name, (f, df) in FUNCTIONS.items():
        shown[name] = f"{float(f(x)):.6f}"
        shown[name + "Grad"] = f"{float(df(x)):.6f}"
        shown[name + "Gate"] = f"{float(gate(x, name)):.6f}"
    shown["gap"] = f"{float(ffn.gelu(x)) - float(ffn.gelu(x, approximate='tanh')):.8f}"
    return shown


def render() -> str:
    """The explorer's fallback tables (the curves, their derivatives, then the gates) and its
    data, the curves' colours (lab.js computes every value). Three tables of six or seven
    columns, not one of twelve: each fits a laptop's column (tests/browser/test_cut_off.py)."""
    labels = list(ACTIVATION_NAMES.values())
    rows, grad_rows, gate_rows = [], [], []
    for x in ACTIVATION_XS:
        n = activation_numbers(x)
        rows.append([f"{x:g}", *(n[name] for name in ACTIVATION_NAMES), n["gap"]])
        grad_rows.append([f"{x:g}", *(n[name + "Grad"] for name in ACTIVATION_NAMES)])
        gate_rows.append([f"{x:g}", *(n[name + "Gate"] for name in ACTIVATION_NAMES)])
    curves = fallback.table(
        "Each activation at nine points, computed by ffn when the site was built",
        ["x", *labels, "GELU exact \N{MINUS SIGN} tanh"], rows)
    derivatives = fallback.table(
        "Each activation's derivative (\N{PRIME}) at the same points",
        ["x", *(f"{label}\N{PRIME}" for label in labels)], grad_rows)
    gates = fallback.table(
        "Each activation's gate g(x), the factor in f(x) = x g(x), at the same points",
        ["x", *(f"{ACTIVATION_NAMES[n]}: {GATE_NAMES[n]}" for n in ACTIVATION_NAMES)],
        gate_rows)
    return fallback.widget(curves + derivatives + gates,
                           {"colors": scheme_colors(ACTIVATION_COLORS)})


WIDGETS = {"activations": render}
