"""A mixture of experts' published dimensions: ``MoEDims``, the optional part of ``ModelDims``.

A model without experts has no such part (``ModelDims.moe`` is None), so no MoE field can be
set on it. The fields that only mean something together are one value each: the shared experts'
width and gate (``SharedExperts``), the dense layers' count, width and spacing (``DenseLayers``).
Each part checks itself when made; ``ModelDims`` checks what needs the whole model (the dense
layers fit in ``n_layers``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ffn import _validate as check
from ffn.formats import BYTES_PER_VALUE


def _as_int(part: object, field: str, zero_ok: bool = False) -> None:
    """Check ``part.field`` is a positive int, and store it as a Python int (numpy's int64
    overflows in the counts)."""
    value = check.positive_int(getattr(part, field), field, zero_ok=zero_ok)
    object.__setattr__(part, field, value)


@dataclass(frozen=True)
class SharedExperts:
    """Experts every token uses, beside the routed ones (DeepSeekMoE, Qwen, Llama 4)."""

    d_ff: int  # width of the shared experts together (Qwen1.5-MoE's 4 of 1408: one of 5632)
    gate: bool = False  # a sigmoid gate, d_model -> 1, scales their output (Qwen)

    def __post_init__(self) -> None:
        _as_int(self, "d_ff")
        check.boolean(self.gate, "gate")


@dataclass(frozen=True)
class DenseLayers:
    """The layers of a mixture of experts that hold one dense FFN instead of experts."""

    first: int  # the leading layers are dense (DeepSeek-V3: 3)
    d_ff: int  # the width of every dense FFN
    moe_every: int = 1  # after the first ones, one MoE layer in every moe_every, starting with
    # the first; the others dense (Llama 4 Maverick: 2)

    def __post_init__(self) -> None:
        for field in ("first", "d_ff", "moe_every"):
            _as_int(self, field)


@dataclass(frozen=True)
class MoEDims:
    """The experts of a mixture-of-experts model: how many, how many a token uses, what every
    token shares, the router's bias, and which layers are dense."""

    n_experts: int  # routed experts per MoE layer, each an FFN of the model's d_ff
    top_k: int  # experts each token uses
    shared: SharedExperts | None = None  # None: no shared experts
    router_bias: bool = False  # the router adds a bias, one number per expert (gpt-oss)
    dense: DenseLayers | None = None  # None: every layer is a MoE layer
    zero_experts: int = 0  # identity experts the router may pick beside the n_experts FFNs
    # (LongCat-Flash's zero-computation experts): no weights, but a router row each; top_k
    # counts them, so a token uses at most top_k FFN experts
    hash_layers: int = 0  # the first MoE layers choose by a fixed token-id table, not by the
    # router's scores (DeepSeek-V4: 3); the router still weighs the chosen experts, so the
    # counts do not change
    expert_format: str | None = None  # the format the release stores the routed experts'
    # weight matrices in, a name of ffn.formats.BYTES_PER_VALUE (DeepSeek-V4-Flash: 4 bits,
    # priced as "mxfp4"); None: as the other weights

    def __post_init__(self) -> None:
        _as_int(self, "n_experts")
        _as_int(self, "zero_experts", zero_ok=True)
        _as_int(self, "hash_layers", zero_ok=True)
        object.__setattr__(self, "top_k", check.top_k(self.top_k, self.n_experts))
        check.boolean(self.router_bias, "router_bias")
        if self.expert_format is not None:
            check.choice(self.expert_format, "expert_format", tuple(BYTES_PER_VALUE))
        for field, kind in (("shared", SharedExperts), ("dense", DenseLayers)):
            value = getattr(self, field)
            if value is not None and not isinstance(value, kind):
                raise TypeError(f"{field} must be a {kind.__name__} or None, got "
                                f"{check.describe(value)}")

    @property
    def router_rows(self) -> int:
        """The experts the router scores: the FFN experts and the zero-computation ones."""
        return self.n_experts + self.zero_experts

    def moe_layers(self, n_layers: int) -> int:
        """How many of ``n_layers`` layers are MoE layers: after the dense ones, one in every
        ``moe_every``."""
        if self.dense is None:
            return n_layers
        return len(range(self.dense.first, n_layers, self.dense.moe_every))
