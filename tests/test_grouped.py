"""ffn.GroupedExperts against MixtureOfExperts' loop, bit for bit, and against finite differences.

Why bit for bit: the two differ only in how each expert's rows are found (a mask each, or one
stable sort of the pairs by expert); expert i then runs on the same rows in the same (row)
order in both, so each block sees the same matrix and gives the same bits, and the weighted
outputs are added expert by expert, in ascending order, in both. The same holds for the
backward's sums into ``dx``. What can fail here is the sort's segments (a wrong or unstable
sort gives other rows or another row order). ``test_slot_order_is_not_bit_exact_but_bounded``
shows that the order is what makes the bits agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ffn
from ffn.moe_presets import GroupedExperts
from ffn.routing import sort_by_expert
from tests.test_errors import BAD_X, BAD_X_IDS, raises
from tests.test_feedforward import numerical_grad
from tests.test_moe import choice_margins


def same_bits(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Equal dtype, shape and every bit (so -0.0 differs from 0.0, and NaN equals NaN)."""
    if a is None or b is None:
        return a is None and b is None
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def random_block(rng: np.random.Generator, d_model: int, d_ff: int, kind: str,
                 dtype: Any) -> ffn.FeedForward | ffn.GatedFeedForward:
    """A block of ``kind`` (an activation or a gated variant) with random weights and, half the
    time, random biases."""
    def normal(*shape: int) -> np.ndarray:
        return rng.normal(size=shape).astype(dtype)

    with_bias = bool(rng.integers(2))
    if kind in ffn.GATED_VARIANTS:
        b, c, b2 = (normal(d_ff), normal(d_ff), normal(d_model)) if with_bias else (None,) * 3
        return ffn.GatedFeedForward(normal(d_model, d_ff), normal(d_model, d_ff),
                                    normal(d_ff, d_model), b, c, b2, variant=kind)
    b1, b2 = (normal(d_ff), normal(d_model)) if with_bias else (None, None)
    return ffn.FeedForward(normal(d_model, d_ff), b1, normal(d_ff, d_model), b2,
                           activation=kind)


KINDS = (*ffn.ACTIVATIONS, *ffn.GATED_VARIANTS)


def random_moe(seed: int) -> tuple[ffn.MixtureOfExperts, np.ndarray]:
    """A random configuration of every option the loop has, and a random batch for it."""
    rng = np.random.default_rng(seed)
    dtype = np.float32 if rng.integers(2) else np.float64
    d_model, d_ff = int(rng.integers(1, 7)), int(rng.integers(1, 6))
    n_groups = int(rng.choice([1, 1, 2, 3]))
    size = int(rng.integers(2 if n_groups > 1 else 1, 5))  # experts a group
    n_experts = n_groups * size
    top_groups = int(rng.integers(1, n_groups + 1))
    top_k = int(rng.integers(1, top_groups * size + 1))
    kind = str(rng.choice(KINDS))  # the experts share one
    experts = [random_block(rng, d_model, d_ff, kind, dtype) for _ in range(n_experts)]
    shared = [random_block(rng, d_model, int(rng.integers(1, 5)), str(rng.choice(KINDS)), dtype)
              for _ in range(int(rng.integers(3)))]
    bias = rng.normal(size=n_experts).astype(dtype) * 0.3 if rng.integers(2) else None
    moe = ffn.MixtureOfExperts(rng.normal(size=(d_model, n_experts)).astype(dtype), experts,
                               top_k, bool(rng.integers(2)),
                               score=str(rng.choice(["softmax", "sigmoid"])), bias=bias,
                               n_groups=n_groups, top_groups=top_groups,
                               scale=float(rng.choice([1.0, 2.5])), shared_experts=shared)
    lead = [(0,), (1,), (2,), (7,), (19,), (3, 5)][int(rng.integers(6))]
    if n_groups > 1 and lead == (0,):  # MixtureOfExperts' own routing cannot take it yet:
        lead = (1,)  # choice.reshape(0, n_groups, -1) raises in moe.py (reported, not ours)
    return moe, rng.normal(size=(*lead, d_model)).astype(dtype)


def assert_same_as_loop(moe: ffn.MixtureOfExperts, x: np.ndarray, seed: int = 0) -> None:
    """Forward, dL/dx and every gradient of GroupedExperts(moe) bit for bit the loop's."""
    grouped = GroupedExperts(moe)
    dy = np.random.default_rng(seed).normal(size=x.shape).astype(moe.dtype)
    y_loop = moe(x)
    dx_loop = moe.backward(dy)
    grads_loop = {k: None if g is None else g.copy() for k, g in moe.grads.items()}
    y = grouped(x)
    assert same_bits(y, y_loop)
    dx = grouped.backward(dy)
    assert same_bits(dx, dx_loop)
    assert list(grouped.grads) == list(grads_loop) == list(moe.named_parameters())
    for name, g in grads_loop.items():
        assert same_bits(grouped.grads[name], g), name


@pytest.mark.parametrize("seed", range(120))
def test_random_configurations_match_the_loop_bit_for_bit(seed: int) -> None:
    assert_same_as_loop(*random_moe(seed), seed=seed)


def test_the_random_configurations_cover_every_option() -> None:
    # The 120 seeds above reach each option: else a bit-for-bit claim would go untested.
    seen: dict[str, set[object]] = {}
    for seed in range(120):
        moe, x = random_moe(seed)
        for key, value in (("score", moe.score), ("normalize", moe.normalize),
                           ("bias", moe.bias is not None), ("groups", moe.n_groups > 1),
                           ("scale", moe.scale), ("shared", len(moe.shared_experts)),
                           ("dtype", moe.dtype.name), ("all experts", moe.top_k == moe.n_experts),
                           ("rows", min(len(x.reshape(-1, moe.d_model)), 2)),
                           ("kind", type(moe.experts[0]).__name__)):
            seen.setdefault(key, set()).add(value)
        if len(x):
            chosen = moe.route(x)[1].reshape(-1, moe.top_k)
            seen.setdefault("idle expert", set()).add(
                len(np.unique(chosen)) < moe.n_experts)
    assert all(len(values) >= 2 for values in seen.values()), seen
    assert seen["shared"] == {0, 1, 2} and seen["rows"] == {0, 1, 2}


def test_an_expert_no_row_chose_matches_the_loop_with_zero_gradients() -> None:
    moe = ffn.MixtureOfExperts.random(4, 3, 5, top_k=2, seed=1)
    router = np.array(moe.router)
    router[:, 4] = -50.0  # expert 4 is never in the top 2 for x > 0
    moe = ffn.MixtureOfExperts(router, list(moe.experts), 2)
    x = np.abs(np.random.default_rng(2).normal(size=(6, 4))) + 0.1
    assert 4 not in moe.route(x)[1]
    assert_same_as_loop(moe, x)
    grouped = GroupedExperts(moe)
    grouped(x)
    grouped.backward(np.ones_like(x))
    for name, w in moe.experts[4].named_parameters().items():
        g = grouped.grads[f"experts.4.{name}"]
        assert g is not None and w is not None and g.shape == w.shape and not g.any()


@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
def test_every_expert_one_token_and_ties(score: str) -> None:
    base = ffn.MixtureOfExperts.random(4, 3, 6, top_k=2, variant="swiglu", seed=3)
    for top_k in (1, 3, 6):  # 6 = n_experts: every row uses every expert
        moe = ffn.MixtureOfExperts(base.router, list(base.experts), top_k, score=score)
        assert_same_as_loop(moe, np.random.default_rng(4).normal(size=(1, 4)))  # one token
        assert_same_as_loop(moe, np.random.default_rng(5).normal(size=(4,)))  # a bare vector
        tied = ffn.MixtureOfExperts(np.zeros((4, 6)), list(base.experts), top_k, score=score)
        x = np.random.default_rng(6).normal(size=(5, 4))
        assert (tied.route(x)[1] == np.arange(top_k)).all()  # ties: the lower indices
        assert_same_as_loop(tied, x)


def test_fast_blocks_as_experts_match_the_loop() -> None:
    rng = np.random.default_rng(7)
    experts = [ffn.fast.FeedForward(rng.normal(size=(8, 16)), rng.normal(size=16),
                                    rng.normal(size=(16, 8)), rng.normal(size=8))
               for _ in range(4)]
    moe = ffn.MixtureOfExperts(rng.normal(size=(8, 4)), experts, 3)
    assert_same_as_loop(moe, rng.normal(size=(33, 8)))


def test_slot_order_is_not_bit_exact_but_bounded() -> None:
    # Adding each row's top_k outputs in slot order (best score first) instead of expert order
    # is the same sum in another order. Each addition rounds once (relative error <= u) and the
    # first, 0 + a, is exact: a term passes through at most k - 1 roundings, so any order is
    # within ((1 + u)^(k-1) - 1) * sum |terms| of the exact sum, and two orders within twice
    # that of each other. The bound holds here, and the bits differ: the loop's bits are no
    # accident of the data.
    moe = ffn.MixtureOfExperts.random(16, 8, 16, top_k=8, dtype=np.float32, seed=8)
    x = np.random.default_rng(9).normal(size=(64, 16)).astype(np.float32)
    _, chosen, weights = moe.route(x)
    terms = np.zeros((len(x), moe.top_k, 16), dtype=np.float32)  # the loop's own products
    for i, expert in enumerate(moe.experts):
        rows, slot = np.nonzero(chosen == i)
        terms[rows, slot] = weights[rows, slot, None] * expert(x[rows])
    by_slot = np.zeros_like(x)
    for s in range(moe.top_k):
        by_slot += terms[:, s]
    loop = moe(x)
    u, k = float(np.finfo(np.float32).eps) / 2, moe.top_k  # a Python float: 1 + u stays exact
    bound = 2 * ((1 + u) ** (k - 1) - 1) * np.abs(terms.astype(np.float64)).sum(axis=1)
    assert np.all(np.abs(by_slot.astype(np.float64) - loop) <= bound)
    assert not np.array_equal(by_slot, loop)
    assert same_bits(GroupedExperts(moe)(x), loop)


def test_two_experts_a_row_give_the_same_bits_in_either_order() -> None:
    # With top_k = 2 the sum is (0 + a) + b: 0 + a is a exactly and a + b = b + a, so any
    # order gives the loop's bits; the order starts to matter at top_k = 3.
    moe = ffn.MixtureOfExperts.random(16, 8, 8, top_k=2, dtype=np.float32, seed=10)
    x = np.random.default_rng(11).normal(size=(64, 16)).astype(np.float32)
    _, chosen, weights = moe.route(x)
    terms = np.zeros((len(x), 2, 16), dtype=np.float32)  # the loop's own products
    for i, expert in enumerate(moe.experts):
        rows, slot = np.nonzero(chosen == i)
        terms[rows, slot] = weights[rows, slot, None] * expert(x[rows])
    a, b = terms[:, 0], terms[:, 1]
    assert same_bits((0 + a) + b, moe(x)) and same_bits((0 + b) + a, moe(x))


def test_sort_by_expert_against_a_loop() -> None:
    rng = np.random.default_rng(12)
    for n_experts, top_k, n in ((1, 1, 5), (4, 2, 9), (6, 6, 3), (8, 3, 0), (7, 2, 1)):
        chosen = np.array([rng.permutation(n_experts)[:top_k] for _ in range(n)],
                          dtype=np.int64).reshape(n, top_k)
        order, offsets = sort_by_expert(chosen, n_experts)
        expected: list[int] = []
        bounds = [0]
        for i in range(n_experts):  # expert by expert, its pairs in row order
            expected += [r * top_k + s for r in range(n) for s in range(top_k)
                         if chosen[r, s] == i]
            bounds.append(len(expected))
        assert order.tolist() == expected and offsets.tolist() == bounds


@pytest.mark.parametrize(("chosen", "n_experts", "exception", "message"), [
    ([[0, 1]], 2, TypeError, "chosen must be a 2-D integer array (N, top_k), got list [[0, 1]]"),
    (np.zeros(3, dtype=int), 2, TypeError,
     "chosen must be a 2-D integer array (N, top_k), got shape (3,) and dtype int64"),
    (np.zeros((2, 1)), 2, TypeError,
     "chosen must be a 2-D integer array (N, top_k), got shape (2, 1) and dtype float64"),
    (np.array([[0, 2]]), 2, ValueError, "chosen must hold experts in [0, 1], got values in [0, 2]"),
    (np.array([[-1, 0]]), 2, ValueError,
     "chosen must hold experts in [0, 1], got values in [-1, 0]"),
    (np.zeros((1, 1), dtype=int), 0, ValueError, "n_experts must be positive, got 0"),
])
def test_sort_by_expert_errors(chosen: object, n_experts: int, exception: type[Exception],
                               message: str) -> None:
    with raises(exception, message):
        sort_by_expert(chosen, n_experts)


@pytest.mark.parametrize("case", ["mixtral", "deepseek"])
def test_backward_matches_finite_differences(case: str) -> None:
    rng = np.random.default_rng(13)
    d_model, n_experts, gated = 4, 8, case == "deepseek"
    names = ("W", "V", "W2") if gated else ("W1", "b1", "W2", "b2")
    shapes = {"W": (d_model, 3), "V": (d_model, 3), "W1": (d_model, 3), "b1": (3,),
              "W2": (3, d_model), "b2": (d_model,)}
    arrays = {"router": rng.normal(size=(d_model, n_experts))}
    arrays |= {f"experts.{i}.{n}": rng.normal(size=shapes[n]) for i in range(n_experts)
               for n in names}
    if gated:
        arrays |= {f"shared_experts.0.{n}": rng.normal(size=shapes[n]) for n in names}
    bias = rng.normal(size=n_experts) * 0.3

    def build() -> GroupedExperts:
        def block(prefix: str) -> ffn.FeedForward | ffn.GatedFeedForward:
            w = [arrays[f"{prefix}.{n}"] for n in names]
            return ffn.GatedFeedForward(*w) if gated else ffn.FeedForward(*w)

        experts = [block(f"experts.{i}") for i in range(n_experts)]
        if not gated:
            return GroupedExperts(ffn.MixtureOfExperts(arrays["router"], experts, 3))
        return GroupedExperts(ffn.MixtureOfExperts(
            arrays["router"], experts, 3, score="sigmoid", bias=bias, n_groups=4, top_groups=2,
            scale=2.5, shared_experts=[block("shared_experts.0")]))

    x, r = rng.normal(size=(3, d_model)), rng.normal(size=(3, d_model))
    grouped = build()
    assert choice_margins(grouped, x) > 1e-4  # no choice flips under a step of 1e-6
    assert len(np.unique(grouped.route(x)[1])) < n_experts  # an idle expert among them
    grouped(x)
    dx = grouped.backward(r)
    assert {k for k, g in grouped.grads.items() if g is not None} == set(arrays)

    def loss() -> float:
        return float(np.sum(build()(x) * r))

    for name, array in arrays.items():
        got = grouped.grads[name]
        assert got is not None, name
        np.testing.assert_allclose(got, numerical_grad(loss, array), rtol=1e-6, atol=1e-8,
                                   err_msg=name)
    np.testing.assert_allclose(dx, numerical_grad(loss, x), rtol=1e-6, atol=1e-8)


def test_backward_belongs_to_the_grouped_forward_that_ran() -> None:
    # The experts are shared with the loop: running it in between must not change the result.
    moe = ffn.MixtureOfExperts.random(4, 3, 4, top_k=2, seed=14)
    rng = np.random.default_rng(15)
    x, other, dy = (rng.normal(size=(6, 4)) for _ in range(3))
    grouped = GroupedExperts(moe)
    grouped(x)
    moe(other)
    moe.backward(dy)
    dx = grouped.backward(dy)
    fresh = GroupedExperts(moe)
    fresh(x)
    assert same_bits(dx, fresh.backward(dy))


def test_errors() -> None:
    moe = ffn.MixtureOfExperts.random(4, 3, 4, top_k=2, seed=16)
    with raises(TypeError, "moe must be a MixtureOfExperts, got FeedForward"):
        GroupedExperts(moe.experts[0])  # type: ignore[arg-type]
    grouped = GroupedExperts(moe)
    with raises(ValueError, "x has last dimension 3 but d_model is 4 (x.shape=(2, 3))"):
        grouped(np.ones((2, 3)))
    with raises(RuntimeError,
                "backward() called before a forward pass: call grouped(x) first"):
        grouped.backward(np.ones((2, 4)))
    grouped(np.ones((2, 4)))
    with raises(RuntimeError, "dy has shape (3, 4) but the last forward output has shape (2, 4)"):
        grouped.backward(np.ones((3, 4)))
    assert repr(grouped) == repr(moe).replace("MixtureOfExperts(", "GroupedExperts(").replace(
        ", dtype", ", grouped=True, dtype")


@pytest.mark.parametrize(("x", "exception", "message"), BAD_X, ids=BAD_X_IDS)
def test_bad_input(x: object, exception: type[Exception], message: str) -> None:
    with raises(exception, message):
        GroupedExperts(ffn.MixtureOfExperts.random(4, 3, 4, seed=17))(x)
