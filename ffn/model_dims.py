"""A transformer's published dimensions (``ModelDims``), and what they imply for the FFN.

Only the dimensions are data here; every derived number (parameters, shares, FLOPs, the
weights a decode step reads) is asked of ``ffn.counting``. The models themselves are
``ffn.models``' catalogue.
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
    norms_per_layer: int = 2  # norms in each layer (Gemma 4: 4, and 3 more beside its experts)
    zero_experts: int = 0  # identity experts the router may pick beside the n_experts FFNs
    # (LongCat-Flash's zero-computation experts): no parameters, but a router row each
    extra_attention: int = 0  # attention parameters beyond attention_per_layer in all the
    # sublayers, where kinds differ (DeepSeek-V4's compressors, Gemma 4's full layers)

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
            check.top_k(self.top_k, self.n_experts)
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
        self._check_norms_zero_experts_and_extra_attention()

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

    def _check_norms_zero_experts_and_extra_attention(self) -> None:
        """The last three fields, which the models of 2026 need."""
        for field in ("norms_per_layer", "zero_experts", "extra_attention"):
            value = check.positive_int(getattr(self, field), field, zero_ok=True)
            object.__setattr__(self, field, value)
        if self.zero_experts and self.n_experts is None:
            raise ValueError("zero_experts sit beside routed experts: give n_experts and top_k")
        if self.extra_attention and self.attention_per_layer is None:
            raise ValueError("extra_attention adds to a counted sublayer: give "
                             "attention_per_layer")

    @property
    def resolved_d_ff(self) -> int:
        """The hidden width: ``d_ff`` when published, else LLaMA's rule with this model's
        ``multiple_of`` and ``ffn_dim_multiplier``."""
        if self.d_ff is not None:
            return self.d_ff
        return llama_d_ff(self.d_model, self.multiple_of, self.ffn_dim_multiplier)

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
            return count_parameters(self.d_model, self.resolved_d_ff, self.bias, self.gated)
        used = self.top_k if active else None  # every token uses the router and shared experts
        # the router scores the zero experts too: a row each (and a bias, with router_bias)
        zero_rows = self.zero_experts * (self.d_model + (1 if self.router_bias else 0))
        return count_moe_parameters(self.d_model, self.resolved_d_ff, self.n_experts, used,
                                    self.bias, self.gated, self.router_bias
                                    ) + zero_rows + self.shared_parameters()

    def expert_parameters(self, biases: bool = True) -> int:
        """Parameters of one routed expert (``biases=False``: its weight matrices alone).

        A ValueError for a model without experts.
        """
        if self.n_experts is None:
            raise ValueError(f"{self.name}: no experts (give n_experts and top_k)")
        biases = check.boolean(biases, "biases") and self.bias
        return count_parameters(self.d_model, self.resolved_d_ff, biases, self.gated)

    def router_parameters(self) -> int:
        """Parameters of one MoE layer's router (0 without experts): the ``(d_model,
        n_experts + zero_experts)`` matrix, and its bias with ``router_bias``."""
        if self.n_experts is None:
            return 0
        return router_parameters(self.d_model, self.n_experts + self.zero_experts,
                                 self.router_bias)

    def shared_parameters(self) -> int:
        """Parameters of one MoE layer's shared experts and their gate, which every token uses
        (0 without any)."""
        if not self.shared_d_ff:
            return 0
        return shared_expert_parameters(self.d_model, self.shared_d_ff, self.bias, self.gated,
                                        self.shared_gate)

    def dense_ffn_parameters(self) -> int:
        """Parameters of the FFN of one of the leading dense layers (0 without any)."""
        if self.dense_d_ff is None:
            return 0
        return count_parameters(self.d_model, self.dense_d_ff, self.bias, self.gated)

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
        moe, expert = self.moe_layers, self.expert_parameters()
        return {"dense FFNs": (self.n_layers - moe) * self.dense_ffn_parameters(),
                "router": moe * self.router_parameters(),
                "shared experts": moe * self.shared_parameters(),
                "experts, active": moe * self.top_k * expert,
                "experts, idle": moe * (self.n_experts - self.top_k) * expert}

    def attention_parameters(self) -> int:
        """Parameters of all the model's attention sublayers (Q, K, V, O unless given)."""
        per_layer = self.attention_per_layer or count_attention_parameters(
            self.d_model, self.bias, self.kv_dim)
        linear = self.n_linear_attention * ((self.linear_attention_per_layer or 0) - per_layer)
        return self.attention_sublayers * per_layer + linear + self.extra_attention

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
        if self.n_experts is None or self.top_k is None:
            return self.n_layers * count_flops(self.d_model, self.resolved_d_ff, 1, self.gated,
                                               backward)
        # the router, top_k experts, and the shared experts and their gate
        per_layer = count_moe_flops(self.d_model, self.resolved_d_ff, self.n_experts, self.top_k,
                                    1, self.gated, backward)
        router_zero = 2 * self.d_model * self.zero_experts  # the router's zero-expert columns
        per_layer += 3 * router_zero if backward else router_zero
        if self.shared_d_ff:  # shared_gate needs shared experts (__post_init__)
            per_layer += shared_expert_flops(self.d_model, self.shared_d_ff, 1, self.gated,
                                             self.shared_gate, backward)
        dense = 0 if self.dense_d_ff is None else (self.n_layers - self.moe_layers) * count_flops(
            self.d_model, self.dense_d_ff, 1, self.gated, backward)
        return dense + self.moe_layers * per_layer
