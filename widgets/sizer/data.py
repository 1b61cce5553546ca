"""The model sizer (docs/parameters.md): every model of ffn.models, counted by ffn.

The JSON is each model's dimensions (`camel`, as lab.js's modelDims reads them); the fallback
table is what the sizer shows for each (`sizer_numbers`, the chapters' formats), which
tests/browser/test_widgets.py also compares with the page.
"""

from __future__ import annotations

import ffn
from ffn.inference import BYTES_PER_VALUE, Size
from ffn.models import ALL_MODELS, RECENT_MOE_MODELS, ModelDims
from widgets._shared import fallback

PRESETS: tuple[ModelDims, ...] = (*ALL_MODELS, *RECENT_MOE_MODELS)
"""Every model ffn.get_model knows, in its order: the sizer's <select>."""

BYTES_PER_WEIGHT = "bfloat16"  # the fallback table's format; the widget offers every one
FORMATS: tuple[str, ...] = tuple(BYTES_PER_VALUE)
"""The sizer's bytes-per-weight choice: every format ``ffn.decode_bytes`` names, in its order."""


def format_label(name: str) -> str:
    """A format's option text: its bytes (or bits) per weight, from ffn's exact size."""
    size = BYTES_PER_VALUE[name]
    if isinstance(size, int):
        return f"{name}: {size} byte{'s' if size > 1 else ''}"
    text = (f"{name}: {float(8 * size):g} bits ({size.numerator} bytes per "
            f"{size.denominator} weights, block scales included")
    # ffn leaves out NVFP4's second scale, one float32 for the whole tensor (BYTES_PER_VALUE)
    return text + (", the 4-byte tensor scale left out)" if name == "nvfp4" else ")")


def camel(model: ModelDims) -> dict[str, object]:
    """A model's dimensions as lab.js's modelDims reads them."""
    return {"name": model.name, "dModel": model.d_model, "dFf": model.d_ff,
            "nLayers": model.n_layers, "gated": model.gated, "bias": model.bias,
            "nAttention": model.n_attention, "kvDim": model.kv_dim,
            "nExperts": model.n_experts, "topK": model.top_k, "multipleOf": model.multiple_of,
            "ffnDimMultiplier": model.ffn_dim_multiplier, "sharedDff": model.shared_d_ff,
            "sharedGate": model.shared_gate, "denseLayers": model.dense_layers,
            "denseDff": model.dense_d_ff, "attentionPerLayer": model.attention_per_layer,
            "routerBias": model.router_bias, "moeEvery": model.moe_every,
            "nLinearAttention": model.n_linear_attention,
            "linearAttentionPerLayer": model.linear_attention_per_layer}


def sizer_numbers(model: ModelDims, bytes_per_weight: Size = BYTES_PER_WEIGHT) -> dict[str, str]:
    """What the sizer shows for a model, as strings: the chapters' formats (``bytes_per_weight``:
    a format's name or a number, as ``ffn.decode_bytes`` takes it)."""
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


def render() -> str:
    """The sizer's fallback table (every preset) and data (every preset's dimensions)."""
    rows = []
    for m in PRESETS:
        n = sizer_numbers(m)
        rows.append([m.name, n["dFf"], n["perLayer"], n["share"], n["total"], n["flops"],
                     n["gigabytes"], sizer_numbers(m, "mxfp4")["gigabytes"]])
    table = fallback.table(
        "The FFNs of every model in ffn.models, computed by ffn when the site was built "
        f"(bytes in {BYTES_PER_WEIGHT}, {BYTES_PER_VALUE[BYTES_PER_WEIGHT]} per weight, and in "
        f"MXFP4, {float(8 * BYTES_PER_VALUE['mxfp4']):g} bits; a mixture of experts: all its "
        "experts and the router per layer, and the bytes of the router, shared and routed "
        "experts one token uses on average, with its dense layers' whole FFNs)",
        ["model", "d_ff", "one layer's FFN", "FFN share of the layer", "all FFNs",
         "FFN FLOPs per token", f"FFN GB read per token at decode, {BYTES_PER_WEIGHT}",
         "the same in MXFP4"], rows)
    return fallback.widget(table, {
        "models": [camel(m) for m in PRESETS],
        "formats": [{"name": f, "label": format_label(f)} for f in FORMATS],
        "format": BYTES_PER_WEIGHT})


WIDGETS = {"sizer": render}
