"""The FFN as a transformer sublayer: a residual connection and a norm around it."""

from __future__ import annotations

from typing import Any

import numpy as np

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, quiet
from ffn._validate import FloatArray
from ffn.feedforward import FeedForward
from ffn.gated import GatedFeedForward
from ffn.layernorm import LayerNorm
from ffn.rmsnorm import RMSNorm

PLACEMENTS: tuple[str, ...] = ("pre", "post")
"""Valid ``placement`` values for ``ffn.Sublayer``: where the norm sits."""


class Sublayer(Layer):
    """A feed-forward block with its residual connection and its norm (LayerNorm or RMSNorm).

    ``"pre"`` (GPT-2; LLaMA with RMSNorm): ``x + FFN(LN(x))``; ``"post"`` (the original
    Transformer): ``LN(x + FFN(x))``. Dropout (training only) zeroes FFN outputs with
    probability ``dropout`` and scales the rest by ``1 / (1 - dropout)``. Its passes run the
    block's and the norm's (the forward keeps their saved passes for its backward, so calling
    them directly in between changes nothing).

    Args:
        block: a ``FeedForward`` or ``GatedFeedForward``.
        norm: a ``LayerNorm`` or ``RMSNorm`` of the block's width and dtype.
        placement: ``"pre"`` or ``"post"``.
        dropout: probability in ``[0, 1)``.
        seed: for the dropout masks, an int >= 0, or None for fresh entropy.

    Raises:
        TypeError, ValueError: for a wrong type, width, dtype, placement, rate or seed.
    """

    _caller = "sublayer"

    def __init__(self, block: FeedForward | GatedFeedForward, norm: LayerNorm | RMSNorm,
                 placement: str = "pre", dropout: float = 0.0, seed: int | None = 0) -> None:
        if not isinstance(block, (FeedForward, GatedFeedForward)):
            raise TypeError(f"block must be a FeedForward or GatedFeedForward, "
                            f"got {type(block).__name__}")
        if not isinstance(norm, (LayerNorm, RMSNorm)):
            raise TypeError(f"norm must be a LayerNorm or RMSNorm, got {type(norm).__name__}")
        if norm.d_model != block.d_model:
            raise ValueError(f"norm has d_model {norm.d_model} but block has d_model "
                             f"{block.d_model}")
        if norm.dtype != block.dtype:
            raise TypeError(f"norm has dtype {norm.dtype} but block has dtype {block.dtype}")
        self.block, self.norm = block, norm
        self.placement = check.choice(placement, "placement", PLACEMENTS)
        self.dropout = check.real(dropout, "dropout", 0.0, 1.0, high_open=True)
        self._rng = np.random.default_rng(check.seed(seed))
        super().__init__(block.dtype, block.d_model, block.d_model, "d_model", {})
        self.d_model = block.d_model

    @property
    def grads(self) -> dict[str, FloatArray | None]:
        """Gradients of the last ``backward``: the block's, then the norm's (gamma, beta)."""
        return {**self.block.grads, **self.norm.grads}

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """The block's parameters, then the norm's (``gamma``, ``beta``): the keys of ``grads``."""
        return {**self.block.named_parameters(), **self.norm.named_parameters()}

    @property
    def dropout_mask(self) -> np.ndarray[Any, np.dtype[np.bool_]] | None:
        """Which FFN outputs the last forward kept, or None (evaluation mode, or no dropout)."""
        keep = self._saved_tensors[0] if self._saved_tensors else None  # (N, d_model) or None
        return None if keep is None else keep != 0

    @forward_pass
    @quiet
    def forward(self, x: object, training: bool = False) -> FloatArray:
        """``x + FFN(LN(x))`` (pre) or ``LN(x + FFN(x))`` (post), for ``(..., d_model)``."""
        training = check.boolean(training, "training")
        x = self._flatten(x)  # (N, d_model)
        keep = self._dropout_keep(x.shape) if training else None  # (N, d_model) or None
        y: FloatArray
        if self.placement == "pre":
            x_norm = self.norm(x)  # (N, d_model)
            norm_pass = self.norm.saved_pass()
            y = x + self._drop(self.block(x_norm), keep)  # (N, d_model)
            block_pass = self.block.saved_pass()
        else:
            z = x + self._drop(self.block(x), keep)  # (N, d_model)
            block_pass = self.block.saved_pass()
            y = self.norm(z)
            norm_pass = self.norm.saved_pass()
        self._save_for_backward(keep, block_pass, norm_pass)  # the parts' own passes
        return self._unflatten(y)  # (..., d_model)

    def _dropout_keep(self, shape: tuple[int, ...]) -> FloatArray | None:
        """The kept entries as 1 / (1 - p), the dropped ones as 0; None without dropout."""
        if self.dropout == 0.0:
            return None
        kept = self._rng.random(shape) >= self.dropout
        return kept.astype(self.dtype) / np.asarray(1.0 - self.dropout, self.dtype)

    @staticmethod
    def _drop(f: FloatArray, keep: FloatArray | None) -> FloatArray:  # dropout, if any
        return f if keep is None else f * keep

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets the block's and norm's ``grads``, returns dL/dx."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        # keep: None without dropout; the block's and the norm's passes of this forward, which
        # a direct call since has not changed
        keep, block_pass, norm_pass = self._saved_tensors
        if self.placement == "pre":  # the residual passes dy on unchanged
            dh = self.block.backward_of(block_pass, self._drop(dy, keep))  # (N, d_model)
            dx = dy + self.norm.backward_of(norm_pass, dh)
        else:
            dz = self.norm.backward_of(norm_pass, dy)  # (N, d_model)
            dx = dz + self.block.backward_of(block_pass, self._drop(dz, keep))
        return self._unflatten(dx)  # (..., d_model)

    def __repr__(self) -> str:
        return (f"Sublayer({self.block!r}, {self.norm!r}, placement={self.placement!r}, "
                f"dropout={self.dropout!r})")
