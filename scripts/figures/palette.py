"""The figures' two colour themes, read by the figures (_common.py) and by the FFN lab's widgets
(widgets/activations, widgets/sizer), so a curve on the page and in a widget share its colour.

No matplotlib here: the site's build reads these colours without drawing anything.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Theme:
    suffix: str  # appended to the file name: "" or "-dark"
    fg: str  # text, axes, ticks
    grid: str
    colors: tuple[str, ...]  # line colours, in order; contrast >= 3:1 on the page background


LIGHT = Theme("", fg="#1f1f1f", grid="#d0d0d0",
              colors=("#1f5fbf", "#c0392b", "#1e7d34", "#8e44ad", "#b35900", "#00758f"))
# Material's slate background is about #1e2129: light, saturated colours on it.
DARK = Theme("-dark", fg="#e6e6e6", grid="#4a4f5a",
             colors=("#7fb2ff", "#ff8a7a", "#6fd88a", "#d7a6ff", "#ffb86b", "#5fd3e8"))
THEMES = (LIGHT, DARK)

ACTIVATION_COLORS = {"relu": 0, "gelu": 1, "silu": 2, "gelu_tanh": 3, "relu2": 4}
"""Each activation's colour, an index into ``Theme.colors``: the order in which the figures of
scripts/figures/activations.py draw ReLU, GELU and SiLU (tests/test_widgets.py checks it), then
the two the activation explorer adds."""


PART_COLORS = {"attention": 0, "denseFfn": 1, "router": 3, "shared": 4, "expertsActive": 1,
               "expertsIdle": 1, "embeddings": 2, "head": 5, "norms": 3, "other": 4}
"""The model sizer's parts (widgets/sizer/data.py's PARTS), an index into ``Theme.colors``: the
FFN's in one colour (the experts a token skips hatched), the tiny parts sharing the rest."""


def scheme_colors(indices: dict[str, int]) -> dict[str, dict[str, str]]:
    """``{"light": {name: colour}, "dark": {...}}`` for names given by colour index: what a
    widget's data carries to its CSS custom properties."""
    return {scheme: {name: theme.colors[i] for name, i in indices.items()}
            for scheme, theme in (("light", LIGHT), ("dark", DARK))}
