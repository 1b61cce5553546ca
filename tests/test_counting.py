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


def _einsum_flops(subscripts: str, *shapes: tuple[int, ...]) -> int:
    """numpy's own FLOP count for a contraction: an oracle independent of ffn.count_flops."""
    report = np.einsum_path(subscripts, *(np.ones(s) for s in shapes), optimize=False)[1]
    line = next(ln for ln in report.splitlines() if "Naive FLOP count" in ln)
    return round(float(line.split(":")[1]))


@pytest.mark.parametrize("gated", [False, True])
# numpy prints its count with 4 significant digits: sizes keep each product below 10,000.
@pytest.mark.parametrize(("d_model", "d_ff", "n"), [(3, 4, 1), (8, 32, 5), (10, 40, 6), (5, 7, 9)])
def test_flops_match_numpys_count_of_the_products(d_model: int, d_ff: int, n: int,
                                                  gated: bool) -> None:
    up = _einsum_flops("nd,df->nf", (n, d_model), (d_model, d_ff))  # x @ W1 (and the gate)
    down = _einsum_flops("nf,fd->nd", (n, d_ff), (d_ff, d_model))  # h @ W2
    forward = (2 if gated else 1) * up + down
    assert ffn.count_flops(d_model, d_ff, n, gated=gated) == forward
    # backward: for each product, one for the input gradient and one for the weight gradient
    d_in = _einsum_flops("nf,df->nd", (n, d_ff), (d_model, d_ff))  # dh @ W1.T
    d_w = _einsum_flops("nd,nf->df", (n, d_model), (n, d_ff))  # x.T @ dh
    backward = (2 if gated else 1) * (d_in + d_w) + 2 * down
    assert ffn.count_flops(d_model, d_ff, n, gated=gated, backward=True) == forward + backward


def test_gated_parameters_have_a_third_matrix() -> None:
    # Three (d_model, d_ff) matrices plus biases of d_ff, d_ff and d_model entries.
    assert ffn.count_parameters(3, 4, gated=True) == 3 * 3 * 4 + 4 + 4 + 3
    assert ffn.count_parameters(3, 4, bias=False, gated=True) == 3 * 3 * 4


@pytest.mark.parametrize(
    ("d_model", "published_d_ff"),
    # hidden_dim of Meta's LLaMA 7B, 13B, 33B and 65B (params.json / the paper's Table 2)
    [(4096, 11008), (5120, 13824), (6656, 17920), (8192, 22016)],
)
def test_llama_d_ff_matches_the_published_models(d_model: int, published_d_ff: int) -> None:
    assert ffn.llama_d_ff(d_model) == published_d_ff


def test_counting_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="n_tokens must be positive, got 0"):
        ffn.count_flops(4, 8, 0)
    with pytest.raises(TypeError, match="gated must be a bool"):
        ffn.count_parameters(4, 8, gated=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="multiple_of must be an int"):
        ffn.llama_d_ff(4096, multiple_of=2.5)  # type: ignore[arg-type]
