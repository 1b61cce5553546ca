"""Fast activation kernels: blocked, in-place, threaded; the fitted float32 erfc.

Each activation is a *kernel* ``kernel(x, out)`` that writes into a preallocated ``out`` with
in-place ufuncs and a few reusable per-thread work arrays, instead of fresh temporaries. Large
arrays are processed in blocks of ``BLOCK_ELEMENTS`` so multi-pass formulas stay in the CPU
cache, and the blocks are shared among threads (numpy and scipy ufuncs release the GIL): the
blocks, threads and work arrays are ``ffn.fast.blocks``.
``ffn.fast.FeedForward`` calls the same kernels on its hidden layer, on one thread. The public
functions here compute what ``ffn.activations``' do (``tests/test_fast.py``): same NaN, inf
and dtype rules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.special  # type: ignore[import-untyped, unused-ignore]

from ffn import _validate as check
from ffn._validate import FloatArray
from ffn.activations import ACTIVATIONS, APPROXIMATIONS
from ffn.fast.blocks import (
    Kernel,
    apply_blocked,
    work_arrays,
)

__all__ = [
    "ACTIVATIONS",
    "APPROXIMATIONS",
    "gelu",
    "gelu_grad",
    "relu",
    "relu2",
    "relu2_grad",
    "relu_grad",
    "silu",
    "silu_grad",
]

# scipy ships no type information; pin the two ufuncs to np.ufunc for mypy.
_erfc: np.ufunc = scipy.special.erfc
_expit: np.ufunc = scipy.special.expit

_INV_SQRT_2 = 1.0 / math.sqrt(2.0)  # a multiply is 1.7x faster than dividing by sqrt(2)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_SCALE = math.sqrt(2.0 / math.pi)  # the sqrt(2/pi) of the tanh approximation
_TANH_CUBIC = 0.044715  # the cubic coefficient of the tanh approximation

# Beyond these |x| the clipped terms are exactly 0 (or the function exactly
# its limit) in float64 and float32, so clipping changes no finite result
# but keeps x**2 and x**3 from overflowing and inf from meeting a 0.
_PDF_CLIP = 40.0  # exp(-40**2 / 2) = 0 in float64; Phi(-40) = 0 too
_TANH_CLIP = 10.0  # tanh(sqrt(2/pi) * (10 + 0.044715 * 10**3)) = 1 in float64
_SIGMOID_TANH_CLIP = 100.0  # sigmoid(2 sqrt(2/pi) (-100 - 0.044715 * 100**3)) = 0 in float64
_EXPIT_CLIP = 800.0  # expit(-800) = 0 and expit(800) = 1 in float64
_F32_TAIL_CLIP = 15.0  # exp(-15**2 / 2) = 0 in float32


# ---------------------------------------------------------------- kernels
# Each kernel writes f(x) into `out` using in-place ufuncs and work arrays.


# np.clip(x, lo, hi) with two float bounds has a fast SIMD loop; np.maximum and
# np.minimum with a scalar (and np.clip with None) take a loop 3x slower.
# All of them propagate NaN.


def _relu(x: FloatArray, out: FloatArray) -> None:
    np.clip(x, 0.0, np.inf, out=out)
    out += 0.0  # -0.0 + 0.0 = +0.0, so relu(-0.0) = +0.0 (as np.maximum(x, 0) gives)


def _relu_grad(x: FloatArray, out: FloatArray) -> None:
    # 1 for x > 0; 0 for x < 0 and at the kink x == 0 (our convention); nan
    # for nan. (x > 0) alone would turn nan into 0, so it is combined with
    # min(x, 0), which is nan for nan and <= 0 otherwise: max of the two is
    # the answer. (np.heaviside(x, 0) is the same function, 20x slower.)
    (low,) = work_arrays(out, 1)
    np.clip(x, -np.inf, 0.0, out=low)
    np.greater(x, 0, out=out)
    np.maximum(low, out, out=out)  # in this order, max(-0.0, +0.0) is +0.0


# Exact GELU, both dtypes. With a = |x| and Q(a) = Phi(-a) = 1 - Phi(a), the
# upper tail of the standard normal:
#     gelu(x)  = relu(x) - a Q(a)                  (x Phi(x) for either sign),
#     gelu'(x) = G(a) for x < 0, 1 - G(a) for x >= 0,   G(a) = Q(a) - a phi(a).
# Only a >= 0 enters Q, so nothing cancels for negative x (1 + erf(x / sqrt 2)
# would), and scipy's erfc runs 1.6x faster on arguments of one sign (its
# branches on the sign are then predictable). a is clipped at 40 (float64) or
# 15 (float32), where Q(a) and phi(a) are already exactly 0: +-inf then
# gives 40 * 0 = 0, not inf * 0 = nan.


def _select_by_sign(x: FloatArray, g: FloatArray, h: FloatArray, tmp: FloatArray) -> None:
    """g = 1 - g where x >= 0 (-0.0 included), else g; h, tmp are scratch.

    As H + (1 - 2 H) g with H = (x >= 0): no cancellation in g, and 10x
    faster than a masked ufunc. NaN in x gives NaN (g is NaN there).
    """
    np.greater_equal(x, 0, out=h)  # H: 1.0 or 0.0
    np.multiply(h, -2.0, out=tmp)
    tmp += 1.0
    g *= tmp
    g += h


def _gelu(x: FloatArray, out: FloatArray) -> None:
    if out.dtype == np.float32:
        _gelu_float32(x, out)
        return
    a, q = work_arrays(out, 2)
    _tail_float64(x, a, q)
    q *= a  # a Q(a)
    np.clip(x, 0.0, np.inf, out=out)  # relu(x)
    out -= q


def _tail_float64(x: FloatArray, a: FloatArray, q: FloatArray) -> None:
    """a = min(|x|, 40) and q = Q(a) = erfc(a / sqrt(2)) / 2 (scipy)."""
    np.abs(x, out=a)
    np.clip(a, 0.0, _PDF_CLIP, out=a)  # keeps NaN
    np.multiply(a, _INV_SQRT_2, out=q)
    _erfc(q, out=q)
    q *= 0.5


def _gelu_grad(x: FloatArray, out: FloatArray) -> None:
    if out.dtype == np.float32:
        _gelu_grad_float32(x, out)
        return
    a, q, h = work_arrays(out, 3)
    _tail_float64(x, a, q)
    np.multiply(a, a, out=out)
    out *= -0.5
    np.exp(out, out=out)  # may underflow to 0: fine, and silent by default
    out *= _INV_SQRT_2PI  # phi(a)
    out *= a
    np.subtract(q, out, out=out)  # G(a) = Q(a) - a phi(a)
    _select_by_sign(x, out, h, a)


# float32 exact GELU. scipy's erfc evaluates float32 input in float64, at a
# cost above everything else in a forward pass together,
# so float32 computes Q(a) = exp(-a**2 / 2) R(a) from SIMD ufuncs, with
# R(a) = erfcx(a / sqrt(2)) / 2 = P(a) / S(a): a minimax fit (Lawson-weighted
# least squares) on [0, 15] with P(0) = 1/2 exactly; its relative error is
# 6.6e-9, below float32's 6e-8 rounding. Beyond a = 15, exp(-a**2 / 2) is 0
# in float32, so a is clipped there.
_R_NUM = (0.5, 0.43857944404786525, 0.18341932918599826, 0.04068755276368239,
          0.004122039920139237)  # P(a), lowest degree first
_R_DEN = (1.0, 1.6750437503345874, 1.2033260636641516, 0.4699498372949287,
          0.10199481215298406, 0.010332307550093407)  # S(a), lowest degree first


def _horner(coefficients: tuple[float, ...], a: FloatArray, out: FloatArray) -> None:
    """out = sum(c_k a**k), lowest degree first: 2 passes per degree."""
    np.multiply(a, coefficients[-1], out=out)
    for c in coefficients[-2:0:-1]:
        out += c
        out *= a
    out += coefficients[0]


def _tail_float32(
    x: FloatArray, a: FloatArray, pdf: FloatArray, r: FloatArray, tmp: FloatArray
) -> None:
    """a = min(|x|, 15), pdf = exp(-a**2 / 2) (no 1/sqrt(2 pi)), r = R(a); tmp is scratch."""
    np.abs(x, out=a)
    np.clip(a, 0.0, _F32_TAIL_CLIP, out=a)  # keeps NaN
    np.multiply(a, a, out=pdf)
    pdf *= -0.5
    np.exp(pdf, out=pdf)  # underflows to 0 beyond a ~ 14: fine, silent by default
    _horner(_R_NUM, a, r)
    _horner(_R_DEN, a, tmp)
    r /= tmp


def _gelu_float32(x: FloatArray, out: FloatArray) -> None:
    a, pdf, r = work_arrays(out, 3)
    _tail_float32(x, a, pdf, r, tmp=out)
    r *= pdf  # Q(a)
    r *= a  # a Q(a); a is clipped, so +-inf gives 15 * 0, not inf * 0
    np.clip(x, 0.0, np.inf, out=out)  # relu(x)
    out -= r


def _gelu_grad_float32(x: FloatArray, out: FloatArray) -> None:
    a, pdf, r = work_arrays(out, 3)
    _tail_float32(x, a, pdf, r, tmp=out)
    a *= _INV_SQRT_2PI
    r -= a  # R(a) - a / sqrt(2 pi)
    np.multiply(r, pdf, out=out)  # G(a) = Q(a) - a phi(a)
    _select_by_sign(x, out, pdf, a)  # G(0) = 1/2 exactly: gelu'(+-0) = 1/2


def _gelu_tanh(x: FloatArray, out: FloatArray) -> None:
    # 0.5 x (1 + tanh(z)) = x sigmoid(2z), with
    # z = sqrt(2/pi) (x + 0.044715 x**3) = sqrt(2/pi) x (1 + 0.044715 x**2);
    # sigmoid's tail does not cancel where 1 + tanh(z) does (x << 0).
    # For |x| beyond ~1e13 (float32) x**3 overflows: z = +-inf, and sigmoid(2z)
    # is then 0 or 1 exactly, as it already is for any x < -100, so the
    # overflow is harmless and silenced. The final factor x is clipped below at
    # -100, so -inf gives -0, not -inf * 0 = nan.
    (z,) = work_arrays(out, 1)
    with np.errstate(over="ignore"):  # cheaper than a clipping pass
        np.multiply(x, x, out=z)
        z *= _TANH_CUBIC
        z += 1.0
        z *= x
        z *= 2.0 * _TANH_SCALE  # 2z
    _expit(z, out=z)
    np.clip(x, -_SIGMOID_TANH_CLIP, np.inf, out=out)
    out *= z


def _gelu_tanh_grad(x: FloatArray, out: FloatArray) -> None:
    # d/dx [x s] = s + x s (1 - s) 2z'  with  s = sigmoid(2z), 1 - s = sigmoid(-2z),
    # 2z' = 2 sqrt(2/pi) (1 + 3 * 0.044715 x**2): no 1 + tanh(z) to cancel for x << 0.
    # Near the derivative's zero (x = -0.75) the two terms still cancel: float32 is
    # computed in float64 work arrays and rounded once, as ffn.gelu_grad does. x is
    # clipped to +-100, where s is exactly 0 or 1 and x s (1 - s) is 0: the same values,
    # no overflow in x**2 and no inf * 0.
    if out.dtype == np.float32:
        like = np.broadcast_to(np.float64(0.0), out.shape)  # float64 work arrays: no copy
        x_wide, wide = work_arrays(like, 2, first=3)  # slots 0-2 are the float64 kernel's
        np.copyto(x_wide, x)
        _gelu_tanh_grad(x_wide, wide)
        np.copyto(out, wide)  # rounded once to float32
        return
    two_z, dz, xc = work_arrays(out, 3)
    np.clip(x, -_SIGMOID_TANH_CLIP, _SIGMOID_TANH_CLIP, out=xc)
    np.multiply(xc, xc, out=dz)  # x**2
    np.multiply(dz, _TANH_CUBIC, out=two_z)
    two_z += 1.0
    two_z *= xc
    two_z *= 2.0 * _TANH_SCALE  # 2z
    dz *= 3.0 * _TANH_CUBIC
    dz += 1.0
    dz *= 2.0 * _TANH_SCALE  # 2z'
    dz *= xc  # x 2z'; x is no longer needed
    np.negative(two_z, out=xc)
    _expit(xc, out=xc)  # 1 - s
    dz *= xc
    _expit(two_z, out=out)  # s
    dz *= out  # x s (1 - s) 2z'
    out += dz


def _relu2(x: FloatArray, out: FloatArray) -> None:
    _relu(x, out)
    np.multiply(out, out, out=out)  # max(x, 0)**2, as the reference squares it


def _relu2_grad(x: FloatArray, out: FloatArray) -> None:
    _relu(x, out)
    out *= 2.0  # 2 max(x, 0); +0.0 stays +0.0


def _silu(x: FloatArray, out: FloatArray) -> None:
    # x sigmoid(x), sigmoid computed stably by scipy for any x. x is clipped
    # below at -800, where sigmoid is already exactly 0: -inf gives 0, not nan.
    (xc,) = work_arrays(out, 1)
    np.clip(x, -_EXPIT_CLIP, np.inf, out=xc)
    _expit(xc, out=out)
    out *= xc


def _silu_grad(x: FloatArray, out: FloatArray) -> None:
    # d/dx [x s(x)] = s (1 + x (1 - s)),  s = sigmoid(x), from x clipped to
    # +-800 where s is exactly 0 or 1: the same values, and no inf * 0.
    xc, tmp = work_arrays(out, 2)
    np.clip(x, -_EXPIT_CLIP, _EXPIT_CLIP, out=xc)
    _expit(xc, out=out)  # s
    np.subtract(1.0, out, out=tmp)
    tmp *= xc
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
    "relu2": Activation("relu2", _relu2, _relu2_grad),
}


def get_activation(name: object) -> Activation:
    """Look up an activation by name (one of ``ACTIVATIONS``).

    Raises:
        TypeError: if ``name`` is not a str.
        ValueError: listing the valid names if ``name`` is unknown.
    """
    return _REGISTRY[check.choice(name, "activation", ACTIVATIONS)]


def _gelu_name(approximate: object) -> str:
    kind = check.choice(approximate, "approximate", APPROXIMATIONS)
    return "gelu" if kind == "none" else "gelu_tanh"


def _elementwise(kernel: Kernel, x: object) -> FloatArray:
    array = check.float_array(x, "x")
    # A fresh output array, so the caller's x is never written.
    out = np.empty(array.shape, dtype=array.dtype)
    apply_blocked(kernel, array, out)
    return out


# ---------------------------------------------------------------- public functions


def relu(x: object) -> FloatArray:
    """``ffn.relu``, blocked and threaded."""
    return _elementwise(_relu, x)


def relu_grad(x: object) -> FloatArray:
    """``ffn.relu_grad``, blocked and threaded."""
    return _elementwise(_relu_grad, x)


def relu2(x: object) -> FloatArray:
    """``ffn.relu2``, blocked and threaded."""
    return _elementwise(_relu2, x)


def relu2_grad(x: object) -> FloatArray:
    """``ffn.relu2_grad``, blocked and threaded."""
    return _elementwise(_relu2_grad, x)


def gelu(x: object, approximate: str = "none") -> FloatArray:
    """``ffn.gelu``, blocked and threaded; float32 exact uses the fitted tail above.

    Accuracy of the float32 exact form: relative error below 1e-6 for |x| <= 4 and below
    ``1e-6 + 3.5e-8 * x**2`` wherever the result is a normal float32 (|x| < 13); the growth in
    the negative tail, where the values are below 1e-4, comes from rounding ``x**2``.
    """
    return _elementwise(_REGISTRY[_gelu_name(approximate)].forward, x)


def gelu_grad(x: object, approximate: str = "none") -> FloatArray:
    """``ffn.gelu_grad``, blocked and threaded (float32 exact: absolute error below 2e-7)."""
    return _elementwise(_REGISTRY[_gelu_name(approximate)].grad, x)


def silu(x: object) -> FloatArray:
    """``ffn.silu``, blocked and threaded."""
    return _elementwise(_silu, x)


def silu_grad(x: object) -> FloatArray:
    """``ffn.silu_grad``, blocked and threaded."""
    return _elementwise(_silu_grad, x)
