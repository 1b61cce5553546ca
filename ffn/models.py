"""Published dimensions of well-known transformers, and what they imply for the FFN.

Only the dimensions are data here; every derived number (parameters, shares, FLOPs) is
computed with ``ffn.counting`` (and ``ffn.moe``'s counts for a mixture of experts).
"""

from __future__ import annotations

from dataclasses import dataclass

from ffn import _validate as check
from ffn.counting import (
    count_attention_parameters,
    count_flops,
    count_parameters,
    llama_d_ff,
)
from ffn.moe import count_moe_flops, count_moe_parameters


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
            count_moe_parameters(self.d_model, 1, self.n_experts, self.top_k)  # checks them
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

    @property
    def resolved_d_ff(self) -> int:
        """The hidden width: ``d_ff`` when published, else LLaMA's rule with this model's
        ``multiple_of`` and ``ffn_dim_multiplier``."""
        if self.d_ff is not None:
            return self.d_ff
        return llama_d_ff(self.d_model, self.multiple_of, self.ffn_dim_multiplier)

    @property
    def attention_sublayers(self) -> int:
        """Number of attention sublayers: ``n_attention``, or ``n_layers`` when not given."""
        return self.n_attention if self.n_attention is not None else self.n_layers

    def ffn_parameters_per_layer(self, active: bool = False) -> int:
        """Parameters of one layer's FFN, or of one MoE layer's experts, router and shared experts
        (``active``: those a token uses)."""
        if self.n_experts is None:
            return count_parameters(self.d_model, self.resolved_d_ff, bias=self.bias,
                                    gated=self.gated)
        return count_moe_parameters(self.d_model, self.resolved_d_ff, self.n_experts,
                                    self.top_k if active else None, self.bias,
                                    self.gated) + self.shared_parameters()

    def shared_parameters(self) -> int:
        """Parameters of one MoE layer's shared experts and their gate, which every token uses
        (0 without any)."""
        shared = count_parameters(self.d_model, self.shared_d_ff, self.bias, self.gated) if (
            self.shared_d_ff) else 0
        gate = self.d_model if self.shared_gate else 0  # (d_model, 1)
        return shared + gate

    def dense_ffn_parameters(self) -> int:
        """Parameters of the FFN of one of the leading dense layers (0 without any)."""
        if self.dense_d_ff is None:
            return 0
        return count_parameters(self.d_model, self.dense_d_ff, self.bias, self.gated)

    def ffn_parameters(self, active: bool = False) -> int:
        """Parameters of all the model's FFNs (``active``: those one token uses)."""
        moe_layers = self.n_layers - self.dense_layers
        return (self.dense_layers * self.dense_ffn_parameters()
                + moe_layers * self.ffn_parameters_per_layer(active))

    def attention_parameters(self) -> int:
        """Parameters of all the model's attention sublayers (Q, K, V, O unless given)."""
        per_layer = self.attention_per_layer or count_attention_parameters(
            self.d_model, self.bias, self.kv_dim)
        return self.attention_sublayers * per_layer

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
        if self.n_experts is None or self.top_k is None:
            per_layer = count_flops(self.d_model, self.resolved_d_ff, gated=self.gated,
                                    backward=backward)
        else:  # the router, top_k experts, and the shared experts and their gate
            per_layer = count_moe_flops(self.d_model, self.resolved_d_ff, self.n_experts,
                                        self.top_k, gated=self.gated, backward=backward)
            if self.shared_d_ff:
                per_layer += count_flops(self.d_model, self.shared_d_ff, gated=self.gated,
                                         backward=backward)
            per_layer += (6 if backward else 2) * self.d_model * self.shared_gate
        dense = 0 if self.dense_d_ff is None else self.dense_layers * count_flops(
            self.d_model, self.dense_d_ff, gated=self.gated, backward=backward)
        return dense + (self.n_layers - self.dense_layers) * per_layer


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


def latent_attention_parameters(d_model: int, n_heads: int, q_rank: int, kv_rank: int,
                                nope_dim: int, rope_dim: int, v_dim: int) -> int:
    """One multi-head latent attention sublayer (DeepSeek-V2 and V3): projections and norms.

    Queries and keys-with-values each pass through a low-rank bottleneck (``q_rank``,
    ``kv_rank``) with an RMSNorm; each head's query and key has ``nope_dim`` plain and
    ``rope_dim`` rotary dimensions, the rotary key shared by all heads.
    """
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


ALL_MODELS: tuple[ModelDims, ...] = (*MODELS, *LLAMA_MODELS, *MOE_MODELS,
                                     *FINE_GRAINED_MOE_MODELS)
"""Every model of the four tuples above, in their order: what ``get_model`` knows."""


def get_model(name: str) -> ModelDims:
    """The model called ``name`` (exact, e.g. ``"GPT-2 small"``), from ``ALL_MODELS``.

    A KeyError listing the valid names if there is no such model, a TypeError for a name that
    is not a str.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {check.describe(name)}")
    for model in ALL_MODELS:
        if model.name == name:
            return model
    names = ", ".join(repr(m.name) for m in ALL_MODELS)
    raise KeyError(f"no model named {name!r}; valid: {names}")
