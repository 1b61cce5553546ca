"""ffn.fast against the reference ffn: the same arguments, attributes and results.

Where both do the same operations in the same order (ReLU and SiLU: same matmuls, the same
elementwise formula) they must agree bit for bit. The GELU kernels are computed differently
(fast: ``relu(x) - |x| Q(|x|)`` and, in float32, a fitted erfc; reference: ``x Phi(x)``), so
those agree to a tolerance relative to the output's size: 1e-14 in float64 (a few roundings),
2e-6 in float32 (the fit's error and float32 rounding, ~30 eps). ``db1`` is summed block by
block in the fast path: with more than one block, the order of the sum differs (same tolerance).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ffn
import ffn.fast.blocks

SAME_OPERATIONS = ("relu", "silu", "relu2")
TOL = {np.dtype(np.float64): 1e-14, np.dtype(np.float32): 2e-6}


def pair(activation: str, dtype: type, d_model: int, d_ff: int, seed: int, bias: bool
         ) -> tuple[ffn.FeedForward, ffn.fast.FeedForward]:
    ref = ffn.FeedForward.random(d_model, d_ff, activation, seed=seed, dtype=dtype, bias=bias)
    b1 = None if ref.b1 is None else ref.b1 + np.asarray(0.25, dtype)  # a bias that matters
    args = (ref.W1, b1, ref.W2, ref.b2)
    return ffn.FeedForward(*args, activation), ffn.fast.FeedForward(*args, activation)


def assert_close(fast: np.ndarray | None, ref: np.ndarray | None, exact: bool) -> None:
    assert fast is not None and ref is not None
    assert fast.dtype == ref.dtype and fast.shape == ref.shape
    if exact:
        np.testing.assert_array_equal(fast, ref)
    else:
        scale = max(float(np.max(np.abs(ref), initial=0.0)), 1e-30)
        assert float(np.max(np.abs(fast - ref), initial=0.0)) <= TOL[ref.dtype] * scale


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    activation=st.sampled_from(ffn.ACTIVATIONS),
    dtype=st.sampled_from([np.float32, np.float64]),
    lead=st.lists(st.integers(0, 5), min_size=0, max_size=2),
    d_model=st.integers(1, 12),
    d_ff=st.integers(1, 40),
    bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_fast_block_gives_the_reference_results(
    activation: str, dtype: type, lead: list[int], d_model: int, d_ff: int, bias: bool,
    seed: int,
) -> None:
    ref, fast = pair(activation, dtype, d_model, d_ff, seed, bias)
    rng = np.random.default_rng(seed)
    x = (3.0 * rng.normal(size=(*lead, d_model))).astype(dtype)
    exact = activation in SAME_OPERATIONS
    assert_close(fast(x), ref(x), exact)
    dy = rng.normal(size=(*lead, d_model)).astype(dtype)
    assert_close(fast.backward(dy), ref.backward(dy), exact)
    assert fast.grads.keys() == ref.grads.keys()
    for name, g in ref.grads.items():
        if g is None:
            assert fast.grads[name] is None
        else:
            assert_close(fast.grads[name], g, exact)
    t_fast, t_ref = fast.forward_trace(x), ref.forward_trace(x)
    for name in ("x", "h_pre", "h", "y"):
        assert_close(getattr(t_fast, name), getattr(t_ref, name), exact)
    assert repr(fast) == repr(ref)


def test_many_blocks_of_rows_and_db1() -> None:
    # Enough rows for several blocks of elementwise work: db1 is summed in another order.
    ref, fast = pair("relu", np.float64, 8, 4096, seed=3, bias=True)
    x = np.random.default_rng(4).normal(size=(100, 8))
    assert_close(fast(x), ref(x), exact=True)
    dy = np.random.default_rng(5).normal(size=(100, 8))
    assert_close(fast.backward(dy), ref.backward(dy), exact=True)
    assert fast._block_rows < 100  # really several blocks
    assert_close(fast.grads["b1"], ref.grads["b1"], exact=False)


@pytest.mark.parametrize("name", ["relu", "relu_grad", "gelu", "gelu_grad", "silu",
                                  "silu_grad", "relu2", "relu2_grad"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_activations_give_the_reference_results(name: str, dtype: type) -> None:
    x = np.concatenate([np.linspace(-12, 12, 20001), [0.0, -0.0, np.inf, -np.inf]]).astype(dtype)
    fast, ref = getattr(ffn.fast, name)(x), getattr(ffn, name)(x)
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref))
    exact = name.startswith(("relu", "silu"))
    assert_close(np.nan_to_num(fast), np.nan_to_num(ref), exact)


def traced_peak(fn: Callable[[], object]) -> tuple[object, int]:
    """fn() and the peak of the memory it allocated (numpy reports to tracemalloc)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = fn()
        return result, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forward_allocates_only_what_backward_keeps(dtype: type) -> None:
    # backward keeps x @ W1 and h, two (N, d_ff) arrays; the forward pass may allocate
    # nothing else of that size (the activation runs on small, reused per-block scratch),
    # and from the second call with the same N it writes into the arrays of the last pass.
    n, d_model, d_ff = 1024, 32, 2048
    block = ffn.fast.FeedForward.random(d_model, d_ff, activation="gelu", dtype=dtype)
    x = np.random.default_rng(0).normal(size=(n, d_model)).astype(dtype)
    item = np.dtype(dtype).itemsize
    hidden = n * d_ff * item  # one (N, d_ff) array
    small = 5 * n * d_model * item + 100_000  # x's copy, y, dy, dx, overhead
    scratch = 2 * 8 * ffn.fast.blocks.BLOCK_ELEMENTS * item  # first call: per-thread slots

    _, first = traced_peak(lambda: block(x))
    assert 2 * hidden <= first <= 2 * hidden + scratch + small
    _, again = traced_peak(lambda: block(x))
    assert again <= small
    # backward: dL/dh_pre is its one (N, d_ff) array; then the weight gradients and the
    # per-block partial sums of db1 (one row of d_ff per block of rows).
    block.backward(np.ones_like(x))  # its scratch
    weights = 2 * d_model * d_ff * item
    partial = hidden // (ffn.fast.blocks.BLOCK_ELEMENTS // d_ff)
    _, backward = traced_peak(lambda: block.backward(np.ones_like(x)))
    assert hidden <= backward <= hidden + weights + partial + small


def test_arrays_handed_out_are_never_overwritten() -> None:
    # forward reuses the last pass's x @ W1 and h, but never once a trace has exposed them,
    # and never the output y.
    block = ffn.fast.FeedForward.random(3, 5, seed=5)
    rng = np.random.default_rng(6)
    x1, x2 = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    y1 = block(x1)
    trace = block.forward_trace(x1)
    kept = [a.copy() for a in (y1, trace.h_pre, trace.h, trace.y)]
    y2 = block(x2)
    block(x1)
    block.forward_trace(x2)
    block(x2)
    for a, k in zip((y1, trace.h_pre, trace.h, trace.y), kept, strict=True):
        np.testing.assert_array_equal(a, k)
    assert not np.shares_memory(y1, y2)
    # and backward uses the pass it follows
    block(x1)
    expected = ffn.fast.FeedForward.random(3, 5, seed=5)
    expected(x1)
    np.testing.assert_array_equal(block.backward(np.ones_like(x1)),
                                  expected.backward(np.ones_like(x1)))
