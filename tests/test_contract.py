"""What every layer promises: its gradients belong to the forward that ran, odd input works or
is refused by name, and NaN/inf pass silently (issue 10's list of wrong inputs, each tried)."""

from __future__ import annotations

import copy
import pickle
import threading
import warnings
from collections.abc import Callable

import numpy as np
import pytest

import ffn
from tests.test_errors import raises

Maker = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], ffn._layer.Layer]
D, F = 3, 5


def weights() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.normal(size=s) for s in ((D, F), (F,), (F, D), (D,), (D, F), (D,), (D,))]


def makers() -> dict[str, Callable[[list[np.ndarray]], ffn._layer.Layer]]:
    """Every layer, built over arrays the caller keeps (and will change)."""
    def block(w: list[np.ndarray]) -> ffn.FeedForward:
        return ffn.FeedForward(w[0], w[1], w[2], w[3])

    return {
        "Linear": lambda w: ffn.Linear(w[0], w[1]),
        "FeedForward": block,
        "fast.FeedForward": lambda w: ffn.fast.FeedForward(w[0], w[1], w[2], w[3]),
        "GatedFeedForward": lambda w: ffn.GatedFeedForward(w[0], w[4], w[2], w[1], w[1], w[3]),
        "LayerNorm": lambda w: ffn.LayerNorm(D, gamma=w[5], beta=w[6]),
        "Sublayer pre": lambda w: ffn.Sublayer(block(w), ffn.LayerNorm(D, gamma=w[5]), "pre"),
        "Sublayer post": lambda w: ffn.Sublayer(block(w), ffn.LayerNorm(D, gamma=w[5]), "post"),
    }


def run(layer: ffn._layer.Layer, x: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    dy = np.random.default_rng(1).normal(size=layer(x).shape)
    dx = layer.backward(dy)
    return dx, {k: v for k, v in layer.grads.items() if v is not None}


@pytest.mark.parametrize("name", list(makers()))
def test_gradients_belong_to_the_forward_that_ran(name: str) -> None:
    make = makers()[name]
    x = np.random.default_rng(2).normal(size=(4, D))
    expected_dx, expected = run(make(weights()), x.copy())

    w = weights()
    layer = make(w)
    x_mine = x.copy()
    y = layer(x_mine)
    for array in w:  # the caller changes everything it passed in, after the forward
        array += 1.0
    x_mine *= -3.0
    dx = layer.backward(np.random.default_rng(1).normal(size=y.shape))
    np.testing.assert_array_equal(dx, expected_dx)
    for key, g in expected.items():
        np.testing.assert_array_equal(layer.grads[key], g, err_msg=key)


@pytest.mark.parametrize("name", [*makers(), "MixtureOfExperts"])
def test_named_parameters_are_the_attributes_and_the_keys_of_grads(name: str) -> None:
    layer = (ffn.MixtureOfExperts.random(D, F, 3) if name == "MixtureOfExperts"
             else makers()[name](weights()))
    x = np.random.default_rng(2).normal(size=(4, D))
    layer.backward(np.ones_like(layer(x)))
    params = layer.named_parameters()
    assert list(params) == list(layer.grads)
    for key, value in params.items():
        *path, attr = key.split(".")  # "experts.0.W1": the attribute W1 of moe.experts[0]
        owner = layer.experts[int(path[1])] if path else getattr(layer, "block", layer)
        if not hasattr(owner, attr):  # a Sublayer's gamma and beta are its norm's
            owner = layer.norm
        assert value is getattr(owner, attr), key
        grad = layer.grads[key]
        assert (grad is None) == (value is None) and (value is None or grad.shape == value.shape)


@pytest.mark.parametrize("name", list(makers()))
def test_parameters_cannot_be_changed_in_place(name: str) -> None:
    layer = makers()[name](weights())
    owner = getattr(layer, "block", layer)
    param = next(v for k in ("W1", "W", "gamma") if (v := getattr(owner, k, None)) is not None)
    with pytest.raises(ValueError, match="read-only"):
        param[0] = 1.0
    width = "in_features" if isinstance(layer, ffn.Linear) else "d_model"
    with pytest.raises(AttributeError, match="read-only"):
        setattr(layer, width, 7)
    with pytest.raises(AttributeError, match="read-only"):
        delattr(owner, "W1" if hasattr(owner, "W1") else "W" if hasattr(owner, "W") else "gamma")


def test_trace_arrays_are_read_only_views_of_what_backward_uses() -> None:
    block = ffn.FeedForward.random(D, F)
    trace = block.forward_trace(np.ones(D))
    with pytest.raises(ValueError, match="read-only"):
        trace.h_pre[0] = 5.0


def test_one_pass_at_a_time_backward_follows_the_latest_forward() -> None:
    # What the docs say (ffn/_layer.py): a block holds one pass; backward uses the latest.
    x1, x2 = np.ones((2, D)), np.full((2, D), -2.0)
    block = ffn.FeedForward.random(D, F, seed=3)
    block(x1)
    block(x2)
    dx = block.backward(np.ones((2, D)))
    alone = ffn.FeedForward.random(D, F, seed=3)
    alone(x2)
    np.testing.assert_array_equal(dx, alone.backward(np.ones((2, D))))


def test_one_block_per_thread_gives_each_thread_its_own_gradients() -> None:
    # The docs' advice for threads: give each thread its own block. Then each is right.
    results: dict[int, np.ndarray] = {}

    def work(seed: int) -> None:
        block = ffn.FeedForward.random(D, F, seed=3)
        x = np.random.default_rng(seed).normal(size=(64, D))
        for _ in range(50):
            block(x)
            results[seed] = block.backward(np.ones((64, D)))

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for seed, dx in results.items():
        alone = ffn.FeedForward.random(D, F, seed=3)
        alone(np.random.default_rng(seed).normal(size=(64, D)))
        np.testing.assert_array_equal(dx, alone.backward(np.ones((64, D))))


class Held:
    """An array whose conversion waits for ``release``: a pass using it stays open till then."""

    def __init__(self, array: np.ndarray) -> None:
        self.array, self.inside, self.release = array, threading.Event(), threading.Event()

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        self.inside.set()
        assert self.release.wait(30), "the test never released the held pass"
        return self.array


def layer_named(name: str) -> ffn._layer.Layer:
    if name == "MixtureOfExperts":
        return ffn.MixtureOfExperts.random(D, F, 3, seed=4)
    return makers()[name](weights())


@pytest.mark.parametrize("held", ["forward", "backward"])
@pytest.mark.parametrize("name", [*makers(), "MixtureOfExperts"])
def test_a_layer_in_use_by_one_thread_refuses_another(name: str, held: str) -> None:
    # Issue 26: one layer shared by threads gave wrong dx, a bare AssertionError, outputs of
    # the other thread's shape. One thread holds a pass open (its input is being read); every
    # call from another thread meanwhile is refused, and the held pass is not disturbed.
    rng = np.random.default_rng(5)
    alone = layer_named(name)
    x = rng.normal(size=(4, D))
    expected = {"forward": alone(x)}
    dy = rng.normal(size=expected["forward"].shape)
    expected["backward"] = alone.backward(dy)
    layer = layer_named(name)
    arg = Held(x if held == "forward" else dy)
    got: dict[str, np.ndarray] = {}

    def hold() -> None:
        if held == "backward":
            layer(x)
        got["out"] = getattr(layer, held)(arg)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert arg.inside.wait(30)
        message = (f"{type(layer).__name__} is being used by another thread: a layer holds one "
                   "pass at a time; give each thread its own layer")
        for call in (lambda: layer(x[:1]), lambda: layer.backward(dy)):
            with raises(RuntimeError, message):
                call()
    finally:
        arg.release.set()
        thread.join()
    np.testing.assert_array_equal(got["out"], expected[held])


@pytest.mark.parametrize("name", [*makers(), "MixtureOfExperts"])
def test_copies_and_pickles_carry_the_pass_and_a_lock_of_their_own(name: str) -> None:
    # docs/moe.md deepcopies a layer: the per-layer lock must not stop that.
    layer = layer_named(name)
    x = np.random.default_rng(7).normal(size=(2, D))
    dy = np.ones_like(layer(x))
    copies = [copy.deepcopy(layer), copy.copy(layer), pickle.loads(pickle.dumps(layer))]
    expected = layer.backward(dy)
    for other in copies:
        assert other._lock is not layer._lock
        np.testing.assert_array_equal(other.backward(dy), expected)
        for key, value in other.named_parameters().items():  # a copy's stay read-only too
            assert value is None or not value.flags.writeable, key


def test_backward_refuses_the_pass_of_another_threads_forward() -> None:
    # Thread a runs forward, thread b runs forward, thread a runs backward: without a check,
    # a's backward silently gives the gradients of b's pass.
    block = ffn.FeedForward.random(D, F, seed=3)
    x = np.random.default_rng(6).normal(size=(2, D))
    thread = threading.Thread(target=block, args=(x,))
    thread.start()
    thread.join()
    with raises(RuntimeError, "FeedForward.backward() in another thread than its last forward: "
                "a layer holds one pass at a time; give each thread its own layer"):
        block.backward(np.ones((2, D)))
    block(x)  # a forward in this thread makes the pass this thread's
    block.backward(np.ones((2, D)))


def test_big_endian_floats_are_accepted_as_what_they_are() -> None:
    W1, b1, W2, b2 = (w.astype(">f8") for w in weights()[:4])
    block = ffn.FeedForward(W1, b1, W2, b2)
    native = ffn.FeedForward(*weights()[:4])
    x = np.linspace(-1, 1, 2 * D).reshape(2, D)
    y = block(x.astype(">f8"))
    assert y.dtype == np.float64 and y.dtype.isnative
    np.testing.assert_array_equal(y, native(x))
    np.testing.assert_array_equal(block.backward(np.ones((2, D), ">f8")),
                                  native.backward(np.ones((2, D))))
    np.testing.assert_array_equal(ffn.gelu(x.astype(">f4")), ffn.gelu(x.astype(np.float32)))
    assert ffn.LayerNorm(D, dtype=">f8").dtype == np.float64


def test_masked_arrays_are_refused_by_name() -> None:
    x = np.ma.masked_array(np.ones((2, D)), mask=[[0, 1, 0], [0, 0, 0]])
    with pytest.raises(TypeError, match="x is a masked array"):
        ffn.FeedForward.random(D, F)(x)
    with pytest.raises(TypeError, match="W1 is a masked array"):
        ffn.FeedForward(np.ma.masked_array(weights()[0]), None, weights()[2], None)


@pytest.mark.parametrize("make", [
    lambda: ffn.GatedFeedForward.random(D, F), lambda: ffn.LayerNorm(D),
    lambda: ffn.FeedForward.random(D, F), lambda: ffn.Linear(np.ones((D, D))),
], ids=["gated", "layernorm", "feedforward", "linear"])
def test_inf_and_nan_pass_silently_in_every_layer(make: Callable[[], ffn._layer.Layer]) -> None:
    x = np.array([[np.inf, 1.0, -np.inf], [np.nan, 0.0, 1.0], [1.0, 2.0, 3.0]])
    layer = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any numpy RuntimeWarning fails the test
        y = layer(x)
        layer.backward(np.ones_like(y))
        assert ffn.mean_squared_error([np.inf, 1.0], [np.inf, np.nan]) != 0.0
    assert np.all(np.isfinite(y[2]))  # the finite row is untouched by the others


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layernorm_normalises_rows_whose_squares_overflow(dtype: type) -> None:
    row = np.array([1.0, -2.0, 3.0, 0.5])
    norm = ffn.LayerNorm(4, eps=0.0, dtype=dtype)
    big = norm(row.astype(dtype) * dtype(2e19 if dtype == np.float32 else 1e300))
    np.testing.assert_allclose(big, norm(row.astype(dtype)), rtol=1e-6)
    assert np.abs(big).max() > 1.0  # not the zeros that overflowing squares gave


def test_discrepancies_count_nan_and_inf_as_wrong() -> None:
    assert ffn.discrepancies([0.5], [np.nan]) != []
    assert ffn.discrepancies([np.nan], [0.5]) != []
    assert ffn.discrepancies([np.inf], [np.inf]) != []
    assert ffn.discrepancies([0.5], [0.5004]) == []


@pytest.mark.parametrize(("seed", "error", "message"), [
    (-1, ValueError, "seed must be non-negative, got -1"),
    ("a", TypeError, "seed must be an int or None, got str 'a'"),
    (True, TypeError, "seed must be an int or None, got bool True"),
])
def test_seeds_are_checked_by_name_everywhere(seed: object, error: type, message: str) -> None:
    block, norm = ffn.FeedForward.random(D, F), ffn.LayerNorm(D)
    for call in (lambda: ffn.Sublayer(block, norm, seed=seed),  # type: ignore[arg-type]
                 lambda: ffn.FeedForward.random(D, F, seed=seed),  # type: ignore[arg-type]
                 lambda: ffn.GatedFeedForward.random(D, F, seed=seed)):  # type: ignore[arg-type]
        with pytest.raises(error, match=message):
            call()


def layer_classes(cls: type = ffn._layer.Layer) -> list[type]:
    """Every subclass of ``Layer`` that ffn defines, at any depth."""
    found = [sub for sub in cls.__subclasses__() if sub.__module__.startswith("ffn.")]
    return found + [deeper for sub in found for deeper in layer_classes(sub)]


def test_every_layer_marks_its_passes() -> None:
    # The thread guard is written at each method (see ffn/_layer.py): a forward, backward,
    # forward_trace or backward_of (Layer's own) left without it would let a second thread
    # in. This reads the marks; the test above tries the behaviour on the layers it builds.
    classes = [ffn._layer.Layer, *layer_classes()]
    assert {"FeedForward", "MixtureOfExperts", "GroupedExperts", "ClampedSwiGLU"} <= {
        c.__name__ for c in classes}
    wrong = [f"{c.__module__}.{c.__name__}.{name}: @{want}" for c in classes
             for name, want in (("forward", "forward_pass"), ("backward", "one_thread"),
                                ("forward_trace", "one_thread"), ("backward_of", "one_thread"))
             if name in vars(c) and getattr(vars(c)[name], "guard", None) != want]
    assert not wrong, f"mark each as shown: {wrong}"
