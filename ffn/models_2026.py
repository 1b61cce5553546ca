"""The open mixtures of experts of 2026 (and LongCat-Flash, for its zero-computation experts):
their text models' dimensions, each equal to transformers' model on the meta device
(tests/test_models_2026.py). ``ffn.models`` puts them in the catalogue.
"""

from __future__ import annotations

from ffn.counting import (
    compressed_attention_parameters,
    gated_deltanet_parameters,
    head_attention_parameters,
    hyper_connection_parameters,
    latent_attention_parameters,
)
from ffn.model_dims import LinearAttention, ModelDims
from ffn.moe_dims import DenseLayers, MoEDims, SharedExperts

# Where the 2026 models' dimensions come from: transformers 5.24's configuration classes, whose
# defaults each name a released checkpoint (@auto_docstring(checkpoint=...)), and, for the
# sizes those defaults do not cover, the released config.json as public copies quote it (the
# Hub cannot be reached from here). The vision towers are not counted: the text models are.
_TF = "transformers 5.24, {}"
_COPIES = "config.json as quoted by public copies of {}"


def _deepseek_v4(name: str, n_sliding: int, n_csa: int, n_hca: int, source: str) -> ModelDims:
    """A DeepSeek-V4 (Flash's sizes): 43 layers of width 4096, each an MoE of 256 experts of
    2048 (top 6) and a shared one, the first 3 routed by a token-id table (same counts);
    attention with one shared key-value head of 512, 64 query heads, a grouped output
    projection, and by layer a sliding window alone or with a CSA or HCA compressor; four
    residual streams (hyper-connections, "other"); the MTP layer not counted. The routed
    experts ship in 4 bits (the config's expert_dtype "fp4"), priced as MXFP4."""
    def attention(rate: int = 0, index: bool = False) -> int:
        return compressed_attention_parameters(4096, 64, 512, 1024, 8, 1024, rate,
                                               64 if index else 0, 128 if index else 0)
    sliding, layers = attention(), n_sliding + n_csa + n_hca
    extra = n_csa * (attention(4, index=True) - sliding) + n_hca * (attention(128) - sliding)
    return ModelDims(name, 4096, 2048, layers, gated=True, bias=False,
                     moe=MoEDims(256, 6, SharedExperts(2048), hash_layers=3,
                                 expert_format="mxfp4"),
                     vocab_size=129280, tied_head=False, norm="rms",
                     attention_per_layer=sliding, extra_attention=extra,
                     other=hyper_connection_parameters(4096, 4, 2 * layers), source=source)


def _qwen3_5(name: str, d_model: int, n_layers: int, n_experts: int, top_k: int, d_ff: int,
             n_heads: int, n_value_heads: int, source: str) -> ModelDims:
    """A Qwen3.5 MoE text model: Qwen3-Next's layout (three Gated DeltaNet layers, then one
    gated attention with 2 key-value heads of 256 and QK norms), routed experts of d_ff and a
    gated shared expert of the same width, 248320 tokens, an untied head."""
    return ModelDims(name, d_model, d_ff, n_layers, gated=True, bias=False,
                     moe=MoEDims(n_experts, top_k, SharedExperts(d_ff, gate=True)),
                     vocab_size=248320, tied_head=False, norm="rms",
                     attention_per_layer=head_attention_parameters(
                         d_model, n_heads, 2, 256, qk_norm=True, output_gate=True),
                     linear_attention=LinearAttention(n_layers // 4 * 3, gated_deltanet_parameters(
                         d_model, 16, n_value_heads, 128, 128, 4)), source=source)


def _gemma4_moe(name: str, source: str) -> ModelDims:
    """Gemma 4's MoE text model: 30 layers of width 2816, five sliding-window attentions (16
    heads, 8 key-value heads of 256) then one full (2 key-value heads of 512, keys used as
    values); in each layer a dense GELU-gated FFN of 2112 (counted as the shared expert: every
    token uses it, beside the experts) and 8 of 128 experts of 704; 7 norms a layer; the
    router's input scale and per-expert output scales ("other"); a tied head."""
    sliding = head_attention_parameters(2816, 16, 8, 256, qk_norm=True)
    full = head_attention_parameters(2816, 16, 2, 512, qk_norm=True, k_eq_v=True)
    return ModelDims(name, 2816, 704, 30, gated=True, bias=False,
                     moe=MoEDims(128, 8, SharedExperts(2112)),
                     vocab_size=262144, tied_head=True, norm="rms",
                     norms_per_layer=7, attention_per_layer=sliding,
                     extra_attention=5 * (full - sliding), other=30 * (2816 + 128),
                     source=source)


def _longcat_flash(name: str, source: str) -> ModelDims:
    """LongCat-Flash: 28 layers of width 6144, each two half-layers (transformers'
    num_hidden_layers 56) of latent attention and a dense SwiGLU FFN of 12288; beside the
    second, a shortcut MoE: 12 picks among 512 experts of 2048 and 256 zero-computation
    experts. In ffn's terms: 56 layers, the odd ones MoE with the dense FFN as shared expert."""
    return ModelDims(name, 6144, 2048, 56, gated=True, bias=False,
                     moe=MoEDims(512, 12, SharedExperts(12288), dense=DenseLayers(1, 12288, 2),
                                 zero_experts=256),
                     vocab_size=131072, tied_head=False, norm="rms",
                     attention_per_layer=latent_attention_parameters(6144, 64, 1536, 512, 128,
                                                                     64, 128), source=source)


MODELS_2026: tuple[ModelDims, ...] = (
    _qwen3_5("Qwen3.5-35B-A3B", 2048, 40, 256, 8, 512, 16, 32,
             _TF.format("Qwen3_5MoeTextConfig() defaults (docstring checkpoint "
                        "Qwen/Qwen3.5-35B-A3B): hidden_size 2048, num_hidden_layers 40, "
                        "num_attention_heads 16, num_key_value_heads 2, head_dim 256, "
                        "num_experts 256, num_experts_per_tok 8, moe_intermediate_size 512, "
                        "shared_expert_intermediate_size 512, linear_num_key_heads 16, "
                        "linear_num_value_heads 32, vocab_size 248320, untied; full "
                        "attention every 4th layer")),
    _qwen3_5("Qwen3.5-397B-A17B", 4096, 60, 512, 10, 1024, 32, 64,
             _COPIES.format("Qwen/Qwen3.5-397B-A17B (one cites Hub revision 8472618)") +
             ", text_config: hidden_size 4096, num_hidden_layers 60, num_attention_heads 32, "
             "num_key_value_heads 2, head_dim 256, num_experts 512, num_experts_per_tok 10, "
             "moe_intermediate_size 1024, shared_expert_intermediate_size 1024, "
             "linear_num_key_heads 16, linear_num_value_heads 64, full_attention_interval 4, "
             "vocab_size 248320, untied; the rest Qwen3_5MoeTextConfig's defaults"),
    _gemma4_moe("Gemma 4 26B-A4B",
                _COPIES.format("google/gemma-4-26B-A4B-it (one: mlx-community/"
                               "gemma-4-26b-a4b-it-4bit, revision 0d77464)") +
                ", text_config: hidden_size 2816, num_hidden_layers 30, intermediate_size "
                "2112, moe_intermediate_size 704, num_experts 128, top_k_experts 8, "
                "num_attention_heads 16, num_key_value_heads 8, num_global_key_value_heads 2, "
                "head_dim 256, global_head_dim 512, attention_k_eq_v true, vocab_size 262144, "
                "tied; 5 sliding layers then 1 full; built with transformers 5.24's "
                "Gemma4TextConfig"),
    _deepseek_v4("DeepSeek-V4-Flash", 2, 21, 20,
                 _TF.format("DeepseekV4Config() defaults (docstring checkpoint "
                            "deepseek-ai/DeepSeek-V4-Flash-Base): hidden_size 4096, "
                            "num_hidden_layers 43, num_attention_heads 64, num_key_value_heads "
                            "1, head_dim 512, q_lora_rank 1024, o_groups 8, o_lora_rank 1024, "
                            "n_routed_experts 256, num_experts_per_tok 6, n_shared_experts 1, "
                            "moe_intermediate_size 2048, 3 hash layers, hc_mult 4, "
                            "index_n_heads 64, index_head_dim 128, vocab_size 129280, untied; ") +
                 _COPIES.format("deepseek-ai/DeepSeek-V4-Flash") + ": compress_ratios 0, 0, "
                 "then 4 and 128 alternating (2 sliding, 21 CSA, 20 HCA layers)"),
    _longcat_flash("LongCat-Flash",
                   _TF.format("LongcatFlashConfig() defaults (docstring checkpoint "
                              "meituan-longcat/LongCat-Flash-Chat): hidden_size 6144, "
                              "num_layers 28, num_attention_heads 64, q_lora_rank 1536, "
                              "kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, "
                              "v_head_dim 128, ffn_hidden_size 12288, n_routed_experts 512, "
                              "zero_expert_num 256, moe_topk 12, expert_ffn_hidden_size 2048, "
                              "vocab_size 131072, untied")),
)
"""Open mixtures of experts released in 2026 (and LongCat-Flash, September 2025, for its
zero-computation experts), their text models. Not in ``ALL_MODELS``; ``get_model`` knows them."""
