"""The key-value memory example of docs/purpose.md: one small real ReLU block and one token.

The figure (scripts/figures/diagrams.py, `key_value`) and the memory explorer (the widget
`memory`, docs/javascripts/widgets/memory.js) both start from `memory_block()` and
`memory_token()`, so the widget opens on the very numbers the figure draws. What the widget
shows is printed here as the page prints it (`shown`, `firing_sentence`); its arithmetic,
docs/javascripts/lab/memory.js, is held to ffn in tests/test_widget_memory.py, and the page in
tests/browser/test_widget_memory.py.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

import ffn

D_MODEL, D_FF, SEED, TOKEN_SEED = 3, 6, 0, 3  # the block's widths and seeds, the token's seed
ACTIVATIONS = {"relu": "ReLU", "gelu": "GELU, exact"}  # the widget's choice; ReLU: the figure
DIGITS = 2  # decimals shown, as the figure's labels ("1.49")
SLIDER = (-4.0, 4.0, 0.01)  # each coordinate's slider: min, max, step
TYPED = (-10.0, 10.0)  # what the typed field accepts
MINUS = "\N{MINUS SIGN}"


@functools.cache
def memory_block(activation: str = "relu") -> ffn.FeedForward:
    """The block: `ffn.FeedForward.random` with d_model 3, d_ff 6, seed 0 (zero biases)."""
    return ffn.FeedForward.random(D_MODEL, D_FF, activation=activation, seed=SEED)


def memory_token() -> np.ndarray:
    """The token x: 3 standard normal numbers from seed 3 (a fresh array each call)."""
    return np.random.default_rng(TOKEN_SEED).standard_normal(D_MODEL)


def shown(value: float, digits: int = DIGITS) -> str:
    """A number as the widget and the figure print it: f"{v:.2f}" with a minus sign."""
    return f"{float(value):.{digits}f}".replace("-", MINUS)


def firing(h_pre: Sequence[float]) -> list[int]:
    """The units that fire: those whose match x . k_i + b1_i is above zero (ReLU's h_i > 0)."""
    return [i for i, v in enumerate(h_pre) if v > 0]


def firing_sentence(units: Sequence[int]) -> str:
    """"units 2, 3, 4 and 5 fire", "unit 3 fires", "no unit fires"."""
    if not units:
        return "no unit fires"
    if len(units) == 1:
        return f"unit {units[0]} fires"
    return f"units {', '.join(str(u) for u in units[:-1])} and {units[-1]} fire"


def memory_numbers(x: Sequence[float], activation: str = "relu") -> dict[str, list[str] | str]:
    """What the widget shows for token x: each unit's match, coefficient, and y, from ffn."""
    trace = memory_block(activation).forward_trace(np.asarray(x, dtype=np.float64))
    return {"pre": [shown(v) for v in trace.h_pre], "h": [shown(v) for v in trace.h],
            "y": [shown(v) for v in trace.y],
            "fires": firing_sentence(firing([float(v) for v in trace.h_pre]))}


TABLE_LABELS = {"relu": "ReLU", "gelu": "GELU"}  # the fallback table's, to keep it narrow


def fallback_cells(x: Sequence[float], activation: str) -> list[str]:
    """A row of the fallback table: the activation, h0 to h5, y, and the units that fire."""
    trace = memory_block(activation).forward_trace(np.asarray(x, dtype=np.float64))
    units = firing([float(v) for v in trace.h_pre])
    return [TABLE_LABELS[activation], *(shown(v) for v in trace.h),
            ", ".join(shown(v) for v in trace.y), ", ".join(map(str, units)) or "none"]


def table_tokens() -> list[tuple[str, list[float]]]:
    """The fallback table's tokens: the figure's, then each coordinate at its slider's ends."""
    token = [float(v) for v in memory_token()]
    rows = [("the figure's", token)]
    for j in range(D_MODEL):
        for end in SLIDER[:2]:
            x = list(token)
            x[j] = end
            rows.append((f"x{j} at {shown(end, 0)}", x))
    return rows
