"""Every documented error: its type and its message."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ffn


def raises(exception: type[Exception], message: str) -> Any:
    """pytest.raises matching the whole message literally (not as a regex)."""
    return pytest.raises(exception, match=f"^{re.escape(message)}$")


def weights(**changes: object) -> dict[str, object]:
    """Fitting weights for d_model = 3, d_ff = 4, with some replaced."""
    base: dict[str, object] = {
        "W1": np.ones((3, 4)),
        "b1": np.zeros(4),
        "W2": np.ones((4, 3)),
        "b2": np.zeros(3),
    }
    return base | changes


def block() -> ffn.FeedForward:
    return ffn.FeedForward(**weights())  # type: ignore[arg-type]


ELEMENTWISE: dict[str, Callable[[object], np.ndarray]] = {
    "relu": ffn.relu,
    "relu_grad": ffn.relu_grad,
    "gelu": ffn.gelu,
    "gelu_grad": ffn.gelu_grad,
    "gelu_tanh": lambda x: ffn.gelu(x, approximate="tanh"),
    "gelu_tanh_grad": lambda x: ffn.gelu_grad(x, approximate="tanh"),
    "silu": ffn.silu,
    "silu_grad": ffn.silu_grad,
}

# (bad x, exception, message) for anything that takes an array x.
BAD_X = [
    ("abc", TypeError, "x must be a real numeric array, got dtype <U3"),
    (None, TypeError, "x must be a real numeric array, got None"),
    (
        np.array([1 + 2j, 3]),
        TypeError,
        "x must be a real numeric array, got dtype complex128",
    ),
    (
        np.array([1.0, None]),
        TypeError,
        "x must be a real numeric array, got dtype object",
    ),
    ([1.0, "a"], TypeError, "x must be a real numeric array, got dtype <U32"),
    (
        np.array(["2024-01-01"], dtype="datetime64[D]"),
        TypeError,
        "x must be a real numeric array, got dtype datetime64[D]",
    ),
    (
        np.ones(3, dtype=np.longdouble),
        TypeError,
        f"x has dtype {np.dtype(np.longdouble)}; only float32 and float64 are supported",
    ),
]
BAD_X_IDS = ["str", "None", "complex", "object", "mixed-list", "datetime", "longdouble"]

RAGGED = (
    "x could not be converted to an array: setting an array element with a sequence."
)


# ---------------------------------------------------------------- activations


@pytest.mark.parametrize("fn", ELEMENTWISE.values(), ids=ELEMENTWISE.keys())
@pytest.mark.parametrize(("x", "exception", "message"), BAD_X, ids=BAD_X_IDS)
def test_activation_rejects_non_numeric_input(
    fn: Callable[[object], np.ndarray],
    x: object,
    exception: type[Exception],
    message: str,
) -> None:
    if np.dtype(np.longdouble) == np.float64 and message.startswith("x has dtype"):
        pytest.skip("long double is float64 on this platform")
    with raises(exception, message):
        fn(x)


@pytest.mark.parametrize("fn", ELEMENTWISE.values(), ids=ELEMENTWISE.keys())
def test_activation_rejects_ragged_input(fn: Callable[[object], np.ndarray]) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(RAGGED)}"):
        fn([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize("fn", [ffn.gelu, ffn.gelu_grad])
def test_unknown_approximate(fn: Callable[..., np.ndarray]) -> None:
    with raises(ValueError, "unknown approximate 'exact'; valid: 'none', 'tanh'"):
        fn(np.ones(2), approximate="exact")
    with raises(ValueError, "unknown approximate 'Tanh'; valid: 'none', 'tanh'"):
        fn(np.ones(2), approximate="Tanh")
    with raises(TypeError, "approximate must be a str, got NoneType None"):
        fn(np.ones(2), approximate=None)
    with raises(TypeError, "approximate must be a str, got bool True"):
        fn(np.ones(2), approximate=True)


# ---------------------------------------------------------------- Linear


@pytest.mark.parametrize(
    ("W", "b", "exception", "message"),
    [
        ("abc", None, TypeError, "W must be a real numeric array, got dtype <U3"),
        (None, None, TypeError, "W must be a real numeric array, got None"),
        (
            np.ones((3, 2)),
            "ab",
            TypeError,
            "b must be a real numeric array, got dtype <U2",
        ),
        (
            np.ones((3, 2), dtype=complex),
            None,
            TypeError,
            "W must be a real numeric array, got dtype complex128",
        ),
        (
            np.ones(3),
            None,
            ValueError,
            "W must be 2-D with shape (in_features, out_features), got shape (3,)",
        ),
        (
            np.ones((2, 3, 4)),
            None,
            ValueError,
            "W must be 2-D with shape (in_features, out_features), got shape (2, 3, 4)",
        ),
        (
            np.ones((3, 0)),
            None,
            ValueError,
            "W has shape (3, 0): both dimensions of (in_features, out_features) must be positive",
        ),
        (
            np.ones((3, 2)),
            np.ones(3),
            ValueError,
            "b must be 1-D with shape (out_features,) = (2,), got shape (3,)",
        ),
        (
            np.ones((3, 2)),
            np.ones((1, 2)),
            ValueError,
            "b must be 1-D with shape (out_features,) = (2,), got shape (1, 2)",
        ),
        (
            np.ones((3, 2)),
            np.float64(1.0),
            ValueError,
            "b must be 1-D with shape (out_features,) = (2,), got shape ()",
        ),
        (
            np.ones((3, 2), dtype=np.float32),
            np.ones(2),
            TypeError,
            "weights must share one float dtype, got W float32, b float64",
        ),
    ],
)
def test_linear_rejects_bad_weights(
    W: object, b: object, exception: type[Exception], message: str
) -> None:
    with raises(exception, message):
        ffn.Linear(W, b)


@pytest.mark.parametrize(
    ("x", "exception", "message"),
    [
        (
            np.ones((2, 5)),
            ValueError,
            "x has last dimension 5 but in_features is 3 (x.shape=(2, 5))",
        ),
        (
            np.ones(2),
            ValueError,
            "x has last dimension 2 but in_features is 3 (x.shape=(2,))",
        ),
        (
            np.ones((3, 0)),
            ValueError,
            "x has last dimension 0 but in_features is 3 (x.shape=(3, 0))",
        ),
        (
            1.0,
            ValueError,
            "x must have at least 1 dimension (..., in_features), got a scalar (shape ())",
        ),
        *BAD_X,
    ],
)
def test_linear_rejects_bad_input(
    x: object, exception: type[Exception], message: str
) -> None:
    if np.dtype(np.longdouble) == np.float64 and message.startswith("x has dtype"):
        pytest.skip("long double is float64 on this platform")
    with raises(exception, message):
        ffn.Linear(np.ones((3, 2)))(x)


# ---------------------------------------------------------------- FeedForward: weights


@pytest.mark.parametrize(
    ("changes", "exception", "message"),
    [
        (
            {"W2": np.ones((5, 3))},
            ValueError,
            "W2 has shape (5, 3) but W1 has shape (3, 4): W2 must be (d_ff, d_model) = (4, 3)",
        ),
        (
            {"W2": np.ones((3, 4))},
            ValueError,
            "W2 has shape (3, 4) but W1 has shape (3, 4): W2 must be (d_ff, d_model) = (4, 3)",
        ),
        (
            {"W1": np.ones(3)},
            ValueError,
            "W1 must be 2-D with shape (d_model, d_ff), got shape (3,)",
        ),
        (
            {"W1": np.ones((1, 3, 4))},
            ValueError,
            "W1 must be 2-D with shape (d_model, d_ff), got shape (1, 3, 4)",
        ),
        (
            {"W2": np.ones(4)},
            ValueError,
            "W2 must be 2-D with shape (d_ff, d_model), got shape (4,)",
        ),
        (
            {"W1": np.ones((3, 0)), "b1": np.ones(0), "W2": np.ones((0, 3))},
            ValueError,
            "W1 has shape (3, 0): both dimensions of (d_model, d_ff) must be positive",
        ),
        (
            {"b1": np.zeros(3)},
            ValueError,
            "b1 must be 1-D with shape (d_ff,) = (4,), got shape (3,)",
        ),
        (
            {"b1": np.zeros((4, 1))},
            ValueError,
            "b1 must be 1-D with shape (d_ff,) = (4,), got shape (4, 1)",
        ),
        (
            {"b2": np.zeros(4)},
            ValueError,
            "b2 must be 1-D with shape (d_model,) = (3,), got shape (4,)",
        ),
        (
            {"b2": 0.0},
            ValueError,
            "b2 must be 1-D with shape (d_model,) = (3,), got shape ()",
        ),
        ({"W1": "abc"}, TypeError, "W1 must be a real numeric array, got dtype <U3"),
        ({"W2": None}, TypeError, "W2 must be a real numeric array, got None"),
        (
            {"b1": np.zeros(4, dtype=complex)},
            TypeError,
            "b1 must be a real numeric array, got dtype complex128",
        ),
        (
            {"b2": np.array([None, None, None])},
            TypeError,
            "b2 must be a real numeric array, got dtype object",
        ),
        (
            {"W2": np.ones((4, 3), dtype=np.float32)},
            TypeError,
            ("weights must share one float dtype, "
            "got W1 float64, b1 float64, W2 float32, b2 float64"),
        ),
        (
            {"b1": None, "b2": np.zeros(3, dtype=np.float32)},
            TypeError,
            "weights must share one float dtype, got W1 float64, W2 float64, b2 float32",
        ),
    ],
)
def test_feedforward_rejects_bad_weights(
    changes: dict[str, object], exception: type[Exception], message: str
) -> None:
    with raises(exception, message):
        ffn.FeedForward(**weights(**changes))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("activation", "exception", "message"),
    [
        (
            "gleu",
            ValueError,
            "unknown activation 'gleu'; valid: 'relu', 'gelu', 'gelu_tanh', 'silu'",
        ),
        (
            "GELU",
            ValueError,
            "unknown activation 'GELU'; valid: 'relu', 'gelu', 'gelu_tanh', 'silu'",
        ),
        (
            "swiglu",
            ValueError,
            "unknown activation 'swiglu'; valid: 'relu', 'gelu', 'gelu_tanh', 'silu'",
        ),
        (None, TypeError, "activation must be a str, got NoneType None"),
        (np.tanh, TypeError, "activation must be a str, got ufunc <ufunc 'tanh'>"),
    ],
)
def test_unknown_activation(
    activation: object, exception: type[Exception], message: str
) -> None:
    with raises(exception, message):
        ffn.FeedForward(**weights(), activation=activation)  # type: ignore[arg-type]
    with raises(exception, message):
        ffn.FeedForward.random(3, 4, activation=activation)  # type: ignore[arg-type]


# ---------------------------------------------------------------- FeedForward: forward


@pytest.mark.parametrize(
    ("x", "exception", "message"),
    [
        (
            np.ones((2, 5)),
            ValueError,
            "x has last dimension 5 but d_model is 3 (x.shape=(2, 5))",
        ),
        (
            np.ones(4),
            ValueError,
            "x has last dimension 4 but d_model is 3 (x.shape=(4,))",
        ),
        (
            np.ones((2, 3, 1)),
            ValueError,
            "x has last dimension 1 but d_model is 3 (x.shape=(2, 3, 1))",
        ),
        (
            np.float64(2.0),
            ValueError,
            "x must have at least 1 dimension (..., d_model), got a scalar (shape ())",
        ),
        (
            2,
            ValueError,
            "x must have at least 1 dimension (..., d_model), got a scalar (shape ())",
        ),
        *BAD_X,
    ],
)
@pytest.mark.parametrize("method", ["__call__", "forward", "forward_trace"])
def test_feedforward_rejects_bad_input(
    method: str, x: object, exception: type[Exception], message: str
) -> None:
    if np.dtype(np.longdouble) == np.float64 and message.startswith("x has dtype"):
        pytest.skip("long double is float64 on this platform")
    with raises(exception, message):
        getattr(block(), method)(x)


def test_feedforward_rejects_ragged_input() -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(RAGGED)}"):
        block()([[1.0, 2.0, 3.0], [4.0]])


# ---------------------------------------------------------------- FeedForward: backward


def test_backward_before_forward() -> None:
    with raises(
        RuntimeError, "backward() called before a forward pass: call block(x) first"
    ):
        block().backward(np.ones((2, 3)))


def test_backward_after_a_failed_forward() -> None:
    # A forward that raised leaves nothing behind for backward to use by mistake.
    b = block()
    b(np.ones((2, 3)))
    with pytest.raises(ValueError):
        b(np.ones((2, 5)))
    with raises(
        RuntimeError, "backward() called before a forward pass: call block(x) first"
    ):
        b.backward(np.ones((2, 3)))


@pytest.mark.parametrize(
    ("x_shape", "dy_shape"),
    [
        ((2, 3), (2, 4)),
        ((2, 3), (3, 3)),
        ((2, 3), (3,)),
        ((3,), (1, 3)),
        ((2, 2, 3), (4, 3)),
        ((2, 3), ()),
    ],
)
def test_backward_with_dy_of_the_wrong_shape(
    x_shape: tuple[int, ...], dy_shape: tuple[int, ...]
) -> None:
    b = block()
    b(np.ones(x_shape))
    with raises(
        RuntimeError,
        f"dy has shape {dy_shape} but the last forward output has shape {x_shape}",
    ):
        b.backward(np.ones(dy_shape))


@pytest.mark.parametrize(
    ("dy", "message"),
    [
        (
            np.array([["a", "b", "c"]] * 2),
            "dy must be a real numeric array, got dtype <U1",
        ),
        (None, "dy must be a real numeric array, got None"),
        (
            np.ones((2, 3), dtype=complex),
            "dy must be a real numeric array, got dtype complex128",
        ),
        (
            np.ones((2, 3), dtype=object),
            "dy must be a real numeric array, got dtype object",
        ),
    ],
)
def test_backward_rejects_non_numeric_dy(dy: object, message: str) -> None:
    b = block()
    b(np.ones((2, 3)))
    with raises(TypeError, message):
        b.backward(dy)


# ---------------------------------------------------------------- FeedForward.random


@pytest.mark.parametrize(
    ("kwargs", "exception", "message"),
    [
        ({"d_model": 0}, ValueError, "d_model must be positive, got 0"),
        ({"d_ff": -4}, ValueError, "d_ff must be positive, got -4"),
        ({"d_ff": 2.5}, TypeError, "d_ff must be an int, got float 2.5"),
        ({"d_model": True}, TypeError, "d_model must be an int, got bool True"),
        ({"dtype": np.int32}, TypeError, "dtype must be float32 or float64, got int32"),
        (
            {"dtype": np.float16},
            TypeError,
            "dtype must be float32 or float64, got float16",
        ),
        ({"dtype": "nope"}, TypeError, "dtype must be float32 or float64, got 'nope'"),
        ({"seed": -1}, ValueError, "seed must be non-negative, got -1"),
        ({"seed": 1.5}, TypeError, "seed must be an int or None, got float 1.5"),
        ({"seed": False}, TypeError, "seed must be an int or None, got bool False"),
        ({"bias": "yes"}, TypeError, "bias must be a bool, got str 'yes'"),
        ({"bias": None}, TypeError, "bias must be a bool, got NoneType None"),
    ],
)
def test_random_rejects_bad_arguments(
    kwargs: dict[str, object], exception: type[Exception], message: str
) -> None:
    arguments: dict[str, object] = {"d_model": 3, "d_ff": 4} | kwargs
    with raises(exception, message):
        ffn.FeedForward.random(**arguments)  # type: ignore[arg-type]


# ---------------------------------------------------------------- count_parameters


@pytest.mark.parametrize(
    ("args", "kwargs", "exception", "message"),
    [
        ((0, 4), {}, ValueError, "d_model must be positive, got 0"),
        ((-3, 4), {}, ValueError, "d_model must be positive, got -3"),
        ((3, 0), {}, ValueError, "d_ff must be positive, got 0"),
        ((3.0, 4), {}, TypeError, "d_model must be an int, got float 3.0"),
        ((True, 4), {}, TypeError, "d_model must be an int, got bool True"),
        ((3, np.bool_(True)), {}, TypeError, "d_ff must be an int, got bool True"),
        (("3", 4), {}, TypeError, "d_model must be an int, got str '3'"),
        ((None, 4), {}, TypeError, "d_model must be an int, got NoneType None"),
        ((3, np.float64(4.0)), {}, TypeError, "d_ff must be an int, got float64 4.0"),
        ((3, 4), {"bias": 1}, TypeError, "bias must be a bool, got int 1"),
        ((3, 4), {"bias": "no"}, TypeError, "bias must be a bool, got str 'no'"),
    ],
)
def test_count_parameters_rejects_bad_arguments(
    args: tuple[object, ...],
    kwargs: dict[str, object],
    exception: type[Exception],
    message: str,
) -> None:
    with raises(exception, message):
        ffn.count_parameters(*args, **kwargs)  # type: ignore[arg-type]
