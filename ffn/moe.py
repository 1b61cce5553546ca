"""A mixture of experts (a router picks ``top_k`` of ``n_experts`` FFN blocks a row); its counts.

Mixtral's router by default; DeepSeek-V3's with ``score="sigmoid"``, a choice ``bias``, groups,
a ``scale`` and ``shared_experts``. The 2025 routers reuse its steps: ``RouterBiasMoE``
(``ffn/router_bias.py``) overrides ``_logits`` and ``_router_grads`` (a bias inside the logits,
and its gradient); ``InputScaledMoE`` (``ffn/input_scaled.py``) overrides ``forward`` and
``backward`` and calls ``_route`` and ``_router_backward``, so ``_logits`` and
``_router_grads``; ``GatedSharedMoE`` (``ffn/shared_gate.py``) wraps a ``MixtureOfExperts``.
``load_balancing_grad`` returns ``x.T @ dlogits``, the gradient for ``router`` alone, not
through ``_router_grads``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, quiet, random_weights, readonly_copy
from ffn._validate import FloatArray
from ffn.counting import _block_args, _flop_args, _flops, _parameters
from ffn.feedforward import FeedForward
from ffn.gated import GATED_VARIANTS, GatedFeedForward

__all__ = ["Dispatch", "MixtureOfExperts", "count_moe_flops", "count_moe_parameters"]

Expert = FeedForward | GatedFeedForward
SCORES = ("softmax", "sigmoid")  # how the router turns logits into scores


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
    """A sparse MoE layer: ``y = sum_i weight_i * expert_i(x) + sum_j shared_j(x)``.

    Per row, scores ``p = softmax(x @ router)`` (Mixtral) or ``sigmoid(x @ router)``
    (DeepSeek-V3). The experts are chosen by ``p + bias``: with ``n_groups > 1`` only among the
    ``top_groups`` groups whose two best biased scores sum highest, then the ``top_k`` best
    (ties: the lower index). Their weights are their unbiased ``p``, renormalised to sum 1 with
    ``normalize``, times ``scale``. Without a bias the choice compares the logits (both scores
    keep their order) and groups compare ``log(p_a + p_b)``, and the renormalised weights are a
    softmax of the chosen ``log p``: logits near -800, where every sigmoid underflows to 0,
    still choose and weigh right. With a bias the choice compares ``p + bias`` in floating
    point, where scores saturate: sigmoid is 1.0 from logits of about 37 (float32: 17) and 0
    below about -710 (float32: -89), and such saturated scores tie (the lower index wins).
    Shared experts run on every row with weight 1. ``grads`` has
    ``"router"``, ``"experts.{i}.{name}"`` (zeros for an expert no row chose) and
    ``"shared_experts.{j}.{name}"``; the bias is no parameter and gets none. ``backward`` reruns
    each expert on its rows, overwriting the expert's own last pass.

    Args:
        router: router matrix ``(d_model, n_experts)`` (the transpose of PyTorch's gate weight).
        experts: ``n_experts`` blocks of one kind (class and activation or variant), ``d_model``,
            ``d_ff`` and dtype.
        top_k: how many experts each row uses, ``1 <= top_k <= n_experts``.
        normalize: renormalise the chosen ``top_k`` scores to sum to 1.
        score: ``"softmax"`` or ``"sigmoid"``, the router's scores.
        bias: ``(n_experts,)`` added to the scores to choose experts, never to weigh them
            (DeepSeek-V3's balancing without an auxiliary loss); None: zeros.
        n_groups: equal groups of consecutive experts, at least 2 experts each when above 1.
        top_groups: how many groups a row may choose from, ``1 <= top_groups <= n_groups``.
        scale: the routed experts' weights are multiplied by it (DeepSeek-V3: 2.5).
        shared_experts: FFN blocks of the same ``d_model`` and dtype (any kind and width) that
            every row uses.

    Raises:
        TypeError: for experts that are not FFN blocks, or dtypes that differ.
        ValueError: for shapes that do not fit, experts of mixed kinds or widths, a bad
            ``top_k``, groups that do not divide the experts or hold too few for ``top_k``.
    """

    _caller = "moe"
    router: FloatArray  # (d_model, n_experts), a read-only copy
    bias: FloatArray | None  # (n_experts,), a read-only copy: only for choosing
    experts: tuple[Expert, ...]
    shared_experts: tuple[Expert, ...]

    def __init__(self, router: object, experts: Sequence[Expert], top_k: int = 2,
                 normalize: bool = True, *, score: str = "softmax", bias: object = None,
                 n_groups: int = 1, top_groups: int = 1, scale: float = 1.0,
                 shared_experts: Sequence[Expert] = ()) -> None:
        (router, experts, top_k, normalize, score, bias, n_groups, top_groups, scale,
         shared_experts) = _checked(router, experts, top_k, normalize, score, bias, n_groups,
                                    top_groups, scale, shared_experts)
        d_model = experts[0].d_model
        super().__init__(experts[0].dtype, d_model, d_model, "d_model", {"router": router})
        self.experts, self.shared_experts = experts, shared_experts
        self.d_model, self.d_ff, self.n_experts = d_model, experts[0].d_ff, len(experts)
        self.top_k, self.normalize, self.score, self.scale = top_k, normalize, score, scale
        self.bias = bias
        self.n_groups, self.top_groups = n_groups, top_groups

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
        """``p``, the chosen experts and their weights before ``scale`` (``share``), for rows
        ``x`` ``(N, d_model)``."""
        logits = self._logits(x)  # (N, n_experts)
        p = _softmax(logits) if self.score == "softmax" else \
            1.0 / (1.0 + np.exp(-logits))  # (N, n_experts), sigmoid; exp(710) = inf gives 0
        log_p = self._log_scores(logits)  # log p (softmax: plus a constant a row), finite
        # The choice: p + bias, or, without a bias, the logits (same order as p, no underflow);
        # + 0 * p keeps p's NaN: a softmax row with a NaN or inf logit is NaN throughout.
        choice = logits + 0.0 * p if self.bias is None else p + self.bias  # (N, n_experts)
        # argsort puts NaN last, so a row with a NaN choice would choose by index and weigh its
        # (finite) chosen: its weights are NaN instead (before groups mask NaN to -inf)
        unknown = np.isnan(choice).any(axis=-1)  # (N,)
        if self.n_groups > 1:
            size = self.n_experts // self.n_groups  # not -1: N may be 0
            grouped = choice.reshape(len(x), self.n_groups, size)  # (N, n_groups, size)
            two = np.argsort(-grouped, axis=-1, kind="stable")[..., :2]  # (N, n_groups, 2)
            if self.bias is None:  # log(p_a + p_b) of the two best: sums that cannot underflow
                best = np.take_along_axis(log_p.reshape(grouped.shape), two, axis=-1)
                group_score = np.logaddexp(best[..., 0], best[..., 1])  # (N, n_groups)
            else:
                group_score = np.take_along_axis(grouped, two, axis=-1).sum(axis=-1)
            kept = np.argsort(-group_score, axis=-1, kind="stable")[:, :self.top_groups]
            mask = np.zeros(group_score.shape, dtype=bool)  # (N, n_groups)
            np.put_along_axis(mask, kept, True, axis=-1)
            choice = np.where(mask[..., None], grouped, -np.inf).reshape(len(x), self.n_experts)
        chosen = np.argsort(-choice, axis=-1, kind="stable")[:, :self.top_k]  # (N, top_k)
        if self.normalize:  # p / sum(p) over the chosen, as a softmax of their log p
            share = _softmax(np.take_along_axis(log_p, chosen, axis=-1))  # (N, top_k)
        else:
            share = np.take_along_axis(p, chosen, axis=-1)  # (N, top_k), unbiased scores
        share[unknown] = np.nan  # a NaN in, a NaN out; other rows untouched
        return p, chosen, share

    def _logits(self, x: FloatArray) -> FloatArray:
        """The router's logits ``x @ router`` ``(N, n_experts)``: what a router bias adds to."""
        logits: FloatArray = x @ self.router
        return logits

    def _log_scores(self, logits: FloatArray) -> FloatArray:
        """``log p`` up to a constant a row: the logits (softmax) or ``log sigmoid(logits)``."""
        return logits if self.score == "softmax" else -np.logaddexp(0.0, -logits)

    def route(self, x: object) -> tuple[FloatArray, np.ndarray, FloatArray]:
        """Scores ``p`` ``(..., n_experts)``, chosen experts and weights ``(..., top_k)``."""
        x = check.layer_input(x, self._dtype, self.d_model, "d_model")
        p, chosen, share = self._route(x.reshape(-1, self.d_model))  # rows (N, ...)
        lead = x.shape[:-1]  # sizes, not -1: N may be 0
        return (p.reshape(*lead, self.n_experts), chosen.reshape(*lead, self.top_k),
                (self.scale * share).reshape(*lead, self.top_k))

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``sum_j weight_j * expert_{chosen_j}(x) + sum_s shared_s(x)``, x ``(..., d_model)``."""
        x = self._flatten(x)  # (N, d_model)
        p, chosen, share = self._route(x)
        weights = self.scale * share  # (N, top_k)
        y = np.zeros_like(x)  # (N, d_model)
        for i, expert in enumerate(self.experts):
            rows, slot = np.nonzero(chosen == i)  # the rows that chose expert i, and where
            if rows.size:
                y[rows] += weights[rows, slot, None] * expert.forward(x[rows])  # (n_i, d_model)
        for shared in self.shared_experts:
            y += shared.forward(x)  # (N, d_model), weight 1
        self._save_for_backward(x, p, chosen, share)
        return self._unflatten(y)  # (..., d_model)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``, from ``dL/dy``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, p, chosen, share = self._saved_tensors
        weights = self.scale * share  # (N, top_k)
        dx = np.zeros_like(x)  # (N, d_model)
        dweights = np.zeros_like(weights)  # (N, top_k)
        expert_grads: dict[str, FloatArray | None] = {}
        for i, expert in enumerate(self.experts):
            rows, slot = np.nonzero(chosen == i)
            if rows.size:  # run expert i again on its rows: its own last pass may be another's
                dweights[rows, slot] = np.sum(dy[rows] * expert.forward(x[rows]), axis=-1)
                dx[rows] += expert.backward(weights[rows, slot, None] * dy[rows])
            expert_grads.update({f"experts.{i}.{name}": g
                                 for name, g in ran_grads(expert, rows.size > 0).items()})
        self._shared_backward(x, dy, dx, expert_grads)
        router_grads, dx_router = self._router_backward(x, p, chosen, share, dweights)
        self._set_grads(**router_grads, **expert_grads)  # the router's, the experts'
        return self._unflatten(dx + dx_router)  # dL/dx: (..., d_model)

    def _shared_backward(self, x: FloatArray, dy: FloatArray, dx: FloatArray,
                         grads: dict[str, FloatArray | None]) -> None:
        """Adds the shared experts' part of ``dL/dx`` to ``dx`` ``(N, d_model)`` and puts their
        gradients in ``grads``. Every row, weight 1."""
        for j, shared in enumerate(self.shared_experts):
            shared.forward(x)  # again: its own last pass may be another's
            dx += shared.backward(dy)
            grads.update({f"shared_experts.{j}.{name}": g for name, g in shared.grads.items()})

    def _router_backward(self, x: FloatArray, p: FloatArray, chosen: np.ndarray,
                         share: FloatArray, dweights: FloatArray
                         ) -> tuple[dict[str, FloatArray], FloatArray]:
        """The router's gradients by name (``_router_grads``) and its part of ``dL/dx``
        ``(N, d_model)``, from ``dL/dweights`` ``(N, top_k)`` (the choice has no gradient)."""
        row = np.arange(len(x))[:, None]  # (N, 1), pairs with `chosen` to index p
        dshare = self.scale * dweights  # (N, top_k): weights = scale * share
        dlogits = np.zeros_like(p)  # (N, n_experts): the unchosen get none, the bias none
        if self.normalize:  # share = softmax(log p of the chosen): softmax's chain rule
            dlog_p = share * (dshare - np.sum(dshare * share, axis=-1, keepdims=True))
            # log p is the logits less a constant (softmax) or log sigmoid, whose slope is 1 - p
            dlogits[row, chosen] = dlog_p if self.score == "softmax" else \
                dlog_p * (1.0 - p[row, chosen])
        else:  # share = the chosen p
            dlogits[row, chosen] = dshare
            if self.score == "softmax":  # softmax's chain rule
                dlogits = p * (dlogits - np.sum(dlogits * p, axis=-1, keepdims=True))
            else:
                dlogits = dlogits * p * (1.0 - p)  # sigmoid's derivative
        return self._router_grads(x, dlogits), dlogits @ self.router.T

    def _router_grads(self, x: FloatArray, dlogits: FloatArray) -> dict[str, FloatArray]:
        """``{"router": dL/drouter}`` ``(d_model, n_experts)`` from ``dL/dlogits``."""
        return {"router": x.T @ dlogits}

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """``router``, each expert's as ``experts.{i}.{name}``, then ``shared_experts.{j}.{name}``.

        The keys of ``grads``; ``bias`` is not among them (it is set, not trained).
        """
        return {"router": self.router, **{f"experts.{i}.{name}": p for i, e in enumerate(
            self.experts) for name, p in e.named_parameters().items()}, **{
            f"shared_experts.{j}.{name}": p for j, e in enumerate(self.shared_experts)
            for name, p in e.named_parameters().items()}}

    def load_balancing_loss(self, x: object) -> float:
        """Switch Transformer's auxiliary loss as Hugging Face's Mixtral computes it.

        ``n_experts * sum_i f_i * P_i``: ``f_i`` the share of rows choosing expert ``i`` (summing
        to ``top_k``), ``P_i`` the mean ``p_i``; ``top_k`` when both are even. Sigmoid scores are
        first divided by their sum in each row (DeepSeek-V3's Equation 19). A ValueError
        for ``x`` without rows: the means are undefined.
        """
        x = self._rows_with_a_mean(x)  # (N, d_model), N > 0
        p, chosen, _ = self._route(x)  # (N, n_experts), (N, top_k)
        if self.score == "sigmoid":  # p / sum(p), as a softmax of log p: no 0 / 0
            p = _softmax(self._log_scores(self._logits(x)))  # (N, n_experts), rows sum to 1
        f = np.bincount(chosen.ravel(), minlength=self.n_experts) / len(p)  # (n_experts,)
        return float(self.n_experts * np.sum(f * p.mean(axis=0)))

    @quiet
    def load_balancing_grad(self, x: object) -> FloatArray:
        """``d load_balancing_loss / d router`` ``(d_model, n_experts)``, the choice held fixed.

        The shares ``f_i`` are step functions of the router: the gradient flows through the
        mean scores ``P_i`` alone, ``dL/dP_i = n_experts * f_i``.
        """
        x = self._rows_with_a_mean(x)  # (N, d_model), N > 0
        p, chosen, _ = self._route(x)  # (N, n_experts), (N, top_k)
        f = np.bincount(chosen.ravel(), minlength=self.n_experts) / len(x)  # (n_experts,)
        g = self.n_experts * f / len(x)  # dL/dq for each row's scores q: (n_experts,)
        if self.score == "softmax":  # q = p
            dlogits = p * (g - np.sum(p * g, axis=-1, keepdims=True))  # (N, n_experts)
        else:  # q = p / sum(p) = softmax(log sigmoid(logits)), d log sigmoid = 1 - p
            q = _softmax(self._log_scores(self._logits(x)))  # (N, n_experts)
            dlogits = q * (g - np.sum(g * q, axis=-1, keepdims=True)) * (1.0 - p)
        grad: FloatArray = x.T @ dlogits  # (d_model, n_experts)
        return grad

    def _rows_with_a_mean(self, x: object) -> FloatArray:
        """``x`` ``(..., d_model)`` checked, as rows ``(N, d_model)``; a ValueError if N = 0."""
        x = check.layer_input(x, self._dtype, self.d_model, "d_model")
        if x.size == 0:
            raise ValueError(f"x has no rows (shape {x.shape}): the load-balancing loss, a mean "
                             "over rows, is undefined")
        return x.reshape(-1, self.d_model)

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
        options = "".join(f", {name}={value!r}" for name, value, default in (
            ("score", self.score, "softmax"), ("bias", self.bias is not None, False),
            ("n_groups", self.n_groups, 1), ("top_groups", self.top_groups, 1),
            ("scale", self.scale, 1.0), ("shared_experts", len(self.shared_experts), 0))
            if value != default)  # only what differs from Mixtral's router
        return (f"MixtureOfExperts(n_experts={self.n_experts}, top_k={self.top_k}, "
                f"experts={_kind(self.experts[0])}, d_model={self.d_model}, d_ff={self.d_ff}, "
                f"normalize={self.normalize}{options}, dtype={self.dtype})")


def _softmax(z: FloatArray) -> FloatArray:
    """Softmax over the last axis, shifted by the row's maximum: exp cannot overflow."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    out: FloatArray = e / e.sum(axis=-1, keepdims=True)
    return out


def ran_grads(expert: Expert, ran: bool) -> dict[str, FloatArray | None]:
    """``expert``'s gradients if it ran on some rows, else zeros (None for an absent bias)."""
    if ran:
        return expert.grads
    return {name: None if w is None else np.zeros_like(w)
            for name, w in expert.named_parameters().items()}


# MixtureOfExperts' argument checks: __init__ calls _checked, which calls the four below it.


def _checked(router: object, experts: object, top_k: object, normalize: object, score: object,
             bias: object, n_groups: object, top_groups: object, scale: object,
             shared_experts: object) -> tuple[FloatArray, tuple[Expert, ...], int, bool, str,
                                              FloatArray | None, int, int, float,
                                              tuple[Expert, ...]]:
    """``MixtureOfExperts``' arguments checked in their order, and normalised: ``router`` an
    array and ``bias`` a read-only copy (or None), both of the experts' dtype."""
    experts = tuple(_blocks(experts, "experts", non_empty=True))
    first = experts[0]
    for i, e in enumerate(experts):
        for what, mine, theirs in (("kind", _kind(e), _kind(first)),
                                   ("d_model", e.d_model, first.d_model),
                                   ("d_ff", e.d_ff, first.d_ff), ("dtype", e.dtype, first.dtype)):
            if mine != theirs:
                error = TypeError if what == "dtype" else ValueError
                raise error(f"experts must share one {what}: experts[0] has {theirs}, "
                            f"experts[{i}] has {mine}")
    w = check.params({"router": router}, {"router": "d_model n_experts"},
                     known={"d_model": first.d_model, "n_experts": len(experts)})[0]
    if (r := w["router"]) is None or r.dtype != first.dtype:
        raise TypeError(f"router has dtype {None if r is None else r.dtype} but the experts "
                        f"{first.dtype}")
    top_k = check_top_k(top_k, len(experts))
    normalize = check.boolean(normalize, "normalize")
    score = check.choice(score, "score", SCORES)
    choice_bias = None if bias is None else expert_vector(bias, "bias", len(experts), first.dtype)
    n_groups, top_groups = _groups(n_groups, top_groups, len(experts), top_k)
    scale = check.real(scale, "scale", 0.0, 1e6, high_open=False, low_open=True)
    shared = _shared(shared_experts, first.d_model, first.dtype)
    return (r, experts, top_k, normalize, score, choice_bias, n_groups, top_groups, scale,
            shared)


def expert_vector(value: object, name: str, n_experts: int, dtype: np.dtype[Any]) -> FloatArray:
    """A read-only copy of ``value``, a finite ``(n_experts,)`` array of the experts' dtype
    (``bias`` here, ``RouterBiasMoE``'s ``router_bias``)."""
    b = check.params({name: value}, {name: "n_experts"}, known={"n_experts": n_experts})[0]
    if (b_arr := b[name]) is None or b_arr.dtype != dtype:
        raise TypeError(f"{name} has dtype {None if b_arr is None else b_arr.dtype} but the "
                        f"experts {dtype}")
    if not np.all(np.isfinite(b_arr)):
        raise ValueError(f"{name} must be finite: a NaN or infinite {name} makes the choice "
                         "meaningless")
    return readonly_copy(b_arr)


def _groups(n_groups: object, top_groups: object, n_experts: int, top_k: int) -> tuple[int, int]:
    """``n_groups`` and ``top_groups`` checked against the experts and ``top_k``."""
    n_groups = check.positive_int(n_groups, "n_groups")
    top_groups = check.positive_int(top_groups, "top_groups")
    if n_experts % n_groups:
        raise ValueError(f"n_groups must divide n_experts = {n_experts}, got {n_groups}")
    size = n_experts // n_groups
    if n_groups > 1 and size < 2:
        raise ValueError(f"n_groups = {n_groups} leaves {size} expert a group: a group's score "
                         "is the sum of its two best, so each needs at least 2")
    if top_groups > n_groups:
        raise ValueError(f"top_groups must be at most n_groups = {n_groups}, got {top_groups}")
    if top_k > top_groups * size:
        raise ValueError(f"top_k = {top_k} is more than the {top_groups * size} experts of "
                         f"top_groups = {top_groups} groups of {size}")
    return n_groups, top_groups


def _blocks(value: object, name: str, non_empty: bool = False) -> Sequence[Expert]:
    """``value`` checked to be a list or tuple of FFN blocks (and not empty, if asked)."""
    if not isinstance(value, (list, tuple)) or (non_empty and not value):
        kind = "a non-empty list or tuple" if non_empty else "a list or tuple"
        raise TypeError(f"{name} must be {kind}, got {check.describe(value)}")
    for i, e in enumerate(value):
        if not isinstance(e, (FeedForward, GatedFeedForward)):
            raise TypeError(f"{name}[{i}] must be a FeedForward or GatedFeedForward, "
                            f"got {type(e).__name__}")
    return value


def _shared(shared: object, d_model: int, dtype: np.dtype[Any]) -> tuple[Expert, ...]:
    """The shared experts as a tuple, each an FFN block of ``d_model`` and ``dtype``."""
    blocks = tuple(_blocks(shared, "shared_experts"))
    for j, e in enumerate(blocks):
        if e.d_model != d_model:
            raise ValueError(f"shared_experts[{j}] has d_model {e.d_model} but the experts "
                             f"{d_model}")
        if e.dtype != dtype:
            raise TypeError(f"shared_experts[{j}] has dtype {e.dtype} but the experts {dtype}")
    return blocks


def count_moe_parameters(d_model: int, d_ff: int, n_experts: int, top_k: int | None = None,
                         bias: bool = True, gated: bool = False) -> int:
    """Parameters of ``n_experts`` blocks and router (``top_k <= n_experts``: a token's)."""
    n_experts = check.positive_int(n_experts, "n_experts")
    used = n_experts if top_k is None else check_top_k(top_k, n_experts)
    return _moe_parameters(n_experts, used, *_block_args(d_model, d_ff, bias, gated))


def _moe_parameters(n_experts: int, used: int, d_model: int, d_ff: int, bias: bool,
                    gated: bool) -> int:
    """``count_moe_parameters`` of checked arguments, ``used`` experts counted."""
    return used * _parameters(d_model, d_ff, bias, gated) + d_model * n_experts  # and the router


def count_moe_flops(d_model: int, d_ff: int, n_experts: int, top_k: int, n_tokens: int = 1,
                    gated: bool = False, backward: bool = False) -> int:
    """FLOPs of the router's product and of the ``top_k`` experts each token uses."""
    n_experts = check.positive_int(n_experts, "n_experts")
    top_k = check_top_k(top_k, n_experts)
    return _moe_flops(n_experts, top_k, *_flop_args(d_model, d_ff, n_tokens, gated, backward))


def _moe_flops(n_experts: int, top_k: int, d_model: int, d_ff: int, n_tokens: int, gated: bool,
               backward: bool) -> int:
    """``count_moe_flops`` of checked arguments."""
    experts = top_k * _flops(d_model, d_ff, n_tokens, gated, backward)
    router = 2 * n_tokens * d_model * n_experts
    return experts + (3 * router if backward else router)
