"""Grouped experts: a mixture of experts run as one product per expert on a contiguous segment.

``MixtureOfExperts.forward`` loops over the experts and gathers each one's rows from the batch.
Grouped kernels (grouped GEMM, MegaBlocks' dropless MoE) sort the ``N * top_k`` (row, expert)
pairs by expert once instead: expert ``i``'s rows are then the segment
``offsets[i]:offsets[i + 1]`` of the sorted rows, its block runs on that segment, and a
scatter-add gives each row its ``top_k`` weighted outputs back. No row is dropped: a segment is
as long as the router made it.
"""

from __future__ import annotations

import numpy as np

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, quiet
from ffn._validate import FloatArray
from ffn.moe import MixtureOfExperts, ran_grads

__all__ = ["GroupedExperts", "sort_by_expert"]

SUPPORTED_SCORES = ("softmax", "sigmoid")  # the router scores whose chain rule backward knows


def sort_by_expert(chosen: object, n_experts: int) -> tuple[np.ndarray, np.ndarray]:
    """The (row, expert) pairs sorted by expert, and where each expert's segment starts.

    ``chosen`` ``(N, top_k)``: each row's experts. Pair ``j`` is row ``j // top_k``'s slot
    ``j % top_k``. Returns ``order`` ``(N * top_k,)``, the pairs sorted by expert (a stable
    sort: within an expert, in row order), and ``offsets`` ``(n_experts + 1,)``: expert ``i``'s
    pairs are ``order[offsets[i]:offsets[i + 1]]``, an empty segment if no row chose it.
    """
    n_experts = check.positive_int(n_experts, "n_experts")
    if not isinstance(chosen, np.ndarray):
        raise TypeError(f"chosen must be a 2-D integer array (N, top_k), got "
                        f"{check.describe(chosen)}")
    if chosen.ndim != 2 or not np.issubdtype(chosen.dtype, np.integer):
        raise TypeError(f"chosen must be a 2-D integer array (N, top_k), got shape "
                        f"{chosen.shape} and dtype {chosen.dtype}")
    if chosen.size and not (0 <= chosen.min() and chosen.max() < n_experts):
        raise ValueError(f"chosen must hold experts in [0, {n_experts - 1}], got values in "
                         f"[{chosen.min()}, {chosen.max()}]")
    expert = chosen.ravel()  # (N * top_k,): the expert of each pair, row by row
    order = np.argsort(expert, kind="stable")  # (N * top_k,): pairs by expert, rows in order
    counts = np.bincount(expert, minlength=n_experts)  # (n_experts,): each expert's pairs
    offsets = np.concatenate(([0], np.cumsum(counts)))  # (n_experts + 1,): segment bounds
    return order, offsets


class GroupedExperts(Layer):
    """``moe`` run grouped: the results and gradients of ``moe.forward`` and ``moe.backward``.

    Routing is ``moe``'s own (its ``route`` and its router's backward); the blocks are
    ``moe.experts`` and ``moe.shared_experts``, so the parameters are ``moe``'s and ``grads``
    has the keys of ``moe.grads``. Each row's ``top_k`` outputs are added in expert order, as
    the loop adds them: the two agree bit for bit (``tests/test_grouped.py``). Like the loop,
    ``backward`` reruns each expert on its segment.

    Raises:
        TypeError: for a ``moe`` that is not a ``MixtureOfExperts``, or whose ``forward`` is
            not ``MixtureOfExperts.forward`` (``InputScaledMoE``).
        ValueError: for router scores whose backward this does not know.
    """

    _caller = "grouped"

    def __init__(self, moe: MixtureOfExperts) -> None:
        if not isinstance(moe, MixtureOfExperts):
            raise TypeError(f"moe must be a MixtureOfExperts, got {type(moe).__name__}")
        if type(moe).forward is not MixtureOfExperts.forward:  # e.g. weights on the inputs
            raise TypeError(f"GroupedExperts runs MixtureOfExperts' own sum of weighted expert "
                            f"outputs; {type(moe).__name__} computes another")
        if moe.score not in SUPPORTED_SCORES:
            raise ValueError(f"GroupedExperts supports score in {SUPPORTED_SCORES}, got "
                             f"{moe.score!r}")
        super().__init__(moe.dtype, moe.d_model, moe.d_model, "d_model", {})
        self.moe = moe

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """``moe``'s parameters: the router, then each expert's and each shared expert's."""
        return self.moe.named_parameters()

    # --8<-- [start:forward]
    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``moe(x)``: one pass of each expert over its segment of the rows, sorted
        by expert."""
        moe = self.moe
        x = self._flatten(x)  # (N, d_model)
        p, chosen, share = moe._route(x)  # (N, n_experts), (N, top_k), (N, top_k)
        weights = moe.scale * share  # (N, top_k), as moe.route gives them
        # (N*top_k,), (n_experts + 1,)
        order, offsets = sort_by_expert(chosen, moe.n_experts)
        rows = order // moe.top_k  # (N*top_k,): the row of each sorted pair
        # (N*top_k, d_model): expert i's rows at offsets[i]:offsets[i + 1]
        x_sorted = x[rows]
        out = np.empty_like(x_sorted)  # (N*top_k, d_model)
        for i, expert in enumerate(moe.experts):
            start, stop = offsets[i], offsets[i + 1]
            # one x @ W1, activation and @ W2 for all of expert i's rows
            if stop > start:
                # (n_i, d_model)
                out[start:stop] = expert.forward(x_sorted[start:stop])
        y = np.zeros_like(x)  # (N, d_model)
        # in pair order: experts ascend
        np.add.at(y, rows, weights.ravel()[order, None] * out)
        for shared in moe.shared_experts:
            y += shared.forward(x)  # (N, d_model), weight 1
        self._save_for_backward(x, p, chosen, share, weights, order, offsets)
        return self._unflatten(y)  # (..., d_model)
    # --8<-- [end:forward]

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` and returns ``dL/dx``, from ``dL/dy``."""
        moe = self.moe
        dy = self._flatten_grad(dy)  # (N, d_model)
        x, p, chosen, share, weights, order, offsets = self._saved_tensors
        rows: np.ndarray = order // moe.top_k  # (N*top_k,): order holds ints
        x_sorted, dy_sorted = x[rows], dy[rows]  # (N*top_k, d_model), in the forward's order
        w_sorted = weights.ravel()[order, None]  # (N*top_k, 1)
        dw_sorted = np.zeros(len(order), dtype=x.dtype)  # (N*top_k,): dL/d(each pair's weight)
        dx_sorted = np.zeros_like(x_sorted)  # (N*top_k, d_model)
        expert_grads: dict[str, FloatArray | None] = {}
        for i, expert in enumerate(moe.experts):
            start, stop = offsets[i], offsets[i + 1]
            if stop > start:  # run expert i again on its segment: its last pass may be another's
                out = expert.forward(x_sorted[start:stop])  # (n_i, d_model)
                dw_sorted[start:stop] = np.sum(dy_sorted[start:stop] * out, axis=-1)
                dy_i = w_sorted[start:stop] * dy_sorted[start:stop]  # (n_i, d_model), weighted
                dx_sorted[start:stop] = expert.backward(dy_i)
            expert_grads.update({f"experts.{i}.{name}": g
                                 for name, g in ran_grads(expert, stop > start).items()})
        dx = np.zeros_like(x)  # (N, d_model)
        np.add.at(dx, rows, dx_sorted)  # back to the rows, experts ascending as in the loop
        dweights = dw_sorted[np.argsort(order)].reshape(weights.shape)  # inverse permutation
        moe._shared_backward(x, dy, dx, expert_grads)
        router_grads, dx_router = moe._router_backward(x, p, chosen, share, dweights)
        self._set_grads(**router_grads, **expert_grads)
        return self._unflatten(dx + dx_router)  # dL/dx: (..., d_model)

    def __repr__(self) -> str:
        return f"GroupedExperts({self.moe!r})"

