"""`ffn.ClampedSwiGLU` (gpt-oss's expert) and `ffn.split_gate_up`: forward against a plain
loop of gpt-oss's formula, backward against central finite differences (the clamps' flat
parts pass nothing), the fused interleaved layout, and every wrong call."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import ffn
from tests.edge_case import Case, outcome
from tests.test_errors import raises
from tests.test_feedforward import assert_grads_match, numerical_grad

D_MODEL, D_FF = 4, 6


def weights(seed: int = 0, scale: float = 1.0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"W": scale * rng.normal(size=(D_MODEL, D_FF)),
            "V": scale * rng.normal(size=(D_MODEL, D_FF)),
            "W2": rng.normal(size=(D_FF, D_MODEL)), "b": rng.normal(size=D_FF),
            "c": rng.normal(size=D_FF), "b2": rng.normal(size=D_MODEL)}


def naive(x: np.ndarray, w: dict[str, np.ndarray], alpha: float = 1.702,
          limit: float = 7.0) -> np.ndarray:
    """gpt-oss's swiglu (gpt_oss/torch/model.py) one scalar at a time, in Python floats."""
    rows = x.reshape(-1, D_MODEL).tolist()
    out = []
    for row in rows:
        h = []
        for j in range(D_FF):
            g = math.fsum(row[i] * w["W"][i, j] for i in range(D_MODEL)) + w["b"][j]
            u = math.fsum(row[i] * w["V"][i, j] for i in range(D_MODEL)) + w["c"][j]
            g = min(g, limit)  # clamp(min=None, max=limit)
            u = max(-limit, min(u, limit))  # clamp(min=-limit, max=limit)
            h.append(g / (1 + math.exp(-alpha * g)) * (u + 1))
        out.append([math.fsum(h[j] * w["W2"][j, k] for j in range(D_FF)) + w["b2"][k]
                    for k in range(D_MODEL)])
    return np.array(out).reshape(x.shape)


@pytest.mark.parametrize("scale", [0.3, 4.0])  # 4.0: many entries beyond the limit
@pytest.mark.parametrize("shape", [(D_MODEL,), (5, D_MODEL), (2, 3, D_MODEL)])
def test_forward_matches_the_formula(scale: float, shape: tuple[int, ...]) -> None:
    w = weights(1, scale)
    x = np.random.default_rng(2).normal(size=shape)
    block = ffn.ClampedSwiGLU(**w)
    y = block(x)
    assert y.shape == shape and y.dtype == np.float64
    np.testing.assert_allclose(y, naive(x, w), rtol=1e-12, atol=1e-12)
    trace = block.forward_trace(x)
    clamped = (trace.gate_pre > 7).any() or (np.abs(trace.up - 1) == 7).any()
    assert (scale > 1) == bool(clamped)  # the large weights do reach the clamp


def test_without_the_clamp_it_is_swiglu_on_sigmoid_alpha_and_up_plus_one() -> None:
    w = weights(3)
    x = np.random.default_rng(4).normal(size=(3, D_MODEL))
    free = ffn.ClampedSwiGLU(**w, alpha=1.0, limit=math.inf)
    # alpha = 1 and no clamp: GatedFeedForward's SwiGLU with the up bias c + 1
    swiglu = ffn.GatedFeedForward(w["W"], w["V"], w["W2"], w["b"], w["c"] + 1, w["b2"])
    np.testing.assert_allclose(free(x), swiglu(x), rtol=1e-13, atol=1e-14)


def test_clamp_values_at_and_beyond_the_limit() -> None:
    # One unit, W = V = 1: gate_pre = up_pre = x. Beyond 7 both saturate; below -7 only up.
    block = ffn.ClampedSwiGLU(np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))
    x = np.array([[-9.0], [-7.0], [0.5], [7.0], [9.0]])
    s = lambda v: 1 / (1 + math.exp(-1.702 * v))  # noqa: E731
    expected = [-9 * s(-9) * (-7 + 1), -7 * s(-7) * (-7 + 1), 0.5 * s(0.5) * 1.5,
                7 * s(7) * 8, 7 * s(7) * 8]
    np.testing.assert_allclose(block(x).ravel(), expected, rtol=1e-14)


# ---------------------------------------------------------------- backward


@pytest.mark.parametrize("scale", [0.3, 4.0])
@pytest.mark.parametrize("bias", [True, False])
def test_backward_matches_finite_differences(scale: float, bias: bool) -> None:
    w = weights(5, scale)
    if not bias:
        w.update(b=None, c=None, b2=None)  # type: ignore[arg-type]
    rng = np.random.default_rng(6)
    x, dy = rng.normal(size=(4, D_MODEL)), rng.normal(size=(4, D_MODEL))
    block = ffn.ClampedSwiGLU(**w)
    trace = block.forward_trace(x)
    # keep every pre-activation away from the kinks, where a central difference straddles
    up_pre = x @ w["V"] + (0 if w["c"] is None else w["c"])
    kinks = np.concatenate([np.abs(trace.gate_pre - 7).ravel(),
                            np.abs(np.abs(up_pre) - 7).ravel()])
    assert kinks.min() > 1e-4
    dx = block.backward(dy)

    def loss() -> float:
        return float(np.sum(ffn.ClampedSwiGLU(**w)(x) * dy))

    # A central difference with h = 1e-6 carries the loss's rounding, about 1e-16 * |loss| / h:
    # with |loss| near 1e2 (scale 4: gates near 7, up + 1 near 8) that is 1e-8, so atol is 10x it.
    atol = 1e-9 * max(1.0, abs(loss()))
    np.testing.assert_allclose(dx, numerical_grad(loss, x), rtol=1e-7, atol=atol)
    numeric = {k: None if v is None else numerical_grad(loss, v) for k, v in w.items()}
    assert_grads_match(block.grads, numeric, atol=atol)


def test_flat_parts_of_the_clamps_pass_no_gradient() -> None:
    block = ffn.ClampedSwiGLU(np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)),
                              np.zeros(1), np.zeros(1), np.zeros(1))
    x = np.array([[9.0], [-9.0]])
    block(x)
    block.backward(np.ones((2, 1)))
    g = block.grads
    # x = 9: both clamped, nothing reaches W or V; x = -9: only up clamped, W gets its share
    s = 1 / (1 + math.exp(1.702 * 9))  # sigmoid(-1.702 * 9)
    dgate = (-7 + 1) * (s + 1.702 * -9 * s * (1 - s))
    np.testing.assert_allclose(g["W"], [[-9 * dgate]], rtol=1e-13)
    np.testing.assert_allclose(g["b"], [dgate], rtol=1e-13)
    np.testing.assert_array_equal(g["V"], [[0.0]])
    np.testing.assert_array_equal(g["c"], [0.0])


# ---------------------------------------------------------------- the fused layout


def test_from_fused_reads_the_interleaved_columns() -> None:
    w = weights(7)
    fused = np.empty((D_MODEL, 2 * D_FF))
    fused[:, ::2], fused[:, 1::2] = w["W"], w["V"]  # gate, up, gate, up, ...
    fused_bias = np.ravel(np.column_stack([w["b"], w["c"]]))  # interleaved the same way
    block = ffn.ClampedSwiGLU.from_fused(fused, fused_bias, w["W2"], w["b2"])
    for name in "W", "V", "b", "c":
        np.testing.assert_array_equal(getattr(block, name), w[name])
    gate, up = ffn.split_gate_up(fused)
    np.testing.assert_array_equal(gate, w["W"])
    np.testing.assert_array_equal(up, w["V"])
    # read as halves (the other common layout), the block would be a different function
    halves = ffn.ClampedSwiGLU(fused[:, :D_FF], fused[:, D_FF:], w["W2"])
    x = np.ones((1, D_MODEL))
    assert not np.allclose(halves(x), ffn.ClampedSwiGLU(w["W"], w["V"], w["W2"])(x))


def test_is_a_gated_block_the_sublayer_accepts() -> None:
    block = ffn.ClampedSwiGLU.random(D_MODEL, D_FF, seed=2, dtype=np.float32)
    assert isinstance(block, ffn.GatedFeedForward) and block.dtype == np.float32
    assert block.b is not None and not block.b.any()  # zero biases by default
    sub = ffn.Sublayer(block, ffn.RMSNorm(D_MODEL, dtype=np.float32))
    x = np.ones((2, D_MODEL), np.float32)
    np.testing.assert_array_equal(sub(x), x + block(sub.norm(x)))
    assert repr(block) == ("ClampedSwiGLU(d_model=4, d_ff=6, alpha=1.702, limit=7.0, "
                           "bias=True, dtype=float32)")
    assert ffn.ClampedSwiGLU.random(D_MODEL, D_FF, bias=False).b is None


# ---------------------------------------------------------------- wrong and edge calls

W = weights(8)


def make(**kw: object) -> Case:
    args = {**W, **kw}
    return Case(f"clamped {sorted(kw)}", lambda: ffn.ClampedSwiGLU(**args)(  # type: ignore[arg-type]
        np.ones((2, D_MODEL))), next(iter(kw)))


CASES = [
    make(alpha=0.0), make(alpha=-1.702), make(alpha=math.nan), make(alpha=math.inf),
    make(alpha="1.702"), make(alpha=True),
    make(limit=0.0), make(limit=-7.0), make(limit=math.nan), make(limit=None),
    make(W=np.ones((D_MODEL, D_FF + 1))), make(V=np.ones((D_MODEL + 1, D_FF))),
    make(W2=np.ones((D_FF, D_MODEL, 1))), make(b=np.ones(D_FF + 1)), make(c="abc"),
    make(b2=np.ones(D_MODEL, np.float32)), make(W=np.ones((D_MODEL, D_FF), complex)),
    Case("clamped x width", lambda: ffn.ClampedSwiGLU(**W)(np.ones((2, D_MODEL + 1))), "x"),
    Case("clamped x None", lambda: ffn.ClampedSwiGLU(**W)(None), "x"),
    Case("clamped x nan", lambda: ffn.ClampedSwiGLU(**W)(np.full((1, D_MODEL), np.nan)), "x",
         lambda y: bool(np.isnan(y).all())),
    Case("clamped x inf", lambda: ffn.ClampedSwiGLU(np.ones((1, 1)), np.ones((1, 1)),
                                                     np.ones((1, 1)))(np.array([[np.inf]])),
         "x", lambda y: bool(y[0, 0] == 7 / (1 + math.exp(-1.702 * 7)) * 8)),
    Case("clamped backward dy shape",
         lambda: (b := ffn.ClampedSwiGLU(**W), b(np.ones((2, D_MODEL))),
                  b.backward(np.ones((3, D_MODEL))))[-1], "dy", errors=(RuntimeError,)),
    Case("clamped random variant", lambda: ffn.ClampedSwiGLU.random(4, 6, variant="swiglu"),
         "variant"),
    Case("clamped random d_ff 0", lambda: ffn.ClampedSwiGLU.random(4, 0), "d_ff"),
    Case("split odd", lambda: ffn.split_gate_up(np.ones((4, 5))), "gate_up"),
    Case("split empty", lambda: ffn.split_gate_up(np.ones((4, 0))), "gate_up"),
    Case("split 0-d", lambda: ffn.split_gate_up(1.0), "gate_up"),
    Case("split str", lambda: ffn.split_gate_up("ab"), "gate_up"),
    Case("from_fused bias odd", lambda: ffn.ClampedSwiGLU.from_fused(
        np.ones((4, 6)), np.ones(5), np.ones((3, 4)), None), "gate_up_bias"),
    Case("from_fused bias width", lambda: ffn.ClampedSwiGLU.from_fused(
        np.ones((4, 6)), np.ones(8), np.ones((3, 4)), None), "gate_up_bias"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_right_answer_or_clear_error(case: Case) -> None:
    assert outcome(case) in ("right", "clear error")


def test_messages() -> None:
    with raises(ValueError, "alpha must be in (0, inf), got 0.0"):
        ffn.ClampedSwiGLU(**W, alpha=0.0)
    with raises(ValueError, "gate_up must have an even, non-zero last axis (gate and up "
                            "interleaved), got shape (4, 5)"):
        ffn.split_gate_up(np.ones((4, 5)))


# ---------------------------------------------------------------- alpha at the ends of the range


def exact_one_by_one(x: float, alpha: float, limit: float = 7.0) -> tuple[mpmath.mpf, ...]:
    """A 1 x 1 ClampedSwiGLU with unit weights and no biases, in mpmath: ``y`` and the two
    terms of ``dy/dx``, the gate's (sigmoid's slope included) and the up branch's."""
    with mpmath.workdps(50):
        v, a = mpmath.mpf(x), mpmath.mpf(alpha)
        g, u = min(v, limit), max(-limit, min(v, limit))
        s = 1 / (1 + mpmath.exp(-a * g))
        gate_term = (s + a * g * s * (1 - s)) * (u + 1) if v <= limit else mpmath.mpf(0)
        up_term = g * s if abs(v) <= limit else mpmath.mpf(0)
        return g * s * (u + 1), gate_term, up_term


@pytest.mark.parametrize("alpha", [1e-300, 1e-50, 1.702, 1e39, 1e300, 1e308])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_any_alpha_gives_the_exact_value_and_slope(alpha: float, dtype: type) -> None:
    """Issue 39: float32 rounded alpha, 1e39 to inf (NaN at x = 0); backward formed alpha g
    s (1 - s), inf * 0 = NaN once alpha g overflowed (alpha = 1e308, |g| > 1.8). mpmath is
    the oracle; a few roundings of the dtype, relative to the size of the slope's two terms
    (which cancel where the slope crosses 0)."""
    x = np.concatenate([np.linspace(-9, 9, 721), [0.0, -1e-30, 1e-30, 7.0, -7.0, 2.0, -2.0]])
    x = x.astype(dtype)
    one = np.ones((1, 1), dtype)
    block = ffn.ClampedSwiGLU(one, one, one, alpha=alpha)
    y = block(x[:, None])[:, 0]
    dx = block.backward(np.ones((x.size, 1), dtype))[:, 0]
    exact = [exact_one_by_one(v, alpha) for v in x.astype(np.float64).tolist()]
    want_y = np.array([float(e[0]) for e in exact])
    want_dx = np.array([float(e[1] + e[2]) for e in exact])
    size = np.array([float(abs(e[1]) + abs(e[2])) for e in exact])
    rtol = 8 * np.finfo(dtype).eps
    tiny = np.finfo(dtype).smallest_subnormal
    assert np.all(np.abs(y - want_y) <= rtol * np.abs(want_y) + tiny)
    assert np.all(np.abs(dx - want_dx) <= rtol * size + tiny)


def test_a_huge_alpha_has_pytorch_autograd_s_gradients() -> None:
    """Issue 39: alpha = 1e308 gave NaN gradients for |g| > 1.8; PyTorch autograd in float64
    (gpt-oss's swiglu, written out) is finite there, and ffn agrees with every gradient."""
    from tests.test_torch_reference import import_or_skip  # skips only this test without torch

    torch = import_or_skip("torch")
    w = weights(3, scale=2.0)
    x = np.random.default_rng(4).normal(size=(5, D_MODEL))
    block = ffn.ClampedSwiGLU(**w, alpha=1e308)
    block(x)
    dy = np.random.default_rng(5).normal(size=(5, D_MODEL))
    dx = block.backward(dy)
    t = {k: torch.tensor(v, requires_grad=True) for k, v in w.items()}
    x_t = torch.tensor(x, requires_grad=True)
    gate = torch.clamp(x_t @ t["W"] + t["b"], max=7.0)
    up = torch.clamp(x_t @ t["V"] + t["c"], min=-7.0, max=7.0)
    y_t = (gate * torch.sigmoid(1e308 * gate) * (up + 1)) @ t["W2"] + t["b2"]
    y_t.backward(torch.tensor(dy))
    assert (np.abs(x @ w["W"] + w["b"]) > 1.8).sum() > 5  # where alpha g overflows
    assert np.isfinite(dx).all()
    np.testing.assert_allclose(dx, x_t.grad.numpy(), rtol=1e-12, atol=1e-12)
    for name, grad in block.grads.items():
        np.testing.assert_allclose(grad, t[name].grad.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=name)


def test_from_fused_names_the_argument_passed() -> None:
    """Issue 39: a gate_up_bias of the wrong even width was named b, the split half."""
    with raises(ValueError, "gate_up_bias has shape (8,) but gate_up has shape (4, 6): "
                            "gate_up_bias must be (2 * d_ff,) = (6,)"):
        ffn.ClampedSwiGLU.from_fused(np.ones((4, 6)), np.ones(8), np.ones((3, 4)), None)
    with raises(ValueError, "gate_up_bias has shape (1, 6) but gate_up has shape (4, 6): "
                            "gate_up_bias must be (2 * d_ff,) = (6,)"):
        ffn.ClampedSwiGLU.from_fused(np.ones((4, 6)), np.ones((1, 6)), np.ones((3, 4)), None)
    with raises(ValueError, "gate_up must be 2-D with shape (d_model, 2 * d_ff), got shape "
                            "(2, 4, 6)"):
        ffn.ClampedSwiGLU.from_fused(np.ones((2, 4, 6)), np.ones(6), np.ones((3, 4)), None)
