"""The memory explorer's arithmetic (widgets/memory/lab.js) against ffn, in Node.

memoryForward(W1, b1, W2, b2, x, activation) is compared with ffn.FeedForward.forward_trace
(its h_pre, h and y) on 1,000 hypothesis-generated tokens through the page's block
(ffn_docs/memory.py, ReLU and exact GELU) and on 1,000 random blocks (d_model 1 to 8, d_ff 1
to 16, biases not zero, weights scaled from 1e-3 to 1e3) with random tokens.

The tolerance, derived (u = 2**-53, the unit roundoff; gamma_n = n u / (1 - n u)):

- pre_i = x . k_i + b1_i is a sum of d_model + 1 terms (the products and the bias). Any order
  of summation, with or without fused multiply-adds, is within gamma_{d_model+1} * S_i of the
  exact sum, S_i = sum_j |x_j W1[j, i]| + |b1_i| (Higham, Accuracy and Stability of Numerical
  Algorithms, section 3.1). JavaScript adds j = 0, 1, ... then the bias; numpy's matmul may
  add in another order (BLAS); so the two differ by at most 2 gamma_{d_model+1} S_i.
- h_i = act(pre_i): ReLU is 1-Lipschitz and exact, so |dh_i| <= |dpre_i|. Exact GELU's slope
  is at most 1.13 (its maximum is 1.1289 at x = 2.42), and activations/lab.js's gelu is within
  8 eps (|GELU| + |x| + 1) of ffn.gelu at the same x (tests/test_widgets.py, eps = 2 u), so
  |dh_i| <= 1.13 |dpre_i| + 8 eps (|h_i| + |pre_i| + 1).
- y_k = sum_i h_i W2[i, k] + b2_k: each side is within gamma_{d_ff+1} T_k of the exact sum of
  its own h (T_k = sum_i |h_i W2[i, k]| + |b2_k|, with |h_i| + |dh_i| for JavaScript's), and
  the exact sums differ by at most sum_i |dh_i| |W2[i, k]|.

That bound is computed for every input from its own terms; at the page's scale (terms near 1)
it is of order 1e-15, while the page prints 2 decimals. The two sides do differ (numpy's
pre-activations and outputs are not always JavaScript's bits; on 3,000 random blocks the
largest pre-activation gap seen was 1.9 eps S_i, against a bound of (d_model + 1) eps S_i).
test_every_slider_position_prints_as_ffn checks that the printed strings agree at every
position the sliders can take. The units that fire (pre_i > 0) must agree wherever |pre_i|
exceeds its bound.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ffn
from tests._node_lab import NodeLab
from tests.test_widgets import SETTINGS
from widgets.memory import data as memory

pytestmark = pytest.mark.needs("npm")  # Node, which Debian's npm brings

U = 2.0**-53  # unit roundoff of float64
EPS = 2 * U
GELU_SLOPE = 1.13  # max |GELU'(x)| = 1.1289...


def gamma(n: int) -> float:
    return n * U / (1 - n * U)


@pytest.fixture(scope="module")
def lab() -> Iterator[NodeLab]:
    node = NodeLab()
    yield node
    node.close()


def arrays(block: ffn.FeedForward) -> list[list[float] | list[list[float]]]:
    """The block's W1, b1, W2, b2 as memoryForward takes them (and the widget's JSON holds)."""
    zeros_ff, zeros_model = np.zeros(block.d_ff), np.zeros(block.d_model)
    b1 = zeros_ff if block.b1 is None else block.b1
    b2 = zeros_model if block.b2 is None else block.b2
    return [np.asarray(block.W1).tolist(), np.asarray(b1).tolist(),
            np.asarray(block.W2).tolist(), np.asarray(b2).tolist()]


def assert_forward_as_ffn(lab: NodeLab, block: ffn.FeedForward, x: list[float]) -> None:
    W1, b1, W2, b2 = (np.asarray(a, dtype=np.float64) for a in arrays(block))
    got = lab.call("memoryForward", *arrays(block), x, block.activation)
    trace = block.forward_trace(np.asarray(x, dtype=np.float64))
    pre, h, y = (np.asarray(trace.h_pre), np.asarray(trace.h), np.asarray(trace.y))
    xs = np.asarray(x)
    pre_bound = 2 * gamma(block.d_model + 1) * ((np.abs(xs[:, None] * W1)).sum(0) + np.abs(b1))
    if block.activation == "relu":
        h_bound = pre_bound
    else:
        h_bound = GELU_SLOPE * pre_bound + 8 * EPS * (np.abs(h) + np.abs(pre) + 1)
    t_ffn = (np.abs(h[:, None] * W2)).sum(0) + np.abs(b2)
    t_js = ((np.abs(h) + h_bound)[:, None] * np.abs(W2)).sum(0) + np.abs(b2)
    y_bound = (gamma(block.d_ff + 1) * (t_ffn + t_js)
               + (h_bound[:, None] * np.abs(W2)).sum(0))
    for name, want, bound in (("pre", pre, pre_bound), ("h", h, h_bound), ("y", y, y_bound)):
        diff = np.abs(np.asarray(got[name]) - want)
        assert (diff <= bound).all(), (name, x, got[name], want.tolist(), bound.tolist())
    clear = np.abs(pre) > pre_bound  # where the sign of pre cannot flip between the two
    want_fires = set(np.flatnonzero((pre > 0) & clear).tolist())
    got_fires = set(got["fires"])
    assert got_fires & set(np.flatnonzero(clear).tolist()) == want_fires, (x, got["fires"])
    assert got["fires"] == sorted(got_fires)


COORDINATE = st.floats(-10.0, 10.0) | st.floats(-1e3, 1e3)  # the typed field's range, beyond


@pytest.mark.parametrize("activation", list(memory.ACTIVATIONS))
def test_page_block_forward_equals_ffn(lab: NodeLab, activation: str) -> None:
    block = memory.memory_block(activation)

    @SETTINGS
    @given(x=st.lists(COORDINATE, min_size=memory.D_MODEL, max_size=memory.D_MODEL))
    def check(x: list[float]) -> None:
        assert_forward_as_ffn(lab, block, x)

    check()


@SETTINGS
@given(d_model=st.integers(1, 8), d_ff=st.integers(1, 16), seed=st.integers(0, 2**32 - 1),
       scale=st.floats(1e-3, 1e3), activation=st.sampled_from(list(memory.ACTIVATIONS)))
def test_random_block_forward_equals_ffn(lab: NodeLab, d_model: int, d_ff: int, seed: int,
                                         scale: float, activation: str) -> None:
    rng = np.random.default_rng(seed)
    W1, W2 = rng.standard_normal((d_model, d_ff)), rng.standard_normal((d_ff, d_model))
    b1, b2 = rng.standard_normal(d_ff), rng.standard_normal(d_model)
    block = ffn.FeedForward(W1, b1, W2, b2, activation=activation)
    x = (scale * rng.standard_normal(d_model)).tolist()
    assert_forward_as_ffn(lab, block, x)


def test_the_page_block_is_the_figures() -> None:
    # The figure (scripts/figures/diagrams.py) draws kv_run(); the widget starts from the same.
    from scripts.figures import diagrams

    block, trace = diagrams.kv_run()
    assert block is memory.memory_block("relu")
    assert np.array_equal(trace.x, memory.memory_token())
    assert memory.memory_numbers(memory.memory_token())["h"] == [
        memory.shown(v) for v in trace.h]
    gelu = memory.memory_block("gelu")
    assert all(np.array_equal(getattr(gelu, n), getattr(block, n)) for n in ("W1", "b1", "W2",
                                                                              "b2"))


def shown_from_js(got: dict[str, list[float]]) -> dict[str, list[str] | str]:
    return {"pre": [memory.shown(v) for v in got["pre"]],
            "h": [memory.shown(v) for v in got["h"]],
            "y": [memory.shown(v) for v in got["y"]],
            "fires": memory.firing_sentence(got["fires"])}


@pytest.mark.parametrize("activation", list(memory.ACTIVATIONS))
def test_every_slider_position_prints_as_ffn(lab: NodeLab, activation: str) -> None:
    # Each coordinate across its slider (the others at the figure's token), parsed as the page
    # parses the slider's value: every string the widget prints equals ffn's, 2 decimals.
    block = memory.memory_block(activation)
    token = memory.memory_token().tolist()
    lo, hi, step = memory.SLIDER
    positions = [float(f"{n * step:.2f}") for n in range(round(lo / step), round(hi / step) + 1)]
    assert len(positions) == 801
    for j in range(memory.D_MODEL):
        for value in positions:
            x = list(token)
            x[j] = value
            got = lab.call("memoryForward", *arrays(block), x, activation)
            assert shown_from_js(got) == memory.memory_numbers(x, activation), (j, value)
    assert shown_from_js(lab.call("memoryForward", *arrays(block), token, activation)) \
        == memory.memory_numbers(token, activation)


@SETTINGS
@given(units=st.lists(st.integers(0, 15), unique=True).map(sorted))
def test_firing_sentence_as_python(lab: NodeLab, units: list[int]) -> None:
    assert lab.call("firingSentence", units) == memory.firing_sentence(units)


def test_firing_sentence_at_the_figures_token() -> None:
    assert memory.memory_numbers(memory.memory_token())["fires"] == "units 2, 3, 4 and 5 fire"


def test_unknown_activation_is_refused(lab: NodeLab) -> None:
    with pytest.raises(RuntimeError, match="unknown activation"):
        lab.call("memoryForward", *arrays(memory.memory_block()), [0.0, 0.0, 0.0], "tanh")
