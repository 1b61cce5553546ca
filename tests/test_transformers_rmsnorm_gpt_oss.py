"""`ffn.RMSNorm` and `ffn.ClampedSwiGLU` against PyTorch and transformers, built on the CPU
from tiny configurations (nothing downloaded): RMSNorm against `torch.nn.functional.rms_norm`
and `LlamaRMSNorm`, the gpt-oss expert against `GptOssExperts`, the clamp engaged and not,
forward and backward (autograd).

Test-only; skipped without torch/transformers unless FFN_REQUIRE_TORCH=1 (CI), which makes a
missing one a failure.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

import ffn
from tests.test_torch_reference import ATOL, RTOL, import_or_skip

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach the Hub
torch = import_or_skip("torch")
transformers = import_or_skip("transformers")

D_MODEL, D_FF, N_EXPERTS = 16, 8, 3

# LlamaRMSNorm computes in float32 whatever its input (modeling_llama.py: `hidden_states =
# hidden_states.to(torch.float32)` before the mean square), so a float64 input agrees with
# ffn's float64 only to float32's precision: a few float32 roundings (2**-24 = 6e-8 each) of
# the mean square, the rsqrt and the product, well inside 1e-6. The test below shows the gap
# is real (above 1e-10), and the float64 check against torch's own rms_norm stays at 1e-12.
LLAMA_RTOL, LLAMA_ATOL = 1e-6, 1e-7


def numpy(t: object) -> np.ndarray:
    return t.detach().numpy().copy()  # type: ignore[attr-defined,no-any-return]


def rows(seed: int, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(seed).normal(loc=0.5, scale=scale, size=(2, 5, D_MODEL))


# ---------------------------------------------------------------- RMSNorm


@pytest.mark.parametrize("eps", [1e-6, 1e-5, 0.5])
def test_rms_norm_matches_torch_rms_norm_in_float64(eps: float) -> None:
    x, dy = rows(1), rows(2)
    gamma = 1 + 0.3 * np.random.default_rng(3).normal(size=D_MODEL)
    norm = ffn.RMSNorm(D_MODEL, eps=eps, gamma=gamma)
    y = norm(x)
    dx = norm.backward(dy)
    xt = torch.tensor(x, requires_grad=True)
    gt = torch.tensor(gamma, requires_grad=True)
    yt = torch.nn.functional.rms_norm(xt, (D_MODEL,), gt, eps)
    yt.backward(torch.tensor(dy))
    np.testing.assert_allclose(y, numpy(yt), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(dx, numpy(xt.grad), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(norm.grads["gamma"], numpy(gt.grad), rtol=RTOL, atol=ATOL)


def llama_rms_norm(gamma: np.ndarray, eps: float) -> object:
    module = importlib.import_module("transformers.models.llama.modeling_llama")
    norm = module.LlamaRMSNorm(D_MODEL, eps=eps).double()
    with torch.no_grad():
        norm.weight.copy_(torch.from_numpy(gamma))
    assert norm.variance_epsilon == eps
    return norm


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rms_norm_matches_llama_rms_norm(dtype: type) -> None:
    x, dy = rows(4, scale=3.0).astype(dtype), rows(5).astype(dtype)
    gamma = (1 + 0.3 * np.random.default_rng(6).normal(size=D_MODEL)).astype(dtype)
    theirs = llama_rms_norm(gamma.astype(np.float64), 1e-6).to(torch.from_numpy(gamma).dtype)
    ours = ffn.RMSNorm(D_MODEL, gamma=gamma)  # eps: the default, 1e-6, LlamaRMSNorm's too
    assert ours.eps == 1e-6
    xt = torch.tensor(x, requires_grad=True)
    yt = theirs(xt)
    yt.backward(torch.tensor(dy))
    y = ours(x)
    np.testing.assert_allclose(y, numpy(yt), rtol=LLAMA_RTOL, atol=LLAMA_ATOL)
    np.testing.assert_allclose(ours.backward(dy), numpy(xt.grad), rtol=LLAMA_RTOL,
                               atol=LLAMA_ATOL)
    np.testing.assert_allclose(ours.grads["gamma"], numpy(theirs.weight.grad),
                               rtol=LLAMA_RTOL, atol=LLAMA_ATOL)
    if dtype == np.float64:  # the reason for the looser tolerance holds: float32 inside
        assert np.abs(y - numpy(yt)).max() > 1e-10


def test_llama_block_is_pre_rms_norm() -> None:
    # LlamaDecoderLayer: x + attn(norm(x)), then h + mlp(norm(h)), both norms LlamaRMSNorm
    config = transformers.LlamaConfig(hidden_size=D_MODEL, intermediate_size=D_FF,
                                      num_attention_heads=2, num_hidden_layers=1)
    layer = importlib.import_module(
        "transformers.models.llama.modeling_llama").LlamaDecoderLayer(config, 0)
    assert type(layer.input_layernorm).__name__ == "LlamaRMSNorm"
    assert type(layer.post_attention_layernorm).__name__ == "LlamaRMSNorm"
    assert not hasattr(layer.input_layernorm, "bias")  # a weight and no bias
    assert layer.input_layernorm.variance_epsilon == config.rms_norm_eps == 1e-6


# ---------------------------------------------------------------- gpt-oss's expert


def gpt_oss_experts(scale: float, seed: int) -> object:
    config = transformers.GptOssConfig(
        hidden_size=D_MODEL, intermediate_size=D_FF, num_local_experts=N_EXPERTS,
        num_experts_per_tok=1, experts_implementation="eager")
    assert (config.swiglu_alpha, config.swiglu_limit) == (1.702, 7.0)  # the defaults
    module = importlib.import_module("transformers.models.gpt_oss.modeling_gpt_oss")
    experts = module.GptOssExperts(config).double()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in experts.named_parameters():
            size = scale if name in ("gate_up_proj", "gate_up_proj_bias") else 0.5
            p.copy_(torch.from_numpy(rng.normal(0.0, size, tuple(p.shape))))
    return experts


def expert(experts: object, e: int) -> ffn.ClampedSwiGLU:
    """Expert e of transformers' module, read through the interleaved fused layout."""
    p = {name: numpy(t)[e] for name, t in experts.named_parameters()}  # type: ignore[attr-defined]
    return ffn.ClampedSwiGLU.from_fused(p["gate_up_proj"], p["gate_up_proj_bias"],
                                        p["down_proj"], p["down_proj_bias"])


@pytest.mark.parametrize(("scale", "engaged"), [(0.1, False), (2.0, True)])
@pytest.mark.parametrize("e", range(N_EXPERTS))
def test_clamped_swiglu_matches_gpt_oss_experts_in_float64(scale: float, engaged: bool,
                                                          e: int) -> None:
    experts = gpt_oss_experts(scale, seed=10 + e)
    ours = expert(experts, e)
    x, dy = rows(11).reshape(-1, D_MODEL), rows(12).reshape(-1, D_MODEL)
    trace = ours.forward_trace(x)
    up_pre = x @ ours.V + ours.c  # type: ignore[operator]
    clamped = int((trace.gate_pre > 7).sum() + (np.abs(up_pre) > 7).sum())
    assert (clamped > 0) == engaged, clamped  # the clamp is, or is not, reached
    xt = torch.tensor(x, requires_grad=True)
    route = torch.full((len(x), 1), e)  # every token to expert e, with weight 1
    yt = experts(xt, router_indices=route,  # type: ignore[operator]
                 routing_weights=torch.ones(len(x), 1, dtype=torch.float64))
    yt.backward(torch.tensor(dy))
    np.testing.assert_allclose(trace.y, numpy(yt), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(ours.backward(dy), numpy(xt.grad), rtol=RTOL, atol=ATOL)
    grad = {name: numpy(t.grad)[e] for name, t in experts.named_parameters()}  # type: ignore[attr-defined]
    theirs = {"W": grad["gate_up_proj"][:, ::2], "V": grad["gate_up_proj"][:, 1::2],
              "b": grad["gate_up_proj_bias"][::2], "c": grad["gate_up_proj_bias"][1::2],
              "W2": grad["down_proj"], "b2": grad["down_proj_bias"]}
    for name, g in theirs.items():
        np.testing.assert_allclose(ours.grads[name], g, rtol=RTOL, atol=ATOL, err_msg=name)
    # engaged, the clamp changes the answer: without it the same weights disagree with theirs
    free = ffn.ClampedSwiGLU(ours.W, ours.V, ours.W2, ours.b, ours.c, ours.b2, limit=np.inf)
    assert np.allclose(free(x), numpy(yt), rtol=RTOL, atol=ATOL) != engaged


def test_at_the_limit_itself_the_gradient_passes_as_in_torch_clamp() -> None:
    # gate_pre and up_pre exactly 7 and -7: torch.clamp passes the gradient at its bounds
    x = np.array([[7.0], [-7.0], [7.5]])
    ours = ffn.ClampedSwiGLU(np.ones((1, 1)), np.ones((1, 1)), np.ones((1, 1)))
    ours(x)
    dx = ours.backward(np.ones((3, 1)))
    xt = torch.tensor(x, requires_grad=True)
    g, u = xt.clamp(max=7.0), xt.clamp(min=-7.0, max=7.0)
    (g * torch.sigmoid(1.702 * g) * (u + 1)).sum().backward()
    np.testing.assert_allclose(dx, numpy(xt.grad), rtol=RTOL, atol=ATOL)
