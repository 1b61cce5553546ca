"""`ffn.count_parameters` against the arrays of an actual block."""

from __future__ import annotations

import math
from fractions import Fraction

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


@pytest.mark.parametrize(
    ("d_model", "multiple_of", "multiplier", "published_d_ff"),
    # Inputs: Meta's architecture arguments (llama-models models/sku_list.py, commit 8c88b8c);
    # widths: the intermediate_dim of torchtune's builders (commit bd2a0fc), which load the
    # released checkpoints. LLaMA-2-70B, LLaMA-3-8B, LLaMA-3-70B, LLaMA-3.1-405B, and LLaMA 3.2
    # 1B and 3B (sku_list's arch_args_1b and arch_args_3b; torchtune's llama3_2 builders).
    [(8192, 4096, 1.3, 28672), (4096, 1024, 1.3, 14336), (8192, 4096, 1.3, 28672),
     (16384, 4096, 1.2, 53248), (2048, 256, 1.5, 8192), (3072, 256, 1.0, 8192)],
)
def test_llama_d_ff_with_a_multiplier_matches_the_released_models(
        d_model: int, multiple_of: int, multiplier: float, published_d_ff: int) -> None:
    assert ffn.llama_d_ff(d_model, multiple_of, multiplier) == published_d_ff


def test_llama_d_ff_follows_metas_code_step_for_step() -> None:
    def meta(dim: int, multiple_of: int, ffn_dim_multiplier: float | None) -> int:
        # llama/model.py, class FeedForward (meta-llama/llama and meta-llama/llama3), verbatim
        hidden_dim = 4 * dim
        hidden_dim = int(2 * hidden_dim / 3)
        if ffn_dim_multiplier is not None:
            hidden_dim = int(ffn_dim_multiplier * hidden_dim)
        return multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)

    for d_model in [*range(1, 3000), 2**40 + 1, 2**49 + 7]:  # floor division == float division
        # (below 3 * 2**49 + 1; from there on, the test below)
        for multiple_of, multiplier in [(1, None), (256, None), (7, 1.3), (1024, 0.29), (1, 0.7)]:
            expected = meta(d_model, multiple_of, multiplier)
            if expected == 0:  # Meta's code gives a block with no hidden units; ffn refuses it
                with pytest.raises(ValueError, match="truncates to zero hidden units"):
                    ffn.llama_d_ff(d_model, multiple_of, multiplier)
                continue
            assert ffn.llama_d_ff(d_model, multiple_of, multiplier) == expected, (
                d_model, multiple_of, multiplier)
    # Where floating point shows: 0.29 * 200 is 57.99999999999999 in float64, so 57, not 58.
    assert ffn.llama_d_ff(75, 1, 0.29) == 57
    assert ffn.llama_d_ff(4096, 256, None) == ffn.llama_d_ff(4096) == 11008  # the default kept


def metas_two_thirds(d_model: int) -> int:
    """``int(2 * (4 * d_model) / 3)``, Meta's step in float64 (Python's int / int rounds once)."""
    return int(2 * (4 * d_model) / 3)


def test_llama_d_ff_is_the_exact_two_thirds_where_metas_float_is_off_by_one() -> None:
    """Issue 30: the docstring said ffn equals Meta's float formula exactly. Below
    8 * d_model / 3 = 2**52 a float keeps halves, so n + 1/3 and n + 2/3 both truncate to n; from
    d_model = 3 * 2**49 + 1 on (to 3 * 2**50, where the spacing becomes 2), n + 2/3 rounds up to
    n + 1. ffn's floor division is exact."""
    first = 3 * 2**49 + 1
    for d_model in [*range(first - 3000, first + 3000), 2**51, 2**51 + 1, 3 * 2**50 - 1]:
        exact = math.floor(Fraction(8 * d_model, 3))
        assert ffn.llama_d_ff(d_model, 1) == exact
        off_by = metas_two_thirds(d_model) - exact
        assert off_by == (d_model >= first and 8 * d_model % 3 == 2), d_model  # n + 2/3 up
    assert abs(metas_two_thirds(10**20 + 1) - math.floor(Fraction(8 * (10**20 + 1), 3))) > 1
    assert "3 * 2**49 + 1" in (ffn.llama_d_ff.__doc__ or "")


def test_llama_d_ff_of_a_width_beyond_a_float_names_d_model() -> None:
    """Issue 30: llama_d_ff(10**400, 256, 1.3) raised a bare OverflowError; without a
    multiplier the rule is integer arithmetic and has an answer."""
    with pytest.raises(ValueError, match="d_model"):
        ffn.llama_d_ff(10**400, 256, 1.3)
    assert ffn.llama_d_ff(10**400, 1) == 8 * 10**400 // 3


@pytest.mark.parametrize(
    ("multiplier", "error", "message"),
    [(0.0, ValueError, r"ffn_dim_multiplier must be in \(0, inf\), got 0.0"),
     (-1.3, ValueError, r"ffn_dim_multiplier must be in \(0, inf\), got -1.3"),
     (float("nan"), ValueError, r"ffn_dim_multiplier must be in \(0, inf\), got nan"),
     (float("inf"), ValueError, r"ffn_dim_multiplier must be in \(0, inf\), got inf"),
     ("1.3", TypeError, "ffn_dim_multiplier must be a real number, got str '1.3'"),
     (True, TypeError, "ffn_dim_multiplier must be a real number, got bool True")],
)
def test_llama_d_ff_rejects_a_bad_multiplier(multiplier: object, error: type[Exception],
                                            message: str) -> None:
    with pytest.raises(error, match=f"^{message}$"):
        ffn.llama_d_ff(4096, 1024, multiplier)  # type: ignore[arg-type]


def test_counting_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="n_tokens must be positive, got 0"):
        ffn.count_flops(4, 8, 0)
    with pytest.raises(TypeError, match="gated must be a bool"):
        ffn.count_parameters(4, 8, gated=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="multiple_of must be an int"):
        ffn.llama_d_ff(4096, multiple_of=2.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("d_model", [1, 3, 64, 768])
def test_attention_parameters_match_four_projection_arrays(d_model: int, bias: bool) -> None:
    # Q, K, V and O: each a (d_model, d_model) matrix and, with biases, a (d_model,) vector.
    shapes = [(d_model, d_model)] * 4 + ([(d_model,)] * 4 if bias else [])
    arrays = [np.empty(s, dtype=np.float32) for s in shapes]
    assert ffn.count_attention_parameters(d_model, bias=bias) == sum(a.size for a in arrays)


def test_attention_parameters_of_gpt2_small() -> None:
    # GPT-2's c_attn (768 -> 2304, fused Q, K, V) and c_proj (768 -> 768), with biases:
    # weight and bias sizes as stored in OpenAI's checkpoint.
    c_attn = 768 * 2304 + 2304
    c_proj = 768 * 768 + 768
    assert ffn.count_attention_parameters(768) == c_attn + c_proj


@pytest.mark.parametrize("gated", [False, True])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("d_model", [1, 5, 12, 500])
@pytest.mark.parametrize("budget", [200, 3_333, 10_000, 2_000_000])
def test_largest_d_ff_matches_a_search(budget: int, d_model: int, bias: bool,
                                       gated: bool) -> None:
    def fits(d_ff: int) -> bool:
        return ffn.count_parameters(d_model, d_ff, bias=bias, gated=gated) <= budget

    if not fits(1):
        with pytest.raises(ValueError, match=f"budget {budget} is below the"):
            ffn.largest_d_ff(budget, d_model, bias=bias, gated=gated)
        return
    # Independent oracle: walk up d_ff one by one (counts grow with d_ff).
    d_ff = 1
    while fits(d_ff + 1):
        d_ff += 1
    assert ffn.largest_d_ff(budget, d_model, bias=bias, gated=gated) == d_ff


def test_largest_d_ff_of_the_budget_exercise() -> None:
    # 2,000,000 weights at d_model = 500 (no biases): 2 * 500 * d_ff <= 2e6 gives d_ff = 2000.
    assert ffn.largest_d_ff(2_000_000, 500, bias=False) == 2000
    assert ffn.largest_d_ff(2_000_000, 500, bias=False, gated=True) == 1333


def test_new_counters_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="d_model must be positive, got 0"):
        ffn.count_attention_parameters(0)
    with pytest.raises(TypeError, match="bias must be a bool"):
        ffn.count_attention_parameters(8, bias=None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="budget must be an int"):
        ffn.largest_d_ff(1e6, 8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"budget 10 is below the 25 parameters"):
        ffn.largest_d_ff(10, 8)
