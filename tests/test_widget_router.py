"""The router explorer's arithmetic (widgets/router/lab.js) against ffn, in Node.

`route` is run on 1,000 hypothesis-generated inputs for each score function
(`max_examples=1000`, derandomized) and compared with ffn's own `ffn.routing.route` of those
logits (widgets/router/data.py's ffn_route), the function `MixtureOfExperts.route` calls
(checked here too, through the identity router). Each input also draws 1 to 16 experts,
top-k, `normalize` and `scale`, as MixtureOfExperts takes them (the widget itself
renormalises and leaves the scale at 1).
What is compared:

- the chosen experts and their order: equal, always. The inputs make that a fair demand. The
  logits come from a grid of sixteenths (which repeats values, so exact ties are frequent) or
  from any float in [-20, 20]; the biases are none, zero, from a grid of 64ths, or any float
  in [-2, 2]; a float under 1e-6 in size becomes 0 (no_tiny). Without a bias the logits
  choose (ffn's rule, for both scores): the same doubles in both languages, no near-tie. With
  one, two experts with the same argument of exp (logit - max for softmax, -logit for
  sigmoid) and the same bias get the same score and choice value in both languages (the
  same operations on the same doubles),
  so ffn's rule for ties (numpy's stable argsort of -(p + bias): the lower index first) must
  be matched exactly. Two experts with different inputs, one of them chosen by ffn, whose
  choice values lie within a thousand times the rounding slack below (equal included), are a
  near-tie, which an ulp of exp may order either way: such an input is rejected with
  `assume`, and the test requires at most N / 20 rejections (seen: 2 for softmax, where a
  score of 1e-13 sits on a bias of 0.98, and 0 for sigmoid, of about 1,000 inputs each);
- the scores p, the choice values p + bias and the weights: within `64 eps` relative
  (eps = 2**-52) plus `64 eps` absolute for the choice values (p + bias may cancel to near
  zero). Why: V8's Math.exp (fdlibm) and glibc's exp are each within an ulp of the truth, so
  they may differ by 2 ulp; softmax then divides by a sum of up to 16 terms that numpy adds
  pairwise and JavaScript in a row (at most n - 1 roundings each), and the weights divide the
  chosen scores by their sum once more: at most about 2n + 5 ulp for n = 16 experts, under 64
  (seen: 2.9 ulp for the softmax scores, 3.0 for their weights, 1.3 and 2.2 for sigmoid's).
  The widget prints 3 decimals;
- listWords and ordinal (the widget's sentences and its rank column) print as
  widgets/router/data.py's list_words and ordinal; tests/browser/test_widget_router.py
  compares every string the page shows with that module's, from ffn's route.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ffn
from tests._node_lab import NodeLab
from widgets.router import data as widget_router
from widgets.router.data import ffn_route

pytestmark = pytest.mark.needs("npm")  # Node, which Debian's npm brings

N = 1000  # generated inputs per score function
SETTINGS = settings(database=None, deadline=None, max_examples=N, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
EPS = 2.0**-52
REL = 64 * EPS  # see the module's docstring
rejected = {"near ties": 0}


@pytest.fixture(scope="module")
def lab() -> Iterator[NodeLab]:
    node = NodeLab()
    yield node
    node.close()


def no_tiny(v: float) -> float:
    """0 for |v| < 1e-6: exp of such a value (or of such a shift) rounds to 1 in both
    libraries, which makes different inputs exact ties; hypothesis draws them often."""
    return 0.0 if abs(v) < 1e-6 else v


LOGIT = st.integers(-160, 160).map(lambda n: n / 16) | st.floats(-20.0, 20.0).map(no_tiny)
BIAS = (st.just(0.0) | st.integers(-64, 64).map(lambda n: n / 64)
        | st.floats(-2.0, 2.0).map(no_tiny))


@st.composite
def routes(draw: st.DrawFn) -> tuple[list[float], int, list[float] | None, bool, float]:
    n = draw(st.integers(1, 16))
    logits = draw(st.lists(LOGIT, min_size=n, max_size=n))
    bias = draw(st.none() | st.lists(BIAS, min_size=n, max_size=n))
    top_k = draw(st.integers(1, n))
    normalize = draw(st.booleans())
    scale = draw(st.just(1.0) | st.sampled_from([2.5, 16.0]) | st.floats(0.01, 100.0))
    return logits, top_k, bias, normalize, scale


def exp_arguments(logits: list[float], score: str) -> list[float]:
    """What each expert's exp is taken of: logit - max (softmax) or -logit (sigmoid). Equal
    arguments (and biases) give equal scores and choice values in both languages."""
    top = max(logits)
    return [v - top if score == "softmax" else -v for v in logits]


def near_tie(arguments: list[float], bias: list[float], p: np.ndarray, choice: np.ndarray,
             chosen: np.ndarray) -> bool:
    """Two experts with different exp arguments or biases, one of them chosen, whose choice
    values are closer than a thousand times what the two languages' roundings could move
    them (equal values included: p + bias may round two different scores to one value)."""
    for i in chosen.tolist():  # a pair of unchosen experts can be in either order
        for j in range(len(arguments)):
            same_input = arguments[i] == arguments[j] and bias[i] == bias[j]
            slack = 1000 * (REL * (p[i] + p[j]) + EPS * (abs(choice[i]) + abs(choice[j])))
            if not same_input and abs(choice[i] - choice[j]) <= slack:
                return True
    return False


def close(got: list[float], want: np.ndarray, absolute: float = 0.0) -> bool:
    return len(got) == len(want) and all(
        abs(g - w) <= REL * abs(w) + absolute for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
def test_route_equals_ffn(lab: NodeLab, score: str) -> None:
    @SETTINGS
    @given(case=routes())
    def check(case: tuple[list[float], int, list[float] | None, bool, float]) -> None:
        logits, top_k, bias, normalize, scale = case
        p, chosen, weights = ffn_route(logits, top_k, score, bias, normalize, scale)
        b = [0.0] * len(logits) if bias is None else bias
        choice = p + np.array(b)  # what ffn sorts (p itself without a bias)
        # without a bias the logits choose, the same doubles in both: no tie is near
        if bias is not None and near_tie(exp_arguments(logits, score), b, p, choice, chosen):
            rejected["near ties"] += 1
            assume(False)
        got = lab.call("route", logits, top_k, score, bias, normalize, scale)
        assert got["chosen"] == chosen.tolist(), (case, got, choice)
        assert close(got["scores"], p), (case, got["scores"], p)
        assert close(got["choice"], choice, absolute=REL), (case, got["choice"], choice)
        assert close(got["weights"], weights), (case, got["weights"], weights)

    rejected["near ties"] = 0
    check()
    assert rejected["near ties"] <= N // 20, rejected  # rare: see the docstring


@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
@pytest.mark.parametrize("logits, top_k", [
    ([0.5, 1e-17, 2e-17, -1.0], 2),  # logit - 0.5 rounds to -0.5 for both: one p
    ([800.0, 0.0, 1.0, -5.0], 2),  # softmax: p = 0 for all but the first (underflow)
    ([0.0, -1000.0, -999.0, 5.0], 3),
    ([40.0, 41.0, 0.0, -1.0], 1),  # sigmoid: p = 1.0 for both
    ([-800.0, -805.0, -790.0, -1000.0], 3),  # sigmoid: p underflows or is subnormal
])
def test_without_a_bias_the_logits_choose(lab: NodeLab, score: str, logits: list[float],
                                          top_k: int) -> None:
    # Issue 39 item 19: ffn chooses by the logits when there is no bias (the scores' order,
    # which their rounding may not keep); the JS did so for sigmoid alone, softmax chose by p.
    p, chosen, weights = ffn_route(logits, top_k, score)
    order = sorted(range(len(logits)), key=lambda i: (-logits[i], i))  # the rule, by hand
    assert chosen.tolist() == order[:top_k]  # ffn's choice is the rule's
    got = lab.call("route", logits, top_k, score)
    assert got["chosen"] == order[:top_k], got
    assert close(got["weights"], weights) and close(got["scores"], p), got


def test_the_routing_function_is_the_layers_route() -> None:
    # ffn_route calls ffn.routing.route on the logits; a layer routes x @ router with it. With
    # the identity router x @ eye(n) is x, bit for bit, so the two must agree bit for bit.
    rng = np.random.default_rng(0)
    for n in (1, 2, 8, 16):
        x = rng.normal(size=n) * 10.0 ** rng.integers(-3, 3, size=n)
        assert np.array_equal(x @ np.eye(n), x)
        p = ffn_route(list(x), 1, "sigmoid")[0]
        assert np.array_equal(p, 1.0 / (1.0 + np.exp(-x)))
        bias = rng.normal(size=n)
        for score, k in (("softmax", 1), ("sigmoid", n)):
            experts = [ffn.FeedForward.random(n, 1, seed=i) for i in range(n)]
            layer = ffn.MixtureOfExperts(np.eye(n), experts, k, False, score=score, bias=bias,
                                         scale=2.5)
            for got, want in zip(ffn_route(list(x), k, score, list(bias), False, 2.5),
                                 layer.route(x), strict=True):
                assert np.array_equal(got, want)


@pytest.mark.parametrize("score", ["softmax", "sigmoid"])
def test_exact_ties_go_to_the_lower_index(lab: NodeLab, score: str) -> None:
    # Equal logits (and biases): the lower index first, as numpy's stable argsort; a bias that
    # makes two experts equal from different scores is the near-tie the test above avoids.
    for logits, top_k, bias in [([1.0, 1.0, 1.0, 1.0], 2, None),
                                ([0.5, 2.0, 2.0, 0.5, 2.0], 3, None),
                                ([0.0, 3.0, 0.0, 3.0], 3, [0.1, 0.0, 0.1, 0.0]),
                                ([1.0] * 8, 8, [0.0, 0.2, 0.0, 0.2, 0.0, 0.0, 0.2, 0.0])]:
        want = ffn_route(logits, top_k, score, bias)[1].tolist()
        assert lab.call("route", logits, top_k, score, bias)["chosen"] == want


def test_the_example_is_the_chapters(lab: NodeLab) -> None:
    # The widget's tokens are the chapter's: its printed sigmoid scores and chosen experts
    # (with groups there; the widget has none, so only the scores are the chapter's lines).
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs"
    chapter = (docs / "moe-models.md").read_text("utf-8")
    logits = widget_router.example_logits()
    with np.printoptions(precision=3, suppress=True):
        s = np.array([ffn_route(row, 2, "sigmoid")[0] for row in logits])
        for line in str(s).splitlines():
            assert line.strip(" []") in chapter, line
    got = lab.call("route", logits[widget_router.TOKEN], 2, "sigmoid",
                   widget_router.example_bias())
    shown = widget_router.router_numbers(logits[widget_router.TOKEN], 2, "sigmoid",
                                         widget_router.example_bias())
    assert [str(i) for i in got["chosen"]] == shown["chosen"]
    assert shown["change"].startswith("With the bias, expert 6 replaces expert 5")


@SETTINGS
@given(items=st.lists(st.integers(0, 255).map(str), max_size=8))
def test_list_words(lab: NodeLab, items: list[str]) -> None:
    assert lab.call("listWords", items) == widget_router.list_words(items)


@SETTINGS
@given(data=st.data(), n_experts=st.integers(1, 16))
def test_bias_swap_names_who_came_in_and_who_left(lab: NodeLab, data: st.DataObject,
                                                  n_experts: int) -> None:
    """What the widget's sentence names: the experts the bias brought in, in the biased
    choice's order, and those it pushed out, in the unbiased choice's order (the oracle:
    membership tests written here, not router.js's Sets)."""
    experts = st.permutations(range(n_experts))
    k = data.draw(st.integers(1, n_experts))
    biased = data.draw(experts)[:k]
    unbiased = data.draw(experts)[:k]
    got = lab.call("biasSwap", biased, unbiased)
    assert got == {"added": [e for e in biased if e not in unbiased],
                   "removed": [e for e in unbiased if e not in biased]}


@pytest.mark.parametrize("n", range(1, 25))
def test_ordinal(lab: NodeLab, n: int) -> None:
    assert lab.call("ordinal", n) == widget_router.ordinal(n)


def test_refused_inputs(lab: NodeLab) -> None:
    for top_k in (0, 5, 1.5):
        with pytest.raises(RuntimeError, match="top_k"):
            lab.call("route", [0.0, 1.0, 2.0, 3.0], top_k, "softmax")
    with pytest.raises(RuntimeError, match="score"):
        lab.call("route", [0.0, 1.0], 1, "relu")
    assert math.isclose(sum(lab.call("route", [0.0, 1.0, 2.0], 2, "softmax")["weights"]), 1.0)


@pytest.mark.parametrize("routing", widget_router.ROUTINGS, ids=lambda r: r.name)
def test_presets_route_as_ffn(lab: NodeLab, routing: widget_router.Routing) -> None:
    # Each preset's settings on every token of the example: the widget's route and ffn's.
    bias = widget_router.preset_bias(routing)
    for logits in widget_router.example_logits():
        p, chosen, weights = ffn_route(logits, routing.top_k, routing.score, bias,
                                       routing.normalize)
        got = lab.call("route", logits, routing.top_k, routing.score, bias, routing.normalize)
        assert got["chosen"] == chosen.tolist(), routing
        assert close(got["scores"], p) and close(got["weights"], weights), routing


def test_presets_route_as_the_models_do() -> None:
    # The presets against transformers' configurations (test-only; no weights): top-k,
    # experts and renormalisation, where its config class holds the released model's values.
    from tests.test_torch_reference import import_or_skip

    transformers = import_or_skip("transformers")
    configs = {"Mixtral 8x7B": (transformers.MixtralConfig(), "num_local_experts", True),
               "DeepSeek-V3": (transformers.DeepseekV3Config(), "n_routed_experts",
                               transformers.DeepseekV3Config().norm_topk_prob),
               "Qwen1.5-MoE-A2.7B (Qwen2-MoE)": (transformers.Qwen2MoeConfig(), "num_experts",
                                                 transformers.Qwen2MoeConfig().norm_topk_prob),
               "gpt-oss-120b": (transformers.GptOssConfig(), "num_local_experts", True),
               "Llama 4 Scout": (transformers.Llama4TextConfig(), "num_local_experts", False)}
    for routing in widget_router.ROUTINGS:
        model = ffn.get_model(routing.model).moe
        assert model is not None, routing  # every preset is a mixture of experts
        assert routing.top_k == min(model.top_k, widget_router.N_EXPERTS)
        assert f"its {model.n_experts} experts" in routing.note() or (
            model.n_experts == widget_router.N_EXPERTS)
        if routing.name not in configs:  # Qwen3-30B-A3B: its released config.json, not the
            continue  # transformers default (ffn/models.py names the file)
        config, experts, normalize = configs[routing.name]
        assert config.num_experts_per_tok == model.top_k, routing
        assert getattr(config, experts) == model.n_experts, routing
        assert routing.normalize == normalize, routing
    # the sigmoid routers are DeepSeek-V3's and Llama 4's; the rest take a softmax
    assert [r.name for r in widget_router.ROUTINGS if r.score == "sigmoid"] == [
        "DeepSeek-V3", "Llama 4 Scout"]


def test_gpt_oss_softmax_of_the_chosen_is_the_renormalised_softmax() -> None:
    # The gpt-oss preset's claim: a softmax over the top-4 logits (transformers' GptOssTopK
    # Router) equals the softmax over all, its top 4 renormalised (ffn's route).
    for logits in widget_router.example_logits():
        z = np.array(logits)
        top = np.argsort(-z, kind="stable")[:4]
        e = np.exp(z[top] - z[top].max())
        _, chosen, weights = ffn_route(logits, 4, "softmax", None, True)
        assert chosen.tolist() == top.tolist()
        np.testing.assert_allclose(weights, e / e.sum(), rtol=1e-14)  # a few roundings apart
