"""`ffn.Sublayer`: pre- and post-norm against the formulas composed by hand, backward
against central finite differences (with and without dropout), dropout's statistics
and seeding, and every error."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ffn
from tests.test_errors import raises
from tests.test_feedforward import numerical_grad

D_MODEL, D_FF = 4, 6


def parts(seed: int = 0, gated: bool = False) -> tuple[ffn.FeedForward | ffn.GatedFeedForward,
                                                       ffn.LayerNorm]:
    rng = np.random.default_rng(seed)
    if gated:
        block: ffn.FeedForward | ffn.GatedFeedForward = ffn.GatedFeedForward.random(
            D_MODEL, D_FF, variant="geglu", seed=seed, bias=True)
    else:
        block = ffn.FeedForward(rng.normal(size=(D_MODEL, D_FF)), rng.normal(size=D_FF),
                                rng.normal(size=(D_FF, D_MODEL)), rng.normal(size=D_MODEL))
    norm = ffn.LayerNorm(D_MODEL, gamma=1 + 0.3 * rng.normal(size=D_MODEL),
                         beta=0.2 * rng.normal(size=D_MODEL))
    return block, norm


def by_hand(x: np.ndarray, placement: str, seed: int = 0, gated: bool = False) -> np.ndarray:
    block, norm = parts(seed, gated)  # fresh objects: nothing shared with the sublayer
    if placement == "pre":
        return x + block(norm(x))
    return norm(x + block(x))


@pytest.mark.parametrize("placement", ffn.PLACEMENTS)
@pytest.mark.parametrize("gated", [False, True])
@pytest.mark.parametrize("shape", [(D_MODEL,), (3, D_MODEL), (2, 3, D_MODEL)])
def test_forward_matches_the_formula(placement: str, gated: bool, shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(1).normal(size=shape)
    sub = ffn.Sublayer(*parts(0, gated), placement=placement)
    y = sub(x)
    assert y.shape == shape and y.dtype == np.float64
    np.testing.assert_array_equal(y, by_hand(x, placement, 0, gated))
    np.testing.assert_array_equal(sub.forward(x, training=True), y)  # dropout=0: no change


def test_pre_and_post_differ_and_only_post_normalises_the_output() -> None:
    x = np.random.default_rng(2).normal(loc=3.0, size=(5, D_MODEL))
    block, _ = parts()
    norm = ffn.LayerNorm(D_MODEL)
    pre = ffn.Sublayer(block, norm, placement="pre")(x)
    post = ffn.Sublayer(block, norm, placement="post")(x)
    assert not np.allclose(pre, post)
    np.testing.assert_allclose(post.mean(axis=-1), 0.0, atol=1e-14)
    assert np.abs(pre.mean(axis=-1)).min() > 0.1


def test_a_zero_ffn_makes_pre_norm_the_identity() -> None:
    # With W2 = 0 and b2 = 0 the FFN outputs zeros: pre-norm leaves x as it is,
    # post-norm still normalises it.
    rng = np.random.default_rng(3)
    block = ffn.FeedForward(rng.normal(size=(D_MODEL, D_FF)), None,
                            np.zeros((D_FF, D_MODEL)), None)
    norm = ffn.LayerNorm(D_MODEL)
    x = rng.normal(size=(3, D_MODEL))
    np.testing.assert_array_equal(ffn.Sublayer(block, norm, "pre")(x), x)
    np.testing.assert_array_equal(ffn.Sublayer(block, norm, "post")(x), norm(x))


@pytest.mark.parametrize(("dtype", "value"), [(np.float32, 1e20), (np.float64, 1e300)])
def test_post_norm_of_a_huge_equal_row_is_beta(dtype: type, value: float) -> None:
    # Issue 26, item 1: LN(x + FFN(x)) with a zero FFN and equal entries of any finite size.
    block = ffn.FeedForward(np.ones((D_MODEL, D_FF), dtype), None,
                            np.zeros((D_FF, D_MODEL), dtype), None)
    beta = np.linspace(-1.0, 1.0, D_MODEL).astype(dtype)
    sub = ffn.Sublayer(block, ffn.LayerNorm(D_MODEL, beta=beta), "post")
    y = sub(np.full((2, D_MODEL), value, dtype))
    np.testing.assert_array_equal(y, np.broadcast_to(beta, (2, D_MODEL)))


# ---------------------------------------------------------------- backward


@pytest.mark.parametrize("placement", ffn.PLACEMENTS)
@pytest.mark.parametrize("gated", [False, True])
@pytest.mark.parametrize("dropout", [0.0, 0.4])
def test_backward_matches_finite_differences(placement: str, gated: bool, dropout: float) -> None:
    shape = (3, D_MODEL)
    x = np.random.default_rng(4).normal(size=shape)
    R = np.random.default_rng(5).normal(size=shape)  # loss = sum(y * R): dL/dy = R
    block, norm = parts(6, gated)
    sub = ffn.Sublayer(block, norm, placement, dropout=dropout, seed=7)
    sub(x, training=True)
    if dropout:
        mask = sub.dropout_mask
        assert mask is not None and 0 < mask.sum() < mask.size  # some dropped, some kept
    analytic = {"x": sub.backward(R), **sub.grads}

    # A fresh sublayer with the same seed draws the same mask at its first training pass,
    # so the loss below is the same function of the parameters as the one above.
    b2, n2 = parts(6, gated)
    params = {"x": x.copy()}
    for name in analytic:
        if name == "x":
            continue
        owner = n2 if name in ("gamma", "beta") else b2
        params[name] = np.array(getattr(owner, name))  # writable copies, perturbed in place

    def loss() -> float:
        # Layers keep read-only copies of their weights: build fresh ones from the perturbed.
        if gated:
            block: ffn.FeedForward | ffn.GatedFeedForward = ffn.GatedFeedForward(
                *(params[k] for k in ("W", "V", "W2", "b", "c", "b2")), variant=b2.variant)
        else:
            block = ffn.FeedForward(*(params[k] for k in ("W1", "b1", "W2", "b2")),
                                    activation=b2.activation)
        norm = ffn.LayerNorm(n2.d_model, n2.eps, params["gamma"], params["beta"])
        fresh = ffn.Sublayer(block, norm, placement, dropout=dropout, seed=7)
        return float(np.sum(fresh(params["x"], training=True) * R))

    for name, array in params.items():
        expected = numerical_grad(loss, array)
        got = analytic[name]
        assert got is not None and got.shape == expected.shape, name
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8, err_msg=name)


def test_pre_norm_passes_the_gradient_through_the_residual() -> None:
    # dx = dy + (path through the FFN and the norm); the FFN path alone is
    # what the block and the norm give when backpropagated by hand.
    x = np.random.default_rng(8).normal(size=(2, D_MODEL))
    dy = np.random.default_rng(9).normal(size=(2, D_MODEL))
    sub = ffn.Sublayer(*parts(10), placement="pre")
    sub(x)
    got = sub.backward(dy)
    b2, n2 = parts(10)
    b2(n2(x))
    np.testing.assert_allclose(got - dy, n2.backward(b2.backward(dy)), rtol=1e-14, atol=1e-15)


# ---------------------------------------------------------------- dropout


def test_dropout_zeroes_a_fraction_p_and_rescales_the_rest() -> None:
    p, n = 0.3, 4000
    x = np.random.default_rng(11).normal(size=(n, D_MODEL))
    block, norm = parts(12)
    sub = ffn.Sublayer(block, norm, "pre", dropout=p, seed=13)
    y = sub(x, training=True)
    mask = sub.dropout_mask
    assert mask is not None and mask.shape == x.shape and mask.dtype == np.bool_
    f = by_hand(x, "pre", 12) - x  # the FFN output without dropout
    np.testing.assert_allclose(y - x, np.where(mask, f / (1 - p), 0.0), rtol=1e-12, atol=1e-12)
    # The dropped fraction is a binomial proportion: within 5 standard deviations of p.
    dropped = 1 - mask.mean()
    assert abs(dropped - p) < 5 * math.sqrt(p * (1 - p) / mask.size)


def test_dropout_is_off_in_evaluation_mode_and_seeded_in_training() -> None:
    x = np.random.default_rng(14).normal(size=(6, D_MODEL))
    block, norm = parts(15)
    plain = ffn.Sublayer(block, norm, "post")(x)
    sub = ffn.Sublayer(block, norm, "post", dropout=0.5, seed=16)
    np.testing.assert_array_equal(sub(x), plain)
    assert sub.dropout_mask is None
    first = sub(x, training=True)
    second = sub(x, training=True)  # the generator moves on: a new mask
    assert not np.array_equal(first, second)
    again = ffn.Sublayer(block, norm, "post", dropout=0.5, seed=16)
    np.testing.assert_array_equal(again(x, training=True), first)
    assert sub.dropout == 0.5


def test_grads_hold_the_block_and_norm_gradients() -> None:
    block, norm = parts(17, gated=True)
    sub = ffn.Sublayer(block, norm)
    sub(np.ones((2, D_MODEL)) + np.arange(D_MODEL))
    sub.backward(np.ones((2, D_MODEL)))
    assert set(sub.grads) == {"W", "V", "W2", "b", "c", "b2", "gamma", "beta"}
    assert sub.block is block and sub.norm is norm and sub.d_model == D_MODEL


def test_float32_sublayer() -> None:
    block = ffn.FeedForward.random(D_MODEL, D_FF, dtype=np.float32)
    sub = ffn.Sublayer(block, ffn.LayerNorm(D_MODEL, dtype=np.float32), dropout=0.1)
    y = sub(np.ones((2, D_MODEL)) * np.arange(D_MODEL), training=True)
    assert sub.dtype == np.float32 and y.dtype == np.float32
    assert sub.backward(np.ones((2, D_MODEL))).dtype == np.float32


# ---------------------------------------------------------------- errors


def test_constructor_errors() -> None:
    block, norm = parts()
    with raises(TypeError, "block must be a FeedForward or GatedFeedForward, got Linear"):
        ffn.Sublayer(ffn.Linear(np.ones((4, 4))), norm)  # type: ignore[arg-type]
    with raises(TypeError, "norm must be a LayerNorm or RMSNorm, got NoneType"):
        ffn.Sublayer(block, None)  # type: ignore[arg-type]
    with raises(ValueError, "norm has d_model 5 but block has d_model 4"):
        ffn.Sublayer(block, ffn.LayerNorm(5))
    with raises(TypeError, "norm has dtype float32 but block has dtype float64"):
        ffn.Sublayer(block, ffn.LayerNorm(D_MODEL, dtype=np.float32))
    with raises(ValueError, "unknown placement 'middle'; valid: 'pre', 'post'"):
        ffn.Sublayer(block, norm, placement="middle")
    with raises(ValueError, "dropout must be in [0, 1), got 1.0"):
        ffn.Sublayer(block, norm, dropout=1.0)
    with raises(ValueError, "dropout must be in [0, 1), got -0.1"):
        ffn.Sublayer(block, norm, dropout=-0.1)
    with raises(ValueError, "dropout must be in [0, 1), got nan"):
        ffn.Sublayer(block, norm, dropout=float("nan"))
    with raises(TypeError, "dropout must be a real number, got str '0.1'"):
        ffn.Sublayer(block, norm, dropout="0.1")  # type: ignore[arg-type]


def test_forward_and_backward_errors() -> None:
    sub = ffn.Sublayer(*parts())
    with raises(RuntimeError, "backward() called before a forward pass: call sublayer(x) first"):
        sub.backward(np.ones(D_MODEL))
    with raises(ValueError, "x has last dimension 3 but d_model is 4 (x.shape=(2, 3))"):
        sub(np.ones((2, 3)))
    with raises(TypeError, "training must be a bool, got str 'yes'"):
        sub(np.ones(D_MODEL), training="yes")  # type: ignore[arg-type]
    sub(np.ones((2, D_MODEL)))
    with raises(RuntimeError, "dy has shape (4,) but the last forward output has shape (2, 4)"):
        sub.backward(np.ones(D_MODEL))
    with raises(TypeError, "dy must be a real numeric array, got None"):
        sub.backward(None)


@pytest.mark.parametrize("bad", [{"x": np.ones((2, 3))}, {"training": "yes"}])
def test_a_failed_forward_leaves_nothing_for_backward(bad: dict[str, object]) -> None:
    # A forward that raises (`training="yes"`) must leave no pass behind: else backward would
    # run on the pass before, without its dropout mask. Every layer does the same.
    x = np.random.default_rng(20).normal(size=(2, D_MODEL))
    sub = ffn.Sublayer(*parts(), dropout=0.5, seed=21)
    sub(x, training=True)
    with pytest.raises((TypeError, ValueError)):
        sub(**({"x": x, "training": True} | bad))  # type: ignore[arg-type]
    assert sub.dropout_mask is None
    with raises(RuntimeError, "backward() called before a forward pass: call sublayer(x) first"):
        sub.backward(np.ones_like(x))


@pytest.mark.parametrize("placement", ffn.PLACEMENTS)
@pytest.mark.parametrize("run", ["block", "norm"])
def test_backward_is_its_own_forwards_when_the_parts_ran_in_between(placement: str,
                                                                    run: str) -> None:
    # Issue 26: running the wrapped block (or norm) directly between the sublayer's forward
    # and backward silently changed dx.
    rng = np.random.default_rng(22)
    x, other, dy = (rng.normal(size=(3, D_MODEL)) for _ in range(3))
    alone = ffn.Sublayer(*parts(23), placement, dropout=0.3, seed=24)
    alone(x, training=True)
    expected = alone.backward(dy)
    sub = ffn.Sublayer(*parts(23), placement, dropout=0.3, seed=24)
    sub(x, training=True)
    getattr(sub, run)(other)  # the part's own last pass is now about other input
    np.testing.assert_array_equal(sub.backward(dy), expected)
    for name, value in alone.grads.items():
        np.testing.assert_array_equal(sub.grads[name], value, err_msg=name)
