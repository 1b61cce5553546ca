"""Composite layers keep their children's saved passes: ``backward`` runs no child's forward.

Each composite runs forward, then every child's ``forward`` is made to fail; its ``backward``
must still give what a twin's gives, bit for bit (the twin built from the same arrays, run
without the trap). A child called directly in between changes nothing either.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ffn
from ffn._layer import Layer

D = 4


def children(layer: Layer) -> list[Layer]:
    """The layers a composite runs: experts, shared experts, block, norms, attention."""
    names = ("experts", "shared_experts", "block", "norm", "ffn_norm", "attention")
    found: list[Layer] = []
    for name in names:
        value = getattr(layer, name, None)
        found += list(value) if isinstance(value, tuple) else [] if value is None else [value]
    return found


def moe(grouped: bool = False, **options: object) -> ffn.MixtureOfExperts:
    base = ffn.MixtureOfExperts.random(D, 3, 4, top_k=2, variant="swiglu", seed=1)
    shared = [ffn.GatedFeedForward.random(D, 5, seed=2), ffn.FeedForward.random(D, 2, seed=3)]
    return ffn.MixtureOfExperts(base.router, list(base.experts), 2, shared_experts=shared,
                                grouped=grouped, **options)  # type: ignore[arg-type]


MAKERS: dict[str, Callable[[], Layer]] = {
    "moe": moe,
    "moe grouped": lambda: moe(grouped=True),
    "moe inputs, gated shared": lambda: moe(combine="inputs", score="sigmoid", normalize=False,
                                            shared_gate=np.full((D, 2), 0.3)),
    "sublayer pre": lambda: ffn.Sublayer(ffn.FeedForward.random(D, 6, seed=4),
                                         ffn.LayerNorm(D), "pre"),
    "sublayer post": lambda: ffn.Sublayer(ffn.GatedFeedForward.random(D, 6, seed=5),
                                          ffn.RMSNorm(D), "post"),
    "parallel": lambda: ffn.ParallelBlock(
        ffn.Linear(np.random.default_rng(6).normal(size=(D, D))),
        ffn.FeedForward.random(D, 6, seed=7), ffn.LayerNorm(D), ffn.RMSNorm(D)),
}


def refuse(*args: object, **kwargs: object) -> np.ndarray:
    raise AssertionError("a child's forward ran inside backward")


@pytest.mark.parametrize("name", MAKERS)
def test_backward_runs_no_child_forward(name: str) -> None:
    rng = np.random.default_rng(8)
    x, dy, other = (rng.normal(size=(6, D)) for _ in range(3))
    twin = MAKERS[name]()
    twin(x)
    want = twin.backward(dy)
    layer = MAKERS[name]()
    layer(x)
    parts = children(layer)
    assert parts, name
    for part in parts:
        part(other)  # a direct call in between: its own pass, not the composite's
        object.__setattr__(part, "forward", refuse)  # any forward from here on fails
    got = layer.backward(dy)
    assert got.tobytes() == want.tobytes()
    for key, g in twin.grads.items():
        mine = layer.grads[key]
        assert (g is None and mine is None) or (
            g is not None and mine is not None and mine.tobytes() == g.tobytes()), key
