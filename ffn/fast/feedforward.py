"""``ffn.FeedForward`` at speed: blocked, in-place elementwise work between the two products.

Same constructor, attributes, methods and results as the reference block (``ffn.FeedForward``,
which the chapters show); ``tests/test_fast.py`` holds the two together. What changes is only
how the work is done:

- the forward pass saves ``x @ W1`` (without ``b1``) and ``h``, the only ``(N, d_ff)`` arrays;
  ``b1`` and the activation are applied block by block on small scratch arrays
  (``kernels.BLOCK_ELEMENTS``) so each block of ``x @ W1`` is still in cache when it is read;
- the next forward with as many rows writes into the same two arrays (not if a trace handed
  them out), sparing the allocator two large arrays per call;
- backward sums ``db1`` block by block while each block is in cache.
"""

from __future__ import annotations

import numpy as np

from ffn import feedforward as reference
from ffn._layer import SavedPass, forward_pass, one_thread, quiet
from ffn._validate import FloatArray
from ffn.fast.blocks import BLOCK_ELEMENTS, for_each_block, work_arrays
from ffn.fast.kernels import get_activation

__all__ = ["FeedForward"]

# work_arrays slots for h_pre and act'(h_pre) of one block, clear of the kernels' own (0-7).
_H_PRE_SLOT, _SLOPE_SLOT = 16, 17


def _h_pre(xW1: FloatArray, b1: FloatArray | None, start: int, stop: int) -> FloatArray:
    """Rows ``start:stop`` of ``h_pre = x @ W1 + b1``, in a per-thread scratch block."""
    if b1 is None:
        return xW1[start:stop]
    (h_pre,) = work_arrays(xW1[start:stop], 1, first=_H_PRE_SLOT)
    np.add(xW1[start:stop], b1, out=h_pre)
    return h_pre


def _weight_grad(a: FloatArray, b: FloatArray) -> FloatArray:
    """``a.T @ b``, the gradient of a weight matrix summed over the N rows."""
    if a.shape[0] == 1:
        # One row: an outer product, which OpenBLAS's gemm does an order of magnitude slower
        # than a broadcast multiply; with one term per entry both give the same bits.
        return np.multiply(a.T, b)
    return a.T @ b


class FeedForward(reference.FeedForward):
    """``ffn.FeedForward``, fast: the same arguments, attributes, methods and results.

    Results equal the reference block's up to rounding: see ``tests/test_fast.py`` for the
    tolerances and why (the float32 exact GELU uses a fitted erfc; sums run in other orders).
    """

    _spare: tuple[FloatArray, FloatArray] | None = None  # x @ W1 and h, for the next pass

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``y = act(x @ W1 + b1) @ W2 + b2`` for ``x`` of shape ``(..., d_model)``."""
        x2 = self._flatten(x)  # (N, d_model), our own copy
        spare, self._spare = self._spare, None
        if spare is not None and spare[0].shape != (x2.shape[0], self.d_ff):
            spare = None
        xW1, h, y = self._forward_2d(x2, spare)
        self._save_for_backward(x2, xW1, h)
        self._spare = (xW1, h)
        return self._unflatten(y)  # (..., d_model)

    def _forward_2d(self, x2: FloatArray, spare: tuple[FloatArray, FloatArray] | None
                    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """``x @ W1``, ``h`` (N, d_ff) and ``y`` (N, d_model) for rows ``x2`` (N, d_model)."""
        W1, b1, W2, b2 = self.W1, self.b1, self.W2, self.b2
        xW1: FloatArray
        h: FloatArray
        if spare is None:
            xW1 = x2 @ W1  # (N, d_ff)
            h = np.empty_like(xW1)  # (N, d_ff)
        else:
            xW1, h = spare
            np.matmul(x2, W1, out=xW1)  # (N, d_ff)
        kernel = get_activation(self.activation).forward

        def bias_and_activation(start: int, stop: int) -> None:
            # h_pre goes to a scratch block, not back into x @ W1: memory traffic, not
            # arithmetic, bounds this loop, and the write-back would cost more than it saves.
            kernel(_h_pre(xW1, b1, start, stop), h[start:stop])  # (rows, d_ff)

        # One thread: OpenBLAS's workers still spin on the other cores after the matmul above.
        for_each_block(bias_and_activation, x2.shape[0], self._block_rows, parallel=False)
        y = h @ W2  # (N, d_model)
        if b2 is not None:
            y += b2
        return xW1, h, y

    def saved_pass(self) -> SavedPass:
        """The last forward's record; its ``x @ W1`` and ``h`` are then never overwritten."""
        self._spare = None  # whoever keeps the pass holds those two arrays
        return super().saved_pass()

    @property
    def _block_rows(self) -> int:
        """Rows of the hidden layer per block of elementwise work."""
        return max(1, BLOCK_ELEMENTS // self.d_ff)

    @one_thread
    def forward_trace(self, x: object) -> reference.FeedForwardTrace:
        """Like ``forward``, but return every intermediate array."""
        y = self.forward(x)
        self._spare = None  # the caller now holds views of x @ W1 and h: never overwrite them
        x2, xW1, h = self._saved_tensors
        with np.errstate(over="ignore", invalid="ignore"):  # as in forward
            h_pre = xW1 if self.b1 is None else xW1 + self.b1  # (N, d_ff)
        x_v, h_pre_v, h_v = self._saved_views(x2, h_pre, h)
        return reference.FeedForwardTrace(x=x_v, h_pre=h_pre_v, h=h_v, y=y)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``, from ``dL/dy``."""
        dy2 = self._flatten_grad(dy)  # (N, d_model)
        x2, xW1, h = self._saved_tensors
        W1, b1, W2 = self.W1, self.b1, self.W2
        n_rows, rows = x2.shape[0], self._block_rows
        dW2 = _weight_grad(h, dy2)  # (d_ff, d_model)
        dh_pre = dy2 @ W2.T  # (N, d_ff): dL/dh, times act'(h_pre) below
        # db1: one partial sum per block while the block is in cache, then the partial sums.
        partial = np.zeros((-(-n_rows // rows), self.d_ff), dtype=self.dtype)  # (blocks, d_ff)
        grad_kernel = get_activation(self.activation).grad

        def times_slope(start: int, stop: int) -> None:
            h_pre = _h_pre(xW1, b1, start, stop)  # (rows, d_ff)
            (slope,) = work_arrays(h_pre, 1, first=_SLOPE_SLOT)  # (rows, d_ff)
            grad_kernel(h_pre, slope)
            dh_pre[start:stop] *= slope
            np.sum(dh_pre[start:stop], axis=0, out=partial[start // rows])

        for_each_block(times_slope, n_rows, rows, parallel=False)  # as in _forward_2d
        self._set_grads(W1=_weight_grad(x2, dh_pre), b1=partial.sum(axis=0), W2=dW2,
                        b2=dy2.sum(axis=0))
        return self._unflatten(dh_pre @ W1.T)  # (..., d_model)
