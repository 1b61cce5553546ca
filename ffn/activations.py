"""The activations of the feed-forward block and their derivatives, as textbook formulas.

Elementwise: a new array of the input's shape; float32 stays float32, bool, int and float16
become float64. NaN gives NaN and +-inf the function's limit, without warnings.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.special  # type: ignore[import-untyped, unused-ignore]

from ffn import _validate as check
from ffn._layer import quiet
from ffn._validate import FloatArray

ACTIVATIONS: tuple[str, ...] = ("relu", "gelu", "gelu_tanh", "silu", "relu2")
"""Valid ``activation`` names for ``ffn.FeedForward``."""

APPROXIMATIONS: tuple[str, ...] = ("none", "tanh")
"""Valid ``approximate`` values for ``gelu`` and ``gelu_grad``."""

# scipy has no type hints: give mypy the ufuncs' types.
erfc: Callable[[Any], FloatArray] = scipy.special.erfc
sigmoid: Callable[[Any], FloatArray] = scipy.special.expit  # 1 / (1 + exp(-x)), stable


def _elementwise(f: Callable[[FloatArray], FloatArray]) -> Callable[[object], FloatArray]:
    """Check the input, keep its float dtype, and return an array (not a numpy scalar)."""

    @functools.wraps(f)
    @quiet
    def checked(x: object) -> FloatArray:
        array = check.float_array(x, "x")
        return np.asarray(f(array), dtype=array.dtype)

    return checked


def Phi(x: FloatArray) -> FloatArray:
    """The standard normal CDF."""
    # erfc(-x / sqrt 2) / 2, not (1 + erf(x / sqrt 2)) / 2, which cancels to 0 for x << 0.
    return 0.5 * erfc(-x / math.sqrt(2.0))


def phi(x: FloatArray) -> FloatArray:
    """The standard normal density."""
    return np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


@_elementwise
def relu(x: FloatArray) -> FloatArray:
    """ReLU: ``max(x, 0)``."""
    return np.maximum(x, 0.0)


@_elementwise
def relu_grad(x: FloatArray) -> FloatArray:
    """ReLU's derivative: 1 where ``x > 0``, else 0 (0 at the kink, as in PyTorch)."""
    return np.where(np.isnan(x), x, x > 0)


@_elementwise
def _gelu_exact(x: FloatArray) -> FloatArray:
    # Below -40, Phi is 0 in float64 and float32: the clip changes no value, but -inf gives 0,
    # not -inf * 0 = nan.
    x = np.maximum(x, -40.0)
    return x * Phi(x)


@_elementwise
def _gelu_exact_grad(x: FloatArray) -> FloatArray:
    x = np.clip(x, -40.0, 40.0)  # beyond +-40 the derivative is exactly 0 or 1: as above
    return Phi(x) + x * phi(x)


S, C = math.sqrt(2.0 / math.pi), 0.044715  # the constants of the tanh approximation


@_elementwise
def _gelu_tanh(x: FloatArray) -> FloatArray:
    # 0.5 x (1 + tanh(z)) written as x sigmoid(2z), the same function: 1 + tanh(z) cancels for
    # x << 0 (float32 at -5.41 gave -1.6e-7 for -1.2e-8), sigmoid's tail does not.
    x = np.maximum(x, -100.0)  # sigmoid(2z) is exactly 0 below -100: -inf gives -0, not nan
    return x * sigmoid(2.0 * S * (x + C * x**3))


@_elementwise
def _gelu_tanh_grad(x: FloatArray) -> FloatArray:
    # d/dx [x sigmoid(2z)] = s + x s (1 - s) 2z', s = sigmoid(2z), 1 - s = sigmoid(-2z): no
    # 1 + tanh(z) to cancel for x << 0. Near the derivative's zero (x = -0.75) its two terms
    # still cancel, so float32 is computed in float64 and rounded once (within half an ulp of
    # the exact value); float64 within 4 (1 + |2z|) half-ulps of the terms' size.
    x = np.clip(x.astype(np.float64), -100.0, 100.0)  # s is exactly 0 or 1 beyond +-100
    two_z = 2.0 * S * (x + C * x**3)
    s = sigmoid(two_z)
    return s + x * s * sigmoid(-two_z) * (2.0 * S * (1.0 + 3.0 * C * x * x))


@_elementwise
def silu(x: FloatArray) -> FloatArray:
    """SiLU (swish): ``x * sigmoid(x)``."""
    x = np.maximum(x, -800.0)  # sigmoid is exactly 0 below -800: -inf gives 0, not nan
    return x * sigmoid(x)


@_elementwise
def silu_grad(x: FloatArray) -> FloatArray:
    """SiLU's derivative: ``s * (1 + x * (1 - s))`` with ``s = sigmoid(x)``."""
    x = np.clip(x, -800.0, 800.0)  # s is exactly 0 or 1 beyond +-800: as above
    s = sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


@_elementwise
def relu2(x: FloatArray) -> FloatArray:
    """Squared ReLU (Primer): ``max(x, 0)**2``; as ReLU, exactly 0 for every ``x <= 0``."""
    r = np.maximum(x, 0.0)
    return r * r  # beyond about 1.3e154 (float32: 1.8e19) the square is inf, silently


@_elementwise
def relu2_grad(x: FloatArray) -> FloatArray:
    """Squared ReLU's derivative: ``2 * max(x, 0)``, continuous (0 at the kink, no choice)."""
    return 2.0 * np.maximum(x, 0.0)


def gelu(x: object, approximate: str = "none") -> FloatArray:
    """GELU: ``x * Phi(x)``; ``approximate="tanh"`` is GPT-2's and BERT's approximation.

    Exact, in float64: within 3 ulp for ``x >= -1``; below, erfc's steep tail magnifies the
    rounding of ``x / sqrt 2``: at most ``10 + 1.5 * x**2`` ulp for ``|x| <= 10``. The tanh
    form is at most about 4.7e-4 from the exact one. ``approximate``: ``"none"`` or ``"tanh"``.
    """
    exact = check.choice(approximate, "approximate", APPROXIMATIONS) == "none"
    return (_gelu_exact if exact else _gelu_tanh)(x)


def gelu_grad(x: object, approximate: str = "none") -> FloatArray:
    """GELU's derivative: ``Phi(x) + x * phi(x)``, or the tanh form's (``approximate="tanh"``)."""
    exact = check.choice(approximate, "approximate", APPROXIMATIONS) == "none"
    return (_gelu_exact_grad if exact else _gelu_tanh_grad)(x)


@_elementwise
def _step(x: FloatArray) -> FloatArray:
    return np.heaviside(x, 0.0)  # 1 for x > 0, 0 for x <= 0 (ReLU's choice at the kink)


@_elementwise
def _gelu_tanh_gate(x: FloatArray) -> FloatArray:
    x = np.clip(x, -100.0, 100.0)  # the gate is exactly 0 or 1 beyond +-100: as above
    return sigmoid(2.0 * S * (x + C * x**3))  # (1 + tanh z) / 2, as _gelu_tanh writes it


# name -> the gate g with activation(x) = x * g(x).
GATES: dict[str, Callable[[object], FloatArray]] = {
    "relu": _step,
    "gelu": _elementwise(Phi),
    "gelu_tanh": _gelu_tanh_gate,
    "silu": _elementwise(sigmoid),
    "relu2": relu,  # x * max(x, 0): a gate that keeps growing
}


def gate(x: object, activation: str) -> FloatArray:
    """The gate g(x) of ``activation`` written as ``x * g(x)``: the step for ReLU, Phi(x) for
    GELU, (1 + tanh z) / 2 for its tanh form, sigmoid(x) for SiLU, max(x, 0) for squared ReLU.

    ``activation``: a name of ``ACTIVATIONS``.
    """
    return GATES[check.choice(activation, "activation", ACTIVATIONS)](x)


# name -> (activation, its derivative), for FeedForward.
FUNCTIONS: dict[str, tuple[Callable[[object], FloatArray], Callable[[object], FloatArray]]] = {
    "relu": (relu, relu_grad),
    "gelu": (_gelu_exact, _gelu_exact_grad),
    "gelu_tanh": (_gelu_tanh, _gelu_tanh_grad),
    "silu": (silu, silu_grad),
    "relu2": (relu2, relu2_grad),
}
