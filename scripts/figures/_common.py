"""Shared by every figure: two colour themes and deterministic SVG output.

Each figure is drawn twice, once per theme, by the same function. The page shows one or the
other with Material's `#only-light` / `#only-dark` image suffixes, so figures stay readable
when the reader toggles the colour scheme.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # no display; must come before pyplot is imported
import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure

Draw = Callable[[], Figure]


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
