"""The worked examples' inputs and published numbers, as the pages transcribe them.

docs/worked-example.md (chapter 6) keeps each example's inputs in its code blocks;
docs/errata.md (the appendix) keeps the inputs again and the published arrays, where the reader
sees them. This module holds the same values for the errata figure (scripts/figures/errata.py).
tests/test_figures.py reads every `name = np.array(...)` of each example's code blocks on both
pages (and example 1's `published` dict) and checks that it equals the array here, so they
cannot drift apart.

Only the inputs and the printed (published) values are data: the right values are computed
with `ffn` when the figure is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

import ffn

Nested = list[float] | list[list[float]]


class Stage(NamedTuple):
    """One printed array of a tutorial."""

    label: str  # what the figure calls it
    name: str  # its key in Example.arrays (the page's variable or dict key)
    trace: str  # the field of ffn.FeedForwardTrace it should equal: h_pre, h or y
    decimals: int  # decimal places the tutorial printed


@dataclass(frozen=True)
class Example:
    """One worked example: its inputs, its published arrays and how the page builds the block."""

    section: str  # heading on docs/worked-example.md and docs/errata.md, up to the colon
    seed: str  # file number in the seeds
    title: str
    activation: str
    w1: str
    b1: str | None
    w2: str
    b2: str | None
    x: str
    transposed: bool  # the tutorial stores (out, in): the page passes W.T to ffn
    stages: tuple[Stage, ...]
    arrays: dict[str, Nested]

    def block(self) -> ffn.FeedForward:
        """The block the page builds from these weights."""
        a = {k: np.array(v) for k, v in self.arrays.items()}
        w1, w2 = (a[self.w1].T, a[self.w2].T) if self.transposed else (a[self.w1], a[self.w2])
        b1 = a[self.b1] if self.b1 is not None else None
        b2 = a[self.b2] if self.b2 is not None else None
        return ffn.FeedForward(w1, b1, w2, b2, activation=self.activation)

    def trace(self) -> ffn.FeedForwardTrace:
        return self.block().forward_trace(np.array(self.arrays[self.x]))


EXAMPLES: tuple[Example, ...] = (
    Example(
        section='Example 1',
        seed='002',
        title='Example 1: three features, four hidden units, ReLU',
        activation='relu',
        w1='W1', b1='b1', w2='W2', b2='b2', x='x',
        transposed=False,
        stages=(
            Stage('x @ W1 + b1', 'x @ W1 + b1', 'h_pre', 2),
            Stage('ReLU', 'relu', 'h', 2),
            Stage('output', 'output', 'y', 3),
        ),
        arrays={
            'W1': [
                [0.5, -0.3, 0.8, 0.2],
                [-0.2, 0.6, 0.1, -0.4],
                [0.3, 0.1, -0.5, 0.7],
            ],
            'b1': [0.1, -0.1, 0.2, 0.0],
            'W2': [
                [0.4, -0.2, 0.3],
                [0.1, 0.5, -0.1],
                [-0.3, 0.2, 0.4],
                [0.2, -0.4, 0.1],
            ],
            'b2': [0.05, -0.05, 0.1],
            'x': [1.0, -0.5, 0.8],
            'x @ W1 + b1': [0.94, -0.62, 0.55, 0.96],
            'relu': [0.94, 0.0, 0.55, 0.96],
            'output': [0.453, -0.512, 0.698],
        },
    ),
    Example(
        section='Example 2',
        seed='000',
        title='Example 2: five tokens, six hidden units, GELU',
        activation='gelu',
        w1='W1', b1=None, w2='W2', b2=None, x='X',
        transposed=False,
        stages=(
            Stage('X @ W1', 'pub_h_pre', 'h_pre', 3),
            Stage('GELU', 'pub_h', 'h', 3),
            Stage('output', 'pub_y', 'y', 3),
        ),
        arrays={
            'X': [
                [1.4, -1.52, 0.12],
                [-1.15, 1.29, -0.14],
                [0.71, 0.7, -1.41],
                [1.31, -1.14, -0.17],
                [-0.16, 0.91, -0.75],
            ],
            'W1': [
                [0.4, -0.2, 0.1, 0.6, -0.5, 0.3],
                [-0.1, 0.8, -0.4, 0.2, 0.7, -0.6],
                [0.5, 0.3, 0.9, -0.2, 0.1, 0.4],
            ],
            'W2': [
                [0.2, -0.4, 0.5],
                [-0.3, 0.6, 0.1],
                [0.7, -0.2, -0.5],
                [0.1, 0.3, 0.8],
                [-0.6, 0.5, 0.2],
                [0.4, -0.1, 0.3],
            ],
            'pub_h_pre': [
                [0.772, -1.46, 0.856, 0.512, -1.752, 1.428],
                [-0.644, 1.219, -0.757, -0.404, 1.463, -1.18],
                [-0.492, 0.118, -1.478, -0.566, -0.006, -0.891],
                [0.551, -1.228, 0.438, 0.575, -1.471, 1.012],
                [-0.529, 0.536, -1.055, 0.236, 0.64, -0.903],
            ],
            'pub_h': [
                [0.603, -0.106, 0.689, 0.357, -0.07, 1.319],
                [-0.167, 1.082, -0.17, -0.139, 1.354, -0.141],
                [-0.153, 0.064, -0.103, -0.161, -0.003, -0.167],
                [0.391, -0.135, 0.293, 0.414, -0.105, 0.854],
                [-0.158, 0.378, -0.154, 0.14, 0.473, -0.165],
            ],
            'pub_y': [
                [1.228, -0.564, 0.583],
                [-0.81, 1.42, -0.561],
                [-0.21, 0.117, -0.015],
                [0.836, -0.351, 0.39],
                [-0.339, 0.563, -0.14],
            ],
        },
    ),
    Example(
        section='Example 3',
        seed='001',
        title='Example 3: column vectors, eight hidden units, tanh GELU',
        activation='gelu_tanh',
        w1='W_1', b1=None, w2='W_2', b2=None, x='X',
        transposed=True,
        stages=(
            Stage('X @ W1', 'pub_h_pre', 'h_pre', 2),
            Stage('GELU', 'pub_h', 'h', 3),
            Stage('output', 'pub_y', 'y', 3),
        ),
        arrays={
            'W_1': [
                [0.1, 0.2, 0.3, 0.4],
                [0.2, 0.1, 0.4, 0.3],
                [0.3, 0.4, 0.1, 0.2],
                [0.4, 0.3, 0.2, 0.1],
                [0.1, 0.3, 0.2, 0.4],
                [0.2, 0.4, 0.1, 0.3],
                [0.3, 0.1, 0.4, 0.2],
                [0.4, 0.2, 0.3, 0.1],
            ],
            'W_2': [
                [0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1, 0.2],
                [0.2, 0.1, 0.2, 0.1, 0.2, 0.1, 0.2, 0.1],
                [0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2],
                [0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.1, 0.1],
            ],
            'X': [
                [1.0, 0.5, -0.3, 0.8],
                [0.2, -0.4, 0.6, 0.1],
            ],
            'pub_h_pre': [
                [0.43, 0.37, 0.63, 0.57, 0.51, 0.61, 0.39, 0.49],
                [0.17, 0.21, 0.23, 0.19, 0.2, 0.22, 0.29, 0.23],
            ],
            'pub_h': [
                [0.287, 0.241, 0.452, 0.4, 0.344, 0.432, 0.257, 0.328],
                [0.098, 0.126, 0.14, 0.113, 0.121, 0.134, 0.182, 0.139],
            ],
            'pub_y': [
                [0.498, 0.492, 0.489, 0.501],
                [0.187, 0.184, 0.182, 0.189],
            ],
        },
    ),

)
