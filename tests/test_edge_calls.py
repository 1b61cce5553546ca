"""Many wrong and edge calls of the public ``ffn`` API (issues 26 and 30).

Each call must give the right answer (checked against an oracle written here: exact fractions
for LayerNorm, mpmath and plain loops in ``tests/edge_calls_api.py`` and
``tests/edge_calls_newer.py`` for the rest) or a
TypeError/ValueError raised by ffn whose message names the argument (a RuntimeError, KeyError
or FloatingPointError where ffn documents one). ``python -m tests.test_edge_calls`` prints how
many calls give each outcome; a case with a ``known`` problem left unfixed is a strict xfail.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import ffn
from tests.edge_calls_api import api_cases
from tests.edge_calls_newer import newer_cases
from tests.edge_case import F32, F64, Case, array_equals, equals, outcome

# ---------------------------------------------------------------- oracles


def layer_norm_exact(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                     eps: float) -> np.ndarray:
    """LayerNorm row by row in exact fractions (a 60-digit square root); NaN for 0 / 0."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.float64)
    out = np.full(rows.shape, np.nan)
    with localcontext() as ctx:
        ctx.prec = 60
        for i, row in enumerate(rows):
            if not np.isfinite(row).all():
                continue  # NaN and inf propagate: the row is NaN
            exact = [Fraction(float(v)) for v in row]
            mean = sum(exact) / len(exact)
            var = sum((v - mean) ** 2 for v in exact) / len(exact) + Fraction(eps)
            std = (Decimal(var.numerator) / Decimal(var.denominator)).sqrt()
            if std != 0:
                out[i] = [float((Decimal((v - mean).numerator) / Decimal((v - mean).denominator))
                                / std * Decimal(float(g)) + Decimal(float(b)))
                          for v, g, b in zip(exact, gamma, beta, strict=True)]
    return out.reshape(x.shape)


def close_to(expected: np.ndarray, dtype: type) -> Callable[[Any], bool]:
    """Same shape and dtype, NaN where expected, else within a few roundings of ``dtype``."""

    def check(y: Any) -> bool:
        if not isinstance(y, np.ndarray) or y.shape != expected.shape or y.dtype != dtype:
            return False
        if not (np.isnan(y) == np.isnan(expected)).all():
            return False
        scale = np.abs(expected[~np.isnan(expected)]).max(initial=1.0)
        tol = (1e-5 if dtype == F32 else 1e-12) * scale
        return bool(np.all(np.abs(y[~np.isnan(y)] - expected[~np.isnan(expected)]) <= tol))

    return check


def norm_case(id: str, x: object, dtype: type = F64, eps: float = 1e-5, d: int = 4) -> Case:
    """LayerNorm(d, eps) with a fixed gamma and beta on ``x``, against the exact oracle."""
    gamma = np.linspace(0.5, 2.0, d).astype(dtype)
    beta = np.linspace(-1.0, 1.0, d).astype(dtype)
    cast = np.asarray(x, dtype=np.float64).astype(dtype)
    return Case(id, lambda: ffn.LayerNorm(d, eps, gamma, beta)(x), "x",
                close_to(layer_norm_exact(cast, gamma, beta, eps), dtype))


def post_norm_case(id: str, x: np.ndarray) -> Case:
    """A post-norm Sublayer whose FFN outputs 0: it is LayerNorm(x)."""
    d, dtype = x.shape[-1], x.dtype.type
    block = ffn.FeedForward(np.ones((d, 2 * d), dtype), np.zeros(2 * d, dtype),
                            np.zeros((2 * d, d), dtype), np.zeros(d, dtype))
    beta = np.linspace(-1.0, 1.0, d).astype(dtype)
    norm = ffn.LayerNorm(d, beta=beta)
    return Case(id, lambda: ffn.Sublayer(block, norm, "post")(x), "x",
                close_to(layer_norm_exact(x, np.ones(d), beta, 1e-5), dtype))


def dims_total(d: int, f: int, layers: int, vocab: int, other: int = 0) -> int:
    """A GPT-2-like model's parameters by the closed formula (biases, tied head, LayerNorm)."""
    ffn_part = layers * (2 * d * f + f + d)
    attention = layers * (4 * d * d + 4 * d)
    return ffn_part + attention + vocab * d + (2 * layers + 1) * 2 * d + other


# ---------------------------------------------------------------- the calls

ones4 = np.ones((2, 4))


def layer_norm_cases() -> list[Case]:
    def build(**kw: object) -> Callable[[], object]:
        return lambda: ffn.LayerNorm(**({"d_model": 4} | kw))(ones4)  # type: ignore[arg-type]

    equal_rows = [(F32, v) for v in (1e20, 7.4e19, 3e38, -3.4e38, 1e-30, 1e-45)]
    equal_rows += [(F64, v) for v in (1.7e159, 1e300, 1.79e308, -1e200, 1e-300, 5e-324)]
    cases = [norm_case(f"LN equal {t.__name__} {v:g}", np.full((2, 4), v, t), t)
             for t, v in equal_rows]
    cases += [norm_case(f"LN equal eps={eps:g} {t.__name__} {v:g}", np.full((1, 4), v, t), t,
                        eps=eps) for t, v, eps in [(F32, 3e38, 1e-12), (F64, 1e300, 1e-30)]]
    tiny = [(F32, 1e-30), (F32, 1e-38), (F32, 1e-44), (F64, 1e-200), (F64, 1e-310)]
    cases += [norm_case(f"LN eps=0 distinct {t.__name__} {v:g}",
                        np.array([[1, 2, 3, 5]], t) * t(v), t, eps=0.0) for t, v in tiny]
    cases += [norm_case(f"LN eps=1e-5 distinct {t.__name__} {v:g}",
                        np.array([[1, 2, 3, 5]], t) * t(v), t) for t, v in tiny]
    huge = [(F32, 3e38), (F32, 1e20), (F64, 1e300), (F64, 1.7e308)]
    cases += [norm_case(f"LN distinct {t.__name__} {v:g}",
                        np.array([[1, -1, -1, 0.5]], t) * t(v), t) for t, v in huge]
    cases += [
        norm_case("LN mixed scales f32", np.array([[3e38, 1e-38, -2e-45, 0]], F32), F32),
        norm_case("LN normal f64", np.random.default_rng(0).normal(3, 2, (3, 4))),
        norm_case("LN normal f32", np.random.default_rng(0).normal(3, 2, (3, 4)), F32),
        norm_case("LN equal eps=0 (0/0)", np.full((1, 4), 7.0), eps=0.0),
        norm_case("LN nan row", np.array([[np.nan, 1, 2, 3], [1, 2, 3, 4]])),
        norm_case("LN inf row", np.array([[np.inf, 1, 2, 3], [1, 2, 3, 4]])),
        norm_case("LN empty rows", np.ones((0, 4))),
        norm_case("LN 1-D", np.arange(4.0)),
        norm_case("LN 3-D", np.arange(24.0).reshape(2, 3, 4)),
        norm_case("LN bools", np.array([[True, False, True, True]])),
        norm_case("LN ints", np.array([[1, 2, 3, 4]])),
        norm_case("LN int64 max", np.full((1, 4), np.iinfo(np.int64).max)),
        Case("LN huge python ints", lambda: ffn.LayerNorm(4)([[2**70] * 4]), "x",
             array_equals([[0.0] * 4]), refusable=True),
        Case("LN ints too large for a float", lambda: ffn.LayerNorm(4)([[10**400] * 4]), "x",
             words="too large"),
        Case("LN 0-d", lambda: ffn.LayerNorm(4)(1.0), "x"),
        Case("LN width", lambda: ffn.LayerNorm(4)(np.ones((2, 3))), "x"),
        Case("LN None", lambda: ffn.LayerNorm(4)(None), "x"),
        Case("LN str", lambda: ffn.LayerNorm(4)("abcd"), "x"),
        Case("LN complex", lambda: ffn.LayerNorm(4)(np.ones((1, 4), complex)), "x"),
        Case("LN masked", lambda: ffn.LayerNorm(4)(np.ma.masked_array(ones4)), "x"),
        Case("LN d_model 0", build(d_model=0), "d_model"),
        Case("LN d_model True", build(d_model=True), "d_model"),
        Case("LN d_model 4.0", build(d_model=4.0), "d_model"),
        Case("LN d_model np.int64", build(d_model=np.int64(4)), "d_model",
             array_equals([[0.0] * 4] * 2)),
        Case("LN eps nan", build(eps=math.nan), "eps"),
        Case("LN eps -1", build(eps=-1), "eps"),
        Case("LN eps True", build(eps=True), "eps"),
        Case("LN eps str", build(eps="1e-5"), "eps"),
        Case("LN eps huge int", build(eps=2**1100), "eps"),
        Case("LN eps np.float32", build(eps=np.float32(1e-5)), "eps",
             array_equals([[0.0] * 4] * 2)),
        Case("LN dtype float16", build(dtype=np.float16), "dtype"),
        Case("LN dtype str", build(dtype="float32"), "dtype",
             array_equals([[0.0] * 4] * 2, F32)),
        Case("LN gamma shape", build(gamma=np.ones(3)), "gamma"),
        Case("LN beta complex", build(beta=np.ones(4, complex)), "beta"),
    ]
    return cases


def sublayer_cases() -> list[Case]:
    return [
        post_norm_case("post-norm equal f32 1e20", np.full((2, 4), 1e20, F32)),
        post_norm_case("post-norm equal f64 1e300", np.full((2, 4), 1e300, F64)),
        post_norm_case("post-norm normal f64", np.random.default_rng(1).normal(size=(2, 4))),
        Case("sublayer dropout huge int",
             lambda: ffn.Sublayer(ffn.FeedForward(np.ones((4, 8)), None, np.ones((8, 4)), None),
                                  ffn.LayerNorm(4), dropout=2**1100), "dropout"),
    ]


def gelu_cases() -> list[Case]:
    big = float(2**70)
    return [
        Case("gelu 2**70", lambda: ffn.gelu(2**70), "x", array_equals(big), words="too large",
             refusable=True),
        Case("gelu [2**70, -2**70]", lambda: ffn.gelu([2**70, -2**70]), "x",
             array_equals([big, 0.0]), words="too large", refusable=True),
        Case("gelu -2**64", lambda: ffn.gelu(-(2**64)), "x", array_equals(-0.0),
             words="too large", refusable=True),
        Case("gelu 10**400", lambda: ffn.gelu(10**400), "x", words="too large"),
        Case("gelu [1, 10**400]", lambda: ffn.gelu([1, 10**400]), "x", words="too large"),
        Case("gelu_grad 2**70", lambda: ffn.gelu_grad(2**70), "x", array_equals(1.0),
             words="too large", refusable=True),
        Case("gelu np.int64", lambda: ffn.gelu(np.int64(3)), "x",
             lambda y: abs(float(y) - 3 * 0.9986501019683699) < 1e-15),
        Case("gelu uint64 max", lambda: ffn.gelu(np.uint64(2**64 - 1)), "x",
             array_equals(float(2**64))),
        Case("gelu bool", lambda: ffn.gelu(True), "x", lambda y: abs(float(y) - 0.8413447460685429)
             < 1e-15),
        Case("gelu 0-d", lambda: ffn.gelu(np.float32(0.0)), "x", array_equals(0.0, F32)),
        Case("gelu empty", lambda: ffn.gelu([]), "x", array_equals([])),
        Case("gelu nan", lambda: ffn.gelu(np.nan), "x", lambda y: bool(np.isnan(y))),
        Case("gelu inf", lambda: ffn.gelu([np.inf, -np.inf]), "x", array_equals([np.inf, 0.0])),
        Case("gelu float16", lambda: ffn.gelu(np.float16(1.0)), "x",
             lambda y: y.dtype == F64 and abs(float(y) - 0.8413447460685429) < 1e-15),
        Case("gelu complex", lambda: ffn.gelu(1 + 2j), "x"),
        Case("gelu masked", lambda: ffn.gelu(np.ma.masked_array([1.0], [True])), "x"),
        Case("gelu str", lambda: ffn.gelu("1.0"), "x"),
        Case("gelu None", lambda: ffn.gelu(None), "x"),
        Case("gelu object None", lambda: ffn.gelu(np.array([1.0, None])), "x"),
        Case("gelu ragged", lambda: ffn.gelu([[1.0], [1.0, 2.0]]), "x"),
        Case("gelu approximate True", lambda: ffn.gelu(1.0, approximate=True), "approximate"),
        Case("gelu approximate TANH", lambda: ffn.gelu(1.0, approximate="TANH"), "approximate"),
    ]


def discrepancies_cases() -> list[Case]:
    def call(*args: object, **kw: object) -> Callable[[], object]:
        return lambda: ffn.discrepancies(*args, **kw)  # type: ignore[arg-type]

    one = ffn.Discrepancy
    masked = np.ma.masked_array([0.5, 9.0], [False, True])
    return [
        Case("disc complex published", call(np.array([1 + 1j]), [1.0]), "published"),
        Case("disc complex computed", call([1.0], np.array([1 + 1j])), "computed"),
        Case("disc complex both", call(np.array([1 + 1j]), np.array([1 + 5j])), "published"),
        Case("disc masked published", call(masked, [0.5, 0.5]), "published"),
        Case("disc masked computed", call([0.5, 0.5], masked), "computed"),
        Case("disc 0-d equal", call(0.5, 0.5), "published", equals([])),
        Case("disc 0-d wrong", call(0.5, 0.6), "published", equals([one((), 0.5, 0.6)])),
        Case("disc np 0-d", call(np.float64(0.5), np.float32(0.6)), "published",
             equals([one((), 0.5, float(np.float32(0.6)))])),
        Case("disc decimals True", call([1.0], [1.0], decimals=True), "decimals"),
        Case("disc decimals False", call([1.0], [1.0], decimals=False), "decimals"),
        Case("disc decimals np.int64", call([0.6], [0.64], decimals=np.int64(1)), "decimals",
             equals([])),
        Case("disc decimals -1", call([1.0], [1.0], decimals=-1), "decimals"),
        Case("disc decimals 2.0", call([1.0], [1.0], decimals=2.0), "decimals"),
        Case("disc decimals str", call([1.0], [1.0], decimals="3"), "decimals"),
        Case("disc decimals None", call([1.0], [1.0], decimals=None), "decimals"),
        Case("disc decimals huge", call([1.0], [1.5], decimals=10**400), "decimals",
             equals([one((0,), 1.0, 1.5)]), refusable=True),
        Case("disc units True", call([1.0], [1.0], units=True), "units"),
        Case("disc units np.float32", call([0.6], [0.64], decimals=1, units=np.float32(0.5)),
             "units", equals([])),
        Case("disc units np.int64", call([0.6], [0.68], decimals=1, units=np.int64(1)),
             "units", equals([])),
        Case("disc units nan", call([1.0], [1.0], units=math.nan), "units"),
        Case("disc units -1", call([1.0], [1.0], units=-1), "units"),
        Case("disc units str", call([1.0], [1.0], units="0.5"), "units"),
        Case("disc units huge int", call([1.0], [1.0], units=2**1100), "units"),
        Case("disc published None", call(None, None), "published"),
        Case("disc published str", call("0.5", [0.5]), "published"),
        Case("disc published str list", call(["0.5"], [0.5]), "published"),
        Case("disc computed object", call([0.5], np.array([None])), "computed"),
        Case("disc ragged", call([[0.5], [0.5, 1]], [0.5]), "published"),
        Case("disc shapes", call([1.0, 2.0], [1.0]), "published"),
        Case("disc broadcastable shapes", call([[1.0]], [1.0]), "published"),
        Case("disc empty", call([], []), "published", equals([])),
        Case("disc nan", call([np.nan], [np.nan]), "published",
             lambda r: len(r) == 1 and r[0].where == (0,)),
        Case("disc inf", call([np.inf], [np.inf]), "published",
             lambda r: len(r) == 1 and r[0].where == (0,)),
        Case("disc bools", call([True, False], [1.0, 0.0004]), "published", equals([])),
        Case("disc ints", call([1, 2], [1.0004, 2.0006]), "published",
             equals([one((1,), 2.0, 2.0006)])),
        Case("disc huge ints", call([2**70], [float(2**70)]), "published", equals([]),
             refusable=True),
        Case("disc float32", call(np.float32([0.602]), np.float32([0.60194])), "published",
             equals([])),
        Case("disc 2-D index", call([[0.1, 0.2]], [[0.1, 0.3]]), "published",
             equals([one((0, 1), 0.2, 0.3)])),
    ]


def model_dims_cases() -> list[Case]:
    base: dict[str, object] = {"name": "m", "d_model": 8, "d_ff": 32, "n_layers": 2,
                               "gated": False, "bias": True, "source": "s", "vocab_size": 100}

    def make(**kw: object) -> Callable[[], object]:
        return lambda: ffn.ModelDims(**(base | kw))  # type: ignore[arg-type]

    def total_is(expected: int) -> Callable[[Any], bool]:
        return lambda m: type(m.total_parameters()) is int and m.total_parameters() == expected

    return [
        Case("dims plain", make(), "", total_is(dims_total(8, 32, 2, 100))),
        Case("dims other negative", make(other=-(10**9)), "other"),
        Case("dims other -1", make(other=-1), "other"),
        Case("dims other str", make(other="a"), "other"),
        Case("dims other None", make(other=None), "other"),
        Case("dims other True", make(other=True), "other"),
        Case("dims other 1.5", make(other=1.5), "other"),
        Case("dims other np.int64", make(other=np.int64(5)), "other",
             total_is(dims_total(8, 32, 2, 100, 5))),
        Case("dims other huge", make(other=2**70), "other",
             total_is(dims_total(8, 32, 2, 100, 2**70))),
        Case("dims source None", make(source=None), "source"),
        Case("dims source empty", make(source=""), "source"),
        Case("dims source int", make(source=5), "source"),
        Case("dims name None", make(name=None), "name"),
        Case("dims d_model 0", make(d_model=0), "d_model"),
        Case("dims d_model True", make(d_model=True), "d_model"),
        Case("dims d_model 8.0", make(d_model=8.0), "d_model"),
        Case("dims d_model np.int64", make(d_model=np.int64(8)), "d_model",
             total_is(dims_total(8, 32, 2, 100))),
        Case("dims np.int64 overflow", make(d_model=np.int64(2**40), vocab_size=np.int64(2**40)),
             "d_model", total_is(dims_total(2**40, 32, 2, 2**40))),
        Case("dims n_layers -1", make(n_layers=-1), "n_layers"),
        Case("dims gated 1", make(gated=1), "gated"),
        Case("dims gated np.bool_", make(gated=np.bool_(False)), "gated",
             total_is(dims_total(8, 32, 2, 100))),
        Case("dims norm batch", make(norm="batch"), "norm"),
        Case("dims vocab 0", make(vocab_size=0), "vocab_size"),
        Case("dims kv_dim str", make(kv_dim="8"), "kv_dim"),
        Case("dims moe a dict", make(moe={"n_experts": 4, "top_k": 1}), "moe"),
        Case("dims top_k > n_experts", lambda: ffn.MoEDims(4, 5), "top_k"),
        Case("dims tied_head None", make(tied_head=None), "tied_head"),
    ]


CASES = [*layer_norm_cases(), *sublayer_cases(), *gelu_cases(), *discrepancies_cases(),
         *model_dims_cases(), *api_cases(), *newer_cases()]


def _area(case: Case) -> str:
    return case.id.split()[0]  # "gelu", "FF", "fast", "dims", ...: the API under test


AREAS = sorted({_area(c) for c in CASES})


@pytest.mark.parametrize("area", AREAS)
def test_right_answer_or_clear_error(area: str) -> None:
    """Every call of one area (one test each, not one per call: 1,580 items would cost more in
    collection and reporting than the calls themselves); a known failure must still fail."""
    problems = []
    for case in (c for c in CASES if _area(c) == area):
        result = outcome(case)
        ok = result in ("right", "clear error")
        if ok == bool(case.known):  # a wrong answer, or a known one that is fixed now
            problems.append(f"{case.id}: {result}" + (f" (known: {case.known}; fixed? remove "
                                                      "it from KNOWN)" if case.known else ""))
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    outcomes = [(case, outcome(case)) for case in CASES]  # ids may repeat: count every call
    print(f"{len(CASES)} calls:", dict(Counter(result for _, result in outcomes)))
    for case, result in outcomes:
        if result not in ("right", "clear error"):
            print(f"  {result}: {case.id}" + (f"  (known: {case.known})" if case.known else ""))
