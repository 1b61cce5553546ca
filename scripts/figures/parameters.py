"""Figure of chapter 5 (docs/parameters-flops.md): the FFN's share of a transformer layer."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

import ffn


def layer_share(d_model: int, d_ff: int, gated: bool, bias: bool) -> float:
    """FFN parameters over FFN plus one attention sublayer's projections."""
    n_ffn = ffn.count_parameters(d_model, d_ff, bias=bias, gated=gated)
    return n_ffn / (n_ffn + ffn.count_attention_parameters(d_model, bias=bias))


def ffn_share() -> Figure:
    """Share against d_ff / d_model for plain and gated FFNs, with the published models."""
    d_model = 1024
    d_ffs = np.arange(64, 8 * d_model + 1, 64)  # (128,): ratios 1/16 to 8
    fig = Figure()
    ax = fig.add_subplot()
    for gated, label in ((False, "plain FFN (two matrices)"), (True, "gated FFN (three)")):
        share = [layer_share(d_model, int(f), gated, bias=False) for f in d_ffs]
        ax.plot(d_ffs / d_model, share, label=label)
    plain = [m for m in ffn.MODELS if not m.gated]
    gated_models = [m for m in ffn.MODELS if m.gated]
    for models, marker, label in ((plain, "o", "published plain models"),
                                  (gated_models, "s", "LLaMA-7B")):
        ratio = [m.resolved_d_ff / m.d_model for m in models]
        share = [layer_share(m.d_model, m.resolved_d_ff, m.gated, m.bias) for m in models]
        ax.plot(ratio, share, marker, color=ax.xaxis.label.get_color(), fillstyle="none",
                markersize=8, label=label)
    ax.set_xlabel("expansion factor d_ff / d_model")
    ax.set_ylabel("FFN share of a layer's parameters")
    ax.set_xlim(0.0, 8.2)
    ax.set_ylim(0.0, 1.0)
    ax.legend(loc="lower right", fontsize=9)
    return fig


FIGURES = {"ffn-share": ffn_share}
