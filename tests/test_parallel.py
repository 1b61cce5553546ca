"""`ffn.ParallelBlock`: x + attn(LN(x)) + FFN(LN(x)) against the formula composed by hand, its
backward against central finite differences (one shared norm and GPT-NeoX's two), how it
differs from the serial layer, the fused first product, and every wrong call."""

from __future__ import annotations

import numpy as np
import pytest

import ffn
from tests.edge_case import Case, outcome
from tests.test_errors import raises
from tests.test_feedforward import numerical_grad

D_MODEL, D_FF = 4, 8


def parts(seed: int = 0, two_norms: bool = False, rms: bool = False) -> tuple[
        ffn.Linear, ffn.FeedForward, ffn.LayerNorm | ffn.RMSNorm,
        ffn.LayerNorm | ffn.RMSNorm | None]:
    rng = np.random.default_rng(seed)
    attention = ffn.Linear(rng.normal(size=(D_MODEL, D_MODEL)), rng.normal(size=D_MODEL))
    block = ffn.FeedForward(rng.normal(size=(D_MODEL, D_FF)), rng.normal(size=D_FF),
                            rng.normal(size=(D_FF, D_MODEL)), rng.normal(size=D_MODEL))

    def norm() -> ffn.LayerNorm | ffn.RMSNorm:
        gamma = 1 + 0.3 * rng.normal(size=D_MODEL)
        if rms:
            return ffn.RMSNorm(D_MODEL, gamma=gamma)
        return ffn.LayerNorm(D_MODEL, gamma=gamma, beta=0.2 * rng.normal(size=D_MODEL))

    first = norm()
    return attention, block, first, norm() if two_norms else None


@pytest.mark.parametrize("two_norms", [False, True])
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("shape", [(D_MODEL,), (3, D_MODEL), (2, 3, D_MODEL)])
def test_forward_matches_the_formula(two_norms: bool, rms: bool, shape: tuple[int, ...]) -> None:
    x = np.random.default_rng(1).normal(size=shape)
    y = ffn.ParallelBlock(*parts(0, two_norms, rms))(x)
    attention, block, norm, ffn_norm = parts(0, two_norms, rms)  # fresh: nothing shared
    expected = x + attention(norm(x)) + block((ffn_norm or norm)(x))
    assert y.shape == shape
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("two_norms", [False, True])
def test_backward_matches_finite_differences(two_norms: bool) -> None:
    rng = np.random.default_rng(2)
    x, dy = rng.normal(size=(3, D_MODEL)), rng.normal(size=(3, D_MODEL))
    layer = ffn.ParallelBlock(*parts(3, two_norms))
    layer(x)
    dx = layer.backward(dy)
    params = {k: np.array(p) for k, p in layer.named_parameters().items()}

    def rebuilt() -> ffn.ParallelBlock:
        p = params
        norm2 = (ffn.LayerNorm(D_MODEL, gamma=p["ffn_norm.gamma"], beta=p["ffn_norm.beta"])
                 if two_norms else None)
        return ffn.ParallelBlock(
            ffn.Linear(p["attention.W"], p["attention.b"]),
            ffn.FeedForward(p["ffn.W1"], p["ffn.b1"], p["ffn.W2"], p["ffn.b2"]),
            ffn.LayerNorm(D_MODEL, gamma=p["norm.gamma"], beta=p["norm.beta"]), norm2)

    def loss() -> float:
        return float(np.sum(rebuilt()(x) * dy))

    np.testing.assert_allclose(dx, numerical_grad(loss, x), rtol=1e-7, atol=1e-8)
    assert set(layer.grads) == set(params)
    for name, p in params.items():
        np.testing.assert_allclose(layer.grads[name], numerical_grad(loss, p), rtol=1e-7,
                                   atol=1e-8, err_msg=name)


def test_it_differs_from_the_serial_layer_by_what_the_ffn_reads() -> None:
    attention, block, norm, _ = parts(4)
    norm2 = ffn.LayerNorm(D_MODEL)
    x = np.random.default_rng(5).normal(size=(3, D_MODEL))
    h = x + attention(norm(x))
    serial = h + block(norm2(h))  # LLaMA, GPT-2: the FFN reads attention's output
    parallel = ffn.ParallelBlock(attention, block, norm)(x)
    assert np.abs(serial - parallel).max() > 0.1
    # With attention silent (its output 0), h = x and the two agree, up to the second norm
    silent = ffn.Linear(np.zeros((D_MODEL, D_MODEL)))
    np.testing.assert_array_equal(ffn.ParallelBlock(silent, block, norm2)(x),
                                  x + block(norm2(x)))


def test_the_two_first_products_fuse_into_one() -> None:
    attention, block, norm, _ = parts(6)
    x = np.random.default_rng(7).normal(size=(5, D_MODEL))
    x_norm = norm(x)
    fused = np.concatenate([attention.W, block.W1], axis=1)  # (d_model, d_model + d_ff)
    both = x_norm @ fused  # one product
    np.testing.assert_allclose(both[:, :D_MODEL], x_norm @ attention.W, rtol=1e-14)
    np.testing.assert_allclose(both[:, D_MODEL:], x_norm @ block.W1, rtol=1e-14)


def test_grads_and_repr() -> None:
    layer = ffn.ParallelBlock(*parts(8, rms=True))
    assert list(layer.named_parameters()) == [
        "attention.W", "attention.b", "ffn.W1", "ffn.b1", "ffn.W2", "ffn.b2", "norm.gamma"]
    assert repr(layer).startswith("ParallelBlock(Linear(in_features=4, out_features=4")


# ---------------------------------------------------------------- wrong and edge calls

A, B, N, _ = parts(9)


def call(what: str, arg: str, make: object) -> Case:
    return Case(f"parallel {what}", make, arg)  # type: ignore[arg-type]


CASES = [
    call("attention None", "attention", lambda: ffn.ParallelBlock(None, B, N)),  # type: ignore[arg-type]
    call("attention a norm", "attention", lambda: ffn.ParallelBlock(N, B, N)),  # type: ignore[arg-type]
    call("attention width", "attention",
         lambda: ffn.ParallelBlock(ffn.Linear(np.ones((D_MODEL, 3))), B, N)),
    call("attention dtype", "attention",
         lambda: ffn.ParallelBlock(ffn.Linear(np.ones((D_MODEL, D_MODEL), np.float32)), B, N)),
    call("block a Linear", "block", lambda: ffn.ParallelBlock(A, A, N)),  # type: ignore[arg-type]
    call("same object twice", "attention", lambda: ffn.ParallelBlock(B, B, N)),
    call("norm None", "norm", lambda: ffn.ParallelBlock(A, B, None)),  # type: ignore[arg-type]
    call("norm width", "norm", lambda: ffn.ParallelBlock(A, B, ffn.LayerNorm(D_MODEL + 1))),
    call("norm dtype", "norm",
         lambda: ffn.ParallelBlock(A, B, ffn.RMSNorm(D_MODEL, dtype=np.float32))),
    call("ffn_norm is norm", "ffn_norm", lambda: ffn.ParallelBlock(A, B, N, N)),
    call("ffn_norm a Linear", "ffn_norm", lambda: ffn.ParallelBlock(A, B, N, A)),  # type: ignore[arg-type]
    call("ffn_norm width", "ffn_norm",
         lambda: ffn.ParallelBlock(A, B, N, ffn.RMSNorm(D_MODEL + 1))),
    call("x width", "x", lambda: ffn.ParallelBlock(A, B, N)(np.ones((2, D_MODEL + 1)))),
    call("x str", "x", lambda: ffn.ParallelBlock(A, B, N)("abcd")),
    Case("parallel backward dy shape",
         lambda: (p := ffn.ParallelBlock(A, B, N), p(np.ones((2, D_MODEL))),
                  p.backward(np.ones((2, D_MODEL + 1))))[-1], "dy",
         errors=(RuntimeError,)),  # as every layer's: dy does not fit the last forward
    Case("parallel x nan", lambda: ffn.ParallelBlock(A, B, N)(np.full((1, D_MODEL), np.nan)),
         "x", lambda y: bool(np.isnan(y).all())),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_right_answer_or_clear_error(case: Case) -> None:
    assert outcome(case) in ("right", "clear error")


def test_messages() -> None:
    with raises(ValueError, "ffn_norm must be a second norm, not norm itself: pass "
                            "ffn_norm=None for one norm shared by both branches"):
        ffn.ParallelBlock(A, B, N, N)
    with raises(ValueError, "attention maps 4 to 3 features but block has d_model 4: both "
                            "must be d_model"):
        ffn.ParallelBlock(ffn.Linear(np.ones((D_MODEL, 3))), B, N)
