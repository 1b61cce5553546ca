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
    block's and the norm's (``backward`` runs their forwards again on its own pass's input, so
    calling them directly in between changes nothing).

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
        saved = self._saved_tensors  # (x,), or (x, keep) from a pass with dropout
        return saved[1] != 0 if len(saved) == 2 else None

    @forward_pass
    @quiet
    def forward(self, x: object, training: bool = False) -> FloatArray:
        """``x + FFN(LN(x))`` (pre) or ``LN(x + FFN(x))`` (post), for ``(..., d_model)``."""
        training = check.boolean(training, "training")
        x = self._flatten(x)  # (N, d_model)
        keep = self._dropout_keep(x.shape) if training else None  # (N, d_model) or None
        y = self._run(x, keep)  # (N, d_model)
        self._save_for_backward(x, *(() if keep is None else (keep,)))
        return self._unflatten(y)  # (..., d_model)

    def _run(self, x: FloatArray, keep: FloatArray | None) -> FloatArray:
        """The sublayer on rows ``x`` ``(N, d_model)``, by the block's and the norm's forwards."""
        if self.placement == "pre":
            return x + self._drop(self.block(self.norm(x)), keep)
        return self.norm(x + self._drop(self.block(x), keep))

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
        x, *dropout = self._saved_tensors  # (N, d_model), and keep from a pass with dropout
        keep = dropout[0] if dropout else None
        # The block's and the norm's backward follow their own last forward, which a direct
        # call may have changed since ours: run them again on this pass's input.
        self._run(x, keep)
        if self.placement == "pre":  # the residual passes dy on unchanged
            dx = dy + self.norm.backward(self.block.backward(self._drop(dy, keep)))
        else:
            dz = self.norm.backward(dy)
            dx = dz + self.block.backward(self._drop(dz, keep))
        return self._unflatten(dx)  # (..., d_model)

    def __repr__(self) -> str:
        return (f"Sublayer({self.block!r}, {self.norm!r}, placement={self.placement!r}, "
                f"dropout={self.dropout!r})")
