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


# ---------------------------------------------------------------- the parallel block


class StandIn(torch.nn.Module):  # type: ignore[misc,name-defined]
    """A Linear in place of attention, called as transformers calls its attention modules."""

    def __init__(self, linear: object) -> None:
        super().__init__()
        self.linear = linear

    def forward(self, hidden_states: object = None, *args: object, **kwargs: object) -> tuple:
        return self.linear(hidden_states), None  # type: ignore[operator]


def fill(module: object, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in module.parameters():  # type: ignore[attr-defined]
            p.copy_(torch.from_numpy(rng.normal(0.0, 0.5, tuple(p.shape))))


def stand_in(seed: int) -> tuple[object, ffn.Linear]:
    linear = torch.nn.Linear(D_MODEL, D_MODEL).double()
    fill(linear, seed)
    return StandIn(linear), ffn.Linear(numpy(linear.weight).T, numpy(linear.bias))


def layer_norm(norm: object) -> ffn.LayerNorm:
    return ffn.LayerNorm(D_MODEL, eps=norm.eps, gamma=numpy(norm.weight),  # type: ignore[attr-defined]
                         beta=numpy(norm.bias))  # type: ignore[attr-defined]


def test_parallel_block_is_gptj_block() -> None:
    config = transformers.GPTJConfig(n_embd=D_MODEL, n_inner=4 * D_MODEL, n_head=2,
                                     rotary_dim=4, resid_pdrop=0.0, attn_pdrop=0.0,
                                     embd_pdrop=0.0)
    block = importlib.import_module("transformers.models.gptj.modeling_gptj").GPTJBlock(
        config, 0).double().eval()
    fill(block, 20)
    block.attn, attention = stand_in(21)
    mlp = block.mlp
    ours = ffn.ParallelBlock(
        attention, ffn.FeedForward(numpy(mlp.fc_in.weight).T, numpy(mlp.fc_in.bias),
                                   numpy(mlp.fc_out.weight).T, numpy(mlp.fc_out.bias),
                                   activation="gelu_tanh"),  # "gelu_new"
        layer_norm(block.ln_1))
    assert config.activation_function == "gelu_new"
    x = rows(22)
    with torch.no_grad():
        theirs = block(torch.from_numpy(x))
    np.testing.assert_allclose(ours(x), numpy(theirs), rtol=RTOL, atol=ATOL)
    # GPT-J-6B's sizes, as the page counts them: the defaults of GPTJConfig
    default = transformers.GPTJConfig()
    assert (default.n_embd, default.n_layer, default.n_inner) == (4096, 28, None)


def test_parallel_block_with_ffn_norm_is_gpt_neox_layer() -> None:
    config = transformers.GPTNeoXConfig(hidden_size=D_MODEL, intermediate_size=4 * D_MODEL,
                                        num_attention_heads=2, hidden_dropout=0.0,
                                        attention_dropout=0.0, hidden_act="gelu")
    assert config.use_parallel_residual  # the default
    layer = importlib.import_module(
        "transformers.models.gpt_neox.modeling_gpt_neox").GPTNeoXLayer(config, 0).double().eval()
    fill(layer, 23)
    layer.attention, attention = stand_in(24)
    mlp = layer.mlp
    block = ffn.FeedForward(numpy(mlp.dense_h_to_4h.weight).T, numpy(mlp.dense_h_to_4h.bias),
                            numpy(mlp.dense_4h_to_h.weight).T, numpy(mlp.dense_4h_to_h.bias),
                            activation="gelu")
    ours = ffn.ParallelBlock(attention, block, layer_norm(layer.input_layernorm),
                             ffn_norm=layer_norm(layer.post_attention_layernorm))
    x = rows(25)
    with torch.no_grad():
        theirs = layer(torch.from_numpy(x))
    np.testing.assert_allclose(ours(x), numpy(theirs), rtol=RTOL, atol=ATOL)
    # serial (use_parallel_residual=False) is another function: the check above can tell
    config.use_parallel_residual = False
    serial = type(layer)(config, 0).double().eval()
    serial.load_state_dict(layer.state_dict(), strict=False)
    serial.attention = layer.attention
    with torch.no_grad():
        assert not np.allclose(numpy(serial(torch.from_numpy(x))), ours(x), rtol=1e-6)
