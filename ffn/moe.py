"""A mixture of experts: a router picks ``top_k`` of ``n_experts`` FFN blocks a row (its counts:
``ffn.counting``).

One layer composed of four parts, each an option: the router (``ffn.routing``'s rule: Mixtral's
softmax by default; DeepSeek-V3's sigmoid, choice ``bias``, groups and ``scale``; gpt-oss's
``router_bias`` inside the logits; DeepSeek-V4's ``sqrtsoftplus`` and token ``table``), the
experts (with LongCat-Flash's identity ``zero_experts``), the shared experts (weight 1, or behind
Qwen2-MoE's ``shared_gate``) and the combine rule (``"outputs"``: the weights scale the experts'
outputs; ``"inputs"``: Llama 4's, they scale the inputs). The dispatch is written once: a loop
over the experts, each on its rows, which it finds by a mask each (``grouped=False``) or by one
sort of the (row, expert) pairs, as grouped kernels do (``grouped=True``). The forward keeps
each expert's saved pass, so ``backward`` runs no expert again. ``ffn/moe_presets.py`` names
the 2025 configurations; ``ffn/moe_checks.py`` checks the arguments.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn import routing
from ffn._layer import (
    Layer,
    SavedPass,
    forward_pass,
    one_thread,
    quiet,
    random_weights,
    readonly_copy,
)
from ffn._validate import FloatArray
from ffn.activations import sigmoid
from ffn.experts import Expert, check_gate, kind, ran_grads
from ffn.feedforward import FeedForward
from ffn.gated import GATED_VARIANTS, GatedFeedForward
from ffn.moe_checks import check_options
from ffn.routing import SCORES, check_top_k, sort_by_expert

__all__ = ["COMBINES", "SCORES", "Dispatch", "MixtureOfExperts", "check_top_k"]

COMBINES = ("outputs", "inputs")  # what a chosen expert's weight scales


class Dispatch(NamedTuple):
    """Where a batch's ``top_k`` assignments go under an expert capacity."""

    capacity: int  # the most assignments one expert takes
    assigned: np.ndarray  # (n_choices,) assignments the router made to each expert
    kept: np.ndarray  # (n_choices,) assignments each expert takes, at most `capacity`
    dropped: int  # assignments over capacity: those rows skip that expert


class MixtureOfExperts(Layer):
    """A sparse MoE layer: ``y = sum_i weight_i * expert_i(x) + sum_j g_j * shared_j(x)``.

    Per row the logits ``z = x @ router (+ router_bias)`` give ``ffn.routing.route``'s scores
    ``p``, chosen experts and weights: softmax, sigmoid or sqrt(softplus) scores, the choice
    by ``p + bias`` (without a bias, by the logits) among the ``top_groups`` best groups, or
    ``table[token_ids]``, the chosen ``p`` renormalised with ``normalize``, times ``scale``
    (with a bias, saturated sigmoid scores tie: see ``ffn.routing.choice``). A chosen zero
    expert adds its weight times the row. With ``combine="inputs"`` an expert runs
    on its weight times the row instead: ``expert_i(weight_i * x)`` (Llama 4). Shared experts
    run on every row, with ``g_j = 1`` or ``sigmoid(x @ shared_gate[:, j])`` (Qwen2-MoE).
    ``grads`` has ``"router"``, ``"router_bias"``, ``"experts.{i}.{name}"`` (zeros for an
    expert no row chose), ``"shared_experts.{j}.{name}"`` and ``"shared_gate"`` (the last two
    and the bias only where there are some); the choice ``bias`` is no parameter.

    Args:
        router: router matrix ``(d_model, n_choices)`` (the transpose of PyTorch's gate
            weight), ``n_choices = n_experts + zero_experts``: a column per expert, the zero
            experts last.
        experts: ``n_experts`` blocks of one kind (class and activation or variant), ``d_model``,
            ``d_ff`` and dtype.
        top_k: how many experts each row uses, ``1 <= top_k <= n_experts``.
        normalize: renormalise the chosen ``top_k`` scores to sum to 1.
        score: ``"softmax"``, ``"sigmoid"`` or ``"sqrtsoftplus"``, the router's scores.
        bias: ``(n_choices,)`` added to the scores to choose experts, never to weigh them
            (DeepSeek-V3's balancing without an auxiliary loss); None: zeros.
        n_groups: equal groups of consecutive experts, at least 2 experts each when above 1.
        top_groups: how many groups a row may choose from, ``1 <= top_groups <= n_groups``.
        scale: the routed experts' weights are multiplied by it (DeepSeek-V3: 2.5).
        shared_experts: FFN blocks of the same ``d_model`` and dtype (any kind and width) that
            every row uses.
        router_bias: ``(n_choices,)`` added to the logits, a parameter (gpt-oss); None: none.
        combine: ``"outputs"`` or ``"inputs"``, what a chosen expert's weight scales.
        shared_gate: ``(d_model, n_shared)``, one gate per shared expert; None: weight 1.
        grouped: find each expert's rows by one sort (``ffn.routing.sort_by_expert``), not by
            a mask each; the same results, bit for bit.
        zero_experts: identity experts after the ``n_experts`` (LongCat-Flash's
            zero-computation experts): one chosen adds its weight times the row, no FFN work.
        table: ``(vocab_size, top_k)`` integers, a token's experts (DeepSeek-V4's hash
            routing, ``ffn.routing.hash_route``); then ``forward``, ``route``, ``dispatch``
            and the loss take ``token_ids`` (x's leading shape), and the scores only weigh.

    Raises:
        TypeError: for experts that are not FFN blocks, or dtypes that differ.
        ValueError: for shapes that do not fit, experts of mixed kinds or widths, a bad
            ``top_k``, groups that do not divide the experts or hold too few for ``top_k``.
    """

    _caller = "moe"
    router: FloatArray  # (d_model, n_choices), a read-only copy
    router_bias: FloatArray | None  # (n_choices,), a read-only copy: a parameter
    shared_gate: FloatArray | None  # (d_model, n_shared), a read-only copy
    bias: FloatArray | None  # (n_choices,), a read-only copy: only for choosing
    table: np.ndarray | None  # (vocab_size, top_k), read-only: a token's experts
    experts: tuple[Expert, ...]
    shared_experts: tuple[Expert, ...]

    def __init__(self, router: object, experts: Sequence[Expert], top_k: int = 2,
                 normalize: bool = True, *, score: str = "softmax", bias: object = None,
                 n_groups: int = 1, top_groups: int = 1, scale: float = 1.0,
                 shared_experts: Sequence[Expert] = (), router_bias: object = None,
                 combine: str = "outputs", shared_gate: object = None,
                 grouped: bool = False, zero_experts: int = 0, table: object = None) -> None:
        (router, experts, top_k, normalize, score, bias, n_groups, top_groups, scale,
         shared_experts, self.zero_experts, self.table) = check_options(
            router, experts, top_k, normalize, score, bias, n_groups, top_groups, scale,
            shared_experts, zero_experts, table)
        first, self.n_choices = experts[0], router.shape[1]  # experts, then the zero ones
        params = {"router": router, "router_bias": None if router_bias is None else
                  routing.expert_vector(router_bias, "router_bias", self.n_choices, first.dtype),
                  "shared_gate": check_gate(shared_gate, shared_experts, first.d_model,
                                            first.dtype)}
        super().__init__(first.dtype, first.d_model, first.d_model, "d_model", params)
        self.experts, self.shared_experts = experts, shared_experts
        self.d_model, self.d_ff, self.n_experts = first.d_model, first.d_ff, len(experts)
        self.top_k, self.normalize, self.score, self.scale = top_k, normalize, score, scale
        self.bias = None if bias is None else readonly_copy(bias)
        self.n_groups, self.top_groups = n_groups, top_groups
        self.combine = check.choice(combine, "combine", COMBINES)
        self.grouped = check.boolean(grouped, "grouped")

    def options(self) -> dict[str, Any]:
        """The arguments this layer was built with: ``MixtureOfExperts(**options)`` is a twin
        (the same blocks), and a preset changes one or two of them."""
        return {"router": self.router, "experts": self.experts, "top_k": self.top_k,
                "normalize": self.normalize, "score": self.score, "bias": self.bias,
                "n_groups": self.n_groups, "top_groups": self.top_groups, "scale": self.scale,
                "shared_experts": self.shared_experts, "router_bias": self.router_bias,
                "combine": self.combine, "shared_gate": self.shared_gate,
                "grouped": self.grouped, "zero_experts": self.zero_experts, "table": self.table}

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
        return MixtureOfExperts(router, experts, top_k=top_k)

    def _logits(self, x: FloatArray) -> FloatArray:
        """The router's logits ``x @ router (+ router_bias)`` ``(N, n_choices)``."""
        logits: FloatArray = x @ self.router  # (N, n_choices)
        return logits if self.router_bias is None else logits + self.router_bias

    @quiet
    def _route(self, x: FloatArray, ids: np.ndarray | None = None) -> routing.Route:
        """``ffn.routing.route`` of rows ``x`` ``(N, d_model)`` with this layer's options, or
        with a table ``hash_route`` for the rows' checked token ids ``(N,)``."""
        if self.table is not None and ids is not None:
            return routing.hash_route(self._logits(x), self.table, ids, score=self.score,
                                      normalize=self.normalize, scale=self.scale)
        return routing.route(self._logits(x), self.top_k, score=self.score, bias=self.bias,
                             n_groups=self.n_groups, top_groups=self.top_groups,
                             normalize=self.normalize, scale=self.scale)

    def _ids(self, token_ids: object, lead: tuple[int, ...]) -> np.ndarray | None:
        """The token ids checked against the table ``(N,)``; None, and none given, without."""
        if self.table is None:
            if token_ids is not None:
                raise TypeError("token_ids given, but this layer has no table: its router "
                                "chooses the experts")
            return None
        return routing.check_token_ids(token_ids, lead, len(self.table))

    def route(self, x: object, token_ids: object = None
              ) -> tuple[FloatArray, np.ndarray, FloatArray]:
        """Scores ``p`` ``(..., n_choices)``, chosen experts and weights ``(..., top_k)``;
        ``token_ids`` ``(...)`` for a layer with a table, else None."""
        x = check.layer_input(x, self._dtype, self.d_model, "d_model")
        lead = x.shape[:-1]  # sizes, not -1: N may be 0
        rows = x.reshape(-1, self.d_model)  # (N, d_model)
        p, chosen, _, weights = self._route(rows, self._ids(token_ids, lead))
        return (p.reshape(*lead, self.n_choices), chosen.reshape(*lead, self.top_k),
                weights.reshape(*lead, self.top_k))

    # --8<-- [start:dispatch]
    def _rows_of_experts(
        self, chosen: np.ndarray
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each expert's (rows, slots): a mask an expert, or one sort
        of the ``N * top_k`` pairs by expert, whose segment
        ``offsets[i]:offsets[i + 1]`` is expert ``i``'s."""
        if not self.grouped:
            n = self.n_experts
            masks = [np.nonzero(chosen == i) for i in range(n)]
            return [(rows, slots) for rows, slots in masks]
        # order (N*top_k,), offsets (n_choices + 1,)
        order, offsets = sort_by_expert(chosen, self.n_choices)
        segments = [order[offsets[i]:offsets[i + 1]]
                    for i in range(self.n_experts)]
        k = self.top_k
        return [(pairs // k, pairs % k) for pairs in segments]

    @forward_pass
    @quiet
    def forward(self, x: object, token_ids: object = None) -> FloatArray:
        """``sum_j weight_j * expert_{chosen_j}(x) + sum_s g_s *
        shared_s(x)``, x ``(..., d_model)`` (``expert(weight * x)`` with
        ``combine="inputs"``); a zero expert's is ``x`` itself."""
        x = self._flatten(x)  # (N, d_model)
        ids = self._ids(token_ids, self._lead)  # (N,), or None without a table
        route = self._route(x, ids)
        scaled_inputs = self.combine == "inputs"
        y = np.zeros_like(x)  # (N, d_model)
        # each expert's outputs (for dL/dweights) and own pass (for its
        # backward)
        outs: list[FloatArray | None] = []
        passes: list[SavedPass | None] = []
        segments = self._rows_of_experts(route.chosen)
        pairs = zip(self.experts, segments, strict=True)
        for expert, (rows, slot) in pairs:
            out = None
            if rows.size:
                w = route.weights[rows, slot, None]  # (n_i, 1)
                x_i = w * x[rows] if scaled_inputs else x[rows]
                out = expert.forward(x_i)  # (n_i, d_model)
                y[rows] += out if scaled_inputs else w * out
            outs.append(out)
            passes.append(expert.saved_pass() if rows.size else None)
        y = y + self.zero_weight(route) * x  # identity experts
        y, shared = self._shared_forward(x, y)
        self._save_for_backward(x, route, segments, outs, passes, shared)
        return self._unflatten(y)  # (..., d_model)
    # --8<-- [end:dispatch]

    def zero_weight(self, route: routing.Route) -> FloatArray:
        """Each row's weight on the zero experts ``(N, 1)``: they add it times the row."""
        zero = route.chosen >= self.n_experts  # (N, top_k)
        return np.sum(route.weights * zero, axis=-1, keepdims=True)  # type: ignore[no-any-return]

    def _shared_forward(self, x: FloatArray, y: FloatArray
                        ) -> tuple[FloatArray, tuple[Any, ...]]:
        """``y`` plus the shared experts' outputs, gated or not, and what their backward needs."""
        gates = None if self.shared_gate is None else sigmoid(x @ self.shared_gate)  # (N, n_s)
        outs, passes = [], []
        for j, shared in enumerate(self.shared_experts):
            out = shared.forward(x)  # (N, d_model)
            y = y + (out if gates is None else gates[:, j, None] * out)
            outs.append(out)
            passes.append(shared.saved_pass())
        return y, (gates, outs, passes)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``, from ``dL/dy``."""
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, route, segments, outs, passes, shared = self._saved_tensors
        scaled_inputs = self.combine == "inputs"
        dx = np.zeros_like(x)  # (N, d_model)
        dweights = np.zeros_like(route.weights)  # (N, top_k)
        grads: dict[str, FloatArray | None] = {}
        for i, (expert, (rows, slot)) in enumerate(zip(self.experts, segments, strict=True)):
            if rows.size:
                w = route.weights[rows, slot, None]  # (n_i, 1)
                if scaled_inputs:  # u = w * x: dL/dw = sum(dL/du * x), dL/dx = w * dL/du
                    du = expert.backward_of(passes[i], dy[rows])  # (n_i, d_model)
                    dweights[rows, slot] = np.sum(du * x[rows], axis=-1)
                    dx[rows] += w * du
                else:
                    dweights[rows, slot] = np.sum(dy[rows] * outs[i], axis=-1)
                    dx[rows] += expert.backward_of(passes[i], w * dy[rows])
            grads.update({f"experts.{i}.{name}": g
                          for name, g in ran_grads(expert, rows.size > 0).items()})
        zero = route.chosen >= self.n_experts  # (N, top_k): y += w * x for these
        dweights = np.where(zero, np.sum(dy * x, axis=-1, keepdims=True), dweights)
        dx += self.zero_weight(route) * dy
        grads.update(self._shared_backward(x, dy, dx, *shared))
        dlogits = routing.route_backward(self._logits(x), route.p, route.chosen, route.share,
                                         dweights,
                                         score=self.score, normalize=self.normalize,
                                         scale=self.scale)  # (N, n_choices)
        self._set_grads(router=x.T @ dlogits, router_bias=dlogits.sum(axis=0), **grads)
        return self._unflatten(dx + dlogits @ self.router.T)  # dL/dx: (..., d_model)

    def _shared_backward(self, x: FloatArray, dy: FloatArray, dx: FloatArray,
                         gates: FloatArray | None, outs: list[FloatArray],
                         passes: list[SavedPass]) -> dict[str, FloatArray | None]:
        """Adds the shared experts' part of ``dL/dx`` to ``dx`` ``(N, d_model)``; their
        gradients (and the gate's) by name."""
        grads: dict[str, FloatArray | None] = {}
        dgate_pre = None if gates is None else np.zeros_like(gates)  # (N, n_shared)
        for j, (shared, out, saved) in enumerate(zip(self.shared_experts, outs, passes,
                                                     strict=True)):
            g = None if gates is None else gates[:, j, None]  # (N, 1)
            dx += shared.backward_of(saved, dy if g is None else g * dy)
            grads.update({f"shared_experts.{j}.{name}": d for name, d in shared.grads.items()})
            if g is not None and dgate_pre is not None:  # g = sigmoid(x @ gate_j)
                dgate_pre[:, j] = np.sum(dy * out, axis=-1) * g[:, 0] * (1 - g[:, 0])
        if dgate_pre is not None and self.shared_gate is not None:
            dx += dgate_pre @ self.shared_gate.T  # (N, d_model)
            grads["shared_gate"] = x.T @ dgate_pre  # (d_model, n_shared)
        return grads

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """``router``, ``router_bias``, each expert's as ``experts.{i}.{name}``, then
        ``shared_experts.{j}.{name}`` and ``shared_gate``: the keys of ``grads``.

        The router bias and the gate only where the layer has them; ``bias`` is never among
        them (it is set, not trained).
        """
        return {"router": self.router,
                **({} if self.router_bias is None else {"router_bias": self.router_bias}),
                **{f"experts.{i}.{name}": p for i, e in enumerate(self.experts)
                   for name, p in e.named_parameters().items()},
                **{f"shared_experts.{j}.{name}": p for j, e in enumerate(self.shared_experts)
                   for name, p in e.named_parameters().items()},
                **({} if self.shared_gate is None else {"shared_gate": self.shared_gate})}

    def load_balancing_loss(self, x: object, token_ids: object = None) -> float:
        """Switch Transformer's auxiliary loss as Hugging Face's Mixtral computes it
        (``ffn.routing.load_balancing_loss``); a ValueError for ``x`` without rows."""
        x, ids = self._rows_with_a_mean(x, token_ids)  # (N, d_model), N > 0
        logits = self._logits(x)  # (N, n_choices)
        return routing.load_balancing_loss(logits, self._route(x, ids).chosen, self.score)

    @quiet
    def load_balancing_grad(self, x: object, token_ids: object = None) -> FloatArray:
        """``d load_balancing_loss / d router`` ``(d_model, n_choices)``, the choice held
        fixed (the shares ``f_i`` are step functions of the router, or a table's)."""
        x, ids = self._rows_with_a_mean(x, token_ids)  # (N, d_model), N > 0
        logits = self._logits(x)  # (N, n_choices)
        dlogits = routing.load_balancing_backward(logits, self._route(x, ids).chosen,
                                                  self.score)
        grad: FloatArray = x.T @ dlogits  # (d_model, n_choices)
        return grad

    def _rows_with_a_mean(self, x: object, token_ids: object
                          ) -> tuple[FloatArray, np.ndarray | None]:
        """``x`` ``(..., d_model)`` checked, as rows ``(N, d_model)``, and its token ids; a
        ValueError if N = 0."""
        x = check.layer_input(x, self._dtype, self.d_model, "d_model")
        if x.size == 0:
            raise ValueError(f"x has no rows (shape {x.shape}): the load-balancing loss, a mean "
                             "over rows, is undefined")
        return x.reshape(-1, self.d_model), self._ids(token_ids, x.shape[:-1])

    def dispatch(self, x: object, capacity_factor: float = 1.0,
                 token_ids: object = None) -> Dispatch:
        """What a capacity of ``ceil(capacity_factor * N * top_k / n_choices)`` per expert
        (zero experts too) drops.

        First come first served, in row order; ``forward`` itself drops nothing. A TypeError or
        ValueError for a ``capacity_factor`` not a number in (0, 1e6].
        """
        factor = check.real(capacity_factor, "capacity_factor", 0.0, 1e6, high_open=False,
                            low_open=True)
        chosen = self.route(x, token_ids)[1].reshape(-1, self.top_k)  # (N, top_k)
        capacity = math.ceil(factor * chosen.size / self.n_choices)
        assigned = np.bincount(chosen.ravel(), minlength=self.n_choices)  # (n_choices,)
        kept = np.minimum(assigned, capacity)  # in row order, the first `capacity` fit
        return Dispatch(capacity, assigned, kept, int(assigned.sum() - kept.sum()))

    def __repr__(self) -> str:
        options = "".join(f", {name}={value!r}" for name, value, default in (
            ("score", self.score, "softmax"), ("bias", self.bias is not None, False),
            ("n_groups", self.n_groups, 1), ("top_groups", self.top_groups, 1),
            ("scale", self.scale, 1.0), ("shared_experts", len(self.shared_experts), 0),
            ("router_bias", self.router_bias is not None, False),
            ("combine", self.combine, "outputs"),
            ("shared_gate", self.shared_gate is not None, False),
            ("grouped", self.grouped, False), ("zero_experts", self.zero_experts, 0),
            ("table", None if self.table is None else self.table.shape, None))
            if value != default)  # only what differs from Mixtral's router
        return (f"{type(self).__name__}(n_experts={self.n_experts}, top_k={self.top_k}, "
                f"experts={kind(self.experts[0])}, d_model={self.d_model}, d_ff={self.d_ff}, "
                f"normalize={self.normalize}{options}, dtype={self.dtype})")
