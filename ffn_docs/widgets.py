"""The FFN lab's widgets as the build writes them: data from ffn and the no-JavaScript figure.

A page asks for a widget with an empty `<div class="ffn-widget" data-widget="NAME"></div>`;
hooks/widgets.py replaces it with `render(NAME)`: the same div holding a table of ffn's numbers
(what a reader without JavaScript, the print page and the PDF see) and, for the sizer, the
presets' dimensions as JSON. docs/javascripts/widgets.js mounts the controls in the div and
hides the table (class `ffn-widget--live`). Every number here is ffn's, printed as the chapters
print it; the widget prints the same strings from ffn-lab.js (tests/test_widgets.py,
tests/browser/test_widgets.py).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence

import ffn
from ffn.activations import FUNCTIONS
from ffn.models import ALL_MODELS, ModelDims
from ffn_docs import widget_router

PRESETS: tuple[ModelDims, ...] = ALL_MODELS
"""Every model ffn.get_model knows, in its order: the sizer's <select>."""

BYTES_PER_WEIGHT = 2  # the fallback table's format, bfloat16; the widget offers 1, 2 and 4
ACTIVATION_XS = (-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0)  # as the GELU chapter's table
ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU, exact", "gelu_tanh": "GELU, tanh",
                    "silu": "SiLU", "relu2": "Squared ReLU"}


def camel(model: ModelDims) -> dict[str, object]:
    """A model's dimensions as ffn-lab.js's modelDims reads them."""
    return {"name": model.name, "dModel": model.d_model, "dFf": model.d_ff,
            "nLayers": model.n_layers, "gated": model.gated, "bias": model.bias,
            "nAttention": model.n_attention, "kvDim": model.kv_dim,
            "nExperts": model.n_experts, "topK": model.top_k, "multipleOf": model.multiple_of,
            "ffnDimMultiplier": model.ffn_dim_multiplier, "sharedDff": model.shared_d_ff,
            "sharedGate": model.shared_gate, "denseLayers": model.dense_layers,
            "denseDff": model.dense_d_ff, "attentionPerLayer": model.attention_per_layer}


def sizer_numbers(model: ModelDims, bytes_per_weight: int = BYTES_PER_WEIGHT) -> dict[str, str]:
    """What the sizer shows for a model, as strings: the chapters' formats."""
    moe = model.n_experts is not None
    size = ffn.decode_bytes(model, 1, bytes_per_weight)
    return {
        "dFf": f"{model.resolved_d_ff}",
        "perLayer": f"{model.ffn_parameters_per_layer():,}",
        "perLayerActive": f"{model.ffn_parameters_per_layer(active=True):,}" if moe else "",
        "share": f"{model.ffn_share():.4f}",
        "total": f"{model.ffn_parameters():,}",
        "totalActive": f"{model.ffn_parameters(active=True):,}" if moe else "",
        "flops": f"{model.ffn_flops_per_token():,}",
        "flopsTraining": f"{model.ffn_flops_per_token(backward=True):,}",
        "bytes": f"{size:,}" if isinstance(size, int) else f"{size:,.0f}",
        "gigabytes": f"{size / 1e9:.3f}",
    }


def activation_numbers(x: float) -> dict[str, str]:
    """What the explorer shows at x: each activation and its derivative, and the GELU gap."""
    shown = {}
    for name, (f, df) in FUNCTIONS.items():
        shown[name] = f"{float(f(x)):.6f}"
        shown[name + "Grad"] = f"{float(df(x)):.6f}"
    shown["gap"] = f"{float(ffn.gelu(x)) - float(ffn.gelu(x, approximate='tanh')):.8f}"
    return shown


def _table(caption: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in header)
    body = "".join("<tr>" + "".join(
        (f'<th scope="row">{html.escape(c)}</th>' if i == 0 else f"<td>{html.escape(c)}</td>")
        for i, c in enumerate(row)) + "</tr>" for row in rows)
    return (f'<div class="ffn-table"><table><caption>{html.escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


def _sizer() -> str:
    rows = []
    for m in PRESETS:
        n = sizer_numbers(m)
        rows.append([m.name, n["dFf"], n["perLayer"], n["share"], n["total"], n["flops"],
                     n["gigabytes"]])
    table = _table(
        "The FFNs of every model in ffn.models, computed by ffn when the site was built "
        f"(bytes at {BYTES_PER_WEIGHT} per weight; a mixture of experts: all its experts and "
        "the router per layer, and the bytes of the experts one token uses on average)",
        ["model", "d_ff", "one layer's FFN", "FFN share of the layer", "all FFNs",
         "FFN FLOPs per token", "FFN GB read per token at decode"], rows)
    data = json.dumps({"models": [camel(m) for m in PRESETS]}, separators=(",", ":"))
    data = data.replace("</", "<\\/")  # no "</script>" inside the script
    return (f'<div class="ffn-widget__fallback">{table}</div>'
            f'<script type="application/json" class="ffn-widget__data">'
            f"{data}</script>")


def _activations() -> str:
    header = ["x"]
    for label in ACTIVATION_NAMES.values():
        header += [label, f"{label}\N{PRIME}"]
    header.append("GELU exact \N{MINUS SIGN} tanh")
    rows = []
    for x in ACTIVATION_XS:
        n = activation_numbers(x)
        row = [f"{x:g}"]
        for name in ACTIVATION_NAMES:
            row += [n[name], n[name + "Grad"]]
        rows.append([*row, n["gap"]])
    table = _table("Each activation and its derivative (\N{PRIME}) at nine points, computed "
                   "by ffn when the site was built", header, rows)
    return f'<div class="ffn-widget__fallback">{table}</div>'


WIDGETS: dict[str, Callable[[], str]] = {"sizer": _sizer, "activations": _activations,
                                          "router": widget_router.render}


def render(name: str) -> str:
    """The widget's div, filled: its fallback table and its data. KeyError for an unknown name."""
    return (f'<div class="ffn-widget" data-widget="{name}">{WIDGETS[name]()}</div>')
