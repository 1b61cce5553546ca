"""SmolLM2-135M as a stack of ``ffn`` layers: read or replace what each layer's FFN and
attention compute.

Each of the 30 layers is pre-norm: ``x += attention(attn_norm(x))``, then
``x += ffn(ffn_norm(x))``, the FFN ``ffn.GatedFeedForward`` (SwiGLU) and the norms
``ffn.RMSNorm``. The logits read the last stream through a final RMSNorm and the token
embedding again (tied: ``logits = norm(x) @ E.T``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._validate import FloatArray
from ffn.gated import GatedFeedForward
from ffn.rmsnorm import RMSNorm
from ffn.smollm2.attention import causal_attention, rope_angles
from ffn.smollm2.gguf_file import Config

SITES: tuple[str, ...] = ("attn_out", "ffn_in", "ffn_hidden", "ffn_out")
"""What a run records and a patch may replace, per layer, in the order computed:
``attn_out`` attention's output ``(n, d_model)``, added to the stream; ``ffn_in`` the FFN's
input, ``ffn_norm(x)``; ``ffn_hidden`` its SwiGLU hidden values ``h = silu(x W) * (x V)``
``(n, d_ff)``; ``ffn_out`` its output ``h W2`` ``(n, d_model)``, added to the stream."""

Patch = Callable[[FloatArray], Any] | float | FloatArray
"""A replacement: a function of the computed array, or a value (broadcast to its shape)."""


@dataclass(frozen=True, eq=False)
class DecoderLayer:
    """One layer's weights: attention's, the FFN (an ``ffn`` block) and the two norms."""

    attn_norm: RMSNorm
    Wq: FloatArray  # (d_model, n_heads * head_dim)
    Wk: FloatArray  # (d_model, n_kv_heads * head_dim)
    Wv: FloatArray  # (d_model, n_kv_heads * head_dim)
    Wo: FloatArray  # (n_heads * head_dim, d_model)
    ffn_norm: RMSNorm
    ffn: GatedFeedForward  # W (d_model, d_ff), V (d_model, d_ff), W2 (d_ff, d_model)


@dataclass(frozen=True, eq=False)
class Run:
    """One forward pass: the logits, and each site's array per layer (``run.ffn_out[12]``)."""

    tokens: tuple[int, ...]
    logits: FloatArray  # (n, vocab_size): the next-token logits after each token
    attn_out: list[FloatArray] = field(default_factory=list)  # n_layers arrays (n, d_model)
    ffn_in: list[FloatArray] = field(default_factory=list)  # (n, d_model) each
    ffn_hidden: list[FloatArray] = field(default_factory=list)  # (n, d_ff) each
    ffn_out: list[FloatArray] = field(default_factory=list)  # (n, d_model) each

    def probabilities(self) -> FloatArray:
        """The next-token distribution after the last token, ``(vocab_size,)``, in float64."""
        z = self.logits[-1].astype(np.float64)  # (vocab_size,)
        e = np.exp(z - z.max())
        p: FloatArray = e / e.sum()
        return p


class SmolLM2:
    """The decoder over given weights; ``load()`` builds it from the installed GGUF.

    ``model(tokens)`` is the logits ``(n, vocab_size)``; ``model.run(tokens, patch)`` records
    and replaces what each layer computes (``SITES``). A model runs one pass at a time: give
    each thread its own (its ``ffn`` layers hold their last pass).

    Args:
        config: the sizes (``ffn.smollm2.Config``).
        weights: float arrays by GGUF name (``token_embd.weight``, ``blk.0.ffn_up.weight``...)
            in ffn's orientation (``Config.shapes``).
        tokenizer: a ``tokenizers.Tokenizer``, or None (then ``encode``/``decode`` refuse).
        dtype: float32 or float64: weights, activations and logits.
    """

    def __init__(self, config: Config, weights: Mapping[str, FloatArray], tokenizer: Any = None,
                 dtype: DTypeLike = np.float32) -> None:
        self.config = config
        self.dtype = check.float_dtype(dtype)
        self.tokenizer = tokenizer

        def w(name: str) -> FloatArray:
            array = np.asarray(weights[name])
            cast = array if array.dtype == self.dtype else array.astype(self.dtype)
            cast.flags.writeable = False
            return cast

        c = config
        self.embedding = w("token_embd.weight")  # (vocab_size, d_model), also the unembedding
        self.norm = RMSNorm(c.d_model, c.rms_eps, w("output_norm.weight"))
        self.layers = tuple(DecoderLayer(
            attn_norm=RMSNorm(c.d_model, c.rms_eps, w(f"blk.{i}.attn_norm.weight")),
            Wq=w(f"blk.{i}.attn_q.weight"), Wk=w(f"blk.{i}.attn_k.weight"),
            Wv=w(f"blk.{i}.attn_v.weight"), Wo=w(f"blk.{i}.attn_output.weight"),
            ffn_norm=RMSNorm(c.d_model, c.rms_eps, w(f"blk.{i}.ffn_norm.weight")),
            ffn=GatedFeedForward(w(f"blk.{i}.ffn_gate.weight"), w(f"blk.{i}.ffn_up.weight"),
                                 w(f"blk.{i}.ffn_down.weight"), variant="swiglu"))
            for i in range(c.n_layers))

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (no token is added in front)."""
        ids: list[int] = self._tokenizer().encode(check.text(text, "text")).ids
        return ids

    def decode(self, tokens: Sequence[int]) -> str:
        """The text of token ids ``tokens``."""
        text: str = self._tokenizer().decode(list(self.check_tokens(tokens)),
                                            skip_special_tokens=False)
        return text

    def __call__(self, tokens: Sequence[int]) -> FloatArray:
        """The logits ``(n, vocab_size)`` after each of the ``n`` tokens."""
        return self.run(tokens, record=False).logits

    def run(self, tokens: Sequence[int], patch: Mapping[tuple[str, int], Patch] | None = None,
            record: bool = True) -> Run:
        """A forward pass over ``tokens``, each ``(site, layer)`` of ``patch`` replaced.

        ``patch={("ffn_out", 12): 0.0}`` zeroes layer 12's FFN output;
        ``{("ffn_hidden", 3): f}`` passes layer 3's hidden values through ``f`` before ``W2``.
        ``record``: keep every site's array in the ``Run`` (after its patch).
        """
        ids = self.check_tokens(tokens)
        patches = self._check_patch(patch)
        c = self.config
        out = Run(tokens=tuple(int(t) for t in ids), logits=np.empty((0, 0), self.dtype))

        def site(name: str, i: int, value: FloatArray) -> FloatArray:
            if (name, i) in patches:
                value = self._patched(name, i, value, patches[(name, i)])
            if record:
                value.flags.writeable = False
                getattr(out, name).append(value)
            return value

        cos, sin = rope_angles(len(ids), c.head_dim, c.rope_theta, self.dtype)  # (n, head_dim)
        x = np.array(self.embedding[ids])  # (n, d_model): the residual stream
        for i, layer in enumerate(self.layers):
            a = causal_attention(layer.attn_norm(x), layer.Wq, layer.Wk, layer.Wv, layer.Wo,
                                 c.n_heads, c.n_kv_heads, cos, sin)  # (n, d_model)
            x = x + site("attn_out", i, a)
            u = site("ffn_in", i, layer.ffn_norm(x))  # (n, d_model)
            y: FloatArray
            if ("ffn_hidden", i) in patches or record:
                h = site("ffn_hidden", i, np.array(layer.ffn.forward_trace(u).h))  # (n, d_ff)
                y = h @ layer.ffn.W2  # (n, d_model): the block's own W2 (no bias in LLaMA)
            else:
                y = layer.ffn(u)  # (n, d_model)
            x = x + site("ffn_out", i, y)
        logits = self.norm(x) @ self.embedding.T  # (n, vocab_size): the tied unembedding
        object.__setattr__(out, "logits", logits)
        return out

    def check_tokens(self, tokens: object) -> np.ndarray[Any, np.dtype[np.intp]]:
        """``tokens`` as a 1-D int array; a TypeError or ValueError naming ``tokens`` for an
        empty prompt, one longer than the context, or an id out of the vocabulary."""
        if isinstance(tokens, str):
            raise TypeError("tokens must be token ids, got a str: use model.encode(text)")
        array = np.asarray(tokens)
        if array.dtype == object or not (array.dtype.kind in "iu" or array.size == 0):
            raise TypeError(f"tokens must be a sequence of ints, got {check.describe(tokens)}")
        if array.ndim != 1:
            raise ValueError(f"tokens must be one sequence (1-D), got shape {array.shape}")
        if array.size == 0:
            raise ValueError("tokens is empty: give at least one token")
        n, limit = array.size, self.config.context_length
        if n > limit:
            raise ValueError(f"tokens has {n} tokens, longer than the context of {limit}")
        bad = np.flatnonzero((array < 0) | (array >= self.config.vocab_size))
        if bad.size:
            raise ValueError(f"tokens[{bad[0]}] = {array[bad[0]]} is no token id: ids run from 0 "
                             f"to {self.config.vocab_size - 1}")
        return array.astype(np.intp)

    def _check_patch(self, patch: object) -> dict[tuple[str, int], Patch]:
        if patch is None:
            return {}
        if not isinstance(patch, Mapping):
            raise TypeError(f"patch must be a dict {{(site, layer): value}}, got "
                            f"{check.describe(patch)}")
        for key in patch:
            ok = (isinstance(key, tuple) and len(key) == 2 and key[0] in SITES
                  and isinstance(key[1], int) and not isinstance(key[1], bool)
                  and 0 <= key[1] < self.config.n_layers)
            if not ok:
                raise ValueError(f"patch key {key!r} must be (site, layer): a site of {SITES} "
                                 f"and a layer from 0 to {self.config.n_layers - 1}")
        return dict(patch)

    def _patched(self, name: str, i: int, value: FloatArray, patch: Patch) -> FloatArray:
        new = patch(value) if callable(patch) else patch
        try:
            array = np.broadcast_to(np.asarray(new, dtype=self.dtype), value.shape)
        except (ValueError, TypeError) as error:
            raise ValueError(f"patch ({name!r}, {i}) must give an array of shape {value.shape} "
                             f"(or one that broadcasts to it): {error}") from None
        return np.array(array)  # (n, width): a copy the pass owns

    def _tokenizer(self) -> Any:
        if self.tokenizer is None:
            raise ValueError("this model has no tokenizer: build it with ffn.smollm2.load()")
        return self.tokenizer

    def __repr__(self) -> str:
        c = self.config
        return (f"SmolLM2(n_layers={c.n_layers}, d_model={c.d_model}, d_ff={c.d_ff}, "
                f"n_heads={c.n_heads}, n_kv_heads={c.n_kv_heads}, vocab_size={c.vocab_size}, "
                f"dtype={self.dtype})")
