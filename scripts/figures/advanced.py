"""Diagrams of the two advanced chapters: mixture of experts and tensor parallelism.

As in diagrams.py, every number drawn is computed when the diagram is drawn: the router's
probabilities, choices and weights by a real `ffn.MixtureOfExperts` (the one docs/moe.md builds,
same sizes and seeds), the shards' shapes by cutting a real `ffn.FeedForward` of a model in
`ffn.MODELS` the way docs/tensor-parallel.md does.
"""

from __future__ import annotations

import functools

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

import ffn
from scripts.figures._common import canvas, color, fg
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
    """The page's three tokens: router probabilities, the top k, their weights, the sum."""
    moe = moe_layer()
    x = np.random.default_rng(TOKENS_SEED).normal(size=(N_TOKENS, moe.d_model))
    p, chosen, weights = moe.route(x)  # (n, n_experts), (n, top_k), (n, top_k)
    n_experts, k = moe.n_experts, moe.top_k
    cw, ch, row = 0.78, 0.44, 0.72  # cell width and height, row pitch
    px = 1.45  # left edge of the probability cells
    wx = px + n_experts * cw + 0.55  # left edge of the weights
    ey = 0.5  # the experts' row, at the bottom
    first = ey + 0.85 + row * (N_TOKENS - 1)  # the first token's row
    fig, ax = canvas(9.3, first + 1.2)
    ax.text(px + n_experts * cw / 2, first + 0.85,
            f"p = softmax(x R),  R {shape(moe.router.shape)}", ha="center", va="center",
            fontsize=11)
    ax.text(wx + 0.9, first + 0.85, f"top {k}, divided by their sum", ha="center",
            va="center", fontsize=11)
    ax.text(wx + 3.1, first + 0.85, "output", ha="center", va="center", fontsize=11)
    for i in range(n_experts):
        ax.text(px + (i + 0.5) * cw, first + 0.45, f"E{i}", ha="center", va="center",
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
        arrow(ax, (px + n_experts * cw + 0.08, cy), (wx - 0.08, cy))
        ax.text(wx, cy, "   ".join(f"E{e}: {w:.3f}" for e, w in zip(chosen[t], weights[t],
                                                                      strict=True)),
                ha="left", va="center", fontsize=10)
        arrow(ax, (wx + 1.95, cy), (wx + 2.2, cy))
        terms = " + ".join(f"{w:.3f}{CDOT}E{e}(x)" for e, w in zip(chosen[t], weights[t],
                                                                   strict=True))
        ax.text(wx + 2.3, cy, f"y = {terms}", ha="left", va="center", fontsize=10)
    # each expert runs only on the rows that chose it
    for i in range(n_experts):
        rows = [t for t in range(N_TOKENS) if i in chosen[t]]
        runs = ", ".join(map(str, rows)) if rows else "none"
        box(ax, px + (i + 0.5) * cw, ey, cw - 0.08, 0.62,
            f"E{i}\ntoken{'s' if len(rows) > 1 else ''}\n{runs}", size=9, tint=0)
    ax.text(px - 0.12, ey, f"each expert\n({VARIANT_NAME} "
            f"{moe.d_model}{ARROW}{moe.d_ff}{ARROW}{moe.d_model})\nruns only on",
            ha="right", va="center", fontsize=10)
    ax.text(wx, ey, f"{k} of {n_experts} experts a token; the others are not run.\n"
            f"Each row of p adds up to 1, and so do its {k} weights.", ha="left",
            va="center", fontsize=10)
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

    row, ph, gap = 0.5, 0.55 + 0.5 * max(tokens_per_device, per_device), 0.45
    fig, ax = canvas(9.4, 0.9 + EP_DEVICES * ph + (EP_DEVICES - 1) * gap + 0.3)
    tx, ex, sx = 1.4, 5.3, 6.45  # centres of tokens and experts, left edge of the summary
    token_y, expert_y = {}, {}
    for d in range(EP_DEVICES):
        y0 = 0.9 + (EP_DEVICES - 1 - d) * (ph + gap)
        panel(ax, 0.1, y0, 9.2, ph, f"device {d}")
        mid = y0 + (ph - 0.25) / 2
        for j, t in enumerate(np.flatnonzero(home == d)):
            cy = mid + row * ((tokens_per_device - 1) / 2 - j)
            token_y[t] = cy
            box(ax, tx, cy, 1.9, 0.38, f"token {t} {ARROW} " + ", ".join(
                f"E{e}" for e in chosen[t]), size=10)
        for j in range(per_device):
            e = d * per_device + j
            cy = mid + row * ((per_device - 1) / 2 - j) * 1.3
            expert_y[e] = cy
            box(ax, ex, cy, 1.6, 0.5, f"E{e}: {received[e]} tokens", size=10, tint=0)
        sent = int(np.sum((home[:, None] == d) & (where != d)))
        kept = int(np.sum((home[:, None] == d) & (where == d)))
        taken = int(received[d * per_device:(d + 1) * per_device].sum())
        ax.text(sx, mid, f"sends {sent} token vectors to\nother devices, keeps {kept};\n"
                f"its experts take {taken} in all",
                ha="left", va="center", fontsize=10)
    for t in range(EP_TOKENS):
        for e, dev in zip(chosen[t], where[t], strict=True):
            crosses = dev != home[t]
            arrow(ax, (tx + 0.97, token_y[t]), (ex - 0.82, expert_y[e]),
                  tint=1 if crosses else None, width=1.6 if crosses else 0.8)
    crossing = int(np.sum(where != home[:, None]))
    ax.text(4.7, 0.55, f"thick arrows, the all-to-all: {crossing} of {chosen.size} assignments "
            f"change device (on average (D {MINUS} 1)/D = {EP_DEVICES - 1}/{EP_DEVICES} of them, "
            f"D = {EP_DEVICES});", ha="center", va="center", fontsize=10)
    ax.text(4.7, 0.2, "the expert outputs come back the same way, a second all-to-all, "
            "and each token adds its weighted pair", ha="center", va="center", fontsize=10)
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


def tensor_parallel() -> Figure:
    """W1 cut by columns and W2 by rows over D devices; D partial sums; one all-reduce."""
    block, shards, cols, traces = tp_run()
    model = ffn.get_model(TP_MODEL)
    D, d_model, d_ff = TP_DEVICES, block.d_model, block.d_ff
    fig, ax = canvas(9.8, 5.9)
    # the two matrices, to scale, tinted by the device that holds each block
    unit = 1.9 / d_ff  # inches per row or column
    w1x, w1y = 0.3, 4.75  # lower left corner of W1
    for d, c in enumerate(cols):
        ax.add_patch(Rectangle((w1x + c[0] * unit, w1y), len(c) * unit, d_model * unit,
                               facecolor=color(d), alpha=0.35, edgecolor=color(d),
                               linewidth=1.4))
        ax.text(w1x + (c[0] + len(c) / 2) * unit, w1y + d_model * unit / 2,
                f"columns\n{span(c)}", ha="center", va="center", fontsize=9)
    ax.text(w1x + d_ff * unit + 0.12, w1y + d_model * unit / 2,
            f"W1 {shape(block.W1.shape)}:\ncut by columns\n(b1 {shape(block.b1.shape)} too)",
            ha="left", va="center", fontsize=10)
    w2x, w2y = 6.1, 3.9
    for d, c in enumerate(cols):
        ax.add_patch(Rectangle((w2x, w2y + (d_ff - c[-1] - 1) * unit), d_model * unit,
                               len(c) * unit, facecolor=color(d), alpha=0.35,
                               edgecolor=color(d), linewidth=1.4))
        ax.text(w2x + d_model * unit + 0.12, w2y + (d_ff - c[0] - len(c) / 2) * unit,
                f"rows {span(c)}", ha="left", va="center", fontsize=9)
    ax.text(w2x - 0.12, w2y + d_ff * unit / 2, f"W2 {shape(block.W2.shape)}:\ncut by rows",
            ha="right", va="center", fontsize=10)
    # one lane per device: x, its shard of the block, its partial output
    lane_h, lane_gap = 1.25, 0.25
    lanes = [3.0 - d * (lane_h + lane_gap) for d in range(D)]  # centres, top to bottom
    mid = (lanes[0] + lanes[-1]) / 2 - 0.15  # the shared input and output
    xx, ar_x, ox = 0.6, 7.7, 9.1  # the input, the all-reduce, the output
    box(ax, xx, mid, 0.85, 0.8, f"x\n{shape(traces[0].x.shape, 'n')}", size=10)
    for d, (shard, trace, cy) in enumerate(zip(shards, traces, lanes, strict=True)):
        panel(ax, 1.3, cy - lane_h / 2, 5.35, lane_h, f"device {d}")
        ys = cy - 0.15
        box(ax, 2.35, ys, 1.6, 0.62, f"@ W1[:, {span(cols[d])}]\n+ b1[{span(cols[d])}]",
            size=9, tint=d)
        box(ax, 3.9, ys, 1.05, 0.62,
            f"{block.activation.upper()}\nh {shape(trace.h.shape, 'n')}", size=9)
        box(ax, 5.55, ys, 1.6, 0.62, f"@ W2[{span(cols[d])}, :]\n{shape(shard.W2.shape)}",
            size=9, tint=d)
        arrow(ax, (xx + 0.43, mid), (1.55, ys))
        arrow(ax, (3.15, ys), (3.37, ys))
        arrow(ax, (4.43, ys), (4.75, ys))
        arrow(ax, (6.35, ys), (ar_x - 0.4, ys))
        ax.text(6.95, ys - 0.08, f"partial\n{shape(trace.y.shape, 'n')}", ha="center",
                va="top", fontsize=9)
    ar_top, ar_bottom = lanes[0] + 0.35, lanes[-1] - 0.65
    box(ax, ar_x, (ar_top + ar_bottom) / 2, 0.8, ar_top - ar_bottom, "all-\nreduce:\nsum",
        size=10, tint=4, bold=True)
    y_shape = shape(traces[0].y.shape, "n")
    box(ax, ox, mid, 1.25, 0.95, f"+ b2 {shape(block.b2.shape)}\n= y {y_shape}\non every device",
        size=9)
    arrow(ax, (ar_x + 0.4, mid), (ox - 0.63, mid))
    per_token = 2 * (D - 1) / D * d_model * BF16  # ring all-reduce, bytes each device sends
    ax.text(4.9, 0.3, f"{model.name}, D = {D}: every device holds x and 1/{D} of W1, b1 "
            f"and W2; the only talk is one all-reduce of the (n, {d_model}) partials,\n"
            f"{fmt(round(per_token))} bytes per token sent by each device in bfloat16 "
            f"(2 {TIMES} (D {MINUS} 1)/D {TIMES} {d_model} {TIMES} {BF16}); b2 is added "
            f"once, after it", ha="center", va="center", fontsize=9.5)
    return fig


FIGURES = {
    "moe-routing": moe_routing,
    "moe-all-to-all": moe_all_to_all,
    "tensor-parallel-split": tensor_parallel,
}
