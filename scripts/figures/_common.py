"""Shared by every figure: two colour themes and deterministic SVG output.

Each figure is drawn twice, once per theme, by the same function. The page shows one or the
other with Material's `#only-light` / `#only-dark` image suffixes, so figures stay readable
when the reader toggles the colour scheme.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")  # no display; must come before pyplot is imported
import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure

# The themes live in palette.py, which the widgets read too (no matplotlib there).
from scripts.figures.palette import THEMES, Theme

__all__ = ["THEMES", "Draw", "Theme", "canvas", "color", "fg", "rc", "render"]

Draw = Callable[[], Figure]


def rc(theme: Theme) -> dict[str, object]:
    """matplotlib settings for one theme; also what makes the SVG bytes repeatable."""
    return {
        "figure.facecolor": "none",  # transparent: the page's background shows through
        "axes.facecolor": "none",
        "savefig.facecolor": "none",
        "text.color": theme.fg,
        "axes.labelcolor": theme.fg,
        "axes.edgecolor": theme.fg,
        "xtick.color": theme.fg,
        "ytick.color": theme.fg,
        "grid.color": theme.grid,
        "axes.grid": True,
        "axes.prop_cycle": cycler(color=list(theme.colors)),
        "legend.frameon": False,
        "font.size": 11,
        "figure.figsize": (6.4, 3.6),
        "svg.fonttype": "none",  # text stays text: small files, no font paths that vary
        "svg.hashsalt": "ffn-by-the-numbers",  # fixed ids instead of random ones
        "path.simplify": False,
    }


def render(draw: Draw, theme: Theme) -> bytes:
    """Draw one figure in one theme and return its SVG bytes (no date, fixed ids)."""
    with plt.rc_context(rc(theme)):
        fig = draw()
        buf = io.BytesIO()
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
        plt.close(fig)
    return buf.getvalue()


# Helpers of the diagram modules (diagrams.py, errata.py), drawn under a theme's rcParams.


def fg() -> str:
    """The theme's text colour."""
    return str(matplotlib.rcParams["text.color"])


def color(i: int) -> str:
    """The theme's i-th line colour."""
    return str(matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][i])


def canvas(width: float, height: float) -> tuple[Figure, Axes]:
    """A figure whose data coordinates are inches, with no axes drawn."""
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_xlim(0.0, width)
    ax.set_ylim(0.0, height)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax
