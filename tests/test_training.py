"""`ffn.fit`: one step against finite differences, training that learns, determinism, errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import ffn

D_MODEL, D_FF, N = 3, 5, 7
NAMES = ("W1", "b1", "W2", "b2")


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, D_MODEL)), rng.standard_normal((N, D_MODEL))


def start_block(seed: int = 1, bias: bool = True) -> ffn.FeedForward:
    """A silu block with non-zero biases (so the bias gradients are not special)."""
    rng = np.random.default_rng(seed)
    W1 = rng.standard_normal((D_MODEL, D_FF))
    W2 = rng.standard_normal((D_FF, D_MODEL))
    b1 = rng.standard_normal(D_FF) if bias else None
    b2 = rng.standard_normal(D_MODEL) if bias else None
    return ffn.FeedForward(W1, b1, W2, b2, activation="silu")


def params_of(block: ffn.FeedForward) -> dict[str, np.ndarray]:
    return {n: np.array(getattr(block, n)) for n in NAMES if getattr(block, n) is not None}


def reference_loss(p: dict[str, np.ndarray], X: np.ndarray, Y: np.ndarray) -> float:
    """The mean squared error, written out with math-module SiLU (not ffn's)."""
    h_pre = X @ p["W1"] + p.get("b1", 0.0)
    h = np.vectorize(lambda z: z / (1.0 + math.exp(-z)))(h_pre)
    y = h @ p["W2"] + p.get("b2", 0.0)
    return float(np.mean((y - Y) ** 2))


def numerical_gradient(p: dict[str, np.ndarray], X: np.ndarray,
                       Y: np.ndarray) -> dict[str, np.ndarray]:
    """Central finite differences of reference_loss, entry by entry."""
    eps = 1e-6
    grads = {}
    for name, w in p.items():
        g = np.zeros_like(w)
        for idx in np.ndindex(w.shape):
            plus = {k: v.copy() for k, v in p.items()}
            minus = {k: v.copy() for k, v in p.items()}
            plus[name][idx] += eps
            minus[name][idx] -= eps
            g[idx] = (reference_loss(plus, X, Y) - reference_loss(minus, X, Y)) / (2 * eps)
        grads[name] = g
    return grads


@pytest.mark.parametrize("bias", [True, False])
def test_one_sgd_step_follows_the_finite_difference_gradient(bias: bool) -> None:
    X, Y = data()
    block = start_block(bias=bias)
    before = params_of(block)
    lr = 0.1
    result = ffn.fit(block, X, Y, steps=1, lr=lr, optimizer="sgd")
    g = numerical_gradient(before, X, Y)
    after = params_of(result.block)
    assert set(after) == set(before)
    for name in before:
        np.testing.assert_allclose(after[name], before[name] - lr * g[name],
                                   rtol=0, atol=1e-8)


def test_first_adam_step_moves_each_weight_by_lr_against_its_gradient() -> None:
    # With m and v starting at 0, the bias-corrected first step is lr * g / (|g| + eps).
    X, Y = data()
    block = start_block()
    before = params_of(block)
    lr = 0.01
    after = params_of(ffn.fit(block, X, Y, steps=1, lr=lr, optimizer="adam").block)
    g = numerical_gradient(before, X, Y)
    for name in before:
        expected = before[name] - lr * g[name] / (np.abs(g[name]) + 1e-8)
        np.testing.assert_allclose(after[name], expected, rtol=0, atol=1e-9)


def test_three_adam_steps_match_the_algorithm_of_the_paper() -> None:
    # Algorithm 1 of Kingma & Ba (2015), run on finite-difference gradients.
    X, Y = data()
    p = params_of(start_block())
    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(w) for k, w in p.items()}
    for t in range(1, 4):
        g = numerical_gradient(p, X, Y)
        for k in p:
            m[k] = b1 * m[k] + (1 - b1) * g[k]
            v[k] = b2 * v[k] + (1 - b2) * g[k] ** 2
            p[k] = p[k] - lr * (m[k] / (1 - b1**t)) / (np.sqrt(v[k] / (1 - b2**t)) + eps)
    after = params_of(ffn.fit(start_block(), X, Y, steps=3, lr=lr).block)
    for k in p:
        np.testing.assert_allclose(after[k], p[k], rtol=0, atol=1e-7)


def test_losses_are_the_loss_before_each_step_and_after_the_last() -> None:
    X, Y = data()
    block = start_block()
    result = ffn.fit(block, X, Y, steps=4, lr=0.01)
    assert result.losses.shape == (5,)
    assert result.losses.dtype == np.float64
    assert result.losses[0] == pytest.approx(reference_loss(params_of(block), X, Y), rel=1e-12)
    assert result.losses[-1] == pytest.approx(
        reference_loss(params_of(result.block), X, Y), rel=1e-12)


@pytest.mark.parametrize("optimizer", ffn.OPTIMIZERS)
def test_loss_falls_on_a_learnable_problem(optimizer: str) -> None:
    # The targets come from a teacher block of the same shape: a perfect fit exists.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((64, 4))
    teacher = ffn.FeedForward.random(4, 16, activation="gelu", seed=10)
    student = ffn.FeedForward.random(4, 16, activation="gelu", seed=11)
    lr = 0.01 if optimizer == "adam" else 0.5
    losses = ffn.fit(student, X, teacher(X), steps=500, lr=lr, optimizer=optimizer).losses
    assert losses[-1] < 0.02 * losses[0]
    assert losses[-1] == losses.min() or losses[-1] < 1.01 * losses.min()


def test_the_starting_block_and_the_data_are_not_modified() -> None:
    X, Y = data()
    X.flags.writeable = False
    Y.flags.writeable = False
    block = start_block()
    before = params_of(block)
    result = ffn.fit(block, X, Y, steps=3, lr=0.1)
    for name, w in before.items():
        assert np.array_equal(getattr(block, name), w)
    assert result.block is not block
    assert result.block.activation == block.activation


def test_runs_are_deterministic() -> None:
    X, Y = data()
    block = start_block()
    runs = [ffn.fit(block, X, Y, steps=20, lr=0.01).losses for _ in range(2)]
    assert np.array_equal(*runs)


def test_float32_blocks_stay_float32() -> None:
    X, Y = data()
    block = ffn.FeedForward.random(D_MODEL, D_FF, dtype=np.float32, seed=0)
    result = ffn.fit(block, X, Y, steps=5, lr=0.01)
    assert result.block.dtype == np.float32
    assert result.block.W1.dtype == np.float32
    assert result.losses[-1] < result.losses[0]


def test_a_diverging_run_raises() -> None:
    X, Y = data()
    with pytest.raises(FloatingPointError, match=r"the loss became .* after .* steps: lower lr"):
        ffn.fit(start_block(), X * 1e3, Y, steps=50, lr=1e6, optimizer="sgd")


def test_mean_squared_error_matches_a_plain_loop() -> None:
    y = [[1.0, 2.0], [3.0, -4.0]]
    t = [[0.5, 2.0], [1.0, -1.0]]
    expected = sum((a - b) ** 2 for ra, rb in zip(y, t, strict=True)
                   for a, b in zip(ra, rb, strict=True)) / 4
    assert ffn.mean_squared_error(y, t) == expected
    with pytest.raises(ValueError, match=re.escape("y has shape (2,) but target has shape (3,)")):
        ffn.mean_squared_error([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="empty"):
        ffn.mean_squared_error([], [])


X_OK, Y_OK = data()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"block": "block"}, TypeError, "block must be an ffn.FeedForward, got str"),
        ({"X": X_OK[:, :2]}, ValueError,
         "X must have shape (n, d_model) = (n, 3) with n >= 1, got shape (7, 2)"),
        ({"X": X_OK[0]}, ValueError,
         "X must have shape (n, d_model) = (n, 3) with n >= 1, got shape (3,)"),
        ({"Y": Y_OK[:4]}, ValueError, "X has shape (7, 3) but Y has shape (4, 3)"),
        ({"Y": np.full((N, D_MODEL), np.nan)}, ValueError, "Y contains NaN or infinity"),
        ({"X": "abc"}, TypeError, "X must be a real numeric array, got dtype <U3"),
        ({"steps": 0}, ValueError, "steps must be positive, got 0"),
        ({"steps": 2.0}, TypeError, "steps must be an int, got float 2.0"),
        ({"lr": -0.1}, ValueError, "lr must be in (0, inf), got -0.1"),
        ({"lr": float("inf")}, ValueError, "lr must be in (0, inf), got inf"),
        ({"lr": "0.1"}, TypeError, "lr must be a real number, got str '0.1'"),
        ({"lr": True}, TypeError, "lr must be a real number, got bool True"),
        ({"optimizer": "rmsprop"}, ValueError,
         "unknown optimizer 'rmsprop'; valid: 'adam', 'sgd'"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, object], error: type[Exception],
                                 message: str) -> None:
    args: dict[str, object] = {"block": start_block(), "X": X_OK, "Y": Y_OK, "steps": 2,
                               "lr": 0.01}
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        ffn.fit(**(args | kwargs))  # type: ignore[arg-type]
