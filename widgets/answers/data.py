"""The exercises' answer boxes (docs/exercises.md): each expected answer computed by ffn.

An exercise with a numeric answer gets a box per number it asks for. Each `Answer` names its
exercise, the box's label, the computation (the one its solution runs, with ffn) and the
rounding the exercise states: decimals, significant figures, or exact (a whole number).
`expected()` is the value at that rounding, as the page's JSON carries it to lab.js, which
checks what a reader types. tests/test_widget_answers.py ties every answer to what the solution
prints on the page.
"""

from __future__ import annotations

import dataclasses
import functools
import html
from collections.abc import Callable

import numpy as np
from scipy import optimize  # type: ignore[import-untyped, unused-ignore]

import ffn
from ffn.models import ModelDims
from widgets._shared import fallback

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight")


@dataclasses.dataclass(frozen=True)
class Answer:
    exercise: str  # "L2.1": the heading's id on the page
    label: str  # what the box asks for, after "Your answer:"
    compute: Callable[[], float | int]  # the solution's computation, with ffn
    decimals: int | None = None  # to this many decimals; neither this nor figures: exact
    figures: int | None = None  # to this many significant figures

    def rounding(self) -> dict[str, int | bool]:
        """How lab.js's checkAnswer compares: {"decimals": d}, {"figures": n} or
        {"exact": true}."""
        if self.decimals is not None:
            return {"decimals": self.decimals}
        if self.figures is not None:
            return {"figures": self.figures}
        return {"exact": True}

    def expected(self) -> str:
        """ffn's value at the stated rounding: "-0.24721", "2.78e+12", "4722432"."""
        value = self.compute()
        if self.decimals is not None:
            return f"{value:.{self.decimals}f}"
        if self.figures is not None:
            return f"{value:.{self.figures - 1}e}"
        if float(value) != int(value):
            raise ValueError(f"{self.exercise} {self.label}: {value!r} is not a whole number")
        return str(int(value))

    def shown(self) -> str:
        """The expected answer as the widget confirms it: thousands grouped when exact."""
        exact = self.decimals is None and self.figures is None
        return f"{int(self.expected()):,}" if exact else self.expected()

    def rounding_words(self) -> str:
        """"to five decimals", "to three significant figures", "exactly"."""
        if self.decimals is not None:
            return f"to {NUMBER_WORDS[self.decimals]} decimal{'s' * (self.decimals != 1)}"
        if self.figures is not None:
            return f"to {NUMBER_WORDS[self.figures]} significant figures"
        return "exactly"


def _shapes() -> tuple[tuple[int, ...], tuple[int, ...]]:
    block = ffn.FeedForward.random(512, 2048)
    return block.W1.shape, block.W2.shape


def _hidden_unit(w: list[float], bias: float) -> float:
    x = np.array([1.0, 0.0, -1.0, 2.0])
    return float(ffn.relu((x * np.array(w)).sum() + bias))  # (x w + b) through ReLU


def _l3_3() -> list[float]:
    W1, W2 = [[1.0, 0.0], [-1.0, 2.0]], [[2.0, -1.0], [0.0, 1.0]]
    block = ffn.FeedForward(W1, [0.0, 1.0], W2, [0.0, 0.0], activation="relu")
    return [float(v) for v in block([1.0, -2.0])]


def _share_with_biases() -> float:
    with_bias = ffn.count_parameters(768, 4 * 768)
    return with_bias / (ffn.count_attention_parameters(768) + with_bias)


def _gated_match() -> int:
    d_ff = 8 * 768 // 3
    gated = ffn.count_parameters(768, d_ff, bias=False, gated=True)
    if gated != ffn.count_parameters(768, 4 * 768, bias=False):
        raise ValueError(f"a gated FFN with d_ff {d_ff} has {gated:,} weights, not the plain's")
    return d_ff


def _x3_last(name: str) -> int:
    steps = ffn.FeedForward.random(16, 64).forward_trace(np.zeros((2, 5, 16)))
    return int(getattr(steps, name).shape[-1])


def _gelu_minimum() -> float:
    return float(optimize.brentq(lambda v: float(ffn.gelu_grad(v)), -2.0, -0.1, xtol=1e-12))


def _x6() -> int:
    m = ffn.get_model("GPT-2 small")
    return m.n_layers * ffn.count_flops(m.d_model, m.resolved_d_ff, n_tokens=8 * 1024,
                                        backward=True)


def _gpt2_medium() -> ModelDims:
    return ffn.get_model("GPT-2 medium")


ANSWERS: tuple[Answer, ...] = (
    Answer("L1.1", "rows of W1", lambda: _shapes()[0][0]),
    Answer("L1.1", "columns of W1", lambda: _shapes()[0][1]),
    Answer("L1.1", "rows of W2", lambda: _shapes()[1][0]),
    Answer("L1.1", "columns of W2", lambda: _shapes()[1][1]),
    Answer("L2.1", "the first hidden unit", lambda: _hidden_unit([0.5, 0.2, -0.3, 0.1], 0.1),
           decimals=1),
    Answer("L2.2", "ReLU's output", lambda: _hidden_unit([-0.4, 0.5, 0.2, -0.6], -0.1)),
    Answer("L2.3", "ReLU(\N{MINUS SIGN}1.9)", lambda: float(ffn.relu(-1.9))),
    Answer("L2.3", "SiLU(\N{MINUS SIGN}1.9)", lambda: float(ffn.silu(-1.9)), decimals=5),
    Answer("L3.1", "parameters", lambda: ffn.count_parameters(768, 3072)),
    Answer("L3.3", "first entry of FFN(x)", lambda: _l3_3()[0]),
    Answer("L3.3", "second entry of FFN(x)", lambda: _l3_3()[1]),
    Answer("L5.1", "the tanh approximation at 1",
           lambda: float(ffn.gelu(1.0, approximate="tanh")), decimals=6),
    Answer("L5.1", "the exact GELU(1)", lambda: float(ffn.gelu(1.0)), decimals=6),
    Answer("L5.2", "the FFN's share, biases ignored", lambda: 8 / (4 + 8), decimals=4),
    Answer("L5.2", "the share with biases, d_model = 768", _share_with_biases, decimals=5),
    Answer("L5.3", "the largest whole r",
           lambda: ffn.largest_d_ff(2_000_000, 500, bias=False) // 500),
    Answer("X1", "parameters of one FFN", lambda: _gpt2_medium().ffn_parameters_per_layer()),
    Answer("X1", "parameters of all FFNs", lambda: _gpt2_medium().ffn_parameters()),
    Answer("X1", "the FFNs' share", lambda: _gpt2_medium().ffn_share(), decimals=4),
    Answer("X2", "d_ff for d_model = 768", _gated_match),
    Answer("X3", "last dimension of h_pre", lambda: _x3_last("h_pre")),
    Answer("X3", "last dimension of h", lambda: _x3_last("h")),
    Answer("X3", "last dimension of y", lambda: _x3_last("y")),
    Answer("X4", "the x where GELU is smallest", _gelu_minimum, decimals=4),
    Answer("X4", "GELU's smallest value", lambda: float(ffn.gelu(_gelu_minimum())),
           decimals=4),
    Answer("X6", "FLOPs per training step", _x6, figures=3),
)


def widget_name(exercise: str) -> str:
    """The page's widget for an exercise's boxes: "L2.1" -> "answers-L2-1"."""
    return "answers-" + exercise.replace(".", "-")


def for_exercise(exercise: str) -> list[Answer]:
    return [a for a in ANSWERS if a.exercise == exercise]


def render(exercise: str) -> str:
    """An exercise's boxes as the build writes them: a note for readers without JavaScript
    (the answer stays in the solution, which it does not spoil) and the boxes' data."""
    boxes = [{"label": a.label, "expected": a.expected(), "shown": a.shown(),
              "rounding": a.rounding(), "words": a.rounding_words()}
             for a in for_exercise(exercise)]
    note = html.escape("With JavaScript on, a box here checks your answer; the solution "
                       "below works it out.")
    return (f'<p class="ffn-widget__fallback ffn-answers__note">{note}</p>'
            + fallback.data({"exercise": exercise, "boxes": boxes}))


EXERCISES: tuple[str, ...] = tuple(dict.fromkeys(a.exercise for a in ANSWERS))
# One widget per exercise ("answers-L2-1"), all mounted by mount.js.
WIDGETS = {widget_name(e): functools.partial(render, e) for e in EXERCISES}
