"""Attention and the FFN side by side on one normalised input (GPT-J, GPT-NeoX, PaLM)."""

from __future__ import annotations

from ffn._layer import Layer, forward_pass, one_thread, quiet
from ffn._validate import FloatArray
from ffn.feedforward import FeedForward
from ffn.gated import GatedFeedForward
from ffn.layernorm import LayerNorm
from ffn.linear import Linear
from ffn.rmsnorm import RMSNorm

Branch = Linear | FeedForward | GatedFeedForward
Norm = LayerNorm | RMSNorm


class ParallelBlock(Layer):
    """A whole pre-norm layer, parallel: ``y = x + attn(LN(x)) + FFN(LN(x))``.

    The serial layer feeds the FFN ``LN(h)``, ``h = x + attn(LN(x))``; here both branches read
    the same ``x``, so one norm can serve both (GPT-J's ``ln_1``, PaLM) and their first matrix
    products can run as one. GPT-NeoX (``use_parallel_residual``) keeps two norms of the same
    ``x``: pass the second as ``ffn_norm``. ``ffn`` has no attention: any layer from
    ``(..., d_model)`` to ``(..., d_model)`` stands in for it (a ``Linear``, a ``FeedForward``).

    Args:
        attention: a ``Linear``, ``FeedForward`` or ``GatedFeedForward``, ``d_model`` to
            ``d_model``.
        block: the FFN, a ``FeedForward`` or ``GatedFeedForward``.
        norm: a ``LayerNorm`` or ``RMSNorm``; attention's, and the FFN's too without ``ffn_norm``.
        ffn_norm: None (one norm), or the FFN's own ``LayerNorm`` or ``RMSNorm``.

    Raises:
        TypeError, ValueError: for a wrong type, a width that differs, or dtypes that differ.
    """

    _caller = "block"

    def __init__(self, attention: Branch, block: FeedForward | GatedFeedForward, norm: Norm,
                 ffn_norm: Norm | None = None) -> None:
        if not isinstance(attention, (Linear, FeedForward, GatedFeedForward)):
            raise TypeError(f"attention must be a Linear, FeedForward or GatedFeedForward "
                            f"(a stand-in), got {type(attention).__name__}")
        if not isinstance(block, (FeedForward, GatedFeedForward)):
            raise TypeError(f"block must be a FeedForward or GatedFeedForward, "
                            f"got {type(block).__name__}")
        for name, n in (("norm", norm), ("ffn_norm", ffn_norm)):
            if not (isinstance(n, (LayerNorm, RMSNorm)) or (n is None and name == "ffn_norm")):
                raise TypeError(f"{name} must be a LayerNorm or RMSNorm, got {type(n).__name__}")
        if attention is block:
            raise ValueError("attention and block must be two layers, not one object twice: a "
                             "layer holds one pass at a time")
        if ffn_norm is norm:
            raise ValueError("ffn_norm must be a second norm, not norm itself: pass "
                             "ffn_norm=None for one norm shared by both branches")
        d_model = block.d_model
        parts = {"attention": attention, "norm": norm, "ffn_norm": ffn_norm}
        for name, part in parts.items():
            if part is None:
                continue
            d_in, d_out = part.d_in, part.d_out
            if (d_in, d_out) != (d_model, d_model):
                raise ValueError(f"{name} maps {d_in} to {d_out} features but block has d_model "
                                 f"{d_model}: both must be d_model")
            if part.dtype != block.dtype:
                raise TypeError(f"{name} has dtype {part.dtype} but block has dtype {block.dtype}")
        self.attention, self.block, self.norm, self.ffn_norm = attention, block, norm, ffn_norm
        super().__init__(block.dtype, d_model, d_model, "d_model", {})
        self.d_model = d_model

    def _parts(self) -> dict[str, Layer]:
        parts = {"attention": self.attention, "ffn": self.block, "norm": self.norm,
                 "ffn_norm": self.ffn_norm}
        return {name: part for name, part in parts.items() if part is not None}

    @property
    def grads(self) -> dict[str, FloatArray | None]:
        """Gradients of the last ``backward``, named ``"attention.W"``, ``"ffn.W1"``, ..."""
        return {f"{name}.{k}": g for name, part in self._parts().items()
                for k, g in part.grads.items()}

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """Every part's parameters, named as in ``grads``."""
        return {f"{name}.{k}": p for name, part in self._parts().items()
                for k, p in part.named_parameters().items()}

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``x + attn(LN(x)) + FFN(LN(x))`` (``FFN(LN2(x))`` with ``ffn_norm``)."""
        x = self._flatten(x)  # (N, d_model)
        x_norm = self.norm(x)  # (N, d_model)
        passes = {"norm": self.norm.saved_pass()}  # each part's own pass, for its backward
        x_ffn = x_norm  # (N, d_model)
        if self.ffn_norm is not None:
            x_ffn = self.ffn_norm(x)
            passes["ffn_norm"] = self.ffn_norm.saved_pass()
        attn = self.attention(x_norm)  # (N, d_model)
        passes["attention"] = self.attention.saved_pass()
        ffn_out = self.block(x_ffn)  # (N, d_model)
        passes["ffn"] = self.block.saved_pass()
        self._save_for_backward(passes)
        return self._unflatten(x + attn + ffn_out)  # (..., d_model)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets every part's ``grads``, returns ``dL/dx``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        (passes,) = self._saved_tensors  # each part's pass: a direct call since changes nothing
        d_attn = self.attention.backward_of(passes["attention"], dy)  # (N, d_model)
        d_ffn = self.block.backward_of(passes["ffn"], dy)  # (N, d_model)
        if self.ffn_norm is None:  # one norm feeds both branches: their gradients add up first
            dx = dy + self.norm.backward_of(passes["norm"], d_attn + d_ffn)
        else:
            dx = (dy + self.norm.backward_of(passes["norm"], d_attn)
                  + self.ffn_norm.backward_of(passes["ffn_norm"], d_ffn))
        return self._unflatten(dx)  # (..., d_model)

    def __repr__(self) -> str:
        second = "" if self.ffn_norm is None else f", ffn_norm={self.ffn_norm!r}"
        return f"ParallelBlock({self.attention!r}, {self.block!r}, {self.norm!r}{second})"
