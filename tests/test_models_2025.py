"""`ffn.RECENT_MOE_MODELS` (Llama 4, Qwen3, Kimi K2, gpt-oss, Qwen3-Next) against transformers.

Each model is built on PyTorch's meta device (shapes only, nothing downloaded) from the
released sizes, and its parameters, sorted into ffn's parts by name, must equal
``parameter_parts()`` part by part; the active count must be the total less the routed experts
a token skips. The released sizes are written once below, each with the source that
``ModelDims.source`` names, and the source text must quote them.

Test-only dependency (pyproject's `transformers` group); skipped without it unless
FFN_REQUIRE_TORCH=1 (set by CI), which makes a missing torch or transformers a failure.
"""

from __future__ import annotations

import dataclasses
import os
import re

import pytest

import ffn
from ffn.counting import llama4_vision_parameters
from ffn.models import RECENT_MOE_MODELS
from tests.test_torch_reference import import_or_skip

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach the Hub, even by accident
torch = import_or_skip("torch")
transformers = import_or_skip("transformers")

# The released sizes, as transformers' config arguments; what is not given is the class's
# default, which the source quoted in each ModelDims (and held below) says is the released one.
QWEN3 = {"num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
         "num_experts_per_tok": 8, "vocab_size": 151936, "norm_topk_prob": True,
         "tie_word_embeddings": False}
CASES: dict[str, tuple[str, str, dict[str, object]]] = {
    "Llama 4 Scout": ("Llama4ForCausalLM", "Llama4TextConfig", {}),
    "Llama 4 Maverick": ("Llama4ForCausalLM", "Llama4TextConfig",
                         {"num_local_experts": 128, "interleave_moe_layer_step": 2}),
    "Qwen3-30B-A3B": ("Qwen3MoeForCausalLM", "Qwen3MoeConfig",
                      {**QWEN3, "hidden_size": 2048, "num_hidden_layers": 48,
                       "num_attention_heads": 32, "moe_intermediate_size": 768}),
    "Qwen3-235B-A22B": ("Qwen3MoeForCausalLM", "Qwen3MoeConfig",
                        {**QWEN3, "hidden_size": 4096, "num_hidden_layers": 94,
                         "num_attention_heads": 64, "moe_intermediate_size": 1536}),
    "Kimi K2": ("DeepseekV3ForCausalLM", "DeepseekV3Config",
                {"vocab_size": 163840, "num_attention_heads": 64, "num_key_value_heads": 64,
                 "n_routed_experts": 384, "first_k_dense_replace": 1, "n_group": 1,
                 "topk_group": 1}),
    "gpt-oss-120b": ("GptOssForCausalLM", "GptOssConfig", {}),
    "gpt-oss-20b": ("GptOssForCausalLM", "GptOssConfig",
                    {"num_hidden_layers": 24, "num_local_experts": 32}),
    "Qwen3-Next-80B-A3B": ("Qwen3NextForCausalLM", "Qwen3NextConfig", {}),
}

# The numbers each source quotes, by the source's own name for them, and the config attribute
# they must equal (so the citation, the config built here and ffn's dimensions agree).
QUOTED: dict[str, dict[str, str]] = {
    "Llama 4 Scout": {"hidden_size": "hidden_size", "num_hidden_layers": "num_hidden_layers",
                      "num_attention_heads": "num_attention_heads",
                      "num_key_value_heads": "num_key_value_heads", "head_dim": "head_dim",
                      "num_local_experts": "num_local_experts",
                      "num_experts_per_tok": "num_experts_per_tok",
                      "intermediate_size": "intermediate_size",
                      "interleave_moe_layer_step": "interleave_moe_layer_step",
                      "vocab_size": "vocab_size"},
    "Llama 4 Maverick": {"num_local_experts": "num_local_experts",
                         "interleave_moe_layer_step": "interleave_moe_layer_step",
                         "intermediate_size_mlp": "intermediate_size_mlp"},
    "Qwen3-30B-A3B": {"hidden-size": "hidden_size", "num-layers": "num_hidden_layers",
                      "num-attention-heads": "num_attention_heads",
                      "num-query-groups": "num_key_value_heads", "kv-channels": "head_dim",
                      "num-experts": "num_experts", "moe-router-topk": "num_experts_per_tok",
                      "moe-ffn-hidden-size": "moe_intermediate_size",
                      "vocab-size": "vocab_size"},
    "Kimi K2": {"hidden-size": "hidden_size", "num-layers": "num_hidden_layers",
                "ffn-hidden-size": "intermediate_size",
                "num-attention-heads": "num_attention_heads", "q-lora-rank": "q_lora_rank",
                "kv-lora-rank": "kv_lora_rank", "qk-head-dim": "qk_nope_head_dim",
                "qk-pos-emb-head-dim": "qk_rope_head_dim", "v-head-dim": "v_head_dim",
                "num-experts": "n_routed_experts", "moe-router-topk": "num_experts_per_tok",
                "moe-ffn-hidden-size": "moe_intermediate_size", "vocab-size": "vocab_size"},
    "gpt-oss-120b": {"num_hidden_layers": "num_hidden_layers",
                     "num_experts": "num_local_experts",
                     "experts_per_token": "num_experts_per_tok", "vocab_size": "vocab_size",
                     "hidden_size": "hidden_size", "intermediate_size": "intermediate_size",
                     "head_dim": "head_dim", "num_attention_heads": "num_attention_heads",
                     "num_key_value_heads": "num_key_value_heads"},
    "gpt-oss-20b": {"num_hidden_layers": "num_hidden_layers",
                    "num_local_experts": "num_local_experts",
                    "num_experts_per_tok": "num_experts_per_tok"},
    "Qwen3-Next-80B-A3B": {"hidden-size": "hidden_size", "num-layers": "num_hidden_layers",
                           "num-attention-heads": "num_attention_heads",
                           "num-query-groups": "num_key_value_heads", "kv-channels": "head_dim",
                           "num-experts": "num_experts", "moe-router-topk": "num_experts_per_tok",
                           "moe-ffn-hidden-size": "moe_intermediate_size",
                           "moe-shared-expert-intermediate-size":
                               "shared_expert_intermediate_size",
                           "vocab-size": "vocab_size"},
}
QUOTED["Qwen3-235B-A22B"] = QUOTED["Qwen3-30B-A3B"]

# First match wins: the norms inside attention (Qwen3's QK norms, MLA's low-rank norms, the
# Gated DeltaNet's output norm) are attention's, as ffn counts them.
RULES = [(".self_attn.", "attention"), (".linear_attn.", "attention"), (".mlp.", "FFN"),
         (".feed_forward.", "FFN"), ("embed_tokens", "embeddings"), ("lm_head", "head"),
         ("norm", "norms")]


def meta_model(name: str) -> object:
    model_class, config_class, changes = CASES[name]
    config = getattr(transformers, config_class)(**changes)
    with torch.device("meta"):  # shapes only: nothing allocated, nothing downloaded
        return getattr(transformers, model_class)(config)


def test_every_recent_model_is_checked_and_found_by_name() -> None:
    assert [m.name for m in RECENT_MOE_MODELS] == list(CASES)
    assert set(QUOTED) == set(CASES)
    for model in RECENT_MOE_MODELS:
        assert ffn.get_model(model.name) is model


@pytest.mark.parametrize("name", list(CASES))
def test_counts_match_transformers_on_the_meta_device(name: str) -> None:
    dims = ffn.get_model(name)
    model = meta_model(name)
    parts = dict.fromkeys(["FFN", "attention", "embeddings", "norms", "head", "other"], 0)
    routed, moe_layers = 0, set()  # the routed experts' parameters, and the layers holding them
    for pname, p in model.named_parameters():  # type: ignore[attr-defined]
        part = next((part for key, part in RULES if key in pname), None)
        assert part is not None, f"{name}: no part for parameter {pname}"
        parts[part] += p.numel()
        if ".experts." in pname:
            routed += p.numel()
            moe_layers.add(pname.split(".layers.")[1].split(".")[0])
    assert dims.parameter_parts() == parts
    assert dims.moe_layers == len(moe_layers)
    assert dims.moe is not None
    skipped = routed // dims.moe.n_experts * (dims.moe.n_experts - dims.moe.top_k)
    assert dims.active_parameters() == sum(parts.values()) - skipped


@pytest.mark.parametrize("name", list(CASES))
def test_quoted_sizes_are_the_configs_and_ffns(name: str) -> None:
    dims = ffn.get_model(name)
    c = meta_model(name).config  # type: ignore[attr-defined]
    for quoted, attribute in QUOTED[name].items():
        assert f"{quoted} {getattr(c, attribute)}" in dims.source, (name, quoted)
    experts = getattr(c, "num_local_experts", None) or getattr(c, "n_routed_experts", None) or (
        c.num_experts)
    width = getattr(c, "moe_intermediate_size", None) or c.intermediate_size
    assert dims.moe is not None
    assert (dims.d_model, dims.n_layers, dims.vocab_size, dims.moe.n_experts, dims.moe.top_k,
            dims.d_ff) == (c.hidden_size, c.num_hidden_layers, c.vocab_size, experts,
                           c.num_experts_per_tok, width)
    assert dims.tied_head == c.tie_word_embeddings is False


def test_the_features_of_2025_are_counted() -> None:
    oss = ffn.get_model("gpt-oss-120b")  # without its router bias: 36 layers x 128 short
    assert oss.moe is not None
    plain = dataclasses.replace(oss, moe=dataclasses.replace(oss.moe, router_bias=False))
    assert oss.total_parameters() - plain.total_parameters() == 36 * 128 == 4608
    maverick = ffn.get_model("Llama 4 Maverick")  # layers 1, 3, ..., 47 MoE; 0, 2, ... dense
    assert maverick.moe_layers == 24 and maverick.moe is not None
    assert maverick.moe.dense == ffn.DenseLayers(1, 16384, moe_every=2)
    nxt = ffn.get_model("Qwen3-Next-80B-A3B")  # 36 Gated DeltaNet and 12 gated attentions
    assert nxt.linear_attention is not None and nxt.attention_per_layer is not None
    assert nxt.attention_parameters() == 36 * nxt.linear_attention.per_layer + (
        12 * nxt.attention_per_layer)


def test_bad_2025_fields_are_refused() -> None:
    kw: dict[str, object] = {"name": "m", "d_model": 8, "d_ff": 16, "n_layers": 4,
                             "gated": True, "bias": False, "source": "s"}
    # A router bias or an interleave without experts, moe_every > 1 without the dense width,
    # linear attention without its size: none can be written now (parts of MoEDims and
    # LinearAttention). What can be written wrong is refused:
    for make, error, message in [
            (lambda: ffn.MoEDims(4, 1, router_bias=1), TypeError,  # type: ignore[arg-type]
             "router_bias must be a bool, got int 1"),
            (lambda: ffn.DenseLayers(1, 8, moe_every=0), ValueError,
             "moe_every must be positive, got 0"),
            (lambda: ffn.ModelDims(**kw,  # type: ignore[arg-type]
                                   linear_attention=ffn.LinearAttention(5, 10)), ValueError,
             "linear_attention.sublayers must be at most the 4 attention sublayers, got 5"),
            (lambda: ffn.LinearAttention(0, 10), ValueError, "sublayers must be positive, got 0"),
            (lambda: ffn.LinearAttention(2, None), TypeError,  # type: ignore[arg-type]
             "per_layer must be an int, got NoneType None")]:
        with pytest.raises(error, match=f"^{re.escape(message)}$"):
            make()


# Llama 4 Scout's released vision config (the sizes torchtune's llama4_scout_17b_16e builds:
# clip_embed_dim 1408, 34 layers, 16 heads, patches of 14 on tiles of 336, projection 4096),
# as transformers' Llama4VisionConfig arguments; intermediate_size is 4 x 1408.
SCOUT_VISION = {"hidden_size": 1408, "num_hidden_layers": 34, "num_attention_heads": 16,
                "intermediate_size": 5632, "image_size": 336, "patch_size": 14,
                "projector_input_dim": 4096, "projector_output_dim": 4096,
                "vision_output_dim": 4096}


def multimodal_parts(vision: dict[str, int]) -> dict[str, int]:
    """transformers' whole Llama 4 (text defaults = Scout) on the meta device, by top module."""
    config = transformers.Llama4Config(vision_config=vision)
    with torch.device("meta"):
        model = transformers.Llama4ForConditionalGeneration(config)
    parts: dict[str, int] = {}
    for pname, p in model.named_parameters():
        part = pname.split(".")[0]  # language_model holds its own head
        parts[part] = parts.get(part, 0) + p.numel()
    return parts


@pytest.mark.parametrize("vision", [SCOUT_VISION, {  # and a small one, every size changed
    "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
    "intermediate_size": 256, "image_size": 56, "patch_size": 7, "num_channels": 2,
    "projector_input_dim": 96, "projector_output_dim": 96, "vision_output_dim": 96}])
def test_llama4_vision_tower_and_projector_match_transformers(vision: dict[str, int]) -> None:
    """Llama 4 ships as an image-and-text model; ffn counts its text model. In transformers'
    whole Scout (Llama4ForConditionalGeneration), the language model is ffn's Scout to the
    parameter, and the vision tower and projector are llama4_vision_parameters, to the
    parameter; with the released vision config, text and vision come to the card's 109B."""
    parts = multimodal_parts(vision)
    assert set(parts) == {"language_model", "vision_model", "multi_modal_projector"}
    scout = ffn.get_model("Llama 4 Scout")
    assert parts["language_model"] == scout.total_parameters()
    counted = llama4_vision_parameters(
        vision["hidden_size"], vision["num_hidden_layers"], vision["intermediate_size"],
        vision["image_size"], vision["patch_size"], vision["vision_output_dim"],
        scout.d_model, channels=vision.get("num_channels", 3))
    assert parts["vision_model"] + parts["multi_modal_projector"] == counted
    if vision is SCOUT_VISION:
        assert round(sum(parts.values()) / 1e9) == 109  # the model card's 109B in all


def test_llama4_vision_parameters_refuses_bad_sizes() -> None:
    good = {"d_model": 8, "n_layers": 1, "d_ff": 32, "image_size": 28, "patch_size": 14,
            "d_out": 16, "d_text": 8}
    for name, value, error, message in [
            ("n_layers", 0, ValueError, "n_layers must be positive, got 0"),
            ("d_model", 4.5, TypeError, "d_model must be an int"),
            ("patch_size", 29, ValueError, "patch_size must be at most image_size 28, got 29"),
            ("channels", -1, ValueError, "channels must be positive, got -1")]:
        with pytest.raises(error, match=message):
            llama4_vision_parameters(**{**good, name: value})  # type: ignore[arg-type]
