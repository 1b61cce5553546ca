"""Gated feed-forward blocks (GLU variants): ``(act(x @ W + b) * (x @ V + c)) @ W2 + b2``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.special  # type: ignore[import-untyped, unused-ignore]
from numpy.typing import DTypeLike

from ffn._validate import (
    FloatArray,
    as_float_array,
    check_bias,
    check_bool,
    check_choice,
    check_dy,
    check_float_dtype,
    check_input,
    check_matrix,
    check_positive_int,
    describe,
    shared_dtype,
)
from ffn.activations import Activation, Kernel, apply_blocked, get_activation

__all__ = ["GATED_VARIANTS", "GatedFeedForward", "GatedFeedForwardTrace"]

GATED_VARIANTS: tuple[str, ...] = ("glu", "reglu", "geglu", "geglu_tanh", "swiglu")
"""Valid ``variant`` names for ``ffn.GatedFeedForward``."""

_expit: np.ufunc = scipy.special.expit  # the logistic sigmoid, stable for any x


def _sigmoid(x: FloatArray, out: FloatArray) -> None:
    _expit(x, out=out)


def _sigmoid_grad(x: FloatArray, out: FloatArray) -> None:
    # s (1 - s), s = sigmoid(x)
    _expit(x, out=out)
    out *= 1.0 - out


# The gate's activation for each variant (Shazeer 2020, "GLU Variants Improve Transformer").
_GATES: dict[str, Activation] = {
    "glu": Activation("sigmoid", _sigmoid, _sigmoid_grad),
    "reglu": get_activation("relu"),
    "geglu": get_activation("gelu"),
    "geglu_tanh": get_activation("gelu_tanh"),
    "swiglu": get_activation("silu"),
}


def _activate(kernel: Kernel, x: FloatArray) -> FloatArray:
    out = np.empty_like(x)  # C-contiguous, as apply_blocked needs
    apply_blocked(kernel, x, out)
    return out


@dataclass(frozen=True, eq=False)
class GatedFeedForwardTrace:
    """The intermediate arrays of one gated forward pass.

    All are fresh arrays; ``x`` and ``y`` have shape ``(..., d_model)``, the
    others ``(..., d_ff)``.
    """

    x: FloatArray
    """The input, cast to the block's dtype."""
    gate_pre: FloatArray
    """Gate pre-activation ``x @ W + b``."""
    gate: FloatArray
    """Gate ``act(gate_pre)``."""
    up: FloatArray
    """Up projection ``x @ V + c`` (no activation)."""
    h: FloatArray
    """Hidden layer ``gate * up`` (elementwise)."""
    y: FloatArray
    """Output ``h @ W2 + b2``."""


@dataclass(frozen=True, eq=False)
class _Cache:
    x2: FloatArray  # (N, d_model)
    gate_pre: FloatArray  # (N, d_ff)
    gate: FloatArray  # (N, d_ff)
    up: FloatArray  # (N, d_ff)
    h: FloatArray  # (N, d_ff)
    lead: tuple[int, ...]


class GatedFeedForward:
    """A gated feed-forward block: ``(act(x @ W + b) * (x @ V + c)) @ W2 + b2``.

    Two matrices widen the input: ``W`` feeds the *gate*, which goes through
    the activation, and ``V`` the *up projection*, which does not. Their
    elementwise product is narrowed by ``W2``. The names follow Shazeer (2020),
    "GLU Variants Improve Transformer"; in LLaMA's code ``W``, ``V``, ``W2`` are
    ``w1``, ``w3``, ``w2`` (Hugging Face: ``gate_proj``, ``up_proj``,
    ``down_proj``, stored transposed). Row-vector convention: ``W`` and ``V``
    have shape ``(d_model, d_ff)``, ``W2`` has shape ``(d_ff, d_model)``.

    Variants (the gate's activation): ``"glu"`` sigmoid, ``"reglu"`` ReLU,
    ``"geglu"`` exact GELU, ``"geglu_tanh"`` tanh-approximate GELU,
    ``"swiglu"`` SiLU (Swish with beta = 1, as in LLaMA).

    Dtypes follow ``FeedForward``: all weights share float32 or float64 (bool,
    integer, float16 and list data become float64; mixing float32 and float64
    is a TypeError); inputs are cast to that dtype, outputs and gradients have it.

    Args:
        W: gate matrix, shape ``(d_model, d_ff)``.
        V: up-projection matrix, shape ``(d_model, d_ff)``.
        W2: down-projection matrix, shape ``(d_ff, d_model)``.
        b: gate bias, shape ``(d_ff,)``, or ``None`` (the default: gated
            models such as LLaMA have no biases).
        c: up-projection bias, shape ``(d_ff,)``, or ``None``.
        b2: output bias, shape ``(d_model,)``, or ``None``.
        variant: one of ``ffn.GATED_VARIANTS``.

    Raises:
        TypeError: if a weight is not real numeric data, the dtypes differ, or
            ``variant`` is not a str.
        ValueError: if the shapes do not fit together (the message shows them)
            or ``variant`` is unknown.
    """

    def __init__(
        self,
        W: object,
        V: object,
        W2: object,
        b: object = None,
        c: object = None,
        b2: object = None,
        variant: str = "swiglu",
    ) -> None:
        self._variant = check_choice(variant, "variant", GATED_VARIANTS)
        W_arr = as_float_array(W, "W")
        V_arr = as_float_array(V, "V")
        W2_arr = as_float_array(W2, "W2")
        b_arr = None if b is None else as_float_array(b, "b")
        c_arr = None if c is None else as_float_array(c, "c")
        b2_arr = None if b2 is None else as_float_array(b2, "b2")

        check_matrix(W_arr, "W", "(d_model, d_ff)")
        d_model, d_ff = W_arr.shape
        check_matrix(V_arr, "V", "(d_model, d_ff)")
        if V_arr.shape != W_arr.shape:
            raise ValueError(
                f"V has shape {V_arr.shape} but W has shape {W_arr.shape}: "
                f"V must be (d_model, d_ff) = ({d_model}, {d_ff})"
            )
        check_matrix(W2_arr, "W2", "(d_ff, d_model)")
        if W2_arr.shape != (d_ff, d_model):
            raise ValueError(
                f"W2 has shape {W2_arr.shape} but W has shape {W_arr.shape}: "
                f"W2 must be (d_ff, d_model) = ({d_ff}, {d_model})"
            )
        check_bias(b_arr, "b", d_ff, "d_ff")
        check_bias(c_arr, "c", d_ff, "d_ff")
        check_bias(b2_arr, "b2", d_model, "d_model")
        self._dtype = shared_dtype(
            {"W": W_arr, "V": V_arr, "W2": W2_arr, "b": b_arr, "c": c_arr, "b2": b2_arr}
        )
        self._W, self._V, self._W2 = W_arr, V_arr, W2_arr
        self._b, self._c, self._b2 = b_arr, c_arr, b2_arr
        self._gate_act = _GATES[self._variant]
        self._cache: _Cache | None = None
        self._grads: dict[str, FloatArray | None] = {}

    @classmethod
    def random(
        cls,
        d_model: int,
        d_ff: int,
        variant: str = "swiglu",
        seed: int | np.integer[Any] | None = 0,
        dtype: DTypeLike = np.float64,
        bias: bool = False,
    ) -> GatedFeedForward:
        """A block with random weights, deterministic for a given seed.

        ``W``, ``V`` and ``W2`` are drawn in that order, in float64, from a
        normal distribution with standard deviation ``1 / sqrt(fan_in)``
        (``d_model`` for ``W`` and ``V``, ``d_ff`` for ``W2``), then rounded to
        ``dtype``. Biases, if any, are zero.

        Args:
            d_model: model width, a positive int.
            d_ff: hidden width, a positive int.
            variant: one of ``ffn.GATED_VARIANTS``.
            seed: seed for ``np.random.default_rng``; ``None`` draws fresh entropy.
            dtype: ``np.float32`` or ``np.float64``.
            bias: ``True`` for zero biases ``b``, ``c``, ``b2``; ``False``
                (the default, as in LLaMA) for none.

        Raises:
            TypeError, ValueError: as for ``FeedForward.random``, with
                ``variant`` in place of ``activation``.
        """
        d_model = check_positive_int(d_model, "d_model")
        d_ff = check_positive_int(d_ff, "d_ff")
        resolved = check_float_dtype(dtype)
        with_bias = check_bool(bias, "bias")
        if seed is not None:
            is_int = isinstance(seed, (int, np.integer))
            if isinstance(seed, (bool, np.bool_)) or not is_int:
                raise TypeError(f"seed must be an int or None, got {describe(seed)}")
            if seed < 0:
                raise ValueError(f"seed must be non-negative, got {seed}")
        check_choice(variant, "variant", GATED_VARIANTS)  # fail before drawing

        rng = np.random.default_rng(seed)
        W = rng.standard_normal((d_model, d_ff)) / math.sqrt(d_model)
        V = rng.standard_normal((d_model, d_ff)) / math.sqrt(d_model)
        W2 = rng.standard_normal((d_ff, d_model)) / math.sqrt(d_ff)
        b = np.zeros(d_ff, resolved) if with_bias else None  # (d_ff,)
        c = np.zeros(d_ff, resolved) if with_bias else None  # (d_ff,)
        b2 = np.zeros(d_model, resolved) if with_bias else None  # (d_model,)
        return cls(
            W.astype(resolved), V.astype(resolved), W2.astype(resolved),
            b, c, b2, variant=variant,
        )

    # ------------------------------------------------------------ attributes

    @property
    def W(self) -> FloatArray:
        """Gate matrix, shape ``(d_model, d_ff)``."""
        return self._W

    @property
    def V(self) -> FloatArray:
        """Up-projection matrix, shape ``(d_model, d_ff)``."""
        return self._V

    @property
    def W2(self) -> FloatArray:
        """Down-projection matrix, shape ``(d_ff, d_model)``."""
        return self._W2

    @property
    def b(self) -> FloatArray | None:
        """Gate bias, shape ``(d_ff,)``, or ``None``."""
        return self._b

    @property
    def c(self) -> FloatArray | None:
        """Up-projection bias, shape ``(d_ff,)``, or ``None``."""
        return self._c

    @property
    def b2(self) -> FloatArray | None:
        """Output bias, shape ``(d_model,)``, or ``None``."""
        return self._b2

    @property
    def variant(self) -> str:
        """The variant's name, one of ``ffn.GATED_VARIANTS``."""
        return self._variant

    @property
    def d_model(self) -> int:
        """Width of the input and output rows."""
        return int(self._W.shape[0])

    @property
    def d_ff(self) -> int:
        """Width of the hidden layer (of the gate, and of the up projection)."""
        return int(self._W.shape[1])

    @property
    def dtype(self) -> np.dtype[np.floating[Any]]:
        """The weights' dtype: inputs are cast to it; outputs and gradients have it."""
        return self._dtype

    @property
    def grads(self) -> dict[str, FloatArray | None]:
        """Gradients from the last ``backward``, keyed by weight name.

        Keys ``"W"``, ``"V"``, ``"W2"``, ``"b"``, ``"c"``, ``"b2"``. Each has
        its weight's shape; a bias the block does not have gives ``None``.
        Empty before the first backward; each backward replaces them.
        """
        return self._grads

    # ------------------------------------------------------------ forward

    def forward(self, x: object) -> FloatArray:
        """Apply the block. Same as ``block(x)``.

        Args:
            x: real array-like of shape ``(..., d_model)``, cast to ``dtype``.

        Returns:
            A new array of shape ``(..., d_model)`` and dtype ``dtype``.

        Raises:
            TypeError: if ``x`` is not real numeric data.
            ValueError: if ``x`` is 0-d or its last dimension is not ``d_model``.
        """
        return self._forward(x)[1]

    def __call__(self, x: object) -> FloatArray:
        """Same as ``forward``."""
        return self._forward(x)[1]

    def forward_trace(self, x: object) -> GatedFeedForwardTrace:
        """Like ``forward``, but return every intermediate array.

        Raises:
            TypeError, ValueError: as for ``forward``.
        """
        cache, y = self._forward(x)
        lead, d_model, d_ff = cache.lead, self.d_model, self.d_ff
        return GatedFeedForwardTrace(
            x=cache.x2.reshape(*lead, d_model).copy(),  # (..., d_model)
            gate_pre=cache.gate_pre.reshape(*lead, d_ff).copy(),  # (..., d_ff)
            gate=cache.gate.reshape(*lead, d_ff).copy(),  # (..., d_ff)
            up=cache.up.reshape(*lead, d_ff).copy(),  # (..., d_ff)
            h=cache.h.reshape(*lead, d_ff).copy(),  # (..., d_ff)
            y=y,  # (..., d_model)
        )

    def _forward(self, x: object) -> tuple[_Cache, FloatArray]:
        self._cache = None  # a forward that fails leaves nothing for backward
        x_arr = check_input(x, self._dtype, self.d_model, "d_model")
        lead = x_arr.shape[:-1]
        x2 = x_arr.reshape(math.prod(lead), self.d_model)  # (N, d_model)

        gate_pre = x2 @ self._W  # (N, d_ff)
        if self._b is not None:
            gate_pre += self._b
        up = x2 @ self._V  # (N, d_ff)
        if self._c is not None:
            up += self._c
        gate = _activate(self._gate_act.forward, gate_pre)  # (N, d_ff)
        h = gate * up  # (N, d_ff)
        y = h @ self._W2  # (N, d_model)
        if self._b2 is not None:
            y += self._b2
        self._cache = _Cache(x2=x2, gate_pre=gate_pre, gate=gate, up=up, h=h, lead=lead)
        return self._cache, y.reshape(*lead, self.d_model)

    # ------------------------------------------------------------ backward

    def backward(self, dy: object) -> FloatArray:
        """Backpropagate ``dy = dL/dy`` through the last forward pass.

        With ``dh = dy @ W2.T``: the up projection gets ``dup = dh * gate`` and
        the gate's pre-activation gets ``dgate_pre = dh * up * act'(gate_pre)``;
        ``dL/dx = dgate_pre @ W.T + dup @ V.T``. Sets ``grads`` and returns ``dL/dx``.

        Args:
            dy: real array-like with the shape of the last output, ``(..., d_model)``.

        Returns:
            ``dL/dx``: a new array with the shape of the last input and dtype ``dtype``.

        Raises:
            RuntimeError: if no forward pass has run yet, or ``dy`` does not
                have the output's shape (the message shows both).
            TypeError: if ``dy`` is not real numeric data.
        """
        cache = self._cache
        out_shape = None if cache is None else (*cache.lead, self.d_model)
        dy_arr = check_dy(dy, out_shape, self._dtype, "block")
        assert cache is not None  # check_dy raised otherwise
        dy2 = dy_arr.reshape(cache.x2.shape[0], self.d_model)  # (N, d_model)

        dW2 = cache.h.T @ dy2  # (d_ff, d_model)
        db2 = dy2.sum(axis=0) if self._b2 is not None else None  # (d_model,)
        dh = dy2 @ self._W2.T  # (N, d_ff)
        dup = dh * cache.gate  # (N, d_ff)
        dgate_pre = dh * cache.up  # (N, d_ff): dL/dgate, times act'(gate_pre) next
        dgate_pre *= _activate(self._gate_act.grad, cache.gate_pre)
        dW = cache.x2.T @ dgate_pre  # (d_model, d_ff)
        dV = cache.x2.T @ dup  # (d_model, d_ff)
        db = dgate_pre.sum(axis=0) if self._b is not None else None  # (d_ff,)
        dc = dup.sum(axis=0) if self._c is not None else None  # (d_ff,)
        dx = dgate_pre @ self._W.T  # (N, d_model)
        dx += dup @ self._V.T  # x feeds both branches: the two gradients add up

        self._grads = {"W": dW, "V": dV, "W2": dW2, "b": db, "c": dc, "b2": db2}
        return dx.reshape(out_shape)

    def __repr__(self) -> str:
        present = [name for name in ("b", "c", "b2") if getattr(self, name) is not None]
        bias: object = len(present) == 3 if len(present) in (0, 3) else "+".join(present)
        return (
            f"GatedFeedForward(d_model={self.d_model}, d_ff={self.d_ff}, "
            f"variant={self._variant!r}, bias={bias!r}, dtype={self._dtype})"
        )
