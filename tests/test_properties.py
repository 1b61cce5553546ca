"""Property-based tests of `ffn.FeedForward` and the activations (hypothesis).

Shapes, leading dimensions, dtypes and values are drawn at random; the
properties are those of the mathematics, checked against oracles that do not
share code with the package (numpy formulas, central finite differences).

Settings: no example database (hypothesis 6.170 still caches the constants
it finds in our source under .hypothesis/constants/, which git ignores), no
deadline (timings on a shared machine are noisy), a modest number of
examples, and derandomized runs so a failure reproduces on the next run.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ffn
from tests.test_errors import ELEMENTWISE
from tests.test_feedforward import numerical_grad

SETTINGS = settings(
    database=None,
    deadline=None,
    max_examples=40,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

DTYPES = [np.float32, np.float64]
LIMIT = 1e4  # "finite input up to 1e4 in magnitude": no NaN, no warning

# Largest |act'(x)| over all x: bounds how a rounding error in h_pre grows in h.
MAX_SLOPE = {"relu": 1.0, "gelu": 1.13, "gelu_tanh": 1.13, "silu": 1.1}


@contextmanager
def strict() -> Iterator[None]:
    """Every warning is an error, and so is overflow, 0/0 or inf - inf.

    Underflow stays ignored (numpy's default): the tails of exp(-x**2 / 2)
    and of the sigmoid underflow to 0 by design.
    """
    with (
        warnings.catch_warnings(),
        np.errstate(over="raise", divide="raise", invalid="raise"),
    ):
        warnings.simplefilter("error")
        yield


@st.composite
def blocks(
    draw: st.DrawFn, dtypes: list[type] | None = None, max_d_ff: int = 12
) -> ffn.FeedForward:
    """A FeedForward with random small sizes, activation, biases and dtype."""
    d_model = draw(st.integers(1, 6), label="d_model")
    d_ff = draw(st.integers(1, max_d_ff), label="d_ff")
    activation = draw(st.sampled_from(ffn.ACTIVATIONS), label="activation")
    dtype = draw(st.sampled_from(dtypes or DTYPES), label="dtype")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((d_model, d_ff)) / math.sqrt(d_model)
    W2 = rng.standard_normal((d_ff, d_model)) / math.sqrt(d_ff)
    b1 = rng.standard_normal(d_ff) if draw(st.booleans(), label="b1") else None
    b2 = rng.standard_normal(d_model) if draw(st.booleans(), label="b2") else None
    return ffn.FeedForward(
        *(None if w is None else w.astype(dtype) for w in (W1, b1, W2, b2)),
        activation=activation,
    )


def inputs(
    block: ffn.FeedForward, lead: tuple[int, ...], dtype: type | None = None, bound: float = 3.0
) -> st.SearchStrategy[np.ndarray]:
    """x of shape (*lead, d_model): any float in [-bound, bound], +-0 and subnormals included."""
    dtype = dtype or block.dtype.type
    width = 32 if dtype == np.float32 else 64
    return hnp.arrays(
        dtype,
        (*lead, block.d_model),
        elements=st.floats(-bound, bound, width=width, allow_subnormal=True),
    )


def rounding_bound(block: ffn.FeedForward, x: np.ndarray) -> np.ndarray:
    """A bound on the rounding error of each entry of block(x), shape (..., d_model).

    A dot product of length k computed in any order errs by at most
    k * eps * sum |terms| (to first order). Propagating that through both
    layers with the absolute values of every term, and an allowance for the
    activation's own few-ulp error, bounds the difference between two
    evaluations that only order their sums differently.
    """
    eps = float(np.finfo(block.dtype).eps)
    absx = np.abs(x.astype(np.float64))
    W1, W2 = np.abs(block.W1.astype(np.float64)), np.abs(block.W2.astype(np.float64))
    b1 = 0.0 if block.b1 is None else np.abs(block.b1.astype(np.float64))
    b2 = 0.0 if block.b2 is None else np.abs(block.b2.astype(np.float64))
    h_pre_abs = absx @ W1 + b1  # bounds |h_pre| and the size of its terms
    err_h_pre = (block.d_model + 1) * eps * h_pre_abs
    # |act(t)| <= |t| for relu, gelu, gelu_tanh and silu, their slope at most MAX_SLOPE;
    # squared ReLU has |act(t)| <= t**2 and slope 2|t|. The activation adds ~16 ulp.
    if block.activation == "relu2":
        h_abs, slope = h_pre_abs**2, 2 * h_pre_abs
    else:
        h_abs, slope = h_pre_abs, MAX_SLOPE[block.activation]
    err_h = slope * err_h_pre + 16 * eps * h_abs
    return 2 * ((block.d_ff + 1) * eps * (h_abs @ W2 + b2) + err_h @ W2)


# ---------------------------------------------------------------- position-wise


@SETTINGS
@given(data=st.data(), block=blocks(), n=st.integers(1, 7))
def test_each_row_alone_equals_the_batched_result(
    data: st.DataObject, block: ffn.FeedForward, n: int
) -> None:
    # Not bit for bit: numpy's BLAS multiplies one row (a vector) with a
    # different kernel than a batch, and may order each dot product's sum
    # differently. The difference must stay within the rounding bound.
    x = data.draw(inputs(block, (n,)), label="x")
    y = block(x)
    bound = rounding_bound(block, x)
    for i in range(n):
        row = block(x[i])
        assert row.shape == (block.d_model,) and row.dtype == block.dtype
        assert np.all(np.abs(row - y[i]) <= bound[i]), (row, y[i], bound[i])


@SETTINGS
@given(
    data=st.data(),
    block=blocks(),
    lead=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
)
def test_leading_dimensions_are_only_a_reshape(
    data: st.DataObject, block: ffn.FeedForward, lead: tuple[int, ...]
) -> None:
    # The same rows in the same order make the same calls: bit for bit equal.
    x = data.draw(inputs(block, lead), label="x")
    y = block(x)
    assert y.shape == x.shape and y.dtype == block.dtype
    flat = block(x.reshape(-1, block.d_model))
    np.testing.assert_array_equal(y.reshape(-1, block.d_model), flat)
    dy = np.ones_like(y)
    block(x)
    dx = block.backward(dy)
    assert dx.shape == x.shape and dx.dtype == block.dtype


@SETTINGS
@given(data=st.data(), block=blocks(), n=st.integers(2, 9))
def test_permuting_rows_permutes_the_output(
    data: st.DataObject, block: ffn.FeedForward, n: int
) -> None:
    x = data.draw(inputs(block, (n,)), label="x")
    perm = np.array(data.draw(st.permutations(range(n)), label="perm"))
    y = block(x)
    y_perm = block(x[perm])
    assert np.all(np.abs(y_perm - y[perm]) <= rounding_bound(block, x[perm]))


# ---------------------------------------------------------------- dtypes


@SETTINGS
@given(
    data=st.data(),
    block=blocks(),
    x_dtype=st.sampled_from([np.float16, np.float32, np.float64, np.int32, np.bool_]),
    lead=hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3),
)
def test_the_block_dtype_wins(
    data: st.DataObject, block: ffn.FeedForward, x_dtype: type, lead: tuple[int, ...]
) -> None:
    x = data.draw(hnp.arrays(x_dtype, (*lead, block.d_model)), label="x")
    assume(np.all(np.isfinite(x.astype(np.float64))))  # float16 draws may hold inf
    with strict():
        trace = block.forward_trace(x)
        dx = block.backward(np.ones(trace.y.shape, dtype=x_dtype))
    arrays = [trace.x, trace.h_pre, trace.h, trace.y, dx]
    arrays += [g for g in block.grads.values() if g is not None]
    assert all(a.dtype == block.dtype for a in arrays)
    assert dx.shape == x.shape


@SETTINGS
@given(
    name=st.sampled_from(list(ELEMENTWISE)),
    x=hnp.arrays(
        st.sampled_from([np.float32, np.float64]),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
        elements=st.floats(-LIMIT, LIMIT, width=32),
    ),
)
def test_activations_keep_dtype_and_shape_and_stay_finite(name: str, x: np.ndarray) -> None:
    with strict():
        out = ELEMENTWISE[name](x)
    assert out.dtype == x.dtype and out.shape == x.shape
    assert np.all(np.isfinite(out))


# ---------------------------------------------------------------- backward


@settings(SETTINGS, max_examples=30)
@given(
    data=st.data(),
    block=blocks(dtypes=[np.float64], max_d_ff=6),
    lead=hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3),
)
def test_backward_agrees_with_central_differences(
    data: st.DataObject, block: ffn.FeedForward, lead: tuple[int, ...]
) -> None:
    x = data.draw(inputs(block, lead), label="x")
    h_pre = block.forward_trace(x).h_pre
    # At 0 relu has no derivative and relu2 (relu squared) no second one: a central difference
    # there is off by about step/2 times the jump in the second derivative (1e-8 seen, where the
    # tolerance below assumes a third derivative), so both stay away from their kink.
    if block.activation in ("relu", "relu2"):
        assume(np.abs(h_pre).min() > 1e-3)
    R = np.random.default_rng(7).standard_normal(x.shape)  # loss = sum(y * R)
    dx = block.backward(R)
    analytic = {"x": dx, **block.grads}

    arrays = {"x": x.copy(), "W1": block.W1.copy(), "W2": block.W2.copy()}
    arrays |= {"b1": None if block.b1 is None else block.b1.copy()}
    arrays |= {"b2": None if block.b2 is None else block.b2.copy()}

    def loss() -> float:
        fresh = ffn.FeedForward(
            arrays["W1"], arrays["b1"], arrays["W2"], arrays["b2"], activation=block.activation
        )
        return float(np.sum(fresh(arrays["x"]) * R))

    for name, array in arrays.items():
        if array is None:
            assert analytic[name] is None, name
            continue
        numeric = numerical_grad(loss, array, h=1e-6)
        got = analytic[name]
        assert got is not None and got.shape == array.shape, name
        # Step 1e-6: truncation error ~1e-12 * f''', rounding ~1e-16 * |loss| / 1e-6.
        scale = 1.0 + float(np.abs(R).sum())
        np.testing.assert_allclose(got, numeric, rtol=1e-7, atol=1e-9 * scale, err_msg=name)


# ---------------------------------------------------------------- large finite input


@SETTINGS
@given(
    data=st.data(),
    block=blocks(),
    lead=hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=4),
)
def test_finite_input_up_to_1e4_gives_finite_output_without_warnings(
    data: st.DataObject, block: ffn.FeedForward, lead: tuple[int, ...]
) -> None:
    x = data.draw(inputs(block, lead, bound=LIMIT), label="x")
    dy = data.draw(inputs(block, lead, bound=LIMIT), label="dy")
    with strict():
        y = block(x)
        dx = block.backward(dy)
    assert np.all(np.isfinite(y)) and np.all(np.isfinite(dx))
    assert all(g is None or np.all(np.isfinite(g)) for g in block.grads.values())


@pytest.mark.parametrize("dtype", DTYPES)
def test_float32_block_tracks_float64(dtype: type) -> None:
    # Not a hypothesis test: one larger block, where the float32 kernels
    # (their own GELU, in float32) must agree with float64 to float32 accuracy.
    for activation in ffn.ACTIVATIONS:
        b64 = ffn.FeedForward.random(64, 256, activation=activation, seed=1)
        block = ffn.FeedForward.random(64, 256, activation=activation, seed=1, dtype=dtype)
        x = np.random.default_rng(2).standard_normal((40, 64))
        y = block(x.astype(dtype))
        np.testing.assert_allclose(y, b64(x), rtol=2e-4, atol=2e-5, err_msg=activation)
