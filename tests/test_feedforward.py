"""`ffn.FeedForward`: forward against a row-by-row computation, backward
against central finite differences, dtypes, shapes, tracing and `random`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping

import numpy as np
import pytest
import scipy.special

import ffn
from tests.test_activations import ref_gelu_erfc, ref_gelu_tanh, ref_relu, ref_relu2, ref_silu

REFERENCES: dict[str, Callable[[float], float]] = {
    "relu": ref_relu,
    "gelu": ref_gelu_erfc,
    "gelu_tanh": ref_gelu_tanh,
    "silu": ref_silu,
    "relu2": ref_relu2,
}
D_MODEL, D_FF = 3, 5

Weights = tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray | None]


@pytest.fixture(params=["reference", "fast"])
def Block(request: pytest.FixtureRequest) -> type[ffn.FeedForward]:
    """ffn.FeedForward (the reference) and ffn.fast.FeedForward: every test here holds both."""
    return ffn.FeedForward if request.param == "reference" else ffn.fast.FeedForward


def naive_ffn(x: np.ndarray, weights: Weights, activation: str) -> np.ndarray:
    """y = act(x W1 + b1) W2 + b2, one row and one entry at a time in plain Python."""
    W1, b1, W2, b2 = weights
    act = REFERENCES[activation]
    d_model, d_ff = W1.shape
    out = []
    for row in x.reshape(-1, d_model).tolist():
        h = [
            act(
                sum(row[i] * W1[i, j] for i in range(d_model))
                + (b1[j] if b1 is not None else 0.0)
            )
            for j in range(d_ff)
        ]
        out.append(
            [
                sum(h[j] * W2[j, k] for j in range(d_ff))
                + (b2[k] if b2 is not None else 0.0)
                for k in range(d_model)
            ]
        )
    return np.array(out).reshape(x.shape)


def random_weights(
    seed: int, bias: bool, d_model: int = D_MODEL, d_ff: int = D_FF
) -> Weights:
    rng = np.random.default_rng(seed)
    W1 = rng.normal(size=(d_model, d_ff))
    W2 = rng.normal(size=(d_ff, d_model))
    b1 = rng.normal(size=d_ff) if bias else None
    b2 = rng.normal(size=d_model) if bias else None
    return W1, b1, W2, b2


def away_from_kink(shape: tuple[int, ...], bias: bool) -> tuple[np.ndarray, Weights]:
    """Random x and weights whose pre-activations all have |h_pre| > 1e-2.

    Finite differences with step 1e-6 are then valid for ReLU too.
    """
    for seed in range(1000):
        weights = random_weights(seed, bias)
        x = np.random.default_rng(seed + 10_000).normal(size=shape)
        W1, b1, _, _ = weights
        h_pre = x.reshape(-1, D_MODEL) @ W1 + (b1 if b1 is not None else 0.0)
        if np.abs(h_pre).min() > 1e-2:
            return x, weights
    raise AssertionError("no seed found")  # pragma: no cover


def numerical_grad(
    loss: Callable[[], float], array: np.ndarray, h: float = 1e-6
) -> np.ndarray:
    """Central differences of loss() with respect to each entry of array (perturbed in place)."""
    grad = np.zeros_like(array)
    for idx in np.ndindex(array.shape):
        original = array[idx]
        array[idx] = original + h
        plus = loss()
        array[idx] = original - h
        minus = loss()
        array[idx] = original
        grad[idx] = (plus - minus) / (2 * h)
    return grad


def assert_grads_match(
    analytic: Mapping[str, np.ndarray | None],
    numeric: Mapping[str, np.ndarray | None],
    atol: float = 2e-9,
) -> None:
    """Each analytic gradient has the shape of, and is close to, its finite-difference twin."""
    for name, expected in numeric.items():
        got = analytic[name]
        if expected is None:
            assert got is None, name
            continue
        assert got is not None and got.shape == expected.shape, name
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=atol, err_msg=name)


# ---------------------------------------------------------------- forward


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(D_MODEL,), (4, D_MODEL), (2, 3, D_MODEL)])
def test_forward_matches_naive(
    activation: str, bias: bool, shape: tuple[int, ...], Block: type[ffn.FeedForward],
) -> None:
    weights = random_weights(0, bias)
    x = np.random.default_rng(1).normal(size=shape)
    y = Block(*weights, activation=activation)(x)
    assert y.shape == shape and y.dtype == np.float64
    np.testing.assert_allclose(
        y, naive_ffn(x, weights, activation), rtol=1e-12, atol=1e-14
    )


def test_rows_are_independent(Block: type[ffn.FeedForward]) -> None:
    # The FFN is position-wise: each token's output depends on that token only.
    block = Block.random(D_MODEL, D_FF, seed=3)
    x = np.random.default_rng(4).normal(size=(6, D_MODEL))
    y = block(x)
    for i in range(6):
        np.testing.assert_allclose(block(x[i]), y[i], rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
def test_forward_spanning_many_blocks(activation: str, Block: type[ffn.FeedForward]) -> None:
    # Big enough that the hidden layer is processed in several row blocks,
    # with a partial last block; compared with a vectorised formula written here.
    d_model, d_ff, n = 16, 1000, 150
    W1, b1, W2, b2 = random_weights(5, True, d_model, d_ff)
    x = np.random.default_rng(6).normal(size=(n, d_model))
    h_pre = x @ W1 + b1
    h = {
        "relu": np.maximum(h_pre, 0.0),
        "gelu": 0.5 * h_pre * scipy.special.erfc(-h_pre / np.sqrt(2.0)),
        "gelu_tanh": 0.5
        * h_pre
        * (1 + np.tanh(np.sqrt(2 / np.pi) * (h_pre + 0.044715 * h_pre**3))),
        "silu": h_pre * scipy.special.expit(h_pre),
        "relu2": np.maximum(h_pre, 0.0) ** 2,
    }[activation]
    expected = h @ W2 + b2
    y = Block(W1, b1, W2, b2, activation=activation)(x)
    np.testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)


def test_default_activation_is_exact_gelu(Block: type[ffn.FeedForward]) -> None:
    weights = random_weights(0, True)
    x = np.random.default_rng(1).normal(size=(4, D_MODEL))
    assert Block(*weights).activation == "gelu"
    np.testing.assert_array_equal(
        Block(*weights)(x), Block(*weights, activation="gelu")(x)
    )
    assert Block.random(2, 3).activation == "gelu"


def test_activation_choice_matters(Block: type[ffn.FeedForward]) -> None:
    weights = random_weights(0, True)
    x = np.random.default_rng(1).normal(size=(4, D_MODEL))
    outputs = [Block(*weights, activation=a)(x) for a in ffn.ACTIVATIONS]
    for i in range(len(outputs)):
        for j in range(i):
            assert not np.allclose(outputs[i], outputs[j], rtol=1e-6, atol=0)


# ---------------------------------------------------------------- backward


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(D_MODEL,), (4, D_MODEL), (2, 3, D_MODEL)])
def test_backward_matches_finite_differences(
    activation: str, bias: bool, shape: tuple[int, ...], Block: type[ffn.FeedForward],
) -> None:
    x, weights = away_from_kink(shape, bias)
    R = np.random.default_rng(7).normal(size=shape)  # loss = sum(y * R), so dL/dy = R
    block = Block(*weights, activation=activation)
    block(x)
    analytic = {"x": block.backward(R), **block.grads}

    # Copies for the finite differences to perturb in place.
    W1, b1, W2, b2 = (None if w is None else w.copy() for w in weights)
    x = x.copy()

    def loss() -> float:
        return float(
            np.sum(Block(W1, b1, W2, b2, activation=activation)(x) * R)
        )

    numeric = {"x": numerical_grad(loss, x)}
    for name, array in {"W1": W1, "b1": b1, "W2": W2, "b2": b2}.items():
        numeric[name] = None if array is None else numerical_grad(loss, array)

    assert set(block.grads) == {"W1", "b1", "W2", "b2"}
    assert_grads_match(analytic, numeric)


def test_backward_spanning_many_blocks_matches_the_chain_rule(Block: type[ffn.FeedForward]) -> None:
    # Gradients written out with numpy here, for a hidden layer processed in
    # several row blocks (partial last block included).
    d_model, d_ff, n = 16, 1000, 150
    W1, b1, W2, b2 = random_weights(8, True, d_model, d_ff)
    x = np.random.default_rng(9).normal(size=(n, d_model))
    dy = np.random.default_rng(10).normal(size=(n, d_model))
    block = Block(W1, b1, W2, b2, activation="silu")
    block(x)
    dx = block.backward(dy)

    h_pre = x @ W1 + b1
    s = scipy.special.expit(h_pre)
    h = h_pre * s
    dh_pre = (dy @ W2.T) * (s * (1 + h_pre * (1 - s)))
    expected = {
        "W1": x.T @ dh_pre,
        "b1": dh_pre.sum(0),
        "W2": h.T @ dy,
        "b2": dy.sum(0),
    }
    np.testing.assert_allclose(dx, dh_pre @ W1.T, rtol=1e-11, atol=1e-11)
    for name, value in expected.items():
        np.testing.assert_allclose(
            block.grads[name], value, rtol=1e-11, atol=1e-10, err_msg=name
        )


def test_backward_uses_the_latest_forward_and_can_repeat(Block: type[ffn.FeedForward]) -> None:
    block = Block.random(D_MODEL, D_FF, seed=1)
    rng = np.random.default_rng(2)
    x1, x2 = rng.normal(size=(2, D_MODEL)), rng.normal(size=(4, D_MODEL))
    dy = rng.normal(size=(4, D_MODEL))

    fresh = Block.random(D_MODEL, D_FF, seed=1)
    fresh(x2)
    expected = fresh.backward(dy)

    block(x1)
    block(x2)
    first = block.backward(dy)
    grads = dict(block.grads)
    second = block.backward(dy)  # same forward, same dy: same answer (no accumulation)
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, first)
    for name, value in grads.items():
        np.testing.assert_array_equal(block.grads[name], value)


def test_grads_empty_before_backward(Block: type[ffn.FeedForward]) -> None:
    assert Block.random(2, 3).grads == {}


def test_gelu_tanh_backward_differs_from_exact(Block: type[ffn.FeedForward]) -> None:
    # Guards against a registry wiring both GELUs to the same derivative.
    weights = random_weights(0, True)
    x = np.random.default_rng(1).normal(size=(4, D_MODEL))
    dy = np.ones((4, D_MODEL))
    dxs = []
    for activation in ("gelu", "gelu_tanh"):
        block = Block(*weights, activation=activation)
        block(x)
        dxs.append(block.backward(dy))
    assert not np.allclose(dxs[0], dxs[1], rtol=1e-6, atol=0)


# ---------------------------------------------------------------- shapes: empty and NaN


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
@pytest.mark.parametrize("shape", [(0, D_MODEL), (2, 0, D_MODEL)])
def test_empty_input(activation: str, shape: tuple[int, ...], Block: type[ffn.FeedForward]) -> None:
    block = Block.random(D_MODEL, D_FF, activation=activation)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = block(np.zeros(shape))
        dx = block.backward(np.zeros(shape))
    assert y.shape == shape and dx.shape == shape
    for name, grad in block.grads.items():
        weight = getattr(block, name)
        assert grad is not None and grad.shape == weight.shape
        assert not grad.any()


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
def test_nan_propagates_to_its_row_only(activation: str, Block: type[ffn.FeedForward]) -> None:
    block = Block.random(D_MODEL, D_FF, activation=activation)
    x = np.ones((2, D_MODEL))
    x[0, 1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = block(x)
        dx = block.backward(np.ones_like(y))
    assert np.isnan(y[0]).all() and np.isfinite(y[1]).all()
    assert np.isnan(dx[0]).all() and np.isfinite(dx[1]).all()


# ---------------------------------------------------------------- dtypes


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
def test_float32_stays_float32_everywhere(activation: str, Block: type[ffn.FeedForward]) -> None:
    block = Block.random(8, 32, activation=activation, dtype=np.float32)
    x = np.random.default_rng(0).normal(size=(4, 8)).astype(np.float32)
    trace = block.forward_trace(x)
    dx = block.backward(np.ones((4, 8), dtype=np.float32))
    arrays = [
        block.W1,
        block.b1,
        block.W2,
        block.b2,
        trace.x,
        trace.h_pre,
        trace.h,
        trace.y,
        dx,
    ]
    arrays += list(block.grads.values())
    assert block.dtype == np.float32
    assert all(a is not None and a.dtype == np.float32 for a in arrays)


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
def test_float32_agrees_with_float64(activation: str, Block: type[ffn.FeedForward]) -> None:
    b32 = Block.random(8, 32, activation=activation, seed=4, dtype=np.float32)
    b64 = Block.random(8, 32, activation=activation, seed=4, dtype=np.float64)
    np.testing.assert_array_equal(
        b32.W1, b64.W1.astype(np.float32)
    )  # same draw, rounded
    x = np.random.default_rng(0).normal(size=(4, 8))
    np.testing.assert_allclose(b32(x.astype(np.float32)), b64(x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    ("x", "block_dtype"),
    [
        (np.ones((2, 3), dtype=np.float64), np.float32),  # cast down to the block
        (np.ones((2, 3), dtype=np.float32), np.float64),  # cast up to the block
        (np.ones((2, 3), dtype=np.float16), np.float32),
        (np.ones((2, 3), dtype=np.int64), np.float32),
        (np.ones((2, 3), dtype=np.int64), np.float64),
        (np.ones((2, 3), dtype=bool), np.float64),
        ([[1, 2, 3]], np.float64),
    ],
)
def test_input_is_cast_to_the_block_dtype(
    x: object, block_dtype: type, Block: type[ffn.FeedForward],
) -> None:
    block = Block.random(3, 4, dtype=block_dtype)
    y = block(x)
    assert y.dtype == block_dtype
    assert block.backward(np.ones_like(y, dtype=np.float64)).dtype == block_dtype
    assert all(g is None or g.dtype == block_dtype for g in block.grads.values())


def test_integer_and_list_weights_become_float64(Block: type[ffn.FeedForward]) -> None:
    block = Block(
        [[1, 0], [0, 1]],
        np.array([0, 1], dtype=np.int32),
        np.eye(2, dtype=np.float16),
        [True, False],
    )
    assert block.dtype == np.float64
    assert all(
        w is not None and w.dtype == np.float64
        for w in (block.W1, block.b1, block.W2, block.b2)
    )


# ---------------------------------------------------------------- inputs untouched


def test_nothing_the_caller_owns_is_written(Block: type[ffn.FeedForward]) -> None:
    W1, b1, W2, b2 = random_weights(0, True)
    x = np.random.default_rng(1).normal(size=(4, D_MODEL))
    dy = np.random.default_rng(2).normal(size=(4, D_MODEL))
    arrays = [W1, b1, W2, b2, x, dy]
    copies = [a.copy() for a in arrays]  # type: ignore[union-attr]
    for a in arrays:
        a.flags.writeable = False  # type: ignore[union-attr]
    block = Block(W1, b1, W2, b2)
    block.forward_trace(x)
    block(x)
    block.backward(dy)
    for a, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(a, c)


def test_non_contiguous_input(Block: type[ffn.FeedForward]) -> None:
    block = Block.random(D_MODEL, D_FF, seed=2)
    x = (
        np.random.default_rng(3).normal(size=(D_MODEL, 8))[:, ::2].T
    )  # (4, d_model), strided
    np.testing.assert_allclose(
        block(x), block(np.ascontiguousarray(x)), rtol=1e-15, atol=0
    )


# ---------------------------------------------------------------- attributes, trace, random


def test_attributes(Block: type[ffn.FeedForward]) -> None:
    W1, b1, W2, b2 = random_weights(0, True)
    block = Block(W1, b1, W2, b2, activation="silu")
    for mine, theirs in zip((block.W1, block.b1, block.W2, block.b2), (W1, b1, W2, b2),
                            strict=True):
        assert mine is not theirs and not mine.flags.writeable  # read-only copies
        np.testing.assert_array_equal(mine, theirs)
    assert (block.d_model, block.d_ff, block.activation) == (D_MODEL, D_FF, "silu")
    assert block.dtype == np.float64
    assert (
        repr(block)
        == "FeedForward(d_model=3, d_ff=5, activation='silu', bias=True, dtype=float64)"
    )
    no_b2 = Block(W1, b1, W2, None)
    assert no_b2.b2 is None and "bias='b1 only'" in repr(no_b2)


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
@pytest.mark.parametrize("shape", [(D_MODEL,), (4, D_MODEL), (2, 3, D_MODEL)])
def test_forward_trace(
    activation: str, shape: tuple[int, ...], Block: type[ffn.FeedForward],
) -> None:
    weights = random_weights(0, True)
    W1, b1, _, _ = weights
    x = np.random.default_rng(1).normal(size=shape)
    block = Block(*weights, activation=activation)
    trace = block.forward_trace(x)
    lead = shape[:-1]
    assert trace.h_pre.shape == trace.h.shape == (*lead, D_FF)
    assert trace.x.shape == trace.y.shape == shape

    assert b1 is not None
    expected_h_pre = np.array(
        [
            [
                sum(row[i] * W1[i, j] for i in range(D_MODEL)) + b1[j]
                for j in range(D_FF)
            ]
            for row in x.reshape(-1, D_MODEL).tolist()
        ]
    ).reshape(*lead, D_FF)
    np.testing.assert_allclose(trace.h_pre, expected_h_pre, rtol=1e-13, atol=1e-15)
    ref = REFERENCES[activation]
    expected_h = np.vectorize(ref)(trace.h_pre)
    np.testing.assert_allclose(trace.h, expected_h, rtol=2e-15, atol=2e-15)
    np.testing.assert_allclose(
        trace.y, naive_ffn(x, weights, activation), rtol=1e-12, atol=1e-14
    )
    np.testing.assert_array_equal(trace.x, x)
    # The stored intermediates are read-only so that backward cannot be corrupted.
    assert not trace.h_pre.flags.writeable and not trace.h.flags.writeable
    # A traced pass feeds backward like a plain call.
    np.testing.assert_array_equal(block.backward(np.ones(shape)).shape, shape)


def test_trace_is_frozen(Block: type[ffn.FeedForward]) -> None:
    trace = Block.random(2, 3).forward_trace(np.ones(2))
    assert isinstance(trace, ffn.FeedForwardTrace)
    with pytest.raises(AttributeError):
        trace.y = np.zeros(2)  # type: ignore[misc]


def test_random_is_deterministic_per_seed(Block: type[ffn.FeedForward]) -> None:
    a = Block.random(4, 16, seed=123)
    b = Block.random(4, 16, seed=123)
    c = Block.random(4, 16, seed=124)
    np.testing.assert_array_equal(a.W1, b.W1)
    np.testing.assert_array_equal(a.W2, b.W2)
    assert not np.array_equal(a.W1, c.W1)


def test_random_scales_and_biases(Block: type[ffn.FeedForward]) -> None:
    d_model, d_ff = 256, 1024
    block = Block.random(d_model, d_ff, seed=0)
    # 262,144 samples each: the sample std is within ~0.3% of the target.
    assert block.W1.std() == pytest.approx(1 / math.sqrt(d_model), rel=0.01)
    assert block.W2.std() == pytest.approx(1 / math.sqrt(d_ff), rel=0.01)
    assert abs(block.W1.mean()) < 0.01 / math.sqrt(
        d_model
    )  # ~5 standard errors of the mean
    assert block.b1 is not None and block.b2 is not None
    assert not block.b1.any() and not block.b2.any()
    assert block.b1.shape == (d_ff,) and block.b2.shape == (d_model,)
    assert block.W1.shape == (d_model, d_ff) and block.W2.shape == (d_ff, d_model)


def test_random_options(Block: type[ffn.FeedForward]) -> None:
    block = Block.random(
        3, 4, activation="relu", seed=None, dtype="float32", bias=False
    )
    assert block.activation == "relu" and block.dtype == np.float32
    assert block.b1 is None and block.b2 is None
    assert Block.random(3, 4, seed=np.int64(7)).d_ff == 4


# ---------------------------------------------------------------- memory
