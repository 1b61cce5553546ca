"""`ffn.GatedFeedForward`: forward against a row-by-row math-module computation,
backward against central finite differences for every variant, parameter counts
against the real arrays, which matrix is the gate, dtypes and every error."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

import ffn
from tests.test_activations import ref_gelu_erfc, ref_gelu_tanh, ref_relu, ref_silu
from tests.test_errors import BAD_X, BAD_X_IDS, raises
from tests.test_feedforward import assert_grads_match, numerical_grad


def ref_sigmoid(x: float) -> float:
    # Two branches so that math.exp never overflows.
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


GATES: dict[str, Callable[[float], float]] = {
    "glu": ref_sigmoid,
    "reglu": ref_relu,
    "geglu": ref_gelu_erfc,
    "geglu_tanh": ref_gelu_tanh,
    "swiglu": ref_silu,
}
D_MODEL, D_FF = 3, 4
NAMES = ("W", "V", "W2", "b", "c", "b2")


def test_variants_tuple() -> None:
    assert ffn.GATED_VARIANTS == tuple(GATES)


def random_weights(seed: int, bias: bool) -> dict[str, np.ndarray | None]:
    rng = np.random.default_rng(seed)
    weights: dict[str, np.ndarray | None] = {
        "W": rng.normal(size=(D_MODEL, D_FF)),
        "V": rng.normal(size=(D_MODEL, D_FF)),
        "W2": rng.normal(size=(D_FF, D_MODEL)),
    }
    for name, size in (("b", D_FF), ("c", D_FF), ("b2", D_MODEL)):
        weights[name] = rng.normal(size=size) if bias else None
    return weights


def naive_gated(x: np.ndarray, w: dict[str, np.ndarray | None], variant: str) -> np.ndarray:
    """(act(x W + b) * (x V + c)) W2 + b2, one row and one entry at a time."""
    act = GATES[variant]
    W, V, W2 = w["W"], w["V"], w["W2"]
    assert W is not None and V is not None and W2 is not None
    b, c, b2 = w["b"], w["c"], w["b2"]
    out = []
    for row in x.reshape(-1, D_MODEL).tolist():
        h = []
        for j in range(D_FF):
            gate_pre = math.fsum(row[i] * W[i, j] for i in range(D_MODEL))
            up = math.fsum(row[i] * V[i, j] for i in range(D_MODEL))
            gate_pre += b[j] if b is not None else 0.0
            up += c[j] if c is not None else 0.0
            h.append(act(gate_pre) * up)
        out.append([
            math.fsum(h[j] * W2[j, k] for j in range(D_FF))
            + (b2[k] if b2 is not None else 0.0)
            for k in range(D_MODEL)
        ])
    return np.array(out).reshape(x.shape)


# ---------------------------------------------------------------- forward


@pytest.mark.parametrize("variant", ffn.GATED_VARIANTS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(D_MODEL,), (5, D_MODEL), (2, 3, D_MODEL), (0, D_MODEL)])
def test_forward_matches_naive(variant: str, bias: bool, shape: tuple[int, ...]) -> None:
    w = random_weights(0, bias)
    x = np.random.default_rng(1).normal(size=shape)
    y = ffn.GatedFeedForward(**w, variant=variant)(x)  # type: ignore[arg-type]
    assert y.shape == shape and y.dtype == np.float64
    np.testing.assert_allclose(y, naive_gated(x, w, variant), rtol=1e-12, atol=1e-14)


def test_trace_is_consistent_with_the_output() -> None:
    w = random_weights(2, True)
    block = ffn.GatedFeedForward(**w, variant="geglu")  # type: ignore[arg-type]
    x = np.random.default_rng(3).normal(size=(2, 3, D_MODEL))
    t = block.forward_trace(x)
    assert t.gate_pre.shape == t.gate.shape == t.up.shape == t.h.shape == (2, 3, D_FF)
    np.testing.assert_allclose(t.gate_pre, x @ w["W"] + w["b"], rtol=1e-14)
    np.testing.assert_allclose(t.up, x @ w["V"] + w["c"], rtol=1e-14)
    np.testing.assert_array_equal(t.gate, ffn.gelu(t.gate_pre))
    np.testing.assert_array_equal(t.h, t.gate * t.up)
    np.testing.assert_array_equal(t.y, block(x))
    np.testing.assert_array_equal(t.x, x)


def test_W_is_the_gate_and_V_the_up_projection() -> None:
    # With W = 0 and no gate bias the sigmoid gate is 1/2 everywhere, so the GLU
    # block is half of the linear map x -> (x V + c) W2, plus b2.
    w = random_weights(4, True)
    w["W"], w["b"] = np.zeros((D_MODEL, D_FF)), None
    x = np.random.default_rng(5).normal(size=(4, D_MODEL))
    y = ffn.GatedFeedForward(**w, variant="glu")(x)  # type: ignore[arg-type]
    assert w["V"] is not None and w["c"] is not None and w["W2"] is not None
    expected = 0.5 * ((x @ w["V"] + w["c"]) @ w["W2"]) + w["b2"]
    np.testing.assert_allclose(y, expected, rtol=1e-14, atol=1e-15)
    # Swapping the two matrices changes the block.
    swapped = dict(w, W=w["V"], V=w["W"])
    assert not np.allclose(ffn.GatedFeedForward(**swapped, variant="glu")(x), y)  # type: ignore[arg-type]


def test_reglu_without_bias_is_homogeneous_of_degree_two() -> None:
    # act(2 x W) * (2 x V) = 4 act(x W) * (x V) for ReLU: a gated block is quadratic.
    block = ffn.GatedFeedForward.random(D_MODEL, D_FF, variant="reglu", seed=6)
    x = np.random.default_rng(7).normal(size=(3, D_MODEL))
    np.testing.assert_allclose(block(2.0 * x), 4.0 * block(x), rtol=1e-14, atol=1e-15)


def test_variants_differ() -> None:
    w = random_weights(8, True)
    x = np.random.default_rng(9).normal(size=(4, D_MODEL))
    outputs = [ffn.GatedFeedForward(**w, variant=v)(x) for v in ffn.GATED_VARIANTS]  # type: ignore[arg-type]
    for i in range(len(outputs)):
        for j in range(i):
            assert not np.allclose(outputs[i], outputs[j], rtol=1e-6, atol=0)


def test_default_variant_is_swiglu() -> None:
    w = random_weights(0, False)
    assert ffn.GatedFeedForward(w["W"], w["V"], w["W2"]).variant == "swiglu"
    assert ffn.GatedFeedForward.random(2, 3).variant == "swiglu"


# ---------------------------------------------------------------- backward


def away_from_kink(
    shape: tuple[int, ...], bias: bool
) -> tuple[np.ndarray, dict[str, np.ndarray | None]]:
    """x and weights whose gate pre-activations all have |value| > 1e-2 (ReLU's kink)."""
    for seed in range(1000):
        w = random_weights(seed, bias)
        x = np.random.default_rng(seed + 10_000).normal(size=shape)
        assert w["W"] is not None
        gate_pre = x.reshape(-1, D_MODEL) @ w["W"] + (w["b"] if w["b"] is not None else 0.0)
        if np.abs(gate_pre).min() > 1e-2:
            return x, w
    raise AssertionError("no seed found")  # pragma: no cover


@pytest.mark.parametrize("variant", ffn.GATED_VARIANTS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(D_MODEL,), (4, D_MODEL), (2, 3, D_MODEL)])
def test_backward_matches_finite_differences(
    variant: str, bias: bool, shape: tuple[int, ...]
) -> None:
    x, w = away_from_kink(shape, bias)
    R = np.random.default_rng(11).normal(size=shape)  # loss = sum(y * R): dL/dy = R
    block = ffn.GatedFeedForward(**w, variant=variant)  # type: ignore[arg-type]
    block(x)
    analytic = {"x": block.backward(R), **block.grads}
    assert set(block.grads) == set(NAMES)

    params = {k: None if v is None else v.copy() for k, v in w.items()}
    xx = x.copy()

    def loss() -> float:
        return float(np.sum(ffn.GatedFeedForward(**params, variant=variant)(xx) * R))  # type: ignore[arg-type]

    numeric = {"x": numerical_grad(loss, xx)}
    for name, array in params.items():
        numeric[name] = None if array is None else numerical_grad(loss, array)
    assert_grads_match(analytic, numeric)


def test_backward_before_forward_and_wrong_dy() -> None:
    block = ffn.GatedFeedForward.random(D_MODEL, D_FF)
    with raises(RuntimeError, "backward() called before a forward pass: call block(x) first"):
        block.backward(np.ones(D_MODEL))
    block(np.ones((2, D_MODEL)))
    with raises(
        RuntimeError, "dy has shape (3, 3) but the last forward output has shape (2, 3)"
    ):
        block.backward(np.ones((3, D_MODEL)))
    with raises(TypeError, "dy must be a real numeric array, got dtype complex128"):
        block.backward(np.ones((2, D_MODEL), dtype=complex))
    with pytest.raises(ValueError):
        block(np.ones((2, 5)))
    with raises(RuntimeError, "backward() called before a forward pass: call block(x) first"):
        block.backward(np.ones((2, D_MODEL)))


# ---------------------------------------------------------------- counting


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("d_model", "d_ff"), [(1, 1), (3, 4), (8, 21), (64, 171)])
def test_count_parameters_gated_matches_the_real_arrays(
    d_model: int, d_ff: int, bias: bool
) -> None:
    block = ffn.GatedFeedForward.random(d_model, d_ff, bias=bias)
    arrays = [getattr(block, name) for name in NAMES]
    actual = sum(a.size for a in arrays if a is not None)
    assert ffn.count_parameters(d_model, d_ff, bias=bias, gated=True) == actual


def test_two_thirds_width_matches_the_ungated_weight_count() -> None:
    # T5-base sizes, as in Shazeer (2020): d_ff = 3072 ungated, 2048 gated.
    d_model, d_ff = 768, 3072
    ungated = ffn.FeedForward.random(d_model, d_ff, bias=False)
    gated = ffn.GatedFeedForward.random(d_model, d_ff * 2 // 3)
    n_ungated = ungated.W1.size + ungated.W2.size
    n_gated = gated.W.size + gated.V.size + gated.W2.size
    assert n_ungated == n_gated == 4_718_592  # 8 * 768**2


# ---------------------------------------------------------------- random and dtypes


def test_random_is_deterministic_and_float32_is_the_rounded_float64() -> None:
    a = ffn.GatedFeedForward.random(4, 6, seed=3)
    b = ffn.GatedFeedForward.random(4, 6, seed=3)
    c = ffn.GatedFeedForward.random(4, 6, seed=3, dtype=np.float32)
    for name in ("W", "V", "W2"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        np.testing.assert_array_equal(getattr(c, name), getattr(a, name).astype(np.float32))
    assert not np.array_equal(a.W, a.V)
    assert c.dtype == np.float32 and c.b is None and c.c is None and c.b2 is None
    biased = ffn.GatedFeedForward.random(4, 6, bias=True, dtype=np.float32)
    assert biased.b is not None and biased.b.dtype == np.float32 and not biased.b.any()


def test_float32_block_computes_in_float32() -> None:
    block = ffn.GatedFeedForward.random(D_MODEL, D_FF, seed=1, dtype=np.float32)
    x = np.random.default_rng(2).normal(size=(3, D_MODEL))
    y = block(x)
    assert y.dtype == np.float32
    assert block.backward(np.ones_like(y)).dtype == np.float32
    assert all(g is None or g.dtype == np.float32 for g in block.grads.values())
    w64 = {n: getattr(block, n) for n in NAMES}
    w64 = {n: None if a is None else a.astype(np.float64) for n, a in w64.items()}
    expected = naive_gated(x.astype(np.float32).astype(np.float64), w64, "swiglu")
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


def test_repr() -> None:
    assert repr(ffn.GatedFeedForward.random(2, 3, variant="geglu")) == (
        "GatedFeedForward(d_model=2, d_ff=3, variant='geglu', bias=False, dtype=float64)"
    )
    w = random_weights(0, True)
    w["c"] = None
    assert "bias='b+b2'" in repr(ffn.GatedFeedForward(**w))  # type: ignore[arg-type]


# ---------------------------------------------------------------- errors


def good(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "W": np.ones((3, 4)), "V": np.ones((3, 4)), "W2": np.ones((4, 3)),
        "b": np.zeros(4), "c": np.zeros(4), "b2": np.zeros(3),
    }
    return base | changes


@pytest.mark.parametrize(
    ("changes", "exception", "message"),
    [
        (
            {"V": np.ones((4, 3))},
            ValueError,
            "V has shape (4, 3) but W has shape (3, 4): V must be (d_model, d_ff) = (3, 4)",
        ),
        (
            {"W2": np.ones((3, 4))},
            ValueError,
            "W2 has shape (3, 4) but W has shape (3, 4): W2 must be (d_ff, d_model) = (4, 3)",
        ),
        ({"W": np.ones(3)}, ValueError, "W must be 2-D with shape (d_model, d_ff), got shape (3,)"),
        (
            {"V": np.ones((3, 4, 1))},
            ValueError,
            "V must be 2-D with shape (d_model, d_ff), got shape (3, 4, 1)",
        ),
        (
            {"c": np.zeros(3)},
            ValueError,
            "c must be 1-D with shape (d_ff,) = (4,), got shape (3,)",
        ),
        (
            {"b2": np.zeros(4)},
            ValueError,
            "b2 must be 1-D with shape (d_model,) = (3,), got shape (4,)",
        ),
        ({"V": None}, TypeError, "V must be a real numeric array, got None"),
        ({"b": "zeros"}, TypeError, "b must be a real numeric array, got dtype <U5"),
        (
            {"V": np.ones((3, 4), dtype=np.float32)},
            TypeError,
            ("weights must share one float dtype, got W float64, V float32, W2 float64, "
             "b float64, c float64, b2 float64"),
        ),
        (
            {"variant": "swish"},
            ValueError,
            "unknown variant 'swish'; valid: 'glu', 'reglu', 'geglu', 'geglu_tanh', 'swiglu'",
        ),
        ({"variant": None}, TypeError, "variant must be a str, got NoneType None"),
    ],
)
def test_constructor_errors(
    changes: dict[str, object], exception: type[Exception], message: str
) -> None:
    with raises(exception, message):
        ffn.GatedFeedForward(**good(**changes))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("x", "exception", "message"),
    [
        (np.ones((2, 4)), ValueError, "x has last dimension 4 but d_model is 3 (x.shape=(2, 4))"),
        (
            np.float64(1.0),
            ValueError,
            "x must have at least 1 dimension (..., d_model), got a scalar (shape ())",
        ),
        *BAD_X,
    ],
    ids=["width", "scalar", *BAD_X_IDS],
)
@pytest.mark.parametrize("method", ["__call__", "forward", "forward_trace"])
def test_forward_errors(method: str, x: object, exception: type[Exception], message: str) -> None:
    if np.dtype(np.longdouble) == np.float64 and message.startswith("x has dtype"):
        pytest.skip("long double is float64 on this platform")
    with raises(exception, message):
        getattr(ffn.GatedFeedForward(**good()), method)(x)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "exception", "message"),
    [
        ({"d_model": 0}, ValueError, "d_model must be positive, got 0"),
        ({"d_ff": 2.5}, TypeError, "d_ff must be an int, got float 2.5"),
        ({"dtype": np.float16}, TypeError, "dtype must be float32 or float64, got float16"),
        ({"seed": -1}, ValueError, "seed must be non-negative, got -1"),
        ({"seed": True}, TypeError, "seed must be an int or None, got bool True"),
        ({"bias": 1}, TypeError, "bias must be a bool, got int 1"),
        (
            {"variant": "SwiGLU"},
            ValueError,
            "unknown variant 'SwiGLU'; valid: 'glu', 'reglu', 'geglu', 'geglu_tanh', 'swiglu'",
        ),
    ],
)
def test_random_errors(kwargs: dict[str, object], exception: type[Exception], message: str) -> None:
    with raises(exception, message):
        ffn.GatedFeedForward.random(**({"d_model": 3, "d_ff": 4} | kwargs))  # type: ignore[arg-type]
