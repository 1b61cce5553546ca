"""Every documented error: its type and its message."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ffn

FFN_DIR = Path(ffn.__file__).resolve().parent


@contextmanager
def raises(exception: type[Exception], message: str, prefix: bool = False) -> Iterator[Any]:
    """pytest.raises matching the message literally (whole, or its start), raised by ffn.

    The innermost frame must be in the ffn package: a bad argument is caught
    at the boundary, not deep inside numpy or scipy.
    """
    pattern = f"^{re.escape(message)}" + ("" if prefix else "$")
    with pytest.raises(exception, match=pattern) as info:
        yield info
    origin = Path(str(info.traceback[-1].path)).resolve()
    assert origin.parent == FFN_DIR, f"raised in {origin}, not by ffn"


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
    with raises(ValueError, RAGGED, prefix=True):
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
            "unknown activation 'gleu'; valid: 'relu', 'gelu', 'gelu_tanh', 'silu', 'relu2'",
        ),
        (
            "GELU",
            ValueError,
            "unknown activation 'GELU'; valid: 'relu', 'gelu', 'gelu_tanh', 'silu', 'relu2'",
        ),
        (
            "swiglu",
            ValueError,
            "unknown activation 'swiglu'; valid: 'relu', 'gelu', 'gelu_tanh', 'silu', 'relu2'",
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
    with raises(ValueError, RAGGED, prefix=True):
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


# ---------------------------------------------------------------- wrong calls, one table


def small() -> ffn.FeedForward:
    """d_model = 3, d_ff = 4, random weights and biases (so no output is trivially 0)."""
    rng = np.random.default_rng(0)
    return ffn.FeedForward(
        rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=(4, 3)), rng.normal(size=3)
    )


def after_forward(x: object, dy: object) -> object:
    b = small()
    b(x)
    return b.backward(dy)


def backward_after_failed_forward() -> object:
    b = small()
    b(np.ones((2, 3)))  # a good pass ...
    try:
        b(np.ones((2, 4)))  # ... then a failed one
    except ValueError:
        pass
    return b.backward(np.ones((2, 3)))


def read_only(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.flags.writeable = False
    return a


def rows_with(value: float) -> np.ndarray:
    """Two rows; the first holds ``value``."""
    x = np.random.default_rng(1).normal(size=(2, 3))
    x[0, 1] = value
    return x


def second_row_unaffected(x: np.ndarray) -> Callable[[np.ndarray], bool]:
    """A check: row 1 of the output is finite and what row 1 alone gives."""

    def check(y: np.ndarray) -> bool:
        alone = small()(x[1])
        return bool(np.isfinite(y[1]).all() and np.allclose(y[1], alone, rtol=1e-14, atol=0))

    return check


@dataclass(frozen=True)
class Call:
    """A wrong or unusual call and what the docstrings promise for it: an error or a result."""

    call: Callable[[], object]
    error: tuple[type[Exception], str] | None = None  # (type, whole message)
    check: Callable[[Any], bool] | None = None  # for a documented result


X_LAST = "x has last dimension {} but d_model is 3 (x.shape={})"
NOT_NUMERIC = "x must be a real numeric array, got dtype {}"
TOO_LARGE = "x holds an integer too large for a float (float64 reaches about 1.8e308)"
SCALAR_X = "x must have at least 1 dimension (..., d_model), got a scalar (shape ())"
ACTIVATION = "unknown activation {!r}; valid: 'relu', 'gelu', 'gelu_tanh', 'silu', 'relu2'"
NO_FORWARD = "backward() called before a forward pass: call block(x) first"
W = {"W1": np.ones((3, 4)), "b1": np.zeros(4), "W2": np.ones((4, 3)), "b2": np.zeros(3)}
INF = float("inf")
NAN = float("nan")


def activation_limits(fn: Callable[[object], np.ndarray], expected: list[float]) -> Call:
    """fn at [nan, -inf, inf] in both float dtypes gives ``expected`` (nan compared as nan)."""

    def check(_: object) -> bool:
        for dtype in (np.float32, np.float64):
            out = fn(np.array([NAN, -INF, INF], dtype=dtype))
            if out.dtype != dtype or not np.array_equal(out, expected, equal_nan=True):
                return False
        return True

    return Call(lambda: None, check=check)


WRONG_CALLS: dict[str, Call] = {
    # wrong ranks
    "x-python-scalar": Call(lambda: small()(2.0), (ValueError, SCALAR_X)),
    "x-0d-array": Call(lambda: small()(np.array(2.0)), (ValueError, SCALAR_X)),
    "W1-1d": Call(
        lambda: ffn.FeedForward(**(W | {"W1": np.ones(3)})),  # type: ignore[arg-type]
        (ValueError, "W1 must be 2-D with shape (d_model, d_ff), got shape (3,)"),
    ),
    "W2-0d": Call(
        lambda: ffn.FeedForward(**(W | {"W2": 1.0})),  # type: ignore[arg-type]
        (ValueError, "W2 must be 2-D with shape (d_ff, d_model), got shape ()"),
    ),
    "b1-2d": Call(
        lambda: ffn.FeedForward(**(W | {"b1": np.zeros((1, 4))})),  # type: ignore[arg-type]
        (ValueError, "b1 must be 1-D with shape (d_ff,) = (4,), got shape (1, 4)"),
    ),
    "linear-W-3d": Call(
        lambda: ffn.Linear(np.ones((1, 3, 2))),
        (ValueError, "W must be 2-D with shape (in_features, out_features), got shape (1, 3, 2)"),
    ),
    # mismatched shapes
    "x-width": Call(lambda: small()(np.ones((2, 4))), (ValueError, X_LAST.format(4, (2, 4)))),
    "x-transposed": Call(lambda: small()(np.ones((3, 2))), (ValueError, X_LAST.format(2, (3, 2)))),
    "W2-not-W1-transposed": Call(
        lambda: ffn.FeedForward(**(W | {"W2": np.ones((3, 4))})),  # type: ignore[arg-type]
        (ValueError, ("W2 has shape (3, 4) but W1 has shape (3, 4): "
                      "W2 must be (d_ff, d_model) = (4, 3)")),
    ),
    "dy-shape": Call(
        lambda: after_forward(np.ones((2, 3)), np.ones((3, 2))),
        (RuntimeError, "dy has shape (3, 2) but the last forward output has shape (2, 3)"),
    ),
    "linear-x-width": Call(
        lambda: ffn.Linear(np.ones((3, 2)))(np.ones(2)),
        (ValueError, "x has last dimension 2 but in_features is 3 (x.shape=(2,))"),
    ),
    # empty arrays
    "x-no-rows": Call(lambda: small()(np.ones((0, 3))), check=lambda y: y.shape == (0, 3)),
    "x-empty-lead": Call(lambda: small()(np.ones((2, 0, 3))), check=lambda y: y.shape == (2, 0, 3)),
    "x-empty-vector": Call(lambda: small()(np.ones(0)), (ValueError, X_LAST.format(0, (0,)))),
    "x-no-columns": Call(lambda: small()(np.ones((3, 0))), (ValueError, X_LAST.format(0, (3, 0)))),
    "backward-no-rows": Call(
        lambda: after_forward(np.ones((0, 3)), np.ones((0, 3))), check=lambda dx: dx.shape == (0, 3)
    ),
    "W1-no-columns": Call(
        lambda: ffn.Linear(np.ones((3, 0))),
        (ValueError, ("W has shape (3, 0): both dimensions of (in_features, out_features) "
                      "must be positive")),
    ),
    "gelu-empty": Call(lambda: ffn.gelu([]), check=lambda y: y.shape == (0,) and y.dtype == float),
    "random-d_model-0": Call(
        lambda: ffn.FeedForward.random(0, 4), (ValueError, "d_model must be positive, got 0")
    ),
    "flops-no-tokens": Call(
        lambda: ffn.count_flops(768, 3072, n_tokens=0),
        (ValueError, "n_tokens must be positive, got 0"),
    ),
    # NaN and inf: documented results, no exception, no warning
    "x-nan-row": Call(
        lambda: small()(rows_with(NAN)),
        check=lambda y: bool(np.isnan(y[0]).all()) and second_row_unaffected(rows_with(NAN))(y),
    ),
    "x-inf-row": Call(lambda: small()(rows_with(INF)), check=second_row_unaffected(rows_with(INF))),
    "x-minus-inf-row": Call(
        lambda: small()(rows_with(-INF)), check=second_row_unaffected(rows_with(-INF))
    ),
    "dy-inf-row": Call(
        lambda: after_forward(np.ones((2, 3)), rows_with(INF)),
        check=lambda dx: bool(np.isfinite(dx[1]).all() and not np.isfinite(dx[0]).all()),
    ),
    "x-nan-backward": Call(
        lambda: after_forward(rows_with(NAN), np.ones((2, 3))),
        check=lambda dx: bool(np.isnan(dx[0]).all() and np.isfinite(dx[1]).all()),
    ),
    "relu-limits": activation_limits(ffn.relu, [NAN, 0.0, INF]),
    "relu_grad-limits": activation_limits(ffn.relu_grad, [NAN, 0.0, 1.0]),
    "gelu-limits": activation_limits(ffn.gelu, [NAN, 0.0, INF]),
    "gelu_grad-limits": activation_limits(ffn.gelu_grad, [NAN, 0.0, 1.0]),
    "gelu_tanh-limits": activation_limits(lambda x: ffn.gelu(x, "tanh"), [NAN, 0.0, INF]),
    "gelu_tanh_grad-limits": activation_limits(
        lambda x: ffn.gelu_grad(x, "tanh"), [NAN, 0.0, 1.0]
    ),
    "silu-limits": activation_limits(ffn.silu, [NAN, 0.0, INF]),
    "silu_grad-limits": activation_limits(ffn.silu_grad, [NAN, 0.0, 1.0]),
    # strings and other non-numbers
    "x-str": Call(lambda: small()("1 2 3"), (TypeError, NOT_NUMERIC.format("<U5"))),
    "x-bytes": Call(lambda: small()(b"abc"), (TypeError, NOT_NUMERIC.format("|S3"))),
    "x-dict": Call(lambda: small()({}), (TypeError, NOT_NUMERIC.format("object"))),
    # ints beyond int64 (numpy holds them as objects): floats like other ints, if they fit one
    "x-huge-int": Call(
        lambda: small()([10**30, 1, 2]),
        check=lambda y: np.array_equal(y, small()(np.array([1e30, 1.0, 2.0]))),
    ),
    "x-int-too-large": Call(lambda: small()([10**400, 1, 2]), (ValueError, TOO_LARGE)),
    "gelu-int-beyond-int64": Call(
        lambda: ffn.gelu(2**70), check=lambda y: y.dtype == np.float64 and y == 2.0**70
    ),
    "gelu-int-list-beyond-int64": Call(
        lambda: ffn.gelu([2**70, -(2**70), 0.5]),
        check=lambda y: np.array_equal(y, ffn.gelu(np.array([2.0**70, -(2.0**70), 0.5]))),
    ),
    "gelu-int-too-large": Call(lambda: ffn.gelu(-(10**400)), (ValueError, TOO_LARGE)),
    "W1-str": Call(
        lambda: ffn.FeedForward(**(W | {"W1": "W1"})),  # type: ignore[arg-type]
        (TypeError, "W1 must be a real numeric array, got dtype <U2"),
    ),
    "d_model-str": Call(
        lambda: ffn.FeedForward.random("3", 4),  # type: ignore[arg-type]
        (TypeError, "d_model must be an int, got str '3'"),
    ),
    "dtype-half": Call(
        lambda: ffn.FeedForward.random(3, 4, dtype="half"),
        (TypeError, "dtype must be float32 or float64, got float16"),
    ),
    # lists
    "x-nested-list": Call(
        lambda: small()([[1, 2, 3], [4, 5, 6]]),
        check=lambda y: np.array_equal(y, small()(np.array([[1.0, 2, 3], [4, 5, 6]]))),
    ),
    "x-list-float32-block": Call(
        lambda: ffn.FeedForward.random(3, 4, dtype=np.float32)([0.5, 1, 2]),
        check=lambda y: y.dtype == np.float32 and y.shape == (3,),
    ),
    "x-ragged-list": Call(
        lambda: small()([[1.0, 2.0, 3.0], [1.0]]), (ValueError, RAGGED)
    ),
    "x-list-with-None": Call(
        lambda: small()([1.0, None, 2.0]), (TypeError, NOT_NUMERIC.format("object"))
    ),
    "dy-list": Call(
        lambda: after_forward([1.0, 2.0, 3.0], [1, 0, 0]),
        check=lambda dx: dx.shape == (3,) and dx.dtype == np.float64,
    ),
    # activation names
    "activation-capitals": Call(
        lambda: ffn.FeedForward(**W, activation="ReLU"),  # type: ignore[arg-type]
        (ValueError, ACTIVATION.format("ReLU")),
    ),
    "activation-space": Call(
        lambda: ffn.FeedForward(**W, activation="relu "),  # type: ignore[arg-type]
        (ValueError, ACTIVATION.format("relu ")),
    ),
    "activation-empty": Call(
        lambda: ffn.FeedForward.random(3, 4, activation=""), (ValueError, ACTIVATION.format(""))
    ),
    "activation-exact-gelu-alias": Call(
        lambda: ffn.FeedForward.random(3, 4, activation="gelu_exact"),
        (ValueError, ACTIVATION.format("gelu_exact")),
    ),
    "approximate-bool": Call(
        lambda: ffn.gelu([1.0], approximate=True),  # type: ignore[arg-type]
        (TypeError, "approximate must be a str, got bool True"),
    ),
    # backward without (a successful) forward
    "backward-first": Call(lambda: small().backward(np.ones(3)), (RuntimeError, NO_FORWARD)),
    "backward-after-failed-forward": Call(
        lambda: backward_after_failed_forward(), (RuntimeError, NO_FORWARD)
    ),
    # read-only arrays: accepted, never written
    "x-read-only": Call(
        lambda: small()(read_only(np.ones((2, 3)))),
        check=lambda y: np.array_equal(y, small()(np.ones((2, 3)))) and y.flags.writeable,
    ),
    "dy-read-only": Call(
        lambda: after_forward(read_only(np.ones((2, 3))), read_only(np.ones((2, 3)))),
        check=lambda dx: dx.shape == (2, 3) and dx.flags.writeable,
    ),
    "weights-read-only": Call(
        lambda: ffn.FeedForward(*(read_only(w) for w in W.values()))(np.ones(3)),
        check=lambda y: y.shape == (3,),
    ),
    "gelu-read-only": Call(
        lambda: ffn.gelu(read_only(np.linspace(-3, 3, 7))),
        check=lambda y: y.flags.writeable and y.shape == (7,),
    ),
    "trace-is-read-only": Call(
        lambda: small().forward_trace(np.ones(3)),
        check=lambda t: not (t.x.flags.writeable or t.h_pre.flags.writeable or t.h.flags.writeable),
    ),
}


@pytest.mark.parametrize("case", WRONG_CALLS.values(), ids=WRONG_CALLS.keys())
def test_wrong_calls_get_the_documented_answer(case: Call) -> None:
    with warnings.catch_warnings(), np.errstate(all="raise", under="ignore"):
        warnings.simplefilter("error")  # no RuntimeWarning from deep inside either
        if case.error is not None:
            exception, message = case.error
            with raises(exception, message, prefix=message == RAGGED):
                case.call()
        else:
            assert case.check is not None
            assert case.check(case.call())
