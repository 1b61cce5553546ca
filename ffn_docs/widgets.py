"""The FFN lab's widgets as the build writes them: data from ffn and the no-JavaScript figure.

A page asks for a widget with an empty `<div class="ffn-widget" data-widget="NAME"></div>`;
hooks/widgets.py replaces it with `render(NAME)`: the same div holding a table of ffn's numbers
(what a reader without JavaScript, the print page and the PDF see; the answer boxes leave a
note instead, ffn_docs/answers.py) and the widget's data as JSON (the sizer's presets, the
memory explorer's block, the router explorer's tokens, an exercise's answers).
docs/javascripts/widgets.js mounts the controls in the div and hides the table (class
`ffn-widget--live`). Every number here is ffn's, printed as the chapters print it; the widget
prints the same strings from javascripts/lab/*.js (tests/test_widget*.py, tests/browser/)."""

from __future__ import annotations

import functools
import html
from collections.abc import Callable

import ffn
from ffn.activations import FUNCTIONS
from ffn.models import ALL_MODELS, ModelDims
from ffn_docs import answers, fallback, memory, widget_router

PRESETS: tuple[ModelDims, ...] = ALL_MODELS
"""Every model ffn.get_model knows, in its order: the sizer's <select>."""

BYTES_PER_WEIGHT = 2  # the fallback table's format, bfloat16; the widget offers 1, 2 and 4
ACTIVATION_XS = (-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0)  # as the GELU chapter's table
ACTIVATION_NAMES = {"relu": "ReLU", "gelu": "GELU, exact", "gelu_tanh": "GELU, tanh",
                    "silu": "SiLU", "relu2": "Squared ReLU"}


def camel(model: ModelDims) -> dict[str, object]:
    """A model's dimensions as lab/counting.js's modelDims reads them."""
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


def _sizer() -> str:
    rows = []
    for m in PRESETS:
        n = sizer_numbers(m)
        rows.append([m.name, n["dFf"], n["perLayer"], n["share"], n["total"], n["flops"],
                     n["gigabytes"]])
    table = fallback.table(
        "The FFNs of every model in ffn.models, computed by ffn when the site was built "
        f"(bytes at {BYTES_PER_WEIGHT} per weight; a mixture of experts: all its experts and "
        "the router per layer, and the bytes of the router, shared and routed experts one "
        "token uses on average, with any leading dense layers' whole FFNs)",
        ["model", "d_ff", "one layer's FFN", "FFN share of the layer", "all FFNs",
         "FFN FLOPs per token", "FFN GB read per token at decode"], rows)
    return fallback.widget(table, {"models": [camel(m) for m in PRESETS]})


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
    table = fallback.table("Each activation and its derivative (\N{PRIME}) at nine points, "
                           "computed by ffn when the site was built", header, rows)
    return fallback.widget(table)


def memory_data() -> dict[str, object]:
    """The memory explorer's JSON: the page's block (as ffn holds it), its token and ranges."""
    block = memory.memory_block("relu")
    assert block.b1 is not None and block.b2 is not None  # FeedForward.random: zero biases
    return {"W1": block.W1.tolist(), "b1": block.b1.tolist(), "W2": block.W2.tolist(),
            "b2": block.b2.tolist(), "token": memory.memory_token().tolist(),
            "activations": memory.ACTIVATIONS, "digits": memory.DIGITS,
            "slider": list(memory.SLIDER), "typed": list(memory.TYPED)}


def _memory() -> str:
    # Each token a row group: its ReLU row (the figure's activation) and its GELU row.
    head = "".join(f'<th scope="col">{h}</th>' for h in [
        "token x", "\N{GREEK SMALL LETTER SIGMA}", *(f"h{i}" for i in range(memory.D_FF)),
        "y = \N{GREEK CAPITAL LETTER SIGMA} h<sub>i</sub> v<sub>i</sub> + b2",
        "units that fire"])
    groups = []
    for name, x in memory.table_tokens():
        rows = []
        for activation in memory.ACTIVATIONS:
            cells = "".join(f"<td>{html.escape(c)}</td>"
                            for c in memory.fallback_cells(x, activation))
            rows.append(f"<tr>{cells}</tr>")
        token = ", ".join(memory.shown(v) for v in x)
        groups.append(f'<tbody><tr><th scope="rowgroup" rowspan="{len(rows)}">({token})<br>'
                      f"{html.escape(name)}</th>{rows[0][4:]}{''.join(rows[1:])}</tbody>")
    caption = (
        f"The key-value memory of the figure above (d_model {memory.D_MODEL}, d_ff "
        f"{memory.D_FF}): each unit's coefficient h<sub>i</sub> = \N{GREEK SMALL LETTER SIGMA}"
        "(x \N{MIDDLE DOT} k<sub>i</sub> + b1<sub>i</sub>) and the output y, with ReLU and "
        "with exact GELU, for the figure's token and for each of its numbers at the ends of "
        "the explorer's sliders, computed by ffn when the site was built. A unit fires when "
        "x \N{MIDDLE DOT} k<sub>i</sub> + b1<sub>i</sub> &gt; 0.")
    table = fallback.region(caption, f"<thead><tr>{head}</tr></thead>{''.join(groups)}",
                            "ffn-memory__fallback")
    return fallback.widget(table, memory_data())


WIDGETS: dict[str, Callable[[], str]] = {"sizer": _sizer, "activations": _activations,
                                         "memory": _memory, "router": widget_router.render}
# The exercises' answer boxes, one widget per exercise ("answers-L2-1", module answers.js).
WIDGETS.update({answers.widget_name(e): functools.partial(answers.render, e)
                for e in answers.EXERCISES})


def render(name: str) -> str:
    """The widget's div, filled: its fallback table and its data. KeyError for an unknown name."""
    return (f'<div class="ffn-widget" data-widget="{name}">{WIDGETS[name]()}</div>')
