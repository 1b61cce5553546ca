"""The router explorer (How models build their experts): one token's router, by ffn.

Its tokens are those of the chapter's DeepSeek-style example (docs/moe-models.md, "Experts as
DeepSeek and Qwen build them"): `MixtureOfExperts.random(d_model=8, d_ff=4, n_experts=8, top_k=2,
variant="swiglu", seed=0)`, three tokens drawn with `default_rng(1)`, and the chapter's bias
of 0.15 on expert 6. Their logits `x @ router`, computed here by ffn at build time, are the
widget's data; lab.js routes them as `MixtureOfExperts.route` does
(one group, weights renormalised, no scale), held to ffn by tests/test_widget_router.py. The
strings below are what the widget prints for an input, from ffn's own route, for the fallback
table and for tests/browser/test_widget_router.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

import ffn
from ffn import routing
from widgets._shared import fallback

N_EXPERTS, TOP_K, N_TOKENS = 8, 2, 3  # the chapter's example
BIAS_EXPERT, BIAS = 6, 0.15  # the chapter's bias: 0.15 on expert 6, zero elsewhere
TOKEN = 1  # the token whose choice that bias changes: where the widget opens
SCORE_NAMES = {"softmax": "softmax (Mixtral, Switch)", "sigmoid": "sigmoid (DeepSeek-V3)"}
LOGIT_RANGE, BIAS_RANGE = 20.0, 2.0  # what the widget's fields accept, either sign
DASH = "\N{EM DASH}"  # an expert not chosen


@dataclass(frozen=True)
class Routing:
    """How one model routes, as far as the widget's controls and ``MixtureOfExperts.route``
    express it on the example's 8 experts: the score, top-k (the model's, at most 8),
    renormalisation, and the chapter's choice bias or none; ``not_shown``: what they cannot."""

    name: str  # the option's text
    model: str  # ffn.get_model's name: its n_experts and top_k
    score: str
    normalize: bool
    choice_bias: bool  # True: the chapter's bias (DeepSeek-V3 chooses with one); False: none
    why: str  # the rule in the model's code, and where it stands
    not_shown: str  # what the widget cannot show of it

    @property
    def top_k(self) -> int:
        moe = ffn.get_model(self.model).moe
        assert moe is not None  # every preset is a mixture of experts
        return min(moe.top_k, N_EXPERTS)

    def note(self) -> str:
        """The sentence the widget shows for the preset."""
        m = ffn.get_model(self.model).moe
        assert m is not None  # every preset is a mixture of experts
        every = (f" Top-{m.top_k} of these {N_EXPERTS} experts chooses every one, so neither "
                 "the scores nor a bias change the choice here; only the weights show it."
                 if m.top_k >= N_EXPERTS else "")
        missing = ([f"its {m.n_experts} experts"] if m.n_experts != N_EXPERTS else []) + (
            [self.not_shown] if self.not_shown else [])
        rest = (f" Not shown: {', '.join(missing)}." if missing
                else f" It has {N_EXPERTS} experts too: its routing is all here.")
        return f"{self.name}: {self.why}{every}{rest}"


_TRANSFORMERS = "transformers 5.24, models/"
ROUTINGS: tuple[Routing, ...] = (
    Routing("Mixtral 8x7B", "Mixtral 8x7B", "softmax", True, False,
            "a softmax over all experts, the top-2 renormalised to sum to 1 "
            f"({_TRANSFORMERS}mixtral/modeling_mixtral.py lines 107-109).", ""),
    Routing("DeepSeek-V3", "DeepSeek-V3", "sigmoid", True, True,
            "sigmoid scores, the top-8 chosen by score plus a bias (here the chapter's), "
            "weighed by their unbiased scores renormalised (norm_topk_prob true, "
            f"{_TRANSFORMERS}deepseek_v3/configuration_deepseek_v3.py line 101).",
            "its 8 groups of which a token may use 4, the scale 2.5 on the weights, its shared "
            "expert"),
    Routing("Qwen3-30B-A3B", "Qwen3-30B-A3B", "softmax", True, False,
            "a softmax over all experts, the top-8 renormalised: norm_topk_prob is true in the "
            "released config.json (transformers' default is false).", ""),
    Routing("Qwen1.5-MoE-A2.7B (Qwen2-MoE)", "Qwen1.5-MoE-A2.7B", "softmax", False, False,
            "a softmax over all experts, the top-4 kept as they are, not renormalised "
            f"(norm_topk_prob false, {_TRANSFORMERS}qwen2_moe/configuration_qwen2_moe.py "
            "line 100).", "its shared expert behind a sigmoid gate"),
    Routing("gpt-oss-120b", "gpt-oss-120b", "softmax", True, False,
            "a softmax over the top-4 logits only "
            f"({_TRANSFORMERS}gpt_oss/modeling_gpt_oss.py lines 128-129). That is this "
            "softmax over all experts with the top-4 renormalised: the softmax keeps the "
            "logits' order, so the same four are chosen, and dividing their scores by their "
            "sum cancels the denominator over the others.",
            "its router's bias (a part of its logits: none is added to these)"),
    Routing("Llama 4 Scout", "Llama 4 Scout", "sigmoid", False, False,
            "the top-1 logit, weighed by its sigmoid, not renormalised "
            f"({_TRANSFORMERS}llama4/modeling_llama4.py lines 148-151).",
            "that the weight scales the expert's input, not its output, and its shared "
            "expert"),
)
"""The router explorer's presets: how each model routes, on the chapter's 8 experts."""


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


def ffn_route(logits: Sequence[float], top_k: int, score: str = "softmax",
              bias: Sequence[float] | None = None, normalize: bool = True,
              scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ffn.routing.route`` of one token whose logits are ``logits``: the scores
    ``(n_experts,)``, the chosen experts and their weights ``(top_k,)``."""
    route = routing.route(np.array([logits], dtype=float), top_k, score=score,
                              bias=None if bias is None else np.array(bias, float),
                              normalize=normalize, scale=scale)
    return route.p[0], route.chosen[0], route.weights[0]


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
                   bias: Sequence[float], normalize: bool = True) -> dict[str, Any]:
    """What the widget shows for an input, from ffn: per expert its score, score plus bias,
    rank among the chosen and weight; the sentence for screen readers and what the bias
    changed."""
    p, chosen, weights = ffn_route(logits, top_k, score, bias, normalize)
    unbiased = ffn_route(logits, top_k, score, None, normalize)[1]
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
        "biasRange": BIAS_RANGE, "presets": [preset_data(r) for r in ROUTINGS]})


def preset_bias(routing: Routing) -> list[float]:
    """The biases a preset sets: the chapter's, or zeros."""
    return example_bias() if routing.choice_bias else [0.0] * N_EXPERTS


def preset_data(routing: Routing) -> dict[str, Any]:
    """A preset as the widget reads it: the controls' settings and its sentence."""
    return {"name": routing.name, "score": routing.score, "topK": routing.top_k,
            "normalize": routing.normalize, "bias": preset_bias(routing),
            "note": routing.note()}


WIDGETS = {"router": render}
