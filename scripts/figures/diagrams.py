"""Diagrams of the block, drawn from the same numbers the chapters compute.

Every label that is a number (a width, a shape, a count) is read from `ffn` when the diagram
is drawn: model widths from `ffn.get_model`, array shapes from a real `ffn.FeedForward` run,
parameter counts from `ffn.count_parameters`.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Polygon, Rectangle

import ffn
from ffn_docs import memory
from scripts.figures._common import NARROW, canvas, color, fg, layout, stacked

# Typographic characters, as escapes so the source stays plain ASCII.
TIMES, ARROW, MINUS, SUM = "\u00d7", "\u2192", "\u2212", "\u03a3"
ODOT, TRANSPOSE, PRIME, CDOT = "\u2299", "\u1d40", "\u2032", "\u00b7"
SIGMA = "\u03c3"  # the FFN's activation, as in the notation table of docs/index.md

PLAIN_MODEL = "GPT-2 small"  # the concrete plain block of the shape diagrams
GATED_MODEL = "LLaMA-7B"  # the concrete gated block
N_TOKENS = 5  # tokens pushed through the real block whose shapes label the diagrams


# --- drawing helpers -------------------------------------------------------------------------

def box(ax: Axes, cx: float, cy: float, w: float, h: float, text: str, tint: int | None = None,
        size: float = 11, dashed: bool = False, bold: bool = False) -> None:
    """A rounded box centred on (cx, cy) with centred text; `tint` fills it lightly."""
    face = color(tint) if tint is not None else "none"
    ax.add_patch(FancyBboxPatch((cx - w / 2, cy - h / 2), w, h,
                                boxstyle="round,pad=0,rounding_size=0.08",
                                facecolor=face, alpha=0.22 if tint is not None else 1.0,
                                edgecolor="none"))
    ax.add_patch(FancyBboxPatch((cx - w / 2, cy - h / 2), w, h,
                                boxstyle="round,pad=0,rounding_size=0.08", facecolor="none",
                                edgecolor=color(tint) if tint is not None else fg(),
                                linewidth=1.6 if tint is not None else 1.1,
                                linestyle="--" if dashed else "-"))
    ax.text(cx, cy, text, ha="center", va="center", fontsize=size,
            fontweight="bold" if bold else "normal")


def arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], dashed: bool = False,
          tint: int | None = None, width: float = 1.2, rad: float = 0.0) -> None:
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12,
                                 color=color(tint) if tint is not None else fg(),
                                 linewidth=width, linestyle="--" if dashed else "-",
                                 connectionstyle=f"arc3,rad={rad}", shrinkA=0, shrinkB=0))


def line(ax: Axes, points: list[tuple[float, float]], tint: int | None = None) -> None:
    xs, ys = zip(*points, strict=True)
    ax.plot(xs, ys, color=color(tint) if tint is not None else fg(), linewidth=1.2)


def shape(dims: tuple[int, ...], first: str | None = None) -> str:
    """`(n, 768)` for an array of shape (N_TOKENS, 768) when `first` is "n"."""
    parts = [first, *map(str, dims[1:])] if first is not None else list(map(str, dims))
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


# --- the numbers, from ffn -------------------------------------------------------------------

@functools.cache
def plain_run() -> tuple[ffn.FeedForward, ffn.FeedForwardTrace, dict[str, tuple[int, ...]]]:
    """A real block of PLAIN_MODEL's widths, one forward and one backward pass.

    Returns the block, the forward trace and the shape of every gradient.
    """
    model = ffn.get_model(PLAIN_MODEL)
    block = ffn.FeedForward.random(model.d_model, model.resolved_d_ff, activation="gelu")
    x = np.random.default_rng(0).standard_normal((N_TOKENS, model.d_model))
    trace = block.forward_trace(x)
    dx = block.backward(np.ones_like(trace.y))
    grads = {name: g.shape for name, g in block.grads.items() if g is not None}
    grads["x"] = dx.shape
    for name in ("h_pre", "h"):  # dh and dh_pre have the shapes of what they differentiate
        grads[name] = getattr(trace, name).shape
    grads["y"] = trace.y.shape
    return block, trace, grads


def fmt(n: int) -> str:
    return f"{n:,}"


# --- 1. the layer ----------------------------------------------------------------------------

PLACEMENT_MODEL = {"post": "Transformer base", "pre": PLAIN_MODEL}  # a published model of each


def transformer_layer() -> Figure:
    """Post-norm and pre-norm layers side by side (narrow: one above the other), with the
    FFN's place and the residuals."""
    bw, bh = 2.0, 0.46
    order = [p for p in ("post", "pre") if p in ffn.PLACEMENTS]
    narrow = layout() is NARROW
    if narrow:
        fig, axes = stacked(4.1, 6.8, len(order))
    else:
        fig, ax = canvas(8.2, 6.8)
        axes = [ax] * len(order)
    for k, placement in enumerate(order):
        model = ffn.get_model(PLACEMENT_MODEL[placement])
        ax = axes[k]
        cx = 2.0 if narrow else 2.0 + 4.2 * k
        if placement == "post":  # LN(x + F(x)) after each sublayer
            stack = [("Attention", 1), ("Add", None), ("LayerNorm", None),
                     ("FFN", 0), ("Add", None), ("LayerNorm", None)]
            adds = (1, 4)
        else:  # x + F(LN(x))
            stack = [("LayerNorm", None), ("Attention", 1), ("Add", None),
                     ("LayerNorm", None), ("FFN", 0), ("Add", None)]
            adds = (2, 5)
        ys = [1.3, 2.0, 2.7, 3.45, 4.15, 4.85]
        # each residual leaves the main line below its sublayer and rejoins at its Add
        branches = [(0.8, adds[0]), ((ys[2] + ys[3]) / 2, adds[1])]
        ax.text(cx, 6.6, f"{placement}-norm", ha="center", va="center", fontsize=13,
                fontweight="bold")
        ax.text(cx, 6.25, f"(as in {model.name})", ha="center", va="center", fontsize=10)
        ax.text(cx, 0.2, f"x: (n, {model.d_model})", ha="center", va="center", fontsize=11)
        arrow(ax, (cx, 0.4), (cx, ys[0] - bh / 2))
        for i, (name, tint) in enumerate(stack):
            w = 0.9 if name == "Add" else bw
            label = name
            if name == "FFN":
                label = f"FFN {model.d_model}{ARROW}{model.resolved_d_ff}{ARROW}{model.d_model}"
            box(ax, cx, ys[i], w if name != "FFN" else bw + 0.5, bh, label, tint=tint,
                bold=name == "FFN")
            if i + 1 < len(stack):
                arrow(ax, (cx, ys[i] + bh / 2), (cx, ys[i + 1] - bh / 2))
        arrow(ax, (cx, ys[-1] + bh / 2), (cx, 5.55))
        ax.text(cx, 5.75, f"to the next layer: (n, {model.d_model})", ha="center",
                va="center", fontsize=11)
        # residual paths: leave the main line at y0, rejoin at an Add from the right
        for n, (y0, add) in enumerate(branches):
            xr = cx + bw / 2 + 0.55
            ax.plot([cx], [y0], "o", color=fg(), markersize=4)
            line(ax, [(cx, y0), (xr, y0), (xr, ys[add])])
            arrow(ax, (xr, ys[add]), (cx + 0.45, ys[add]))
            if n == 0:
                ax.text(xr + 0.12, (y0 + ys[add]) / 2, "residual", rotation=90, ha="left",
                        va="center", fontsize=10)
    return fig


# --- 2. the block with every shape -----------------------------------------------------------

def ffn_shapes() -> Figure:
    """The FFN of PLAIN_MODEL: every array's shape, every parameter's shape and count."""
    if layout() is NARROW:
        return ffn_shapes_narrow()
    block, trace, _ = plain_run()
    model = ffn.get_model(PLAIN_MODEL)
    fig, ax = canvas(7.3, 4.3)
    arrays = [("x", trace.x, 0.65), ("h_pre", trace.h_pre, 2.75), ("h", trace.h, 4.55),
              ("y", trace.y, 6.65)]
    ya, yw = 3.1, 1.35
    for name, value, cx in arrays:
        box(ax, cx, ya, 1.2, 0.72, f"{name}\n{shape(value.shape, 'n')}", tint=2 if name in (
            "h_pre", "h") else None)
    ops = [(1.7, "@ W1\n+ b1"), (3.65, block.activation.upper()), (5.6, "@ W2\n+ b2")]
    for (_, _, x0), (_, _, x1), (cx, label) in zip(arrays, arrays[1:], ops, strict=False):
        arrow(ax, (x0 + 0.6, ya), (x1 - 0.6, ya))
        ax.text(cx, ya + 0.08, label, ha="center", va="bottom", fontsize=11)
    params = [("W1", 0.85), ("b1", 2.35), ("W2", 4.95), ("b2", 6.45)]
    for name, cx in params:
        value = getattr(block, name)
        box(ax, cx, yw, 1.4, 0.72, f"{name}  {shape(value.shape)}\n{fmt(value.size)}",
            tint=0)
    for cx, targets in ((1.7, ("W1", "b1")), (5.6, ("W2", "b2"))):
        for name, px in params:
            if name in targets:
                arrow(ax, (px, yw + 0.36), (cx + (px - cx) * 0.25, ya - 0.05), dashed=True,
                      tint=0)
    total = sum(getattr(block, name).size for name, _ in params)
    counted = ffn.count_parameters(model.d_model, model.resolved_d_ff, bias=model.bias)
    assert total == counted == model.ffn_parameters_per_layer(), (total, counted)
    ax.text(3.65, 0.45, f"{model.name}: {fmt(total)} parameters per layer's FFN, "
            f"{TIMES} {model.n_layers} layers = {fmt(model.ffn_parameters())}",
            ha="center", va="center", fontsize=11)
    ax.text(3.65, 4.1, f"n tokens, each a row; d_model = {block.d_model}, "
            f"d_ff = {block.d_ff}", ha="center", va="center", fontsize=11)
    return fig


def ffn_shapes_narrow() -> Figure:
    """ffn_shapes for a phone: the arrays top to bottom, each matrix beside the step it joins."""
    block, trace, _ = plain_run()
    model = ffn.get_model(PLAIN_MODEL)
    fig, ax = canvas(4.1, 8.3)
    cx, px = 1.3, 3.25  # centres: the arrays' column, the parameters' column
    ys = {"x": 6.95, "h_pre": 4.65, "h": 3.35, "y": 1.05}  # each array's centre, top down
    for name, cy in ys.items():
        value = getattr(trace, name)
        box(ax, cx, cy, 1.3, 0.72, f"{name}\n{shape(value.shape, 'n')}",
            tint=2 if name in ("h_pre", "h") else None)
    steps = [("x", "h_pre", "@ W1\n+ b1", ("W1", "b1")),
             ("h_pre", "h", block.activation.upper(), ()), ("h", "y", "@ W2\n+ b2", ("W2", "b2"))]
    for a, b, label, params in steps:
        top, bottom = ys[a] - 0.36, ys[b] + 0.36
        mid = (top + bottom) / 2
        arrow(ax, (cx, top), (cx, bottom))
        ax.text(cx - 0.12, mid, label, ha="right", va="center", fontsize=11)
        for name, dy in zip(params, (0.42, -0.42), strict=False):
            value = getattr(block, name)
            box(ax, px, mid + dy, 1.55, 0.72, f"{name}  {shape(value.shape)}\n{fmt(value.size)}",
                tint=0)
            arrow(ax, (px - 0.775, mid + dy), (cx + 0.05, mid + dy * 0.15), dashed=True, tint=0)
    total = sum(getattr(block, name).size for name in ("W1", "b1", "W2", "b2"))
    assert total == ffn.count_parameters(model.d_model, model.resolved_d_ff, bias=model.bias)
    ax.text(2.05, 8.0, f"n tokens, each a row;\nd_model = {block.d_model}, d_ff = {block.d_ff}",
            ha="center", va="center", fontsize=11)
    ax.text(2.05, 0.15, f"{model.name}: {fmt(total)} parameters per\nlayer's FFN, "
            f"{TIMES} {model.n_layers} layers = {fmt(model.ffn_parameters())}",
            ha="center", va="center", fontsize=11)
    return fig


# --- 3. expand, then contract, to scale ------------------------------------------------------

def expand_contract() -> Figure:
    """Bars of height proportional to the widths: d_model, d_ff, d_model, for two models."""
    names = (PLAIN_MODEL, GATED_MODEL)
    narrow = layout() is NARROW
    if narrow:  # one model above the other
        fig, axes = stacked(3.6, 5.0, len(names))
    else:
        fig, ax = canvas(7.2, 5.0)
        axes = [ax] * len(names)
    full = 3.0  # inches of bar for each model's d_ff
    for k, name in enumerate(names):
        model = ffn.get_model(name)
        d_model, d_ff = model.d_model, model.resolved_d_ff
        unit = full / d_ff
        ax = axes[k]
        x0 = 0.15 if narrow else 0.15 + 3.6 * k
        base = 0.95
        xs = (x0 + 0.45, x0 + 1.65, x0 + 2.85)
        heights = (d_model * unit, d_ff * unit, d_model * unit)
        bar_w = 0.32
        tints = (0, 2, 0)
        for cx, h, t in zip(xs, heights, tints, strict=True):
            mid = base + full / 2
            ax.add_patch(Rectangle((cx - bar_w / 2, mid - h / 2), bar_w, h, facecolor=color(t),
                                   alpha=0.55, edgecolor=color(t)))
        mid = base + full / 2
        for (ca, ha), (cb, hb) in (((xs[0], heights[0]), (xs[1], heights[1])),
                                   ((xs[1], heights[1]), (xs[2], heights[2]))):
            ax.add_patch(Polygon([(ca + bar_w / 2, mid - ha / 2), (cb - bar_w / 2, mid - hb / 2),
                                  (cb - bar_w / 2, mid + hb / 2), (ca + bar_w / 2, mid + ha / 2)],
                                 closed=True, facecolor=fg(), alpha=0.08, edgecolor="none"))
        ax.text(xs[0], mid - heights[0] / 2 - 0.12, f"x\n{d_model}", ha="center", va="top",
                fontsize=12)
        ax.text(xs[1], base - 0.12, f"h\n{d_ff}", ha="center", va="top", fontsize=12)
        ax.text(xs[2], mid - heights[2] / 2 - 0.12, f"y\n{d_model}", ha="center", va="top",
                fontsize=12)
        ratio = d_ff / d_model
        matrices = "W, V expand" if model.gated else "W1 expands"
        ax.text((xs[0] + xs[1]) / 2, mid + full / 2 + 0.12,
                f"{matrices}\n{TIMES} {ratio:.4g}", ha="center", va="bottom", fontsize=11)
        ax.text((xs[1] + xs[2]) / 2, mid + full / 2 + 0.12,
                f"W2 contracts\n{TIMES} 1/{ratio:.4g}", ha="center", va="bottom", fontsize=11)
        ax.text(xs[1], mid + full / 2 + 0.7, name, ha="center", va="bottom", fontsize=12,
                fontweight="bold")
    sep = "\n" if narrow else " "
    ax.text(1.8 if narrow else 3.6, 0.02 if narrow else 0.1,
            f"bar heights proportional to the widths,{sep}each model to its own scale",
            ha="center", va="bottom", fontsize=10)
    return fig


# --- 4. keys and values ----------------------------------------------------------------------

@functools.cache
def kv_run() -> tuple[ffn.FeedForward, ffn.FeedForwardTrace]:
    """A small real ReLU block and one token, for the key-value picture: the ones the memory
    explorer on the same page starts from (ffn_docs/memory.py)."""
    block = memory.memory_block("relu")
    return block, block.forward_trace(memory.memory_token())


def cells(ax: Axes, x0: float, cy: float, values: np.ndarray, w: float = 0.5,
          h: float = 0.38) -> None:
    """A row of cells holding `values` (2 decimals), tinted by sign and size."""
    top = float(np.abs(values).max()) or 1.0
    for j, v in enumerate(values):
        t = 0 if v >= 0 else 1
        ax.add_patch(Rectangle((x0 + j * w, cy - h / 2), w, h, facecolor=color(t),
                               alpha=0.08 + 0.35 * abs(float(v)) / top, edgecolor="none"))
        ax.add_patch(Rectangle((x0 + j * w, cy - h / 2), w, h, facecolor="none",
                               edgecolor=fg(), linewidth=0.6))
        ax.text(x0 + (j + 0.5) * w, cy, f"{float(v):.2f}".replace("-", MINUS), ha="center",
                va="center", fontsize=10)


def key_value() -> Figure:
    """Columns of W1 as keys, rows of W2 as values, one token's activations choosing."""
    if layout() is NARROW:
        return key_value_narrow()
    block, trace = kv_run()
    W1, W2 = np.asarray(block.W1), np.asarray(block.W2)
    h = np.asarray(trace.h)
    d_model, d_ff = block.d_model, block.d_ff
    row, cw = 0.6, 0.52
    y_out = 0.5  # the output row
    top = y_out + 0.75 + row * d_ff
    fig, ax = canvas(7.15, top + 1.5)
    kx, bx, vx = 0.7, 3.15, 4.85  # left edges: keys, h bars, values
    ax.text(kx - 0.1, top + 1.15, "token x", ha="right", va="center", fontsize=10)
    cells(ax, kx, top + 1.15, np.asarray(trace.x), cw)
    ax.text(kx + cw * d_model / 2, top + 0.4,
            f"keys k_i: the {d_ff} columns\nof W1 {shape(W1.shape)}, as rows",
            ha="center", va="center", fontsize=10)
    ax.text(bx + 0.45, top + 0.4, f"h_i = relu(\nx {CDOT} k_i + b1_i)", ha="center",
            va="center", fontsize=10)
    ax.text(vx + cw * d_model / 2, top + 0.4,
            f"values v_i: the {d_ff}\nrows of W2 {shape(W2.shape)}", ha="center",
            va="center", fontsize=10)
    hmax = float(h.max()) or 1.0
    ycs = [top - 0.3 - row * i for i in range(d_ff)]
    right = vx + cw * d_model
    for i, cy in enumerate(ycs):
        ax.text(kx - 0.1, cy, f"k{i}", ha="right", va="center", fontsize=10)
        cells(ax, kx, cy, W1[:, i], cw)
        arrow(ax, (kx + cw * d_model + 0.05, cy), (bx - 0.5, cy), width=0.8)
        length = 1.0 * float(h[i]) / hmax
        ax.add_patch(Rectangle((bx, cy - 0.14), length, 0.28, facecolor=color(2),
                               alpha=0.7, edgecolor="none"))
        ax.plot([bx, bx], [cy - 0.2, cy + 0.2], color=fg(), linewidth=0.8)
        ax.text(bx - 0.06, cy, f"{float(h[i]):.2f}", ha="right", va="center", fontsize=10)
        ax.text(vx - 0.1, cy, f"v{i}", ha="right", va="center", fontsize=10)
        cells(ax, vx, cy, W2[i], cw)
        if h[i] > 0:  # the value goes to the output, as wide as its coefficient
            ax.add_patch(FancyArrowPatch((right + 0.05, cy), (right + 0.05, y_out),
                                         arrowstyle="-|>", mutation_scale=10, color=color(2),
                                         shrinkA=0, shrinkB=0,
                                         connectionstyle="arc3,rad=-0.35",
                                         linewidth=0.5 + 3.0 * float(h[i]) / hmax))
    ax.text(vx - 0.1, y_out, f"y = {SUM} h_i v_i + b2", ha="right", va="center", fontsize=10)
    cells(ax, vx, y_out, np.asarray(trace.y), cw)
    active = int(np.count_nonzero(h))
    ax.text(kx - 0.5, y_out, f"{active} of {d_ff} units fire;\nonly their values are added",
            ha="left", va="center", fontsize=10)
    return fig


def key_value_narrow() -> Figure:
    """key_value for a phone: the keys and their activations above, the values they scale
    below, then the output."""
    block, trace = kv_run()
    W1, W2 = np.asarray(block.W1), np.asarray(block.W2)
    h = np.asarray(trace.h)
    d_model, d_ff = block.d_model, block.d_ff
    row, cw = 0.5, 0.5
    kx, bx, vx = 1.25, 3.5, 1.25  # left edges: keys, h bars, values (under the keys)
    y_out = 1.25
    v_rows = [y_out + 0.75 + row * (d_ff - 1 - i) for i in range(d_ff)]  # v0 on top
    v_head = v_rows[0] + 0.6
    k_rows = [v_head + 0.8 + row * (d_ff - 1 - i) for i in range(d_ff)]
    k_head = k_rows[0] + 0.6
    top = k_head + 0.75
    fig, ax = canvas(4.1, top + 0.3)
    ax.text(kx - 0.1, top, "token x", ha="right", va="center", fontsize=10)
    cells(ax, kx, top, np.asarray(trace.x), cw)
    ax.text(kx + cw * d_model / 2, k_head,
            f"keys k_i: the {d_ff} columns\nof W1 {shape(W1.shape)}, as rows",
            ha="center", va="center", fontsize=10)
    ax.text(bx + 0.05, k_head, f"h_i = relu(\nx {CDOT} k_i + b1_i)", ha="center",
            va="center", fontsize=10)
    hmax = float(h.max()) or 1.0
    for i, cy in enumerate(k_rows):
        ax.text(kx - 0.1, cy, f"k{i}", ha="right", va="center", fontsize=10)
        cells(ax, kx, cy, W1[:, i], cw)
        arrow(ax, (kx + cw * d_model + 0.05, cy), (bx - 0.42, cy), width=0.8)
        ax.add_patch(Rectangle((bx, cy - 0.14), 0.6 * float(h[i]) / hmax, 0.28,
                               facecolor=color(2), alpha=0.7, edgecolor="none"))
        ax.plot([bx, bx], [cy - 0.2, cy + 0.2], color=fg(), linewidth=0.8)
        ax.text(bx - 0.06, cy, f"{float(h[i]):.2f}", ha="right", va="center", fontsize=10)
    ax.text(2.05, v_head, f"values v_i: the {d_ff} rows of W2 {shape(W2.shape)},\n"
            f"each scaled by its h_i", ha="center", va="center", fontsize=10)
    right = vx + cw * d_model
    for i, cy in enumerate(v_rows):
        ax.text(vx - 0.1, cy, f"{float(h[i]):.2f} {TIMES} v{i}", ha="right", va="center",
                fontsize=10)
        cells(ax, vx, cy, W2[i], cw)
        if h[i] > 0:  # the value goes to the output, as wide as its coefficient
            ax.add_patch(FancyArrowPatch((right + 0.05, cy), (right + 0.05, y_out),
                                         arrowstyle="-|>", mutation_scale=10, color=color(2),
                                         shrinkA=0, shrinkB=0,
                                         connectionstyle="arc3,rad=-0.35",
                                         linewidth=0.5 + 3.0 * float(h[i]) / hmax))
    ax.text(vx - 0.1, y_out, "y", ha="right", va="center", fontsize=10)
    cells(ax, vx, y_out, np.asarray(trace.y), cw)
    active = int(np.count_nonzero(h))
    ax.text(2.05, 0.35, f"y = {SUM} h_i v_i + b2: {active} of {d_ff} units fire;\n"
            "only their values are added", ha="center", va="center", fontsize=10)
    return fig


# --- 5. the backward pass --------------------------------------------------------------------

def backward_graph() -> Figure:
    """Forward row, backward row, weight gradients; dashed: which cached array each uses."""
    if layout() is NARROW:
        return backward_graph_narrow()
    block, trace, grads = plain_run()
    fig, ax = canvas(8.6, 5.4)
    cols = {"x": 0.6, "W1": 1.78, "h_pre": 2.96, "act": 4.35, "h": 5.74, "W2": 6.92, "y": 8.1}
    yf, yb, yg = 4.3, 2.7, 1.1
    bw, bh = 1.0, 0.66
    fwd = [("x", trace.x), ("h_pre", trace.h_pre), ("h", trace.h), ("y", trace.y)]
    ax.text(0.1, yf + 0.62, "forward (kept for backward: x, h_pre, h)", fontsize=11,
            va="center")
    for name, value in fwd:
        box(ax, cols[name], yf, bw, bh, f"{name}\n{shape(value.shape, 'n')}",
            tint=2 if name != "y" else None, size=11)
    widths = {"x": bw, "h_pre": bw, "h": bw, "y": bw, "W1": 0.8, "act": 1.0, "W2": 0.8}
    for name, label in (("W1", "@ W1"), ("act", f"{SIGMA} = {block.activation.upper()}"),
                        ("W2", "@ W2")):
        box(ax, cols[name], yf, widths[name], 0.42, label, size=11)
    chain = ["x", "W1", "h_pre", "act", "h", "W2", "y"]
    for a, b in itertools.pairwise(chain):
        arrow(ax, (cols[a] + widths[a] / 2, yf), (cols[b] - widths[b] / 2, yf))
    ax.text(0.1, yb + 0.62, "backward", fontsize=11, va="center")  # its arrows run leftward
    ax.text(8.6, yf + 0.62, "dashed: what a backward step reads", fontsize=11, va="center",
            ha="right", color=color(0))
    back = [("x", "dx"), ("h_pre", "dh_pre"), ("h", "dh"), ("y", "dy")]
    for name, label in back:
        box(ax, cols[name], yb, bw, bh, f"{label}\n{shape(grads[name], 'n')}", size=11,
            tint=1 if name != "y" else None)
    ops = {"W1": f"@ W1{TRANSPOSE}", "act": f"{ODOT} {SIGMA}{PRIME}(h_pre)",
           "W2": f"@ W2{TRANSPOSE}"}
    widths_b = dict(widths, act=1.22)
    for name, label in ops.items():
        box(ax, cols[name], yb, widths_b[name], 0.42, label, size=11)
    for a, b in itertools.pairwise(chain):
        arrow(ax, (cols[b] - widths_b[b] / 2, yb), (cols[a] + widths_b[a] / 2, yb))
    # which kept array or weight each backward step reads
    arrow(ax, (cols["W1"], yf - 0.21), (cols["W1"], yb + 0.21), dashed=True, tint=0)
    arrow(ax, (cols["W2"], yf - 0.21), (cols["W2"], yb + 0.21), dashed=True, tint=0)
    arrow(ax, (cols["h_pre"] + 0.3, yf - bh / 2), (cols["act"] - 0.3, yb + 0.21), dashed=True,
          tint=0)
    # weight gradients, each under its weight; a bias's gradient under it. The dashed read of
    # x (of h) runs down the gap right of dx (of dh), clear of the backward row's boxes.
    gw = 1.75
    for name, src, uses, d, bias in (("W1", "h_pre", "x", "dh_pre", "b1"),
                                     ("W2", "y", "h", "dy", "b2")):
        cx, gap = cols[name], cols[uses] + bw / 2
        box(ax, cx, yg, gw, bh, f"d{name} = {uses}{TRANSPOSE} @ {d}\n{shape(grads[name])}",
            size=11, tint=1)
        arrow(ax, (cols[src] - 0.2, yb - bh / 2), (cx + 0.45, yg + bh / 2))
        arrow(ax, (gap, yf - bh / 2), (gap + 0.25, yg + bh / 2), dashed=True, tint=0)
        ax.text(cx, yg - 0.62, f"d{bias} = sum of {d} over rows {shape(grads[bias])}",
                ha="center", va="center", fontsize=11)
    return fig


def backward_graph_narrow() -> Figure:
    """backward_graph for a phone: forward down the first column, backward up the second,
    each step level with the one it undoes; the weight gradients in the third."""
    block, trace, grads = plain_run()
    chain = ["x", "W1", "h_pre", "act", "h", "W2", "y"]
    row = {name: 7.65 - 0.95 * i for i, name in enumerate(chain)}  # x on top
    fx, bx, gx = 0.55, 1.95, 3.4  # centres: forward, backward, weight gradients
    bw, bh, oh = 0.95, 0.66, 0.42  # an array's box, and an operation's height
    fig, ax = canvas(4.1, 9.0)
    for cx, label in ((fx, "forward\n(down)"), (bx, "backward\n(up)"), (gx, "weight\ngradients")):
        ax.text(cx, 8.45, label, ha="center", va="center", fontsize=10.5)
    ops = {"W1": ("@ W1", f"@ W1{TRANSPOSE}"),
           "act": (f"{SIGMA} = {block.activation.upper()}", f"{ODOT} {SIGMA}{PRIME}(h_pre)"),
           "W2": ("@ W2", f"@ W2{TRANSPOSE}")}
    arrays = {"x": (trace.x, "dx"), "h_pre": (trace.h_pre, "dh_pre"), "h": (trace.h, "dh"),
              "y": (trace.y, "dy")}
    for name, (value, grad) in arrays.items():
        box(ax, fx, row[name], bw, bh, f"{name}\n{shape(value.shape, 'n')}",
            tint=2 if name != "y" else None)
        box(ax, bx, row[name], bw, bh, f"{grad}\n{shape(grads[name], 'n')}",
            tint=1 if name != "y" else None)
    for name, (forward, backward) in ops.items():
        box(ax, fx, row[name], bw, oh, forward, size=10.5)
        box(ax, bx, row[name], 1.2 if name == "act" else bw, oh, backward, size=10.5)
        if name != "act":  # the backward step reads the weight
            arrow(ax, (fx + bw / 2, row[name]), (bx - bw / 2, row[name]), dashed=True, tint=0)
    # ... and the activation's step reads h_pre, kept from the forward pass
    arrow(ax, (fx + bw / 2, row["h_pre"] - 0.1), (bx - 0.6, row["act"] + 0.1), dashed=True,
          tint=0)
    for a, b in itertools.pairwise(chain):
        half = (bh if a in arrays else oh) / 2, (bh if b in arrays else oh) / 2
        arrow(ax, (fx, row[a] - half[0]), (fx, row[b] + half[1]))
        arrow(ax, (bx, row[b] + half[1]), (bx, row[a] - half[0]))
    # weight gradients: each level with its weight, reading a kept array from the row above
    # (the dashed read passes between two backward boxes) and a gradient from the row below
    for name, grad, uses, at in (("W1", "h_pre", "x", row["W1"]), ("W2", "y", "h", row["W2"])):
        d = f"d{grad}"
        box(ax, gx, at, 1.2, 0.95, f"d{name} =\n{uses}{TRANSPOSE} @ {d}\n{shape(grads[name])}",
            size=10.5, tint=1)
        arrow(ax, (bx + bw / 2, row[grad]), (gx - 0.6, at - 0.3))
        arrow(ax, (fx + bw / 2, row[uses] - 0.3), (gx - 0.6, at + 0.33), dashed=True, tint=0)
    ax.text(2.05, 0.75, f"db1 = sum of dh_pre over rows {shape(grads['b1'])}\n"
            f"db2 = sum of dy over rows {shape(grads['b2'])}\n"
            "kept from forward for backward: x, h_pre, h", ha="center", va="center",
            fontsize=10.5)
    ax.text(2.05, 0.1, "dashed: what a backward step reads", ha="center", va="center",
            fontsize=10.5, color=color(0))
    return fig


# --- 6. plain and gated wiring ---------------------------------------------------------------

def gated_wiring() -> Figure:
    """The plain block and the gated block, wired side by side, with real shapes."""
    if layout() is NARROW:
        return gated_wiring_narrow()
    plain = ffn.get_model(PLAIN_MODEL)
    gated = ffn.get_model(GATED_MODEL)
    fig, ax = canvas(8.3, 5.4)
    # plain, left, bottom to top
    cx = 1.75
    p_dm, p_ff = plain.d_model, plain.resolved_d_ff
    ax.text(cx, 5.15, f"plain ({plain.name})", ha="center", fontsize=12, fontweight="bold")
    ax.text(cx, 0.15, f"x  (n, {p_dm})", ha="center", fontsize=11)
    steps = [(1.0, f"@ W1 {shape((p_dm, p_ff))}", 0), (2.2, "GELU", 2),
             (3.4, f"@ W2 {shape((p_ff, p_dm))}", 0)]
    arrow(ax, (cx, 0.4), (cx, steps[0][0] - 0.25))
    for (y, label, t), nxt in zip(steps, [s[0] - 0.25 for s in steps[1:]] + [4.5], strict=True):
        box(ax, cx, y, 2.3, 0.5, label, tint=t)
        arrow(ax, (cx, y + 0.25), (cx, nxt))
    ax.text(cx, 4.65, f"y  (n, {p_dm})", ha="center", fontsize=11)
    n_plain = ffn.count_parameters(p_dm, p_ff, bias=plain.bias, gated=False)
    ax.text(cx + 1.25, 2.2, f"h: (n, {p_ff})", ha="left", va="center", fontsize=11)
    # gated, right
    g_dm, g_ff = gated.d_model, gated.resolved_d_ff
    gx = 6.05
    ax.text(gx, 5.15, f"gated, SwiGLU ({gated.name})", ha="center", fontsize=12,
            fontweight="bold")
    ax.text(gx, 0.15, f"x  (n, {g_dm})", ha="center", fontsize=11)
    left, right = gx - 1.1, gx + 1.1
    line(ax, [(gx, 0.4), (gx, 0.55), (left, 0.55), (left, 0.75)])
    line(ax, [(gx, 0.55), (right, 0.55), (right, 0.75)])
    box(ax, left, 1.0, 2.0, 0.5, f"@ W {shape((g_dm, g_ff))}", tint=0)
    box(ax, right, 1.0, 2.0, 0.5, f"@ V {shape((g_dm, g_ff))}", tint=0)
    ax.text(left + 0.1, 1.6, "gate", ha="left", va="center", fontsize=11)
    ax.text(right + 0.1, 1.6, "up", ha="left", va="center", fontsize=11)
    arrow(ax, (left, 1.25), (left, 1.95))
    box(ax, left, 2.2, 1.1, 0.5, "SiLU", tint=2)
    ax.add_patch(Circle((gx, 2.9), 0.22, facecolor="none", edgecolor=fg(), linewidth=1.2))
    ax.text(gx, 2.9, ODOT, ha="center", va="center", fontsize=14)
    arrow(ax, (left, 2.45), (gx - 0.22, 2.9), rad=-0.3)
    arrow(ax, (right, 1.25), (gx + 0.22, 2.9), rad=0.3)
    ax.text(gx + 0.35, 3.05, f"elementwise:\nh (n, {g_ff})", ha="left", va="bottom",
            fontsize=11)
    box(ax, gx, 3.75, 2.4, 0.5, f"@ W2 {shape((g_ff, g_dm))}", tint=0)
    arrow(ax, (gx, 3.12), (gx, 3.5))
    arrow(ax, (gx, 4.0), (gx, 4.5))
    ax.text(gx, 4.65, f"y  (n, {g_dm})", ha="center", fontsize=11)
    n_gated = ffn.count_parameters(g_dm, g_ff, bias=gated.bias, gated=True)
    ax.text(cx, -0.45, f"{fmt(n_plain)} parameters\n(2 matrices and their biases)",
            ha="center", va="center", fontsize=11)
    ax.text(gx, -0.45, f"{fmt(n_gated)} parameters\n(3 matrices, no biases)", ha="center",
            va="center", fontsize=11)
    return fig


def gated_wiring_narrow() -> Figure:
    """gated_wiring for a phone: the plain block above the gated one, each read bottom up."""
    plain = ffn.get_model(PLAIN_MODEL)
    gated = ffn.get_model(GATED_MODEL)
    fig, (top, bottom) = stacked(4.1, 5.3, 2)
    # plain, bottom to top
    ax, cx = top, 1.75
    p_dm, p_ff = plain.d_model, plain.resolved_d_ff
    ax.text(2.05, 5.05, f"plain ({plain.name})", ha="center", fontsize=12, fontweight="bold")
    ax.text(cx, 1.1, f"x  (n, {p_dm})", ha="center", fontsize=11)
    steps = [(1.85, f"@ W1 {shape((p_dm, p_ff))}", 0), (2.8, "GELU", 2),
             (3.75, f"@ W2 {shape((p_ff, p_dm))}", 0)]
    arrow(ax, (cx, 1.35), (cx, steps[0][0] - 0.25))
    for (y, label, t), nxt in zip(steps, [s[0] - 0.25 for s in steps[1:]] + [4.45], strict=True):
        box(ax, cx, y, 2.2, 0.5, label, tint=t)
        arrow(ax, (cx, y + 0.25), (cx, nxt))
    ax.text(cx, 4.55, f"y  (n, {p_dm})", ha="center", fontsize=11)
    ax.text(cx + 1.2, 2.8, f"h: (n, {p_ff})", ha="left", va="center", fontsize=11)
    n_plain = ffn.count_parameters(p_dm, p_ff, bias=plain.bias, gated=False)
    ax.text(2.05, 0.5, f"{fmt(n_plain)} parameters\n(2 matrices and their biases)",
            ha="center", va="center", fontsize=11)
    # gated, bottom to top
    ax, gx = bottom, 2.05
    g_dm, g_ff = gated.d_model, gated.resolved_d_ff
    ax.text(gx, 5.05, f"gated, SwiGLU ({gated.name})", ha="center", fontsize=12,
            fontweight="bold")
    ax.text(gx, 0.7, f"x  (n, {g_dm})", ha="center", fontsize=11)
    left, right = gx - 1.0, gx + 1.0
    line(ax, [(gx, 0.95), (gx, 1.05), (left, 1.05), (left, 1.2)])
    line(ax, [(gx, 1.05), (right, 1.05), (right, 1.2)])
    box(ax, left, 1.45, 1.9, 0.5, f"@ W {shape((g_dm, g_ff))}", tint=0)
    box(ax, right, 1.45, 1.9, 0.5, f"@ V {shape((g_dm, g_ff))}", tint=0)
    ax.text(left - 0.1, 2.0, "gate", ha="right", va="center", fontsize=11)
    ax.text(right + 0.1, 2.0, "up", ha="left", va="center", fontsize=11)
    arrow(ax, (left, 1.7), (left, 2.3))
    box(ax, left, 2.55, 1.1, 0.5, "SiLU", tint=2)
    ax.add_patch(Circle((gx, 3.2), 0.22, facecolor="none", edgecolor=fg(), linewidth=1.2))
    ax.text(gx, 3.2, ODOT, ha="center", va="center", fontsize=14)
    arrow(ax, (left, 2.8), (gx - 0.22, 3.2), rad=-0.3)
    arrow(ax, (right, 1.7), (gx + 0.22, 3.2), rad=0.3)
    ax.text(gx + 0.35, 3.35, f"elementwise:\nh (n, {g_ff})", ha="left", va="bottom",
            fontsize=11)
    box(ax, gx, 4.0, 2.4, 0.5, f"@ W2 {shape((g_ff, g_dm))}", tint=0)
    arrow(ax, (gx, 3.42), (gx, 3.75))
    arrow(ax, (gx, 4.25), (gx, 4.6))
    ax.text(gx, 4.7, f"y  (n, {g_dm})", ha="center", fontsize=11)
    n_gated = ffn.count_parameters(g_dm, g_ff, bias=gated.bias, gated=True)
    ax.text(gx, 0.05, f"{fmt(n_gated)} parameters\n(3 matrices, no biases)", ha="center",
            va="center", fontsize=11)
    return fig


FIGURES = {
    "transformer-layer": transformer_layer,
    "ffn-shapes": ffn_shapes,
    "expand-contract-scale": expand_contract,
    "key-value-memory": key_value,
    "backward-graph": backward_graph,
    "gated-wiring": gated_wiring,
}
# Drawn narrow too, for phones (build.py): each re-laid top to bottom, about 4 in wide, no text
# under 10 pt, when layout() is NARROW; hooks/figures.py serves that drawing below 600 px.
NARROW_FIGURES = {"transformer-layer", "expand-contract-scale", "ffn-shapes", "key-value-memory",
                  "backward-graph", "gated-wiring"}
