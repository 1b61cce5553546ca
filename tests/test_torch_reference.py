"""`ffn` against PyTorch, an implementation we did not write, in float64.

Activations and their derivatives (torch autograd), FeedForward, GatedFeedForward,
LayerNorm and Sublayer, forward and backward. PyTorch is a test-only optional
dependency (pyproject's `torch` group); `ffn` never imports it. Without torch these
tests are skipped, unless FFN_REQUIRE_TORCH=1 (set by CI), which makes them fail.

Tolerance: rtol=1e-12 everywhere, plus atol=1e-14 (about 50 float64 ulps of 1).
The atol matters only for values below about 1e-2, where a relative bound cannot
hold: in the negative tails of GELU, PyTorch computes ``1 + erf(x / sqrt(2))`` (and
``1 + tanh(...)``), which cancels, and both libraries round a value near a zero
(SiLU's derivative vanishes at x = -1.278..., a matrix product can sum to almost 0)
with an absolute error of a few ulps of the terms, not of the result.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable

import numpy as np
import pytest

import ffn

RTOL, ATOL = 1e-12, 1e-14


def import_or_skip(name: str) -> types.ModuleType:
    """Import ``name``; if it is missing, skip, unless FFN_REQUIRE_TORCH=1 makes it a failure."""
    if os.environ.get("FFN_REQUIRE_TORCH") == "1":
        try:
            return __import__(name)
        except ImportError as error:
            pytest.fail(
                f"FFN_REQUIRE_TORCH=1 but {name} cannot be imported ({error}); "
                "install the `torch` dependency group",
                pytrace=False,
            )
    return pytest.importorskip(
        name,
        reason=f"{name} is not installed (optional `torch` test group); "
        "set FFN_REQUIRE_TORCH=1 to fail instead of skipping",
    )


torch = import_or_skip("torch")
F = torch.nn.functional


def tensor(a: np.ndarray | None) -> object:
    """A float64 leaf tensor that records its gradient (None stays None)."""
    if a is None:
        return None
    return torch.tensor(a, dtype=torch.float64, requires_grad=True)


def close(ours: np.ndarray | None, theirs: object, name: str = "") -> None:
    assert ours is not None, name
    expected = theirs.detach().numpy()  # type: ignore[attr-defined]
    assert ours.shape == expected.shape, name
    np.testing.assert_allclose(ours, expected, rtol=RTOL, atol=ATOL, err_msg=name)


def close_grads(grads: dict[str, np.ndarray | None], tensors: dict[str, object]) -> None:
    """Each of our gradients against its torch leaf's ``.grad`` (None where torch has no leaf)."""
    for name, t in tensors.items():
        if t is None:
            assert grads[name] is None, name
        else:
            close(grads[name], t.grad, name)  # type: ignore[attr-defined]


# ---------------------------------------------------------------- the skip helper


def test_missing_module_skips_without_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FFN_REQUIRE_TORCH", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no_such_module_ffn is not installed"):
        import_or_skip("no_such_module_ffn")


def test_missing_module_fails_with_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FFN_REQUIRE_TORCH", "1")
    with pytest.raises(pytest.fail.Exception, match="FFN_REQUIRE_TORCH=1 but no_such_module_ffn"):
        import_or_skip("no_such_module_ffn")


# ---------------------------------------------------------------- activations

ACTIVATIONS: dict[str, tuple[Callable[..., object], Callable[..., np.ndarray],
                             Callable[..., np.ndarray]]] = {
    "relu": (F.relu, ffn.relu, ffn.relu_grad),
    "gelu": (lambda t: F.gelu(t, approximate="none"), ffn.gelu, ffn.gelu_grad),
    "gelu_tanh": (
        lambda t: F.gelu(t, approximate="tanh"),
        lambda x: ffn.gelu(x, approximate="tanh"),
        lambda x: ffn.gelu_grad(x, approximate="tanh"),
    ),
    "silu": (F.silu, ffn.silu, ffn.silu_grad),
    "relu2": (lambda t: torch.square(F.relu(t)), ffn.relu2, ffn.relu2_grad),
}
TORCH_ACT = {name: fns[0] for name, fns in ACTIVATIONS.items()}


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_and_derivative(name: str) -> None:
    torch_fn, ours, ours_grad = ACTIVATIONS[name]
    # A grid over [-12, 12] that includes 0 (ReLU's kink: both give slope 0 there).
    x = np.linspace(-12.0, 12.0, 2401)
    t = tensor(x)
    y = torch_fn(t)
    (slope,) = torch.autograd.grad(y.sum(), t)  # type: ignore[attr-defined]
    close(ours(x), y, name)
    close(ours_grad(x), slope, name + "'")


# ---------------------------------------------------------------- FeedForward


@pytest.mark.parametrize("activation", ffn.ACTIVATIONS)
@pytest.mark.parametrize("bias", [True, False])
def test_feedforward(activation: str, bias: bool) -> None:
    rng = np.random.default_rng(0)
    d_model, d_ff = 8, 32
    W1, W2 = rng.normal(size=(d_model, d_ff)), rng.normal(size=(d_ff, d_model))
    b1 = rng.normal(size=d_ff) if bias else None
    b2 = rng.normal(size=d_model) if bias else None
    x = rng.normal(size=(2, 5, d_model))
    dy = rng.normal(size=x.shape)

    block = ffn.FeedForward(W1, b1, W2, b2, activation=activation)
    y = block(x)
    dx = block.backward(dy)

    # torch's Linear stores (out, in): the transpose of our (in, out) matrices.
    tx, tW1, tb1, tW2, tb2 = (tensor(a) for a in (x, W1, b1, W2, b2))
    h = TORCH_ACT[activation](F.linear(tx, tW1.T, tb1))  # type: ignore[union-attr]
    ty = F.linear(h, tW2.T, tb2)  # type: ignore[union-attr]
    ty.backward(torch.tensor(dy))
    close(y, ty, "y")
    close(dx, tx.grad, "x")  # type: ignore[union-attr]
    close_grads(block.grads, {"W1": tW1, "b1": tb1, "W2": tW2, "b2": tb2})


# ---------------------------------------------------------------- GatedFeedForward

GATES = {
    "glu": torch.sigmoid,
    "reglu": F.relu,
    "geglu": lambda t: F.gelu(t, approximate="none"),
    "geglu_tanh": lambda t: F.gelu(t, approximate="tanh"),
    "swiglu": F.silu,
}


@pytest.mark.parametrize("variant", ffn.GATED_VARIANTS)
@pytest.mark.parametrize("bias", [True, False])
def test_gated_feedforward(variant: str, bias: bool) -> None:
    rng = np.random.default_rng(1)
    d_model, d_ff = 8, 24
    W, V = rng.normal(size=(d_model, d_ff)), rng.normal(size=(d_model, d_ff))
    W2 = rng.normal(size=(d_ff, d_model))
    b, c = (rng.normal(size=d_ff) if bias else None for _ in range(2))
    b2 = rng.normal(size=d_model) if bias else None
    x = rng.normal(size=(6, d_model))
    dy = rng.normal(size=x.shape)

    block = ffn.GatedFeedForward(W, V, W2, b, c, b2, variant=variant)
    y = block(x)
    dx = block.backward(dy)

    tx, tW, tV, tW2, tb, tc, tb2 = (tensor(a) for a in (x, W, V, W2, b, c, b2))
    gate = GATES[variant](F.linear(tx, tW.T, tb))  # type: ignore[union-attr]
    up = F.linear(tx, tV.T, tc)  # type: ignore[union-attr]
    ty = F.linear(gate * up, tW2.T, tb2)  # type: ignore[union-attr]
    ty.backward(torch.tensor(dy))
    close(y, ty, "y")
    close(dx, tx.grad, "x")  # type: ignore[union-attr]
    close_grads(block.grads, {"W": tW, "V": tV, "W2": tW2, "b": tb, "c": tc, "b2": tb2})


# ---------------------------------------------------------------- LayerNorm


@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_layer_norm(eps: float) -> None:
    rng = np.random.default_rng(2)
    d_model = 16
    gamma, beta = 1 + 0.3 * rng.normal(size=d_model), rng.normal(size=d_model)
    x = rng.normal(loc=2.0, scale=3.0, size=(3, 4, d_model))
    dy = rng.normal(size=x.shape)

    norm = ffn.LayerNorm(d_model, eps=eps, gamma=gamma, beta=beta)
    y = norm(x)
    dx = norm.backward(dy)

    tx, tg, tb = tensor(x), tensor(gamma), tensor(beta)
    ty = F.layer_norm(tx, (d_model,), tg, tb, eps)
    ty.backward(torch.tensor(dy))
    close(y, ty, "y")
    close(dx, tx.grad, "x")  # type: ignore[attr-defined]
    close(norm.grads["gamma"], tg.grad, "gamma")  # type: ignore[attr-defined]
    close(norm.grads["beta"], tb.grad, "beta")  # type: ignore[attr-defined]


# ---------------------------------------------------------------- Sublayer


@pytest.mark.parametrize("placement", ffn.PLACEMENTS)
def test_sublayer(placement: str) -> None:
    rng = np.random.default_rng(3)
    d_model, d_ff = 8, 32
    block = ffn.FeedForward.random(d_model, d_ff, activation="gelu", seed=4)
    gamma, beta = 1 + 0.3 * rng.normal(size=d_model), rng.normal(size=d_model)
    sub = ffn.Sublayer(block, ffn.LayerNorm(d_model, gamma=gamma, beta=beta), placement)
    x = rng.normal(size=(5, d_model))
    dy = rng.normal(size=x.shape)
    y = sub(x)
    dx = sub.backward(dy)

    tx, tW1, tW2, tg, tb = (tensor(a) for a in (x, block.W1, block.W2, gamma, beta))

    def ffn_torch(u: object) -> object:
        return F.linear(F.gelu(F.linear(u, tW1.T)), tW2.T)  # type: ignore[union-attr]

    def ln(u: object) -> object:
        return F.layer_norm(u, (d_model,), tg, tb, 1e-5)

    ty = tx + ffn_torch(ln(tx)) if placement == "pre" else ln(tx + ffn_torch(tx))
    ty.backward(torch.tensor(dy))  # type: ignore[attr-defined]
    close(y, ty, "y")
    close(dx, tx.grad, "x")  # type: ignore[union-attr]
    close(sub.grads["W1"], tW1.grad, "W1")  # type: ignore[union-attr]
    close(sub.grads["gamma"], tg.grad, "gamma")  # type: ignore[union-attr]
