"""The hostile tier of the lab's modules (issue 30): wrong and edge calls, with ffn's verdict.

Every exported function of widgets/*/lab.js and widgets/_shared/ that has an ffn counterpart
is fed the inputs a hostile tester fed ffn (through tests/_node_lab.py: a Python int arrives as
a BigInt, a float as a Number, so ffn's float 8.0 is JavaScript's Number 8, refused where ffn
refuses it). Each call must end one of two ways, and ffn on the same inputs the same way:

- refused clearly: a TypeError or RangeError (ffn: TypeError or ValueError) whose message
  names the argument by ffn's name for it (`d_model`, `top_k`; the route's `logits` are ffn's
  `x`, the token that the identity router turns into exactly those logits);
- right: the value equals an oracle written here, not by either side: plain integer formulas,
  exact fractions, mpmath at 50 digits, plain loops; floats within the bound each case states.

`python -m tests.test_widgets_hostile` prints how many calls are right, refused clearly,
silent wrong (a value that is not the oracle's, or any value where a refusal is due) and
unclear (another error, or one that does not name the argument), and how many ffn answers
differently (a test requires none).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest

import ffn
from ffn.activations import FUNCTIONS, gate
from ffn.models import MODELS_2026, RECENT_MOE_MODELS
from tests._node_lab import NodeError, NodeLab
from tests.test_widgets import JS_GATES, JS_NAMES, expected_size
from widgets.router import data as widget_router
from widgets.sizer.data import camel, from_camel

pytestmark = pytest.mark.needs("npm")  # Node, which Debian's npm brings

mpmath.mp.dps = 50
EPS = 2.0**-52
JS_REFUSALS = ("TypeError", "RangeError")
FFN_REFUSALS = (TypeError, ValueError)
NAN = math.nan
INF = math.inf


@dataclass(frozen=True)
class LabCase:
    """One call of a lab function, ffn's call on the same inputs and the right answer."""

    id: str
    js: str  # the lab function
    args: tuple[Any, ...]
    ffn: Callable[[], object] | None  # ffn on the same inputs; None: no counterpart in ffn
    arg: str = ""  # the argument a refusal must name; "" when a value is due
    oracle: Callable[[], object] | None = None  # the right value (None: a refusal is due)
    same: Callable[[Any, Any], bool] | None = None  # got, want -> bool; default: ==
    ffn_same: Callable[[Any, Any], bool] | None = None  # for ffn's value, when it differs
    ffn_arg: str = ""  # ffn's name for the argument, where it is not `arg`

    def matches(self, got: Any, ffn_side: bool = False) -> bool:
        assert self.oracle is not None
        want = self.oracle()
        check = (self.ffn_same if ffn_side and self.ffn_same else self.same) or _equal
        return bool(check(got, want))


def _equal(got: Any, want: Any) -> bool:
    return bool(got == want)


def js_outcome(lab: NodeLab, case: LabCase) -> str:
    """"right", "refused clearly", "silent wrong" or "unclear"."""
    try:
        got = lab.call(case.js, *case.args)
    except NodeError as error:
        clear = (case.oracle is None and error.kind in JS_REFUSALS and bool(case.arg)
                 and case.arg in error.message)
        return "refused clearly" if clear else "unclear"
    if case.oracle is None:
        return "silent wrong"
    return "right" if case.matches(got) else "silent wrong"


def ffn_agrees(case: LabCase) -> bool:
    """Does ffn give the case's verdict: the oracle's value, or a refusal naming the argument?"""
    assert case.ffn is not None
    try:
        got = case.ffn()
    except FFN_REFUSALS as error:
        return case.oracle is None and (case.ffn_arg or case.arg) in str(error)
    except Exception:  # an OverflowError, numpy's errors: not a clear verdict
        return False
    return case.oracle is not None and case.matches(got, ffn_side=True)


# ---------------------------------------------------------------- oracles and comparisons


def params_formula(d: int, f: int, bias: bool = True, gated: bool = False) -> int:
    """A block's parameters, counted matrix by matrix."""
    matrices = [d * f, f * d] + ([d * f] if gated else [])  # W1, W2, V
    biases = [f, d] + ([f] if gated else []) if bias else []
    return sum(matrices) + sum(biases)


def flops_formula(d: int, f: int, n: int = 1, gated: bool = False, backward: bool = False) -> int:
    """2 FLOPs (multiply, add) per weight per token; backward twice that again."""
    weights = (3 if gated else 2) * d * f
    return 2 * n * weights * (3 if backward else 1)


def llama_formula(d: int, multiple_of: int = 256, multiplier: float | None = None) -> int:
    """Meta's rule in exact fractions: floor(8d/3), floor(multiplier times that) (the product
    rounded once to a double, as Meta's float product), rounded up to the multiple."""
    hidden = math.floor(Fraction(8 * d, 3))
    if multiplier is not None:
        hidden = math.floor(Fraction(multiplier * float(hidden)))
    return math.ceil(Fraction(hidden, multiple_of)) * multiple_of


def close(bound_rel: float = 1e-12, bound_abs: float = 1e-300) -> Callable[[Any, Any], bool]:
    """Floats (or nested lists / dicts of them) within bound_rel |want| + bound_abs; NaN where
    NaN is due; infinities equal."""

    def check(got: Any, want: Any) -> bool:
        if isinstance(want, dict):
            return isinstance(got, dict) and set(got) >= set(want) and all(
                check(got[k], want[k]) for k in want)
        if isinstance(want, (list, tuple)):
            return isinstance(got, (list, tuple)) and len(got) == len(want) and all(
                check(g, w) for g, w in zip(got, want, strict=True))
        if isinstance(want, int) and not isinstance(want, bool):
            return bool(got == want)
        got, want = float(got), float(want)
        if math.isnan(want) or math.isinf(want):
            return (math.isnan(got) and math.isnan(want)) or got == want
        return abs(got - want) <= bound_rel * abs(want) + bound_abs

    return check


# ---------------------------------------------------------------- counting


def counting_cases() -> list[LabCase]:
    cases: list[LabCase] = []

    def cp(id: str, args: tuple[Any, ...], arg: str = "",
           oracle: Callable[[], object] | None = None) -> LabCase:
        return LabCase(f"countParameters {id}", "countParameters", args,
                       lambda: ffn.count_parameters(*args), arg, oracle)

    cases.append(cp("BERT base", (768, 3072, True, False),
                    oracle=lambda: params_formula(768, 3072)))
    cases.append(cp("gated no bias", (4096, 14336, False, True),
                    oracle=lambda: params_formula(4096, 14336, False, True)))
    cases.append(cp("d_model 10**400", (10**400, 3, True, False),
                    oracle=lambda: params_formula(10**400, 3)))
    for value, label in [(0, "0"), (-1, "-1"), (True, "True"), (8.0, "8.0"), ("768", "str"),
                         (None, "None"), (-(10**400), "-10**400")]:
        cases.append(cp(f"d_model {label}", (value, 3072, True, False), "d_model"))
    for value, label in [(0, "0"), (-5, "-5"), ("3072", "str"), (1.5, "1.5"), (False, "False")]:
        cases.append(cp(f"d_ff {label}", (768, value, True, False), "d_ff"))
    for value, label in [(1, "1"), ("true", "str"), (None, "None")]:
        cases.append(cp(f"bias {label}", (768, 3072, value, False), "bias"))
        cases.append(cp(f"gated {label}", (768, 3072, True, value), "gated"))

    def cf(id: str, args: tuple[Any, ...], arg: str = "",
           oracle: Callable[[], object] | None = None) -> LabCase:
        return LabCase(f"countFlops {id}", "countFlops", args, lambda: ffn.count_flops(*args),
                       arg, oracle)

    cases.append(cf("plain", (768, 3072, 5, False, True),
                    oracle=lambda: flops_formula(768, 3072, 5, False, True)))
    cases.append(cf("huge", (10**30, 10**30, 10**30, True, False),
                    oracle=lambda: flops_formula(10**30, 10**30, 10**30, True)))
    for args, arg, label in [((0, 3, 1, False, False), "d_model", "d_model 0"),
                             ((3, -1, 1, False, False), "d_ff", "d_ff -1"),
                             ((3, 3, 0, False, False), "n_tokens", "n_tokens 0"),
                             ((3, 3, 2.0, False, False), "n_tokens", "n_tokens 2.0"),
                             ((3, 3, True, False, False), "n_tokens", "n_tokens True"),
                             ((3, 3, 1, "yes", False), "gated", "gated str"),
                             ((3, 3, 1, False, 1), "backward", "backward 1")]:
        cases.append(cf(label, args, arg))

    def ll(id: str, args: tuple[Any, ...], arg: str = "",
           oracle: Callable[[], object] | None = None) -> LabCase:
        return LabCase(f"llamaDff {id}", "llamaDff", args, lambda: ffn.llama_d_ff(*args), arg,
                       oracle)

    for args in [(4096, 256, None), (4096, 1024, 1.3), (8192, 4096, 1.3), (16384, 4096, 1.2),
                 (10**400, 256, None), (3, 1, 2), (3 * 2**49, 256, None), (2**60, 7, 0.7)]:
        cases.append(ll(f"{args}"[:40], args, oracle=lambda a=args: llama_formula(*a)))
    for args, arg, label in [((64, 0, None), "multiple_of", "multiple_of 0 (was Division by zero)"),
                             ((64, -1, None), "multiple_of", "multiple_of -1"),
                             ((64, 2.0, None), "multiple_of", "multiple_of 2.0"),
                             ((64, True, None), "multiple_of", "multiple_of True"),
                             ((0, 256, None), "d_model", "d_model 0"),
                             ((4096.0, 256, None), "d_model", "d_model 4096.0"),
                             ((4096, 256, 0.0), "ffn_dim_multiplier", "multiplier 0"),
                             ((4096, 256, -1.3), "ffn_dim_multiplier", "multiplier -1.3"),
                             ((4096, 256, NAN), "ffn_dim_multiplier", "multiplier nan"),
                             ((4096, 256, INF), "ffn_dim_multiplier", "multiplier inf"),
                             ((4096, 256, "1.3"), "ffn_dim_multiplier", "multiplier str"),
                             ((4096, 256, True), "ffn_dim_multiplier", "multiplier True"),
                             ((4096, 1024, 1e307), "ffn_dim_multiplier", "multiplier 1e307"),
                             ((1, 256, 0.1), "ffn_dim_multiplier", "width truncates to zero")]:
        cases.append(ll(label, args, arg))
    cases.append(ll("d_model 10**400 with a multiplier", (10**400, 256, 1.3),
                    "ffn_dim_multiplier"))

    def ca(id: str, args: tuple[Any, ...], arg: str = "",
           oracle: Callable[[], object] | None = None) -> LabCase:
        return LabCase(f"countAttentionParameters {id}", "countAttentionParameters", args,
                       lambda: ffn.count_attention_parameters(*args), arg, oracle)

    cases.append(ca("plain", (768, True, None), oracle=lambda: 4 * 768 * 768 + 4 * 768))
    cases.append(ca("grouped query", (4096, False, 1024),
                    oracle=lambda: 2 * 4096 * 4096 + 2 * 4096 * 1024))
    for args, arg, label in [((0, True, None), "d_model", "d_model 0"),
                             ((768, True, 0), "kv_dim", "kv_dim 0"),
                             ((768, True, "8"), "kv_dim", "kv_dim str"),
                             ((768, True, 8.0), "kv_dim", "kv_dim 8.0"),
                             ((768, 1, None), "bias", "bias 1")]:
        cases.append(ca(label, args, arg))

    def mp(id: str, args: tuple[Any, ...], arg: str = "",
           oracle: Callable[[], object] | None = None) -> LabCase:
        return LabCase(f"countMoeParameters {id}", "countMoeParameters", args,
                       lambda: ffn.count_moe_parameters(*args), arg, oracle)

    cases.append(mp("Mixtral total", (4096, 14336, 8, None, False, True),
                    oracle=lambda: 8 * params_formula(4096, 14336, False, True) + 4096 * 8))
    cases.append(mp("Mixtral active", (4096, 14336, 8, 2, False, True),
                    oracle=lambda: 2 * params_formula(4096, 14336, False, True) + 4096 * 8))
    for args, arg, label in [((8, 32, 0, None, True, False), "n_experts", "n_experts 0"),
                             ((8, 32, -1, None, True, False), "n_experts", "n_experts -1"),
                             ((8, 32, True, None, True, False), "n_experts", "n_experts True"),
                             ((8, 32, "8", None, True, False), "n_experts", "n_experts str"),
                             ((8, 32, 8, 0, True, False), "top_k", "top_k 0"),
                             ((8, 32, 8, 9, True, False), "top_k", "top_k 9 of 8"),
                             ((8, 32, 8, True, True, False), "top_k", "top_k True"),
                             ((8, 32, 8, 2.0, True, False), "top_k", "top_k 2.0"),
                             ((0, 32, 8, 2, True, False), "d_model", "d_model 0"),
                             ((8, 0, 8, 2, True, False), "d_ff", "d_ff 0")]:
        cases.append(mp(label, args, arg))

    def mf(id: str, args: tuple[Any, ...], arg: str = "",
           oracle: Callable[[], object] | None = None) -> LabCase:
        return LabCase(f"countMoeFlops {id}", "countMoeFlops", args,
                       lambda: ffn.count_moe_flops(*args), arg, oracle)

    cases.append(mf("plain", (8, 32, 4, 2, 3, False, True),
                    oracle=lambda: 2 * flops_formula(8, 32, 3, False, True) + 3 * 2 * 3 * 8 * 4))
    for args, arg, label in [((8, 32, 0, 1, 1, False, False), "n_experts", "n_experts 0"),
                             ((8, 32, 4, 5, 1, False, False), "top_k", "top_k 5 of 4"),
                             ((8, 32, 4, "2", 1, False, False), "top_k", "top_k str"),
                             ((8, 32, 4, 2, 0, False, False), "n_tokens", "n_tokens 0"),
                             ((8, -32, 4, 2, 1, False, False), "d_ff", "d_ff -32")]:
        cases.append(mf(label, args, arg))

    def ratio(a: int, b: int) -> LabCase:
        return LabCase(f"exactRatio {a % 1000}/{b % 1000} ({len(str(b))} digits)", "exactRatio",
                       (a, b), lambda: a / b, oracle=lambda: float(Fraction(a, b)))

    cases += [ratio(1, 3), ratio(2**600, 3 * 2**600 + 1), ratio(10**400 + 1, 7 * 10**400),
              ratio(2**53 + 1, 2**54 + 3), ratio(3 * 2**200 + 1, 2**202)]
    return cases


# ---------------------------------------------------------------- ModelDims


GPT2 = ffn.get_model("GPT-2 small")
LLAMA3 = ffn.get_model("LLaMA-3-8B")
MIXTRAL = ffn.get_model("Mixtral 8x7B")
OSS, MAVERICK = ffn.get_model("gpt-oss-120b"), ffn.get_model("Llama 4 Maverick")
NEXT = ffn.get_model("Qwen3-Next-80B-A3B")
LONGCAT, V4 = ffn.get_model("LongCat-Flash"), ffn.get_model("DeepSeek-V4-Flash")
# Their parts as lab.js reads them, to change one field at a time.
MIX, RULE, OSS_MOE = camel(MIXTRAL)["moe"], camel(LLAMA3)["dFf"], camel(OSS)["moe"]
MAV_MOE, LINEAR = camel(MAVERICK)["moe"], camel(NEXT)["linearAttention"]
LONGCAT_MOE, V4_MOE = camel(LONGCAT)["moe"], camel(V4)["moe"]


def dims_case(id: str, model: ffn.ModelDims, change: dict[str, Any],
              arg: str = "", size: Any = 2) -> LabCase:
    """ModelDims(model's fields, changed) in both: refused naming `arg`, or sized alike (at
    `size` bytes a value: decode_bytes' bytes_per_value; a refusal of it names it)."""
    fields = {**camel(model), **change}

    def build() -> ffn.ModelDims:
        return from_camel(fields, source=model.source)  # type: ignore[return-value]

    if arg == "bytes_per_value":
        return LabCase(f"sizeModel {id}", "sizeModel", (fields, size),
                       lambda: expected_size(build(), size), arg)
    if arg:
        return LabCase(f"modelDims {id}", "modelDims", (fields,), build, arg)
    return LabCase(f"sizeModel {id}", "sizeModel", (fields, size),
                   lambda: expected_size(build(), size),
                   oracle=lambda: expected_size(build(), size))


HUGE = 2**1024 // (12 * 17 * 2 * 3072) * 4  # GPT-2 small's bytes in MXFP4: 17 * (a count
# beyond 2**1024) / 32, a double (2.2e307) though the numerator is none


def model_dims_cases() -> list[LabCase]:
    cases = [dims_case(m.name, m, {}) for m in (GPT2, LLAMA3, MIXTRAL)]
    cases += [
        dims_case("d_model 1000 (the sizer's 1e3)", GPT2, {"dModel": 1000}),
        dims_case("d_model 10**30", GPT2, {"dModel": 10**30}),
        dims_case("LLaMA d_model 10**40", LLAMA3, {"dModel": 10**40}),
        dims_case("experts 0 (was one FFN)", GPT2, {"moe": {"nExperts": 0, "topK": 1}},
                  "n_experts"),
        dims_case("experts -2", GPT2, {"moe": {"nExperts": -2, "topK": 1}}, "n_experts"),
        dims_case("kv_dim 0", GPT2, {"kvDim": 0}, "kv_dim"),
        dims_case("moe a number", GPT2, {"moe": 4}, "moe"),
        dims_case("shared d_ff 0", MIXTRAL, {"moe": {**MIX, "shared": {"dFf": 0}}}, "d_ff"),
        dims_case("shared gate 0", MIXTRAL, {"moe": {**MIX, "shared": {"dFf": 8, "gate": 0}}},
                  "gate"),
        dims_case("dense without its width", MIXTRAL, {"moe": {**MIX, "dense": {"first": 2}}},
                  "d_ff"),
        dims_case("dense first 0", MIXTRAL, {"moe": {**MIX, "dense": {"first": 0, "dFf": 64}}},
                  "first"),
        dims_case("dense first beyond n_layers", MIXTRAL,
                  {"moe": {**MIX, "dense": {"first": 33, "dFf": 64}}}, "first"),
        dims_case("n_experts without top_k", GPT2, {"moe": {"nExperts": 4}}, "top_k"),
        dims_case("top_k without n_experts", GPT2, {"moe": {"topK": 2}}, "n_experts"),
        dims_case("top_k beyond n_experts", MIXTRAL, {"moe": {**MIX, "topK": 9}}, "top_k"),
        dims_case("top_k 2.0", MIXTRAL, {"moe": {**MIX, "topK": 2.0}}, "top_k"),
        dims_case("gated 'false'", GPT2, {"gated": "false"}, "gated"),
        dims_case("bias 1", GPT2, {"bias": 1}, "bias"),
        dims_case("d_model 8.0", GPT2, {"dModel": 8.0}, "d_model"),
        dims_case("d_model str", GPT2, {"dModel": "768"}, "d_model"),
        dims_case("n_layers 0", GPT2, {"nLayers": 0}, "n_layers"),
        dims_case("n_attention 0", GPT2, {"nAttention": 0}, "n_attention"),
        dims_case("attention_per_layer -1", GPT2, {"attentionPerLayer": -1},
                  "attention_per_layer"),
        dims_case("d_ff 0", GPT2, {"dFf": 0}, "d_ff"),
        dims_case("d_ff None", GPT2, {"dFf": None}, "d_ff"),
        dims_case("name empty", GPT2, {"name": ""}, "name"),
        dims_case("rule, multiple_of 0", LLAMA3, {"dFf": {**RULE, "multipleOf": 0}},
                  "multiple_of"),
        dims_case("rule, multiplier 1e307 (LLaMA-3-8B)", LLAMA3,
                  {"dFf": {**RULE, "ffnDimMultiplier": 1e307}}, "ffn_dim_multiplier"),
        dims_case("rule, multiplier nan", LLAMA3, {"dFf": {**RULE, "ffnDimMultiplier": NAN}},
                  "ffn_dim_multiplier"),
        dims_case("rule, width zero", LLAMA3, {"dModel": 1, "kvDim": None,
                                               "dFf": {**RULE, "ffnDimMultiplier": 0.1}},
                  "ffn_dim_multiplier"),
        dims_case("rule, 400-digit d_model", LLAMA3, {"dModel": 10**400}, "ffn_dim_multiplier"),
        # the parts of the 2025 models: router_bias, the layer mix, linear attention
        dims_case("router_bias 1", OSS, {"moe": {**OSS_MOE, "routerBias": 1}}, "router_bias"),
        dims_case("moe_every 0", MAVERICK, {"moe": {**MAV_MOE, "dense": {
            **MAV_MOE["dense"], "moeEvery": 0}}}, "moe_every"),
        dims_case("moe_every 2.0", MAVERICK, {"moe": {**MAV_MOE, "dense": {
            **MAV_MOE["dense"], "moeEvery": 2.0}}}, "moe_every"),
        dims_case("linear sublayers 0", NEXT, {"linearAttention": {**LINEAR, "sublayers": 0}},
                  "sublayers"),
        dims_case("linear sublayers beyond the attention sublayers", NEXT,
                  {"linearAttention": {**LINEAR, "sublayers": 49}}, "sublayers"),
        dims_case("linear attention without its count", NEXT,
                  {"linearAttention": {"sublayers": 36}}, "per_layer"),
        dims_case("linear per_layer 0", NEXT, {"linearAttention": {**LINEAR, "perLayer": 0}},
                  "per_layer"),
        dims_case("linear per_layer str", NEXT, {"linearAttention": {**LINEAR, "perLayer": "9"}},
                  "per_layer"),
        # the whole model's fields, which the sizer's breakdown counts (parameter_parts)
        dims_case("vocab_size 0", GPT2, {"vocabSize": 0}, "vocab_size"),
        dims_case("vocab_size 50257.0", GPT2, {"vocabSize": 50257.0}, "vocab_size"),
        dims_case("n_positions -1", GPT2, {"nPositions": -1}, "n_positions"),
        dims_case("other -1", GPT2, {"other": -1}, "other"),
        dims_case("other None", GPT2, {"other": None}, "other"),
        dims_case("tied_head 0", GPT2, {"tiedHead": 0}, "tied_head"),
        dims_case("norm 'batch'", GPT2, {"norm": "batch"}, "norm"),
        dims_case("norm None", GPT2, {"norm": None}, "norm"),
        dims_case("no vocab_size: no breakdown", GPT2, {"vocabSize": None}),
        dims_case("vocab_size 10**30, untied", LLAMA3, {"vocabSize": 10**30}),
        dims_case("Maverick, MoE in every 3rd layer", MAVERICK, {"moe": {**MAV_MOE, "dense": {
            **MAV_MOE["dense"], "moeEvery": 3}}}),
        dims_case("Maverick, every layer dense", MAVERICK, {"moe": {**MAV_MOE, "dense": {
            **MAV_MOE["dense"], "first": 48}}}),
        dims_case("gpt-oss-120b, no router bias", OSS, {"moe": {**OSS_MOE, "routerBias": False}}),
        dims_case("Qwen3-Next, every sublayer linear", NEXT,
                  {"linearAttention": {**LINEAR, "sublayers": 48}}),
    ]
    cases += [dims_case(m.name, m, {}) for m in RECENT_MOE_MODELS]
    cases += [  # the fields of the 2026 models: norms_per_layer, extra_attention on the
        # model; zero_experts, hash_layers in its experts (MoEDims)
        dims_case("norms_per_layer -1", GPT2, {"normsPerLayer": -1}, "norms_per_layer"),
        dims_case("norms_per_layer 2.0", GPT2, {"normsPerLayer": 2.0}, "norms_per_layer"),
        dims_case("zero_experts True", LONGCAT, {"moe": {**LONGCAT_MOE, "zeroExperts": True}},
                  "zero_experts"),
        dims_case("zero_experts -1", LONGCAT, {"moe": {**LONGCAT_MOE, "zeroExperts": -1}},
                  "zero_experts"),
        dims_case("hash_layers 1.5", V4, {"moe": {**V4_MOE, "hashLayers": 1.5}}, "hash_layers"),
        dims_case("expert_format 'fp4'", V4, {"moe": {**V4_MOE, "expertFormat": "fp4"}},
                  "expert_format"),
        dims_case("expert_format 4", V4, {"moe": {**V4_MOE, "expertFormat": 4}},
                  "expert_format"),
        dims_case("hash_layers beyond the MoE layers", V4, {"moe": {**V4_MOE, "hashLayers": 44}},
                  "hash_layers"),
        dims_case("extra_attention -1", V4, {"extraAttention": -1}, "extra_attention"),
        dims_case("extra_attention without attention_per_layer", GPT2, {"extraAttention": 5},
                  "extra_attention"),
        dims_case("GPT-2 small, 7 norms a layer", GPT2, {"normsPerLayer": 7}),
        dims_case("LongCat-Flash, 10**20 zero experts", LONGCAT,
                  {"moe": {**LONGCAT_MOE, "zeroExperts": 10**20}}),
        dims_case("LongCat-Flash with a router bias", LONGCAT,
                  {"moe": {**LONGCAT_MOE, "routerBias": True}}),
        dims_case("DeepSeek-V4-Flash, no extra attention", V4, {"extraAttention": 0}),
        dims_case("DeepSeek-V4-Flash, every MoE layer hashed", V4,
                  {"moe": {**V4_MOE, "hashLayers": 43}}),
    ]
    cases += [dims_case(m.name, m, {}) for m in MODELS_2026]
    # bytes per value: the formats by name, exact fractions of a byte for MXFP4 and NVFP4
    cases += [dims_case(f"{m.name} in {f}", m, {}, size=f) for m in (GPT2, MIXTRAL, OSS)
              for f in ("mxfp4", "nvfp4", "e4m3")]
    cases += [
        dims_case("GPT-2 small, 303-digit d_model in mxfp4", GPT2, {"dModel": HUGE},
                  size="mxfp4"),
        dims_case("GPT-2 small, 303-digit d_model in nvfp4", GPT2, {"dModel": HUGE},
                  size="nvfp4"),
        dims_case("GPT-2 small, 303-digit d_model in bfloat16 (an exact int)", GPT2,
                  {"dModel": HUGE}, size="bfloat16"),
        dims_case("GPT-2 small, bytes beyond a double in mxfp4", GPT2, {"dModel": 16 * HUGE},
                  "bytes_per_value", size="mxfp4"),
        dims_case("gpt-oss, bytes beyond a double in nvfp4", OSS,
                  {"dModel": 10**300, "nLayers": 10**6}, "bytes_per_value", size="nvfp4"),
    ]
    # a float bytes_per_value (issue 39): its exact binary value, the bytes a float
    cases += [dims_case(f"{m.name} at {size!r} bytes a value", m, {}, size=size)
              for m in (GPT2, OSS) for size in (0.53125, 0.5625, 2.0, 0.1)]
    cases += [
        dims_case("GPT-2 small at 2.0: a float, beyond a double", GPT2, {"dModel": 16 * HUGE},
                  "bytes_per_value", size=2.0),
    ]
    for label, size in [("fp4", "fp4"), ("MXFP4", "MXFP4"), ("0", 0), ("-2", -2),
                        ("True", True), ("None", None), ("0.0", 0.0), ("-0.5", -0.5),
                        ("nan", NAN), ("inf", INF), ("str 0.5", "0.5")]:
        cases.append(dims_case(f"bytes_per_value {label}", GPT2, {}, "bytes_per_value",
                               size=size))
        cases.append(dims_case(f"bytes_per_value {label}, experts", OSS, {},
                               "bytes_per_value", size=size))
    return cases


# ---------------------------------------------------------------- the router


def ffn_route_raw(x: object, top_k: object, score: object = "softmax", bias: object = None,
                  normalize: object = True, scale: object = 1.0, n: int = 4) -> dict[str, Any]:
    """ffn's MixtureOfExperts.route of token x through the identity router (for non-finite
    logits, nonfinite_token's), inputs unconverted (widgets/router/data.py's ffn_route converts
    them to floats first)."""
    router = np.eye(n)
    if isinstance(x, list) and all(isinstance(v, float) for v in x) and not all(
            map(math.isfinite, x)):
        x, router = nonfinite_token(x)
    experts = [ffn.FeedForward.random(router.shape[0], 1, seed=i) for i in range(n)]
    moe = ffn.MixtureOfExperts(router, experts, top_k=top_k,  # type: ignore[arg-type]
                               normalize=normalize, score=score,  # type: ignore[arg-type]
                               bias=bias, scale=scale)  # type: ignore[arg-type]
    p, chosen, weights = moe.route(x)
    return {"scores": p.tolist(), "chosen": chosen.tolist(), "weights": weights.tolist()}


def nonfinite_token(logits: list[float]) -> tuple[list[float], np.ndarray]:
    """A token and router whose product is `logits`, NaN and infinities included: the identity
    cannot give them (NaN times 0 is NaN in every column). The finite logits come through the
    identity; two more inputs of 1 meet a row with +inf and one with -inf in the columns of
    the non-finite ones (inf, -inf, or both: inf - inf = NaN), zeros elsewhere."""
    n = len(logits)
    x = [v if math.isfinite(v) else 0.0 for v in logits] + [1.0, 1.0]
    router = np.zeros((n + 2, n))
    router[:n] = np.eye(n)
    for j, v in enumerate(logits):
        if math.isnan(v) or v == INF:
            router[n, j] = INF
        if math.isnan(v) or v == -INF:
            router[n + 1, j] = -INF
    return x, router


def route_oracle(logits: list[float], top_k: int, score: str = "softmax",
                 bias: list[float] | None = None, normalize: bool = True,
                 scale: float = 1.0) -> dict[str, Any]:
    """The route in mpmath: exact scores; the choice by the rule (scores rounded to doubles
    plus the bias, ties to the lower index, NaN last; without a bias, either score, by the
    logits, the exact scores' order); weights the exact scores of the chosen, renormalised,
    or NaN when any score is NaN."""
    def exact(i: int) -> Any:
        if math.isnan(logits[i]):
            return mpmath.nan
        if score == "sigmoid":
            return 1 / (1 + mpmath.exp(-mpmath.mpf(logits[i])))
        if any(math.isnan(v) for v in logits):
            return mpmath.nan  # numpy's max is NaN: every shifted logit is
        top = max(logits)
        return mpmath.exp(mpmath.mpf(logits[i]) - top) / mpmath.fsum(
            mpmath.exp(mpmath.mpf(v) - top) for v in logits)

    n = len(logits)
    p = [exact(i) for i in range(n)]
    if bias is None:  # the logits, whose order either score keeps (NaN: unknown)
        key = [None if mpmath.isnan(p[i]) else mpmath.mpf(logits[i]) for i in range(n)]
    else:
        key = [None if mpmath.isnan(p[i]) else float(p[i]) + (bias[i] if bias else 0.0)
               for i in range(n)]
    order = sorted(range(n), key=lambda i: (key[i] is None, -(key[i] or 0), i))
    chosen = order[:top_k]
    w = [p[i] for i in chosen]
    if normalize:
        total = mpmath.fsum(w)
        w = [v / total for v in w]
    if any(k is None for k in key):  # a NaN score: which experts to choose is unknown
        w = [mpmath.nan] * len(w)
    return {"scores": [float(v) for v in p], "chosen": chosen,
            "weights": [float(v * mpmath.mpf(scale)) for v in w]}


def route_case(id: str, logits: Any, top_k: Any, score: Any = "softmax", bias: Any = None,
               normalize: Any = True, scale: Any = 1.0, arg: str = "",
               ffn_arg: str = "") -> LabCase:
    args = (logits, top_k, score, bias, normalize, scale)
    n = len(logits) if isinstance(logits, list) and logits else 4
    oracle = None if arg else (lambda: route_oracle(*args))  # type: ignore[arg-type]
    return LabCase(f"route {id}", "route", args,
                   lambda: ffn_route_raw(*args, n=n), arg, oracle, same=close(1e-12),
                   ffn_arg=ffn_arg)


L4 = [0.1, 2.0, -1.0, 0.5]


def router_cases() -> list[LabCase]:
    cases = [
        route_case("softmax plain", L4, 2),
        route_case("sigmoid plain", L4, 2, "sigmoid"),
        route_case("sigmoid biased", L4, 2, "sigmoid", [0.0, -1.0, 1.5, 0.0]),
        route_case("softmax no normalize, scale 2.5", L4, 3, "softmax", None, False, 2.5),
        route_case("sigmoid logits near -800", [-805.0, -800.0, -810.0, -790.0], 2, "sigmoid"),
        route_case("sigmoid saturated 40 and 41", [40.0, 41.0, 0.0, -1.0], 1, "sigmoid"),
        route_case("sigmoid NaN logit", [NAN, 1.0, 0.5, -1.0], 2, "sigmoid"),
        route_case("sigmoid NaN logit, all chosen", [NAN, 1.0, 0.5, -1.0], 4, "sigmoid"),
        route_case("softmax NaN logit", [0.0, NAN, 1.0, 2.0], 2, "softmax"),
        route_case("sigmoid inf logit", [INF, 1.0, -INF, 0.0], 2, "sigmoid"),
        route_case("softmax bias picks underflowed experts", [0.0, -1000.0, -1001.0, 5.0], 2,
                   "softmax", [0.0, 5.0, 5.0, 0.0]),
        route_case("sigmoid ties to the lower index", [1.0, 1.0, 1.0, 1.0], 2, "sigmoid"),
        # issue 39: without a bias the logits choose, for softmax too (p rounds them together)
        route_case("softmax, logits 1e-17 and 2e-17 give one p", [0.5, 1e-17, 2e-17, -1.0], 2),
        route_case("softmax, underflowed p chosen by logit", [800.0, 0.0, 1.0, -5.0], 2),
    ]
    refused: list[tuple[str, dict[str, Any], str]] = [
        ("top_k True", {"top_k": True}, "top_k"), ("top_k '2'", {"top_k": "2"}, "top_k"),
        ("top_k 2.0", {"top_k": 2.0}, "top_k"), ("top_k 0", {"top_k": 0}, "top_k"),
        ("top_k 5 of 4", {"top_k": 5}, "top_k"), ("top_k None", {"top_k": None}, "top_k"),
        ("score relu", {"score": "relu"}, "score"), ("score None", {"score": None}, "score"),
        ("bias short", {"bias": [0.1]}, "bias"), ("bias long", {"bias": [0.0] * 5}, "bias"),
        ("bias NaN", {"bias": [0.0, NAN, 0.0, 0.0]}, "bias"),
        ("bias inf", {"bias": [0.0, INF, 0.0, 0.0]}, "bias"),
        ("bias str", {"bias": "abcd"}, "bias"),
        ("bias of str", {"bias": ["0.1", "0", "0", "0"]}, "bias"),
        ("scale 0", {"scale": 0.0}, "scale"), ("scale -1", {"scale": -1.0}, "scale"),
        ("scale nan", {"scale": NAN}, "scale"), ("scale 1e7", {"scale": 1e7}, "scale"),
        ("scale str", {"scale": "2"}, "scale"), ("scale True", {"scale": True}, "scale"),
        ("normalize 1", {"normalize": 1}, "normalize"),
        ("normalize str", {"normalize": "yes"}, "normalize"),
    ]
    for label, change, arg in refused:
        kw: dict[str, Any] = {"top_k": 2, "score": "softmax", "bias": None, "normalize": True,
                              "scale": 1.0, **change}
        cases.append(route_case(label, L4, kw["top_k"], kw["score"], kw["bias"],
                                kw["normalize"], kw["scale"], arg))
    for label, logits in [("logits of str", ["1", "2", "0", "3"]), ("logits None", None),
                          ("logits str", "1234"), ("logits nested", [[1.0], [2.0], [0.0], [3.0]])]:
        cases.append(route_case(label, logits, 2, arg="logits", ffn_arg="x"))
    cases.append(LabCase("route logits empty", "route", ([], 1), None, "logits"))
    cases += [
        LabCase(f"routerScores {score}", "routerScores", (L4, score),
                lambda s=score: ffn_route_raw(L4, 1, s)["scores"],
                oracle=lambda s=score: route_oracle(L4, 1, s)["scores"], same=close(1e-12))
        for score in ("softmax", "sigmoid")]
    cases.append(LabCase("routerScores score relu", "routerScores", (L4, "relu"),
                         lambda: ffn_route_raw(L4, 1, "relu"), "score"))
    cases.append(LabCase("rankExperts NaN last", "rankExperts", ([NAN, 1.0, NAN, 2.0],),
                         lambda: np.argsort(-np.array([NAN, 1.0, NAN, 2.0]),
                                            kind="stable").tolist(),
                         oracle=lambda: [3, 1, 0, 2]))
    for n in (1, 2, 3, 4, 10, 11, 12, 13, 14, 21, 22, 23, 101, 111, 112, 113, 121, 1011, 2013):
        suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10,
                                                                                     "th")
        cases.append(LabCase(f"ordinal {n}", "ordinal", (n,),
                             lambda n=n: widget_router.ordinal(n), oracle=lambda n=n, s=suffix:
                             f"{n}{s}"))
    for label, value in [("0", 0), ("1.5", 1.5), ("str", "3"), ("None", None)]:
        cases.append(LabCase(f"ordinal {label}", "ordinal", (value,), None, "n"))
    return cases


# ---------------------------------------------------------------- the memory explorer

W1 = [[1.0, -2.0, 0.5], [0.25, 1.0, -1.0]]  # (d_model 2, d_ff 3)
B1 = [0.1, -0.2, 0.3]
W2 = [[1.0, 0.0], [-1.0, 2.0], [0.5, 0.5]]  # (d_ff 3, d_model 2)
B2 = [0.01, -0.02]


def memory_oracle(W1: list[list[float]], b1: list[float] | None, W2: list[list[float]],
                  b2: list[float] | None, x: list[float], activation: str) -> dict[str, Any]:
    """Plain loops in mpmath: pre, h, y (activation by its formula)."""
    act: dict[str, Callable[[Any], Any]] = {
        "relu": lambda v: max(v, 0), "gelu": lambda v: v * mpmath.ncdf(v),
        "silu": lambda v: v / (1 + mpmath.exp(-v)), "relu2": lambda v: max(v, 0) ** 2,
        "gelu_tanh": lambda v: v / 2 * (1 + mpmath.tanh(mpmath.sqrt(2 / mpmath.pi)
                                                        * (v + mpmath.mpf(0.044715) * v**3)))}
    d_model, d_ff = len(W1), len(W1[0])
    pre = [mpmath.fsum(mpmath.mpf(x[j]) * W1[j][i] for j in range(d_model))
           + (b1[i] if b1 else 0) for i in range(d_ff)]
    h = [act[activation](v) for v in pre]
    y = [mpmath.fsum(h[i] * W2[i][k] for i in range(d_ff)) + (b2[k] if b2 else 0)
         for k in range(d_model)]
    return {"pre": [float(v) for v in pre], "h": [float(v) for v in h],
            "y": [float(v) for v in y]}


def memory_case(id: str, W1: Any = W1, b1: Any = B1, W2: Any = W2, b2: Any = B2,
                x: Any = (0.5, -1.5), activation: Any = "relu", arg: str = "") -> LabCase:
    x = list(x) if isinstance(x, tuple) else x
    args = (W1, b1, W2, b2, x, activation)

    def in_ffn() -> dict[str, Any]:
        trace = ffn.FeedForward(W1, b1, W2, b2, activation=activation).forward_trace(x)
        return {"pre": trace.h_pre.tolist(), "h": trace.h.tolist(), "y": trace.y.tolist()}

    oracle = None if arg else (lambda: memory_oracle(*args))  # type: ignore[arg-type]
    # float64 sums of three terms near 1 and GELU's erfc: far inside 1e-12 relative, 1e-15 abs
    return LabCase(f"memoryForward {id}", "memoryForward", args, in_ffn, arg, oracle,
                   same=close(1e-12, 1e-15))


def memory_cases() -> list[LabCase]:
    return [
        memory_case("relu"), memory_case("gelu", activation="gelu"),
        memory_case("silu", activation="silu"), memory_case("relu2", activation="relu2"),
        memory_case("gelu_tanh", activation="gelu_tanh"),
        memory_case("no biases", b1=None, b2=None),
        memory_case("x short (was fewer rows)", x=[0.5], arg="x"),
        memory_case("x long", x=[0.5, 1.0, 2.0], arg="x"),
        memory_case("b1 short (was fewer units)", b1=[0.1, -0.2], arg="b1"),
        memory_case("b1 long", b1=[0.1, -0.2, 0.3, 0.4], arg="b1"),
        memory_case("b2 short", b2=[0.01], arg="b2"),
        memory_case("W2 rows short", W2=W2[:2], arg="W2"),
        memory_case("W2 columns short", W2=[row[:1] for row in W2], arg="W2"),
        memory_case("W1 ragged", W1=[[1.0, -2.0, 0.5], [0.25, 1.0]], arg="W1"),
        memory_case("W1 empty", W1=[], arg="W1"),
        memory_case("W1 None", W1=None, arg="W1"),
        memory_case("x of str", x=["0.5", "1"], arg="x"),
        memory_case("x None", x=None, arg="x"),
        memory_case("b1 of str", b1=["0.1", "0", "0"], arg="b1"),
        memory_case("activation tanh", activation="tanh", arg="activation"),
        memory_case("activation None", activation=None, arg="activation"),
    ]


# ---------------------------------------------------------------- the activations

def act_exact(name: str, grad: bool, x: float) -> float:
    """The activation (or its derivative) at x in mpmath; the limits at +-inf; NaN at NaN."""
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        if x < 0:
            return 0.0
        return INF if (not grad or name == "relu2") else 1.0
    v = mpmath.mpf(x)
    c = mpmath.mpf(0.044715)
    s = mpmath.sqrt(2 / mpmath.pi)
    f: dict[str, Callable[[Any], Any]] = {
        "relu": lambda v: max(v, 0), "relu2": lambda v: max(v, 0) ** 2,
        "gelu": lambda v: v * mpmath.ncdf(v), "silu": lambda v: v / (1 + mpmath.exp(-v)),
        "gelu_tanh": lambda v: v / 2 * (1 + mpmath.tanh(s * (v + c * v**3)))}
    if not grad:
        return float(f[name](v))
    if name == "relu":
        return 1.0 if x > 0 else 0.0
    if name == "relu2":
        return float(2 * max(v, 0))
    return float(mpmath.diff(f[name], v))


def act_close(x: float) -> Callable[[Any, Any], bool]:
    # tests/test_widgets.py's bound, 8 eps (|f| + |x| + 1), on the exact value; the exact
    # GELU's tail loses x**2 ulp more in both languages (ffn.gelu's docstring)
    def check(got: Any, want: Any) -> bool:
        got = float(got)
        if math.isnan(want) or math.isinf(want):
            return (math.isnan(got) and math.isnan(want)) or got == want
        bound = 8 * EPS * (abs(want) + abs(x) + 1) * (1 + x * x)
        return abs(got - want) <= bound

    return check


def activation_cases() -> list[LabCase]:
    cases = []
    for name, js_pair in JS_NAMES.items():
        for grad, js in zip((False, True), js_pair, strict=True):
            py = FUNCTIONS[name][grad]
            for label, x in [("3.0", 3.0), ("-0.5", -0.5), ("nan", NAN), ("inf", INF),
                             ("-inf", -INF), ("True", True), ("int 2**70", 2**70)]:
                value = float(x)
                cases.append(LabCase(f"{js} {label}", js, (x,), lambda py=py, x=x: float(py(x)),
                                     oracle=lambda n=name, g=grad, v=value: act_exact(n, g, v),
                                     same=act_close(value)))
            for label, x in [("str", "3"), ("None", None), ("10**400", 10**400)]:
                cases.append(LabCase(f"{js} {label}", js, (x,), lambda py=py, x=x: py(x), "x"))
            # a list: ffn is elementwise and answers an array; these functions are scalar and
            # must refuse it (relu2([2]) was 4): no ffn verdict to share
            cases.append(LabCase(f"{js} list", js, ([2.0],), None, "x"))
    for name, js in JS_GATES.items():  # the gates g, f(x) = x g(x): ffn.activations.gate
        for label, x in [("3.0", 3.0), ("-0.5", -0.5), ("0.0", 0.0), ("nan", NAN),
                         ("inf", INF), ("-inf", -INF), ("True", True), ("int 2**70", 2**70)]:
            value = float(x)
            cases.append(LabCase(f"{js} (gate of {name}) {label}", js, (x,),
                                 lambda n=name, x=x: float(gate(x, n)),
                                 oracle=lambda n=name, v=value: gate_exact(n, v),
                                 same=act_close(value)))
        for label, x in [("str", "3"), ("None", None), ("10**400", 10**400)]:
            cases.append(LabCase(f"{js} (gate of {name}) {label}", js, (x,),
                                 lambda n=name, x=x: gate(x, n), "x"))
        cases.append(LabCase(f"{js} (gate of {name}) list", js, ([2.0],), None, "x"))
    return cases


def gate_exact(name: str, x: float) -> float:
    """The gate g(x), f(x) = x g(x), in mpmath; the limits at +-inf; NaN at NaN."""
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return 0.0 if x < 0 else (INF if name == "relu2" else 1.0)
    v = mpmath.mpf(x)
    z = mpmath.sqrt(2 / mpmath.pi) * (v + mpmath.mpf(0.044715) * v**3)
    g: dict[str, Callable[[Any], Any]] = {
        "relu": lambda v: 1 if v > 0 else 0, "relu2": lambda v: max(v, 0),
        "gelu": mpmath.ncdf, "silu": lambda v: 1 / (1 + mpmath.exp(-v)),
        "gelu_tanh": lambda v: (1 + mpmath.tanh(z)) / 2}
    return float(g[name](v))


# ---------------------------------------------------------------- reading the fields


def whole_or_none(text: str) -> int | None:
    """The typed text's value if it is a whole number (Python's exact Fraction reads it), else
    None."""
    value = Fraction(text)
    return int(value) if value.denominator == 1 else None


def read_cases() -> list[LabCase]:
    # The sizer's integer fields and the router's top-k (issue 39): any length, any form a
    # number field holds; the answer boxes' data. No ffn function reads text: the oracle alone.
    texts = ["2.0", "1e0", "20e-1", "2.5", "-5", "0", "7" * 100, "1" + "0" * 400, "1e400",
             "3.000e2", "12345678901234567890123.0", "0.1e1", "-0.0"]
    cases = [LabCase(f"readInteger {t[:12]} ({len(t)} chars)", "readInteger", (t,), None,
                     oracle=lambda t=t: whole_or_none(t)) for t in texts]
    cases += [LabCase(f"readInteger {label}", "readInteger", (t,), None, oracle=lambda: None)
              for label, t in [("empty", ""), ("word", "two"), ("percent", "12%"),
                               ("bare e", "1e"), ("point", ".")]]
    # the answer boxes' own data, malformed (issue 39: a bare TypeError from inside): refused
    # naming the argument; the reader's text is never refused, only "unreadable"
    for label, expected, rounding, arg in [
            ("expected 'abc'", "abc", {"decimals": 2}, "expected"),
            ("expected None", None, {"decimals": 2}, "expected"),
            ("expected a number", 0.5, {"decimals": 2}, "expected"),
            ("expected '12%'", "12%", {"decimals": 2}, "expected"),
            ("rounding None", "0.50", None, "rounding"),
            ("rounding {}", "0.50", {}, "rounding"),
            ("rounding decimals -1", "0.50", {"decimals": -1}, "rounding"),
            ("rounding figures 0", "0.50", {"figures": 0}, "rounding"),
            ("rounding two kinds", "0.50", {"decimals": 2, "exact": True}, "rounding")]:
        cases.append(LabCase(f"checkAnswer {label}", "checkAnswer", ("0.5", expected, rounding),
                             None, arg))
    cases.append(LabCase("checkAnswer right", "checkAnswer", ("0.499", "0.50", {"decimals": 2}),
                         None, oracle=lambda: {"status": "right"}))
    cases.append(LabCase("readNumber 100 digits (was null past 80 characters)", "readNumber",
                         ("7" * 100,), None, oracle=lambda: {
                             "negative": False, "digits": int("7" * 100), "exponent": 0,
                             "percent": False}))
    return cases


# ---------------------------------------------------------------- printing


def format_cases() -> list[LabCase]:
    cases = []
    for x, digits, grouping in [(1.72052e21, 0, True), (1e21, 3, False), (-3e300, 2, True),
                                (1.7976931348623157e308, 0, True), (123456789.125, 2, True),
                                (NAN, 2, False), (INF, 0, True), (2.0**70, 1, True)]:
        spec = f"{',' if grouping else ''}.{digits}f"
        cases.append(LabCase(f"formatFixed {x:g} {spec}", "formatFixed", (x, digits, grouping),
                             lambda x=x, s=spec: format(x, s),
                             oracle=lambda x=x, d=digits, g=grouping: python_fixed(x, d, g)))
    for n in (10**400, -(2**70), 0):
        cases.append(LabCase(f"formatInt {str(n)[:6]} ({len(str(n))} chars)", "formatInt", (n,),
                             lambda n=n: f"{n:,}", oracle=lambda n=n: grouped(n)))
    return cases


def grouped(n: int) -> str:
    """n with commas every three digits, by hand."""
    digits = str(abs(n))
    parts = [digits[max(0, i - 3):i] for i in range(len(digits), 0, -3)][::-1]
    return ("-" if n < 0 else "") + ",".join(parts)


def python_fixed(x: float, digits: int, grouping: bool) -> str:
    """x to `digits` decimals from its exact value (a Fraction), ties to even, by hand."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    exact = Fraction(x) * 10**digits
    scaled = round(exact)  # Fraction's round: to even at a tie
    whole, frac = divmod(abs(scaled), 10**digits)
    text = grouped(whole) if grouping else str(whole)
    sign = "-" if x < 0 or math.copysign(1, x) < 0 else ""
    return sign + text + (f".{frac:0{digits}d}" if digits else "")


# ---------------------------------------------------------------- the run

CASES = [*counting_cases(), *model_dims_cases(), *router_cases(), *memory_cases(),
         *activation_cases(), *format_cases(), *read_cases()]
AREAS = sorted({c.js for c in CASES})

# Exports with no ffn function to share a verdict with, and where they are tested instead.
NOT_HERE = {
    "ACTIVATIONS": "a table of the functions above", "MEMORY_ACTIVATIONS": "a table",
    "ROUTER_SCORES": "ffn.routing.SCORES, a constant", "erfc": "scipy's, inside ffn's gelu",
    "phi": "inside ffn's gelu_grad",
    "listWords": "the widget's sentence (test_widget_router.py)",
    "biasSwap": "the widget's sentence (test_widget_router.py)",
    "firingSentence": "the widget's sentence (test_widget_memory.py)",
    "readNumber": "the answer boxes (test_widget_answers.py)",
    "checkAnswer": "the answer boxes (test_widget_answers.py)",
    "describeValue": "check.js's message text", "shortInt": "check.js's message text",
    "checkPositiveInt": "check.js: through every count above",
    "checkBoolean": "check.js: through the counts' flags", "checkChoice": "through route",
    "checkReal": "through llamaDff and route", "checkScalar": "through the activations",
    "checkVector": "through route and memoryForward", "checkTopK": "through route and counts",
    "dimsProblem": "modelDims' message, tested in test_widgets.py",
    "resolvedDff": "through sizeModel", "ffnParametersPerLayer": "through sizeModel",
    "sharedParameters": "through sizeModel", "denseFfnParameters": "through sizeModel",
    "ffnParameters": "through sizeModel", "attentionParameters": "through sizeModel",
    "ffnShare": "through sizeModel", "ffnFlopsPerToken": "through sizeModel",
    "decodeBytes": "through sizeModel", "moeLayers": "through sizeModel",
    "attentionSublayers": "through modelDims and sizeModel",
    "weightFormats": "ffn.inference.BYTES_PER_VALUE's names (test_widgets.py)",
    "weightBytes": "through sizeModel; its table against ffn's in test_widgets.py",
    "SMALLEST_SIZE": "a constant: weightBytes' bound, held to ffn's at both sides in "
                     "test_widgets.py",
    "sizerNumbers": "sizeModel's numbers printed: every preset and format (test_widgets.py)",
    "ffnParts": "through sizeModel", "parameterParts": "through sizeModel",
    "breakdown": "through breakdownNumbers, its strings against ffn's (test_widgets.py)",
    "breakdownNumbers": "every preset and generated dimensions against ffn (test_widgets.py)",
    "KNOCKOUT_KINDS": "a constant: the knock-out widget's kinds",
    "knockoutRow": "a row of the knock-out table, which ffn.smollm2 computed at build time, "
                   "no ffn call: every row and the bad choices in test_widget_knockout.py",
    "changeSentence": "the knock-out widget's sentence (test_widget_knockout.py)",
    "percentText": "the knock-out widget's format: hypothesis and bad p in "
                   "test_widget_knockout.py",
    "tokenLabel": "the knock-out widget's format (test_widget_knockout.py)",
    "layerProfile": "a column of the knock-out table: every prompt and kind, and bad ones, in "
                    "test_widget_knockout.py",
}


@pytest.fixture(scope="module")
def lab() -> Iterator[NodeLab]:
    node = NodeLab()
    yield node
    node.close()


def test_every_export_is_probed_or_placed(lab: NodeLab) -> None:
    missing = set(lab.names()) - set(AREAS) - set(NOT_HERE)
    assert not missing, f"lab exports with no hostile case and no reason: {sorted(missing)}"


@pytest.mark.parametrize("area", AREAS)
def test_same_verdict_as_ffn(lab: NodeLab, area: str) -> None:
    """Every call of one lab function: right or refused clearly, and ffn gives that verdict
    too."""
    problems = []
    for case in (c for c in CASES if c.js == area):
        result = js_outcome(lab, case)
        if result not in ("right", "refused clearly"):
            problems.append(f"{case.id}: {result}")
        if case.ffn is not None and not ffn_agrees(case):
            problems.append(f"{case.id}: ffn gives another verdict")
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    node = NodeLab()
    outcomes = [(case, js_outcome(node, case)) for case in CASES]
    node.close()
    print(f"{len(CASES)} calls of the lab's modules:", dict(Counter(r for _, r in outcomes)))
    for case, result in outcomes:
        if result not in ("right", "refused clearly"):
            print(f"  {result}: {case.id}")
    with_ffn = [c for c in CASES if c.ffn is not None]
    differ = [c for c in with_ffn if not ffn_agrees(c)]
    print(f"{len(with_ffn)} with an ffn counterpart; ffn gives another verdict on {len(differ)}")
    for case in differ:
        print(f"  {case.id}")
