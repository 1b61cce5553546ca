"""`ffn.Linear` against a row-by-row Python computation."""

from __future__ import annotations

import numpy as np
import pytest

import ffn


def naive_linear(x: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """y[..., j] = sum_i x[..., i] W[i, j] + b[j], one row at a time in plain Python."""
    rows = x.reshape(-1, x.shape[-1]).tolist()
    out = []
    for row in rows:
        out.append(
            [
                sum(row[i] * float(W[i, j]) for i in range(W.shape[0]))
                + (float(b[j]) if b is not None else 0.0)
                for j in range(W.shape[1])
            ]
        )
    return np.array(out).reshape(*x.shape[:-1], W.shape[1])


@pytest.fixture
def weights() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    return rng.normal(size=(4, 3)), rng.normal(size=3)


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("shape", [(4,), (5, 4), (2, 3, 4), (0, 4), (2, 0, 4)])
def test_matches_naive(
    weights: tuple[np.ndarray, np.ndarray], with_bias: bool, shape: tuple[int, ...]
) -> None:
    W, b = weights
    bias = b if with_bias else None
    x = np.random.default_rng(2).normal(size=shape)
    y = ffn.Linear(W, bias)(x)
    assert y.shape == (*shape[:-1], 3)
    np.testing.assert_allclose(y, naive_linear(x, W, bias), rtol=1e-13, atol=1e-15)


def test_attributes(weights: tuple[np.ndarray, np.ndarray]) -> None:
    W, b = weights
    lin = ffn.Linear(W, b)
    assert (lin.in_features, lin.out_features) == (4, 3)
    assert (lin.d_in, lin.d_out) == (4, 3)  # every layer's widths, by the same names
    assert lin.W is not W and lin.b is not b  # read-only copies: nobody can change them
    assert not lin.W.flags.writeable and not lin.b.flags.writeable
    np.testing.assert_array_equal(lin.W, W)
    assert lin.dtype == np.float64
    assert ffn.Linear(W).b is None
    assert (
        repr(lin) == "Linear(in_features=4, out_features=3, bias=True, dtype=float64)"
    )


def test_row_vector_convention() -> None:
    # x @ W, not W @ x: a (1, 2) row times a (2, 3) matrix.
    lin = ffn.Linear([[1, 2, 3], [4, 5, 6]], [10, 20, 30])
    assert lin([1, 1]).tolist() == [15.0, 27.0, 39.0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_follows_the_weights(dtype: type) -> None:
    W = np.ones((2, 2), dtype=dtype)
    lin = ffn.Linear(W, np.zeros(2, dtype=dtype))
    for x in (
        [1, 2],
        np.array([1.0, 2.0]),
        np.array([1, 2], dtype=np.float32),
        [True, False],
    ):
        assert lin(x).dtype == dtype


def test_list_and_integer_weights_become_float64() -> None:
    lin = ffn.Linear([[1, 0], [0, 1]], np.array([1, 2], dtype=np.int32))
    assert lin.dtype == np.float64 and lin.W.dtype == np.float64 and lin.b is not None
    assert lin.b.dtype == np.float64


def test_inputs_are_not_written(weights: tuple[np.ndarray, np.ndarray]) -> None:
    W, b = weights
    x = np.random.default_rng(3).normal(size=(2, 4))
    arrays = (x, W, b)
    copies = [a.copy() for a in arrays]
    for a in arrays:
        a.flags.writeable = False
    y = ffn.Linear(W, b)(x)
    for a, c in zip(arrays, copies, strict=True):
        np.testing.assert_array_equal(a, c)
    assert y.flags.writeable
