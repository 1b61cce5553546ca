"""Figure of chapter 7 (docs/trained-ffn.md): P(" Paris") with one layer's output zeroed.

The same knock-outs as the page's code: SmolLM2-135M in float32 on "The capital of France
is", each layer's FFN output, then its attention output, set to zero at every position.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from matplotlib.figure import Figure

from scripts.figures._common import WIDE, layout

PROMPT, TARGET = "The capital of France is", " Paris"


@cache
def knockouts() -> tuple[float, np.ndarray, np.ndarray]:
    """P(TARGET) with nothing zeroed, and with each layer's FFN or attention output zeroed.

    Rounded to 4 decimals: a float32 forward's last bits may differ between BLAS builds,
    and the figure's bytes must not.
    """
    from ffn import smollm2  # needs gguf, tokenizers and the model package: only here

    model = smollm2.load()
    tokens = model.encode(PROMPT)
    target = model.encode(TARGET)[0]

    def p(patch: dict[tuple[str, int], float]) -> float:
        return float(model.run(tokens, patch=patch, record=False).probabilities()[target])

    n = model.config.n_layers
    ffn = np.array([p({("ffn_out", i): 0.0}) for i in range(n)])  # (n_layers,)
    attn = np.array([p({("attn_out", i): 0.0}) for i in range(n)])  # (n_layers,)
    return round(p({}), 4), np.round(ffn, 4), np.round(attn, 4)


def trained_knockouts() -> Figure:
    """P(" Paris") per layer knocked out, FFN and attention, against the clean run."""
    clean, ffn, attn = knockouts()
    layers = np.arange(ffn.size)  # (n_layers,)
    lay = layout()
    wide = lay is WIDE
    # A phone's column: taller, fewer ticks, the legend in one column above the bars.
    fig = Figure(figsize=(7.0, 3.6) if wide else (lay.figsize[0], lay.figsize[1] * 1.4))
    ax = fig.add_subplot()
    width = 0.4
    ax.bar(layers - width / 2, ffn, width, label="FFN output zeroed")
    ax.bar(layers + width / 2, attn, width, label="attention output zeroed")
    ax.axhline(clean, color=ax.xaxis.label.get_color(), linestyle="--", linewidth=1.0,
               label=f"nothing zeroed ({clean:.2f})")
    ax.set_xlabel("layer knocked out")
    ax.set_ylabel(f'P("{TARGET}") after the prompt')
    ax.set_xticks(layers[::2] if wide else layers[::5])
    ax.set_xlim(-0.8, ffn.size - 0.2)
    ax.set_ylim(0.0, 1.12 if wide else 1.45)  # room for the legend above the bars
    ax.set_yticks(np.linspace(0.0, 1.0, 6))
    ax.legend(loc="upper right", fontsize=8, ncols=3 if wide else 1)
    return fig


FIGURES = {"trained-knockouts": trained_knockouts}
