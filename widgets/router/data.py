"""The router explorer (Mixture of experts): one token's router, by ffn.

Its tokens are those of the chapter's DeepSeek-style example (docs/moe.md, "Experts as DeepSeek
and Qwen build them"): `MixtureOfExperts.random(d_model=8, d_ff=4, n_experts=8, top_k=2,
variant="swiglu", seed=0)`, three tokens drawn with `default_rng(1)`, and the chapter's bias
of 0.15 on expert 6. Their logits `x @ router`, computed here by ffn at build time, are the
widget's data; lab.js routes them as `MixtureOfExperts.route` does
(one group, weights renormalised, no scale), held to ffn by tests/test_widget_router.py. The
strings below are what the widget prints for an input, from ffn's own route, for the fallback
table and for tests/browser/test_widget_router.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

import ffn
from widgets._shared import fallback

N_EXPERTS, TOP_K, N_TOKENS = 8, 2, 3  # the chapter's example
BIAS_EXPERT, BIAS = 6, 0.15  # the chapter's bias: 0.15 on expert 6, zero elsewhere
TOKEN = 1  # the token whose choice that bias changes: where the widget opens
SCORE_NAMES = {"softmax": "softmax (Mixtral, Switch)", "sigmoid": "sigmoid (DeepSeek-V3)"}
LOGIT_RANGE, BIAS_RANGE = 20.0, 2.0  # what the widget's fields accept, either sign
DASH = "\N{EM DASH}"  # an expert not chosen


@cache
def example() -> tuple[ffn.MixtureOfExperts, np.ndarray]:
    """The chapter's model and its three tokens ``(3, d_model)``."""
    base = ffn.MixtureOfExperts.random(d_model=8, d_ff=4, n_experts=N_EXPERTS, top_k=TOP_K,
                                       variant="swiglu", seed=0)
    x = np.random.default_rng(1).normal(size=(N_TOKENS, 8))  # (tokens, d_model)
    return base, x


def example_logits() -> list[list[float]]:
    """Each token's logits ``x @ router`` ``(3, n_experts)``, as floats."""
    base, x = example()
    logits: list[list[float]] = (x @ base.router).tolist()
    return logits


def example_bias() -> list[float]:
    """The chapter's bias ``(n_experts,)``."""
    return [BIAS if i == BIAS_EXPERT else 0.0 for i in range(N_EXPERTS)]


@cache
def _experts(n_experts: int) -> tuple[ffn.FeedForward, ...]:
    # The route never runs an expert: any blocks of width n_experts do.
    return tuple(ffn.FeedForward.random(n_experts, 1, seed=i) for i in range(n_experts))


def ffn_route(logits: Sequence[float], top_k: int, score: str = "softmax",
              bias: Sequence[float] | None = None, normalize: bool = True,
              scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``MixtureOfExperts.route`` of one token whose logits are ``logits``.

    The router is the identity (``d_model = n_experts``) and ``x`` the logits, so that
    ``x @ router`` is the logits exactly (one product by 1, the rest by 0). Returns the scores
    ``(n_experts,)``, the chosen experts and their weights ``(top_k,)``.
    """
    n = len(logits)
    moe = ffn.MixtureOfExperts(np.eye(n), list(_experts(n)), top_k=top_k, normalize=normalize,
                               score=score, bias=None if bias is None else np.array(bias,
                                                                                   float),
                               scale=scale)
    p, chosen, weights = moe.route(np.array(logits, dtype=float))
    return p, chosen, weights


def list_words(items: Sequence[str]) -> str:
    """``"3"``, ``"3 and 5"``, ``"3, 5 and 6"`` (lab.js's listWords)."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``4th`` ... ``11th``, ``12th``, ``13th`` ... ``111th``."""
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def router_numbers(logits: Sequence[float], top_k: int, score: str,
                   bias: Sequence[float]) -> dict[str, Any]:
    """What the widget shows for an input, from ffn: per expert its score, score plus bias,
    rank among the chosen and weight; the sentence for screen readers and what the bias
    changed."""
    p, chosen, weights = ffn_route(logits, top_k, score, bias)
    unbiased = ffn_route(logits, top_k, score)[1]
    choice = p + np.array(bias, dtype=float)  # what ffn sorts
    rank = {int(e): r for r, e in enumerate(chosen)}
    weight = {int(e): f"{w:.3f}" for e, w in zip(chosen, weights, strict=True)}
    n = len(logits)
    shown_chosen = [str(int(e)) for e in chosen]
    plural = len(chosen) > 1
    summary = (f"Expert{'s' if plural else ''} {list_words(shown_chosen)} chosen, "
               f"weight{'s' if plural else ''} "
               f"{list_words([f'{w:.3f}' for w in weights])}.")
    if not any(bias):
        change = "No bias: the scores alone choose."
    else:
        added = [str(int(e)) for e in chosen if int(e) not in set(unbiased.tolist())]
        removed = [str(int(e)) for e in unbiased if int(e) not in set(chosen.tolist())]
        if not added:
            change = ("The bias changes no expert chosen; the weights come from the unbiased "
                      "scores.")
        else:
            many = len(added) > 1
            change = (f"With the bias, expert{'s' if many else ''} {list_words(added)} "
                      f"replace{'' if many else 's'} expert{'s' if many else ''} "
                      f"{list_words(removed)}; the weights come from the unbiased scores.")
    return {
        "scores": [f"{v:.3f}" for v in p],
        "choice": [f"{v:.3f}" for v in choice],
        "rank": [ordinal(rank[i] + 1) if i in rank else DASH for i in range(n)],
        "weight": [weight.get(i, DASH) for i in range(n)],
        "chosen": shown_chosen,
        "summary": summary,
        "change": change,
    }


def _table() -> str:
    logits = example_logits()[TOKEN]
    top1, top2, biased = fallback_cases()
    rows = [[f"{i}", f"{logits[i]:.3f}", top1["scores"][i], top1["weight"][i],
             top2["weight"][i], biased["weight"][i]] for i in range(N_EXPERTS)]
    return fallback.table(
        f"Token {TOKEN} of the example above, sigmoid scores, no groups, computed by ffn when "
        f"the site was built: each expert's logit and score, and its weight when chosen "
        f"({DASH}: not chosen) for top-1, top-2, and top-2 with a bias of {BIAS:.2f} on "
        f"expert {BIAS_EXPERT} (the weights from the unbiased scores)",
        ["expert", "logit", "score", "weight, top-1", "weight, top-2",
         f"weight, top-2, bias on {BIAS_EXPERT}"], rows)


def fallback_cases() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The fallback table's three routes of the example token: top-1, top-2, top-2 biased."""
    logits, zero = example_logits()[TOKEN], [0.0] * N_EXPERTS
    return (router_numbers(logits, 1, "sigmoid", zero), router_numbers(logits, 2, "sigmoid", zero),
            router_numbers(logits, 2, "sigmoid", example_bias()))


def render() -> str:
    """The router explorer's fallback table and data: the tokens' logits and the bias."""
    return fallback.widget(_table(), {
        "logits": example_logits(), "bias": example_bias(), "token": TOKEN, "topK": TOP_K,
        "score": "sigmoid", "scores": SCORE_NAMES, "logitRange": LOGIT_RANGE,
        "biasRange": BIAS_RANGE})


WIDGETS = {"router": render}
