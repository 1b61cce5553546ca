"""A mixture of experts' routing, as functions of the logits ``x @ router`` ``(N, n_experts)``.

``route`` is the whole rule; its steps are public so a chapter, a widget or a test can call one:
``scores`` (softmax, sigmoid or DeepSeek-V4's ``sqrt(softplus)``), ``choice`` (the scores plus
DeepSeek-V3's choice bias, or the logits), ``top_k`` (among the best groups, if any),
``renormalize`` (the chosen scores, renormalised or not) and the ``scale``; ``hash_route`` is
DeepSeek-V4's other rule, the experts read from a token-id table and weighed by the scores;
``sort_by_expert`` lines the chosen pairs up by expert, and ``load_balancing_loss`` measures how
evenly they spread. ``route_backward`` carries ``dL/dweights`` back to ``dL/dlogits``; the
choice itself has no gradient. A new
router is a new step here and an option of ``MixtureOfExperts``, not a new class.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ffn import _validate as check
from ffn._validate import FloatArray

__all__ = ["SCORES", "Route", "check_groups", "check_logits", "check_table", "check_token_ids",
           "check_top_k", "choice", "expert_vector", "hash_route", "load_balancing_backward",
           "load_balancing_loss", "log_score_slope", "log_scores", "renormalize", "route",
           "route_backward", "scores", "softmax", "sort_by_expert", "top_k"]

SCORES = ("softmax", "sigmoid", "sqrtsoftplus")  # how a router turns logits into scores
TINY = -30.0  # below it softplus(z) is exp(z) to 1e-13: log softplus(z) = z, its slope 1


class Route(NamedTuple):
    """What a router gives a batch of rows."""

    p: FloatArray  # (N, n_experts): the scores
    chosen: np.ndarray  # (N, top_k): each row's experts, best first
    share: FloatArray  # (N, top_k): their weights before the scale
    weights: FloatArray  # (N, top_k): scale * share


def softmax(z: FloatArray) -> FloatArray:
    """Softmax over the last axis, shifted by the row's maximum: exp cannot overflow."""
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    out: FloatArray = e / e.sum(axis=-1, keepdims=True)
    return out


def scores(logits: FloatArray, score: str) -> FloatArray:
    """``p``: ``softmax(logits)`` (Mixtral), ``sigmoid(logits)`` (DeepSeek-V3) or
    ``sqrt(softplus(logits))`` (DeepSeek-V4), a row each."""
    with np.errstate(over="ignore"):  # exp(710) = inf gives a sigmoid of 0, as it should
        if score == "sqrtsoftplus":
            return np.sqrt(np.logaddexp(0.0, logits))
        p: FloatArray = softmax(logits) if score == "softmax" else 1.0 / (1.0 + np.exp(-logits))
    return p


def log_scores(logits: FloatArray, score: str) -> FloatArray:
    """``log p`` up to a constant a row, finite: the logits (softmax), ``log sigmoid``, or
    ``log softplus / 2`` (``z / 2`` below -30, where softplus would underflow)."""
    if score == "sqrtsoftplus":
        with np.errstate(divide="ignore"):  # the branch np.where drops may take log 0
            return np.where(logits < TINY, logits, np.log(np.logaddexp(0.0, logits))) / 2
    out: FloatArray = logits if score == "softmax" else -np.logaddexp(0.0, -logits)
    return out


def log_score_slope(logits: FloatArray, p: FloatArray, score: str) -> FloatArray:
    """``d log p / d logits`` elementwise: 1 (softmax, less its row's constant), ``1 - p``
    (sigmoid) or ``sigmoid(z) / (2 softplus(z))`` (sqrtsoftplus: 1/2 below -30)."""
    if score == "softmax":
        return np.ones_like(p)
    if score == "sigmoid":
        return 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        slope = 1.0 / (1.0 + np.exp(-logits)) / (2.0 * p * p)  # p^2 = softplus(z)
        return np.where(logits < TINY, 0.5, slope)


def choice(logits: FloatArray, p: FloatArray, bias: FloatArray | None = None) -> FloatArray:
    """What the experts are chosen by: ``p + bias`` (DeepSeek-V3), or without a bias the
    logits, which keep ``p``'s order and cannot underflow (``+ 0 * p`` keeps ``p``'s NaN: a
    softmax row with a NaN or inf logit is NaN throughout).

    With a bias the choice compares ``p + bias`` in floating point, where scores saturate:
    sigmoid is 1.0 from logits of about 37 (float32: 17) and 0 below about -710 (float32: -89),
    and such saturated scores tie (the lower index wins).
    """
    out: FloatArray = logits + 0.0 * p if bias is None else p + bias  # (N, n_experts)
    return out


def top_k(choice: FloatArray, k: int, n_groups: int = 1, top_groups: int = 1,
          log_p: FloatArray | None = None) -> np.ndarray:
    """The ``k`` largest of each row's ``choice`` ``(N, k)``, best first (ties: the lower index).

    With ``n_groups > 1`` only among the ``top_groups`` groups of consecutive experts whose two
    best sum highest: the two best ``choice`` (a biased choice), or with ``log_p`` (the choice
    is the logits) ``log(p_a + p_b)`` of those two, a sum that cannot underflow.
    """
    n, n_experts = choice.shape
    if n_groups > 1:
        size = n_experts // n_groups  # not -1: N may be 0
        grouped = choice.reshape(n, n_groups, size)  # (N, n_groups, size)
        two = np.argsort(-grouped, axis=-1, kind="stable")[..., :2]  # (N, n_groups, 2)
        if log_p is not None:
            best = np.take_along_axis(log_p.reshape(grouped.shape), two, axis=-1)
            group_score = np.logaddexp(best[..., 0], best[..., 1])  # (N, n_groups)
        else:
            group_score = np.take_along_axis(grouped, two, axis=-1).sum(axis=-1)
        kept = np.argsort(-group_score, axis=-1, kind="stable")[:, :top_groups]
        mask = np.zeros(group_score.shape, dtype=bool)  # (N, n_groups)
        np.put_along_axis(mask, kept, True, axis=-1)
        choice = np.where(mask[..., None], grouped, -np.inf).reshape(n, n_experts)
    chosen: np.ndarray = np.argsort(-choice, axis=-1, kind="stable")[:, :k]  # (N, k)
    return chosen


def renormalize(p: FloatArray, log_p: FloatArray, chosen: np.ndarray,
                normalize: bool) -> FloatArray:
    """The chosen experts' share ``(N, top_k)``: their ``p``, divided by its sum with
    ``normalize`` (as a softmax of their ``log p``: logits near -800, where every sigmoid
    underflows to 0, still weigh right)."""
    if normalize:
        return softmax(np.take_along_axis(log_p, chosen, axis=-1))  # (N, top_k)
    share: FloatArray = np.take_along_axis(p, chosen, axis=-1)  # (N, top_k), unbiased scores
    return share


def route(logits: FloatArray, k: int, *, score: str = "softmax", bias: object = None,
          n_groups: int = 1, top_groups: int = 1, normalize: bool = True,
          scale: float = 1.0) -> Route:
    """Scores, chosen experts and weights for rows' logits ``(N, n_experts)``, each argument
    checked. A row with a NaN choice gets NaN weights: which experts it would choose is unknown
    (argsort would put the NaN last and choose by index)."""
    n_experts = check_logits(logits)
    k = check_top_k(k, n_experts)
    score = check.choice(score, "score", SCORES)
    choice_bias = None if bias is None else expert_vector(bias, "bias", n_experts, logits.dtype)
    n_groups, top_groups = check_groups(n_groups, top_groups, n_experts, k)
    normalize = check.boolean(normalize, "normalize")
    scale = check.real(scale, "scale", 0.0, 1e6, high_open=False, low_open=True)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        p = scores(logits, score)  # (N, n_experts)
        log_p = log_scores(logits, score)  # (N, n_experts)
        by = choice(logits, p, choice_bias)  # (N, n_experts)
        unknown = np.isnan(by).any(axis=-1)  # (N,): before groups mask NaN to -inf
        chosen = top_k(by, k, n_groups, top_groups, log_p if choice_bias is None else None)
        share = renormalize(p, log_p, chosen, normalize)  # (N, k)
        share[unknown] = np.nan  # a NaN in, a NaN out; other rows untouched
        return Route(p, chosen, share, scale * share)


def check_logits(logits: object) -> int:
    """``logits`` checked to be a 2-D float array ``(N, n_experts)``; returns ``n_experts``."""
    if not isinstance(logits, np.ndarray) or logits.ndim != 2 or not np.issubdtype(
            logits.dtype, np.floating):
        got = (f"shape {logits.shape} and dtype {logits.dtype}"
               if isinstance(logits, np.ndarray) else check.describe(logits))
        raise TypeError(f"logits must be a 2-D float array (N, n_experts), got {got}")
    return int(logits.shape[1])


def hash_route(logits: FloatArray, table: object, token_ids: object, *,
               score: str = "sqrtsoftplus", normalize: bool = True, scale: float = 1.0) -> Route:
    """DeepSeek-V4's hash routing of rows' logits ``(N, n_experts)``: row ``n`` takes the
    experts ``table[token_ids[n]]`` ``(N, top_k)``, whatever its logits; they weigh them as
    ``route`` does (their ``p``, renormalised with ``normalize``, times ``scale``), each
    argument checked (a row of ``table`` may repeat an expert here, as in transformers'
    gather; ``MixtureOfExperts`` refuses that). The choice has no gradient, the weights do
    (through the logits)."""
    n_experts = check_logits(logits)
    table = check_table(table, n_experts, distinct=False)
    ids = check_token_ids(token_ids, (len(logits),), len(table))
    score = check.choice(score, "score", SCORES)
    normalize = check.boolean(normalize, "normalize")
    scale = check.real(scale, "scale", 0.0, 1e6, high_open=False, low_open=True)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        p = scores(logits, score)  # (N, n_experts)
        chosen = table[ids]  # (N, top_k): a lookup, not a comparison of scores
        share = renormalize(p, log_scores(logits, score), chosen, normalize)  # (N, top_k)
        return Route(p, chosen, share, scale * share)


def check_table(table: object, n_experts: int, distinct: bool = True) -> np.ndarray:
    """``table`` as a read-only ``(vocab_size, top_k)`` integer array of experts in
    ``[0, n_experts)``, each row's distinct with ``distinct`` (a layer's dispatch adds an
    expert's output once a row)."""
    if not isinstance(table, np.ndarray) or table.ndim != 2 or not np.issubdtype(
            table.dtype, np.integer) or 0 in table.shape:
        got = (f"shape {table.shape} and dtype {table.dtype}" if isinstance(table, np.ndarray)
               else check.describe(table))
        raise TypeError(f"table must be a non-empty 2-D integer array (vocab_size, top_k), a "
                        f"token's experts a row, got {got}")
    if table.min() < 0 or table.max() >= n_experts:
        raise ValueError(f"table must hold experts in [0, {n_experts - 1}], got values in "
                         f"[{table.min()}, {table.max()}]")
    if distinct and (repeats := np.any(np.diff(np.sort(table, axis=-1), axis=-1) == 0,
                                       axis=-1)).any():  # (vocab_size,): a row's repeats
        raise ValueError(f"table row {int(np.argmax(repeats))} names one expert twice: a "
                         "token's experts must be distinct")
    out = np.array(table, dtype=np.int64)
    out.flags.writeable = False
    return out


def check_token_ids(token_ids: object, lead: tuple[int, ...], vocab_size: int) -> np.ndarray:
    """``token_ids`` checked to be integers in ``[0, vocab_size)`` of shape ``lead`` (``x``'s
    leading axes), flattened to ``(N,)``."""
    if token_ids is None:
        raise TypeError("this layer routes by a token-id table: pass token_ids, one id per row "
                        f"of x (shape {lead})")
    ids = np.asarray(token_ids)
    if not np.issubdtype(ids.dtype, np.integer) or ids.shape != lead:
        raise TypeError(f"token_ids must be integers of shape {lead} (x's leading axes), got "
                        f"shape {ids.shape} and dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= vocab_size):
        raise ValueError(f"token_ids must lie in [0, {vocab_size - 1}] (the table's rows), got "
                         f"values in [{ids.min()}, {ids.max()}]")
    return ids.reshape(-1)


def route_backward(logits: FloatArray, p: FloatArray, chosen: np.ndarray, share: FloatArray,
                   dweights: FloatArray, *, score: str = "softmax", normalize: bool = True,
                   scale: float = 1.0) -> FloatArray:
    """``dL/dlogits`` ``(N, n_experts)`` from ``dL/dweights`` ``(N, top_k)``, for the logits
    and ``route``'s (or ``hash_route``'s) ``p``, ``chosen`` and ``share``; the unchosen, a
    choice bias and a table get none."""
    with np.errstate(over="ignore", invalid="ignore"):
        row = np.arange(len(p))[:, None]  # (N, 1), pairs with `chosen` to index p
        slope = log_score_slope(logits, p, score)  # (N, n_experts)
        dshare = scale * dweights  # (N, top_k): weights = scale * share
        dlogits = np.zeros_like(p)  # (N, n_experts)
        if normalize:  # share = softmax(log p of the chosen): softmax's chain rule
            dlog_p = share * (dshare - np.sum(dshare * share, axis=-1, keepdims=True))
            # log p is the logits less a constant (softmax), log sigmoid or log softplus / 2
            dlogits[row, chosen] = dlog_p * slope[row, chosen]
        else:  # share = the chosen p
            dlogits[row, chosen] = dshare
            if score == "softmax":  # softmax's chain rule
                dlogits = p * (dlogits - np.sum(dlogits * p, axis=-1, keepdims=True))
            else:
                dlogits = dlogits * p * slope  # dp/dz = p * d log p / dz, elementwise
        return dlogits


def load_balancing_loss(logits: FloatArray, chosen: np.ndarray, score: str) -> float:
    """Switch Transformer's auxiliary loss as Hugging Face's Mixtral computes it, for rows'
    logits ``(N, n_experts)``, ``N > 0``, and their chosen experts ``(N, top_k)``.

    ``n_experts * sum_i f_i * P_i``: ``f_i`` the share of rows choosing expert ``i`` (summing
    to ``top_k``), ``P_i`` the mean score ``p_i``; ``top_k`` when both are even. Sigmoid scores
    (and sqrtsoftplus) scores are first divided by their sum in each row (DeepSeek-V3's
    Equation 19), as a softmax of
    ``log p``: no 0 / 0.
    """
    n_experts = logits.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):
        p = softmax(log_scores(logits, score))  # (N, n_experts), rows sum to 1
    f = np.bincount(chosen.ravel(), minlength=n_experts) / len(p)  # (n_experts,)
    return float(n_experts * np.sum(f * p.mean(axis=0)))


def load_balancing_backward(logits: FloatArray, chosen: np.ndarray, score: str) -> FloatArray:
    """``d load_balancing_loss / d logits`` ``(N, n_experts)``, the choice held fixed: the
    shares ``f_i`` are step functions, so the gradient flows through the mean scores alone,
    ``dL/dP_i = n_experts * f_i``."""
    n, n_experts = logits.shape
    f = np.bincount(chosen.ravel(), minlength=n_experts) / n  # (n_experts,)
    g = n_experts * f / n  # dL/dq for each row's scores q: (n_experts,)
    with np.errstate(over="ignore", invalid="ignore"):
        p = scores(logits, score)  # (N, n_experts)
        if score == "softmax":  # q = p
            dlogits: FloatArray = p * (g - np.sum(p * g, axis=-1, keepdims=True))
        else:  # q = p / sum(p) = softmax(log p), d log p / dz = log_score_slope
            q = softmax(log_scores(logits, score))  # (N, n_experts)
            dlogits = (q * (g - np.sum(g * q, axis=-1, keepdims=True))
                       * log_score_slope(logits, p, score))
    return dlogits


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


check_top_k = check.top_k  # k if an int in [1, n_experts]: the counts check it too


def check_groups(n_groups: object, top_groups: object, n_experts: int,
                 k: int) -> tuple[int, int]:
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
    if k > top_groups * size:
        raise ValueError(f"top_k = {k} is more than the {top_groups * size} experts of "
                         f"top_groups = {top_groups} groups of {size}")
    return n_groups, top_groups


def expert_vector(value: object, name: str, n_experts: int, dtype: np.dtype[Any]) -> FloatArray:
    """``value`` as a finite ``(n_experts,)`` array of ``dtype`` (a choice bias, a router bias)."""
    b = check.params({name: value}, {name: "n_experts"}, known={"n_experts": n_experts})[0]
    if (b_arr := b[name]) is None or b_arr.dtype != dtype:
        raise TypeError(f"{name} has dtype {None if b_arr is None else b_arr.dtype} but the "
                        f"experts {dtype}")
    if not np.all(np.isfinite(b_arr)):
        raise ValueError(f"{name} must be finite: a NaN or infinite {name} makes the choice "
                         "meaningless")
    return b_arr
