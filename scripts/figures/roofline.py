"""Figures of docs/inference.md: the H100's roofline, where the FFNs' decode steps sit on it,
and gpt-oss-120b's prefill against the ridge point, beside the newest model's.

The numbers are the page's: ffn.inference on the same models, bfloat16 (2 bytes a value), and
gpt-oss-120b also as served, its routed experts' matrices in MXFP4 (``expert_bytes_per_value``);
DeepSeek-V4-Flash as released, FP8 (e4m3) with its routed experts in 4 bits (priced as MXFP4).
"""

from __future__ import annotations

import itertools

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

import ffn
from ffn.inference import (
    H100_SXM,
    arithmetic_intensity,
    critical_batch,
    experts_read,
)
from scripts.figures._common import NARROW, layout, panels

NEWEST = "DeepSeek-V4-Flash"
"""The newest model in ffn.models, drawn beside gpt-oss-120b in both figures."""


def models() -> tuple[ffn.ModelDims, ...]:
    """The page's three models, GPT-2 small, LLaMA-3-8B and Mixtral 8x7B, then gpt-oss-120b
    and the newest model."""
    names = ("GPT-2 small", "LLaMA-3-8B", "Mixtral 8x7B", "gpt-oss-120b", NEWEST)
    return tuple(ffn.get_model(name) for name in names)


def roofline() -> Figure:
    """Left: attainable TFLOP/s against FLOPs per byte. Right: each model's FFN intensity
    against the decode batch, crossing the ridge point at its critical batch."""
    gpu, tera = H100_SXM, 1e12
    fig, (left, right) = panels(2, wide=(7.8, 3.8))
    intensity = np.logspace(-1, 4, 256)  # (256,) FLOPs per byte
    left.plot(intensity, [gpu.attainable(i) / tera for i in intensity], color="C0")
    ridge = gpu.ridge_point
    fg = left.xaxis.label.get_color()
    left.axvline(ridge, color=fg, linestyle=":", linewidth=1.0)
    left.text(ridge / 1.15, 0.22, f"ridge point\n{ridge:.0f} FLOPs/byte", fontsize=10,
              ha="right")  # left of the line: to its right it ran into the next panel
    left.text(0.15, gpu.peak_flops / tera * 1.25, f"peak {gpu.peak_flops / tera:.1f} TFLOP/s",
              fontsize=10)
    left.text(1.5, 12.0, f"slope: {gpu.bandwidth / tera:.2f} TB/s", fontsize=10, rotation=33)
    at_one = arithmetic_intensity(models()[1], 1)  # all five models: 1.00 to two decimals
    left.plot([at_one], [gpu.attainable(at_one) / tera], "o", color=fg, fillstyle="none")
    left.annotate(f"batch 1: {at_one:.2f} FLOPs/byte,\n{gpu.attainable(at_one) / tera:.2f} "
                  "TFLOP/s", (at_one, gpu.attainable(at_one) / tera), xytext=(8, -22),
                  textcoords="offset points", fontsize=10)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_ylim(0.1, 3000.0)
    left.set_xlabel("arithmetic intensity (FLOPs per byte)")
    left.set_ylabel("attainable TFLOP/s (bf16)")
    left.set_title(f"the roofline of one {gpu.name}", fontsize=10)

    # 1 to 65536: DeepSeek-V4-Flash's critical batch, the largest, well inside
    batches = np.unique(np.logspace(0, 16, 150, base=2).astype(int))
    narrow = layout() is NARROW
    # each critical batch in the legend, beside its marker: five labels at the ridge line,
    # two pairs of them less than a label's width apart, would overlap each other or the curves
    handles = []
    for k, (m, marker) in enumerate(zip(models(), "os^Dv", strict=True)):
        right.plot(batches, [arithmetic_intensity(m, int(b)) for b in batches],
                   color=f"C{k + 1}")
        b = critical_batch(m, gpu)
        right.plot([b], [arithmetic_intensity(m, b)], marker, color=fg, fillstyle="none")
        handles.append(Line2D([], [], color=f"C{k + 1}", marker=marker, markeredgecolor=fg,
                              fillstyle="none", label=f"{m.name}: {b:,}"))
    # every fourth power of two (narrow: fifth), so the labels do not touch
    ticks = [32 ** k for k in range(4)] if narrow else [16 ** k for k in range(5)]
    right.set_xscale("log", base=2)
    right.set_xticks(ticks, [f"{t:,}" for t in ticks])
    right.axhline(ridge, color=fg, linestyle=":", linewidth=1.0)
    right.set_yscale("log")
    right.set_xlabel("decode batch (tokens per step)")
    right.set_ylabel("FFN FLOPs per byte")
    right.set_title("the FFNs' intensity; marked: critical batch", fontsize=10)
    # five labels: under both panels, where no curve is
    fig.legend(handles=handles, title="critical batch", fontsize=10, title_fontsize=10,
               loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1 if narrow else 3)
    fig.tight_layout()
    return fig


def prefill() -> Figure:
    """Left: gpt-oss-120b's FFN intensity against the prompt length, in bfloat16 and as
    served, and the newest model's as released, crossing the ridge point. Right: the experts
    a prefill of gpt-oss-120b touches per layer."""
    gpu, oss = H100_SXM, ffn.get_model("gpt-oss-120b")
    assert oss.moe is not None  # a mixture of experts
    n_experts, top_k = oss.moe.n_experts, oss.moe.top_k
    ridge = gpu.ridge_point
    fig, (left, right) = panels(2, wide=(7.8, 3.8))
    fg = left.xaxis.label.get_color()
    tokens = np.unique(np.logspace(0, 15, 160, base=2).astype(int))  # 1 to 32768
    narrow = layout() is NARROW
    newest = ffn.get_model(NEWEST)
    newest_experts = newest.moe.expert_format if newest.moe else None  # as released: "mxfp4"
    # (model, legend, bytes a value, the experts', colour, marker, where N's label goes: None,
    # in the legend, as the newest model's crossing is next to gpt-oss's as served)
    curves = ((oss, f"{oss.name}, bfloat16", 2, None, "C1", "o",
               (-58, -16) if narrow else (6, -14)),
              (oss, f"{oss.name} as served:\nexperts in MXFP4", 2, "mxfp4", "C2", "s",
               (-62, 7)),  # its label above the ridge line, left of the bfloat16 one's
              (newest, f"{NEWEST}: FP8,\nexperts in 4 bits", "e4m3", newest_experts, "C4", "D",
               None))
    for model, label, size, experts, color, marker, offset in curves:
        n = critical_batch(model, gpu, size, experts)
        left.plot(tokens, [arithmetic_intensity(model, int(t), size, experts)
                           for t in tokens], color=color,
                  label=label if offset else f"{label} (N = {n:,})")
        left.plot([n], [arithmetic_intensity(model, n, size, experts)], marker,
                  color=fg, fillstyle="none")
        if offset:
            left.annotate(f"N = {n:,}", (n, ridge), xytext=offset, textcoords="offset points",
                          fontsize=10)
    left.axhline(ridge, color=fg, linestyle=":", linewidth=1.0)
    left.text(1.3, ridge / (6.0 if narrow else 1.8), f"ridge point {ridge:.0f} FLOPs/byte",
              fontsize=10)
    # 1 to 32768, the range drawn; narrow: every other tick, so the labels do not touch
    ticks = [32 ** k for k in range(4)] if narrow else [8 ** k for k in range(6)]
    for axes in (left, right):
        axes.set_xscale("log", base=2)
        axes.set_xticks(ticks, [f"{t:,}" for t in ticks])
    left.set_yscale("log")
    left.set_xlabel("prompt tokens N (one prefill)")
    left.set_ylabel("FFN FLOPs per byte")
    left.set_title(f"prefill on one {gpu.name}", fontsize=10)
    # three long labels: under both panels, where no curve is
    fig.legend(*left.get_legend_handles_labels(), fontsize=10, loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=1)

    touched = [experts_read(n_experts, top_k, int(n)) for n in tokens]
    right.plot(tokens, touched, color="C3")
    right.axhline(n_experts, color=fg, linestyle=":", linewidth=1.0)
    right.text(1.3, n_experts * 1.04, f"all {n_experts} experts", fontsize=10)
    at_one = experts_read(n_experts, top_k, 1)
    right.plot([1], [at_one], "o", color=fg, fillstyle="none")
    right.annotate(f"{at_one:.0f} at N = 1", (1, at_one), xytext=(8, -4),
                   textcoords="offset points", fontsize=10)
    nearly = next(n for n in itertools.count(1)
                  if n_experts - experts_read(n_experts, top_k, n) < 1)
    at_nearly = experts_read(n_experts, top_k, nearly)
    right.plot([nearly], [at_nearly], "s", color=fg, fillstyle="none")
    right.annotate(f"{int(at_nearly)} of {n_experts} by N = {nearly}", (nearly, at_nearly),
                   xytext=(8, -22), textcoords="offset points", fontsize=10)
    right.set_ylim(0, n_experts * 1.15)
    right.set_xlabel("prompt tokens N (one prefill)")
    right.set_ylabel("experts touched per layer")
    right.set_title(f"expected, {top_k} of {n_experts} per token, even random routing",
                    fontsize=10)
    fig.tight_layout()
    return fig


FIGURES = {"roofline": roofline, "prefill": prefill}
