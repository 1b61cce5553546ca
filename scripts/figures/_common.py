"""Shared by every figure: two colour themes, two layouts and deterministic SVG output.

Each figure is drawn twice, once per theme, by the same function. The page shows one or the
other with Material's `#only-light` / `#only-dark` image suffixes, so figures stay readable
when the reader toggles the colour scheme.

A plot is also drawn in a narrow layout (`-narrow` in its file name) for phones: smaller, so
that its text is larger once it fills a phone's column, its panels stacked, and no text under
NARROW.min_font. hooks/figures.py serves it to narrow screens with a `<picture>`.
"""

from __future__ import annotations

import contextvars
import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # no display; must come before pyplot is imported
import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, NullFormatter

# The themes live in palette.py, which the widgets read too (no matplotlib there).
from scripts.figures.palette import Theme

Draw = Callable[[], Figure]


@dataclass(frozen=True)
class Layout:
    suffix: str  # appended to the stem: "" or "-narrow"
    figsize: tuple[float, float]  # inches, a one-panel plot's size
    min_font: float  # points: a plot's smaller texts are raised to this


# On a page a figure is at most its natural size (1 pt = 4/3 CSS px) and at most the column's
# width: 688 px on a laptop (1366 px wide), 358 px on a phone (390 px). A narrow plot about
# 4 in wide fills a phone's column at about 1.2 CSS px per point, so 10 pt shows above 11 px.
WIDE = Layout("", (6.4, 3.6), 9.0)
NARROW = Layout("-narrow", (3.5, 3.2), 10.0)
LAYOUTS = (WIDE, NARROW)
_layout: contextvars.ContextVar[Layout] = contextvars.ContextVar("layout", default=WIDE)


def layout() -> Layout:
    """The layout being drawn (a draw function asks, to stack its panels when narrow)."""
    return _layout.get()


@contextmanager
def drawing(lay: Layout) -> Iterator[None]:
    token = _layout.set(lay)
    try:
        yield
    finally:
        _layout.reset(token)


def panels(n: int, wide: tuple[float, float]) -> tuple[Figure, list[Axes]]:
    """A plot of `n` panels: side by side at `wide` inches, stacked when narrow."""
    lay = layout()
    if lay is WIDE:
        fig = Figure(figsize=wide)
        return fig, list(fig.subplots(1, n))
    fig = Figure(figsize=(lay.figsize[0], lay.figsize[1] * n * 1.1))
    return fig, list(fig.subplots(n, 1))


def _plain(value: float, _: object) -> str:
    return f"{value:,g}"


def legible(fig: Figure, min_font: float) -> None:
    """No text of `fig` under `min_font` points, and log axes labelled 0.1, 1, 10, 1,000
    rather than as powers: a power's exponent is drawn at 70% of the label's size."""
    for text in fig.findobj(Text):
        if text.get_text() and text.get_fontsize() < min_font:
            text.set_fontsize(min_font)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                axis.set_major_formatter(FuncFormatter(_plain))
                axis.set_minor_formatter(NullFormatter())


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
        "figure.figsize": layout().figsize,
        "svg.fonttype": "none",  # text stays text: small files, no font paths that vary
        "svg.hashsalt": "ffn-by-the-numbers",  # fixed ids instead of random ones
        "path.simplify": False,
    }


def render(draw: Draw, theme: Theme, lay: Layout = WIDE, plot: bool = False) -> bytes:
    """Draw one figure in one theme and layout and return its SVG bytes (no date, fixed ids);
    a `plot` (not a hand-laid diagram) gets no text under the layout's min_font."""
    with drawing(lay), plt.rc_context(rc(theme)):
        fig = draw()
        if plot:
            legible(fig, lay.min_font)
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


def stacked(width: float, height: float, n: int) -> tuple[Figure, list[Axes]]:
    """`n` canvases (as `canvas` makes) stacked top to bottom: a diagram's narrow layout."""
    fig = Figure(figsize=(width, height * n))
    axes = []
    for k in range(n):
        ax = fig.add_axes((0.0, 1.0 - (k + 1) / n, 1.0, 1.0 / n))
        ax.set_xlim(0.0, width)
        ax.set_ylim(0.0, height)
        ax.set_aspect("equal")
        ax.axis("off")
        axes.append(ax)
    return fig, axes
