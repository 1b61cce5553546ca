"""`ffn`'s mixture of experts against Hugging Face transformers' Mixtral and OLMoE.

Counts: `ffn.MOE_MODELS` agree, part by part, with MixtralForCausalLM and OlmoeForCausalLM
built on PyTorch's meta device (shapes only, nothing downloaded); the dimensions are checked
against the configurations first. Outputs: `ffn.MixtureOfExperts` against MixtralSparseMoeBlock
and OlmoeSparseMoeBlock with the same weights, in float64, and the load-balancing loss against
`load_balancing_loss_func`.

DeepSeek-V3: `ffn.MixtureOfExperts` with `score="sigmoid"`, a choice bias, groups, scale 2.5
and shared experts against `DeepseekV3MoE` with the same weights. Its router
(`DeepseekV3TopkRouter`) casts its input and weight to float32 and keeps the bias as a float32
buffer: the router and bias are drawn on float32's grid so both sides hold the same numbers,
the choice is compared exactly, the scores and whole block at rtol 1e-6, and the float64 parts
(experts run with ffn's choice and weights, shared experts) at the tight tolerance.

Mixtral and OLMoE: both routers take their softmax in float32 (`router_logits.float()`), so
their top-k weights carry float32 rounding (about 6e-8 relative): whole blocks are compared at
rtol 1e-6. The float64 parts are compared at the tight tolerance of
tests/test_torch_reference.py: the router's logits, and the experts module run with ffn's
chosen experts and weights.

Test-only dependency (pyproject's `transformers` group); skipped without it unless
FFN_REQUIRE_TORCH=1 (set by CI), which makes a missing torch or transformers a failure.
"""

from __future__ import annotations

import importlib
import os
import types

import numpy as np
import pytest

import ffn
from tests.test_torch_reference import ATOL, RTOL, import_or_skip

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach the Hub, even by accident
torch = import_or_skip("torch")
transformers = import_or_skip("transformers")


def modeling(model: str) -> types.ModuleType:
    """transformers' ``modeling_<model>`` module, imported when a test first needs it: at the
    top of the file, these imports were two seconds of every collection."""
    return importlib.import_module(f"transformers.models.{model}.modeling_{model}")

F32_RTOL = 1e-6  # the routers' float32 softmax: float32 has a relative precision of 6e-8

RULES = [("q_norm", "other"), ("k_norm", "other"), (".mlp.", "FFN"), (".self_attn.", "attention"),
         ("embed_tokens", "embeddings"), ("norm", "norms"), ("lm_head", "head")]
CASES = [  # ffn's name, transformers' model and config classes, what differs from the defaults
    ("Mixtral 8x7B", "MixtralForCausalLM", "MixtralConfig", {}),
    ("OLMoE-1B-7B", "OlmoeForCausalLM", "OlmoeConfig", {"intermediate_size": 1024}),
]


def meta_model(model_class: str, config_class: str, changes: dict[str, int]) -> object:
    config = getattr(transformers, config_class)(**changes)
    with torch.device("meta"):
        return getattr(transformers, model_class)(config)


@pytest.mark.parametrize(("name", "model_class", "config_class", "changes"), CASES,
                         ids=[c[0] for c in CASES])
def test_counts_match_transformers_on_the_meta_device(
        name: str, model_class: str, config_class: str, changes: dict[str, int]) -> None:
    dims = ffn.get_model(name)
    model = meta_model(model_class, config_class, changes)
    c = model.config  # type: ignore[attr-defined]
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    assert (dims.d_model, dims.d_ff, dims.n_layers, dims.vocab_size) == (
        c.hidden_size, c.intermediate_size, c.num_hidden_layers, c.vocab_size)
    assert dims.moe == ffn.MoEDims(c.num_local_experts if name.startswith("Mixtral")
                                   else c.num_experts, c.num_experts_per_tok)
    assert (dims.kv_dim or dims.d_model) == c.num_key_value_heads * head_dim
    assert dims.tied_head == c.tie_word_embeddings and c.hidden_act == "silu"
    assert_parts_and_active(dims, model, model_class)


def assert_parts_and_active(dims: ffn.ModelDims, model: object, model_class: str) -> None:
    """ffn's parts of ``dims`` equal ``model``'s parameters sorted by RULES, and its active
    count leaves out the routed experts a token skips (each layer's are n_experts alike)."""
    parts = dict.fromkeys(["FFN", "attention", "embeddings", "norms", "head", "other"], 0)
    routed = 0  # the routed experts' parameters (not the shared ones)
    for pname, p in model.named_parameters():  # type: ignore[attr-defined]
        part = next((part for key, part in RULES if key in pname), None)
        assert part is not None, f"{model_class}: no part for parameter {pname}"
        parts[part] += p.numel()
        routed += p.numel() if ".mlp.experts." in pname else 0
    assert dims.parameter_parts() == parts
    assert dims.moe is not None
    skipped = routed // dims.moe.n_experts * (dims.moe.n_experts - dims.moe.top_k)
    assert dims.active_parameters() == sum(parts.values()) - skipped


def torch_block(moe: ffn.MixtureOfExperts, olmoe: bool) -> object:
    """transformers' sparse-MoE block with ``moe``'s weights, float64, eval mode."""
    kw = {"hidden_size": moe.d_model, "intermediate_size": moe.d_ff,
          "num_experts_per_tok": moe.top_k}
    if olmoe:
        config = transformers.OlmoeConfig(num_experts=moe.n_experts,
                                          norm_topk_prob=moe.normalize, **kw)
        block = modeling("olmoe").OlmoeSparseMoeBlock(config)
    else:
        config = transformers.MixtralConfig(num_local_experts=moe.n_experts, **kw)
        block = modeling("mixtral").MixtralSparseMoeBlock(config)
    block = block.to(torch.float64).eval()
    with torch.no_grad():  # Linear weights are (out, in): the transposes of ffn's
        block.gate.weight.copy_(torch.tensor(moe.router.T))
        for i, e in enumerate(moe.experts):
            assert isinstance(e, ffn.GatedFeedForward)
            # gate_up_proj[i] is W then V stacked, (2 d_ff, d_model); down_proj[i] is W2.T
            block.experts.gate_up_proj[i].copy_(torch.tensor(np.concatenate([e.W.T, e.V.T])))
            block.experts.down_proj[i].copy_(torch.tensor(e.W2.T))
    return block


@pytest.mark.parametrize(("olmoe", "n_experts", "top_k"), [(False, 8, 2), (False, 5, 1),
                                                           (True, 16, 4), (True, 6, 6)],
                         ids=["mixtral-8-2", "mixtral-5-1", "olmoe-16-4", "olmoe-6-6"])
def test_same_outputs_as_the_transformers_block(olmoe: bool, n_experts: int, top_k: int) -> None:
    moe = ffn.MixtureOfExperts.random(16, 24, n_experts, top_k=top_k, variant="swiglu", seed=3)
    if olmoe:  # OLMoE does not renormalise the top-k weights
        moe = ffn.MixtureOfExperts(moe.router, list(moe.experts), top_k, normalize=False)
    block = torch_block(moe, olmoe)
    x = np.random.default_rng(4).normal(size=(2, 5, 16))
    xt = torch.tensor(x)
    p, chosen, weights = moe.route(x.reshape(-1, 16))
    with torch.no_grad():
        logits, scores, indices = block.gate(xt)  # type: ignore[attr-defined]
        assert logits.dtype == torch.float64  # so its softmax in float64 is an oracle for p
        np.testing.assert_allclose(p, torch.softmax(logits, -1).numpy(), rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(np.sort(indices.numpy(), -1), np.sort(chosen, -1))
        order = np.argsort(indices.numpy(), -1)  # torch.topk's order for equal values is its own
        np.testing.assert_allclose(np.take_along_axis(scores.double().numpy(), order, -1),
                                   np.take_along_axis(weights, np.argsort(chosen, -1), -1),
                                   rtol=F32_RTOL)
        run = block.experts  # type: ignore[attr-defined]
        ours = moe(x).reshape(-1, 16)
        theirs = run(xt.reshape(-1, 16), torch.tensor(chosen), torch.tensor(weights)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=RTOL, atol=ATOL)
        whole = block(xt).numpy()  # type: ignore[operator]
    # The float32 weights err by ~6e-8 of each expert's output (~1 here), not of their sum
    # (which can cancel to ~1e-3): hence an absolute bound too.
    np.testing.assert_allclose(moe(x), whole, rtol=F32_RTOL, atol=1e-7)


@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_load_balancing_loss_matches_transformers(top_k: int) -> None:
    moe = ffn.MixtureOfExperts.random(16, 8, 6, top_k=top_k, seed=5)
    x = np.random.default_rng(6).normal(size=(50, 16))
    logits = torch.tensor(x @ moe.router)
    theirs = modeling("mixtral").load_balancing_loss_func((logits,), moe.n_experts, top_k)
    # transformers sums in float32 (its histc and probability sums): rtol 1e-6
    assert moe.load_balancing_loss(x) == pytest.approx(float(theirs), rel=F32_RTOL)


# ---------------------------------------------------------------- DeepSeek-V3


def deepseek_layer(seed: int, n_experts: int, top_k: int, n_groups: int, top_groups: int,
                   normalize: bool, n_shared: int) -> ffn.MixtureOfExperts:
    """DeepSeek-V3's router with random weights and choice bias, float64, all in float32's grid.

    The router and the bias are rounded to float32 first: transformers keeps both in float32,
    so both sides then hold the same numbers.
    """
    d_model, d_ff = 16, 6
    base = ffn.MixtureOfExperts.random(d_model, d_ff, n_experts, top_k, "swiglu", seed=seed)
    rng = np.random.default_rng(seed + 1)
    router = base.router.astype(np.float32).astype(np.float64)  # (d_model, n_experts)
    bias = (0.2 * rng.standard_normal(n_experts)).astype(np.float32).astype(np.float64)
    shared = [ffn.GatedFeedForward.random(d_model, d_ff, seed=seed + 2 + j)
              for j in range(n_shared)]
    return ffn.MixtureOfExperts(router, list(base.experts), top_k, normalize, score="sigmoid",
                                bias=bias, n_groups=n_groups, top_groups=top_groups, scale=2.5,
                                shared_experts=shared)


def deepseek_block(moe: ffn.MixtureOfExperts) -> object:
    """transformers' DeepseekV3MoE with ``moe``'s weights; experts float64, router float32."""
    config = transformers.DeepseekV3Config(
        hidden_size=moe.d_model, moe_intermediate_size=moe.d_ff, n_routed_experts=moe.n_experts,
        num_experts_per_tok=moe.top_k, n_group=moe.n_groups, topk_group=moe.top_groups,
        routed_scaling_factor=moe.scale, norm_topk_prob=moe.normalize,
        n_shared_experts=len(moe.shared_experts))
    block = modeling("deepseek_v3").DeepseekV3MoE(config).to(torch.float64).eval()
    assert moe.bias is not None
    with torch.no_grad():
        block.gate.weight.copy_(torch.tensor(moe.router.T))  # (n_experts, d_model)
        block.gate.e_score_correction_bias.copy_(torch.tensor(moe.bias))
        for i, e in enumerate(moe.experts):
            assert isinstance(e, ffn.GatedFeedForward)
            block.experts.gate_up_proj[i].copy_(torch.tensor(np.concatenate([e.W.T, e.V.T])))
            block.experts.down_proj[i].copy_(torch.tensor(e.W2.T))
        # transformers' shared experts are one MLP n_shared times as wide: ffn's side by side
        shared = block.shared_experts
        for proj, name in ((shared.gate_proj, "W"), (shared.up_proj, "V")):
            proj.weight.copy_(torch.tensor(np.concatenate(
                [getattr(e, name).T for e in moe.shared_experts])))  # (n_shared d_ff, d_model)
        shared.down_proj.weight.copy_(torch.tensor(np.concatenate(
            [e.W2 for e in moe.shared_experts]).T))  # (d_model, n_shared d_ff)
    return block


DEEPSEEK_CASES = [  # n_experts, top_k, n_groups, top_groups, normalize, n_shared
    (16, 4, 4, 2, True, 2), (16, 3, 8, 3, True, 1), (8, 2, 1, 1, False, 1), (32, 8, 8, 4, True, 1)]


@pytest.mark.parametrize(("n_experts", "top_k", "n_groups", "top_groups", "normalize",
                          "n_shared"), DEEPSEEK_CASES,
                         ids=[f"{c[0]}-top{c[1]}-groups{c[2]}-keep{c[3]}" for c in DEEPSEEK_CASES])
def test_same_outputs_as_deepseek_v3_moe(n_experts: int, top_k: int, n_groups: int,
                                         top_groups: int, normalize: bool, n_shared: int) -> None:
    moe = deepseek_layer(7, n_experts, top_k, n_groups, top_groups, normalize, n_shared)
    block = deepseek_block(moe)
    x = np.random.default_rng(8).normal(size=(3, 5, 16))
    xt, rows = torch.tensor(x), x.reshape(-1, 16)
    p, chosen, weights = moe.route(rows)
    with torch.no_grad():
        logits, scores, indices = block.gate(xt)  # type: ignore[attr-defined]
        # transformers routes in float32 whatever the module's dtype (the router's input and
        # weight are cast, the bias is a float32 buffer): logits, scores and choice in float32.
        assert logits.dtype == scores.dtype == torch.float32
        np.testing.assert_allclose(torch.sigmoid(logits.double()).numpy(), p, rtol=F32_RTOL)
        np.testing.assert_array_equal(np.sort(indices.numpy(), -1), np.sort(chosen, -1))
        order = np.argsort(indices.numpy(), -1)  # topk(sorted=False): its own order
        np.testing.assert_allclose(np.take_along_axis(scores.double().numpy(), order, -1),
                                   np.take_along_axis(weights, np.argsort(chosen, -1), -1),
                                   rtol=F32_RTOL)
        # The float64 parts, at float64's tolerance: the experts run with ffn's choice and
        # weights, and the shared experts.
        routed = block.experts(xt.reshape(-1, 16), torch.tensor(chosen),  # type: ignore[attr-defined]
                               torch.tensor(weights)).numpy()
        shared = block.shared_experts(xt).numpy().reshape(-1, 16)  # type: ignore[attr-defined]
        whole = block(xt).numpy()  # type: ignore[operator]
    ours = moe(x)
    shared_ffn = sum(e(rows) for e in moe.shared_experts)
    np.testing.assert_allclose(shared, shared_ffn, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(routed + shared, ours.reshape(-1, 16), rtol=RTOL, atol=ATOL)
    # The whole block: its routed weights carry float32's rounding (6e-8 relative, times the
    # scale 2.5, on expert outputs of about 1), hence rtol 1e-6 and an absolute 1e-6.
    np.testing.assert_allclose(ours, whole, rtol=F32_RTOL, atol=1e-6)
    # The bias chose: without it the choice differs somewhere (else this test proves little).
    unbiased = ffn.MixtureOfExperts(moe.router, list(moe.experts), top_k, normalize,
                                    score="sigmoid", n_groups=n_groups, top_groups=top_groups)
    assert not np.array_equal(np.sort(unbiased.route(rows)[1], -1), np.sort(chosen, -1))


FINE_GRAINED_CASES = [  # ffn's name, transformers' model and config classes (defaults)
    ("Qwen1.5-MoE-A2.7B", "Qwen2MoeForCausalLM", "Qwen2MoeConfig"),
    ("DeepSeek-V3", "DeepseekV3ForCausalLM", "DeepseekV3Config"),
]


@pytest.mark.parametrize(("name", "model_class", "config_class"), FINE_GRAINED_CASES,
                         ids=[c[0] for c in FINE_GRAINED_CASES])
def test_fine_grained_counts_match_transformers_on_the_meta_device(
        name: str, model_class: str, config_class: str) -> None:
    dims = ffn.get_model(name)
    model = meta_model(model_class, config_class, {})
    c = model.config  # type: ignore[attr-defined]
    deepseek = name == "DeepSeek-V3"
    shared = c.n_shared_experts * c.moe_intermediate_size if deepseek else (
        c.shared_expert_intermediate_size)
    assert dims.moe is not None and dims.moe.shared is not None
    assert (dims.d_model, dims.d_ff, dims.n_layers, dims.vocab_size, dims.moe.shared.d_ff) == (
        c.hidden_size, c.moe_intermediate_size, c.num_hidden_layers, c.vocab_size, shared)
    assert (dims.moe.n_experts, dims.moe.top_k) == (
        c.n_routed_experts if deepseek else c.num_experts, c.num_experts_per_tok)
    assert dims.moe.dense == (ffn.DenseLayers(c.first_k_dense_replace, c.intermediate_size)
                              if deepseek else None)
    assert dims.tied_head == c.tie_word_embeddings and c.hidden_act == "silu"
    assert_parts_and_active(dims, model, model_class)
    if deepseek:
        # The class has no multi-token-prediction module: the checkpoint's layer 61 is ignored
        # on loading, though the config counts one (num_nextn_predict_layers). The router's
        # choice bias is a buffer, not a parameter: 256 numbers per MoE layer, not counted.
        assert c.num_nextn_predict_layers == 1 and len(model.model.layers) == 61  # type: ignore[attr-defined]
        assert not any(".61." in n for n, _ in model.named_parameters())  # type: ignore[attr-defined]
        buffers = dict(model.named_buffers())  # type: ignore[attr-defined]
        assert buffers["model.layers.3.mlp.gate.e_score_correction_bias"].shape == (256,)
        assert sum("e_score_correction_bias" in n for n in buffers) == 61 - 3
