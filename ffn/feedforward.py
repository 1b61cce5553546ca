"""The transformer feed-forward block ``y = act(x @ W1 + b1) @ W2 + b2``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn._validate import (
    FloatArray,
    as_float_array,
    check_bias,
    check_bool,
    check_dy,
    check_float_dtype,
    check_input,
    check_matrix,
    check_positive_int,
    describe,
    shared_dtype,
)
from ffn.activations import BLOCK_ELEMENTS, for_each_block, get_activation, work_arrays

__all__ = ["FeedForward", "FeedForwardTrace"]

# work_arrays slots for h_pre and act'(h_pre) of one block, clear of the kernels' own.
_H_PRE_SLOT, _SLOPE_SLOT = 16, 17


@dataclass(frozen=True, eq=False)
class FeedForwardTrace:
    """The intermediate arrays of one forward pass, for printing step by step.

    All are read-only except ``y``: ``x`` and ``h`` are views of what the
    block keeps for ``FeedForward.backward``; the block keeps ``x @ W1`` and
    adds ``b1`` block by block when it needs ``h_pre``, so ``h_pre`` is made
    for the trace (a view of ``x @ W1`` when there is no ``b1``). Later
    passes never write into them.
    """

    x: FloatArray
    """The input as computed with: ``(..., d_model)``, cast to the block's dtype."""
    h_pre: FloatArray
    """Pre-activation ``x @ W1 + b1``: ``(..., d_ff)``."""
    h: FloatArray
    """Hidden activation ``act(h_pre)``: ``(..., d_ff)``."""
    y: FloatArray
    """Output ``h @ W2 + b2``: ``(..., d_model)``."""


@dataclass(frozen=True, eq=False)
class _Cache:
    """What backward needs from the last forward pass (all 2-D)."""

    x2: FloatArray  # (N, d_model)
    xW1: FloatArray  # (N, d_ff): x @ W1, without b1 (h_pre = xW1 + b1)
    h: FloatArray  # (N, d_ff)
    lead: tuple[int, ...]  # the leading dimensions of x


def _h_pre(xW1: FloatArray, b1: FloatArray | None, start: int, stop: int) -> FloatArray:
    """Rows ``start:stop`` of ``h_pre = x @ W1 + b1``, in a per-thread scratch block."""
    if b1 is None:
        return xW1[start:stop]
    (h_pre,) = work_arrays(xW1[start:stop], 1, first=_H_PRE_SLOT)
    np.add(xW1[start:stop], b1, out=h_pre)
    return h_pre


def _weight_grad(a: FloatArray, b: FloatArray) -> FloatArray:
    """``a.T @ b``: the gradient of a weight matrix, summed over the N rows."""
    if a.shape[0] == 1:
        # One row: an outer product. OpenBLAS's gemm takes ~2.4 ms for this
        # (768, 1) @ (1, 3072) shape, a broadcast multiply 0.12 ms; and with
        # a single term per entry both give the same bits.
        return np.multiply(a.T, b)
    return a.T @ b


def _readonly(array: FloatArray) -> FloatArray:
    view = array.view()
    view.flags.writeable = False
    return view


class FeedForward:
    """The position-wise feed-forward block of a transformer.

    ``y = act(x @ W1 + b1) @ W2 + b2``, applied to every row (token) of ``x``
    independently. Row-vector convention: ``W1`` has shape ``(d_model, d_ff)``
    and ``W2`` has shape ``(d_ff, d_model)`` (the transposes of PyTorch's
    ``nn.Linear.weight``).

    Dtypes: the four weights must share one dtype, float32 or float64 (bool,
    integer, float16 and list data is converted to float64 first; mixing
    float32 and float64 is a TypeError, not a silent cast). That dtype is the
    block's ``dtype``: inputs are cast to it, and outputs and gradients
    have it. float32 and float64 weights are stored without copying and are
    never written to.

    Args:
        W1: first weight matrix, shape ``(d_model, d_ff)``.
        b1: first bias, shape ``(d_ff,)``, or ``None`` for no bias.
        W2: second weight matrix, shape ``(d_ff, d_model)``.
        b2: second bias, shape ``(d_model,)``, or ``None`` for no bias.
        activation: one of ``"relu"``, ``"gelu"`` (exact), ``"gelu_tanh"``,
            ``"silu"`` (see ``ffn.ACTIVATIONS``).

    Raises:
        TypeError: if a weight is not real numeric data, the weights' dtypes
            differ, or ``activation`` is not a str.
        ValueError: if the shapes do not fit together (the message shows both
            shapes) or ``activation`` is unknown.
    """

    def __init__(
        self,
        W1: object,
        b1: object,
        W2: object,
        b2: object,
        activation: str = "gelu",
    ) -> None:
        self._activation = get_activation(activation)
        W1_arr = as_float_array(W1, "W1")
        b1_arr = None if b1 is None else as_float_array(b1, "b1")
        W2_arr = as_float_array(W2, "W2")
        b2_arr = None if b2 is None else as_float_array(b2, "b2")

        check_matrix(W1_arr, "W1", "(d_model, d_ff)")
        d_model, d_ff = W1_arr.shape
        check_matrix(W2_arr, "W2", "(d_ff, d_model)")
        if W2_arr.shape != (d_ff, d_model):
            raise ValueError(
                f"W2 has shape {W2_arr.shape} but W1 has shape {W1_arr.shape}: "
                f"W2 must be (d_ff, d_model) = ({d_ff}, {d_model})"
            )
        check_bias(b1_arr, "b1", d_ff, "d_ff")
        check_bias(b2_arr, "b2", d_model, "d_model")
        self._dtype = shared_dtype(
            {"W1": W1_arr, "b1": b1_arr, "W2": W2_arr, "b2": b2_arr}
        )

        self._W1, self._b1, self._W2, self._b2 = W1_arr, b1_arr, W2_arr, b2_arr
        self._cache: _Cache | None = None
        self._grads: dict[str, FloatArray | None] = {}
        # h_pre and h of the last pass, for the next forward to write into
        # (None once forward_trace has handed out views of them).
        self._spare: tuple[FloatArray, FloatArray] | None = None

    @classmethod
    def random(
        cls,
        d_model: int,
        d_ff: int,
        activation: str = "gelu",
        seed: int | np.integer[Any] | None = 0,
        dtype: DTypeLike = np.float64,
        bias: bool = True,
    ) -> FeedForward:
        """A block with random weights, deterministic for a given seed.

        Weights are drawn from a normal distribution with mean 0 and standard
        deviation ``1 / sqrt(fan_in)``: ``1 / sqrt(d_model)`` for ``W1`` and
        ``1 / sqrt(d_ff)`` for ``W2``, so activations keep roughly unit scale.
        Biases are zero. The numbers are drawn in float64 from
        ``np.random.default_rng(seed)`` and then rounded to ``dtype``, so a
        float32 block is the float64 block with the same seed, rounded.

        Args:
            d_model: model (residual stream) width, a positive int.
            d_ff: hidden width, a positive int (often ``4 * d_model``).
            activation: one of ``ffn.ACTIVATIONS``.
            seed: seed for ``np.random.default_rng``; ``None`` draws fresh entropy.
            dtype: ``np.float32`` or ``np.float64``.
            bias: ``False`` for a block without biases (``b1 = b2 = None``).

        Raises:
            TypeError: if ``d_model``/``d_ff`` are not ints, ``seed`` is not an
                int or None, ``dtype`` is not float32/float64, or ``bias`` is not a bool.
            ValueError: if ``d_model``/``d_ff`` are not positive, ``seed`` is
                negative, or ``activation`` is unknown.
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
        get_activation(activation)  # fail on a bad name before drawing anything

        rng = np.random.default_rng(seed)
        # std 1 / sqrt(fan_in): the fan-in of W1 is d_model, that of W2 is d_ff.
        W1 = rng.standard_normal((d_model, d_ff)) / math.sqrt(d_model)
        W2 = rng.standard_normal((d_ff, d_model)) / math.sqrt(d_ff)
        b1 = np.zeros(d_ff, dtype=resolved) if with_bias else None  # (d_ff,)
        b2 = np.zeros(d_model, dtype=resolved) if with_bias else None  # (d_model,)
        W1, W2 = W1.astype(resolved), W2.astype(resolved)
        return cls(W1, b1, W2, b2, activation=activation)

    # ------------------------------------------------------------ attributes

    @property
    def W1(self) -> FloatArray:
        """First weight matrix, shape ``(d_model, d_ff)``."""
        return self._W1

    @property
    def b1(self) -> FloatArray | None:
        """First bias, shape ``(d_ff,)``, or ``None``."""
        return self._b1

    @property
    def W2(self) -> FloatArray:
        """Second weight matrix, shape ``(d_ff, d_model)``."""
        return self._W2

    @property
    def b2(self) -> FloatArray | None:
        """Second bias, shape ``(d_model,)``, or ``None``."""
        return self._b2

    @property
    def activation(self) -> str:
        """The activation's name, one of ``ffn.ACTIVATIONS``."""
        return self._activation.name

    @property
    def d_model(self) -> int:
        """Width of the input and output rows."""
        return int(self._W1.shape[0])

    @property
    def d_ff(self) -> int:
        """Width of the hidden layer."""
        return int(self._W1.shape[1])

    @property
    def dtype(self) -> np.dtype[np.floating[Any]]:
        """The weights' dtype: inputs are cast to it; outputs and gradients have it."""
        return self._dtype

    @property
    def grads(self) -> dict[str, FloatArray | None]:
        """Gradients from the last ``backward``: keys ``"W1"``, ``"b1"``, ``"W2"``, ``"b2"``.

        Each has its weight's shape and the block's dtype; ``"b1"``/``"b2"``
        are ``None`` when the block has no such bias. Empty before the first
        backward. Each backward replaces them (no accumulation).
        """
        return self._grads

    # ------------------------------------------------------------ forward

    def forward(self, x: object) -> FloatArray:
        """Apply the block: ``act(x @ W1 + b1) @ W2 + b2``. Same as ``block(x)``.

        Keeps what ``backward`` needs: the input (by reference, not copied: do
        not modify it before calling backward), ``x @ W1`` (``h_pre`` without
        ``b1``) and ``h``, the two ``(N, d_ff)`` arrays of the pass (N rows in
        all). Nothing else of size ``(N, d_ff)`` is allocated: ``b1`` and the
        activation are applied block by block on small scratch arrays, and
        the next forward with as many rows writes into the same two arrays
        (unless ``forward_trace`` handed them out).

        Each row is computed independently of the others. NaN and inf raise
        nothing and warn nothing: a NaN in a row of ``x`` makes that row of the
        output NaN; an inf can make it NaN or inf (the activations map +-inf to
        their limits, the matrix products add infinities of both signs). The
        other rows are unaffected.

        Args:
            x: real array-like of shape ``(..., d_model)``: a single vector,
                a batch ``(n, d_model)``, ``(batch, seq, d_model)``, ...; empty
                leading dimensions are fine. It is cast to ``dtype`` and
                never written to.

        Returns:
            A new array of shape ``(..., d_model)`` and dtype ``dtype``.

        Raises:
            TypeError: if ``x`` is not real numeric data.
            ValueError: if ``x`` is 0-d, its last dimension is not ``d_model``,
                or it cannot be made into an array (a ragged list).
        """
        return self._forward(x)[1]

    def __call__(self, x: object) -> FloatArray:
        """Same as ``forward``."""
        return self._forward(x)[1]

    def forward_trace(self, x: object) -> FeedForwardTrace:
        """Like ``forward``, but return every intermediate array.

        Args:
            x: as for ``forward``.

        Returns:
            A ``FeedForwardTrace`` with ``x`` and ``y`` of shape
            ``(..., d_model)`` and ``h_pre`` and ``h`` of shape ``(..., d_ff)``.

        Raises:
            TypeError, ValueError: as for ``forward``.
        """
        cache, y = self._forward(x)
        lead = cache.lead
        self._spare = None  # the caller now holds views of xW1 and h: never overwrite them
        # The block keeps x @ W1 without b1 (see _forward_2d); add it here.
        h_pre = cache.xW1 if self._b1 is None else cache.xW1 + self._b1  # (N, d_ff)
        return FeedForwardTrace(
            x=_readonly(cache.x2.reshape(*lead, self.d_model)),  # (..., d_model)
            h_pre=_readonly(h_pre.reshape(*lead, self.d_ff)),  # (..., d_ff)
            h=_readonly(cache.h.reshape(*lead, self.d_ff)),  # (..., d_ff)
            y=y,  # (..., d_model)
        )

    def _forward(self, x: object) -> tuple[_Cache, FloatArray]:
        # A forward that fails must not leave an older pass for backward to use.
        self._cache = None
        x_arr = check_input(x, self._dtype, self.d_model, "d_model")
        lead = x_arr.shape[:-1]
        n_rows = math.prod(lead)
        x2 = x_arr.reshape(n_rows, self.d_model)  # (N, d_model), a view when possible

        # The last pass's x @ W1 and h are overwritten in place when they have
        # the right shape: only this object holds them (forward_trace drops
        # them from _spare), and it saves the allocator a round trip through
        # the kernel (page faults) for two large arrays on every call.
        spare, self._spare = self._spare, None
        if spare is not None and spare[0].shape != (n_rows, self.d_ff):
            spare = None
        # NaN and inf propagate silently (numpy's matmul would warn when an inf
        # meets an inf of the other sign).
        with np.errstate(invalid="ignore", over="ignore"):
            xW1, h, y = self._forward_2d(x2, spare)
        self._cache = _Cache(x2=x2, xW1=xW1, h=h, lead=lead)
        self._spare = (xW1, h)
        return self._cache, y.reshape(*lead, self.d_model)  # (..., d_model)

    def _forward_2d(
        self, x2: FloatArray, spare: tuple[FloatArray, FloatArray] | None
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``x @ W1``, ``h`` (N, d_ff) and ``y`` (N, d_model) for 2-D ``x2`` (N, d_model).

        ``spare``: arrays of shape (N, d_ff) to write ``x @ W1`` and ``h`` into, or None.
        """
        # Memory: x @ W1 and h are the only (N, d_ff) arrays, and backward
        # keeps both; everything else is per-block scratch or (N, d_model).
        n_rows = x2.shape[0]
        xW1: FloatArray
        h: FloatArray
        if spare is None:
            xW1 = x2 @ self._W1  # (N, d_ff)
            h = np.empty_like(xW1)  # (N, d_ff)
        else:
            xW1, h = spare
            np.matmul(x2, self._W1, out=xW1)  # (N, d_ff)
        b1, kernel = self._b1, self._activation.forward

        def bias_and_activation(start: int, stop: int) -> None:
            # Block by block, so each block of x @ W1 is still in cache when
            # the activation reads it. h_pre = x @ W1 + b1 goes to a scratch
            # block rather than back into x @ W1: memory traffic, not
            # arithmetic, bounds this loop, and the write-back would cost ~8 %.
            h_pre = _h_pre(xW1, b1, start, stop)  # (rows, d_ff)
            kernel(h_pre, h[start:stop])  # (rows, d_ff)

        # One thread: OpenBLAS's workers still spin on the other cores after
        # the matmul above, so more threads would not run any faster.
        for_each_block(bias_and_activation, n_rows, self._block_rows, parallel=False)

        y = h @ self._W2  # (N, d_model)
        if self._b2 is not None:
            y += self._b2
        return xW1, h, y

    @property
    def _block_rows(self) -> int:
        """Rows of the hidden layer per block of elementwise work."""
        return max(1, BLOCK_ELEMENTS // self.d_ff)

    # ------------------------------------------------------------ backward

    def backward(self, dy: object) -> FloatArray:
        """Backpropagate ``dy = dL/dy`` through the last forward pass.

        Sets ``grads`` to ``dL/dW1``, ``dL/db1``, ``dL/dW2``, ``dL/db2``
        and returns ``dL/dx``. Can be called again with another ``dy``: the
        forward pass is kept until the next forward.

        Args:
            dy: real array-like with the shape of the last output,
                ``(..., d_model)``; cast to ``dtype``, never written to.

        Returns:
            ``dL/dx``: a new array with the shape of the last input and dtype
            ``dtype``. NaN and inf raise nothing and warn nothing: a NaN or
            inf in a row of ``x`` or ``dy`` can make that row of ``dL/dx``, and
            the weight gradients (sums over all rows), NaN or inf; the other
            rows of ``dL/dx`` are unaffected.

        Raises:
            RuntimeError: if no forward pass has run yet, or ``dy`` does not
                have the output's shape (the message shows both).
            TypeError: if ``dy`` is not real numeric data.
            ValueError: if ``dy`` cannot be made into an array (a ragged list).
        """
        cache = self._cache
        out_shape = None if cache is None else (*cache.lead, self.d_model)
        dy_arr = check_dy(dy, out_shape, self._dtype, "block")
        assert cache is not None  # check_dy raised otherwise
        dy2 = dy_arr.reshape(cache.x2.shape[0], self.d_model)  # (N, d_model)
        # An inf can meet a zero slope (inf * 0) or an inf of the other sign
        # in a sum: nan is then the answer, without a warning.
        with np.errstate(invalid="ignore", over="ignore"):
            dx2 = self._backward(cache, dy2)  # (N, d_model)
        return dx2.reshape(*cache.lead, self.d_model)  # (..., d_model)

    def _backward(self, cache: _Cache, dy2: FloatArray) -> FloatArray:
        """dL/dx for 2-D ``dy2`` (N, d_model); sets ``grads``."""
        n_rows = cache.x2.shape[0]
        dW2 = _weight_grad(cache.h, dy2)  # (d_ff, d_model)
        db2 = dy2.sum(axis=0) if self._b2 is not None else None  # (d_model,)
        dh_pre = dy2 @ self._W2.T  # (N, d_ff): dL/dh, times act'(h_pre) below
        rows = self._block_rows
        # db1 = dh_pre summed over rows: one partial sum per block while the
        # block is in cache (a separate pass would read dh_pre from memory
        # again), then the partial sums in block order.
        with_b1 = self._b1 is not None
        n_blocks = -(-n_rows // rows) if with_b1 else 0
        partial = np.zeros((n_blocks, self.d_ff), dtype=self._dtype)  # (blocks, d_ff)
        grad_kernel, xW1, b1 = self._activation.grad, cache.xW1, self._b1

        def times_slope(start: int, stop: int) -> None:
            h_pre = _h_pre(xW1, b1, start, stop)  # (rows, d_ff)
            (slope,) = work_arrays(h_pre, 1, first=_SLOPE_SLOT)  # (rows, d_ff)
            grad_kernel(h_pre, slope)
            dh_pre[start:stop] *= slope
            if with_b1:
                np.sum(dh_pre[start:stop], axis=0, out=partial[start // rows])

        for_each_block(times_slope, n_rows, rows, parallel=False)  # as in _forward_2d
        dW1 = _weight_grad(cache.x2, dh_pre)  # (d_model, d_ff)
        db1 = partial.sum(axis=0) if with_b1 else None  # (d_ff,)
        dx = dh_pre @ self._W1.T  # (N, d_model)

        self._grads = {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}
        return dx

    def __repr__(self) -> str:
        has_b1, has_b2 = self._b1 is not None, self._b2 is not None
        bias: object = has_b1  # True or False when both agree
        if has_b1 != has_b2:
            bias = "b1 only" if has_b1 else "b2 only"
        return (
            f"FeedForward(d_model={self.d_model}, d_ff={self.d_ff}, "
            f"activation={self.activation!r}, bias={bias!r}, dtype={self._dtype})"
        )
