"""ffn.inference against independent counts: arrays' bytes, enumeration, exact algebra, PyTorch."""

from __future__ import annotations

import itertools
import math
import re
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import numpy as np
import pytest

import ffn
from ffn.inference import (
    H100_SXM,
    Accelerator,
    arithmetic_intensity,
    critical_batch,
    decode_bytes,
    decode_flops,
    experts_read,
    saved_per_token,
)

DOCS = Path(__file__).resolve().parents[1] / "docs"


def dims(name: str = "tiny", d_model: int = 16, d_ff: int = 64, n_layers: int = 3,
         gated: bool = False, bias: bool = True, moe: ffn.MoEDims | None = None
         ) -> ffn.ModelDims:
    return ffn.ModelDims(name, d_model, d_ff, n_layers, gated=gated, bias=bias, source="test",
                         moe=moe)


# --- experts_read ----------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "k", "batch"), [(4, 2, 1), (4, 2, 3), (5, 1, 4), (6, 3, 2),
                                               (3, 3, 2)])
def test_experts_read_is_the_mean_over_every_equally_likely_routing(n: int, k: int,
                                                                    batch: int) -> None:
    choices = list(itertools.combinations(range(n), k))  # one token's equally likely picks
    counts = [len(set().union(*picks)) for picks in itertools.product(choices, repeat=batch)]
    exact = Fraction(sum(counts), len(counts))
    assert experts_read(n, k, batch) == pytest.approx(float(exact), rel=1e-12)


def test_experts_read_reaches_every_expert_and_starts_at_top_k() -> None:
    assert experts_read(8, 2, 1) == pytest.approx(2.0, rel=1e-15)
    assert experts_read(8, 2, 10_000) == pytest.approx(8.0, rel=1e-15)
    with pytest.raises(ValueError, match="top_k = 9 is more than n_experts = 8"):
        experts_read(8, 9, 1)
    with pytest.raises(ValueError, match="batch must be positive"):
        experts_read(8, 2, 0)
    with pytest.raises(TypeError, match="top_k must be an int"):
        experts_read(8, 2.0, 1)


@pytest.mark.parametrize(("n", "k"), [(2**64 + 1, 2**64), (2**65, 3), (10**300, 7),
                                    (2**200 + 12345, 2**199 + 1)])
def test_experts_read_of_one_token_is_top_k_exactly_however_many_experts(n: int, k: int
                                                                        ) -> None:
    assert experts_read(n, k, 1) == float(k)  # n (1 - (1 - k/n)) = k, rounded once


@pytest.mark.parametrize(("n", "k", "batch"), [(2**64 + 1, 2**64, 1000), (2**70, 2**70 - 5, 300),
                                               (2**70, 3, 10**6), (10**20, 10**20 - 1, 257)])
def test_experts_read_of_many_tokens_with_huge_pools_matches_mpmath(n: int, k: int,
                                                                    batch: int) -> None:
    # Past 256 tokens ffn takes logarithms; near top_k/n_experts = 1 the ratio rounds to 1.0
    # in a float and log1p(-1.0) failed with a bare "math domain error" (issue 39, JS review).
    mpmath.mp.dps = 60
    ratio = mpmath.mpf(n - k) / mpmath.mpf(n)
    expected = mpmath.mpf(n) * (1 - ratio ** batch)
    assert experts_read(n, k, batch) == pytest.approx(float(expected), rel=1e-12)


# --- decode bytes and FLOPs, against the arrays a step touches ------------------------------

@pytest.mark.parametrize("batch", [1, 7])
def test_decode_bytes_are_the_bytes_of_the_arrays_a_plain_step_touches(batch: int) -> None:
    model = dims(bias=True)
    block = ffn.FeedForward.random(model.d_model, model.d_ff, dtype=np.float32)
    x = np.ones((batch, model.d_model), np.float32)  # (B, d_model)
    y = block(x)
    touched = sum(a.nbytes for a in (block.W1, block.b1, block.W2, block.b2, x, y))
    assert decode_bytes(model, batch, bytes_per_value=4) == model.n_layers * touched
    flops = ffn.count_flops(model.d_model, model.d_ff, n_tokens=batch)
    assert decode_flops(model, batch) == model.n_layers * flops


def test_decode_bytes_of_a_gated_model_count_its_three_matrices() -> None:
    model = dims(gated=True, bias=False)
    block = ffn.GatedFeedForward.random(model.d_model, model.d_ff, dtype=np.float32)
    x = np.ones((2, model.d_model), np.float32)
    y = block(x)
    touched = sum(a.nbytes for a in (block.W, block.V, block.W2, x, y))
    assert decode_bytes(model, 2, bytes_per_value=4) == model.n_layers * touched


def test_a_moe_step_of_one_token_reads_the_router_and_its_chosen_experts() -> None:
    model = dims(gated=True, bias=False, moe=ffn.MoEDims(4, 2))
    moe = ffn.MixtureOfExperts.random(model.d_model, model.d_ff, 4, top_k=2, variant="swiglu",
                                      dtype=np.float32)
    x = np.ones((1, model.d_model), np.float32)  # (1, d_model)
    _, chosen, _ = moe.route(x)
    y = moe(x)
    experts = sum(a.nbytes for i in chosen[0] for a in (moe.experts[i].W, moe.experts[i].V,
                                                        moe.experts[i].W2))
    touched = moe.router.nbytes + experts + x.nbytes + y.nbytes
    assert decode_bytes(model, 1, bytes_per_value=4) == pytest.approx(model.n_layers * touched,
                                                                      rel=1e-12)
    # A batch so large that every expert is read: the dense count of all experts and router.
    all_weights = model.ffn_parameters_per_layer()
    big = 10_000
    expected = model.n_layers * 4 * (all_weights + 2 * big * model.d_model)
    assert decode_bytes(model, big, bytes_per_value=4) == pytest.approx(expected, rel=1e-12)


def test_a_deepseek_style_step_reads_dense_layers_and_shared_experts_too() -> None:
    """One leading dense layer and, in each MoE layer, a shared expert besides the routed ones
    (DeepSeek-V3's layout): the arrays one token's step touches, counted one by one."""
    model = dims(gated=True, bias=False, n_layers=3, moe=ffn.MoEDims(
        4, 2, ffn.SharedExperts(32), dense=ffn.DenseLayers(1, 80)))
    dense = ffn.GatedFeedForward.random(model.d_model, 80, variant="swiglu", dtype=np.float32)
    shared = ffn.GatedFeedForward.random(model.d_model, 32, variant="swiglu", dtype=np.float32)
    routed = ffn.MixtureOfExperts.random(model.d_model, model.d_ff, 4, top_k=2,
                                         variant="swiglu", dtype=np.float32)
    moe = ffn.MixtureOfExperts(routed.router, routed.experts, top_k=2, shared_experts=[shared])
    x = np.ones((1, model.d_model), np.float32)  # (1, d_model)
    _, chosen, _ = moe.route(x)
    y = moe(x)
    io = x.nbytes + y.nbytes
    dense_layer = sum(a.nbytes for a in (dense.W, dense.V, dense.W2)) + io
    moe_layer = (moe.router.nbytes + io + sum(a.nbytes for i in chosen[0] for a in (
        moe.experts[i].W, moe.experts[i].V, moe.experts[i].W2))
        + sum(a.nbytes for a in (shared.W, shared.V, shared.W2)))
    assert decode_bytes(model, 1, bytes_per_value=4) == pytest.approx(
        dense_layer + 2 * moe_layer, rel=1e-12)


@pytest.mark.parametrize("model", [*ffn.models.ALL_MODELS, *ffn.models.RECENT_MOE_MODELS],
                         ids=lambda m: m.name)
def test_one_token_reads_the_ffn_weights_it_uses(model: ffn.ModelDims) -> None:
    """At batch 1 a token reads exactly its active FFN parameters (top_k experts of each MoE
    layer, the router and its bias, shared experts, every dense FFN, Llama 4's interleaved
    ones too) and its x and y in each layer: counted by ModelDims, which is checked against
    transformers' models part by part (tests/test_models*.py)."""
    expected = 2 * (model.ffn_parameters(active=True) + model.n_layers * 2 * model.d_model)
    assert decode_bytes(model, 1, bytes_per_value=2) == expected


@pytest.mark.parametrize("fmt", ["mxfp4", "nvfp4"])
def test_a_4_bit_step_moves_the_bytes_of_the_quantized_matrices(fmt: str) -> None:
    """Issue 35: the weights of a step in MXFP4 or NVFP4 are the bytes ffn.fp4 stores for W1 and
    W2 (4 bits a code, a byte a block scale; NVFP4's 4 bytes a tensor left out), and each x and
    y value takes the same 17/32 or 9/16 of a byte."""
    model = dims(d_model=32, d_ff=64, bias=False)
    block = ffn.FeedForward.random(model.d_model, model.d_ff, bias=False)
    tensor = 4 if fmt == "nvfp4" else 0
    weights = sum(ffn.quantize_blocks(w, fmt).nbytes - tensor for w in (block.W1, block.W2))
    per_value = Fraction(17, 32) if fmt == "mxfp4" else Fraction(9, 16)
    for batch in (1, 5):
        want = model.n_layers * (weights + per_value * 2 * batch * model.d_model)
        assert decode_bytes(model, batch, fmt) == float(want)
        assert decode_bytes(model, batch, float(per_value)) == float(want)
        assert decode_bytes(model, batch, per_value) == float(want)
    gpu = Accelerator("g", 1e12, 1e11, 1e9, "s")  # ridge point 10 FLOPs a byte
    by_loop = next(b for b in itertools.count(1) if Fraction(decode_flops(model, b)) / Fraction(
        model.n_layers * (weights + per_value * 2 * b * model.d_model)) >= gpu.ridge_point)
    assert critical_batch(model, gpu, fmt) == by_loop
    assert critical_batch(model, gpu, fmt) < critical_batch(model, gpu, 2)


def test_expert_bytes_per_value_prices_the_routed_matrices_alone() -> None:
    """A DeepSeek-style model (a leading dense layer, a shared expert in each MoE layer) with
    the routed experts' matrices in MXFP4 and every other array in float32: the arrays one
    token's step touches, counted one by one, the chosen experts' as ffn.fp4 stores them."""
    model = dims(d_model=32, d_ff=64, gated=True, bias=False, n_layers=3, moe=ffn.MoEDims(
        4, 2, ffn.SharedExperts(32), dense=ffn.DenseLayers(1, 96)))
    dense = ffn.GatedFeedForward.random(32, 96, variant="swiglu", dtype=np.float32)
    shared = ffn.GatedFeedForward.random(32, 32, variant="swiglu", dtype=np.float32)
    routed = ffn.MixtureOfExperts.random(32, 64, 4, top_k=2, variant="swiglu", dtype=np.float32)
    x = np.ones((1, 32), np.float32)  # (1, d_model)
    _, chosen, _ = routed.route(x)
    io = 2 * x.nbytes  # x read, y written
    dense_layer = sum(a.nbytes for a in (dense.W, dense.V, dense.W2)) + io
    moe_layer = (routed.router.nbytes + io + sum(a.nbytes for a in (shared.W, shared.V, shared.W2))
                 + sum(ffn.quantize_blocks(a, "mxfp4").nbytes for i in chosen[0]
                       for a in (routed.experts[i].W, routed.experts[i].V, routed.experts[i].W2)))
    for fmt in ("mxfp4", Fraction(17, 32), 4.25 / 8):
        assert decode_bytes(model, 1, 4, expert_bytes_per_value=fmt) == dense_layer + 2 * moe_layer
    # None, and the same size given twice, are the one-format count
    for same in (None, 4, "float32"):
        assert decode_bytes(model, 7, 4, same) == decode_bytes(model, 7, 4)
        assert arithmetic_intensity(model, 7, 4, same) == arithmetic_intensity(model, 7, 4)
    plain = dims()  # no routed experts: nothing to price apart
    assert decode_bytes(plain, 3, 2, "mxfp4") == decode_bytes(plain, 3, 2)


@pytest.mark.parametrize(("size", "error", "match"), [
    ("fp4", ValueError, "unknown bytes_per_value 'fp4'; valid: 'float32'"),
    (0.0, ValueError, r"bytes_per_value must be in \(0, inf\)"),
    (math.nan, ValueError, r"bytes_per_value must be in \(0, inf\)"),
    (math.inf, ValueError, r"bytes_per_value must be in \(0, inf\)"),
    (Fraction(-1, 2), ValueError, "bytes_per_value must be positive"),
    (None, TypeError, "bytes_per_value must be an int, a float, a Fraction or one of"),
    (2j, TypeError, "bytes_per_value must be an int"),
])
def test_bytes_per_value_names_what_it_takes(size: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        decode_bytes(dims(), 1, size)  # type: ignore[arg-type]
    with pytest.raises(error, match=match):
        critical_batch(dims(), H100_SXM, size)  # type: ignore[arg-type]
    if size is None:  # a valid expert_bytes_per_value: the routed matrices at bytes_per_value
        return
    moe = dims(moe=ffn.MoEDims(4, 2))
    expert_match = match.replace("bytes_per_value", "expert_bytes_per_value")
    for call in (lambda: decode_bytes(moe, 1, 2, size),  # type: ignore[arg-type]
                 lambda: arithmetic_intensity(moe, 1, 2, size),  # type: ignore[arg-type]
                 lambda: critical_batch(moe, H100_SXM, 2, size)):  # type: ignore[arg-type]
        with pytest.raises(error, match=expert_match):
            call()


def test_decode_functions_refuse_what_is_not_a_model_or_a_size() -> None:
    with pytest.raises(TypeError, match="model must be a ModelDims"):
        decode_bytes("GPT-2 small")
    with pytest.raises(ValueError, match="batch must be positive"):
        decode_flops(dims(), 0)
    with pytest.raises(TypeError, match="bytes_per_value must be an int"):
        decode_bytes(dims(), 1, bytes_per_value=True)


# --- the roofline and the critical batch ----------------------------------------------------

def test_the_h100_figures_are_the_datasheets() -> None:
    assert H100_SXM.peak_flops == 1979e12 / 2  # "1,979 teraFLOPS", with sparsity: dense is half
    assert H100_SXM.bandwidth == 3.35e12 and H100_SXM.memory == 80e9
    assert "1,979 teraFLOPS" in H100_SXM.source and "3.35TB/s" in H100_SXM.source
    assert H100_SXM.ridge_point == pytest.approx(295.373, rel=1e-5)


def test_attainable_is_the_lower_roof() -> None:
    gpu = Accelerator("toy", peak_flops=100.0, bandwidth=4.0, memory=1.0, source="test")
    assert gpu.ridge_point == 25.0
    assert [gpu.attainable(i) for i in (0, 5, 25, 1e6)] == [0.0, 20.0, 100.0, 100.0]
    with pytest.raises(ValueError, match="bandwidth must be in"):
        Accelerator("toy", 1.0, 0.0, 1.0, "test")
    with pytest.raises(TypeError, match="name must be a non-empty str"):
        Accelerator("", 1.0, 1.0, 1.0, "test")


def closed_form_critical_batch(model: ffn.ModelDims, peak: int, bandwidth: int, size: int) -> int:
    """Smallest B with 2 B F / (s (P + 2 B d)) >= peak / bandwidth, solved exactly (dense)."""
    ridge = Fraction(peak, bandwidth)
    flops = Fraction(model.ffn_flops_per_token(), model.n_layers)  # per token and layer
    weights = model.ffn_parameters_per_layer()
    # B * flops >= ridge * size * (weights + 2 B d)  <=>  B >= ridge s P / (flops - 2 ridge s d)
    return math.ceil(ridge * size * weights / (flops - 2 * ridge * size * model.d_model))


@pytest.mark.parametrize("name", ["GPT-2 small", "GPT-2 XL", "LLaMA-7B", "BERT base"])
@pytest.mark.parametrize(("peak", "bandwidth"), [(989_500, 3_350), (312_000, 2_039)])
def test_critical_batch_solves_the_inequality(name: str, peak: int, bandwidth: int) -> None:
    model = ffn.get_model(name)
    gpu = Accelerator("toy", peak_flops=peak * 1e9, bandwidth=bandwidth * 1e9, memory=1.0,
                      source="test")
    assert critical_batch(model, gpu) == closed_form_critical_batch(model, peak, bandwidth, 2)


def test_a_moe_critical_batch_brackets_the_ridge() -> None:
    mixtral = ffn.get_model("Mixtral 8x7B")
    b = critical_batch(mixtral, H100_SXM)
    assert arithmetic_intensity(mixtral, b - 1) < H100_SXM.ridge_point
    assert arithmetic_intensity(mixtral, b) >= H100_SXM.ridge_point


def test_no_critical_batch_where_the_tokens_alone_cost_too_many_bytes() -> None:
    gpu = Accelerator("compute-rich", peak_flops=1e18, bandwidth=1e9, memory=1.0, source="test")
    with pytest.raises(ValueError, match="intensity stays below"):
        critical_batch(dims(), gpu)
    with pytest.raises(TypeError, match="accelerator must be an Accelerator"):
        critical_batch(dims(), "H100")


# --- gpt-oss-120b as served: routed experts' matrices in MXFP4, all else bfloat16 ---------------
#
# gpt-oss-120b's checkpoint, as gpt_oss/torch/weights.py reads it (PARAM_NAME_MAP, lines 17-25)
# and the model card's Table 1 sizes it: in each of 36 blocks, 128 experts whose mlp1_weight
# (W and V interleaved, 2880 x 2 * 2880) and mlp2_weight (2880 x 2880) are MXFP4, 32 four-bit
# codes (16 bytes) and one E8M0 scale byte per 32 weights: 17/32 of a byte a weight; the experts'
# biases mlp1_bias (2 * 2880) and mlp2_bias (2880), the router's weight (2880 x 128) and bias
# (128) in BF16, 2 bytes; each token's x read and y written, 2880 BF16 values each.

OSS_LAYERS, OSS_D, OSS_F, OSS_EXPERTS, OSS_K = 36, 2880, 2880, 128, 4


def _gpt_oss_served_bytes(experts: float, tokens: int) -> float:
    """gpt-oss-120b's FFN bytes for ``tokens`` tokens reading ``experts`` experts a layer."""
    d, f = OSS_D, OSS_F
    weights = d * 2 * f + f * d  # mlp1_weight (W and V) and mlp2_weight, per expert
    assert weights % 32 == 0
    mxfp4 = weights // 32 * (16 + 1)  # 16 bytes of codes and a scale byte per 32 weights
    biases = 2 * (2 * f + d)  # mlp1_bias and mlp2_bias
    router = 2 * (d * OSS_EXPERTS + OSS_EXPERTS)  # gate.weight and gate.bias
    return OSS_LAYERS * (router + experts * (mxfp4 + biases) + 2 * 2 * d * tokens)


def _gpt_oss_flops(tokens: int) -> int:
    """A multiply and an add per weight used: the router's d x 128 and 4 experts' three d x f
    matrices, in each of 36 layers, for every token."""
    return 2 * tokens * OSS_LAYERS * (OSS_K * 3 * OSS_D * OSS_F + OSS_D * OSS_EXPERTS)


def test_gpt_oss_as_served_is_the_checkpoints_bytes() -> None:
    oss = ffn.get_model("gpt-oss-120b")
    assert decode_flops(oss, 5) == _gpt_oss_flops(5)
    # 1 token reads its 4 experts; 8192 read all 128 (experts_read gives 128.0 exactly there)
    assert experts_read(OSS_EXPERTS, OSS_K, 8192) == 128.0
    for tokens, experts in ((1, 4), (8192, 128)):
        served = decode_bytes(oss, tokens, expert_bytes_per_value="mxfp4")
        assert served == _gpt_oss_served_bytes(experts, tokens)  # exact: integers below 2**53
        assert arithmetic_intensity(oss, tokens, expert_bytes_per_value="mxfp4") == (
            _gpt_oss_flops(tokens) / _gpt_oss_served_bytes(experts, tokens))
    middle = experts_read(OSS_EXPERTS, OSS_K, 32)  # 81.7: a float, multiplied in another order
    assert decode_bytes(oss, 32, expert_bytes_per_value="mxfp4") == pytest.approx(
        _gpt_oss_served_bytes(middle, 32), rel=1e-15)
    assert arithmetic_intensity(oss, 32, expert_bytes_per_value="mxfp4") == pytest.approx(
        _gpt_oss_flops(32) / _gpt_oss_served_bytes(middle, 32), rel=1e-15)


@pytest.mark.parametrize("expert_size", [Fraction(17, 32), 2])
def test_gpt_oss_crossover_is_the_closed_form(expert_size: Fraction | int) -> None:
    """Once all 128 experts are read, the FFNs' intensity at N tokens is F N / (W + a N), with

    - F = 2 * 36 * (4 * 3 * 2880**2 + 2880 * 128) FLOPs a token (``_gpt_oss_flops``),
    - W = 36 * (2 * (2880 * 128 + 128) + 128 * (q * 3 * 2880**2 + 2 * (2 * 2880 + 2880)))
      bytes of weights: the router in BF16 and each expert's matrices at q bytes a weight
      (17/32 as served), its biases in BF16,
    - a = 36 * 2 * 2 * 2880 bytes a token, its x and y in BF16;

    it reaches the ridge point R = peak / bandwidth at N* = ceil(R W / (F - R a)), in exact
    fractions. R from the H100 SXM datasheet: 1,979 teraFLOPS with sparsity, half dense, over
    3.35 TB/s."""
    oss = ffn.get_model("gpt-oss-120b")
    peak, bandwidth = Fraction(1979, 2) * 10**12, Fraction(335, 100) * 10**12
    assert (float(peak), float(bandwidth)) == (H100_SXM.peak_flops, H100_SXM.bandwidth)
    ridge = peak / bandwidth
    d, f, n, k, layers = OSS_D, OSS_F, OSS_EXPERTS, OSS_K, OSS_LAYERS
    flops = 2 * layers * (k * 3 * d * d + d * n)
    weights = layers * (2 * (d * n + n) + n * (expert_size * 3 * f * d + 2 * (2 * f + d)))
    per_token = layers * 2 * 2 * d
    crossover = math.ceil(ridge * weights / (flops - ridge * per_token))
    assert crossover > 1200 and experts_read(n, k, 1200) == 128.0  # all read from 1200 on
    assert critical_batch(oss, H100_SXM, expert_bytes_per_value=expert_size) == crossover
    counted_up = next(b for b in itertools.count(crossover - 50)
                      if arithmetic_intensity(oss, b, expert_bytes_per_value=expert_size)
                      >= H100_SXM.ridge_point)  # another search than critical_batch's
    assert counted_up == crossover


# --- what training keeps --------------------------------------------------------------------

@pytest.mark.parametrize("activation", ["gelu", "gelu_tanh", "silu"])
def test_saved_per_token_is_what_ffn_keeps_for_backward(activation: str) -> None:
    d_model, d_ff, n = 6, 20, 3
    block = ffn.FeedForward.random(d_model, d_ff, activation)
    block(np.ones((n, d_model)))
    assert sum(a.size for a in block._saved_tensors) == n * saved_per_token(d_model, d_ff,
                                                                            activation)
    gated = ffn.GatedFeedForward.random(d_model, d_ff, "swiglu")
    gated(np.ones((n, d_model)))
    assert sum(a.size for a in gated._saved_tensors) == n * saved_per_token(d_model, d_ff,
                                                                            gated=True)


def test_relu_needs_no_h_pre_its_derivative_is_the_sign_of_h() -> None:
    x = np.random.default_rng(0).standard_normal((50, 8))
    steps = ffn.FeedForward.random(8, 32, "relu").forward_trace(x)
    assert np.array_equal(ffn.relu_grad(steps.h_pre), (steps.h > 0).astype(float))
    assert saved_per_token(8, 32, "relu") == 8 + 32
    with pytest.raises(ValueError, match="unknown activation 'tanh'"):
        saved_per_token(8, 32, "tanh")


def test_saved_per_token_is_what_pytorch_autograd_saves() -> None:
    torch = pytest.importorskip("torch")
    nn = torch.nn
    d_model, d_ff, n = 6, 20, 3

    def saved(module: Any, x: Any) -> int:
        """Values autograd saves for backward in module(x): each storage once, no weights."""
        weights = {p.untyped_storage().data_ptr() for p in module.parameters()}
        kept: dict[int, int] = {}

        def pack(t: Any) -> Any:
            where = t.untyped_storage().data_ptr()
            if where not in weights:
                kept[where] = t.numel()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            module(x)
        return sum(kept.values())

    x = torch.ones(n, d_model, dtype=torch.float64, requires_grad=True)
    for name, act in (("gelu", nn.GELU()), ("relu", nn.ReLU()), ("silu", nn.SiLU())):
        mlp = nn.Sequential(nn.Linear(d_model, d_ff), act, nn.Linear(d_ff, d_model)).double()
        assert saved(mlp, x) == n * saved_per_token(d_model, d_ff, name), name

    class Gated(nn.Module):  # type: ignore[misc]  # ReGLU or GEGLU: act(x W) * (x V), then W2
        def __init__(self, act: Any) -> None:
            super().__init__()
            self.W, self.V = nn.Linear(d_model, d_ff), nn.Linear(d_model, d_ff)
            self.W2, self.act = nn.Linear(d_ff, d_model), act

        def forward(self, x: Any) -> Any:
            return self.W2(self.act(self.W(x)) * self.V(x))

    for name, act in (("relu", nn.ReLU()), ("gelu", nn.GELU())):
        block = Gated(act).double()
        assert saved(block, x) == n * saved_per_token(d_model, d_ff, name, gated=True), name


# --- the figure ------------------------------------------------------------------------------

@pytest.mark.parametrize("stem", ["roofline", "prefill"])
def test_the_roofline_alt_text_numbers_are_drawn(stem: str) -> None:
    page = (DOCS / "inference.md").read_text(encoding="utf-8")
    alts = re.findall(rf"!\[([^\]]*)\]\(figures/{stem}(?:-dark)?\.svg", page)
    assert len(alts) == 2
    svg = (DOCS / "figures" / f"{stem}.svg").read_text(encoding="utf-8")
    drawn = set(re.findall(r"\d+(?:[.,]\d+)*", " ".join(re.findall(r"<text[^>]*>([^<]*)</text>",
                                                                 svg))))
    for alt in alts:
        missing = set(re.findall(r"\d+(?:[.,]\d+)*", alt)) - drawn
        assert not missing, f"alt text numbers {sorted(missing)} are not in the figure"


# --- issue 30: extreme but valid calls ---------------------------------------------------------

def short_ids(value: object) -> str:
    """A test id: big ints as powers of ten."""
    return f"1e{len(str(value)) - 1}" if isinstance(value, int) and value > 10**6 else str(value)


def experts_read_exact(n: int, k: int, batch: int) -> float:
    """``n * (1 - (1 - k/n)**batch)`` with mpmath, 40 digits more than ``n`` has (so that
    ``1 - k/n`` is exact enough), rounded to a float."""
    import mpmath

    with mpmath.workdps(40 + len(str(n))):
        return float(n * (1 - (1 - mpmath.mpf(k) / n) ** batch))


@pytest.mark.parametrize(("n", "k", "batch"), [
    (10**9, 1, 1), (10**12, 1, 1), (10**17, 1, 1), (10**17, 3, 5), (10**300, 7, 11),
    (2**60, 2, 10**9), (10**6, 1, 10**6), (10**20, 1, 10**22), (8, 2, 10**400),
    (10**300, 1, 10**305), (3, 3, 10**400), (10**300, 10**300, 2)], ids=short_ids)
def test_experts_read_does_not_cancel_or_overflow(n: int, k: int, batch: int) -> None:
    """Issue 30: (10**9, 1, 1) gave 0.99999997, (10**17, 1, 1) 0.0 (1 - (1 - k/n)**b cancels);
    (8, 2, 10**400) raised a bare OverflowError."""
    assert experts_read(n, k, batch) == pytest.approx(experts_read_exact(n, k, batch), rel=1e-13)


def test_experts_read_refuses_more_experts_than_a_float_holds() -> None:
    with pytest.raises(ValueError, match="n_experts must be at most"):
        experts_read(10**400, 1, 1)


@pytest.mark.parametrize(("peak", "bandwidth"), [(1e300, 1e-300), (1e-300, 1e300),
                                                 (1.7e308, 0.5)])
def test_an_accelerator_whose_ridge_is_no_float_is_refused(peak: float, bandwidth: float) -> None:
    """Issue 30: 1e300 FLOP/s over 1e-300 B/s gave ridge_point inf (and 1e-300 over 1e300, 0)."""
    with pytest.raises(ValueError, match="peak_flops / bandwidth"):
        Accelerator("x", peak, bandwidth, 1.0, "test")


def test_saved_per_token_of_a_reglu_block_keeps_no_gate_before_relu() -> None:
    """Issue 30: a ReGLU block keeps x, the ReLU's output, the up product and h (ReLU's
    derivative is read from its output): 10 + 3 * 100, not 410."""
    assert saved_per_token(10, 100, "relu", gated=True) == 10 + 3 * 100
    assert saved_per_token(10, 100, "gelu", gated=True) == 10 + 4 * 100


def moe_dims(d_model: int, n_experts: int, d_ff: int = 4) -> ffn.ModelDims:
    return ffn.ModelDims("big", d_model, d_ff, 1, gated=False, bias=False, source="test",
                         moe=ffn.MoEDims(n_experts, 1))


@pytest.mark.parametrize(("batch", "size", "name"), [(10**400, 2, "batch"),
                                                     (1, 10**400, "bytes_per_value")],
                         ids=short_ids)
def test_decode_bytes_beyond_a_float_names_the_argument(batch: int, size: int,
                                                       name: str) -> None:
    """Issue 30: decode_bytes(m, batch=10**400) and bytes_per_value=10**400 raised a bare
    OverflowError."""
    with pytest.raises(ValueError, match=name):
        decode_bytes(moe_dims(16, 4), batch, size)


def test_numpy_ints_in_model_dims_do_not_wrap() -> None:
    """Issue 30: ModelDims kept np.int64 n_experts, so decode_bytes wrapped (d_model 2**34,
    n_experts 2**30: 1.37e11 instead of 3.69e19)."""
    d, n = 2**34, 2**30
    model = moe_dims(np.int64(d), np.int64(n))  # type: ignore[arg-type]
    assert model.moe is not None
    assert all(type(v) is int for v in (model.d_model, model.moe.n_experts, model.moe.top_k))
    per_layer = d * n + 1 * 2 * d * 4 + 2 * d  # router, one expert (batch 1), x and y
    assert decode_bytes(model, 1, 2) == pytest.approx(2 * per_layer, rel=1e-12)


# ---------------------------------------------------------------- the ends of the float range


def test_a_batch_beyond_a_float_gives_its_intensity() -> None:
    """Issue 39: a valid batch of 10**300 raised OverflowError (batch * FLOPs is no float). The
    oracle: exact fractions; for a dense model every byte is an int, for gpt-oss-120b the
    weights are 10**-295 of the bytes, so the intensity is the ceiling, FLOPs over the 2
    bfloat16 values of each token's x and y per layer: 17,344."""
    gpt2, batch = ffn.get_model("GPT-2 small"), 10**300
    per_token = 12 * ffn.count_flops(768, 3072)
    moved = 12 * 2 * (ffn.count_parameters(768, 3072) + 2 * batch * 768)
    assert arithmetic_intensity(gpt2, batch) == float(Fraction(batch * per_token, moved))
    oss = ffn.get_model("gpt-oss-120b")
    assert Fraction(oss.ffn_flops_per_token(), 36 * 2 * 2 * 2880) == 17344
    assert arithmetic_intensity(oss, batch) == pytest.approx(17344, rel=4e-16)
    assert arithmetic_intensity(oss, batch, 2, "mxfp4") == pytest.approx(17344, rel=4e-16)


@pytest.mark.parametrize("size", [1e-320, 5e-324, 2.2e-308, Fraction(1, 10**400)],
                         ids=["1e-320", "5e-324", "2.2e-308", "1/10**400"])
def test_a_size_below_float64s_normal_range_is_refused(size: float | Fraction) -> None:
    """Issue 39: decode_bytes gave 0.0 for 1/10**400, arithmetic_intensity inf for 1e-320
    (and a bare ZeroDivisionError for 1/10**400), critical_batch an OverflowError."""
    gpt2, oss = ffn.get_model("GPT-2 small"), ffn.get_model("gpt-oss-120b")
    for name, sizes in (("bytes_per_value", (size,)), ("expert_bytes_per_value", (2, size))):
        for call, args in ((decode_bytes, (gpt2, 1)), (decode_bytes, (oss, 1)),
                           (arithmetic_intensity, (oss, 1)), (critical_batch, (oss, H100_SXM))):
            with pytest.raises(ValueError, match=rf"^{name} must be at least 2\.2e-308 "):
                call(*args, *sizes)


def test_the_smallest_size_taken_gives_exact_bytes_and_batch_one() -> None:
    """From 2.2e-308 on, the bytes are the exact count rounded once, and a step of one token
    already passes the H100's ridge point (it raised OverflowError for 1e-320)."""
    gpt2, tiny = ffn.get_model("GPT-2 small"), 2.2250738585072014e-308
    moved = 12 * Fraction(tiny) * (ffn.count_parameters(768, 3072) + 2 * 768)
    assert decode_bytes(gpt2, 1, tiny) == float(moved)
    assert critical_batch(ffn.get_model("gpt-oss-120b"), H100_SXM, 1e-300) == 1
    assert critical_batch(gpt2, H100_SXM, Fraction(1, 10**300)) == 1


def test_an_intensity_beyond_float64_names_bytes_per_value() -> None:
    gpt2, batch, size = ffn.get_model("GPT-2 small"), 10**6, 2.3e-308
    moved = 12 * Fraction(size) * (ffn.count_parameters(768, 3072) + 2 * batch * 768)
    assert Fraction(batch * 12 * ffn.count_flops(768, 3072)) / moved > Fraction(sys.float_info.max)
    with pytest.raises(ValueError, match=r"bytes_per_value = .* the intensity exceeds "
                                         "float64's range"):
        arithmetic_intensity(gpt2, batch, size)
