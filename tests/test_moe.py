"""`ffn.MixtureOfExperts`: forward against a row-by-row computation with the math module,
backward against central finite differences (router, every expert's parameters, the input),
the load-balancing loss and the capacity against plain loops, and every error. The same for
DeepSeek-V3's router options (sigmoid scores, choice bias, groups, scale, shared experts): the
bias's finite-difference gradient is zero and it gets no entry in `grads`."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import ffn
from tests.test_errors import BAD_X, BAD_X_IDS, raises
from tests.test_feedforward import numerical_grad

D_MODEL, D_FF, N_EXPERTS = 4, 5, 5


def build(w: dict[str, np.ndarray], gated: bool, top_k: int,
          normalize: bool = True) -> ffn.MixtureOfExperts:
    """A layer from flat arrays named like its gradients ("router", "experts.0.W1", ...)."""
    names = ("W", "V", "W2") if gated else ("W1", "b1", "W2", "b2")
    kind = ffn.GatedFeedForward if gated else ffn.FeedForward
    experts = [kind(*(w[f"experts.{i}.{n}"] for n in names)) for i in range(N_EXPERTS)]
    return ffn.MixtureOfExperts(w["router"], experts, top_k=top_k, normalize=normalize)


def random_arrays(seed: int, gated: bool) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = {"router": rng.normal(size=(D_MODEL, N_EXPERTS))}
    shapes = ({"W": (D_MODEL, D_FF), "V": (D_MODEL, D_FF), "W2": (D_FF, D_MODEL)} if gated else
              {"W1": (D_MODEL, D_FF), "b1": (D_FF,), "W2": (D_FF, D_MODEL), "b2": (D_MODEL,)})
    for i in range(N_EXPERTS):
        for name, shape in shapes.items():
            w[f"experts.{i}.{name}"] = rng.normal(size=shape) * 0.7
    return w


def naive_moe(moe: ffn.MixtureOfExperts, x: np.ndarray) -> np.ndarray:
    """Row by row: softmax with math.exp, a sort by (-p, index), a weighted sum of experts."""
    out = []
    for row in x:
        logits = [sum(row[j] * moe.router[j, e] for j in range(D_MODEL))
                  for e in range(moe.n_experts)]
        m = max(logits)
        z = [math.exp(v - m) for v in logits]
        p = [v / sum(z) for v in z]
        top = sorted(range(moe.n_experts), key=lambda e: (-p[e], e))[:moe.top_k]
        total = sum(p[e] for e in top) if moe.normalize else 1.0
        out.append(sum(p[e] / total * moe.experts[e](row) for e in top))
    return np.array(out)


@pytest.mark.parametrize("gated", [False, True], ids=["gelu", "swiglu"])
@pytest.mark.parametrize("top_k", [1, 2, N_EXPERTS])
@pytest.mark.parametrize("normalize", [True, False])
def test_forward_matches_a_row_by_row_computation(gated: bool, top_k: int,
                                                  normalize: bool) -> None:
    moe = build(random_arrays(1, gated), gated, top_k, normalize)
    x = np.random.default_rng(2).normal(size=(7, D_MODEL))
    np.testing.assert_allclose(moe(x), naive_moe(moe, x), rtol=1e-13, atol=1e-14)


def test_route_shapes_and_sums() -> None:
    moe = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, top_k=3, seed=4)
    x = np.random.default_rng(5).normal(size=(2, 3, D_MODEL))
    p, chosen, weights = moe.route(x)
    assert p.shape == (2, 3, N_EXPERTS) and chosen.shape == weights.shape == (2, 3, 3)
    np.testing.assert_allclose(p.sum(-1), 1.0, rtol=1e-15)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-15)
    assert np.all(np.diff(np.take_along_axis(p, chosen, -1), axis=-1) <= 0)  # best first
    assert moe(x).shape == x.shape


def test_ties_go_to_the_lower_index() -> None:
    experts = [ffn.FeedForward.random(D_MODEL, D_FF, seed=s) for s in range(N_EXPERTS)]
    router = np.zeros((D_MODEL, N_EXPERTS))
    router[:, 3] = 1.0  # expert 3 wins for x of ones, the other four tie
    moe = ffn.MixtureOfExperts(router, experts, top_k=3)
    _, chosen, weights = moe.route(np.ones((2, D_MODEL)))
    assert chosen.tolist() == [[3, 0, 1], [3, 0, 1]]
    assert weights[0, 1] == weights[0, 2]


def test_all_experts_without_renormalising_is_the_dense_mixture() -> None:
    moe = build(random_arrays(6, False), False, N_EXPERTS, normalize=False)
    x = np.random.default_rng(7).normal(size=(4, D_MODEL))
    p = moe.route(x)[0]
    dense = sum(p[:, [e]] * moe.experts[e](x) for e in range(N_EXPERTS))
    np.testing.assert_allclose(moe(x), dense, rtol=1e-13)


@pytest.mark.parametrize("gated", [False, True], ids=["gelu", "swiglu"])
@pytest.mark.parametrize(("top_k", "normalize"), [(1, True), (2, True), (2, False), (3, True)])
def test_backward_matches_finite_differences(gated: bool, top_k: int, normalize: bool) -> None:
    w = random_arrays(8, gated)
    rng = np.random.default_rng(9)
    x, r = rng.normal(size=(6, D_MODEL)), rng.normal(size=(6, D_MODEL))
    moe = build(w, gated, top_k, normalize)
    p = np.sort(moe.route(x)[0], axis=-1)[:, ::-1]
    if top_k < N_EXPERTS:  # the choice must not flip under a step of 1e-6
        assert np.min(p[:, top_k - 1] - p[:, top_k]) > 1e-4
    moe(x)
    dx = moe.backward(r)
    assert {k for k, g in moe.grads.items() if g is not None} == set(w)  # None: absent biases

    def loss() -> float:
        return float(np.sum(build(w, gated, top_k, normalize)(x) * r))

    for name, array in w.items():
        expected = numerical_grad(loss, array)
        got = moe.grads[name]
        assert got is not None
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8, err_msg=name)
    np.testing.assert_allclose(dx, numerical_grad(loss, x), rtol=1e-6, atol=1e-8)


def test_an_expert_no_row_chose_gets_zero_gradients() -> None:
    w = random_arrays(10, False)
    w["router"][:, 4] = -50.0  # expert 4 is never in the top 2 for x > 0
    moe = build(w, False, 2)
    moe(np.abs(np.random.default_rng(11).normal(size=(5, D_MODEL))) + 0.1)
    moe.backward(np.ones((5, D_MODEL)))
    for name in ("W1", "b1", "W2", "b2"):
        g = moe.grads[f"experts.4.{name}"]
        assert g is not None and g.shape == w[f"experts.4.{name}"].shape and not g.any()


def test_gradients_belong_to_the_forward_that_ran() -> None:
    moe = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, seed=12)
    rng = np.random.default_rng(13)
    x, dy = rng.normal(size=(6, D_MODEL)), rng.normal(size=(6, D_MODEL))
    moe(x)
    expected_dx = moe.backward(dy)
    expected = {k: np.copy(v) for k, v in moe.grads.items() if v is not None}
    moe(x)
    for expert in moe.experts:  # each expert's own last pass is now about other rows
        expert(rng.normal(size=(3, D_MODEL)))
    x[:] = 0.0  # and the caller's input changed
    np.testing.assert_array_equal(moe.backward(dy), expected_dx)
    for name, value in expected.items():
        np.testing.assert_array_equal(moe.grads[name], value, err_msg=name)


def test_load_balancing_loss_against_a_loop() -> None:
    moe = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, top_k=2, seed=14)
    x = np.random.default_rng(15).normal(size=(40, D_MODEL))
    p, chosen, _ = moe.route(x)
    total = 0.0
    for e in range(N_EXPERTS):
        f = sum(e in row for row in chosen.tolist()) / len(x)
        total += f * sum(p[:, e]) / len(x)
    assert moe.load_balancing_loss(x) == pytest.approx(N_EXPERTS * total, rel=1e-14)
    uniform = ffn.MixtureOfExperts(np.zeros((D_MODEL, N_EXPERTS)), list(moe.experts), top_k=2)
    assert uniform.load_balancing_loss(x) == pytest.approx(2.0, rel=1e-15)  # top_k at p = 1/E


@pytest.mark.parametrize("factor", [0.5, 1.0, 1.25, 3.0])
def test_dispatch_against_first_come_first_served(factor: float) -> None:
    moe = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, top_k=2, seed=16)
    x = np.random.default_rng(17).normal(size=(30, D_MODEL))
    result = moe.dispatch(x, capacity_factor=factor)
    capacity = math.ceil(factor * 30 * 2 / N_EXPERTS)
    load, dropped = [0] * N_EXPERTS, 0
    for row in moe.route(x)[1].tolist():
        for e in row:
            if load[e] < capacity:
                load[e] += 1
            else:
                dropped += 1
    assert result.capacity == capacity and result.dropped == dropped
    assert result.kept.tolist() == load and int(result.assigned.sum()) == 60


def test_random_experts() -> None:
    plain = ffn.MixtureOfExperts.random(D_MODEL, D_FF, 3, top_k=1, seed=0)
    gated = ffn.MixtureOfExperts.random(D_MODEL, D_FF, 3, variant="geglu", dtype=np.float32)
    assert all(type(e) is ffn.FeedForward and e.activation == "gelu" for e in plain.experts)
    assert all(type(e) is ffn.GatedFeedForward and e.variant == "geglu" for e in gated.experts)
    assert gated.router.dtype == gated(np.ones(D_MODEL)).dtype == np.float32
    assert not np.array_equal(plain.experts[0].W1, plain.experts[1].W1)
    again = ffn.MixtureOfExperts.random(D_MODEL, D_FF, 3, top_k=1, seed=0)
    np.testing.assert_array_equal(plain.router, again.router)
    np.testing.assert_array_equal(plain.experts[2].W2, again.experts[2].W2)
    assert not plain.router.flags.writeable
    assert repr(plain) == ("MixtureOfExperts(n_experts=3, top_k=1, experts=FeedForward('gelu'), "
                           "d_model=4, d_ff=5, normalize=True, dtype=float64)")


# ---------------------------------------------------------------- errors


def experts(n: int = 3, **kw: object) -> list[ffn.FeedForward]:
    return [ffn.FeedForward.random(D_MODEL, D_FF, seed=s, **kw) for s in range(n)]  # type: ignore[arg-type]


@pytest.mark.parametrize(("router", "exps", "top_k", "exception", "message"), [
    (np.ones((D_MODEL, 2)), experts(), 2, ValueError,
     "router has shape (4, 2) but n_experts is 3: router must be (d_model, n_experts) = (4, 3)"),
    (np.ones((3, 3)), experts(), 2, ValueError,
     "router has shape (3, 3) but d_model is 4: router must be (d_model, n_experts) = (4, 3)"),
    (np.ones(3), experts(), 2, ValueError,
     "router must be 2-D with shape (d_model, n_experts), got shape (3,)"),
    ("abc", experts(), 2, TypeError, "router must be a real numeric array, got dtype <U3"),
    (np.ones((D_MODEL, 3), np.float32), experts(), 2, TypeError,
     "router has dtype float32 but the experts float64"),
    (np.ones((D_MODEL, 3)), [], 2, TypeError, ("experts must be a non-empty list or tuple, "
     "got list []")),
    (np.ones((D_MODEL, 3)), experts()[0], 2, TypeError,
     ("experts must be a non-empty list or tuple, got FeedForward "
     "FeedForward(d_model=4, d_ff=5, activation='gelu', bias=True, dtype=float64)")),
    (np.ones((D_MODEL, 2)), [experts()[0], "expert"], 2, TypeError,
     "experts[1] must be a FeedForward or GatedFeedForward, got str"),
    (np.ones((D_MODEL, 2)), [experts()[0], ffn.GatedFeedForward.random(D_MODEL, D_FF)], 2,
     ValueError, ("experts must share one kind: experts[0] has FeedForward('gelu'), "
     "experts[1] has GatedFeedForward('swiglu')")),
    (np.ones((D_MODEL, 2)), [experts()[0], ffn.FeedForward.random(D_MODEL, D_FF, "relu")], 2,
     ValueError, ("experts must share one kind: experts[0] has FeedForward('gelu'), "
     "experts[1] has FeedForward('relu')")),
    (np.ones((D_MODEL, 2)), [experts()[0], ffn.FeedForward.random(D_MODEL, 6)], 2,
     ValueError, "experts must share one d_ff: experts[0] has 5, experts[1] has 6"),
    (np.ones((D_MODEL, 2)), [experts()[0], ffn.FeedForward.random(3, D_FF)], 2,
     ValueError, "experts must share one d_model: experts[0] has 4, experts[1] has 3"),
    (np.ones((D_MODEL, 2)), [experts()[0], *experts(1, dtype=np.float32)], 2,
     TypeError, "experts must share one dtype: experts[0] has float64, experts[1] has float32"),
    (np.ones((D_MODEL, 3)), experts(), 0, ValueError, "top_k must be positive, got 0"),
    (np.ones((D_MODEL, 3)), experts(), 4, ValueError, "top_k must be at most n_experts = 3, got 4"),
    (np.ones((D_MODEL, 3)), experts(), True, TypeError, "top_k must be an int, got bool True"),
    (np.ones((D_MODEL, 3)), experts(), 2.0, TypeError, "top_k must be an int, got float 2.0"),
])
def test_constructor_errors(router: object, exps: object, top_k: object,
                            exception: type[Exception], message: str) -> None:
    with raises(exception, message):
        ffn.MixtureOfExperts(router, exps, top_k=top_k)  # type: ignore[arg-type]


def test_normalize_must_be_a_bool() -> None:
    with raises(TypeError, "normalize must be a bool, got str 'yes'"):
        ffn.MixtureOfExperts(np.ones((D_MODEL, 3)), experts(), normalize="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(("x", "exception", "message"), BAD_X, ids=BAD_X_IDS)
def test_bad_input(x: object, exception: type[Exception], message: str) -> None:
    if np.dtype(np.longdouble) == np.float64 and message.startswith("x has dtype"):
        pytest.skip("long double is float64 on this platform")
    moe = ffn.MixtureOfExperts(np.ones((D_MODEL, 3)), experts())
    for method in (moe.forward, moe.route, moe.load_balancing_loss, moe.dispatch):
        with raises(exception, message):
            method(x)


def test_wrong_width_and_backward_misuse() -> None:
    moe = ffn.MixtureOfExperts(np.ones((D_MODEL, 3)), experts())
    with raises(ValueError, "x has last dimension 3 but d_model is 4 (x.shape=(2, 3))"):
        moe(np.ones((2, 3)))
    with raises(RuntimeError, "backward() called before a forward pass: call moe(x) first"):
        moe.backward(np.ones((2, D_MODEL)))
    moe(np.ones((2, D_MODEL)))
    with raises(RuntimeError, "dy has shape (3, 4) but the last forward output has shape (2, 4)"):
        moe.backward(np.ones((3, D_MODEL)))


@pytest.mark.parametrize("groups", [1, 2])
@pytest.mark.parametrize("lead", [(0,), (2, 0)])
def test_an_empty_batch_routes_and_dispatches_like_forward(lead: tuple[int, ...],
                                                           groups: int) -> None:
    # Issue 26: route, dispatch and load_balancing_loss raised numpy's reshape error on
    # (0, d_model) while forward worked. Now route and dispatch give the empty results; with
    # groups too (reshaping 0 rows to (0, n_groups, -1) was numpy's error as well).
    n_experts = 4  # 2 groups of 2
    random = ffn.MixtureOfExperts.random(D_MODEL, D_FF, n_experts, top_k=2)
    moe = ffn.MixtureOfExperts(random.router, list(random.experts), 2, n_groups=groups)
    x = np.ones((*lead, D_MODEL))
    assert moe(x).shape == x.shape and moe.backward(np.ones_like(x)).shape == x.shape
    p, chosen, weights = moe.route(x)
    assert p.shape == (*lead, n_experts) and chosen.shape == weights.shape == (*lead, 2)
    assert chosen.dtype == moe.route(np.ones(D_MODEL))[1].dtype and p.dtype == np.float64
    capacity, assigned, kept, dropped = moe.dispatch(x)
    assert (capacity, dropped) == (0, 0)
    assert assigned.tolist() == kept.tolist() == [0] * n_experts
    with raises(ValueError, f"x has no rows (shape {x.shape}): the load-balancing loss, a mean "
                "over rows, is undefined"):
        moe.load_balancing_loss(x)
    with raises(ValueError, f"x has no rows (shape {x.shape}): the load-balancing loss, a mean "
                "over rows, is undefined"):
        moe.load_balancing_grad(x)


@pytest.mark.parametrize(("factor", "exception", "message"), [
    (0.0, ValueError, "capacity_factor must be in (0, 1e+06], got 0.0"),
    (-1, ValueError, "capacity_factor must be in (0, 1e+06], got -1.0"),
    (float("nan"), ValueError, "capacity_factor must be in (0, 1e+06], got nan"),
    ("1", TypeError, "capacity_factor must be a real number, got str '1'"),
])
def test_dispatch_errors(factor: object, exception: type[Exception], message: str) -> None:
    moe = ffn.MixtureOfExperts(np.ones((D_MODEL, 3)), experts())
    with raises(exception, message):
        moe.dispatch(np.ones((2, D_MODEL)), capacity_factor=factor)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "exception", "message"), [
    ({"variant": "gelu"}, ValueError,
     "unknown variant 'gelu'; valid: 'glu', 'reglu', 'geglu', 'geglu_tanh', 'swiglu'"),
    ({"n_experts": 0}, ValueError, "n_experts must be positive, got 0"),
    ({"top_k": 9}, ValueError, "top_k must be at most n_experts = 3, got 9"),
    ({"seed": -1}, ValueError, "seed must be non-negative, got -1"),
    ({"dtype": np.int32}, TypeError, "dtype must be float32 or float64, got int32"),
])
def test_random_errors(kwargs: dict[str, object], exception: type[Exception],
                       message: str) -> None:
    args: dict[str, object] = {"d_model": D_MODEL, "d_ff": D_FF, "n_experts": 3} | kwargs
    with raises(exception, message):
        ffn.MixtureOfExperts.random(**args)  # type: ignore[arg-type]


# ---------------------------------------------------------------- DeepSeek's router

E_DS = 8  # experts in the DeepSeek-style tests: 4 groups of 2, or 2 groups of 4

DEEPSEEK_CASES = {  # name: keyword arguments beyond router, experts and top_k
    "sigmoid": {"score": "sigmoid"},
    "sigmoid-bias": {"score": "sigmoid", "bias": True},
    "sigmoid-raw": {"score": "sigmoid", "normalize": False, "scale": 1.5},
    "groups-4-of-2": {"score": "sigmoid", "bias": True, "n_groups": 4, "top_groups": 2,
                      "scale": 2.5, "shared": 1},
    "groups-2-of-4": {"score": "sigmoid", "bias": True, "n_groups": 2, "top_groups": 1,
                      "scale": 2.5, "shared": 2},
    "softmax-shared": {"bias": True, "n_groups": 2, "top_groups": 2, "scale": 0.5, "shared": 1},
}


def deepseek_arrays(seed: int, gated: bool, shared: int) -> dict[str, np.ndarray]:
    """Router, expert and shared-expert arrays (shared experts 3 wide), named like ``grads``."""
    rng = np.random.default_rng(seed)
    w = {"router": rng.normal(size=(D_MODEL, E_DS))}
    for prefix, count, width in (("experts", E_DS, D_FF), ("shared_experts", shared, 3)):
        shapes = ({"W": (D_MODEL, width), "V": (D_MODEL, width), "W2": (width, D_MODEL)}
                  if gated else {"W1": (D_MODEL, width), "b1": (width,),
                                 "W2": (width, D_MODEL), "b2": (D_MODEL,)})
        for i in range(count):
            for name, shape in shapes.items():
                w[f"{prefix}.{i}.{name}"] = rng.normal(size=shape) * 0.7
    return w


def build_deepseek(w: dict[str, np.ndarray], gated: bool, top_k: int, bias: np.ndarray | None,
                   options: dict[str, object]) -> ffn.MixtureOfExperts:
    names = ("W", "V", "W2") if gated else ("W1", "b1", "W2", "b2")
    kind = ffn.GatedFeedForward if gated else ffn.FeedForward
    blocks = {prefix: [kind(*(w[f"{prefix}.{i}.{n}"] for n in names))
                       for i in range(count)]
              for prefix, count in (("experts", E_DS),
                                    ("shared_experts", int(options.get("shared", 0))))}
    kw = {k: v for k, v in options.items() if k not in ("bias", "shared")}
    return ffn.MixtureOfExperts(w["router"], blocks["experts"], top_k, bias=bias,
                                shared_experts=blocks["shared_experts"], **kw)  # type: ignore[arg-type]


def naive_deepseek(moe: ffn.MixtureOfExperts, x: np.ndarray) -> np.ndarray:
    """Row by row with math: scores, biased choice, groups by their two best, weights, shared."""
    out = []
    size = moe.n_experts // moe.n_groups
    for row in x:
        logits = [sum(row[j] * moe.router[j, e] for j in range(moe.d_model))
                  for e in range(moe.n_experts)]
        if moe.score == "softmax":
            z = [math.exp(v - max(logits)) for v in logits]
            s = [v / sum(z) for v in z]
        else:
            s = [1 / (1 + math.exp(-v)) for v in logits]
        c = [s[e] + (0.0 if moe.bias is None else moe.bias[e]) for e in range(moe.n_experts)]
        group_score = [sum(sorted(c[g * size:(g + 1) * size], reverse=True)[:2])
                       for g in range(moe.n_groups)]
        groups = sorted(range(moe.n_groups), key=lambda g: (-group_score[g], g))[:moe.top_groups]
        allowed = [e for e in range(moe.n_experts) if e // size in groups]
        top = sorted(allowed, key=lambda e: (-c[e], e))[:moe.top_k]
        total = sum(s[e] for e in top) if moe.normalize else 1.0
        y = sum(moe.scale * s[e] / total * moe.experts[e](row) for e in top)
        out.append(y + sum((shared(row) for shared in moe.shared_experts), np.zeros(D_MODEL)))
    return np.array(out)


def choice_margins(moe: ffn.MixtureOfExperts, x: np.ndarray) -> float:
    """The smallest gap, over rows, that keeps the chosen groups and experts as they are."""
    p = moe.route(x)[0]
    c = p + (0.0 if moe.bias is None else moe.bias)  # (N, E)
    grouped = c.reshape(len(x), moe.n_groups, -1)
    group_score = np.sort(grouped, -1)[..., ::-1][..., :2].sum(-1)  # (N, n_groups)
    gaps = [np.inf]
    if moe.top_groups < moe.n_groups:
        g = np.sort(group_score, -1)[:, ::-1]
        gaps.append(np.min(g[:, moe.top_groups - 1] - g[:, moe.top_groups]))
    kept = np.argsort(-group_score, -1, kind="stable")[:, :moe.top_groups]
    size = moe.n_experts // moe.n_groups
    allowed = np.array([[e // size in k for e in range(moe.n_experts)] for k in kept])
    masked = np.sort(np.where(allowed, c, -np.inf), -1)[:, ::-1]
    if moe.top_k < masked.shape[1]:
        gaps.append(np.min(masked[:, moe.top_k - 1] - masked[:, moe.top_k]))
    return float(min(gaps))


@pytest.mark.parametrize("gated", [False, True], ids=["gelu", "swiglu"])
@pytest.mark.parametrize("case", list(DEEPSEEK_CASES))
def test_deepseek_forward_matches_a_row_by_row_computation(gated: bool, case: str) -> None:
    options = DEEPSEEK_CASES[case]
    w = deepseek_arrays(20, gated, int(options.get("shared", 0)))
    bias = np.random.default_rng(21).normal(size=E_DS) * 0.3 if options.get("bias") else None
    moe = build_deepseek(w, gated, 3, bias, options)
    x = np.random.default_rng(22).normal(size=(9, D_MODEL))
    np.testing.assert_allclose(moe(x), naive_deepseek(moe, x), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("gated", [False, True], ids=["gelu", "swiglu"])
@pytest.mark.parametrize("case", list(DEEPSEEK_CASES))
def test_deepseek_backward_matches_finite_differences(gated: bool, case: str) -> None:
    options = DEEPSEEK_CASES[case]
    w = deepseek_arrays(23, gated, int(options.get("shared", 0)))
    bias = np.random.default_rng(24).normal(size=E_DS) * 0.3 if options.get("bias") else None
    rng = np.random.default_rng(25)
    x, r = rng.normal(size=(6, D_MODEL)), rng.normal(size=(6, D_MODEL))
    moe = build_deepseek(w, gated, 3, bias, options)
    assert choice_margins(moe, x) > 1e-4  # no choice flips under a step of 1e-6
    moe(x)
    dx = moe.backward(r)
    assert set(moe.grads) == set(moe.named_parameters()) and "bias" not in moe.grads
    assert {k for k, g in moe.grads.items() if g is not None} == set(w)  # None: absent biases

    def loss() -> float:
        return float(np.sum(build_deepseek(w, gated, 3, bias, options)(x) * r))

    for name, array in w.items():
        got = moe.grads[name]
        assert got is not None
        np.testing.assert_allclose(got, numerical_grad(loss, array), rtol=1e-6, atol=1e-8,
                                   err_msg=name)
    np.testing.assert_allclose(dx, numerical_grad(loss, x), rtol=1e-6, atol=1e-8)
    if bias is not None:  # it only chooses: while no choice flips, the output ignores it
        np.testing.assert_array_equal(numerical_grad(loss, bias), 0.0)


def test_the_bias_chooses_but_never_weighs() -> None:
    w = deepseek_arrays(26, True, 0)
    x = np.random.default_rng(27).normal(size=(5, D_MODEL))
    plain = build_deepseek(w, True, 2, None, {"score": "sigmoid"})
    bias = np.zeros(E_DS)
    bias[6] = 10.0  # expert 6 is now every row's first choice
    biased = build_deepseek(w, True, 2, bias, {"score": "sigmoid"})
    p, chosen, weights = biased.route(x)
    np.testing.assert_array_equal(p, plain.route(x)[0])  # the scores themselves: unbiased
    assert (chosen[:, 0] == 6).all()
    g = np.take_along_axis(p, chosen, -1)
    np.testing.assert_allclose(weights, g / g.sum(-1, keepdims=True), rtol=1e-15)
    assert weights[:, 0].max() < 0.99  # its weight is its sigmoid score's share, not 10's


def test_explicit_defaults_are_mixtral_bit_for_bit() -> None:
    w = random_arrays(28, True)
    x = np.random.default_rng(29).normal(size=(7, D_MODEL))
    plain = build(w, True, 2)
    explicit = ffn.MixtureOfExperts(plain.router, list(plain.experts), 2, True, score="softmax",
                                    bias=None, n_groups=1, top_groups=1, scale=1.0,
                                    shared_experts=())
    np.testing.assert_array_equal(explicit(x), plain(x))
    dy = np.ones_like(x)
    np.testing.assert_array_equal(explicit.backward(dy), plain.backward(dy))
    assert repr(explicit) == repr(plain) and "score" not in repr(plain)


def test_groups_limit_the_choice() -> None:
    # Expert 0 has the best score of all, but its group's second best is poor: with one group
    # kept, the two experts come from the group with the best pair.
    experts = [ffn.FeedForward.random(D_MODEL, D_FF, seed=s) for s in range(4)]
    bias = np.array([3.0, -3.0, 2.0, 2.0])
    moe = ffn.MixtureOfExperts(np.zeros((D_MODEL, 4)), experts, 2, score="sigmoid", bias=bias,
                               n_groups=2, top_groups=1, scale=2.5)
    _, chosen, weights = moe.route(np.ones((1, D_MODEL)))
    assert chosen.tolist() == [[2, 3]]  # group 1: 2 + 2 beats group 0: 3 - 3
    np.testing.assert_allclose(weights, [[1.25, 1.25]], rtol=1e-15)  # 0.5 / 1.0 * 2.5
    one_group = ffn.MixtureOfExperts(np.zeros((D_MODEL, 4)), experts, 2, score="sigmoid",
                                     bias=bias)
    assert one_group.route(np.ones((1, D_MODEL)))[1].tolist() == [[0, 2]]
    assert repr(moe) == ("MixtureOfExperts(n_experts=4, top_k=2, experts=FeedForward('gelu'), "
                         "d_model=4, d_ff=5, normalize=True, score='sigmoid', bias=True, "
                         "n_groups=2, scale=2.5, dtype=float64)")  # top_groups=1: default


def test_shared_experts_are_added_with_weight_one() -> None:
    moe = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, top_k=2, variant="swiglu",
                                      seed=30)
    shared = [ffn.GatedFeedForward.random(D_MODEL, 7, seed=31),
              ffn.GatedFeedForward.random(D_MODEL, 2, seed=32)]
    with_shared = ffn.MixtureOfExperts(moe.router, list(moe.experts), 2, shared_experts=shared)
    x = np.random.default_rng(33).normal(size=(3, D_MODEL))
    np.testing.assert_allclose(with_shared(x), moe(x) + shared[0](x) + shared[1](x),
                               rtol=1e-14, atol=1e-15)
    names = list(with_shared.named_parameters())
    assert names[-len(shared[1].named_parameters()):] == [
        f"shared_experts.1.{name}" for name in shared[1].named_parameters()]
    assert with_shared.named_parameters()["shared_experts.0.W"] is shared[0].W


def test_sigmoid_load_balancing_loss_against_a_loop() -> None:
    w = deepseek_arrays(34, False, 0)
    moe = build_deepseek(w, False, 2, None, {"score": "sigmoid"})
    x = np.random.default_rng(35).normal(size=(30, D_MODEL))
    p, chosen, _ = moe.route(x)
    total = 0.0
    for e in range(E_DS):
        f = sum(e in row for row in chosen.tolist()) / len(x)
        total += f * sum(p[n, e] / sum(p[n]) for n in range(len(x))) / len(x)
    assert moe.load_balancing_loss(x) == pytest.approx(E_DS * total, rel=1e-14)


@pytest.mark.parametrize(("kwargs", "exception", "message"), [
    ({"score": "relu"}, ValueError,
     "unknown score 'relu'; valid: 'softmax', 'sigmoid', 'sqrtsoftplus'"),
    ({"bias": np.zeros(3)}, ValueError,
     "bias must be 1-D with shape (n_experts,) = (4,), got shape (3,)"),
    ({"bias": np.zeros((1, 4))}, ValueError,
     "bias must be 1-D with shape (n_experts,) = (4,), got shape (1, 4)"),
    ({"bias": np.zeros(4, np.float32)}, TypeError,
     "bias has dtype float32 but the experts float64"),
    ({"bias": [0.0, np.nan, 0.0, 0.0]}, ValueError,
     "bias must be finite: a NaN or infinite bias makes the choice meaningless"),
    ({"n_groups": 3}, ValueError, "n_groups must divide n_experts = 4, got 3"),
    ({"n_groups": 4}, ValueError, ("n_groups = 4 leaves 1 expert a group: a group's score is the "
                                   "sum of its two best, so each needs at least 2")),
    ({"n_groups": 0}, ValueError, "n_groups must be positive, got 0"),
    ({"n_groups": 2, "top_groups": 3}, ValueError,
     "top_groups must be at most n_groups = 2, got 3"),
    ({"top_groups": 1.0}, TypeError, "top_groups must be an int, got float 1.0"),
    ({"n_groups": 2, "top_groups": 1, "top_k": 3}, ValueError,
     "top_k = 3 is more than the 2 experts of top_groups = 1 groups of 2"),
    ({"scale": 0.0}, ValueError, "scale must be in (0, 1e+06], got 0.0"),
    ({"scale": "2.5"}, TypeError, "scale must be a real number, got str '2.5'"),
    ({"shared_experts": None}, TypeError,
     "shared_experts must be a list or tuple, got NoneType None"),
    ({"shared_experts": ["x"]}, TypeError,
     "shared_experts[0] must be a FeedForward or GatedFeedForward, got str"),
    ({"shared_experts": [ffn.FeedForward.random(3, D_FF)]}, ValueError,
     "shared_experts[0] has d_model 3 but the experts 4"),
    ({"shared_experts": [ffn.FeedForward.random(D_MODEL, D_FF, dtype=np.float32)]}, TypeError,
     "shared_experts[0] has dtype float32 but the experts float64"),
])
def test_deepseek_option_errors(kwargs: dict[str, object], exception: type[Exception],
                                message: str) -> None:
    args: dict[str, object] = {"top_k": 2} | kwargs
    with raises(exception, message):
        ffn.MixtureOfExperts(np.ones((D_MODEL, 4)), experts(4), **args)  # type: ignore[arg-type]



@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
def test_load_balancing_grad_matches_finite_differences(score: str) -> None:
    w = deepseek_arrays(36, True, 0)
    x = np.random.default_rng(37).normal(size=(12, D_MODEL))

    def layer() -> ffn.MixtureOfExperts:
        return build_deepseek(w, True, 3, None, {"score": score})

    assert choice_margins(layer(), x) > 1e-4  # f stays put under a step of 1e-6
    expected = numerical_grad(lambda: layer().load_balancing_loss(x), w["router"])
    np.testing.assert_allclose(layer().load_balancing_grad(x), expected, rtol=1e-6, atol=1e-9)
    with raises(ValueError, "x has no rows (shape (0, 4)): the load-balancing loss, a mean over "
                "rows, is undefined"):
        layer().load_balancing_grad(np.ones((0, D_MODEL)))


# ---------------------------------------------------------------- extreme logits (issue 30)


def identity_router(score: str, top_k: int = 2, **kw: object) -> ffn.MixtureOfExperts:
    """Four experts and the identity as router: the logits are x itself."""
    experts = [ffn.FeedForward.random(4, 3, seed=s) for s in range(4)]
    return ffn.MixtureOfExperts(np.eye(4), experts, top_k, score=score, **kw)  # type: ignore[arg-type]


def exact_weights(logits: list[float], chosen: list[int], score: str) -> list[float]:
    """The chosen experts' scores divided by their sum, with mpmath to 50 digits."""
    with mpmath.workdps(50):
        ls = [mpmath.mpf(v) for v in logits]
        s = [mpmath.exp(v) if score == "softmax" else 1 / (1 + mpmath.exp(-v)) for v in ls]
        total = sum(s[e] for e in chosen)
        return [float(s[e] / total) for e in chosen]


@pytest.mark.parametrize("score", ["sigmoid", "softmax"])
@pytest.mark.parametrize("logits", [[-810.0, -800.0, -820.0, -790.0],
                                    [-1e4, -1e4 + 30, -1e4 + 40, -2e4],
                                    [40.0, 41.0, 39.0, -5.0], [1e-20, 0.0, -1e-20, 2e-20]],
                         ids=["near -800", "near -1e4", "saturated 40, 41", "tiny gaps"])
def test_extreme_finite_logits_route_by_their_order(score: str, logits: list[float]) -> None:
    """Issue 30: with sigmoid scores and logits near -800 every p underflowed to 0, the weights
    were 0/0 = NaN and moe(x) and the load-balancing loss NaN; logits 40 and 41 saturated to 1.0
    and tied. The choice follows the logits (sigmoid and softmax keep their order); the weights
    are the exact ones to 1e-13."""
    moe = identity_router(score)
    x = np.array([logits])
    expected = sorted(range(4), key=lambda e: (-logits[e], e))[:2]
    _, chosen, weights = moe.route(x)
    assert chosen[0].tolist() == expected
    np.testing.assert_allclose(weights[0], exact_weights(logits, expected, score), rtol=1e-13)
    y = moe(x)
    by_hand = sum(w * moe.experts[e](x[0]) for w, e in zip(weights[0], expected, strict=True))
    np.testing.assert_allclose(y[0], by_hand, rtol=1e-13)
    assert math.isfinite(moe.load_balancing_loss(x))
    assert np.all(np.isfinite(moe.load_balancing_grad(x)))
    moe.backward(np.ones_like(y))
    assert all(np.all(np.isfinite(g)) for g in moe.grads.values() if g is not None)


def test_the_issues_example_near_minus_800() -> None:
    """The issue's numbers: experts [3, 1] with weights about [0.99995, 4.5e-5]."""
    _, chosen, weights = identity_router("sigmoid").route(np.array([-810.0, -800, -820, -790]))
    assert chosen.tolist() == [3, 1]
    assert weights == pytest.approx([1 / (1 + math.exp(-10)), 1 / (1 + math.exp(10))], rel=1e-13)


@pytest.mark.parametrize("n_groups", [2])
def test_groups_of_extreme_logits_score_by_their_sum(n_groups: int) -> None:
    """Groups without a bias compare log(p_a + p_b) of their two best: no underflow to a tie of
    zeros (group 1's scores, exp(-790) and exp(-795), beat group 0's)."""
    moe = identity_router("sigmoid", top_k=1, n_groups=n_groups, top_groups=1)
    _, chosen, weights = moe.route(np.array([-800.0, -801, -790, -795]))
    assert chosen.tolist() == [2] and weights.tolist() == [1.0]


def test_saturated_scores_with_a_bias_tie_as_documented() -> None:
    """With a bias the choice compares p + bias: sigmoid(40) and sigmoid(41) are both 1.0 in
    float64, so the two tie and the lower index wins (the docstring says so)."""
    moe = identity_router("sigmoid", top_k=1, bias=np.zeros(4))
    assert moe.route(np.array([40.0, 41.0, 0, 0]))[1].tolist() == [0]
    assert "saturat" in (ffn.MixtureOfExperts.__doc__ or "")


# ---------------------------------------------------------------- counting


@pytest.mark.parametrize(("variant", "bias"), [(None, True), ("swiglu", False)])
def test_count_moe_parameters_against_the_arrays(variant: str | None, bias: bool) -> None:
    moe = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, top_k=2, variant=variant)
    sizes = [sum(v.size for v in e.named_parameters().values() if v is not None)
             for e in moe.experts]
    gated = variant is not None
    assert ffn.count_moe_parameters(D_MODEL, D_FF, N_EXPERTS, bias=bias, gated=gated) == (
        sum(sizes) + moe.router.size)
    assert ffn.count_moe_parameters(D_MODEL, D_FF, N_EXPERTS, 2, bias, gated) == (
        2 * sizes[0] + moe.router.size)


def test_count_moe_flops_is_the_router_and_top_k_experts() -> None:
    # Per token, forward: the router's 2 * d_model * n_experts, and 2 * 3 * d_model * d_ff for
    # each of top_k SwiGLU experts (three matrices); backward triples both.
    assert ffn.count_moe_flops(10, 20, 8, 2, gated=True) == 2 * 10 * 8 + 2 * (2 * 3 * 10 * 20)
    assert ffn.count_moe_flops(10, 20, 8, 2, n_tokens=5, backward=True) == 3 * 5 * (
        2 * 10 * 8 + 2 * (2 * 2 * 10 * 20))
    with raises(ValueError, "top_k must be at most n_experts = 8, got 9"):
        ffn.count_moe_flops(10, 20, 8, 9)
    with raises(ValueError, "n_experts must be positive, got 0"):
        ffn.count_moe_parameters(10, 20, 0)


def test_model_dims_mixture_fields() -> None:
    dense = ffn.get_model("LLaMA-7B")
    assert dense.ffn_parameters(active=True) == dense.ffn_parameters()
    assert dense.active_parameters() == dense.total_parameters()
    mixtral = ffn.get_model("Mixtral 8x7B")
    per_expert = ffn.count_parameters(4096, 14336, bias=False, gated=True)
    assert mixtral.total_parameters() - mixtral.active_parameters() == 32 * 6 * per_expert
    kw: dict[str, object] = {"name": "m", "d_model": 8, "d_ff": 16, "n_layers": 2,
                             "gated": True, "bias": False, "source": "s"}
    with raises(ValueError, "top_k must be at most n_experts = 4, got 5"):
        ffn.ModelDims(**kw, moe=ffn.MoEDims(n_experts=4, top_k=5))  # type: ignore[arg-type]
    with raises(TypeError, "moe must be a MoEDims or None, got int 4"):
        ffn.ModelDims(**kw, moe=4)  # type: ignore[arg-type]
