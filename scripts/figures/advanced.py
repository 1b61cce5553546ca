"""Diagrams of the two advanced chapters: mixture of experts and tensor parallelism.

As in diagrams.py, every number drawn is computed when the diagram is drawn: the router's
probabilities, choices and weights by a real `ffn.MixtureOfExperts` (the one docs/moe.md builds,
same sizes and seeds), the shards' shapes by cutting a real `ffn.FeedForward` of a model in
`ffn.MODELS` the way docs/tensor-parallel.md does.
"""

from __future__ import annotations

import functools
import textwrap

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

import ffn
from scripts.figures._common import NARROW, canvas, color, fg, layout
from scripts.figures.diagrams import ARROW, CDOT, MINUS, TIMES, arrow, box, fmt, shape

# docs/moe.md, "The router, step by step": the layer and the tokens of its code block.
MOE_SIZES = {"d_model": 8, "d_ff": 16, "n_experts": 4, "top_k": 2}
MOE_VARIANT, MOE_SEED, TOKENS_SEED, N_TOKENS = "swiglu", 0, 1, 3
VARIANT_NAME = "SwiGLU"  # MOE_VARIANT as the papers write it
# docs/moe.md, "Load balance and capacity": the batch of centred tokens; the first few of it,
# spread over devices that each hold an equal block of the experts.
BATCH_SEED, BATCH_ROWS, EP_TOKENS, EP_DEVICES = 2, 1024, 6, 2

# docs/tensor-parallel.md: a published plain FFN, cut over D devices.
TP_MODEL, TP_DEVICES, TP_TOKENS = "GPT-2 small", 2, 5
BF16 = 2  # bytes a number
NBSP = "\u00a0"  # a space a caption's line does not break at


@functools.cache
def moe_layer() -> ffn.MixtureOfExperts:
    return ffn.MixtureOfExperts.random(**MOE_SIZES, variant=MOE_VARIANT, seed=MOE_SEED)


def panel(ax: Axes, x0: float, y0: float, w: float, h: float, label: str) -> None:
    """A dashed frame with a label at its top left: one device."""
    ax.add_patch(FancyBboxPatch((x0, y0), w, h, boxstyle="round,pad=0,rounding_size=0.1",
                                facecolor="none", edgecolor=fg(), linewidth=1.0,
                                linestyle="--"))
    ax.text(x0 + 0.12, y0 + h - 0.12, label, ha="left", va="top", fontsize=11,
            fontweight="bold")


# --- 1. routing: probabilities, top k, weights, weighted sum ---------------------------------

def moe_routing() -> Figure:
    """The page's three tokens: router probabilities, the top k and their weights in the
    output (narrow: each token's output under its probabilities), and which expert runs where."""
    moe = moe_layer()
    x = np.random.default_rng(TOKENS_SEED).normal(size=(N_TOKENS, moe.d_model))
    p, chosen, weights = moe.route(x)  # (n, n_experts), (n, top_k), (n, top_k)
    n_experts, k = moe.n_experts, moe.top_k
    narrow = layout() is NARROW
    cw, ch = 0.74, 0.44  # a probability cell's width and height
    row = 1.05 if narrow else 0.72  # one token's rows: its probabilities (and its output)
    px = 0.78 if narrow else 1.45  # left edge of the probability cells
    yx = px if narrow else px + n_experts * cw + 0.5  # left edge of the outputs
    ey = 1.45 if narrow else 0.5  # the experts' row
    first = ey + (1.75 if narrow else 0.85) + row * (N_TOKENS - 1)  # the first token's row
    width = 3.75 if narrow else 7.6
    fig, ax = canvas(width, first + (1.25 if narrow else 1.1))
    ax.text(px + n_experts * cw / 2, first + 0.95,
            f"p = softmax(x R),  R {shape(moe.router.shape)}", ha="center", va="center",
            fontsize=11)
    if not narrow:
        ax.text(yx, first + 0.85, f"output: the top {k}, weighted by\ntheir p divided by "
                "their sum", ha="left", va="center", fontsize=11)
    for i in range(n_experts):
        ax.text(px + (i + 0.5) * cw, first + 0.5, f"E{i}", ha="center", va="center",
                fontsize=11)
    for t in range(N_TOKENS):
        cy = first - row * t
        ax.text(px - 0.12, cy, f"token {t}\nx {shape(x[t].shape)}", ha="right", va="center",
                fontsize=10)
        for i in range(n_experts):
            picked = i in chosen[t]
            ax.add_patch(Rectangle((px + i * cw, cy - ch / 2), cw, ch,
                                   facecolor=color(2) if picked else "none",
                                   alpha=0.3, edgecolor="none"))
            ax.add_patch(Rectangle((px + i * cw, cy - ch / 2), cw, ch, facecolor="none",
                                   edgecolor=color(2) if picked else fg(),
                                   linewidth=2.0 if picked else 0.6))
            ax.text(px + (i + 0.5) * cw, cy, f"{p[t, i]:.3f}", ha="center", va="center",
                    fontsize=10, fontweight="bold" if picked else "normal")
        terms = " + ".join(f"{w:.3f}{CDOT}E{e}(x)" for e, w in zip(chosen[t], weights[t],
                                                                   strict=True))
        if narrow:  # the output on a line of its own, under the probabilities
            ax.text(px, cy - ch / 2 - 0.2, f"{ARROW} y = {terms}", ha="left", va="center",
                    fontsize=10)
        else:
            arrow(ax, (px + n_experts * cw + 0.08, cy), (yx - 0.1, cy))
            ax.text(yx, cy, f"y = {terms}", ha="left", va="center", fontsize=10)
    # each expert runs only on the rows that chose it
    for i in range(n_experts):
        rows = [t for t in range(N_TOKENS) if i in chosen[t]]
        runs = ", ".join(map(str, rows)) if rows else "none"
        box(ax, px + (i + 0.5) * cw, ey, cw - 0.08, 0.7,
            f"E{i}\ntoken{'s' if len(rows) > 1 else ''}\n{runs}", size=10, tint=0)
    expert = f"each expert ({VARIANT_NAME} {moe.d_model}{ARROW}{moe.d_ff}{ARROW}{moe.d_model})"
    note = (f"{k} of {n_experts} experts a token; the others are not run. Each row of p adds "
            f"up to 1, and so do its {k} weights.")
    if narrow:
        ax.text(px - 0.6, ey + 0.75, f"{expert}\nruns only on the tokens that chose it:",
                ha="left", va="center", fontsize=10)
        note = f"y weighs the top {k} by their p divided by their sum. {note}"
        ax.text(px - 0.6, ey - 0.45, "\n".join(textwrap.wrap(note, 40)), ha="left", va="top",
                fontsize=10)
    else:
        ax.text(px - 0.12, ey, expert.replace(" (", "\n(") + "\nruns only on", ha="right",
                va="center", fontsize=10)
        ax.text(yx, ey, "\n".join(textwrap.wrap(note, 30)), ha="left", va="center",
                fontsize=10)
    return fig


# --- 2. expert parallelism: the all-to-all ---------------------------------------------------

def moe_all_to_all() -> Figure:
    """A few tokens on each device, sent to the devices of their experts and back."""
    moe = moe_layer()
    batch = np.random.default_rng(BATCH_SEED).normal(size=(BATCH_ROWS, moe.d_model))
    x = batch[:EP_TOKENS]  # (tokens, d_model)
    _, chosen, _ = moe.route(x)  # (tokens, top_k)
    received = moe.dispatch(x).assigned  # (n_experts,) vectors each expert receives
    per_device = moe.n_experts // EP_DEVICES  # experts i * per_device ... on device i
    tokens_per_device = EP_TOKENS // EP_DEVICES
    home = np.arange(EP_TOKENS) // tokens_per_device  # (tokens,) the device of each token
    where = chosen // per_device  # (tokens, top_k) the device of each chosen expert

    narrow = layout() is NARROW
    # narrow: two-line boxes, and each device's summary in the caption (arrows cross the panels)
    row, erow = (0.68, 0.8) if narrow else (0.5, 0.65)  # pitch of the tokens, the experts
    body = max(tokens_per_device * row, per_device * erow)
    ph = 0.55 + body  # a device's panel
    gap, foot = 0.3, (2.45 if narrow else 0.95)  # between the panels; the caption under them
    width = 3.75 if narrow else 7.7
    fig, ax = canvas(width, foot + EP_DEVICES * ph + (EP_DEVICES - 1) * gap + 0.1)
    # centres and widths of the token and expert boxes; the summary's left edge
    tx, tw, ex, ew, sx = (0.72, 1.05, 2.95, 1.0, 0.2) if narrow else (1.2, 1.8, 4.0, 1.45, 5.0)
    sep = "\n" if narrow else " "
    token_y, expert_y = {}, {}
    summaries = []
    for d in range(EP_DEVICES):
        y0 = foot + (EP_DEVICES - 1 - d) * (ph + gap)
        panel(ax, 0.05, y0, width - 0.1, ph, f"device {d}")
        mid = y0 + ph - 0.4 - body / 2  # the middle of its tokens and experts
        for j, t in enumerate(np.flatnonzero(home == d)):
            cy = mid + row * ((tokens_per_device - 1) / 2 - j)
            token_y[t] = cy
            box(ax, tx, cy, tw, 0.52 if narrow else 0.38, f"token {t}{sep}{ARROW} " + ", ".join(
                f"E{e}" for e in chosen[t]), size=10)
        for j in range(per_device):
            e = d * per_device + j
            cy = mid + erow * ((per_device - 1) / 2 - j)
            expert_y[e] = cy
            box(ax, ex, cy, ew, 0.52 if narrow else 0.5,
                f"E{e}:{sep}{received[e]} tokens", size=10, tint=0)
        sent = int(np.sum((home[:, None] == d) & (where != d)))
        kept = int(np.sum((home[:, None] == d) & (where == d)))
        taken = int(received[d * per_device:(d + 1) * per_device].sum())
        summary = (f"sends {sent} token vectors to other devices, keeps {kept}; its experts take "
                   f"{taken} in all")
        summaries.append(f"Device {d} {summary}.")
        if not narrow:
            ax.text(sx, mid, "\n".join(textwrap.wrap(summary, 26)), ha="left", va="center",
                    fontsize=10)
    for t in range(EP_TOKENS):
        for e, dev in zip(chosen[t], where[t], strict=True):
            crosses = dev != home[t]
            arrow(ax, (tx + tw / 2 + 0.04, token_y[t]), (ex - ew / 2 - 0.04, expert_y[e]),
                  tint=1 if crosses else None, width=1.6 if crosses else 0.8)
    crossing = int(np.sum(where != home[:, None]))
    caption = (f"Thick arrows, the all-to-all: {crossing} of {chosen.size} assignments change "
               f"device (on average (D{NBSP}{MINUS}{NBSP}1)/D = {EP_DEVICES - 1}/{EP_DEVICES} "
               f"of them, D = {EP_DEVICES}). The expert outputs come back the same way, a second "
               "all-to-all, and each token adds its weighted pair.")
    paragraphs = [*summaries, "", caption] if narrow else [caption]  # "": a blank line
    lines = [line for text in paragraphs
             for line in textwrap.wrap(text, 44 if narrow else 84, break_on_hyphens=False)
             or [""]]
    ax.text(0.1 if narrow else width / 2, foot / 2, "\n".join(lines),
            ha="left" if narrow else "center", va="center", fontsize=10)
    return fig


# --- 3. tensor parallelism: the Megatron split -----------------------------------------------

@functools.cache
def tp_run() -> tuple[ffn.FeedForward, list[ffn.FeedForward], list[np.ndarray],
                      list[ffn.FeedForwardTrace]]:
    """A TP_MODEL block, its TP_DEVICES shards (W1 and b1 by columns, W2 by rows, no b2), the
    column blocks, and each shard's pass over TP_TOKENS tokens (the sum checked: the split is
    the block)."""
    model = ffn.get_model(TP_MODEL)
    block = ffn.FeedForward.random(model.d_model, model.resolved_d_ff, activation="gelu")
    cols = np.split(np.arange(block.d_ff), TP_DEVICES)  # D blocks of d_ff / D hidden units
    shards = [ffn.FeedForward(block.W1[:, c], block.b1[c], block.W2[c, :], None,
                              activation=block.activation) for c in cols]
    x = np.random.default_rng(0).standard_normal((TP_TOKENS, block.d_model))
    traces = [s.forward_trace(x) for s in shards]  # each: h (n, d_ff / D), y (n, d_model)
    y_split = sum(t.y for t in traces) + block.b2  # the all-reduce, then b2 once
    assert np.allclose(y_split, block(x), rtol=0, atol=1e-12)
    return block, shards, cols, traces


def span(c: np.ndarray) -> str:
    """`0:1536` for the index block 0, 1, ..., 1535."""
    return f"{c[0]}:{c[-1] + 1}"


def matrices(ax: Axes, cols: list[np.ndarray], block: ffn.FeedForward, w1: tuple[float, float],
             w2: tuple[float, float]) -> None:
    """W1 and W2 to scale, each block tinted by the device that holds it; `w1` is W1's lower
    left corner, `w2` W2's."""
    d_model, d_ff = block.d_model, block.d_ff
    unit = 1.9 / d_ff  # inches per row or column
    (w1x, w1y), (w2x, w2y) = w1, w2
    for d, c in enumerate(cols):
        ax.add_patch(Rectangle((w1x + c[0] * unit, w1y), len(c) * unit, d_model * unit,
                               facecolor=color(d), alpha=0.35, edgecolor=color(d),
                               linewidth=1.4))
        ax.text(w1x + (c[0] + len(c) / 2) * unit, w1y + d_model * unit / 2,
                f"columns\n{span(c)}", ha="center", va="center", fontsize=9.5)
        ax.add_patch(Rectangle((w2x, w2y + (d_ff - c[-1] - 1) * unit), d_model * unit,
                               len(c) * unit, facecolor=color(d), alpha=0.35,
                               edgecolor=color(d), linewidth=1.4))
        ax.text(w2x + d_model * unit + 0.12, w2y + (d_ff - c[0] - len(c) / 2) * unit,
                f"rows {span(c)}", ha="left", va="center", fontsize=9.5)
    ax.text(w1x + d_ff * unit + 0.12, w1y + d_model * unit / 2,
            f"W1 {shape(block.W1.shape)}:\ncut by columns\n(b1 {shape(block.b1.shape)} too)",
            ha="left", va="center", fontsize=10)
    ax.text(w2x - 0.12, w2y + d_ff * unit / 2, f"W2 {shape(block.W2.shape)}:\ncut by rows",
            ha="right", va="center", fontsize=10)


def tensor_parallel() -> Figure:
    """W1 cut by columns and W2 by rows over D devices; D partial sums; one all-reduce. Wide,
    one lane a device from left to right; narrow, one column a device from top to bottom."""
    block, shards, cols, traces = tp_run()
    model = ffn.get_model(TP_MODEL)
    D, d_model = TP_DEVICES, block.d_model
    narrow = layout() is NARROW
    per_token = 2 * (D - 1) / D * d_model * BF16  # ring all-reduce, bytes each device sends
    caption = (f"{model.name}, D = {D}: every device holds x and 1/{D} of W1, b1 and W2; the "
               f"only talk is one all-reduce of the (n,{NBSP}{d_model}) partials: "
               f"{fmt(round(per_token))} bytes per token sent by each device in bfloat16 "
               f"(2{NBSP}{TIMES}{NBSP}(D{NBSP}{MINUS}{NBSP}1)/D{NBSP}{TIMES}{NBSP}{d_model}"
               f"{NBSP}{TIMES}{NBSP}{BF16}); b2 is added once, after it.")
    x_label = f"x\n{shape(traces[0].x.shape, 'n')}"
    y_label = (f"+ b2 {shape(block.b2.shape)}\n= y {shape(traces[0].y.shape, 'n')}\n"
               "on every device")
    # each device's boxes and partial output: (W1 and b1, activation, W2, partial)
    stages = [(f"@ W1[:, {span(c)}]\n+ b1[{span(c)}]",
               f"{block.activation.upper()}\nh {shape(t.h.shape, 'n')}",
               f"@ W2[{span(c)}, :]\n{shape(s.W2.shape)}",
               f"partial\n{shape(t.y.shape, 'n')}")
              for c, s, t in zip(cols, shards, traces, strict=True)]
    if narrow:
        width = 3.75
        fig, ax = canvas(width, 10.8)
        matrices(ax, cols, block, (0.25, 10.1), (1.75, 7.75))
        xy, top = 7.25, 6.65  # the input; the top of the devices' panels
        box(ax, width / 2, xy, 0.95, 0.62, x_label, size=10)
        pw = (width - 0.1 - 0.1 * (D - 1)) / D  # a panel's width
        ar_y = 2.75  # the all-reduce
        for d, (w1, act, w2, partial) in enumerate(stages):
            x0 = 0.05 + d * (pw + 0.1)
            cx = x0 + pw / 2
            panel(ax, x0, top - 2.95, pw, 2.95, f"device {d}")
            ys = (top - 0.75, top - 1.6, top - 2.45)
            arrow(ax, (width / 2, xy - 0.31), (cx, ys[0] + 0.3))
            for k, (label, y) in enumerate(zip((w1, act, w2), ys, strict=True)):
                box(ax, cx, y, pw - 0.2, 0.58, label, size=9.5, tint=None if k == 1 else d)
                if k < 2:
                    arrow(ax, (cx, y - 0.29), (cx, ys[k + 1] + 0.29))
            arrow(ax, (cx, ys[2] - 0.29), (cx, ar_y + 0.22))
            ax.text(cx + 0.08, (top - 2.95 + ar_y + 0.22) / 2, partial, ha="left",
                    va="center", fontsize=9.5)
        box(ax, width / 2, ar_y, width - 0.3, 0.44, "all-reduce: sum", size=10, tint=4,
            bold=True)
        arrow(ax, (width / 2, ar_y - 0.22), (width / 2, ar_y - 0.5))
        box(ax, width / 2, ar_y - 0.85, 1.9, 0.7, y_label.replace("\n= ", " = "), size=10)
        ax.text(0.1, 0.7, "\n".join(textwrap.wrap(caption, 44, break_on_hyphens=False)),
                ha="left", va="center", fontsize=10)
        return fig
    width = 7.5
    fig, ax = canvas(width, 6.35)
    matrices(ax, cols, block, (0.3, 5.6), (5.0, 4.15))
    # one lane per device: x, its shard of the block, its partial output
    lane_h, lane_gap = 1.1, 0.2
    lanes = [3.35 - d * (lane_h + lane_gap) for d in range(D)]  # centres, top to bottom
    mid = (lanes[0] + lanes[-1]) / 2 - 0.15  # the shared input and the all-reduce
    ar_x = 6.9
    box(ax, 0.5, mid, 0.8, 0.8, x_label, size=10)
    for d, ((w1, act, w2, partial), cy) in enumerate(zip(stages, lanes, strict=True)):
        panel(ax, 1.1, cy - lane_h / 2, 4.6, lane_h, f"device {d}")
        ys = cy - 0.15
        box(ax, 1.95, ys, 1.5, 0.62, w1, size=9.5, tint=d)
        box(ax, 3.4, ys, 0.9, 0.62, act, size=9.5)
        box(ax, 4.85, ys, 1.5, 0.62, w2, size=9.5, tint=d)
        arrow(ax, (0.9, mid), (1.2, ys))
        arrow(ax, (2.7, ys), (2.95, ys))
        arrow(ax, (3.85, ys), (4.1, ys))
        arrow(ax, (5.6, ys), (ar_x - 0.4, ys))
        ax.text(6.07, ys - 0.08, partial, ha="center", va="top", fontsize=9.5)
    ar_top, ar_bottom = lanes[0] + 0.35, lanes[-1] - 0.65
    box(ax, ar_x, (ar_top + ar_bottom) / 2, 0.8, ar_top - ar_bottom, "all-\nreduce:\nsum",
        size=10, tint=4, bold=True)
    arrow(ax, (ar_x, ar_bottom), (ar_x, 1.1))
    box(ax, ar_x - 0.3, 0.6, 1.4, 0.95, y_label, size=10)
    ax.text(0.1, 0.6, "\n".join(textwrap.wrap(caption, 72, break_on_hyphens=False)),
            ha="left", va="center", fontsize=10)
    return fig


FIGURES = {
    "moe-routing": moe_routing,
    "moe-all-to-all": moe_all_to_all,
    "tensor-parallel-split": tensor_parallel,
}
# Drawn narrow too, for phones: stages stacked top to bottom (build.py).
NARROW_FIGURES = set(FIGURES)
