"""`ffn.count_parameters` against the arrays of an actual block."""

from __future__ import annotations

import numpy as np
import pytest

import ffn


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(
    ("d_model", "d_ff"), [(1, 1), (2, 3), (8, 32), (16, 64), (64, 256)]
)
def test_matches_the_sizes_of_a_real_block(d_model: int, d_ff: int, bias: bool) -> None:
    block = ffn.FeedForward.random(d_model, d_ff, bias=bias)
    arrays = [block.W1, block.b1, block.W2, block.b2]
    actual = sum(a.size for a in arrays if a is not None)
    assert ffn.count_parameters(d_model, d_ff, bias=bias) == actual


@pytest.mark.parametrize(
    ("d_model", "d_ff", "bias", "expected"),
    [
        (768, 3072, True, 4_722_432),  # GPT-2 small, one layer's FFN
        (768, 3072, False, 4_718_592),
        (
            4096,
            11008,
            False,
            90_177_536,
        ),  # two matrices of LLaMA-7B's three (no biases there)
    ],
)
def test_known_models(d_model: int, d_ff: int, bias: bool, expected: int) -> None:
    assert ffn.count_parameters(d_model, d_ff, bias=bias) == expected


def test_bias_defaults_to_true() -> None:
    assert ffn.count_parameters(3, 4) == 2 * 3 * 4 + 4 + 3


def test_returns_a_python_int_even_for_numpy_ints() -> None:
    n = ffn.count_parameters(np.int64(50_000), np.int32(200_000))
    assert type(n) is int
    assert n == 2 * 50_000 * 200_000 + 250_000  # no int32 / int64 overflow
