"""The FFN as a transformer sublayer: a residual connection and a LayerNorm around it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ffn._validate import (
    FloatArray,
    check_choice,
    check_dy,
    check_input,
    describe,
)
from ffn.feedforward import FeedForward
from ffn.gated import GatedFeedForward
from ffn.layernorm import LayerNorm

__all__ = ["PLACEMENTS", "Sublayer"]

PLACEMENTS: tuple[str, ...] = ("pre", "post")
"""Valid ``placement`` values for ``ffn.Sublayer``: where the LayerNorm sits."""


def _check_rate(p: object) -> float:
    is_real = isinstance(p, (int, float, np.integer, np.floating))
    if isinstance(p, (bool, np.bool_)) or not is_real:
        raise TypeError(f"dropout must be a real number, got {describe(p)}")
    value = float(p)  # type: ignore[arg-type]  # checked just above
    if not 0.0 <= value < 1.0:  # also rejects nan
        raise ValueError(f"dropout must be in [0, 1), got {value!r}")
    return value


class Sublayer:
    """A feed-forward block with its residual connection and LayerNorm.

    ``placement="pre"`` (GPT-2, LLaMA and most models since) normalises the
    FFN's input and leaves the residual path untouched: ``x + FFN(LN(x))``.
    ``placement="post"`` (the original Transformer) normalises after the
    addition: ``LN(x + FFN(x))``.

    Dropout, if ``dropout > 0``, acts on the FFN's output just before the
    residual addition, as in the original Transformer and GPT-2, and only in
    training mode (``forward(x, training=True)``): each entry is zeroed with
    probability ``dropout`` and the kept ones are divided by ``1 - dropout``,
    so the expected output is unchanged. The masks come from
    ``np.random.default_rng(seed)``: the same seed gives the same masks.

    The sublayer runs its ``block`` and ``norm`` and relies on what they keep
    for ``backward``: do not call them on other input between ``forward`` and
    ``backward``.

    Args:
        block: a ``FeedForward`` or ``GatedFeedForward``.
        norm: a ``LayerNorm`` of the same width and dtype.
        placement: ``"pre"`` or ``"post"``.
        dropout: probability of zeroing each entry of the FFN output in
            training mode, in ``[0, 1)``.
        seed: seed for the dropout masks (an int, or ``None`` for fresh entropy).

    Raises:
        TypeError: if ``block`` or ``norm`` has the wrong type, their dtypes
            differ, ``placement`` is not a str or ``dropout`` is not a number.
        ValueError: if the widths differ, ``placement`` is unknown or
            ``dropout`` is outside ``[0, 1)``.
    """

    def __init__(
        self,
        block: FeedForward | GatedFeedForward,
        norm: LayerNorm,
        placement: str = "pre",
        dropout: float = 0.0,
        seed: int | None = 0,
    ) -> None:
        if not isinstance(block, (FeedForward, GatedFeedForward)):
            raise TypeError(
                f"block must be a FeedForward or GatedFeedForward, got {type(block).__name__}"
            )
        if not isinstance(norm, LayerNorm):
            raise TypeError(f"norm must be a LayerNorm, got {type(norm).__name__}")
        if norm.d_model != block.d_model:
            raise ValueError(
                f"norm has d_model {norm.d_model} but block has d_model {block.d_model}"
            )
        if norm.dtype != block.dtype:
            raise TypeError(
                f"norm has dtype {norm.dtype} but block has dtype {block.dtype}"
            )
        self._block = block
        self._norm = norm
        self._placement = check_choice(placement, "placement", PLACEMENTS)
        self._p = _check_rate(dropout)
        self._rng = np.random.default_rng(seed)
        self._keep: FloatArray | None = None  # mask / (1 - p) of the last training pass
        self._out_shape: tuple[int, ...] | None = None

    # ------------------------------------------------------------ attributes

    @property
    def block(self) -> FeedForward | GatedFeedForward:
        """The feed-forward block."""
        return self._block

    @property
    def norm(self) -> LayerNorm:
        """The LayerNorm."""
        return self._norm

    @property
    def placement(self) -> str:
        """``"pre"`` (``x + FFN(LN(x))``) or ``"post"`` (``LN(x + FFN(x))``)."""
        return self._placement

    @property
    def dropout(self) -> float:
        """Probability of zeroing an entry of the FFN output in training mode."""
        return self._p

    @property
    def dropout_mask(self) -> np.ndarray[Any, np.dtype[np.bool_]] | None:
        """Which FFN outputs the last forward kept (``True``), or ``None``.

        ``None`` after a forward in evaluation mode or with ``dropout=0``.
        """
        return None if self._keep is None else self._keep != 0

    @property
    def d_model(self) -> int:
        """Width of the input and output rows."""
        return self._block.d_model

    @property
    def dtype(self) -> np.dtype[np.floating[Any]]:
        """The dtype of the block and the norm."""
        return self._block.dtype

    @property
    def grads(self) -> dict[str, FloatArray | None]:
        """Gradients from the last ``backward``: the block's, then the norm's.

        The norm adds ``"gamma"`` and ``"beta"`` to the block's keys.
        """
        return {**self._block.grads, **self._norm.grads}

    # ------------------------------------------------------------ forward

    def forward(self, x: object, training: bool = False) -> FloatArray:
        """Apply the sublayer to ``x`` of shape ``(..., d_model)``. Same as ``sublayer(x)``.

        Args:
            x: real array-like of shape ``(..., d_model)``, cast to ``dtype``.
            training: apply dropout (when ``dropout > 0``); evaluation mode by default.

        Returns:
            A new array of shape ``(..., d_model)`` and dtype ``dtype``.

        Raises:
            TypeError: if ``x`` is not real numeric data or ``training`` is not a bool.
            ValueError: if ``x`` is 0-d or its last dimension is not ``d_model``.
        """
        self._out_shape = None  # a forward that fails leaves nothing for backward
        self._keep = None
        if not isinstance(training, (bool, np.bool_)):
            raise TypeError(f"training must be a bool, got {describe(training)}")
        x_arr = check_input(x, self.dtype, self.d_model, "d_model")
        if self._placement == "pre":
            y = self._dropout(self._block(self._norm(x_arr)), training)
            y += x_arr  # x + FFN(LN(x))
        else:
            z = self._dropout(self._block(x_arr), training)
            z += x_arr
            y = self._norm(z)  # LN(x + FFN(x))
        self._out_shape = x_arr.shape
        return y

    def __call__(self, x: object, training: bool = False) -> FloatArray:
        """Same as ``forward``."""
        return self.forward(x, training)

    def _dropout(self, f: FloatArray, training: bool) -> FloatArray:
        if not training or self._p == 0.0:
            return f
        keep = self._rng.random(f.shape) >= self._p  # (..., d_model)
        self._keep = keep.astype(self.dtype) / np.asarray(1.0 - self._p, self.dtype)
        return f * self._keep

    # ------------------------------------------------------------ backward

    def backward(self, dy: object) -> FloatArray:
        """Backpropagate ``dy = dL/dy`` through the last forward pass.

        Pre-norm: ``dx = dy + LN'(FFN'(dy))``: the residual passes ``dy``
        through unchanged. Post-norm: ``dz = LN'(dy)``, then
        ``dx = dz + FFN'(dz)``. Dropout's mask multiplies the gradient that
        enters the FFN. Sets the block's and the norm's ``grads``.

        Args:
            dy: real array-like with the shape of the last output.

        Returns:
            ``dL/dx``, a new array with the shape of the last input.

        Raises:
            RuntimeError: if no forward pass has run yet, or ``dy`` does not
                have the output's shape.
            TypeError: if ``dy`` is not real numeric data.
        """
        dy_arr = check_dy(dy, self._out_shape, self.dtype, "sublayer")
        if self._placement == "pre":
            df = dy_arr if self._keep is None else dy_arr * self._keep
            dx = self._norm.backward(self._block.backward(df))
            dx += dy_arr
        else:
            dz = self._norm.backward(dy_arr)
            df = dz if self._keep is None else dz * self._keep
            dx = self._block.backward(df)
            dx += dz
        return dx

    def __repr__(self) -> str:
        return (
            f"Sublayer({self._block!r}, {self._norm!r}, "
            f"placement={self._placement!r}, dropout={self._p!r})"
        )

