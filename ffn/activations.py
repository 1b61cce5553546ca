"""Activation functions of the feed-forward block and their derivatives.

Every function is elementwise: an array of any shape goes in, a new array of
the same shape comes out. float32 stays float32 and float64 stays float64;
bool, integer and float16 input is promoted to float64. The input is never
written to (read-only arrays are fine).

NaN and infinity propagate as in plain numpy arithmetic, with no exception:
``relu(nan)`` is ``nan``, ``gelu(inf)`` is ``inf``, and an infinity that
meets a zero gives ``nan`` with numpy's usual RuntimeWarning (for example
``silu(-inf) = -inf * 0``).

For finite input the functions never overflow and never warn: ``silu``,
``gelu`` (both forms) and their derivatives stay finite for any |x| below
1e4 and far beyond. Some tails underflow to 0, which numpy ignores by default
(only ``np.errstate(under="raise")`` would complain).

Implementation note: each function is a *kernel* ``kernel(x, out)`` that
writes into a preallocated ``out`` with in-place ufuncs (no hidden
temporaries), run over blocks of about 64k elements so that multi-pass
formulas stay in cache. ``FeedForward`` calls the same kernels on its hidden
layer directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.special  # type: ignore[import-untyped, unused-ignore]

from ffn._validate import FloatArray, as_float_array, check_choice

__all__ = [
    "ACTIVATIONS",
    "APPROXIMATIONS",
    "gelu",
    "gelu_grad",
    "relu",
    "relu_grad",
    "silu",
    "silu_grad",
]

Kernel = Callable[[FloatArray, FloatArray], None]
"""``kernel(x, out)`` writes f(x) into ``out``: same shape and dtype, not aliasing ``x``."""

ACTIVATIONS: tuple[str, ...] = ("relu", "gelu", "gelu_tanh", "silu")
"""Valid ``activation`` names for ``ffn.FeedForward``."""

APPROXIMATIONS: tuple[str, ...] = ("none", "tanh")
"""Valid ``approximate`` values for ``gelu`` and ``gelu_grad``."""

# scipy ships no type information; pin the two ufuncs to np.ufunc for mypy.
_erfc: np.ufunc = scipy.special.erfc
_expit: np.ufunc = scipy.special.expit

_SQRT_2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_SCALE = math.sqrt(2.0 / math.pi)  # the sqrt(2/pi) of the tanh approximation
_TANH_CUBIC = 0.044715  # the cubic coefficient of the tanh approximation

# Beyond these |x| the clipped terms are exactly 0 in float64 (and float32),
# so clipping changes no result but keeps x**2 and x**3 from overflowing.
_PDF_CLIP = 40.0  # exp(-40**2 / 2) = 0 in float64
_TANH_CLIP = 10.0  # tanh(sqrt(2/pi) * (10 + 0.044715 * 10**3)) = 1 in float64

BLOCK_ELEMENTS = 1 << 16
"""Elements per block of elementwise work: 256/512 KiB in float32/float64, fits in L2."""


# ---------------------------------------------------------------- kernels
# Each kernel writes f(x) into `out` using only in-place ufuncs.


def _relu(x: FloatArray, out: FloatArray) -> None:
    np.maximum(x, 0, out=out)  # np.maximum propagates NaN, unlike np.where(x > 0, ...)


def _relu_grad(x: FloatArray, out: FloatArray) -> None:
    # heaviside(x, 0): 0 for x < 0, 0 at the kink x == 0 (our convention),
    # 1 for x > 0, and nan for nan (x > 0 would turn nan into 0)
    np.heaviside(x, 0, out=out)


def _gelu(x: FloatArray, out: FloatArray) -> None:
    # x * Phi(x) with Phi(x) = erfc(-x / sqrt(2)) / 2. erfc instead of 1 + erf
    # avoids cancellation for x < 0, where 1 + erf(x / sqrt(2)) -> 0.
    np.divide(x, -_SQRT_2, out=out)
    _erfc(out, out=out)
    out *= 0.5  # Phi(x) in [0, 1]; multiplying by x last cannot overflow
    out *= x


def _gelu_grad(x: FloatArray, out: FloatArray) -> None:
    # d/dx [x Phi(x)] = Phi(x) + x phi(x), phi = standard normal pdf.
    # x phi(x) is computed on x clipped to +-40, where it is already exactly 0:
    # same values, but no overflow of x**2 and no 0 * inf for infinite x.
    np.clip(x, -_PDF_CLIP, _PDF_CLIP, out=out)
    pdf = np.multiply(out, out)  # x**2 (clipped)
    pdf *= -0.5
    np.exp(pdf, out=pdf)  # may underflow to 0: fine, and silent by default
    pdf *= _INV_SQRT_2PI  # phi(x)
    out *= pdf  # x phi(x)
    np.divide(x, -_SQRT_2, out=pdf)  # reuse the buffer for Phi(x)
    _erfc(pdf, out=pdf)
    pdf *= 0.5
    out += pdf


def _gelu_tanh(x: FloatArray, out: FloatArray) -> None:
    # 0.5 x (1 + tanh(z)) with
    # z = sqrt(2/pi) (x + 0.044715 x**3) = sqrt(2/pi) x (1 + 0.044715 x**2).
    # x**2 is taken from x clipped to +-10 (where tanh(z) is already +-1), so it
    # cannot overflow; the factor x outside keeps z's sign and size.
    np.clip(x, -_TANH_CLIP, _TANH_CLIP, out=out)
    out *= out
    out *= _TANH_CUBIC
    out += 1.0
    out *= x
    out *= _TANH_SCALE  # z
    np.tanh(out, out=out)
    out += 1.0
    out *= 0.5
    out *= x


def _gelu_tanh_grad(x: FloatArray, out: FloatArray) -> None:
    # d/dx = 0.5 (1 + t) + 0.5 x (1 - t**2) z'  with  t = tanh(z),
    # z' = sqrt(2/pi) (1 + 3 * 0.044715 x**2).
    # Everything is computed from x clipped to +-10: beyond that t = +-1 exactly,
    # so 1 - t**2 = 0 and the clipped value changes nothing, while x**2 cannot
    # overflow. 1 - t**2 is formed as (1 - t)(1 + t): exact factors near
    # t = +-1, and unlike 1 / cosh(z)**2 it cannot overflow.
    np.clip(x, -_TANH_CLIP, _TANH_CLIP, out=out)  # x (clipped)
    t = np.multiply(out, out)  # x**2
    dz = np.multiply(t, 3.0 * _TANH_CUBIC)
    dz += 1.0
    dz *= _TANH_SCALE  # z'
    t *= _TANH_CUBIC
    t += 1.0
    t *= out
    t *= _TANH_SCALE  # z
    np.tanh(t, out=t)  # t
    out *= dz
    out *= 0.5  # 0.5 x z'
    one_minus_t = np.subtract(1.0, t, out=dz)  # z' is no longer needed
    t += 1.0  # 1 + t
    out *= one_minus_t
    out *= t  # 0.5 x z' (1 - t**2)
    t *= 0.5
    out += t


def _silu(x: FloatArray, out: FloatArray) -> None:
    _expit(x, out=out)  # sigmoid, computed stably by scipy for any x
    out *= x


def _silu_grad(x: FloatArray, out: FloatArray) -> None:
    # d/dx [x s(x)] = s (1 + x (1 - s)),  s = sigmoid(x)
    _expit(x, out=out)  # s
    tmp = np.subtract(1.0, out)
    tmp *= x
    tmp += 1.0
    out *= tmp


# ---------------------------------------------------------------- registry


@dataclass(frozen=True)
class Activation:
    """An activation: its name, and kernels for its value and its derivative."""

    name: str
    forward: Kernel
    grad: Kernel


_REGISTRY: dict[str, Activation] = {
    "relu": Activation("relu", _relu, _relu_grad),
    "gelu": Activation("gelu", _gelu, _gelu_grad),
    "gelu_tanh": Activation("gelu_tanh", _gelu_tanh, _gelu_tanh_grad),
    "silu": Activation("silu", _silu, _silu_grad),
}


def get_activation(name: object) -> Activation:
    """Look up an activation by name (one of ``ACTIVATIONS``).

    Raises:
        TypeError: if ``name`` is not a str.
        ValueError: listing the valid names if ``name`` is unknown.
    """
    return _REGISTRY[check_choice(name, "activation", ACTIVATIONS)]


def _gelu_name(approximate: object) -> str:
    kind = check_choice(approximate, "approximate", APPROXIMATIONS)
    return "gelu" if kind == "none" else "gelu_tanh"


def apply_blocked(kernel: Kernel, x: FloatArray, out: FloatArray) -> None:
    """Run ``kernel`` over ``x`` and ``out`` block by block.

    Both arrays must have the same shape; ``out`` must be C-contiguous. Blocks
    of ``BLOCK_ELEMENTS`` elements keep the few intermediate passes of a kernel
    inside the CPU cache instead of streaming whole arrays through memory.
    """
    x_flat = x.reshape(-1)  # a copy only if x is not contiguous; never written
    out_flat = out.reshape(-1)  # a view: out is C-contiguous
    for start in range(0, x_flat.size, BLOCK_ELEMENTS):
        stop = start + BLOCK_ELEMENTS
        kernel(x_flat[start:stop], out_flat[start:stop])


def _elementwise(kernel: Kernel, x: object) -> FloatArray:
    array = as_float_array(x, "x")
    # A fresh output array, so the caller's x is never written.
    out = np.empty(array.shape, dtype=array.dtype)
    apply_blocked(kernel, array, out)
    return out


# ---------------------------------------------------------------- public functions


def relu(x: object) -> FloatArray:
    """ReLU: ``max(x, 0)``.

    Args:
        x: real array-like of any shape.

    Returns:
        A new array of the same shape; float32 stays float32, float64 stays
        float64, other real input becomes float64. NaN propagates.

    Raises:
        TypeError: if ``x`` is not real numeric data (strings, None, complex, objects).
    """
    return _elementwise(_relu, x)


def relu_grad(x: object) -> FloatArray:
    """Derivative of ReLU: 1 where ``x > 0``, else 0.

    The derivative does not exist at the kink ``x == 0``; this function
    returns 0 there (as PyTorch and JAX do). NaN input gives NaN.

    Args:
        x: real array-like of any shape.

    Returns:
        A new array of the same shape and dtype rules as ``relu``.

    Raises:
        TypeError: if ``x`` is not real numeric data.
    """
    return _elementwise(_relu_grad, x)


def gelu(x: object, approximate: str = "none") -> FloatArray:
    """GELU: ``x * Phi(x)``, Phi the standard normal CDF.

    ``approximate="none"`` (default) is exact, ``0.5 * x * (1 + erf(x / sqrt(2)))``,
    computed as ``0.5 * x * erfc(-x / sqrt(2))`` (``scipy.special.erfc``),
    which is the same function without cancellation for negative x.
    ``approximate="tanh"`` is the approximation used by GPT-2 and BERT,
    ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3)))``; it differs
    from the exact form by at most about 4.7e-4. It is evaluated literally
    (as in GPT-2 and PyTorch), so for x below about -3, where ``1 + tanh``
    cancels, its absolute error is about ``|x| * eps`` of the dtype.

    Args:
        x: real array-like of any shape.
        approximate: ``"none"`` or ``"tanh"``.

    Returns:
        A new array of the same shape; float32 stays float32, float64 stays
        float64, other real input becomes float64. Finite for all finite x,
        without warnings.

    Raises:
        TypeError: if ``x`` is not real numeric data.
        ValueError: if ``approximate`` is not ``"none"`` or ``"tanh"``.
    """
    return _elementwise(_REGISTRY[_gelu_name(approximate)].forward, x)


def gelu_grad(x: object, approximate: str = "none") -> FloatArray:
    """Derivative of ``gelu`` with the same ``approximate`` choice.

    Exact form: ``Phi(x) + x * phi(x)``, phi the standard normal pdf.
    Tanh form: ``0.5 * (1 + t) + 0.5 * x * (1 - t**2) * sqrt(2/pi) * (1 + 3 * 0.044715 * x**2)``
    with ``t = tanh(sqrt(2/pi) * (x + 0.044715 * x**3))``.

    Args:
        x: real array-like of any shape.
        approximate: ``"none"`` or ``"tanh"``.

    Returns:
        A new array of the same shape and dtype rules as ``gelu``.

    Raises:
        TypeError: if ``x`` is not real numeric data.
        ValueError: if ``approximate`` is not ``"none"`` or ``"tanh"``.
    """
    return _elementwise(_REGISTRY[_gelu_name(approximate)].grad, x)


def silu(x: object) -> FloatArray:
    """SiLU (also called swish): ``x * sigmoid(x)``.

    The sigmoid is ``scipy.special.expit``, which is stable for any x (no
    ``exp`` overflow for large negative x).

    Args:
        x: real array-like of any shape.

    Returns:
        A new array of the same shape and dtype rules as ``relu``.

    Raises:
        TypeError: if ``x`` is not real numeric data.
    """
    return _elementwise(_silu, x)


def silu_grad(x: object) -> FloatArray:
    """Derivative of SiLU: ``s * (1 + x * (1 - s))`` with ``s = sigmoid(x)``.

    Args:
        x: real array-like of any shape.

    Returns:
        A new array of the same shape and dtype rules as ``relu``.

    Raises:
        TypeError: if ``x`` is not real numeric data.
    """
    return _elementwise(_silu_grad, x)
