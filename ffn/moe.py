"""A mixture of experts (a router picks ``top_k`` of ``n_experts`` FFN blocks a row); its counts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import Layer, quiet, random_weights
from ffn._validate import FloatArray
from ffn.counting import count_flops, count_parameters
from ffn.feedforward import FeedForward
from ffn.gated import GATED_VARIANTS, GatedFeedForward

__all__ = ["Dispatch", "MixtureOfExperts", "count_moe_flops", "count_moe_parameters"]

Expert = FeedForward | GatedFeedForward


def check_top_k(top_k: object, n_experts: int) -> int:
    """``top_k`` if it is an int in ``[1, n_experts]``."""
    top_k = check.positive_int(top_k, "top_k")
    if top_k > n_experts:
        raise ValueError(f"top_k must be at most n_experts = {n_experts}, got {top_k}")
    return top_k


class Dispatch(NamedTuple):
    """Where a batch's ``top_k`` assignments go under an expert capacity."""

    capacity: int  # the most assignments one expert takes
    assigned: np.ndarray  # (n_experts,) assignments the router made to each expert
    kept: np.ndarray  # (n_experts,) assignments each expert takes, at most `capacity`
    dropped: int  # assignments over capacity: those rows skip that expert


def _kind(expert: Expert) -> str:
    """``"FeedForward('gelu')"``, ``"GatedFeedForward('swiglu')"``: what experts must share."""
    what = expert.activation if isinstance(expert, FeedForward) else expert.variant
    return f"{type(expert).__name__}({what!r})"


class MixtureOfExperts(Layer):
    """A sparse MoE layer: ``y = sum_i weight_i * expert_i(x)`` over the ``top_k`` chosen experts.

    Per row, ``p = softmax(x @ router)``; the ``top_k`` largest ``p`` (ties: the lower index)
    weight their experts, renormalised to sum 1 with ``normalize`` (as in Mixtral). ``grads``
    has ``"router"`` and ``"experts.{i}.{name}"`` (zeros for an expert no row chose);
    ``backward`` reruns each chosen expert on its rows, overwriting the expert's own last pass.

    Args:
        router: router matrix ``(d_model, n_experts)`` (the transpose of PyTorch's gate weight).
        experts: ``n_experts`` blocks of one kind (class and activation or variant), ``d_model``,
            ``d_ff`` and dtype.
        top_k: how many experts each row uses, ``1 <= top_k <= n_experts``.
        normalize: renormalise the chosen ``top_k`` probabilities to sum to 1.

    Raises:
        TypeError: for experts that are not FFN blocks, or dtypes that differ.
        ValueError: for shapes that do not fit, experts of mixed kinds or widths, a bad ``top_k``.
    """

    _caller = "moe"
    router: FloatArray  # (d_model, n_experts), a read-only copy

    def __init__(self, router: object, experts: Sequence[Expert], top_k: int = 2,
                 normalize: bool = True) -> None:
        if not isinstance(experts, (list, tuple)) or not experts:
            raise TypeError("experts must be a non-empty list or tuple, got "
                            f"{check.describe(experts)}")
        for i, e in enumerate(experts):
            if not isinstance(e, (FeedForward, GatedFeedForward)):
                raise TypeError(f"experts[{i}] must be a FeedForward or GatedFeedForward, "
                                f"got {type(e).__name__}")
            for what, mine, first in (("kind", _kind(e), _kind(experts[0])),
                                      ("d_model", e.d_model, experts[0].d_model),
                                      ("d_ff", e.d_ff, experts[0].d_ff),
                                      ("dtype", e.dtype, experts[0].dtype)):
                if mine != first:
                    error = TypeError if what == "dtype" else ValueError
                    raise error(f"experts must share one {what}: experts[0] has {first}, "
                                f"experts[{i}] has {mine}")
        w, size = check.params({"router": router}, {"router": "d_model n_experts"},
                               known={"d_model": experts[0].d_model, "n_experts": len(experts)})
        if (r := w["router"]) is not None and r.dtype != experts[0].dtype:
            raise TypeError(f"router has dtype {r.dtype} but the experts {experts[0].dtype}")
        super().__init__(experts[0].dtype, size["d_model"], size["d_model"], "d_model", w)
        self.experts: tuple[Expert, ...] = tuple(experts)
        self.d_model, self.d_ff, self.n_experts = size["d_model"], experts[0].d_ff, len(experts)
        self.top_k = check_top_k(top_k, self.n_experts)  # 1 <= top_k <= n_experts
        self.normalize = check.boolean(normalize, "normalize")

    @classmethod
    def random(cls, d_model: int, d_ff: int, n_experts: int, top_k: int = 2,
               variant: str | None = None, seed: int | np.integer[Any] | None = 0,
               dtype: DTypeLike = np.float64) -> MixtureOfExperts:
        """A random router and ``n_experts`` random experts (see ``random_weights``).

        ``variant``: None for GELU ``FeedForward`` experts (zero biases), else gated (none).
        """
        d_model, n_experts = check.positive_int(d_model, "d_model"), check.positive_int(
            n_experts, "n_experts")
        if variant is not None:
            check.choice(variant, "variant", GATED_VARIANTS)  # before drawing anything
        seeds = np.random.default_rng(check.seed(seed)).integers(2**32, size=n_experts + 1)
        (router,) = random_weights(seeds[0], dtype, (d_model, n_experts))  # (d_model, n_experts)
        experts: list[Expert] = [
            FeedForward.random(d_model, d_ff, seed=s, dtype=dtype) if variant is None
            else GatedFeedForward.random(d_model, d_ff, variant, seed=s, dtype=dtype)
            for s in seeds[1:]]
        return cls(router, experts, top_k=top_k)

    @quiet
    def _route(self, x: FloatArray) -> tuple[FloatArray, np.ndarray, FloatArray]:
        """``p``, the chosen experts and their weights for rows ``x`` ``(N, d_model)``."""
        logits = x @ self.router  # (N, n_experts)
        p = np.exp(logits - logits.max(axis=-1, keepdims=True))  # shifted: exp cannot overflow
        p /= p.sum(axis=-1, keepdims=True)  # (N, n_experts), softmax
        chosen = np.argsort(-p, axis=-1, kind="stable")[:, :self.top_k]  # (N, top_k), ties: lower
        weights = np.take_along_axis(p, chosen, axis=-1)  # (N, top_k)
        if self.normalize:
            weights = weights / weights.sum(axis=-1, keepdims=True)
        return p, chosen, weights

    def route(self, x: object) -> tuple[FloatArray, np.ndarray, FloatArray]:
        """The router's ``p`` ``(..., n_experts)``, chosen experts and weights ``(..., top_k)``."""
        x = check.layer_input(x, self._dtype, self.d_model, "d_model")
        p, chosen, weights = self._route(x.reshape(-1, self.d_model))  # rows (N, ...)
        lead = x.shape[:-1]  # sizes, not -1: N may be 0
        return (p.reshape(*lead, self.n_experts), chosen.reshape(*lead, self.top_k),
                weights.reshape(*lead, self.top_k))

    @quiet
    def forward(self, x: object) -> FloatArray:
        """``y = sum_j weight_j * expert_{chosen_j}(x)`` for ``x`` of shape ``(..., d_model)``."""
        x = self._flatten(x)  # (N, d_model)
        p, chosen, weights = self._route(x)
        y = np.zeros_like(x)  # (N, d_model)
        for i, expert in enumerate(self.experts):
            rows, slot = np.nonzero(chosen == i)  # the rows that chose expert i, and where
            if rows.size:
                y[rows] += weights[rows, slot, None] * expert.forward(x[rows])  # (n_i, d_model)
        self._save_for_backward(x, p, chosen, weights)
        return self._unflatten(y)  # (..., d_model)

    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``, from ``dL/dy``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, p, chosen, weights = self._saved_tensors
        row = np.arange(len(x))[:, None]  # (N, 1), pairs with `chosen` to index p
        dx = np.zeros_like(x)  # (N, d_model)
        dweights = np.zeros_like(weights)  # (N, top_k)
        expert_grads: dict[str, FloatArray | None] = {}
        for i, expert in enumerate(self.experts):
            rows, slot = np.nonzero(chosen == i)
            if rows.size:  # run expert i again on its rows: its own last pass may be another's
                dweights[rows, slot] = np.sum(dy[rows] * expert.forward(x[rows]), axis=-1)
                dx[rows] += expert.backward(weights[rows, slot, None] * dy[rows])
            grads = expert.grads if rows.size else {  # no row chose it: zeros
                name: None if w is None else np.zeros_like(w)
                for name, w in expert.named_parameters().items()}
            expert_grads.update({f"experts.{i}.{name}": g for name, g in grads.items()})
        if self.normalize:  # weights = g / sum(g), so dL/dg = (dL/dweights - dot) / sum(g)
            g_sum = p[row, chosen].sum(axis=-1, keepdims=True)  # (N, 1)
            dweights = (dweights - np.sum(dweights * weights, -1, keepdims=True)) / g_sum
        dp = np.zeros_like(p)  # (N, n_experts): the unchosen p get no gradient
        dp[row, chosen] = dweights
        dlogits = p * (dp - np.sum(dp * p, axis=-1, keepdims=True))  # softmax's chain rule
        self._set_grads(router=x.T @ dlogits, **expert_grads)  # (d_model, n_experts), experts'
        return self._unflatten(dx + dlogits @ self.router.T)  # dL/dx: (..., d_model)

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """``router``, then each expert's as ``experts.{i}.{name}``: the keys of ``grads``."""
        return {"router": self.router, **{f"experts.{i}.{name}": p for i, e in enumerate(
            self.experts) for name, p in e.named_parameters().items()}}

    def load_balancing_loss(self, x: object) -> float:
        """Switch Transformer's auxiliary loss as Hugging Face's Mixtral computes it.

        ``n_experts * sum_i f_i * P_i``: ``f_i`` the share of rows choosing expert ``i`` (summing
        to ``top_k``), ``P_i`` the mean ``p_i``; ``top_k`` when both are even. A ValueError
        for ``x`` without rows: the means are undefined.
        """
        p, chosen, _ = self.route(x)
        if p.size == 0:
            raise ValueError(f"x has no rows (shape {(*p.shape[:-1], self.d_model)}): the "
                             "load-balancing loss, a mean over rows, is undefined")
        p, chosen = p.reshape(-1, self.n_experts), chosen.reshape(-1, self.top_k)
        f = np.bincount(chosen.ravel(), minlength=self.n_experts) / len(p)  # (n_experts,)
        return float(self.n_experts * np.sum(f * p.mean(axis=0)))

    def dispatch(self, x: object, capacity_factor: float = 1.0) -> Dispatch:
        """What a capacity of ``ceil(capacity_factor * N * top_k / n_experts)`` per expert drops.

        First come first served, in row order; ``forward`` itself drops nothing. A TypeError or
        ValueError for a ``capacity_factor`` not a number in (0, 1e6].
        """
        factor = check.real(capacity_factor, "capacity_factor", 0.0, 1e6, high_open=False,
                            low_open=True)
        chosen = self.route(x)[1].reshape(-1, self.top_k)  # (N, top_k)
        capacity = math.ceil(factor * chosen.size / self.n_experts)
        assigned = np.bincount(chosen.ravel(), minlength=self.n_experts)  # (n_experts,)
        kept = np.minimum(assigned, capacity)  # in row order, the first `capacity` fit
        return Dispatch(capacity, assigned, kept, int(assigned.sum() - kept.sum()))

    def __repr__(self) -> str:
        return (f"MixtureOfExperts(n_experts={self.n_experts}, top_k={self.top_k}, "
                f"experts={_kind(self.experts[0])}, d_model={self.d_model}, d_ff={self.d_ff}, "
                f"normalize={self.normalize}, dtype={self.dtype})")


def count_moe_parameters(d_model: int, d_ff: int, n_experts: int, top_k: int | None = None,
                         bias: bool = True, gated: bool = False) -> int:
    """Parameters of ``n_experts`` blocks and router (``top_k <= n_experts``: a token's)."""
    n_experts = check.positive_int(n_experts, "n_experts")
    used = n_experts if top_k is None else check_top_k(top_k, n_experts)
    return used * count_parameters(d_model, d_ff, bias, gated) + d_model * n_experts


def count_moe_flops(d_model: int, d_ff: int, n_experts: int, top_k: int, n_tokens: int = 1,
                    gated: bool = False, backward: bool = False) -> int:
    """FLOPs of the router's product and of the ``top_k`` experts each token uses."""
    top_k = check_top_k(top_k, check.positive_int(n_experts, "n_experts"))
    experts = top_k * count_flops(d_model, d_ff, n_tokens, gated, backward)
    router = 2 * n_tokens * d_model * n_experts  # d_model, n_tokens checked by count_flops
    return experts + (3 * router if backward else router)
