"""The errata at a glance: each worked example's published arrays as grids, next to the right ones
(on a phone, the narrow layout: one grid, each wrong entry with the right value under it).

The published values and the inputs come from `_seed_data` (the same arrays as docs/errata.md's code
blocks, checked by tests/test_figures.py); the right values are computed with `ffn` here, and
`ffn.discrepancies` decides which printed entries are wrong, with the appendix's rule: more than
half a unit in the last printed place away from the computed value. Entries off by more than
half a unit but at most one unit (a reader may call these rounding) are marked apart.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

import ffn
from scripts.figures._common import NARROW, canvas, color, fg, layout
from scripts.figures._seed_data import EXAMPLES, Example, Stage

MINUS = "\u2212"
BIG, SMALL, FIXED = 1, 4, 2  # theme colours: wrong by more than a unit, by at most one, right
PHONE_COLUMNS = 4  # a grid's columns on one line on a phone, where its text is 11 CSS px or more


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
         marks: dict[tuple[int, int], int], notes: dict[tuple[int, int], str],
         first: int = 0) -> None:
    """A grid of numbers, columns `first`, `first` + 1, ... of an array; `marks` tints a cell with
    a theme colour, `notes` adds a second line (both keyed by the array's (row, column))."""
    for (i, j), v in np.ndenumerate(values):
        x, y = x0 + j * cw, top - (i + 1) * ch
        tint = marks.get((i, first + j))
        if tint is not None:
            ax.add_patch(Rectangle((x, y), cw, ch, facecolor=color(tint), alpha=0.28,
                                   edgecolor="none"))
        ax.add_patch(Rectangle((x, y), cw, ch, facecolor="none", linewidth=0.6, edgecolor=fg()))
        if tint is not None:  # drawn over the plain edge, so a neighbour cannot hide it
            ax.add_patch(Rectangle((x + 0.015, y + 0.015), cw - 0.03, ch - 0.03,
                                   facecolor="none", linewidth=1.5, edgecolor=color(tint),
                                   linestyle=(0, (3, 2)) if tint == SMALL else "-"))
        note = notes.get((i, first + j))
        ax.text(x + cw / 2, y + ch * (0.68 if note else 0.5), number(float(v), places),
                ha="center", va="center", fontsize=10)
        if note:
            ax.text(x + cw / 2, y + ch * 0.27, note, ha="center", va="center", fontsize=10)


@dataclass(frozen=True)
class Sizes:
    """Where an errata figure's grids go: widths and heights in inches."""

    cw: float  # a cell's width
    cw_cmp: float  # a computed cell's (side by side, narrower: it holds no second line)
    ch: float  # a cell's height
    label_w: float  # the row numbers' margin
    gap: float  # between the published and computed grids, side by side
    per_row: int  # columns a grid shows on one line; a wider array wraps onto more
    side: bool  # published and computed side by side, else one above the other
    merged: bool  # no computed grid: a wrong entry shows the computed value under it
    width: float  # the canvas
    wrap: int  # characters a line of the title and headings holds


def sizes(cols: int) -> Sizes:
    """Published and computed side by side when six columns or fewer fit the page's column
    (688 px at 1366 px), else one above the other. On a phone (NARROW) one grid: the published
    values, each wrong one with the computed value under it (the computed grid would repeat
    the right ones), in blocks of at most PHONE_COLUMNS columns."""
    if layout() is NARROW:
        per_row = math.ceil(cols / math.ceil(cols / PHONE_COLUMNS))
        width, label_w = 3.7, 0.3
        cw = (width - label_w - 0.05) / per_row  # the blocks fill the width
        return Sizes(cw, cw, 0.48, label_w, 0.0, per_row, False, True, width, 38)
    side = cols <= 6
    cw, cw_cmp, label_w, gap = (0.7, 0.6, 0.22, 0.18) if side else (0.62, 0.62, 0.3, 0.0)
    width = max(label_w + cols * (cw + (cw_cmp if side else 0.0)) + gap + 0.05, 5.0)
    return Sizes(cw, cw_cmp, 0.48, label_w, gap, cols, side, False, width, 200)


def errata(example: Example) -> Figure:
    trace = example.trace()
    stages = []
    for stage in example.stages:
        printed = np.atleast_2d(np.array(example.arrays[stage.name], dtype=np.float64))
        computed = np.atleast_2d(np.asarray(getattr(trace, stage.trace)))
        stages.append((stage, printed, computed,
                       wrong_entries(printed, computed, stage.decimals)))
    z = sizes(max(p.shape[1] for _, p, _, _ in stages))
    cw, ch = z.cw, z.ch
    wrapped = z.per_row < max(p.shape[1] for _, p, _, _ in stages)  # column numbers shown

    def heads(stage: Stage, printed: np.ndarray, computed: np.ndarray,
              wrong: dict[tuple[int, ...], bool]) -> str:
        big = sum(wrong.values())
        head = (f"{stage.label}: {len(wrong)} of {printed.size} wrong"
                + (f" ({big} by more than one unit)" if wrong else ""))
        if z.merged and wrong:  # the wide drawing writes every gap; the phone's, the largest
            at = max(wrong, key=lambda k: abs(float(printed[k] - computed[k])))
            gap = signed(float(printed[at] - computed[at]), stage.decimals + 1)
            where = f"row {at[0]}, column {at[1]}" if len(at) == 2 else f"column {at[0]}"
            head += f"; the largest gap, published minus computed: {gap} ({where})"
        return "\n".join(textwrap.wrap(head, z.wrap))

    # above a grid: its name (published or computed), then its column numbers
    hdr = (0.0 if z.merged else 0.3) + (0.28 if wrapped else 0.0)

    def block_height(rows: int) -> float:  # one block of columns, published and computed
        if z.side or z.merged:
            return hdr + rows * ch + 0.15
        return 2 * (hdr + rows * ch) + 0.3

    def head_height(head: str) -> float:
        return 0.25 + 0.2 * (head.count("\n") + 1)

    n_wrong = sum(len(w) for *_, w in stages)
    n_printed = sum(p.size for _, p, _, _ in stages)
    title = [*textwrap.wrap(f"{example.title}:", z.wrap),
             f"{n_wrong} of {n_printed} printed values wrong"]
    legend: list[tuple[int | None, str, str]] = [  # (tint, outline, what it marks)
        (BIG, "-", "off by more than one unit in the last place"),
        (SMALL, "--", "off by more than half a unit, at most one")]
    if z.merged:
        legend.append((None, "", "below a wrong value: the value ffn computes"))
    top_h = 0.35 + 0.2 * len(title) + 0.35 * len(legend)
    heights = [head_height(heads(s, p, c, w))
               + math.ceil(p.shape[1] / z.per_row) * block_height(p.shape[0]) + 0.1
               for s, p, c, w in stages]
    height = top_h + sum(heights)
    fig, ax = canvas(z.width, height)
    x_pub = z.label_w
    x_cmp = z.label_w + z.per_row * cw + z.gap if z.side else z.label_w
    ax.text(x_pub, height - 0.1, "\n".join(title), ha="left", va="top", fontsize=11,
            fontweight="bold")
    for k, (tint, style, text) in enumerate(legend):
        ly = height - 0.3 - 0.2 * len(title) - 0.3 * k - 0.15
        if tint is not None:
            ax.add_patch(Rectangle((x_pub, ly - 0.1), 0.28, 0.2, facecolor=color(tint),
                                   alpha=0.28, edgecolor=color(tint), linestyle=style,
                                   linewidth=1.2))
        ax.text(x_pub + (0.36 if tint is not None else 0.0), ly, text, ha="left", va="center",
                fontsize=10)
    top = height - top_h
    for (stage, printed, computed, wrong), h in zip(stages, heights, strict=True):
        head = heads(stage, printed, computed, wrong)
        ax.text(x_pub, top - 0.1, head, ha="left", va="top", fontsize=10)
        keyed = {(w[0], w[1]) if len(w) == 2 else (0, w[0]): b for w, b in wrong.items()}
        marks = {k: BIG if b else SMALL for k, b in keyed.items()}
        if z.merged:  # the right value, rounded as the tutorial rounds
            notes = {k: number(float(computed[k]), stage.decimals) for k in keyed}
        else:  # how far off, one place finer
            notes = {k: signed(float(printed[k] - computed[k]), stage.decimals + 1)
                     for k in keyed}
        btop = top - head_height(head)
        for first in range(0, printed.shape[1], z.per_row):
            last = min(first + z.per_row, printed.shape[1])
            gtop = btop - hdr
            ctop = gtop if z.side else gtop - printed.shape[0] * ch - 0.25 - hdr
            if not z.merged:
                ax.text(x_pub, gtop + hdr - 0.15, f"published ({stage.decimals} decimals)",
                        ha="left", va="center", fontsize=10)
                ax.text(x_cmp, ctop + hdr - 0.15, "computed with ffn, same rounding",
                        ha="left", va="center", fontsize=10)
            # which columns this block holds, when an array wraps
            for t in ((gtop,) if z.merged else (gtop, ctop)) if wrapped else ():
                for j in range(first, last):
                    ax.text(x_pub + (j - first + 0.5) * cw, t + 0.14, str(j), ha="center",
                            va="center", fontsize=10)
            grid(ax, x_pub, gtop, printed[:, first:last], stage.decimals, cw, ch, marks, notes,
                 first)
            if not z.merged:
                grid(ax, x_cmp, ctop, computed[:, first:last], stage.decimals, z.cw_cmp, ch,
                     {k: FIXED for k in keyed}, {}, first)
            for i in range(printed.shape[0]):
                for t in (gtop,) if z.side or z.merged else (gtop, ctop):
                    ax.text(x_pub - 0.08, t - (i + 0.5) * ch, str(i), ha="right", va="center",
                            fontsize=10)
            btop -= block_height(printed.shape[0])
        top -= h
    return fig


def _drawer(example: Example) -> Callable[[], Figure]:
    def draw() -> Figure:
        return errata(example)
    return draw


FIGURES = {f"errata-{e.section.lower().replace(' ', '-')}": _drawer(e) for e in EXAMPLES}

# Drawn narrow too, for phones: each grid above the other, wide arrays wrapped (build.py).
NARROW_FIGURES = set(FIGURES)
