"""The model sizer (docs/parameters.md): every model of ffn.models, counted by ffn.

The JSON is each model's dimensions (`camel`, as lab.js's modelDims reads them); the fallback
table is what the sizer shows for each (`sizer_numbers`, the chapters' formats), which
tests/browser/test_widgets.py also compares with the page. lab.js's field lists and defaults
are fields.js, generated here from ModelDims' fields and its parts' (`fields_js`; `python -m
widgets.sizer.data` writes it), not retyped in JavaScript.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path

import ffn
from ffn.inference import BYTES_PER_VALUE, Size
from ffn.models import ALL_MODELS, MODELS_2026, RECENT_MOE_MODELS, ModelDims
from scripts.figures.palette import PART_COLORS, scheme_colors
from widgets._shared import fallback

PRESETS: tuple[ModelDims, ...] = (*ALL_MODELS, *RECENT_MOE_MODELS, *MODELS_2026)
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


def camel_case(name: str) -> str:
    """A field's name as lab.js spells it: ``d_ff`` -> ``dFf``, ``n_experts`` -> ``nExperts``."""
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def part_of(owner: type, field: str) -> type | None:
    """The dataclass a field of ``owner`` may hold (``ModelDims.moe``: ``MoEDims``), or None
    for a plain value: read from the field's type, ``MoEDims | None``, ``int | LlamaWidth``."""
    hint = typing.get_type_hints(owner)[field]
    parts = [t for t in typing.get_args(hint) if dataclasses.is_dataclass(t)]
    return parts[0] if parts else None


def fields_of(owner: type) -> tuple[dataclasses.Field[object], ...]:
    """The fields of ``owner`` the sizer reads, in their order (a model's source is not a
    dimension)."""
    return tuple(f for f in dataclasses.fields(owner) if f.name != "source")


def parts(owner: type = ModelDims) -> dict[str, type]:
    """``owner`` and every part it holds, nested, by class name: ModelDims, LlamaWidth,
    LinearAttention, MoEDims, SharedExperts, DenseLayers."""
    found = {owner.__name__: owner}
    for f in fields_of(owner):
        part = part_of(owner, f.name)
        if part is not None:
            found |= parts(part)
    return found


FIELDS: tuple[dataclasses.Field[object], ...] = fields_of(ModelDims)
"""ModelDims' fields the sizer reads, in their order; a part's fields are ``fields_of`` it."""


def camel(model: object) -> dict[str, object]:
    """A model's dimensions as lab.js's modelDims reads them: every field, a part (MoEDims,
    LlamaWidth, ...) as an object of its own fields, None where the model has none."""
    def value(v: object) -> object:
        return camel(v) if dataclasses.is_dataclass(v) and not isinstance(v, type) else v
    return {camel_case(f.name): value(getattr(model, f.name)) for f in fields_of(type(model))}


def from_camel(fields: dict[str, object], owner: type = ModelDims, **extra: object) -> object:
    """The ffn dimensions that ``camel`` gives ``fields``, made as ffn makes them (its checks
    run: a bad field raises ffn's error); ``extra``: fields lab.js does not read (``source``)."""
    kwargs: dict[str, object] = dict(extra)
    for f in fields_of(owner):
        v = fields.get(camel_case(f.name), f.default)
        part = part_of(owner, f.name)
        kwargs[f.name] = from_camel(v, part) if part and isinstance(v, dict) else v
    return owner(**kwargs)


def _js(value: object) -> str:
    """A field's default as JavaScript: an int as a BigInt, as lab.js counts."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int):
        return f"{value}n"
    raise TypeError(f"no JavaScript form for a default {value!r}")  # a new kind of field


def fields_js() -> str:
    """widgets/sizer/fields.js, generated from ModelDims and its parts: for each, lab.js's
    field list, the fields without a default, the others' defaults, and which field holds
    which part."""
    out = []
    for name, owner in parts().items():
        fs = fields_of(owner)
        names = "".join(f'\n      {camel_case(f.name)}: "{f.name}",' for f in fs)
        required = ", ".join(f'"{camel_case(f.name)}"' for f in fs
                             if f.default is dataclasses.MISSING)
        defaults = "".join(f"\n      {camel_case(f.name)}: {_js(f.default)}," for f in fs
                           if f.default is not dataclasses.MISSING)
        held = ", ".join(f'{camel_case(f.name)}: "{p.__name__}"' for f in fs
                         if (p := part_of(owner, f.name)) is not None)
        out.append(f"  {name}: {{\n    names: {{{names}\n    }},\n    required: [{required}],"
                   f"\n    defaults: {{{defaults}\n    }},\n    parts: {{{held}}},\n  }},")
    return ("// Generated from ffn.ModelDims and its parts by widgets/sizer/data.py (fields_js): "
            "do not edit;\n// `python -m widgets.sizer.data` writes it, tests/test_widgets.py "
            "checks it.\n\n"
            "/** Each dataclass: its fields' names as ffn spells them, the fields without a "
            "default,\n * the others' defaults, and the fields that hold a part (by class). */\n"
            "export const FIELDS = {\n" + "\n".join(out) + "\n};\n")


def sizer_numbers(model: ModelDims, bytes_per_weight: Size = BYTES_PER_WEIGHT,
                  expert_bytes: Size | None = None) -> dict[str, str]:
    """What the sizer shows for a model, as strings: the chapters' formats (``bytes_per_weight``:
    a format's name or a number, as ``ffn.decode_bytes`` takes it; ``expert_bytes``: its
    ``expert_bytes_per_value``, the routed experts' matrices alone, None: the same)."""
    moe = model.moe is not None
    size = ffn.decode_bytes(model, 1, bytes_per_weight, expert_bytes_per_value=expert_bytes)
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


PARTS = {"attention": "Attention", "denseFfn": "FFNs, dense", "router": "Routers",
         "shared": "Shared experts", "expertsActive": "Experts one token uses",
         "expertsIdle": "Experts it skips", "embeddings": "Embeddings", "head": "Output head",
         "norms": "Norms", "other": "Other"}
"""The breakdown's parts, in the order the sizer shows them (lab.js's breakdown), and their
names there: ffn's parameter_parts, the FFN split by ffn_parts."""


def breakdown(model: ModelDims) -> dict[str, int] | None:
    """Where the model's parameters go, by PARTS (None without a vocab_size: ffn counts no
    whole model then)."""
    if model.vocab_size is None:
        return None
    whole, ffn_parts = model.parameter_parts(), model.ffn_parts()
    counts = {"attention": whole["attention"], "denseFfn": ffn_parts["dense FFNs"],
              "router": ffn_parts["router"], "shared": ffn_parts["shared experts"],
              "expertsActive": ffn_parts["experts, active"],
              "expertsIdle": ffn_parts["experts, idle"], "embeddings": whole["embeddings"],
              "head": whole["head"], "norms": whole["norms"], "other": whole["other"]}
    assert sum(counts.values()) == model.total_parameters()  # the FFN's parts are its whole
    return counts


def breakdown_numbers(model: ModelDims) -> dict[str, str] | None:
    """The breakdown as the sizer prints it: each part's count and its share of the total, the
    total, and what one token uses ("" without experts)."""
    counts = breakdown(model)
    if counts is None:
        return None
    total = model.total_parameters()
    shown = {"total": f"{total:,}", "active": "", "activeShare": ""}
    for key, n in counts.items():
        shown[key], shown[key + "Share"] = f"{n:,}", f"{n / total:.1%}"
    if model.moe is not None:
        active = model.active_parameters()
        shown["active"], shown["activeShare"] = f"{active:,}", f"{active / total:.1%}"
    return shown


GROUPS = {"attention": ("attention",),
          "FFN": ("denseFfn", "router", "shared", "expertsActive"),
          "skipped experts": ("expertsIdle",),
          "embeddings, head": ("embeddings", "head"), "norms, other": ("norms", "other")}
"""The fallback table's columns: the breakdown's parts, grouped so the table stays narrow."""


def grouped_shares(model: ModelDims) -> list[str]:
    """The fallback table's cells for a model: its total, then each of GROUPS' share of it."""
    counts = breakdown(model)
    if counts is None:
        return ["unknown", *([""] * len(GROUPS))]
    total = model.total_parameters()
    moe = model.moe is not None
    return [f"{total:,}", *(f"{sum(counts[k] for k in keys) / total:.1%}"
                            if moe or keys != ("expertsIdle",) else ""
                            for keys in GROUPS.values())]


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
    where = fallback.table(
        "Where each model's parameters go, as shares of its total (ffn's parameter_parts and "
        "ffn_parts; a mixture of experts: the FFN column counts what one token uses, the next "
        "the experts it skips; unknown: no vocabulary size in ffn.models)",
        ["model", "parameters", *GROUPS], [[m.name, *grouped_shares(m)] for m in PRESETS])
    return fallback.widget(table + where, {
        "models": [camel(m) for m in PRESETS],
        "formats": [{"name": f, "label": format_label(f)} for f in FORMATS],
        "parts": PARTS, "partColors": scheme_colors(PART_COLORS),
        "format": BYTES_PER_WEIGHT})


WIDGETS = {"sizer": render}


if __name__ == "__main__":  # python -m widgets.sizer.data: write fields.js after a field changes
    (Path(__file__).parent / "fields.js").write_text(fields_js(), encoding="utf-8")
