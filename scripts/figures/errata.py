"""The errata at a glance: each worked example's published arrays as grids, next to the right ones.

The published values and the inputs come from `_seed_data` (the same arrays as docs/errata.md's code
blocks, checked by tests/test_figures.py); the right values are computed with `ffn` here, and
`ffn.discrepancies` decides which printed entries are wrong, with the appendix's rule: more than
half a unit in the last printed place away from the computed value. Entries off by more than
half a unit but at most one unit (a reader may call these rounding) are marked apart.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

import ffn
from scripts.figures._common import canvas, color, fg
from scripts.figures._seed_data import EXAMPLES, Example

MINUS = "\u2212"
BIG, SMALL, FIXED = 1, 4, 2  # theme colours: wrong by more than a unit, by at most one, right


def signed(v: float, places: int) -> str:
    return f"{v:+.{places}f}".replace("-", MINUS)


def number(v: float, places: int) -> str:
    return f"{v:.{places}f}".replace("-", MINUS)


def wrong_entries(printed: np.ndarray, computed: np.ndarray,
                  decimals: int) -> dict[tuple[int, ...], bool]:
    """Index of each wrong entry -> True when it is off by more than one unit in the last place."""
    unit = 10.0**-decimals
    return {d.where: abs(d.published - d.computed) > unit + 1e-9
            for d in ffn.discrepancies(printed, computed, decimals)}


def grid(ax: Axes, x0: float, top: float, values: np.ndarray, places: int, cw: float, ch: float,
         marks: dict[tuple[int, int], int], notes: dict[tuple[int, int], str]) -> None:
    """A grid of numbers; `marks` tints a cell with a theme colour, `notes` adds a second line."""
    for (i, j), v in np.ndenumerate(values):
        x, y = x0 + j * cw, top - (i + 1) * ch
        tint = marks.get((i, j))
        if tint is not None:
            ax.add_patch(Rectangle((x, y), cw, ch, facecolor=color(tint), alpha=0.28,
                                   edgecolor="none"))
        ax.add_patch(Rectangle((x, y), cw, ch, facecolor="none", linewidth=0.6, edgecolor=fg()))
        if tint is not None:  # drawn over the plain edge, so a neighbour cannot hide it
            ax.add_patch(Rectangle((x + 0.015, y + 0.015), cw - 0.03, ch - 0.03,
                                   facecolor="none", linewidth=1.5, edgecolor=color(tint),
                                   linestyle=(0, (3, 2)) if tint == SMALL else "-"))
        note = notes.get((i, j))
        ax.text(x + cw / 2, y + ch * (0.66 if note else 0.5), number(float(v), places),
                ha="center", va="center", fontsize=9.5)
        if note:
            ax.text(x + cw / 2, y + ch * 0.27, note, ha="center", va="center", fontsize=8)


def errata(example: Example) -> Figure:
    trace = example.trace()
    stages = []
    for stage in example.stages:
        printed = np.atleast_2d(np.array(example.arrays[stage.name], dtype=np.float64))
        computed = np.atleast_2d(np.asarray(getattr(trace, stage.trace)))
        stages.append((stage, printed, computed,
                       wrong_entries(printed, computed, stage.decimals)))
    cols = max(p.shape[1] for _, p, _, _ in stages)
    side = cols <= 6  # published and computed side by side, else one above the other
    # Narrower than the page's text column, so the SVG shows at its own size (1 pt = 1.33 px)
    cw, ch, gap, label_w = (0.64, 0.48, 0.4, 0.35) if side else (0.66, 0.48, 0.0, 0.35)
    width = label_w + (2 if side else 1) * cols * cw + gap + 0.1
    width = max(width, 5.0)
    heights = [(0.75 + p.shape[0] * ch if side else 1.05 + 2 * p.shape[0] * ch) + 0.2
               for _, p, _, _ in stages]
    height = 1.45 + sum(heights)
    fig, ax = canvas(width, height)
    x_pub, x_cmp = label_w, label_w + cols * cw + gap if side else label_w
    n_wrong = sum(len(w) for *_, w in stages)
    n_printed = sum(p.size for _, p, _, _ in stages)
    ax.text(x_pub, height - 0.3, f"{example.title}:\n{n_wrong} of {n_printed} printed "
            "values wrong", ha="left", va="center", fontsize=11, fontweight="bold")
    legend = [(BIG, "-", "off by more than one unit in the last place"),
              (SMALL, "--", "off by more than half a unit, at most one")]
    for k, (tint, style, text) in enumerate(legend):
        ly = height - 0.88 - 0.3 * k
        ax.add_patch(Rectangle((x_pub, ly - 0.1), 0.28, 0.2, facecolor=color(tint),
                               alpha=0.28, edgecolor=color(tint), linestyle=style,
                               linewidth=1.2))
        ax.text(x_pub + 0.36, ly, text, ha="left", va="center", fontsize=9)
    top = height - 1.45
    for (stage, printed, computed, wrong), h in zip(stages, heights, strict=True):
        big = sum(wrong.values())
        head = (f"{stage.label}: {len(wrong)} of {printed.size} wrong"
                + (f" ({big} by more than one unit)" if wrong else ""))
        ax.text(x_pub, top - 0.25, head, ha="left", va="center", fontsize=10)
        ax.text(x_pub, top - 0.55, f"published ({stage.decimals} decimals)", ha="left",
                va="center", fontsize=9)
        gtop = top - 0.75
        ctop = gtop if side else gtop - printed.shape[0] * ch - 0.4
        ax.text(x_cmp, ctop + 0.2, "computed with ffn, same rounding", ha="left",
                va="center", fontsize=9)
        keyed = {(w[0], w[1]) if len(w) == 2 else (0, w[0]): b for w, b in wrong.items()}
        marks = {k: BIG if b else SMALL for k, b in keyed.items()}
        notes = {k: signed(float(printed[k] - computed[k]), stage.decimals + 1)
                 for k in keyed}
        grid(ax, x_pub, gtop, printed, stage.decimals, cw, ch, marks, notes)
        grid(ax, x_cmp, ctop, computed, stage.decimals, cw, ch,
             {k: FIXED for k in keyed}, {})
        for i in range(printed.shape[0]):
            for t in (gtop,) if side else (gtop, ctop):
                ax.text(x_pub - 0.08, t - (i + 0.5) * ch, str(i), ha="right", va="center",
                        fontsize=8.5)
        top -= h
    return fig


def _drawer(example: Example) -> Callable[[], Figure]:
    def draw() -> Figure:
        return errata(example)
    return draw


FIGURES = {f"errata-{e.section.lower().replace(' ', '-')}": _drawer(e) for e in EXAMPLES}
