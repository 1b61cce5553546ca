"""`ffn.RMSNorm`: forward against a row-by-row math-module computation and exact fractions,
backward against central finite differences, eps, scale, Sublayer, and every wrong call."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

import ffn
from tests.edge_case import F32, F64, Case, outcome
from tests.test_errors import BAD_X, BAD_X_IDS, raises
from tests.test_feedforward import assert_grads_match, numerical_grad

D = 5


def naive_rms_norm(x: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    """One row at a time in plain Python floats: mean square, eps inside the root, scale."""
    out = []
    for row in x.reshape(-1, x.shape[-1]).tolist():
        rms = math.sqrt(math.fsum(v * v for v in row) / len(row) + eps)
        out.append([v / rms * g for v, g in zip(row, gamma, strict=True)])
    return np.array(out).reshape(x.shape)


def rms_norm_exact(x: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    """RMSNorm row by row in exact fractions (a 60-digit square root), in IEEE arithmetic's
    terms where it is not finite: NaN for 0 / 0, rows with a NaN, and inf / inf."""
    rows = x.reshape(-1, x.shape[-1]).astype(np.float64)
    out = np.full(rows.shape, np.nan)
    with localcontext() as ctx:
        ctx.prec = 60
        for i, row in enumerate(rows):
            if np.isnan(row).any():
                continue
            if np.isinf(row).any():  # mean square inf: inf / inf is NaN, finite / inf is 0
                out[i] = np.where(np.isinf(row), np.nan, 0.0)
                continue
            exact = [Fraction(float(v)) for v in row]
            ms = sum(v * v for v in exact) / len(exact) + Fraction(eps)
            rms = (Decimal(ms.numerator) / Decimal(ms.denominator)).sqrt()
            if rms != 0:
                out[i] = [float(Decimal(v.numerator) / Decimal(v.denominator) / rms
                                * Decimal(float(g))) for v, g in zip(exact, gamma, strict=True)]
    return out.reshape(x.shape)


def gain(seed: int = 0, d: int = D) -> np.ndarray:
    return 1.0 + 0.5 * np.random.default_rng(seed).normal(size=d)


# ---------------------------------------------------------------- forward


@pytest.mark.parametrize("shape", [(D,), (4, D), (2, 3, D), (0, D)])
@pytest.mark.parametrize("eps", [1e-6, 0.1, 0.0])
def test_forward_matches_naive(shape: tuple[int, ...], eps: float) -> None:
    gamma = gain()
    x = 3.0 + 2.0 * np.random.default_rng(1).normal(size=shape)
    y = ffn.RMSNorm(D, eps=eps, gamma=gamma)(x)
    assert y.shape == shape and y.dtype == np.float64
    np.testing.assert_allclose(y, naive_rms_norm(x, gamma, eps), rtol=1e-13, atol=1e-14)


def test_defaults_give_unit_mean_square_rows_and_keep_the_mean() -> None:
    x = np.random.default_rng(2).normal(loc=4.0, scale=3.0, size=(6, D))
    norm = ffn.RMSNorm(D, eps=0.0)
    y = norm(x)
    np.testing.assert_array_equal(norm.gamma, np.ones(D))
    assert ffn.RMSNorm(D).eps == 1e-6  # LLaMA's RMSNorm and transformers' LlamaRMSNorm
    assert list(norm.named_parameters()) == ["gamma"]  # a weight, no bias
    np.testing.assert_allclose((y * y).mean(axis=-1), 1.0, rtol=1e-14)
    # No centring: the row keeps its sign pattern and is only rescaled.
    np.testing.assert_allclose(y * np.sqrt((x * x).mean(axis=-1, keepdims=True)), x,
                               rtol=1e-14)
    assert np.abs(y.mean(axis=-1)).min() > 0.5


def test_zero_mean_rows_give_layer_norm_without_beta() -> None:
    # With the mean taken out first, the mean square is the variance: RMSNorm is LayerNorm.
    x = np.random.default_rng(3).normal(size=(4, D))
    x -= x.mean(axis=-1, keepdims=True)
    gamma = gain(4)
    np.testing.assert_allclose(ffn.RMSNorm(D, 1e-5, gamma)(x),
                               ffn.LayerNorm(D, 1e-5, gamma)(x), rtol=1e-13, atol=1e-15)


def test_eps_is_inside_the_square_root() -> None:
    # mean(y**2) = ms / (ms + eps): eps added to the mean square, not to its root.
    x = np.random.default_rng(5).normal(size=(4, D))
    eps = 0.5
    ms = (x * x).mean(axis=-1)
    y = ffn.RMSNorm(D, eps=eps)(x)
    np.testing.assert_allclose((y * y).mean(axis=-1), ms / (ms + eps), rtol=1e-13)
    outside = x / (np.sqrt(ms)[:, None] + eps)
    assert np.abs(y - outside).max() > 0.01


def test_zero_row_is_zero_with_eps_and_nan_without() -> None:
    norm = ffn.RMSNorm(4, gamma=gain(d=4))
    np.testing.assert_array_equal(norm(np.zeros((2, 4))), np.zeros((2, 4)))
    np.testing.assert_array_equal(norm.backward(np.ones((2, 4))),
                                  np.broadcast_to(norm.gamma / math.sqrt(1e-6), (2, 4)))
    assert np.isnan(ffn.RMSNorm(4, eps=0.0)(np.zeros((1, 4)))).all()


@pytest.mark.parametrize(("dtype", "powers"),
                         [(F32, (-146, -120, 60, 120)), (F64, (-1070, -700, 600, 1000))])
def test_without_eps_scaling_by_a_power_of_two_changes_nothing(
        dtype: type, powers: tuple[int, ...]) -> None:
    x = np.array([[1.0, 2.0, 3.0, 5.0], [-4.0, 0.0, 4.0, 1.0]], dtype)
    norm = ffn.RMSNorm(4, eps=0.0, gamma=gain(d=4).astype(dtype))
    y = norm(x)
    dy = np.random.default_rng(12).normal(size=x.shape).astype(dtype)
    dx = norm.backward(dy)
    for k in powers:
        np.testing.assert_array_equal(norm(np.ldexp(x, k)), y, err_msg=f"2**{k}")
        if abs(k) < np.finfo(dtype).maxexp - 8:  # dL/dx = dx / 2**k stays finite, normal
            np.testing.assert_array_equal(norm.backward(dy), np.ldexp(dx, -k),
                                          err_msg=f"2**{k}")


@pytest.mark.parametrize(("dtype", "value"), [(F32, 3e38), (F32, 1e-45), (F64, 1.79e308),
                                              (F64, 5e-324), (F64, -1e300)])
def test_extreme_rows_match_exact_fractions(dtype: type, value: float) -> None:
    gamma = gain(d=4).astype(dtype)
    x = (np.array([[1.0, -1.0, 0.5, 0.25]]) * value).astype(dtype)
    y = ffn.RMSNorm(4, gamma=gamma)(x)
    expected = rms_norm_exact(x, gamma, 1e-6)
    assert np.isfinite(y).all()
    # a subnormal result is exact only to its last place: smallest_subnormal absolute
    np.testing.assert_allclose(y, expected, rtol=1e-6 if dtype == F32 else 1e-13,
                               atol=np.finfo(dtype).smallest_subnormal)
    assert (y != 0).sum() == (expected != 0).sum()  # tiny x is not flushed to 0


# ---------------------------------------------------------------- backward


@pytest.mark.parametrize("eps", [1e-6, 0.3])
@pytest.mark.parametrize("shape", [(D,), (3, D), (2, 2, D)])
def test_backward_matches_finite_differences(eps: float, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(6)
    x, dy = rng.normal(size=shape), rng.normal(size=shape)
    gamma = gain(7)
    norm = ffn.RMSNorm(D, eps=eps, gamma=gamma)
    norm(x)
    dx = norm.backward(dy)

    def loss_x() -> float:
        return float(np.sum(ffn.RMSNorm(D, eps, gamma)(x) * dy))

    def loss_gamma() -> float:
        return float(np.sum(ffn.RMSNorm(D, eps, gamma)(x) * dy))

    np.testing.assert_allclose(dx, numerical_grad(loss_x, x), rtol=1e-7, atol=2e-9)
    assert_grads_match(norm.grads, {"gamma": numerical_grad(loss_gamma, gamma)})


def test_backward_is_orthogonal_to_the_input_for_unit_gamma() -> None:
    # The output is scale-invariant in x, so dL/dx has no component along x.
    rng = np.random.default_rng(8)
    x, dy = rng.normal(size=(5, D)), rng.normal(size=(5, D))
    norm = ffn.RMSNorm(D, eps=0.0)
    norm(x)
    np.testing.assert_allclose(np.sum(norm.backward(dy) * x, axis=-1), 0.0, atol=1e-14)


# ---------------------------------------------------------------- in a Sublayer


def test_pre_norm_sublayer_with_rms_norm_is_llama_s_ffn_half() -> None:
    rng = np.random.default_rng(9)
    block = ffn.GatedFeedForward.random(D, 12, seed=1)
    gamma = gain(10)
    sub = ffn.Sublayer(block, ffn.RMSNorm(D, gamma=gamma), placement="pre")
    x, dy = rng.normal(size=(3, D)), rng.normal(size=(3, D))
    np.testing.assert_array_equal(sub(x), x + block(ffn.RMSNorm(D, gamma=gamma)(x)))
    dx = sub.backward(dy)
    assert set(sub.grads) == {"W", "V", "W2", "b", "c", "b2", "gamma"}

    def loss() -> float:
        return float(np.sum(ffn.Sublayer(block, ffn.RMSNorm(D, gamma=gamma))(x) * dy))

    np.testing.assert_allclose(dx, numerical_grad(loss, x), rtol=1e-7, atol=2e-9)
    np.testing.assert_allclose(sub.grads["gamma"], numerical_grad(loss, gamma), rtol=1e-7,
                               atol=2e-9)


def test_sublayer_refuses_a_norm_of_another_width_or_dtype() -> None:
    block = ffn.GatedFeedForward.random(D, 12)
    with raises(ValueError, f"norm has d_model {D + 1} but block has d_model {D}"):
        ffn.Sublayer(block, ffn.RMSNorm(D + 1))
    with raises(TypeError, "norm has dtype float32 but block has dtype float64"):
        ffn.Sublayer(block, ffn.RMSNorm(D, dtype=np.float32))
    with raises(TypeError, "norm must be a LayerNorm or RMSNorm, got Linear"):
        ffn.Sublayer(block, ffn.Linear(np.eye(D)))  # type: ignore[arg-type]


# ---------------------------------------------------------------- wrong and edge calls


@pytest.mark.parametrize(("x", "exception", "message"), BAD_X, ids=BAD_X_IDS)
def test_rejects_bad_input(x: object, exception: type[Exception], message: str) -> None:
    if np.dtype(np.longdouble) == np.float64 and message.startswith("x has dtype"):
        pytest.skip("long double is float64 on this platform")
    with raises(exception, message):
        ffn.RMSNorm(2)(x)


def close_exact(x: object, dtype: type, eps: float = 1e-6) -> Case:
    gamma = np.linspace(0.5, 2.0, 4).astype(dtype)
    cast = np.asarray(x, np.float64).astype(dtype)
    expected = rms_norm_exact(cast, gamma, eps)

    def right(y: object) -> bool:
        if not isinstance(y, np.ndarray) or y.dtype != dtype or y.shape != expected.shape:
            return False
        nan = np.isnan(expected)
        tol = 1e-6 if dtype == F32 else 1e-13
        tiny = np.finfo(dtype).smallest_subnormal  # the exact value, rounded to dtype, may be 0
        return bool((np.isnan(y) == nan).all()
                    and np.allclose(y[~nan], expected[~nan], rtol=tol, atol=tiny))

    return Case(f"RMS {dtype.__name__} eps={eps:g} {np.asarray(x).ravel()[:2]}",
                lambda: ffn.RMSNorm(4, eps, gamma)(x), "x", right)


def build(**kw: object) -> Case:
    args = {"d_model": 4} | kw
    return Case(f"RMS {kw}", lambda: ffn.RMSNorm(**args)(np.ones((2, 4))),  # type: ignore[arg-type]
                next(iter(kw)))


CASES = [
    close_exact(np.random.default_rng(0).normal(3, 2, (3, 4)), F64),
    close_exact(np.random.default_rng(0).normal(3, 2, (3, 4)), F32),
    close_exact([[np.nan, 1, 2, 3], [1, 2, 3, 4]], F64),
    close_exact([[np.inf, 1, 2, 3], [1, 2, 3, 4]], F64),
    close_exact(np.zeros((1, 4)), F64, eps=0.0),  # 0 / 0: NaN
    close_exact(np.full((1, 4), 3e38, F32), F32),
    close_exact(np.full((1, 4), 1e-300), F64, eps=0.0),
    close_exact(np.array([[3e38, 1e-38, -2e-45, 0]], F32), F32),
    close_exact(np.arange(4.0), F64),
    close_exact(np.array([[True, False, True, True]]), F64),
    close_exact(np.ones((0, 4)), F64),
    Case("RMS 0-d", lambda: ffn.RMSNorm(4)(1.0), "x"),
    Case("RMS width", lambda: ffn.RMSNorm(4)(np.ones((2, 3))), "x"),
    Case("RMS backward before forward", lambda: ffn.RMSNorm(4).backward(np.ones((2, 4))),
         "forward", errors=(RuntimeError,), refusable=True),
    Case("RMS backward wrong shape",
         lambda: (n := ffn.RMSNorm(4), n(np.ones((2, 4))), n.backward(np.ones((3, 4))))[-1],
         "dy", errors=(RuntimeError,)),
    Case("RMS backward dy nan", lambda: (n := ffn.RMSNorm(4), n(np.ones((1, 4))),
                                          n.backward(np.full((1, 4), np.nan)))[-1], "dy",
         lambda dx: bool(np.isnan(dx).all())),
    build(d_model=0), build(d_model=True), build(d_model=4.0),
    build(eps=-1e-6), build(eps=-0.0 - 1.0), build(eps=math.nan), build(eps=math.inf),
    build(eps=True), build(eps="1e-6"), build(eps=2**1100),
    build(dtype=np.float16), build(dtype="int32"),
    build(gamma=np.ones(3)), build(gamma=np.ones((4, 1))), build(gamma=np.ones(4, complex)),
    build(gamma="abcd"),
    Case("RMS gamma dtype mismatch",
         lambda: ffn.RMSNorm(4, gamma=np.ones(4, F32), dtype=F64), "dtype"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_right_answer_or_clear_error(case: Case) -> None:
    assert outcome(case) in ("right", "clear error")


def test_eps_zero_is_allowed_like_layer_norm_and_negative_is_not() -> None:
    assert ffn.RMSNorm(4, eps=0.0).eps == 0.0
    with raises(ValueError, "eps must be in [0, inf), got -1e-06"):
        ffn.RMSNorm(4, eps=-1e-6)


def test_repr_and_read_only() -> None:
    norm = ffn.RMSNorm(3, eps=1e-5, dtype=np.float32)
    assert repr(norm) == "RMSNorm(d_model=3, eps=1e-05, dtype=float32)"
    assert norm.gamma.dtype == np.float32 and not norm.gamma.flags.writeable
    with pytest.raises(AttributeError, match="read-only"):
        norm.eps = 0.1


# ---------------------------------------------------------------- eps beyond float32's range


EPS_ROWS = [np.zeros(4), np.array([1.0, -1.0, 0.5, 0.25]) * 1e19,
            np.array([1.0, -1.0, 0.5, 0.25]) * 1e-30, np.array([3.0, -1.0, 0.5, 2.0]),
            np.array([1.0, -1.0, 0.5, 0.25]) * 3e38, np.array([1.0, -1.0, 1.0, 0.0]) * 1e-44]


@pytest.mark.parametrize("eps", [1e-50, 1.4e-76, 1e-40, 1e39, 1e60, 1.15e77])
def test_a_float32_eps_beyond_float32_is_computed_right(eps: float) -> None:
    """Issue 39: a float32 RMSNorm rounded eps to float32 first: 1e-50 became 0 (NaN on a zero
    row, where the answer is 0) and 1e39 inf (0 everywhere). Exact fractions are the oracle."""
    gamma = gain(d=4).astype(F32)
    x = np.array(EPS_ROWS).astype(F32)
    y = ffn.RMSNorm(4, eps=eps, gamma=gamma)(x)
    np.testing.assert_allclose(y, rms_norm_exact(x, gamma, eps), rtol=1e-6,
                               atol=np.finfo(F32).smallest_subnormal)


def test_a_zero_row_with_a_tiny_eps_has_slope_one_over_sqrt_eps() -> None:
    """At x = 0, d/dx [x / sqrt(mean(x**2) + eps)] = 1 / sqrt(eps): 1e25 for eps = 1e-50."""
    norm = ffn.RMSNorm(4, eps=1e-50, gamma=gain(d=4).astype(F32))
    norm(np.zeros((1, 4), F32))
    dy = np.array([[1.0, -2.0, 0.5, 3.0]], F32)
    np.testing.assert_allclose(norm.backward(dy), dy * norm.gamma * 1e25, rtol=1e-6)


@pytest.mark.parametrize("eps", [1e-80, 5e-324, 1.3e-76, 1.2e77, 1e78, 1e300])
def test_an_eps_whose_root_is_no_normal_float32_is_refused(eps: float) -> None:
    """Its square root (what the norm adds) would be a subnormal, 0 or inf in float32; float64
    computes it, exact fractions the oracle."""
    for make in (ffn.RMSNorm, ffn.LayerNorm):
        with raises(ValueError, f"eps={eps!r} is outside the range a float32 {make.__name__} "
                                "can use: its square root, which the norm adds, would be",
                    prefix=True):
            make(4, eps=eps, dtype=F32)
        with pytest.raises(ValueError,
                           match=r"give eps = 0 or eps between 1\.4e-76 and 1\.15e\+77$"):
            make(4, eps=eps, dtype=F32)
    x = np.array(EPS_ROWS[:4])
    np.testing.assert_allclose(ffn.RMSNorm(4, eps=eps)(x), rms_norm_exact(x, np.ones(4), eps),
                               rtol=1e-13, atol=np.finfo(F64).smallest_subnormal)
