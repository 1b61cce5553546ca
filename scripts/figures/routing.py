"""Figure of docs/moe-models.md (How models build their experts): load balance, bias against
loss.

The simulation is the page's (section "Balancing without an auxiliary loss"): same sizes,
seeds, token stream, bias step and loss weights, so the curves are the numbers it prints.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

import ffn

D_MODEL, N_EXPERTS, TOP_K, TOKENS, STEPS = 16, 16, 4, 512, 200
U = 0.01  # the bias update speed, u on the page (DeepSeek-V3 writes it gamma)
ALPHAS = (0.01, 0.1)  # weights of the auxiliary loss, one run each (learning rate 1)


def imbalance(load: np.ndarray) -> float:
    """The busiest expert's load over the mean load."""
    return float(load.max() / load.mean())


def balancing_runs() -> dict[str, list[float]]:
    """Imbalance at each step of one token stream: unbalanced, by the bias, by the loss."""
    base = ffn.MixtureOfExperts.random(D_MODEL, 4, N_EXPERTS, TOP_K, "swiglu", seed=3)
    rng = np.random.default_rng(4)
    offset = rng.normal(size=D_MODEL)  # (d_model,): every token leans the same way
    stream = [rng.normal(size=(TOKENS, D_MODEL)) + offset for _ in range(STEPS)]
    runs: dict[str, list[float]] = {"no balancing": [], f"bias, u = {U:g}": []}
    bias = np.zeros(N_EXPERTS)
    for x in stream:
        for name, b in (("no balancing", None), (f"bias, u = {U:g}", bias)):
            moe = ffn.MixtureOfExperts(base.router, list(base.experts), TOP_K, score="sigmoid",
                                       bias=b)
            runs[name].append(imbalance(moe.dispatch(x).assigned))
        load = moe.dispatch(x).assigned  # (n_experts,), the biased router's
        bias = bias + U * np.sign(load.mean() - load)  # up if underloaded, down if over
    for alpha in ALPHAS:
        router, name = np.array(base.router), f"loss, alpha = {alpha:g}"
        runs[name] = []
        for x in stream:
            moe = ffn.MixtureOfExperts(router, list(base.experts), TOP_K)  # softmax
            runs[name].append(imbalance(moe.dispatch(x).assigned))
            router = router - alpha * moe.load_balancing_grad(x)  # (d_model, n_experts)
    return runs


def balancing() -> Figure:
    """Largest over mean load, step by step, one line per way of balancing."""
    fig = Figure()
    ax = fig.add_subplot()
    for label, values in balancing_runs().items():
        ax.plot(np.arange(STEPS), values, linewidth=1.4, label=label)
    ax.axhline(1.0, color=ax.xaxis.label.get_color(), linestyle="--", linewidth=1.0)
    ax.set_xlabel("step (one batch of 512 tokens)")
    ax.set_ylabel("largest load / mean load")
    ax.legend(fontsize=9)
    return fig


FIGURES = {"moe-balancing": balancing}
