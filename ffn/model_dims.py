"""A transformer's published dimensions (``ModelDims``), and what they imply for the FFN.

``ModelDims`` is made of parts, each checked when made: the hidden width or LLaMA's rule for it
(``LlamaWidth``), the linear-attention sublayers (``LinearAttention``), and a mixture of
experts' fields (``ffn.moe_dims.MoEDims``), None where the model has none. Only the dimensions
are data here; every derived number (parameters, shares, FLOPs, the weights a decode step
reads) is asked of ``ffn.counting``. The models themselves are ``ffn.models``' catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass

from ffn import _validate as check
from ffn.counting import (
    count_attention_parameters,
    count_flops,
    count_moe_flops,
    count_moe_parameters,
    count_parameters,
    llama_d_ff,
    router_parameters,
    shared_expert_flops,
    shared_expert_parameters,
)
from ffn.moe_dims import MoEDims


@dataclass(frozen=True)
class LlamaWidth:
    """LLaMA's rule for the hidden width (``ffn.llama_d_ff``), where a source gives the rule's
    arguments instead of the width."""

    multiple_of: int = 256  # the width is rounded up to a multiple of this
    ffn_dim_multiplier: float | None = None  # LLaMA 2 and 3's widening factor; None: none

    def __post_init__(self) -> None:
        object.__setattr__(self, "multiple_of", check.positive_int(self.multiple_of,
                                                                   "multiple_of"))
        if self.ffn_dim_multiplier is not None:  # a float: Meta's code multiplies in floats
            object.__setattr__(self, "ffn_dim_multiplier", check.real(
                self.ffn_dim_multiplier, "ffn_dim_multiplier", 0.0, float("inf"),
                high_open=True, low_open=True))

    def d_ff(self, d_model: int) -> int:
        """The hidden width the rule gives a model of width ``d_model``."""
        return llama_d_ff(d_model, self.multiple_of, self.ffn_dim_multiplier)


@dataclass(frozen=True)
class LinearAttention:
    """Attention sublayers that are linear attention instead (Qwen3-Next's Gated DeltaNet)."""

    sublayers: int  # how many of the model's attention sublayers
    per_layer: int  # one of them's parameters

    def __post_init__(self) -> None:
        for field in ("sublayers", "per_layer"):
            object.__setattr__(self, field, check.positive_int(getattr(self, field), field))


@dataclass(frozen=True)
class ModelDims:
    """The published dimensions of one transformer; ``parameter_parts`` counts the whole model."""

    name: str
    d_model: int  # width of the residual stream
    d_ff: int | LlamaWidth  # hidden width, or LLaMA's rule for it (resolved_d_ff: the width)
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
    attention_per_layer: int | None = None  # one attention sublayer's parameters where Q, K, V,
    # O of width d_model (kv_dim) do not describe it; None: count_attention_parameters
    linear_attention: LinearAttention | None = None  # None: every attention sublayer is softmax
    moe: MoEDims | None = None  # the experts; None: one dense FFN per layer
    norms_per_layer: int = 2  # norms in each layer (Gemma 4: 4, and 3 more beside its experts)
    extra_attention: int = 0  # attention parameters beyond attention_per_layer in all the
    # sublayers, where kinds differ (DeepSeek-V4's compressors, Gemma 4's full layers)

    def __post_init__(self) -> None:
        for field in ("name", "source"):
            check.text(getattr(self, field), field)
        required, zero_ok = ("d_model", "n_layers", "other", "norms_per_layer",
                             "extra_attention"), ("other", "norms_per_layer", "extra_attention")
        for field in ("d_model", "n_layers", "other", "n_attention", "vocab_size", "n_positions",
                      "kv_dim", "attention_per_layer", "norms_per_layer", "extra_attention"):
            value = getattr(self, field)  # the optional ones' None: not given
            if field in required or value is not None:
                value = check.positive_int(value, field, zero_ok=field in zero_ok)
                object.__setattr__(self, field, value)  # a Python int: numpy's int64 overflows
        if isinstance(self.d_ff, LlamaWidth):
            self.d_ff.d_ff(self.d_model)  # the rule refuses a width it cannot give (zero, or a
            # d_model too wide for a float times the multiplier)
        else:
            object.__setattr__(self, "d_ff", check.positive_int(
                self.d_ff, "d_ff", kind="an int or a LlamaWidth"))
        for field in ("gated", "bias", "tied_head"):
            check.boolean(getattr(self, field), field)
        check.choice(self.norm, "norm", ("layer", "rms"))
        for field, kind in (("linear_attention", LinearAttention), ("moe", MoEDims)):
            if getattr(self, field) is not None and not isinstance(getattr(self, field), kind):
                raise TypeError(f"{field} must be a {kind.__name__} or None, got "
                                f"{check.describe(getattr(self, field))}")
        if self.moe is not None and self.moe.dense is not None and (
                self.moe.dense.first > self.n_layers):
            raise ValueError(f"moe.dense.first must be at most n_layers = {self.n_layers}, got "
                             f"{self.moe.dense.first}")
        if self.extra_attention and self.attention_per_layer is None:
            raise ValueError("extra_attention adds to a counted sublayer: give "
                             "attention_per_layer")
        if self.moe is not None and self.moe.hash_layers > self.moe_layers:
            raise ValueError(f"moe.hash_layers must be at most the {self.moe_layers} MoE "
                             f"layers, got {self.moe.hash_layers}")
        if self.linear_attention and self.linear_attention.sublayers > self.attention_sublayers:
            raise ValueError(f"linear_attention.sublayers must be at most the "
                             f"{self.attention_sublayers} attention sublayers, got "
                             f"{self.linear_attention.sublayers}")

    @property
    def resolved_d_ff(self) -> int:
        """The hidden width: ``d_ff`` when published, else what LLaMA's rule gives."""
        if isinstance(self.d_ff, LlamaWidth):
            return self.d_ff.d_ff(self.d_model)
        return self.d_ff

    @property
    def moe_layers(self) -> int:
        """Number of MoE layers (0 without experts): after the leading dense layers, one in
        every ``moe_every``."""
        return 0 if self.moe is None else self.moe.moe_layers(self.n_layers)

    @property
    def attention_sublayers(self) -> int:
        """Number of attention sublayers: ``n_attention``, or ``n_layers`` when not given."""
        return self.n_attention if self.n_attention is not None else self.n_layers

    def ffn_parameters_per_layer(self, active: bool = False) -> int:
        """Parameters of one layer's FFN, or of one MoE layer's experts, router and shared experts
        (``active``: those a token uses)."""
        if self.moe is None:
            return count_parameters(self.d_model, self.resolved_d_ff, self.bias, self.gated)
        used = self.moe.top_k if active else None  # every token uses the router, shared experts
        # the router scores the zero experts too: a row each (and a bias, with router_bias)
        zero_rows = self.moe.zero_experts * (self.d_model + (1 if self.moe.router_bias else 0))
        return count_moe_parameters(self.d_model, self.resolved_d_ff, self.moe.n_experts, used,
                                    self.bias, self.gated, self.moe.router_bias
                                    ) + zero_rows + self.shared_parameters()

    def expert_parameters(self, biases: bool = True) -> int:
        """Parameters of one routed expert (``biases=False``: its weight matrices alone).

        A ValueError for a model without experts.
        """
        if self.moe is None:
            raise ValueError(f"{self.name}: no experts (give moe, a MoEDims)")
        biases = check.boolean(biases, "biases") and self.bias
        return count_parameters(self.d_model, self.resolved_d_ff, biases, self.gated)

    def router_parameters(self) -> int:
        """Parameters of one MoE layer's router (0 without experts): the ``(d_model,
        n_experts + zero_experts)`` matrix, and its bias with ``router_bias``."""
        if self.moe is None:
            return 0
        return router_parameters(self.d_model, self.moe.router_rows, self.moe.router_bias)

    def shared_parameters(self) -> int:
        """Parameters of one MoE layer's shared experts and their gate, which every token uses
        (0 without any)."""
        if self.moe is None or self.moe.shared is None:
            return 0
        return shared_expert_parameters(self.d_model, self.moe.shared.d_ff, self.bias,
                                        self.gated, self.moe.shared.gate)

    def dense_ffn_parameters(self) -> int:
        """Parameters of the FFN of one of a mixture's dense layers (0 without any)."""
        if self.moe is None or self.moe.dense is None:
            return 0
        return count_parameters(self.d_model, self.moe.dense.d_ff, self.bias, self.gated)

    def ffn_parameters(self, active: bool = False) -> int:
        """Parameters of all the model's FFNs (``active``: those one token uses)."""
        if self.moe is None:
            return self.n_layers * self.ffn_parameters_per_layer()
        return ((self.n_layers - self.moe_layers) * self.dense_ffn_parameters()
                + self.moe_layers * self.ffn_parameters_per_layer(active))

    def ffn_parts(self) -> dict[str, int]:
        """``ffn_parameters()`` by part: the dense FFNs (all of a model without experts), and in
        the MoE layers the routers, the shared experts (and their gate), the routed experts one
        token uses ("experts, active") and those it skips ("experts, idle").

        The parts but the idle experts add up to ``ffn_parameters(active=True)``.
        """
        if self.moe is None:
            return {"dense FFNs": self.ffn_parameters(), "router": 0, "shared experts": 0,
                    "experts, active": 0, "experts, idle": 0}
        moe, expert = self.moe_layers, self.expert_parameters()
        return {"dense FFNs": (self.n_layers - moe) * self.dense_ffn_parameters(),
                "router": moe * self.router_parameters(),
                "shared experts": moe * self.shared_parameters(),
                "experts, active": moe * self.moe.top_k * expert,
                "experts, idle": moe * (self.moe.n_experts - self.moe.top_k) * expert}

    def attention_parameters(self) -> int:
        """Parameters of all the model's attention sublayers (Q, K, V, O unless given)."""
        per_layer = self.attention_per_layer or count_attention_parameters(
            self.d_model, self.bias, self.kv_dim)
        total = self.attention_sublayers * per_layer + self.extra_attention
        if self.linear_attention is None:
            return total
        return total + self.linear_attention.sublayers * (self.linear_attention.per_layer
                                                          - per_layer)

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
                "norms": (self.norms_per_layer * self.n_layers + 1) * per_norm,  # + final
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
        if self.moe is None:
            return self.n_layers * count_flops(self.d_model, self.resolved_d_ff, 1, self.gated,
                                               backward)
        # the router, top_k experts, and the shared experts and their gate
        per_layer = count_moe_flops(self.d_model, self.resolved_d_ff, self.moe.n_experts,
                                    self.moe.top_k, 1, self.gated, backward)
        router_zero = 2 * self.d_model * self.moe.zero_experts  # the zero experts' columns
        per_layer += 3 * router_zero if backward else router_zero
        if self.moe.shared is not None:
            per_layer += shared_expert_flops(self.d_model, self.moe.shared.d_ff, 1, self.gated,
                                             self.moe.shared.gate, backward)
        dense = 0 if self.moe.dense is None else (self.n_layers - self.moe_layers) * count_flops(
            self.d_model, self.moe.dense.d_ff, 1, self.gated, backward)
        return dense + self.moe_layers * per_layer
