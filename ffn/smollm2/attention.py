"""Rotary positions (RoPE) and grouped-query causal attention: the rest of a LLaMA decoder layer.

As small as attention can be: one sequence, no cache, no batch. Heads follow Hugging Face's
``LlamaAttention``: RoPE rotates the two halves of each head (``rotate_half``), and query head
``j`` reads key-value head ``j // (n_heads // n_kv_heads)``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import DTypeLike
from scipy.special import softmax  # type: ignore[import-untyped, unused-ignore]

from ffn._validate import FloatArray


def rope_angles(n_tokens: int, head_dim: int, theta: float,
                dtype: DTypeLike = np.float64) -> tuple[FloatArray, FloatArray]:
    """``cos`` and ``sin`` of position ``p`` times ``theta ** (-2i / head_dim)``, each
    ``(n_tokens, head_dim)``: frequency ``i`` fills column ``i`` and ``i + head_dim / 2``.

    Formed in float64, then rounded once to ``dtype``.
    """
    inv_freq = theta ** (-np.arange(0, head_dim, 2) / head_dim)  # (head_dim / 2,)
    angles = np.arange(n_tokens)[:, None] * inv_freq  # (n_tokens, head_dim / 2)
    angles = np.concatenate([angles, angles], axis=-1)  # (n_tokens, head_dim)
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def rope(x: FloatArray, cos: FloatArray, sin: FloatArray) -> FloatArray:
    """Rotate each pair ``(x[i], x[i + head_dim / 2])`` of ``x`` ``(..., n_tokens, head_dim)``
    by its angle: ``x * cos + rotate_half(x) * sin``."""
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)  # (..., n, head_dim)
    out: FloatArray = x * cos + rotated * sin
    return out


def causal_attention(x: FloatArray, Wq: FloatArray, Wk: FloatArray, Wv: FloatArray,
                     Wo: FloatArray, n_heads: int, n_kv_heads: int, cos: FloatArray,
                     sin: FloatArray) -> FloatArray:
    """Grouped-query causal self-attention of the rows of ``x`` ``(n, d_model)``.

    ``Wq`` is ``(d_model, n_heads * head_dim)``, ``Wk`` and ``Wv`` ``(d_model, n_kv_heads *
    head_dim)``, ``Wo`` ``(n_heads * head_dim, d_model)``; ``cos``, ``sin`` from ``rope_angles``.
    Token ``t`` attends to tokens ``0..t``. Returns ``(n, d_model)``.
    """
    n = x.shape[0]
    head_dim = Wq.shape[1] // n_heads
    q = (x @ Wq).reshape(n, n_heads, head_dim).transpose(1, 0, 2)  # (H, n, head_dim)
    k = (x @ Wk).reshape(n, n_kv_heads, head_dim).transpose(1, 0, 2)  # (H_kv, n, head_dim)
    v = (x @ Wv).reshape(n, n_kv_heads, head_dim).transpose(1, 0, 2)  # (H_kv, n, head_dim)
    group = n_heads // n_kv_heads  # query heads that share one key-value head
    q_rot = rope(q, cos, sin)  # (H, n, head_dim)
    k_rot = np.repeat(rope(k, cos, sin), group, axis=0)  # (H, n, head_dim): head j reads j // group
    v_all = np.repeat(v, group, axis=0)  # (H, n, head_dim)
    scores = q_rot @ k_rot.transpose(0, 2, 1) / x.dtype.type(math.sqrt(head_dim))  # (H, n, n)
    future = np.triu(np.ones((n, n), dtype=bool), k=1)  # (n, n): key after query
    weights = softmax(np.where(future, -np.inf, scores), axis=-1)  # (H, n, n)
    heads = (weights @ v_all).transpose(1, 0, 2).reshape(n, n_heads * head_dim)  # (n, H * head_dim)
    out: FloatArray = heads @ Wo  # (n, d_model)
    return out
