"""The 2026 options of `ffn.MixtureOfExperts` on their own: hash routing's table and token ids,
zero-computation experts and what a token costs, sqrt(softplus) scores, each held to finite
differences and to its errors (transformers' blocks: tests/test_moe_2026_transformers.py)."""

from __future__ import annotations

import numpy as np
import pytest

import ffn
from tests.test_errors import raises

D_MODEL, D_FF, N_EXPERTS, TOP_K, VOCAB = 5, 3, 4, 2, 7


def layer(**options: object) -> ffn.MixtureOfExperts:
    base = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, TOP_K, "swiglu", seed=3)
    n_choices = N_EXPERTS + int(options.get("zero_experts", 0))  # type: ignore[call-overload]
    router = np.random.default_rng(4).normal(size=(D_MODEL, n_choices))
    return ffn.MixtureOfExperts(router, list(base.experts), TOP_K, **options)  # type: ignore[arg-type]


TABLE = np.array([[0, 1], [2, 3], [1, 3], [0, 2], [3, 0], [2, 1], [1, 0]])


def numeric_grad(f: object, a: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar ``f()`` in each entry of ``a``, changed in place."""
    g = np.zeros_like(a)
    for i in np.ndindex(a.shape):
        old = a[i]
        a[i] = old + eps
        up = f()  # type: ignore[operator]
        a[i] = old - eps
        g[i] = (up - f()) / (2 * eps)  # type: ignore[operator]
        a[i] = old
    return g


@pytest.mark.parametrize("options", [
    {"table": TABLE, "score": "sqrtsoftplus", "scale": 1.5},
    {"zero_experts": 2, "normalize": False, "scale": 6.0},
    {"zero_experts": 2, "table": np.array([[0, 5], [4, 1]] * 3 + [[5, 4]]), "combine": "inputs"},
    {"score": "sqrtsoftplus", "normalize": False},
], ids=["hash", "zero", "hash-to-zero-inputs", "sqrtsoftplus-raw"])
def test_gradients_match_finite_differences(options: dict[str, object]) -> None:
    moe = layer(**options)
    rng = np.random.default_rng(5)
    x, dy = rng.normal(size=(6, D_MODEL)), rng.normal(size=(6, D_MODEL))
    ids = rng.integers(0, VOCAB, size=6) if "table" in options else None
    moe(x, token_ids=ids)
    dx = moe.backward(dy)
    x_var = x.copy()
    expected = numeric_grad(lambda: float(np.sum(moe(x_var, token_ids=ids) * dy)), x_var)
    np.testing.assert_allclose(dx, expected, rtol=1e-6, atol=1e-8)
    router = np.array(moe.router)  # a writable twin whose router the differences move
    twin = ffn.MixtureOfExperts(**{**moe.options(), "router": router})

    def loss() -> float:
        # rebuilt: the layer keeps a read-only copy of its router
        built = ffn.MixtureOfExperts(**{**twin.options(), "router": router.copy()})
        return float(np.sum(built(x, token_ids=ids) * dy))

    moe(x, token_ids=ids)
    moe.backward(dy)
    np.testing.assert_allclose(moe.grads["router"], numeric_grad(loss, router), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("options", [{"table": TABLE}, {"zero_experts": 3}], ids=["hash", "zero"])
def test_grouped_dispatch_is_the_same_bit_for_bit(options: dict[str, object]) -> None:
    moe = layer(**options)
    grouped = ffn.MixtureOfExperts(**{**moe.options(), "grouped": True})
    x = np.random.default_rng(6).normal(size=(2, 7, D_MODEL))
    ids = np.arange(14).reshape(2, 7) % VOCAB if "table" in options else None
    assert np.array_equal(moe(x, token_ids=ids), grouped(x, token_ids=ids))
    assert np.array_equal(moe.backward(x), grouped.backward(x))


def test_a_zero_expert_adds_its_weight_times_the_row() -> None:
    moe = layer(zero_experts=2, normalize=False)
    x = np.random.default_rng(7).normal(size=(40, D_MODEL))
    _, chosen, weights = moe.route(x)
    only_zero = (chosen >= N_EXPERTS).all(axis=-1)  # rows that chose two zero experts
    assert only_zero.any()
    expected = weights[only_zero].sum(axis=-1, keepdims=True) * x[only_zero]
    np.testing.assert_allclose(moe(x)[only_zero], expected, rtol=1e-14)


def test_token_flops_count_the_real_experts_only() -> None:
    chosen = np.array([[0, 1], [4, 5], [3, 5]])  # 4 real experts: 4 and 5 are zero ones
    one = ffn.count_flops(D_MODEL, D_FF, gated=True)  # 2 * 3 * 5 * 3 = 90
    assert one == 90
    np.testing.assert_array_equal(ffn.token_flops(chosen, 4, D_MODEL, D_FF), [180, 0, 90])
    assert ffn.expected_flops(chosen, 4, D_MODEL, D_FF) == 90.0
    with raises(ValueError, "chosen has no tokens: their mean cost is undefined"):
        ffn.expected_flops(np.zeros((0, 2), int), 4, D_MODEL, D_FF)
    with raises(TypeError, "chosen must be an integer array of experts (..., top_k), got "
                "shape (2,) and dtype float64"):
        ffn.token_flops(np.zeros(2), 4, D_MODEL, D_FF)


def test_sqrtsoftplus_scores_stay_finite_far_out() -> None:
    logits = np.array([[-900.0, -40.0, 0.0, 40.0, 900.0]])
    r = ffn.routing.route(logits, 2, score="sqrtsoftplus", normalize=True)
    np.testing.assert_allclose(r.p[0, 2:], np.sqrt([np.log(2.0), 40.0, 900.0]),
                               rtol=1e-15)  # softplus(z) = z + log1p(exp(-z))
    assert np.all(np.isfinite(r.weights))
    slope = ffn.routing.log_score_slope(logits, r.p, "sqrtsoftplus")
    np.testing.assert_allclose(slope[0, :2], 0.5)  # log softplus(z) = z below -30, halved
    np.testing.assert_allclose(slope[0, 2], 0.5 / (2 * np.log(2.0)))  # sigmoid(0) / 2 sp(0)


def test_hash_routing_errors() -> None:
    moe = layer(table=TABLE)
    x = np.zeros((2, 3, D_MODEL))
    with raises(TypeError, "this layer routes by a token-id table: pass token_ids, one id per "
                "row of x (shape (2, 3))"):
        moe(x)
    with raises(TypeError, "token_ids must be integers of shape (2, 3) (x's leading axes), "
                "got shape (6,) and dtype int64"):
        moe(x, token_ids=np.zeros(6, np.int64))
    with raises(ValueError, "token_ids must lie in [0, 6] (the table's rows), got values in "
                "[0, 7]"):
        moe(x, token_ids=np.array([[0, 1, 2], [3, 4, 7]]))
    with raises(TypeError, "token_ids given, but this layer has no table: its router chooses "
                "the experts"):
        layer()(x, token_ids=np.zeros((2, 3), np.int64))
    with raises(ValueError, "table row 1 names one expert twice: a token's experts must be "
                "distinct"):
        layer(table=np.array([[0, 1], [2, 2]]))
    with raises(ValueError, "table must hold experts in [0, 3], got values in [0, 4]"):
        layer(table=np.array([[0, 4]]))
    with raises(ValueError, "table gives each token 3 experts but top_k is 2"):
        layer(table=np.array([[0, 1, 2]]))
    with raises(TypeError, "table must be a non-empty 2-D integer array (vocab_size, top_k), "
                "a token's experts a row, got shape (2,) and dtype float64"):
        layer(table=np.zeros(2))
    with raises(ValueError, "a table chooses the experts: a choice bias or groups would go "
                "unused, give neither"):
        layer(table=TABLE, bias=np.zeros(N_EXPERTS))


def test_zero_expert_errors() -> None:
    experts = list(layer().experts)
    with raises(ValueError, "router has shape (5, 4) but n_experts + zero_experts is 4 + 2 = 6: "
                "router must be (d_model, n_experts + zero_experts) = (5, 6)"):
        ffn.MixtureOfExperts(np.zeros((D_MODEL, N_EXPERTS)), experts, zero_experts=2)
    with raises(ValueError, "zero_experts must be non-negative, got -1"):
        layer(zero_experts=-1)


@pytest.mark.parametrize("options", [{"score": "sqrtsoftplus"},
                                     {"score": "sqrtsoftplus", "table": TABLE},
                                     {"zero_experts": 2}], ids=["sqrtsoftplus", "hash", "zero"])
def test_load_balancing_grad_matches_finite_differences(options: dict[str, object]) -> None:
    moe = layer(**options)
    x = np.random.default_rng(8).normal(size=(9, D_MODEL))
    ids = np.arange(9) % VOCAB if "table" in options else None
    router = np.array(moe.router)

    def loss() -> float:  # the choice held fixed, as load_balancing_grad holds it
        logits = x @ router
        return ffn.routing.load_balancing_loss(logits, moe.route(x, token_ids=ids)[1],
                                               moe.score)

    np.testing.assert_allclose(moe.load_balancing_grad(x, token_ids=ids),
                               numeric_grad(loss, router), rtol=1e-6, atol=1e-9)
    assert moe.load_balancing_loss(x, token_ids=ids) == pytest.approx(loss(), rel=1e-15)
    if "table" in options:  # the table's choice, not the router's
        assert ids is not None
        counts = np.bincount(TABLE[ids].ravel(), minlength=N_EXPERTS)
        np.testing.assert_array_equal(moe.dispatch(x, token_ids=ids).assigned, counts)
        with raises(TypeError, "this layer routes by a token-id table: pass token_ids, one id "
                    "per row of x (shape (9,))"):
            moe.load_balancing_loss(x)


def test_hash_route_checks_its_arguments() -> None:
    logits = np.zeros((3, N_EXPERTS))
    ids = np.array([0, 1, 2])
    with raises(TypeError, "logits must be a 2-D float array (N, n_experts), got shape (4,) "
                "and dtype float64"):
        ffn.routing.hash_route(np.zeros(4), TABLE, ids)
    with raises(TypeError, "token_ids must be integers of shape (3,) (x's leading axes), got "
                "shape (2,) and dtype int64"):
        ffn.routing.hash_route(logits, TABLE, ids[:2])
    with raises(ValueError, "unknown score 'relu'; valid: 'softmax', 'sigmoid', "
                "'sqrtsoftplus'"):
        ffn.routing.hash_route(logits, TABLE, ids, score="relu")
    # a repeated expert is the source's gather, twice: each slot weighs it
    r = ffn.routing.hash_route(logits, np.array([[1, 1]]), np.zeros(3, np.int64))
    np.testing.assert_array_equal(r.chosen, [[1, 1]] * 3)
    np.testing.assert_allclose(r.weights, 0.5)
