"""The 2025 routers beside `ffn.MixtureOfExperts`: Llama 4's `InputScaledMoE`, gpt-oss's
`RouterBiasMoE` and Qwen2-MoE's `GatedSharedMoE`.

Oracles: central finite differences of the layer rebuilt from perturbed arrays (every
parameter and the input, float64), a row-by-row loop written from the formulas, and, for
GroupedExperts, the loop itself. Bad arguments get errors that name them. The cross-checks
against transformers are in tests/test_moe_routers_transformers.py.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable

import numpy as np
import pytest

import ffn
from ffn.activations import sigmoid, silu
from tests.test_errors import BAD_X, BAD_X_IDS, raises
from tests.test_feedforward import numerical_grad

D_MODEL, D_FF, N_EXPERTS = 5, 4, 4
Build = Callable[[dict[str, np.ndarray]], ffn.MixtureOfExperts]


def gated_arrays(rng: np.random.Generator, prefix: str, d_ff: int,
                 biases: bool = False) -> dict[str, np.ndarray]:
    w = {f"{prefix}W": rng.normal(size=(D_MODEL, d_ff)), f"{prefix}V": rng.normal(
        size=(D_MODEL, d_ff)), f"{prefix}W2": rng.normal(size=(d_ff, D_MODEL)) / 2}
    if biases:
        w.update({f"{prefix}b": rng.normal(size=d_ff), f"{prefix}c": rng.normal(size=d_ff),
                  f"{prefix}b2": rng.normal(size=D_MODEL)})
    return w


def block(w: dict[str, np.ndarray], prefix: str) -> ffn.GatedFeedForward:
    return ffn.GatedFeedForward(w[f"{prefix}W"], w[f"{prefix}V"], w[f"{prefix}W2"])


def clamped(w: dict[str, np.ndarray], prefix: str, limit: float) -> ffn.ClampedSwiGLU:
    return ffn.ClampedSwiGLU(*(w[f"{prefix}{n}"] for n in ("W", "V", "W2", "b", "c", "b2")),
                             limit=limit)


def llama4_arrays(seed: int, n_shared: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = {"router": rng.normal(size=(D_MODEL, N_EXPERTS))}
    for i in range(N_EXPERTS):
        w.update(gated_arrays(rng, f"experts.{i}.", D_FF))
    for j in range(n_shared):
        w.update(gated_arrays(rng, f"shared_experts.{j}.", D_FF + 2))
    return w


def llama4(top_k: int, n_shared: int = 1) -> Build:
    return lambda w: ffn.InputScaledMoE(
        w["router"], [block(w, f"experts.{i}.") for i in range(N_EXPERTS)], top_k,
        shared_experts=[block(w, f"shared_experts.{j}.") for j in range(n_shared)])


def gpt_oss_arrays(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = {"router": rng.normal(size=(D_MODEL, N_EXPERTS)), "router_bias": rng.normal(
        size=N_EXPERTS)}
    for i in range(N_EXPERTS):
        w.update(gated_arrays(rng, f"experts.{i}.", D_FF, biases=True))
    return w


def gpt_oss(top_k: int, limit: float) -> Build:
    return lambda w: ffn.RouterBiasMoE(
        w["router"], w["router_bias"],
        [clamped(w, f"experts.{i}.", limit) for i in range(N_EXPERTS)], top_k)


def qwen2_arrays(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = {"router": rng.normal(size=(D_MODEL, N_EXPERTS))}
    for i in range(N_EXPERTS):
        w.update(gated_arrays(rng, f"experts.{i}.", D_FF))
    w.update(gated_arrays(rng, "shared_experts.0.", D_FF + 3))
    w["shared_gate"] = rng.normal(size=(D_MODEL, 1))
    return w


def qwen2(top_k: int, normalize: bool) -> Build:
    return lambda w: ffn.GatedSharedMoE(
        ffn.MixtureOfExperts(w["router"], [block(w, f"experts.{i}.") for i in range(N_EXPERTS)],
                             top_k, normalize),
        block(w, "shared_experts.0."), w["shared_gate"])


def logits_of(layer: object, w: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    return x @ w["router"] + w.get("router_bias", 0.0)  # (N, n_experts)


CASES = {  # name: (arrays, build)
    "llama4-top1": (llama4_arrays(1), llama4(1)),
    "llama4-top2-two-shared": (llama4_arrays(2, n_shared=2), llama4(2, n_shared=2)),
    "llama4-top1-no-shared": (llama4_arrays(3, n_shared=0), llama4(1, n_shared=0)),
    "gpt-oss-top2-clamped": (gpt_oss_arrays(4), gpt_oss(2, limit=0.8)),
    "gpt-oss-top3-free": (gpt_oss_arrays(5), gpt_oss(3, limit=np.inf)),
    "qwen2-top2-normalized": (qwen2_arrays(6), qwen2(2, True)),
    "qwen2-top3-raw": (qwen2_arrays(7), qwen2(3, False)),
}


@pytest.mark.parametrize("case", CASES)
def test_backward_matches_finite_differences(case: str) -> None:
    w, build = CASES[case]
    w = {k: v.copy() for k, v in w.items()}
    rng = np.random.default_rng(20)
    x, r = rng.normal(size=(7, D_MODEL)), rng.normal(size=(7, D_MODEL))
    layer = build(w)
    top_k = layer.top_k
    z = np.sort(logits_of(layer, w, x), axis=-1)[:, ::-1]
    assert np.min(z[:, top_k - 1] - z[:, top_k]) > 1e-4  # no choice flips under a step of 1e-6
    layer(x)
    dx = layer.backward(r)
    assert {k for k, g in layer.grads.items() if g is not None} == set(w)

    def loss() -> float:
        return float(np.sum(build(w)(x) * r))

    for name, array in w.items():
        np.testing.assert_allclose(layer.grads[name], numerical_grad(loss, array), rtol=1e-6,
                                   atol=1e-8, err_msg=name)
    np.testing.assert_allclose(dx, numerical_grad(loss, x), rtol=1e-6, atol=1e-8)


def test_gpt_oss_case_engages_the_clamp() -> None:
    # the clamped case above would prove little if no pre-activation reached the limit
    w, build = CASES["gpt-oss-top2-clamped"]
    layer = build(w)
    x = np.random.default_rng(20).normal(size=(7, D_MODEL))
    pre = [x @ w[f"experts.{i}.W"] + w[f"experts.{i}.b"] for i in range(N_EXPERTS)]
    assert sum(int((p > 0.8).sum()) for p in pre) > 0
    free = gpt_oss(2, limit=np.inf)(w)
    assert not np.allclose(layer(x), free(x))


def swiglu_rows(w: dict[str, np.ndarray], prefix: str, x: np.ndarray) -> np.ndarray:
    return (silu(x @ w[f"{prefix}W"]) * (x @ w[f"{prefix}V"])) @ w[f"{prefix}W2"]


def test_llama4_forward_matches_a_row_by_row_loop() -> None:
    w, build = CASES["llama4-top2-two-shared"]
    x = np.random.default_rng(21).normal(size=(6, D_MODEL))
    expected = np.zeros_like(x)
    for n, row in enumerate(x):
        z = row @ w["router"]
        for e in np.argsort(-z)[:2]:  # the two largest logits, each's sigmoid on the input
            expected[n] += swiglu_rows(w, f"experts.{e}.", sigmoid(z[e]) * row[None])[0]
        for j in range(2):
            expected[n] += swiglu_rows(w, f"shared_experts.{j}.", row[None])[0]
    np.testing.assert_allclose(build(w)(x), expected, rtol=1e-12, atol=1e-12)
    # scaling the output instead is another function
    out_scaled = ffn.MixtureOfExperts(w["router"], list(build(w).experts), 2, False,
                                      score="sigmoid", shared_experts=list(build(w).shared_experts))
    assert not np.allclose(out_scaled(x), expected, rtol=1e-6)


def test_gpt_oss_forward_matches_a_row_by_row_loop() -> None:
    w, build = CASES["gpt-oss-top3-free"]
    layer = build(w)
    x = np.random.default_rng(22).normal(size=(6, D_MODEL))
    expected = np.zeros_like(x)
    for n, row in enumerate(x):
        z = row @ w["router"] + w["router_bias"]
        top = np.argsort(-z)[:3]
        weights = np.exp(z[top]) / np.exp(z[top]).sum()  # a softmax over the chosen only
        for e, weight in zip(top, weights, strict=True):
            expected[n] += weight * layer.experts[e](row)
    np.testing.assert_allclose(layer(x), expected, rtol=1e-12, atol=1e-12)
    # the bias moves the choice: without it some row chooses otherwise
    plain = ffn.MixtureOfExperts(w["router"], list(layer.experts), 3)
    assert not np.array_equal(np.sort(plain.route(x)[1]), np.sort(layer.route(x)[1]))


def test_qwen2_forward_matches_a_row_by_row_loop() -> None:
    w, build = CASES["qwen2-top3-raw"]
    layer = build(w)
    assert isinstance(layer, ffn.GatedSharedMoE)
    x = np.random.default_rng(23).normal(size=(6, D_MODEL))
    expected = np.zeros_like(x)
    for n, row in enumerate(x):
        z = row @ w["router"]
        p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        for e in np.argsort(-p)[:3]:  # not renormalised: the softmax over all experts
            expected[n] += p[e] * swiglu_rows(w, f"experts.{e}.", row[None])[0]
        gate = sigmoid((row @ w["shared_gate"])[0])
        expected[n] += gate * swiglu_rows(w, "shared_experts.0.", row[None])[0]
    np.testing.assert_allclose(layer(x), expected, rtol=1e-12, atol=1e-12)


def assert_same_passes(layer: ffn.MixtureOfExperts, grouped: ffn.MixtureOfExperts,
                       rng: np.random.Generator) -> None:
    """The grouped form's forward, backward and gradients equal the layer's, bit for bit."""
    x, dy = rng.normal(size=(9, D_MODEL)), rng.normal(size=(9, D_MODEL))
    y, dx = layer(x), layer.backward(dy)
    grads = dict(layer.grads)
    np.testing.assert_array_equal(grouped(x), y)
    np.testing.assert_array_equal(grouped.backward(dy), dx)
    assert grouped.grads.keys() == grads.keys()
    for name, g in grads.items():
        np.testing.assert_array_equal(grouped.grads[name], g, err_msg=name)


def test_grouped_experts_run_the_router_bias_bit_for_bit() -> None:
    w, build = CASES["gpt-oss-top2-clamped"]
    layer = build(w)
    assert isinstance(layer, ffn.RouterBiasMoE)
    grouped = ffn.GroupedExperts(layer)
    assert_same_passes(layer, grouped, np.random.default_rng(24))


def experts_of(w: dict[str, np.ndarray]) -> list[ffn.GatedFeedForward]:
    return [block(w, f"experts.{i}.") for i in range(N_EXPERTS)]


NAN_CASES: dict[str, tuple[dict[str, np.ndarray], Callable[[dict[str, np.ndarray]], ffn.Layer]]]
NAN_CASES = {  # name: (arrays, build); MixtureOfExperts' routers, the 2025 ones, and grouped
    "mixtral": (llama4_arrays(10, 0), lambda w: ffn.MixtureOfExperts(w["router"], experts_of(w))),
    "softmax-raw": (llama4_arrays(11, 0), lambda w: ffn.MixtureOfExperts(
        w["router"], experts_of(w), 2, False)),
    "sigmoid-raw": (llama4_arrays(12, 0), lambda w: ffn.MixtureOfExperts(
        w["router"], experts_of(w), 2, False, score="sigmoid")),
    "deepseek-groups": (llama4_arrays(13, 0), lambda w: ffn.MixtureOfExperts(
        w["router"], experts_of(w), 2, score="sigmoid", bias=[0.1, -0.2, 0.3, 0.0],
        n_groups=2, top_groups=1, scale=2.5)),
    "llama4": CASES["llama4-top1"],
    "gpt-oss": CASES["gpt-oss-top2-clamped"],
    "qwen2": CASES["qwen2-top2-normalized"],
    "grouped-mixtral": (llama4_arrays(10, 0), lambda w: ffn.GroupedExperts(
        ffn.MixtureOfExperts(w["router"], experts_of(w)))),
    "grouped-gpt-oss": (CASES["gpt-oss-top2-clamped"][0], lambda w: ffn.GroupedExperts(
        gpt_oss(2, limit=0.8)(w))),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("case", NAN_CASES)
def test_a_nan_router_column_makes_every_row_nan(case: str) -> None:
    # which experts a row would choose is unknown when one logit is NaN: argsort would put it
    # last and the weights of the finite rest would be finite and wrong
    w, build = NAN_CASES[case]
    w = {k: v.copy() for k, v in w.items()}
    w["router"][:, 3] = np.nan
    layer = build(w)
    x = np.random.default_rng(27).normal(size=(5, D_MODEL))
    assert np.isnan(layer(x)).all()
    moe = getattr(layer, "moe", layer)
    if isinstance(moe, ffn.MixtureOfExperts):
        assert np.isnan(moe.route(x)[2]).all()


@pytest.mark.parametrize("case", NAN_CASES)
def test_a_nan_input_row_is_nan_and_leaves_the_others(case: str) -> None:
    w, build = NAN_CASES[case]
    layer = build(w)
    x = np.random.default_rng(28).normal(size=(5, D_MODEL))
    clean = np.delete(x, 1, axis=0)
    x[1, 2] = np.nan
    y = layer(x)
    assert np.isnan(y[1]).all()
    np.testing.assert_allclose(np.delete(y, 1, axis=0), layer(clean), rtol=1e-13, atol=0.0)


def test_grouped_experts_give_the_loop_s_nan() -> None:
    w, build = NAN_CASES["mixtral"]
    w = {k: v.copy() for k, v in w.items()}
    w["router"][:, 3] = np.nan
    x = np.random.default_rng(29).normal(size=(4, D_MODEL))
    loop = build(w)
    np.testing.assert_array_equal(ffn.GroupedExperts(loop)(x), loop(x))  # NaN equals NaN here


def test_repr_names_the_router() -> None:
    for case in ("llama4-top1", "gpt-oss-top3-free", "qwen2-top2-normalized"):
        w, build = CASES[case]
        text = repr(build(w))
        assert text.startswith(("InputScaledMoE(", "RouterBiasMoE(", "GatedSharedMoE(")), text
        assert f"n_experts={N_EXPERTS}" in text and "d_model=5" in text


def test_random_layers() -> None:
    gpt = ffn.RouterBiasMoE.random(D_MODEL, D_FF, N_EXPERTS, top_k=2, seed=3)
    assert all(isinstance(e, ffn.ClampedSwiGLU) for e in gpt.experts)
    assert gpt.router_bias.shape == (N_EXPERTS,) and not gpt.router_bias.flags.writeable
    assert list(gpt.named_parameters())[:2] == ["router", "router_bias"]
    llama = ffn.InputScaledMoE.random(D_MODEL, D_FF, N_EXPERTS)  # Llama 4's: top-1, SwiGLU
    assert llama.top_k == 1 and not llama.shared_experts
    assert all(isinstance(e, ffn.GatedFeedForward) and e.variant == "swiglu"
               for e in llama.experts)
    same = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, 1, "swiglu")  # seed 0 both
    np.testing.assert_array_equal(llama.router, same.router)
    np.testing.assert_array_equal(llama.experts[2].W, same.experts[2].W)
    assert llama(np.ones(D_MODEL)).shape == (D_MODEL,)
    gelu = ffn.InputScaledMoE.random(D_MODEL, D_FF, N_EXPERTS, top_k=2, variant=None)
    assert gelu.top_k == 2 and isinstance(gelu.experts[0], ffn.FeedForward)


# ---------------------------------------------------------------- bad input

MOE = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, top_k=2, variant="swiglu", seed=8)
SHARED = ffn.GatedFeedForward.random(D_MODEL, 6, seed=9)
GATE = np.ones((D_MODEL, 1))


@pytest.mark.parametrize(("kwargs", "exception", "message"), [
    ({"router_bias": np.ones(3)}, ValueError,
     "router_bias must be 1-D with shape (n_experts,) = (4,), got shape (3,)"),
    ({"router_bias": np.ones((4, 1))}, ValueError,
     "router_bias must be 1-D with shape (n_experts,) = (4,), got shape (4, 1)"),
    ({"router_bias": np.ones(4, np.float32)}, TypeError,
     "router_bias has dtype float32 but the experts float64"),
    ({"router_bias": None}, TypeError, "router_bias must be a real numeric array, got None"),
    ({"router_bias": [0.0, 0.0, np.nan, 0.0]}, ValueError,
     "router_bias must be finite: a NaN or infinite router_bias makes the choice meaningless"),
    ({"router_bias": [0.0, -np.inf, 0.0, 0.0]}, ValueError,
     "router_bias must be finite: a NaN or infinite router_bias makes the choice meaningless"),
    ({"top_k": 5}, ValueError, "top_k must be at most n_experts = 4, got 5"),
])
def test_router_bias_errors(kwargs: dict[str, object], exception: type[Exception],
                            message: str) -> None:
    args = {"router": MOE.router, "router_bias": np.zeros(N_EXPERTS),
            "experts": list(MOE.experts), **kwargs}
    with raises(exception, message):
        ffn.RouterBiasMoE(**args)  # type: ignore[arg-type]


# MixtureOfExperts' own checks, which InputScaledMoE passes its arguments to: the message must
# name the argument (their exact wording is MixtureOfExperts' and tested in tests/test_moe.py).
@pytest.mark.parametrize(("kwargs", "exception", "name"), [
    ({"top_k": 0}, ValueError, "top_k"),
    ({"top_k": 5}, ValueError, "top_k"),
    ({"router": np.ones((D_MODEL, 3))}, ValueError, "router"),
    ({"router": np.ones((D_MODEL, N_EXPERTS), np.float32)}, TypeError, "router"),
    ({"shared_experts": [ffn.GatedFeedForward.random(3, 4)]}, ValueError, "shared_experts[0]"),
    ({"shared_experts": "shared"}, TypeError, "shared_experts"),
    ({"experts": []}, TypeError, "experts"),
])
def test_input_scaled_errors(kwargs: dict[str, object], exception: type[Exception],
                             name: str) -> None:
    args = {"router": MOE.router, "experts": list(MOE.experts), **kwargs}
    with raises(exception, name, prefix=True) as info:
        ffn.InputScaledMoE(**args)  # type: ignore[arg-type]
    assert str(info.value).startswith(name)


@pytest.mark.parametrize(("args", "exception", "message"), [
    ((SHARED, SHARED, GATE), TypeError, "moe must be a MixtureOfExperts, got GatedFeedForward"),
    ((MOE, MOE, GATE), TypeError,
     "shared_expert must be a FeedForward or GatedFeedForward, got MixtureOfExperts"),
    ((MOE, ffn.GatedFeedForward.random(3, 4), GATE), ValueError,
     "shared_expert has d_model 3 but moe 5"),
    ((MOE, ffn.GatedFeedForward.random(D_MODEL, 4, dtype=np.float32), GATE), TypeError,
     "shared_expert has dtype float32 but moe float64"),
    ((MOE, SHARED, np.ones(D_MODEL)), ValueError,
     "shared_gate must have shape (d_model, 1) = (5, 1), got shape (5,)"),
    ((MOE, SHARED, np.ones((D_MODEL, 2))), ValueError,
     "shared_gate must have shape (d_model, 1) = (5, 1), got shape (5, 2)"),
    ((MOE, SHARED, GATE.astype(np.float32)), TypeError,
     "shared_gate has dtype float32 but moe float64"),
    ((MOE, SHARED, "gate"), TypeError, "shared_gate must be a real numeric array, got dtype <U4"),
])
def test_gated_shared_errors(args: tuple[object, ...], exception: type[Exception],
                             message: str) -> None:
    with raises(exception, message):
        ffn.GatedSharedMoE(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", ["llama4-top2-two-shared", "qwen2-top3-raw"])
def test_grouped_experts_run_input_scaling_and_the_shared_gate_bit_for_bit(case: str) -> None:
    # the grouped form is an option of the one layer: every combine rule and gate has it
    w, build = CASES[case]
    layer = build(w)
    grouped = ffn.GroupedExperts(layer)
    assert grouped.combine == layer.combine and grouped.grouped and not layer.grouped
    assert_same_passes(layer, grouped, np.random.default_rng(30))


LAYERS = {"input_scaled": ffn.InputScaledMoE(MOE.router, list(MOE.experts)),
          "router_bias": ffn.RouterBiasMoE(MOE.router, np.zeros(N_EXPERTS), list(MOE.experts)),
          "gated_shared": ffn.GatedSharedMoE(MOE, SHARED, GATE)}


@pytest.mark.parametrize("name", LAYERS)
@pytest.mark.parametrize(("x", "exception", "message"), BAD_X, ids=BAD_X_IDS)
def test_bad_input(name: str, x: object, exception: type[Exception], message: str) -> None:
    if np.dtype(np.longdouble) == np.float64 and message.startswith("x has dtype"):
        pytest.skip("long double is float64 on this platform")  # no wider dtype to refuse
    with raises(exception, message):
        LAYERS[name](x)


@pytest.mark.parametrize("name", LAYERS)
def test_wrong_width_and_backward_misuse(name: str) -> None:
    layer = LAYERS[name]
    with pytest.raises(ValueError, match="d_model"):
        layer(np.ones((2, D_MODEL + 1)))
    layer(np.ones((2, D_MODEL)))
    with raises(RuntimeError, "dy has shape (3, 5) but the last forward output has shape (2, 5)"):
        layer.backward(np.ones((3, D_MODEL)))


@pytest.mark.parametrize("name", LAYERS)
def test_copies_pickles_and_read_only_parameters(name: str) -> None:
    layer = copy.deepcopy(LAYERS[name])  # its own: LAYERS are shared by the tests
    rng = np.random.default_rng(25)
    x, dy = rng.normal(size=(4, D_MODEL)), rng.normal(size=(4, D_MODEL))
    layer(x)
    expected = layer.backward(dy)
    for other in (copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        assert other._lock is not layer._lock
        np.testing.assert_array_equal(other.backward(dy), expected)
    built = LAYERS[name]
    for one in (built, layer, copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        for key, value in one.named_parameters().items():  # as built, and copies of it
            assert value is None or not value.flags.writeable, key
    with pytest.raises(AttributeError, match="read-only"):
        built.d_model = 7  # type: ignore[misc]


def test_gated_shared_gradients_belong_to_its_own_forward() -> None:
    # the experts and the shared expert are layers a caller may run in between
    w, build = CASES["qwen2-top2-normalized"]
    layer, alone = build(w), build(w)
    assert isinstance(layer, ffn.GatedSharedMoE)
    rng = np.random.default_rng(26)
    x, other, dy = (rng.normal(size=(4, D_MODEL)) for _ in range(3))
    layer(x)
    for expert in (*layer.experts, *layer.shared_experts):
        expert(other)
    alone(x)
    np.testing.assert_array_equal(layer.backward(dy), alone.backward(dy))
    for key, g in alone.grads.items():
        np.testing.assert_array_equal(layer.grads[key], g, err_msg=key)
