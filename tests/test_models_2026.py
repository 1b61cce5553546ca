"""`ffn.models.MODELS_2026` (Qwen3.5, Gemma 4, DeepSeek-V4, LongCat-Flash) against transformers.

As tests/test_models_2025.py does for 2025's models: each text model is built on PyTorch's meta
device (shapes only, nothing downloaded) from its released sizes, its parameters are sorted into
ffn's parts by name, and the parts must equal ``parameter_parts()`` exactly; the active count
is the total less the routed experts a token skips. The released sizes are written once below,
and each ``ModelDims.source`` must quote them.

Where a part sits depends on the model (RULES below): DeepSeek-V4's hyper-connections and
Gemma 4's router scales are "other"; Gemma 4's dense FFN beside the experts and LongCat-Flash's
second dense FFN are ffn's shared expert (every token uses them). LongCat-Flash's experts'
``gate_up_proj`` in transformers 5.24 has a row for every expert, zero-computation ones too,
which the forward never reads (``expert_idx >= num_routed_experts`` takes the identity):
those rows are counted here and left out, and a forward pass shows they are never read.
"""

from __future__ import annotations

import dataclasses
import os
from fractions import Fraction

import pytest

import ffn
from ffn.counting import compressed_attention_parameters, hyper_connection_parameters
from ffn.models import MODELS_2026
from ffn.moe_dims import MoEDims
from tests.test_torch_reference import import_or_skip

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach the Hub, even by accident
torch = import_or_skip("torch")
transformers = import_or_skip("transformers")

# DeepSeek-V4-Flash's released compress_ratios, one per layer (the MTP layer's left out):
# 0 (sliding window alone), 0, then 4 (CSA) and 128 (HCA) alternating.
V4_FLASH_RATIOS = [0, 0] + [4 if i % 2 == 0 else 128 for i in range(41)]
QWEN3_5_397B = {"hidden_size": 4096, "num_hidden_layers": 60, "num_attention_heads": 32,
                "num_key_value_heads": 2, "head_dim": 256, "num_experts": 512,
                "num_experts_per_tok": 10, "moe_intermediate_size": 1024,
                "shared_expert_intermediate_size": 1024, "linear_num_key_heads": 16,
                "linear_num_value_heads": 64, "linear_key_head_dim": 128,
                "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
                "full_attention_interval": 4, "vocab_size": 248320,
                "tie_word_embeddings": False}
GEMMA4_26B = {"hidden_size": 2816, "num_hidden_layers": 30, "intermediate_size": 2112,
              "moe_intermediate_size": 704, "num_experts": 128, "top_k_experts": 8,
              "enable_moe_block": True, "num_attention_heads": 16, "num_key_value_heads": 8,
              "num_global_key_value_heads": 2, "head_dim": 256, "global_head_dim": 512,
              "vocab_size": 262144, "sliding_window": 1024, "attention_k_eq_v": True,
              "final_logit_softcapping": 30.0, "use_double_wide_mlp": False,
              "num_kv_shared_layers": 0, "hidden_size_per_layer_input": 0,
              "tie_word_embeddings": True}
CASES: dict[str, tuple[str, str, dict[str, object]]] = {
    "Qwen3.5-35B-A3B": ("Qwen3_5MoeForCausalLM", "Qwen3_5MoeTextConfig", {}),
    "Qwen3.5-397B-A17B": ("Qwen3_5MoeForCausalLM", "Qwen3_5MoeTextConfig", QWEN3_5_397B),
    "Gemma 4 26B-A4B": ("Gemma4ForCausalLM", "Gemma4TextConfig", GEMMA4_26B),
    "DeepSeek-V4-Flash": ("DeepseekV4ForCausalLM", "DeepseekV4Config",
                          {"compress_ratios": V4_FLASH_RATIOS}),
    "LongCat-Flash": ("LongcatFlashForCausalLM", "LongcatFlashConfig", {}),
}

# The sizes each source quotes, by the source's own name, and the config attribute they equal.
SAME_NAME = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
             "head_dim", "vocab_size")
QUOTED: dict[str, tuple[str, ...]] = {
    "Qwen3.5-35B-A3B": (*SAME_NAME, "num_experts", "num_experts_per_tok",
                        "moe_intermediate_size", "shared_expert_intermediate_size",
                        "linear_num_key_heads", "linear_num_value_heads"),
    "Gemma 4 26B-A4B": ("hidden_size", "num_hidden_layers", "intermediate_size",
                        "moe_intermediate_size", "num_experts", "top_k_experts",
                        "num_attention_heads", "num_key_value_heads", "head_dim",
                        "vocab_size"),
    "DeepSeek-V4-Flash": (*SAME_NAME, "q_lora_rank", "o_groups", "o_lora_rank",
                          "n_routed_experts", "num_experts_per_tok", "n_shared_experts",
                          "moe_intermediate_size", "hc_mult", "index_n_heads",
                          "index_head_dim"),
    "LongCat-Flash": ("hidden_size", "num_layers", "num_attention_heads", "q_lora_rank",
                      "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                      "ffn_hidden_size", "n_routed_experts", "zero_expert_num", "moe_topk",
                      "expert_ffn_hidden_size", "vocab_size"),
}
QUOTED["Qwen3.5-397B-A17B"] = QUOTED["Qwen3.5-35B-A3B"]

# First match wins. Norms inside attention (QK norms, low-rank norms, compressors' norms) are
# attention's, as ffn counts them; Gemma 4's router scales (input and per expert) are "other".
RULES = [("router.scale", "other"), ("router.per_expert_scale", "other"), ("_hc.", "other"),
         ("hc_head.", "other"), (".self_attn.", "attention"), (".linear_attn.", "attention"),
         (".mlp.", "FFN"), (".mlps.", "FFN"), (".experts.", "FFN"), (".router.", "FFN"),
         ("embed_tokens", "embeddings"), ("lm_head", "head"), ("norm", "norms")]


def meta_model(name: str) -> object:
    model_class, config_class, changes = CASES[name]
    config = getattr(transformers, config_class)(**changes)
    with torch.device("meta"):  # shapes only: nothing allocated, nothing downloaded
        return getattr(transformers, model_class)(config)


def unread_rows(name: str, pname: str, p: object, config: object) -> int:
    """Parameters transformers allocates but never reads: LongCat-Flash's gate_up_proj rows
    for its zero-computation experts (identity functions, no weights)."""
    if name != "LongCat-Flash" or not pname.endswith("experts.gate_up_proj"):
        return 0
    routed, zero = config.n_routed_experts, config.zero_expert_num  # type: ignore[attr-defined]
    assert p.shape[0] == routed + zero  # type: ignore[attr-defined]
    return zero * p[0].numel()  # type: ignore[index]


def test_every_2026_model_is_checked_and_found_by_name() -> None:
    assert [m.name for m in MODELS_2026] == list(CASES)
    assert set(QUOTED) == set(CASES)
    for model in MODELS_2026:
        assert ffn.get_model(model.name) is model


@pytest.mark.parametrize("name", list(CASES))
def test_counts_match_transformers_on_the_meta_device(name: str) -> None:
    dims = ffn.get_model(name)
    model = meta_model(name)
    config = model.config  # type: ignore[attr-defined]
    parts = dict.fromkeys(["FFN", "attention", "embeddings", "norms", "head", "other"], 0)
    routed, moe_layers, unread = 0, set(), 0  # routed experts' parameters, their layers
    for pname, p in model.named_parameters():  # type: ignore[attr-defined]
        part = next((part for key, part in RULES if key in pname), None)
        assert part is not None, f"{name}: no part for parameter {pname}"
        skip = unread_rows(name, pname, p, config)
        unread += skip
        parts[part] += p.numel() - skip
        if ".experts." in pname:
            routed += p.numel() - skip
            moe_layers.add(pname.split(".layers.")[1].split(".")[0])
    assert dims.parameter_parts() == parts
    assert dims.moe_layers == len(moe_layers)
    assert dims.moe is not None
    n_experts, top_k = dims.moe.n_experts, dims.moe.top_k
    assert routed == dims.moe_layers * n_experts * dims.expert_parameters()
    skipped = routed // n_experts * (n_experts - top_k)
    assert dims.active_parameters() == sum(parts.values()) - skipped
    assert (unread > 0) == (name == "LongCat-Flash")


@pytest.mark.parametrize("name", list(CASES))
def test_quoted_sizes_are_the_configs_and_ffns(name: str) -> None:
    dims = ffn.get_model(name)
    c = meta_model(name).config  # type: ignore[attr-defined]
    if name == "Gemma 4 26B-A4B":  # per-layer sizes: the global ones are the sliding layers'
        full = c.layer_types.index("full_attention")
        layer = c.per_layer_config[full]
        assert f"num_global_key_value_heads {layer.num_key_value_heads}" in dims.source
        assert f"global_head_dim {layer.head_dim}" in dims.source
        c.allow_global_per_layer_attribute_access = True
    for attribute in QUOTED[name]:
        value = getattr(c, attribute)
        assert f"{attribute} {value}" in dims.source, (name, attribute)
    experts = getattr(c, "n_routed_experts", None) or c.num_experts
    top_k = getattr(c, "top_k_experts", None) or c.num_experts_per_tok
    width = getattr(c, "expert_ffn_hidden_size", None) or c.moe_intermediate_size
    assert dims.moe is not None
    assert (dims.d_model, dims.n_layers, dims.vocab_size, dims.moe.n_experts, dims.moe.top_k,
            dims.d_ff) == (c.hidden_size, c.num_hidden_layers, c.vocab_size, experts, top_k,
                           width)
    assert dims.tied_head == c.tie_word_embeddings


def test_the_layer_kinds_are_the_configs() -> None:
    """The numbers of each attention kind ffn's entries assume, read from the built configs."""
    v4 = meta_model("DeepSeek-V4-Flash").config  # type: ignore[attr-defined]
    kinds = [v4.layer_types.count(k) for k in ("sliding_attention", "compressed_sparse_attention",
                                               "heavily_compressed_attention")]
    assert kinds == [2, 21, 20]
    assert v4.mlp_layer_types == ["hash_moe"] * 3 + ["moe"] * 40
    moe = ffn.get_model("DeepSeek-V4-Flash").moe
    assert moe is not None and moe.hash_layers == 3
    assert moe.expert_format == "mxfp4"  # the released expert_dtype "fp4", priced as MXFP4
    assert v4.compress_rates == {"compressed_sparse_attention": 4,
                                 "heavily_compressed_attention": 128}
    assert v4.swiglu_limit == 10.0  # gpt-oss clamps at 7
    gemma = meta_model("Gemma 4 26B-A4B").config  # type: ignore[attr-defined]
    assert gemma.layer_types.count("full_attention") == 5
    for name, n_linear in [("Qwen3.5-35B-A3B", 30), ("Qwen3.5-397B-A17B", 45)]:
        c = meta_model(name).config  # type: ignore[attr-defined]
        assert c.layer_types.count("linear_attention") == n_linear
        linear = ffn.get_model(name).linear_attention
        assert linear is not None and linear.sublayers == n_linear


def test_longcat_never_reads_the_zero_experts_rows() -> None:
    """A tiny LongCat-Flash with NaN in the gate_up_proj rows of its zero-computation experts
    gives finite logits: the forward never reads them, so ffn leaves them out of the count."""
    config = transformers.LongcatFlashConfig(
        vocab_size=50, hidden_size=16, num_layers=2, num_attention_heads=2, ffn_hidden_size=32,
        q_lora_rank=8, kv_lora_rank=8, qk_nope_head_dim=4, qk_rope_head_dim=4, head_dim=4,
        v_head_dim=4, n_routed_experts=4, zero_expert_num=4, moe_topk=3,
        expert_ffn_hidden_size=8)
    torch.manual_seed(0)
    model = transformers.LongcatFlashForCausalLM(config).eval()
    with torch.no_grad():
        for layer in model.model.layers:
            layer.mlp.experts.gate_up_proj[config.n_routed_experts:] = float("nan")
            # a router that prefers the zero experts, so the identity path surely runs
            layer.mlp.router.e_score_correction_bias[config.n_routed_experts:] = 1.0
        logits = model(torch.arange(12).reshape(2, 6)).logits
    assert torch.isfinite(logits).all()


def test_deepseek_v4_attention_and_hyper_connections_by_hand() -> None:
    """compressed_attention_parameters and hyper_connection_parameters on small sizes, each
    matrix written out from the shapes transformers' modules declare."""
    d, heads, hd, q, groups, o, rate, ih, idim = 8, 2, 4, 3, 2, 5, 4, 3, 2
    core = (heads + d * q + q + q * heads * hd + d * hd + hd
            + (groups * o) * (heads * hd // groups) + d * groups * o)
    assert compressed_attention_parameters(d, heads, hd, q, groups, o) == core
    hca = core + 2 * d * hd + rate * hd + hd
    assert compressed_attention_parameters(d, heads, hd, q, groups, o, rate) == hca
    indexer = 2 * d * 2 * idim + rate * 2 * idim + idim + q * ih * idim + ih * d
    csa = core + 2 * d * 2 * hd + rate * 2 * hd + hd + indexer
    assert compressed_attention_parameters(d, heads, hd, q, groups, o, rate, ih, idim) == csa
    n = 2  # streams: per sublayer fn (8, 16), base 8, scale 3; the head fn (2, 16), 2, 1
    assert hyper_connection_parameters(d, n, 3) == 3 * (8 * 16 + 8 + 3) + (2 * 16 + 2 + 1)


def test_bad_2026_sizes_are_refused() -> None:
    good = {"d_model": 8, "n_heads": 2, "head_dim": 4, "q_rank": 3, "o_groups": 2, "o_rank": 5}
    for extra, error, message in [
            ({"o_groups": 3}, ValueError, "o_groups must divide n_heads \\* head_dim = 8, got 3"),
            ({"compress_rate": -1}, ValueError, "compress_rate must be non-negative, got -1"),
            ({"compress_rate": 4, "index_heads": 2}, ValueError,
             "index_heads and index_head_dim go together, got 2 and 0"),
            ({"index_heads": 2, "index_head_dim": 2}, ValueError,
             "an indexer \\(index_heads\\) picks compressed entries: give a compress_rate"),
            ({"head_dim": 4.0}, TypeError, "head_dim must be an int")]:
        with pytest.raises(error, match=message):
            compressed_attention_parameters(**{**good, **extra})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_streams must be positive, got 0"):
        hyper_connection_parameters(8, 0, 2)
    kw: dict[str, object] = {"name": "m", "d_model": 8, "d_ff": 16, "n_layers": 4,
                             "gated": True, "bias": False, "source": "s"}
    for extra, error, message in [
            ({"extra_attention": 5}, ValueError, "extra_attention adds to a counted sublayer"),
            ({"norms_per_layer": -1}, ValueError, "norms_per_layer must be non-negative"),
            ({"moe": MoEDims(4, 1, hash_layers=5)}, ValueError,
             "moe.hash_layers must be at most the 4 MoE layers, got 5")]:
        with pytest.raises(error, match=message):
            ffn.ModelDims(**kw, **extra)  # type: ignore[arg-type]
    for fields, error, message in [
            ({"zero_experts": True}, TypeError, "zero_experts must be an int"),
            ({"zero_experts": -1}, ValueError, "zero_experts must be non-negative, got -1"),
            ({"hash_layers": 1.0}, TypeError, "hash_layers must be an int"),
            ({"expert_format": "fp4"}, ValueError, "unknown expert_format 'fp4'; valid"),
            ({"expert_format": 4}, TypeError, "expert_format must be")]:
        with pytest.raises(error, match=message):
            MoEDims(4, 1, **fields)  # type: ignore[arg-type]


def test_zero_experts_widen_the_router_and_only_it() -> None:
    longcat = ffn.get_model("LongCat-Flash")
    assert longcat.moe is not None
    plain = dataclasses.replace(longcat, moe=dataclasses.replace(longcat.moe, zero_experts=0))
    assert longcat.router_parameters() - plain.router_parameters() == 256 * 6144
    assert longcat.total_parameters() - plain.total_parameters() == 28 * 256 * 6144
    assert longcat.expert_parameters() == plain.expert_parameters()
    assert (longcat.ffn_flops_per_token() - plain.ffn_flops_per_token()
            == 28 * 2 * 6144 * 256)  # the router's product with the zero experts' rows


def test_kimi_k25_text_defaults_are_deepseek_v3s() -> None:
    """Why the page does not count Kimi K2.5: transformers' Kimi_K25Config builds its text
    model as DeepSeek-V3's, with DeepSeek-V3's own sizes (256 experts), not Kimi's (384)."""
    text = transformers.Kimi_K25Config().text_config
    v3 = ffn.get_model("DeepSeek-V3")
    assert text.model_type == "deepseek_v3"
    kimi = ffn.get_model("Kimi K2").moe
    assert v3.moe is not None and kimi is not None
    assert (text.hidden_size, text.n_routed_experts, text.vocab_size) == (
        v3.d_model, v3.moe.n_experts, v3.vocab_size)
    assert kimi.n_experts == 384


def test_deepseek_v4_decode_bytes_with_4_bit_experts_by_hand() -> None:
    """docs/moe-2026.md's bytes for one token: in every one of the 43 MoE layers, the router
    (256 x 4096), the shared expert (3 x 4096 x 2048) and x, y at 1 byte (e4m3), the 6 chosen
    experts' matrices at MXFP4's 17/32 of a byte (4 bits and a 1-byte scale per 32)."""
    v4 = ffn.get_model("DeepSeek-V4-Flash")
    d, f = 4096, 2048
    per_layer = Fraction(256 * d + 3 * d * f + 2 * d) + Fraction(17, 32) * 6 * 3 * d * f
    assert ffn.decode_bytes(v4, 1, "e4m3", expert_bytes_per_value="mxfp4") == float(
        43 * per_layer)
    assert ffn.decode_bytes(v4, 1, "bfloat16") == 2 * 43 * (256 * d + 7 * 3 * d * f + 2 * d)
