"""The activation explorer (docs/gelu.md): each activation of ffn.activations and its
derivative, at nine points for the fallback table (`activation_numbers`, which
tests/browser/test_widgets.py also compares with the page)."""

from __future__ import annotations

import ffn
from ffn.activations import FUNCTIONS
from widgets._shared import fallback

ACTIVATION_XS = (-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0)  # as the GELU chapter's table
ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU, exact", "gelu_tanh": "GELU, tanh",
                    "silu": "SiLU", "relu2": "Squared ReLU"}


def activation_numbers(x: float) -> dict[str, str]:
    """What the explorer shows at x: each activation and its derivative, and the GELU gap."""
    shown = {}
    for name, (f, df) in FUNCTIONS.items():
        shown[name] = f"{float(f(x)):.6f}"
        shown[name + "Grad"] = f"{float(df(x)):.6f}"
    shown["gap"] = f"{float(ffn.gelu(x)) - float(ffn.gelu(x, approximate='tanh')):.8f}"
    return shown


def render() -> str:
    """The explorer's fallback table; it has no data (lab.js computes every value)."""
    header = ["x"]
    for label in ACTIVATION_NAMES.values():
        header += [label, f"{label}\N{PRIME}"]
    header.append("GELU exact \N{MINUS SIGN} tanh")
    rows = []
    for x in ACTIVATION_XS:
        n = activation_numbers(x)
        row = [f"{x:g}"]
        for name in ACTIVATION_NAMES:
            row += [n[name], n[name + "Grad"]]
        rows.append([*row, n["gap"]])
    table = fallback.table("Each activation and its derivative (\N{PRIME}) at nine points, "
                           "computed by ffn when the site was built", header, rows)
    return fallback.widget(table)


WIDGETS = {"activations": render}
