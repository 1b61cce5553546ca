"""`ffn.LayerNorm`: forward against a row-by-row math-module computation, backward
against central finite differences, the role of eps, dtypes and every error."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ffn
from tests.test_errors import BAD_X, BAD_X_IDS, raises
from tests.test_feedforward import assert_grads_match, numerical_grad

D = 5


def naive_layer_norm(
    x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float
) -> np.ndarray:
    """One row at a time in plain Python floats: mean, biased variance, normalise."""
    out = []
    for row in x.reshape(-1, x.shape[-1]).tolist():
        mean = math.fsum(row) / len(row)
        var = math.fsum((v - mean) ** 2 for v in row) / len(row)
        std = math.sqrt(var + eps)
        out.append([(v - mean) / std * g + b for v, g, b in zip(row, gamma, beta, strict=True)])
    return np.array(out).reshape(x.shape)


def affine(seed: int = 0, d: int = D) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return 1.0 + 0.5 * rng.normal(size=d), rng.normal(size=d)


# ---------------------------------------------------------------- forward


@pytest.mark.parametrize("shape", [(D,), (4, D), (2, 3, D), (0, D)])
@pytest.mark.parametrize("eps", [1e-5, 0.1, 0.0])
def test_forward_matches_naive(shape: tuple[int, ...], eps: float) -> None:
    gamma, beta = affine()
    x = 3.0 + 2.0 * np.random.default_rng(1).normal(size=shape)
    y = ffn.LayerNorm(D, eps=eps, gamma=gamma, beta=beta)(x)
    assert y.shape == shape and y.dtype == np.float64
    np.testing.assert_allclose(y, naive_layer_norm(x, gamma, beta, eps), rtol=1e-12, atol=1e-13)


def test_defaults_give_zero_mean_and_unit_variance_rows() -> None:
    x = np.random.default_rng(2).normal(loc=4.0, scale=3.0, size=(6, D))
    norm = ffn.LayerNorm(D, eps=0.0)
    y = norm(x)
    np.testing.assert_array_equal(norm.gamma, np.ones(D))
    np.testing.assert_array_equal(norm.beta, np.zeros(D))
    assert norm.eps == 0.0 and ffn.LayerNorm(D).eps == 1e-5  # PyTorch's default
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-15)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, rtol=1e-14)  # biased variance


def test_eps_shrinks_the_variance_by_var_over_var_plus_eps() -> None:
    x = np.random.default_rng(3).normal(size=(4, D))
    eps = 0.5
    var = x.var(axis=-1)
    y = ffn.LayerNorm(D, eps=eps)(x)
    np.testing.assert_allclose(y.var(axis=-1), var / (var + eps), rtol=1e-13)


def test_all_equal_row_without_eps_is_nan_silently() -> None:
    # The degenerate input of seed 004, L4.1: x' + y = [1, 1]. Variance 0, so 0 / 0: NaN,
    # without a warning, as every layer treats NaN.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = ffn.LayerNorm(2, eps=0.0)(np.array([1.0, 1.0]))
    assert np.isnan(y).all()
    assert caught == []


def test_all_equal_row_with_eps_is_beta() -> None:
    gamma, beta = affine(d=4)
    y = ffn.LayerNorm(4, gamma=gamma, beta=beta)(np.full((3, 4), 7.0))
    np.testing.assert_array_equal(y, np.broadcast_to(beta, (3, 4)))


# Issue 26, item 1: eps * scale**2 underflowed for huge rows (float32 from about 7.4e19, float64
# from about 1.7e159), so a row of equal values gave 0 / 0 = NaN.
@pytest.mark.parametrize(
    ("dtype", "value"),
    [(np.float32, 7.4e19), (np.float32, 1e20), (np.float32, -3.4e38), (np.float32, 1e-45),
     (np.float64, 1.7e159), (np.float64, -1e300), (np.float64, 1.79e308), (np.float64, 5e-324)],
)
def test_all_equal_row_with_eps_is_beta_at_any_finite_size(dtype: type, value: float) -> None:
    gamma, beta = (a.astype(dtype) for a in affine(d=4))
    norm = ffn.LayerNorm(4, gamma=gamma, beta=beta)
    y = norm(np.full((3, 4), value, dtype))
    np.testing.assert_array_equal(y, np.broadcast_to(beta, (3, 4)))
    # x_hat = 0, so dL/dx = (dy * gamma - its row mean) / sqrt(eps)
    dy = np.arange(12.0).reshape(3, 4)
    dx_hat = dy * gamma
    expected = (dx_hat - dx_hat.mean(axis=1, keepdims=True)) / math.sqrt(1e-5)
    np.testing.assert_allclose(norm.backward(dy), expected, rtol=1e-6 if dtype == np.float32
                               else 1e-14)


# Issue 26, item 2: with eps = 0 the squares of tiny entries underflowed to 0, giving +-inf.
# Scaling by a power of two is exact, so without eps it must change no bit of the output.
@pytest.mark.parametrize(
    ("dtype", "powers"),
    [(np.float32, (-146, -120, -100, 60, 120)), (np.float64, (-1070, -1000, -700, 600, 1000))],
)
def test_without_eps_scaling_by_a_power_of_two_changes_nothing(
    dtype: type, powers: tuple[int, ...]
) -> None:
    x = np.array([[1.0, 2.0, 3.0, 5.0], [-4.0, 0.0, 4.0, 1.0]], dtype)
    norm = ffn.LayerNorm(4, eps=0.0, gamma=affine(d=4)[0].astype(dtype), dtype=dtype)
    y = norm(x)
    dy = np.random.default_rng(12).normal(size=x.shape).astype(dtype)
    dx = norm.backward(dy)
    for k in powers:
        scaled = np.ldexp(x, k)
        assert np.array_equal(np.ldexp(scaled, -k), x)  # exact, even where subnormal
        np.testing.assert_array_equal(norm(scaled), y, err_msg=f"2**{k}")
        if abs(k) < np.finfo(dtype).maxexp - 8:  # dL/dx = dx / 2**k stays finite, normal
            np.testing.assert_array_equal(norm.backward(dy), np.ldexp(dx, -k),
                                          err_msg=f"2**{k}")


@pytest.mark.parametrize("scale", [1e-200, 1e-150, 1e150, 1e300])
@pytest.mark.parametrize("eps", [1e-5, 0.0])
def test_backward_matches_finite_differences_at_extreme_scales(scale: float, eps: float) -> None:
    # eps matters at these scales only through eps / var: 1e-5 at 1e-150 makes x_hat tiny
    gamma, beta = affine(13)
    x = scale * np.random.default_rng(14).normal(size=(2, D))
    R = np.random.default_rng(15).normal(size=(2, D))
    norm = ffn.LayerNorm(D, eps=eps, gamma=gamma, beta=beta)
    norm(x)
    analytic = norm.backward(R) * scale  # dL/d(x / scale)
    u = x / scale

    def loss() -> float:
        return float(np.sum(ffn.LayerNorm(D, eps=eps, gamma=gamma, beta=beta)(u * scale) * R))

    np.testing.assert_allclose(analytic, numerical_grad(loss, u), rtol=1e-6, atol=1e-8)


def test_eps_caps_the_gain_at_one_over_sqrt_eps() -> None:
    # A nearly constant row: without eps it is blown up to unit variance,
    # with eps its entries are multiplied by at most 1 / sqrt(eps).
    x = np.array([1.0, 1.0 + 1e-6, 1.0 - 1e-6, 1.0])
    centered = x - x.mean()
    for eps in (1e-5, 1e-2):
        y = ffn.LayerNorm(4, eps=eps)(x)
        assert np.all(np.abs(y) <= np.abs(centered) / math.sqrt(eps) * (1 + 1e-12))
    assert ffn.LayerNorm(4, eps=0.0)(x).var() == pytest.approx(1.0, rel=1e-9)


def test_width_one_normalises_to_beta() -> None:
    y = ffn.LayerNorm(1, beta=[0.25])(np.array([[3.0], [-2.0]]))
    np.testing.assert_array_equal(y, [[0.25], [0.25]])


def test_rows_are_independent() -> None:
    x = np.random.default_rng(4).normal(size=(5, D))
    norm = ffn.LayerNorm(D, gamma=affine()[0])
    y = norm(x)
    for i in range(5):
        np.testing.assert_allclose(norm(x[i]), y[i], rtol=1e-15, atol=1e-15)


# ---------------------------------------------------------------- backward


@pytest.mark.parametrize("shape", [(D,), (4, D), (2, 3, D)])
@pytest.mark.parametrize("eps", [1e-5, 0.3])
def test_backward_matches_finite_differences(shape: tuple[int, ...], eps: float) -> None:
    gamma, beta = affine(5)
    x = np.random.default_rng(6).normal(size=shape)
    R = np.random.default_rng(7).normal(size=shape)  # loss = sum(y * R), so dL/dy = R
    norm = ffn.LayerNorm(D, eps=eps, gamma=gamma, beta=beta)
    norm(x)
    analytic = {"x": norm.backward(R), **norm.grads}
    assert set(norm.grads) == {"gamma", "beta"}

    g, b, xx = gamma.copy(), beta.copy(), x.copy()

    def loss() -> float:
        return float(np.sum(ffn.LayerNorm(D, eps=eps, gamma=g, beta=b)(xx) * R))

    numeric = {"x": numerical_grad(loss, xx), "gamma": numerical_grad(loss, g),
               "beta": numerical_grad(loss, b)}
    assert_grads_match(analytic, numeric, atol=1e-9)


def test_input_gradient_is_orthogonal_to_shifts_and_scalings() -> None:
    # LN(x + a) = LN(x), and LN(k x) = LN(x) without eps: so dL/dx has zero row sums
    # and is orthogonal to x - mean(x), whatever dy is.
    x = np.random.default_rng(8).normal(size=(3, D))
    norm = ffn.LayerNorm(D, eps=0.0, gamma=affine()[0])
    norm(x)
    dx = norm.backward(np.random.default_rng(9).normal(size=(3, D)))
    np.testing.assert_allclose(dx.sum(axis=-1), 0.0, atol=1e-14)
    centered = x - x.mean(axis=-1, keepdims=True)
    np.testing.assert_allclose((dx * centered).sum(axis=-1), 0.0, atol=1e-14)


def test_backward_can_be_repeated_and_does_not_accumulate() -> None:
    x = np.random.default_rng(10).normal(size=(2, D))
    norm = ffn.LayerNorm(D)
    norm(x)
    dy = np.ones((2, D))
    first = norm.backward(dy), dict(norm.grads)
    second = norm.backward(dy), dict(norm.grads)
    np.testing.assert_array_equal(first[0], second[0])
    for key in ("gamma", "beta"):
        np.testing.assert_array_equal(first[1][key], second[1][key])


# ---------------------------------------------------------------- dtypes


def test_float32_parameters_make_a_float32_layer() -> None:
    gamma, beta = (a.astype(np.float32) for a in affine())
    norm = ffn.LayerNorm(D, gamma=gamma, beta=beta)
    x = np.random.default_rng(11).normal(size=(3, D))
    y = norm(x)  # float64 input is cast to the layer's float32
    assert norm.dtype == np.float32 and y.dtype == np.float32
    assert norm.backward(np.ones((3, D))).dtype == np.float32
    assert all(g.dtype == np.float32 for g in norm.grads.values())
    expected = naive_layer_norm(x.astype(np.float32).astype(np.float64),
                                gamma.astype(np.float64), beta.astype(np.float64), 1e-5)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


def test_dtype_argument_without_parameters() -> None:
    norm = ffn.LayerNorm(D, dtype=np.float32)
    assert norm.dtype == np.float32
    assert norm.gamma.dtype == norm.beta.dtype == np.float32
    assert ffn.LayerNorm(D).dtype == np.float64


def test_integer_parameters_are_promoted_and_float_ones_copied() -> None:
    gamma = np.ones(D)
    norm = ffn.LayerNorm(D, gamma=gamma, beta=[0, 0, 0, 0, 1])
    assert norm.beta.dtype == np.float64
    gamma[0] = 5.0  # the caller's array: the layer kept its own copy
    assert norm.gamma[0] == 1.0 and not norm.gamma.flags.writeable


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("kwargs", "exception", "message"),
    [
        ({"d_model": 0}, ValueError, "d_model must be positive, got 0"),
        ({"d_model": 2.0}, TypeError, "d_model must be an int, got float 2.0"),
        ({"eps": -1e-5}, ValueError, "eps must be in [0, inf), got -1e-05"),
        ({"eps": float("nan")}, ValueError, "eps must be in [0, inf), got nan"),
        ({"eps": float("inf")}, ValueError, "eps must be in [0, inf), got inf"),
        ({"eps": "1e-5"}, TypeError, "eps must be a real number, got str '1e-5'"),
        ({"eps": True}, TypeError, "eps must be a real number, got bool True"),
        ({"eps": 2**1100}, ValueError, "eps must be in [0, inf), got an int too large for a float"),
        ({"eps": None}, TypeError, "eps must be a real number, got NoneType None"),
        (
            {"gamma": np.ones(4)},
            ValueError,
            "gamma must be 1-D with shape (d_model,) = (5,), got shape (4,)",
        ),
        (
            {"beta": np.zeros((1, 5))},
            ValueError,
            "beta must be 1-D with shape (d_model,) = (5,), got shape (1, 5)",
        ),
        ({"gamma": "ones"}, TypeError, "gamma must be a real numeric array, got dtype <U4"),
        (
            {"gamma": np.ones(5), "beta": np.zeros(5, dtype=np.float32)},
            TypeError,
            "weights must share one float dtype, got gamma float64, beta float32",
        ),
        (
            {"gamma": np.ones(5), "dtype": np.float32},
            TypeError,
            "dtype float32 does not match the dtype of gamma/beta (float64)",
        ),
        ({"dtype": np.int64}, TypeError, "dtype must be float32 or float64, got int64"),
    ],
)
def test_constructor_errors(
    kwargs: dict[str, object], exception: type[Exception], message: str
) -> None:
    with raises(exception, message):
        ffn.LayerNorm(**({"d_model": D} | kwargs))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("x", "exception", "message"),
    [
        (np.ones((2, 4)), ValueError, "x has last dimension 4 but d_model is 5 (x.shape=(2, 4))"),
        (
            1.0,
            ValueError,
            "x must have at least 1 dimension (..., d_model), got a scalar (shape ())",
        ),
        *BAD_X,
    ],
    ids=["width", "scalar", *BAD_X_IDS],
)
def test_forward_errors(x: object, exception: type[Exception], message: str) -> None:
    if np.dtype(np.longdouble) == np.float64 and message.startswith("x has dtype"):
        pytest.skip("long double is float64 on this platform")
    with raises(exception, message):
        ffn.LayerNorm(D)(x)


def test_backward_errors() -> None:
    norm = ffn.LayerNorm(D)
    before = "backward() called before a forward pass: call norm(x) first"
    with raises(RuntimeError, before):
        norm.backward(np.ones(D))
    norm(np.ones((2, D)))
    with raises(
        RuntimeError, "dy has shape (2, 4) but the last forward output has shape (2, 5)"
    ):
        norm.backward(np.ones((2, 4)))
    with raises(TypeError, "dy must be a real numeric array, got None"):
        norm.backward(None)
    with pytest.raises(ValueError):
        norm(np.ones((2, 3)))  # a failed forward leaves nothing for backward
    with raises(RuntimeError, before):
        norm.backward(np.ones((2, D)))


@pytest.mark.parametrize("eps", [1e-50, 1.4e-76, 1e39, 1.15e77])
def test_a_float32_eps_beyond_float32_is_computed_right(eps: float) -> None:
    """Issue 39: a float32 LayerNorm rounded eps to float32 first: 1e-50 became 0 (NaN on an
    equal row, where the answer is beta) and 1e39 inf. Exact fractions are the oracle."""
    from tests.test_edge_calls import layer_norm_exact

    gamma, beta = (a.astype(np.float32) for a in affine(d=4))
    rows = [np.full(4, 7.0), np.array([1.0, -1.0, 0.5, 0.25]) * 1e19, [3.0, -1.0, 0.5, 2.0],
            np.array([1.0, -1.0, 0.5, 0.25]) * 1e-30]
    x = np.array(rows).astype(np.float32)
    y = ffn.LayerNorm(4, eps=eps, gamma=gamma, beta=beta)(x)
    np.testing.assert_allclose(y, layer_norm_exact(x, gamma, beta, eps), rtol=1e-6, atol=1e-6)
