"""The memory explorer (docs/purpose.md): the page's key-value example (ffn_docs/memory.py,
the block and token its figure draws too), run by ffn.

What the widget shows is printed here as the page prints it (`shown`, `firing_sentence`,
`memory_numbers`); lab.js's arithmetic is held to ffn in tests/test_widget_memory.py, and the
page in tests/browser/test_widget_memory.py.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from ffn_docs.memory import D_FF, D_MODEL, memory_block, memory_token
from widgets._shared import fallback

__all__ = ["D_FF", "D_MODEL", "memory_block", "memory_token"]  # the example, used with these

ACTIVATIONS = {"relu": "ReLU", "gelu": "GELU, exact"}  # the widget's choice; ReLU: the figure
DIGITS = 2  # decimals shown, as the figure's labels ("1.49")
SLIDER = (-4.0, 4.0, 0.01)  # each coordinate's slider: min, max, step
TYPED = (-10.0, 10.0)  # what the typed field accepts
MINUS = "\N{MINUS SIGN}"


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


def memory_data() -> dict[str, object]:
    """The memory explorer's JSON: the page's block (as ffn holds it), its token and ranges."""
    block = memory_block("relu")
    assert block.b1 is not None and block.b2 is not None  # FeedForward.random: zero biases
    return {"W1": block.W1.tolist(), "b1": block.b1.tolist(), "W2": block.W2.tolist(),
            "b2": block.b2.tolist(), "token": memory_token().tolist(),
            "activations": ACTIVATIONS, "digits": DIGITS,
            "slider": list(SLIDER), "typed": list(TYPED)}


def render() -> str:
    """The explorer's fallback table and data. Each token a row group: its ReLU row (the
    figure's activation) and its GELU row."""
    head = "".join(f'<th scope="col">{h}</th>' for h in [
        "token x", "\N{GREEK SMALL LETTER SIGMA}", *(f"h{i}" for i in range(D_FF)),
        "y = \N{GREEK CAPITAL LETTER SIGMA} h<sub>i</sub> v<sub>i</sub> + b2",
        "units that fire"])
    groups = []
    for name, x in table_tokens():
        rows = []
        for activation in ACTIVATIONS:
            cells = "".join(f"<td>{html.escape(c)}</td>"
                            for c in fallback_cells(x, activation))
            rows.append(f"<tr>{cells}</tr>")
        token = ", ".join(shown(v) for v in x)
        groups.append(f'<tbody><tr><th scope="rowgroup" rowspan="{len(rows)}">({token})<br>'
                      f"{html.escape(name)}</th>{rows[0][4:]}{''.join(rows[1:])}</tbody>")
    caption = (
        f"The key-value memory of the figure above (d_model {D_MODEL}, d_ff "
        f"{D_FF}): each unit's coefficient h<sub>i</sub> = \N{GREEK SMALL LETTER SIGMA}"
        "(x \N{MIDDLE DOT} k<sub>i</sub> + b1<sub>i</sub>) and the output y, with ReLU and "
        "with exact GELU, for the figure's token and for each of its numbers at the ends of "
        "the explorer's sliders, computed by ffn when the site was built. A unit fires when "
        "x \N{MIDDLE DOT} k<sub>i</sub> + b1<sub>i</sub> &gt; 0.")
    table = fallback.region(caption, f"<thead><tr>{head}</tr></thead>{''.join(groups)}",
                            "ffn-memory__fallback")
    return fallback.widget(table, memory_data())


WIDGETS = {"memory": render}
