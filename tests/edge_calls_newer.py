"""Wrong and edge calls of the parts added last (issue 30): ``ffn.inference``, ``ffn.quantize``,
MixtureOfExperts' DeepSeek-style options (bias, groups, sigmoid scores, scale, shared experts),
``ffn.models`` and ``relu2``.

The oracles are written here: exact fractions and mpmath (expected experts read, the router's
scores, LLaMA's two thirds), plain loops (the experts, via ``ff_oracle``), closed formulas
(bytes, FLOPs, what training keeps) and ml_dtypes' ``float8_e4m3fn`` for E4M3.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import ml_dtypes
import mpmath
import numpy as np

import ffn
from ffn.inference import (
    Accelerator,
    arithmetic_intensity,
    critical_batch,
    decode_bytes,
    decode_flops,
    experts_read,
    saved_per_token,
)
from ffn.quantize import e4m3_value, round_to_e4m3
from tests.edge_calls_api import activations, ff_oracle
from tests.edge_case import F32, F64, Case, array_equals, close, equals, is_close_float
from tests.test_clamped import exact_one_by_one
from tests.test_quantize import exact_absmax

E4M3 = ml_dtypes.float8_e4m3fn

# ---------------------------------------------------------------- ffn.inference


def expected_experts(n: int, k: int, batch: int) -> float:
    """``n (1 - (1 - k/n)**batch)``: exact fractions for small batches, else mpmath with 40
    digits more than ``n`` has."""
    if batch <= 64:
        return float(n * (1 - (1 - Fraction(k, n)) ** batch))
    with mpmath.workdps(40 + len(str(n))):
        return float(n * (1 - (1 - mpmath.mpf(k) / n) ** batch))


def dims(**kw: Any) -> ffn.ModelDims:
    base: dict[str, Any] = {"name": "m", "d_model": 16, "d_ff": 64, "n_layers": 3,
                            "gated": False, "bias": True, "source": "s"}
    return ffn.ModelDims(**(base | kw))


def dense_bytes(d: int, f: int, layers: int, batch: int, size: int) -> int:
    """A plain FFN with biases: every weight once, and x and y of every token."""
    return layers * size * (2 * d * f + f + d + 2 * batch * d)


def moe_bytes(d: int, f: int, layers: int, n: int, k: int, batch: int, size: int) -> float:
    """Router, the experts read (without biases), x and y."""
    return layers * size * (d * n + expected_experts(n, k, batch) * 2 * d * f + 2 * batch * d)


def critical_by_loop(model: ffn.ModelDims, gpu: Accelerator) -> int:
    """The first batch whose FLOPs per byte reach the ridge, counting up."""
    batch = 1
    while Fraction(decode_flops(model, batch)) / Fraction(decode_bytes(model, batch)) < Fraction(
            gpu.peak_flops) / Fraction(gpu.bandwidth):
        batch += 1
    return batch


def inference_cases() -> list[Case]:
    def read(what: str, *args: Any, arg: str = "", words: str = "") -> Case:
        right = None if arg else is_close_float(expected_experts(*args), rel=1e-13)
        return Case(f"inference experts_read {what}", lambda: experts_read(*args), arg, right,
                    words=words)

    gpu = Accelerator("g", 2e12, 1e10, 1e9, "s")  # ridge 200
    moe = dims(gated=False, bias=False, moe=ffn.MoEDims(4, 1))
    plain = dims()

    def acc(**kw: Any) -> Callable[[], object]:
        base: dict[str, Any] = {"name": "g", "peak_flops": 2e12, "bandwidth": 1e10,
                                "memory": 1e9, "source": "s"}
        return lambda: Accelerator(**(base | kw))

    saved = [("relu", False, 110), ("gelu", False, 210), ("relu2", False, 210),
             ("silu", False, 210), ("relu", True, 310), ("gelu", True, 410), ("silu", True, 410)]
    big = dims(d_model=np.int64(2**34), d_ff=4, n_layers=1, bias=False,
               moe=ffn.MoEDims(np.int64(2**30), np.int64(1)))
    return [
        read("(8, 2, 1)", 8, 2, 1), read("(4, 2, 3)", 4, 2, 3), read("(3, 3, 5)", 3, 3, 5),
        read("(1e9, 1, 1)", 10**9, 1, 1), read("(1e12, 1, 1)", 10**12, 1, 1),
        read("(1e17, 1, 1)", 10**17, 1, 1), read("(1e17, 3, 5)", 10**17, 3, 5),
        read("(1e300, 7, 11)", 10**300, 7, 11), read("(2**60, 2, 1e9)", 2**60, 2, 10**9),
        read("(8, 2, 1e400)", 8, 2, 10**400), read("(1e300, 1, 1e305)", 10**300, 1, 10**305),
        read("np.int64", np.int64(8), np.int64(2), np.int64(3)),
        read("batch 0", 8, 2, 0, arg="batch"), read("top_k 9", 8, 9, 1, arg="top_k"),
        read("top_k 2.0", 8, 2.0, 1, arg="top_k"), read("n_experts True", True, 1, 1,
                                                        arg="n_experts"),
        read("batch str", 8, 2, "3", arg="batch"), read("top_k -1", 8, -1, 1, arg="top_k"),
        read("n_experts 1e400", 10**400, 1, 1, arg="n_experts"),
        Case("inference ridge 1e300 / 1e-300", acc(peak_flops=1e300, bandwidth=1e-300),
             "peak_flops"),
        Case("inference ridge 1e-300 / 1e300", acc(peak_flops=1e-300, bandwidth=1e300),
             "bandwidth"),
        Case("inference ridge 200", lambda: acc()().ridge_point, "", equals(200.0)),
        Case("inference peak nan", acc(peak_flops=math.nan), "peak_flops"),
        Case("inference peak str", acc(peak_flops="1e12"), "peak_flops"),
        Case("inference bandwidth 0", acc(bandwidth=0.0), "bandwidth"),
        Case("inference bandwidth -1", acc(bandwidth=-1.0), "bandwidth"),
        Case("inference memory inf", acc(memory=math.inf), "memory"),
        Case("inference name empty", acc(name=""), "name"),
        Case("inference attainable 0", lambda: gpu.attainable(0), "", equals(0.0)),
        Case("inference attainable 1e308", lambda: gpu.attainable(1e308), "", equals(2e12)),
        Case("inference attainable 50", lambda: gpu.attainable(50), "", equals(5e11)),
        Case("inference attainable -1", lambda: gpu.attainable(-1), "intensity"),
        Case("inference attainable nan", lambda: gpu.attainable(math.nan), "intensity"),
        Case("inference attainable True", lambda: gpu.attainable(True), "intensity"),
        *[Case(f"inference saved {act} gated={g}",
               lambda act=act, g=g: saved_per_token(10, 50, act, g), "",
               equals(10 + (n - 10) // 100 * 50)) for act, g, n in saved],
        Case("inference saved tanh", lambda: saved_per_token(10, 50, "tanh"), "activation"),
        Case("inference saved d_model 0", lambda: saved_per_token(0, 50), "d_model"),
        Case("inference saved gated 1", lambda: saved_per_token(10, 50, "relu", 1), "gated"),
        Case("inference saved d_ff 2.0", lambda: saved_per_token(10, 2.0), "d_ff"),
        Case("inference bytes dense", lambda: decode_bytes(plain, 5, 4), "",
             equals(dense_bytes(16, 64, 3, 5, 4))),
        Case("inference bytes dense batch 1e400", lambda: decode_bytes(plain, 10**400), "",
             equals(dense_bytes(16, 64, 3, 10**400, 2))),
        Case("inference bytes moe", lambda: decode_bytes(moe, 3, 2), "",
             is_close_float(moe_bytes(16, 64, 3, 4, 1, 3, 2))),
        Case("inference bytes moe batch 1e400", lambda: decode_bytes(moe, 10**400), "batch"),
        Case("inference bytes moe bytes 1e400", lambda: decode_bytes(moe, 1, 10**400),
             "bytes_per_value"),
        Case("inference bytes np.int64 dims", lambda: decode_bytes(big, 1, 2), "",
             is_close_float(moe_bytes(2**34, 4, 1, 2**30, 1, 1, 2))),
        Case("inference bytes model str", lambda: decode_bytes("GPT-2 small"), "model"),  # type: ignore[arg-type]
        Case("inference bytes batch 0", lambda: decode_bytes(plain, 0), "batch"),
        Case("inference bytes size True", lambda: decode_bytes(plain, 1, True), "bytes_per_value"),
        Case("inference flops batch 1e400", lambda: decode_flops(plain, 10**400), "",
             equals(3 * 4 * 10**400 * 16 * 64)),
        Case("inference intensity dense", lambda: arithmetic_intensity(plain, 7), "",
             is_close_float(float(Fraction(3 * 4 * 7 * 16 * 64, dense_bytes(16, 64, 3, 7, 2))))),
        Case("inference critical dense", lambda: critical_batch(plain, Accelerator(
            "g", 1e12, 1e11, 1e9, "s")), "", equals(critical_by_loop(plain, Accelerator(
                "g", 1e12, 1e11, 1e9, "s")))),
        Case("inference critical moe", lambda: critical_batch(moe, Accelerator(
            "g", 1e12, 1e11, 1e9, "s")), "", equals(critical_by_loop(moe, Accelerator(
                "g", 1e12, 1e11, 1e9, "s")))),
        Case("inference critical unreachable", lambda: critical_batch(plain, gpu),
             "ridge point"),
        Case("inference critical accelerator str", lambda: critical_batch(plain, "H100"),  # type: ignore[arg-type]
             "accelerator"),
        Case("inference critical bytes 0", lambda: critical_batch(plain, gpu, 0),
             "bytes_per_value"),
    ]


# ---------------------------------------------------------------- ffn.quantize

W22 = np.array([[0.5, -1.0], [0.25, 2.0]])
GRID = np.concatenate([np.arange(256, dtype=np.uint8)])  # every bit pattern


def e4m3_by_ml_dtypes(x: np.ndarray) -> np.ndarray:
    """ml_dtypes' rounding, with ffn's saturation at +-448 for the finite values beyond."""
    clipped = np.where(np.isnan(x), x, np.clip(x, -448, 448))
    return clipped.astype(E4M3).astype(x.dtype)


def quantize_cases() -> list[Case]:
    mids = ((e4m3_value(np.arange(1, 127, dtype=np.uint8))
             + e4m3_value(np.arange(0, 126, dtype=np.uint8))) / 2).astype(F32)
    tiny_huge = [(F32, 1e-44), (F32, 1e-40), (F32, 3e38), (F64, 1e-310), (F64, 1e-320),
                 (F64, 1e42), (F64, 1e300), (F64, 1.7e308)]
    q = ffn.quantize_absmax(W22, per="column")

    def absmax(t: type, v: float, fmt: str) -> Case:
        w = (np.array([[1.0, -0.75], [0.3, -0.0625]]) * v).astype(t)
        expected = exact_absmax(w.astype(F64), fmt)
        return Case(f"quantize {fmt} {t.__name__} {v:g}",
                    lambda: ffn.quantize_absmax(w, fmt).dequantize(), "",
                    lambda y: bool(np.allclose(y, expected, rtol=1e-15, atol=448 * 1e-323)
                                   and np.all(np.isfinite(y))))

    def built(what: str, arg: str, **kw: Any) -> Case:
        fields = {"format": q.format, "codes": q.codes, "scale": q.scale} | kw
        return Case(f"quantize Quantized {what}", lambda: ffn.Quantized(**fields), arg)

    return [
        *[absmax(t, v, fmt) for t, v in tiny_huge for fmt in ("int8", "e4m3")],
        Case("quantize e4m3 every code", lambda: e4m3_value(GRID), "",
             lambda y: bool(np.array_equal(y, GRID.view(E4M3).astype(F64), equal_nan=True))),
        Case("quantize round midpoints f32", lambda: round_to_e4m3(mids), "",
             array_equals(e4m3_by_ml_dtypes(mids), F32)),
        Case("quantize round neighbours f32",
             lambda: round_to_e4m3(np.nextafter(mids, F32(np.inf))), "",
             array_equals(e4m3_by_ml_dtypes(np.nextafter(mids, F32(np.inf))), F32)),
        Case("quantize round saturates", lambda: round_to_e4m3([1e6, -1e6, np.inf, -np.inf]),
             "", array_equals([448.0, -448.0, 448.0, -448.0])),
        Case("quantize round nan", lambda: round_to_e4m3(np.nan), "",
             lambda y: bool(np.isnan(y))),
        Case("quantize round str", lambda: round_to_e4m3("a"), "x"),
        Case("quantize round None", lambda: round_to_e4m3(None), "x"),
        Case("quantize e4m3_value floats", lambda: e4m3_value(np.array([1.0])), "codes"),
        Case("quantize e4m3_value int list", lambda: e4m3_value([1]), "codes"),
        Case("quantize format int4", lambda: ffn.quantize_absmax(W22, "int4"), "format"),
        Case("quantize format None", lambda: ffn.quantize_absmax(W22, None), "format"),  # type: ignore[arg-type]
        Case("quantize per channel", lambda: ffn.quantize_absmax(W22, per="channel"), "per"),
        Case("quantize w 1-D", lambda: ffn.quantize_absmax(np.ones(3)), "w"),
        Case("quantize w empty", lambda: ffn.quantize_absmax(np.ones((0, 2))), "w"),
        Case("quantize w nan", lambda: ffn.quantize_absmax([[1.0, np.nan]]), "w"),
        Case("quantize w inf", lambda: ffn.quantize_absmax([[1.0, np.inf]]), "w"),
        Case("quantize w str", lambda: ffn.quantize_absmax([["a"]]), "w"),
        Case("quantize w None", lambda: ffn.quantize_absmax(None), "w"),
        Case("quantize w complex", lambda: ffn.quantize_absmax(np.ones((2, 2), complex)), "w"),
        Case("quantize zeros", lambda: ffn.quantize_absmax(np.zeros((2, 2))).dequantize(), "",
             array_equals(np.zeros((2, 2)))),
        Case("quantize int8 half to even", lambda: ffn.quantize_absmax(
            [[127.0, 2.5, -2.5, 3.5, 0.5]]).codes.tolist(), "", equals([[127, 2, -2, 4, 0]])),
        Case("quantize nbytes column", lambda: ffn.quantize_absmax(np.ones((3, 5)), "e4m3",
                                                                   "column").nbytes, "",
             equals(15 + 8 * 5)),
        built("int4", "format", format="int4"),
        built("format None", "format", format=None),
        built("codes 3.7", "codes", codes=np.array([[3.7, 1.0], [0.0, 2.0]])),
        built("codes nan", "codes", codes=np.array([[np.nan, 1.0], [0.0, 2.0]])),
        built("codes 200", "codes", codes=np.array([[200, 1], [0, 2]])),
        built("codes -128", "codes", codes=np.array([[-128, 1], [0, 2]])),
        built("codes 1-D", "codes", codes=np.array([1, 2])),
        built("codes None", "codes", codes=None),
        built("codes str", "codes", codes=[["a", "b"], ["c", "d"]]),
        built("e4m3 float codes", "codes", format="e4m3", codes=np.ones((2, 2))),
        built("e4m3 codes 256", "codes", format="e4m3", codes=np.full((2, 2), 256)),
        built("scale None", "scale", scale=None),
        built("scale (2, 2)", "scale", scale=np.ones((2, 2))),
        built("scale (2,)", "scale", scale=np.ones(2)),
        built("scale 0", "scale", scale=np.zeros((1, 2))),
        built("scale -1", "scale", scale=-np.ones((1, 2))),
        built("scale inf", "scale", scale=np.full((1, 2), np.inf)),
        built("scale str", "scale", scale="1"),
        Case("quantize Quantized lists",
             lambda: ffn.Quantized("int8", q.codes.tolist(), q.scale.tolist()).dequantize(), "",
             array_equals(q.codes.astype(F64) * q.scale)),
    ]


# ---------------------------------------------------------------- MoE: DeepSeek-style options

DM = 4  # d_model = n_experts: the identity router makes x the logits
_rng = np.random.default_rng(30)
EXP = [{"W1": _rng.normal(size=(DM, 3)), "b1": _rng.normal(size=3),
        "W2": _rng.normal(size=(3, DM)), "b2": _rng.normal(size=DM)} for _ in range(DM)]
SHARED = [{"W1": _rng.normal(size=(DM, 2)), "b1": _rng.normal(size=2),
           "W2": _rng.normal(size=(2, DM)), "b2": _rng.normal(size=DM)}]


def layer(router: object = None, top_k: Any = 2, shared: Any = (), **kw: Any
          ) -> ffn.MixtureOfExperts:
    experts = [ffn.FeedForward(**e) for e in EXP]
    blocks = [ffn.FeedForward(**e) for e in SHARED] if shared == "one" else shared
    return ffn.MixtureOfExperts(np.eye(DM) if router is None else router, experts, top_k,
                                shared_experts=blocks, **kw)


def route_oracle(logits: list[float], top_k: int, score: str = "softmax",
                 bias: list[float] | None = None, n_groups: int = 1, top_groups: int = 1,
                 scale: float = 1.0, normalize: bool = True) -> tuple[list[int], list[float]]:
    """DeepSeek-V3's routing of one row, in mpmath to 50 digits (no underflow, no saturation):
    scores, choice scores with the bias, groups by their two best, the top_k (ties: lower
    index), weights."""
    with mpmath.workdps(50):
        ls = [mpmath.mpf(v) for v in logits]
        if score == "softmax":
            e = [mpmath.exp(v - max(ls)) for v in ls]
            s = [v / mpmath.fsum(e) for v in e]
        else:
            s = [1 / (1 + mpmath.exp(-v)) for v in ls]
        c = [s[i] + (0 if bias is None else mpmath.mpf(bias[i])) for i in range(len(s))]
        size = len(s) // n_groups
        group = [mpmath.fsum(sorted(c[g * size:(g + 1) * size], reverse=True)[:2])
                 for g in range(n_groups)]
        kept = sorted(range(n_groups), key=lambda g: (-group[g], g))[:top_groups]
        allowed = [i for i in range(len(s)) if i // size in kept]
        chosen = sorted(allowed, key=lambda i: (-c[i], i))[:top_k]
        total = mpmath.fsum(s[i] for i in chosen) if normalize else 1
        return chosen, [float(scale * s[i] / total) for i in chosen]


def moe_y_oracle(x: np.ndarray, chosen: list[int], weights: list[float],
                 shared: bool = False) -> np.ndarray:
    y = sum(w * ff_oracle(EXP[i], x[None])["y"][0] for i, w in zip(chosen, weights, strict=True))
    return np.asarray(y + (ff_oracle(SHARED[0], x[None])["y"][0] if shared else 0.0))


def routes_as(logits: list[float], top_k: int = 2, **kw: Any) -> Callable[[Any], bool]:
    chosen, weights = route_oracle(logits, top_k, **kw)
    return lambda r: (r[1][0].tolist() == chosen
                      and bool(np.allclose(r[2][0], weights, rtol=1e-13, atol=0)))


def lb_loss_oracle(logits: list[float], top_k: int, score: str) -> float:
    """One row: n_experts * sum_i f_i * q_i, q the scores over their sum (mpmath)."""
    chosen, _ = route_oracle(logits, top_k, score)
    with mpmath.workdps(50):
        ls = [mpmath.mpf(v) for v in logits]
        s = ([mpmath.exp(v - max(ls)) for v in ls] if score == "softmax"
             else [1 / (1 + mpmath.exp(-v)) for v in ls])
        return float(len(ls) * mpmath.fsum(s[i] / mpmath.fsum(s) for i in chosen))


def deepseek_cases() -> list[Case]:
    cases = []
    rows = {"near -800": [-810.0, -800.0, -820.0, -790.0],
            "near -1e4": [-1e4, -1e4 + 30, -1e4 + 40, -2e4],
            "40 and 41": [40.0, 41.0, 39.0, -5.0], "gaps 1e-20": [1e-20, 0.0, -1e-20, 2e-20],
            "normal": [0.3, -1.2, 0.8, 0.1]}
    for score in ("sigmoid", "softmax"):
        for what, logits in rows.items():
            x = np.array([logits])
            chosen, weights = route_oracle(logits, 2, score)
            cases += [
                Case(f"deepseek {score} route {what}", lambda x=x, s=score: layer(
                    score=s).route(x), "", routes_as(logits, score=score)),
                Case(f"deepseek {score} forward {what}", lambda x=x, s=score: layer(
                    score=s)(x), "x", close(moe_y_oracle(x[0], chosen, weights)[None], F64,
                                            scaled=True)),
                Case(f"deepseek {score} loss {what}", lambda x=x, s=score: layer(
                    score=s).load_balancing_loss(x), "x",
                     is_close_float(lb_loss_oracle(logits, 2, score), rel=1e-12)),
            ]
    normal = [0.3, -1.2, 0.8, 0.1]
    xn = np.array([normal])
    bias = [0.5, 0.0, -0.4, 0.2]
    cases += [
        Case("deepseek bias route", lambda: layer(score="sigmoid", bias=np.array(bias)).route(
            xn), "", routes_as(normal, score="sigmoid", bias=bias)),
        Case("deepseek bias list", lambda: layer(score="sigmoid", bias=bias).route(xn), "",
             routes_as(normal, score="sigmoid", bias=bias)),
        Case("deepseek bias saturated tie", lambda: layer(
            top_k=1, score="sigmoid", bias=np.zeros(DM)).route(np.array([[40.0, 41, 0, 0]])),
             "", lambda r: r[1].tolist() == [[0]]),  # documented: p + bias saturates, ties
        Case("deepseek groups route", lambda: layer(
            top_k=1, score="sigmoid", n_groups=2, top_groups=1).route(
                np.array([[-800.0, -801, -790, -795]])), "",
             routes_as([-800.0, -801, -790, -795], 1, score="sigmoid", n_groups=2)),
        Case("deepseek groups with bias", lambda: layer(
            top_k=2, score="sigmoid", bias=np.array(bias), n_groups=2, top_groups=1).route(xn),
             "", routes_as(normal, 2, score="sigmoid", bias=bias, n_groups=2)),
        Case("deepseek scale 2.5", lambda: layer(score="sigmoid", scale=2.5).route(xn), "",
             routes_as(normal, score="sigmoid", scale=2.5)),
        Case("deepseek scale np.float32", lambda: layer(scale=np.float32(0.5)).route(xn), "",
             routes_as(normal, scale=0.5)),
        Case("deepseek raw sigmoid", lambda: layer(score="sigmoid", normalize=False).route(
            xn), "", routes_as(normal, score="sigmoid", normalize=False)),
        Case("deepseek raw sigmoid -800", lambda: layer(
            score="sigmoid", normalize=False).route(np.array([[-810.0, -800, -820, -790]])),
             "", lambda r: r[1].tolist() == [[3, 1]] and r[2].tolist() == [[0.0, 0.0]]),
        Case("deepseek shared forward", lambda: layer(shared="one")(xn), "x",
             close(moe_y_oracle(xn[0], *route_oracle(normal, 2), shared=True)[None], F64,
                   scaled=True)),
        Case("deepseek bias nan", lambda: layer(bias=[np.nan, 0, 0, 0]), "bias"),
        Case("deepseek bias short", lambda: layer(bias=np.zeros(3)), "bias"),
        Case("deepseek bias float32", lambda: layer(bias=np.zeros(DM, F32)), "bias"),
        Case("deepseek bias str", lambda: layer(bias="0"), "bias"),
        Case("deepseek n_groups 3", lambda: layer(n_groups=3), "n_groups"),
        Case("deepseek n_groups 4", lambda: layer(n_groups=4), "n_groups"),
        Case("deepseek n_groups True", lambda: layer(n_groups=True), "n_groups"),
        Case("deepseek top_groups 3", lambda: layer(n_groups=2, top_groups=3), "top_groups"),
        Case("deepseek top_groups 0", lambda: layer(n_groups=2, top_groups=0), "top_groups"),
        Case("deepseek top_k beyond groups", lambda: layer(top_k=3, n_groups=2, top_groups=1),
             "top_k"),
        Case("deepseek score relu", lambda: layer(score="relu"), "score"),
        Case("deepseek score None", lambda: layer(score=None), "score"),
        Case("deepseek scale 0", lambda: layer(scale=0.0), "scale"),
        Case("deepseek scale -1", lambda: layer(scale=-1.0), "scale"),
        Case("deepseek scale nan", lambda: layer(scale=math.nan), "scale"),
        Case("deepseek scale 1e7", lambda: layer(scale=1e7), "scale"),
        Case("deepseek scale True", lambda: layer(scale=True), "scale"),
        Case("deepseek shared not a list", lambda: layer(shared=ffn.FeedForward(**SHARED[0])),
             "shared_experts"),
        Case("deepseek shared str", lambda: layer(shared=["a"]), "shared_experts"),
        Case("deepseek shared d_model", lambda: layer(shared=[ffn.FeedForward.random(3, 2)]),
             "shared_experts"),
        Case("deepseek shared dtype", lambda: layer(shared=[ffn.FeedForward.random(
            DM, 2, dtype=F32)]), "shared_experts"),
    ]
    return cases


# ---------------------------------------------------------------- ffn.models and relu2


def models_cases() -> list[Case]:
    ld = ffn.llama_d_ff
    first = 3 * 2**49 + 1  # where Meta's float two thirds first differs (the docstring)
    moe = {"moe": ffn.MoEDims(8, 2)}
    is_int = {8: lambda v: type(v) is int and v == 8, 2: lambda v: type(v) is int and v == 2}

    return [
        Case("models np.int64 n_experts", lambda: ffn.MoEDims(np.int64(8), 2).n_experts,
             "n_experts", is_int[8]),
        Case("models np.int64 top_k", lambda: ffn.MoEDims(8, np.int64(2)).top_k, "top_k",
             is_int[2]),
        Case("models np.int64 multiple_of", lambda: dims(
            d_ff=ffn.LlamaWidth(np.int64(64)), gated=True).d_ff.multiple_of,
             "multiple_of", lambda v: type(v) is int and v == 64),
        Case("models n_experts 0", lambda: ffn.MoEDims(0, 1), "n_experts"),
        Case("models top_k 9 of 8", lambda: ffn.MoEDims(8, np.int64(9)), "top_k"),
        Case("models shared d_ff 0", lambda: ffn.SharedExperts(0), "d_ff"),
        Case("models dense layers beyond n_layers",
             lambda: dims(moe=ffn.MoEDims(8, 2, dense=ffn.DenseLayers(4, 8))), "first"),
        Case("models multiplier 0", lambda: ffn.LlamaWidth(256, 0.0), "ffn_dim_multiplier"),
        Case("models kv_dim 0", lambda: dims(kv_dim=0), "kv_dim"),
        Case("models gated 'false'", lambda: dims(gated="false"), "gated"),
        Case("models moe total", lambda: dims(**moe, bias=False, vocab_size=10).ffn_parameters(),
             "", equals(3 * (8 * 2 * 16 * 64 + 16 * 8))),
        Case("models moe active", lambda: dims(**moe, bias=False).ffn_parameters(active=True),
             "", equals(3 * (2 * 2 * 16 * 64 + 16 * 8))),
        Case("models llama 10**400 with multiplier", lambda: ld(10**400, 256, 1.3), "d_model"),
        Case("models llama 10**400", lambda: ld(10**400, 1), "",
             equals(math.floor(Fraction(8 * 10**400, 3)))),
        Case("models llama 3*2**49+1", lambda: ld(first, 1), "",
             equals(math.floor(Fraction(8 * first, 3)))),
        Case("models llama multiple_of 0", lambda: ld(64, 0), "multiple_of"),
        Case("models llama multiplier 1e308", lambda: ld(4096, 256, 1e308),
             "ffn_dim_multiplier"),
    ]


def relu2_cases() -> list[Case]:
    def right(name: str, x: Any, dtype: type = F64) -> Callable[[Any], bool]:
        """mpmath's value rounded to ``dtype`` (float32: 1e20**2 is inf, as it should be)."""
        exact = activations(name, np.asarray(x, F64).astype(dtype))
        with np.errstate(over="ignore"):
            return close(exact.astype(dtype), dtype)

    values = [-3.0, -1e-300, -0.0, 0.0, 5e-324, 0.5, 3.0, 1e154, 1e200, np.inf, -np.inf, np.nan]
    f32 = np.array([-3.0, 0.0, 1e-45, 0.5, 3.0, 1e19, 1e20, np.inf, np.nan], F32)
    x = np.random.default_rng(3).normal(size=(2, 3))
    w = {"W1": np.random.default_rng(4).normal(size=(3, 5)), "b1": np.zeros(5),
         "W2": np.random.default_rng(5).normal(size=(5, 3)), "b2": np.zeros(3)}
    return [
        Case("relu2 f64", lambda: ffn.relu2(values), "x", right("relu2", values)),
        Case("relu2 f32", lambda: ffn.relu2(f32), "x", right("relu2", f32, F32)),
        Case("relu2_grad f64", lambda: ffn.relu2_grad(values), "x", right("relu2_grad", values)),
        Case("relu2_grad f32", lambda: ffn.relu2_grad(f32), "x", right("relu2_grad", f32, F32)),
        Case("relu2 fast f64", lambda: ffn.fast.relu2(values), "x", right("relu2", values)),
        Case("relu2 fast_grad f64", lambda: ffn.fast.relu2_grad(values), "x",
             right("relu2_grad", values)),
        Case("relu2 str", lambda: ffn.relu2("3"), "x"),
        Case("relu2 None", lambda: ffn.relu2(None), "x"),
        Case("relu2 list of a list", lambda: ffn.relu2([2]), "x", array_equals([4.0])),
        Case("relu2 FF forward", lambda: ffn.FeedForward(**w, activation="relu2")(x), "x",
             close(ff_oracle(w, x, "relu2")["y"], F64, scaled=True)),
        Case("relu2 fast FF forward", lambda: ffn.fast.FeedForward(**w, activation="relu2")(x),
             "x", close(ff_oracle(w, x, "relu2")["y"], F64, scaled=True)),
    ]


# ---------------------------------------------------------------- issue 39, items 9 to 14


def tanh_gelu_grad_exact(x: float) -> float:
    """d/dx [x (1 + tanh z) / 2], z = sqrt(2/pi) (x + 0.044715 x**3), in mpmath (50 digits)."""
    with mpmath.workdps(50):
        v, k, c = mpmath.mpf(x), mpmath.sqrt(2 / mpmath.pi), mpmath.mpf("0.044715")
        t = mpmath.tanh(k * (v + c * v**3))
        return float((1 + t) / 2 + v * (1 - t * t) / 2 * k * (1 + 3 * c * v * v))


def issue39_cases() -> list[Case]:
    one = np.ones((1, 1), F32)

    def clamped(alpha: float, x: float) -> Case:
        def call() -> tuple[float, float]:
            block = ffn.ClampedSwiGLU(one, one, one, alpha=alpha)
            y = block(np.array([[x]], F32))
            return float(y[0, 0]), float(block.backward(np.ones((1, 1), F32))[0, 0])

        y, gate_term, up_term = exact_one_by_one(float(np.float32(x)), alpha)
        want = float(y), float(gate_term + up_term)
        return Case(f"issue39 clamped float32 alpha {alpha:g} x {x:g}", call, "",
                    lambda r: all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-30)
                                  for a, b in zip(r, want, strict=True)))

    def rms(eps: float, row: list[float]) -> Case:
        x = np.array([row], F32)
        ms = sum(Fraction(float(v)) ** 2 for v in x[0]) / 4 + Fraction(eps)
        with mpmath.workdps(50):
            want = [float(mpmath.mpf(float(v)) / mpmath.sqrt(mpmath.mpf(ms.numerator)
                                                             / ms.denominator)) for v in x[0]]
        return Case(f"issue39 rmsnorm float32 eps {eps:g} row {row[0]:g}",
                    lambda: ffn.RMSNorm(4, eps=eps, dtype=F32)(x), "", close(np.array([want]), F32))

    gpt2, oss = ffn.get_model("GPT-2 small"), ffn.get_model("gpt-oss-120b")
    x = np.array([-5.41, -3.0, -0.7518, -0.5, 2.0], F32)
    grad_want = np.array([tanh_gelu_grad_exact(v) for v in x.astype(F64).tolist()])
    return [
        rms(1e-50, [0.0, 0.0, 0.0, 0.0]), rms(1e39, [1e19, -1e19, 5e18, 2.5e18]),
        rms(1e-70, [1e-36, 0.0, -2e-36, 3e-36]),
        Case("issue39 rmsnorm float32 eps 1e-80", lambda: ffn.RMSNorm(4, eps=1e-80, dtype=F32),
             "eps", words="float32"),
        Case("issue39 layernorm float32 eps 1e78", lambda: ffn.LayerNorm(4, eps=1e78, dtype=F32),
             "eps", words="float32"),
        clamped(1e39, 0.0), clamped(1e39, -3.0), clamped(1e-50, 5.0), clamped(1e308, 2.0),
        clamped(1e308, -2.0),
        Case("issue39 clamped from_fused bias width", lambda: ffn.ClampedSwiGLU.from_fused(
            np.ones((4, 6)), np.ones(8), np.ones((3, 4)), None), "gate_up_bias"),
        Case("issue39 intensity batch 1e300", lambda: arithmetic_intensity(oss, 10**300), "",
             is_close_float(17344.0, rel=1e-15)),
        Case("issue39 bytes size 1/10**400", lambda: decode_bytes(gpt2, 1, Fraction(1, 10**400)),
             "bytes_per_value", words="2.2e-308"),
        Case("issue39 intensity size 1e-320", lambda: arithmetic_intensity(gpt2, 1, 1e-320),
             "bytes_per_value", words="2.2e-308"),
        Case("issue39 critical size 1e-300", lambda: critical_batch(oss, ffn.H100_SXM, 1e-300),
             "", equals(1)),
        Case("issue39 head attention heads -1", lambda: ffn.counting.head_attention_parameters(
            2880, -1, 8, 64), "n_heads"),
        Case("issue39 head attention heads 4.5", lambda: ffn.counting.head_attention_parameters(
            2880, 4.5, 8, 64), "n_heads"),  # type: ignore[arg-type]
        Case("issue39 deltanet conv -16", lambda: ffn.counting.gated_deltanet_parameters(
            2048, 16, 32, 128, 128, -16), "conv_kernel"),
        Case("issue39 tanh gelu grad float32", lambda: ffn.gelu_grad(x, approximate="tanh"), "",
             close(grad_want, F32)),
        Case("issue39 fast tanh gelu grad float32",
             lambda: ffn.fast.gelu_grad(x, approximate="tanh"), "", close(grad_want, F32)),
    ]


def newer_cases() -> list[Case]:
    return [*inference_cases(), *quantize_cases(), *deepseek_cases(), *models_cases(),
            *relu2_cases(), *issue39_cases()]
