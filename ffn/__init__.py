"""FFN by the Numbers: the transformer feed-forward block in plain numpy.

Row-vector convention throughout: ``y = act(x @ W1 + b1) @ W2 + b2`` with ``W1`` of shape
``(d_model, d_ff)`` and ``W2`` of shape ``(d_ff, d_model)``. This package is the reference the
chapters show; ``ffn.fast`` has the same block, faster.
"""

from __future__ import annotations

from ffn.activations import (
    ACTIVATIONS,
    APPROXIMATIONS,
    gelu,
    gelu_grad,
    relu,
    relu_grad,
    silu,
    silu_grad,
)
from ffn.clamped import ClampedSwiGLU, split_gate_up
from ffn.counting import (
    count_attention_parameters,
    count_flops,
    count_moe_flops,
    count_moe_parameters,
    count_parameters,
    largest_d_ff,
    llama_d_ff,
)
from ffn.expert_flops import expected_flops, token_flops
from ffn.feedforward import FeedForward, FeedForwardTrace
from ffn.gated import GATED_VARIANTS, GatedFeedForward, GatedFeedForwardTrace
from ffn.inference import (
    H100_SXM,
    Accelerator,
    arithmetic_intensity,
    critical_batch,
    decode_bytes,
    decode_flops,
    experts_read,
    saved_per_token,
)
from ffn.layernorm import LayerNorm
from ffn.linear import Linear
from ffn.model_dims import LinearAttention, LlamaWidth, ModelDims
from ffn.models import LLAMA_MODELS, MODELS, MOE_MODELS, get_model
from ffn.moe import Dispatch, MixtureOfExperts
from ffn.moe_dims import DenseLayers, MoEDims, SharedExperts
from ffn.moe_presets import GatedSharedMoE, GroupedExperts, InputScaledMoE, RouterBiasMoE
from ffn.parallel import ParallelBlock
from ffn.report import Discrepancy, discrepancies
from ffn.rmsnorm import RMSNorm
from ffn.routing import sort_by_expert
from ffn.sublayer import PLACEMENTS, Sublayer
from ffn.training import OPTIMIZERS, FitResult, fit, mean_squared_error

from ffn import fast  # isort: skip  (the speed path; it builds on the classes above)
from ffn import routing  # isort: skip  (a mixture of experts' routing, as functions)
from ffn.activations import relu2, relu2_grad  # isort: skip
from ffn.fp4 import BLOCK_FORMATS, BlockQuantized, quantize_blocks, round_to_e2m1  # isort: skip
from ffn.quantize import (  # isort: skip
    E4M3_MAX,
    QUANT_FORMATS,
    QUANT_GRANULARITIES,
    Quantized,
    quantize_absmax,
    round_to_e4m3,
)

__all__ = [
    "ACTIVATIONS", "APPROXIMATIONS", "BLOCK_FORMATS", "E4M3_MAX", "GATED_VARIANTS", "H100_SXM",
    "LLAMA_MODELS", "MODELS", "MOE_MODELS", "OPTIMIZERS", "PLACEMENTS", "QUANT_FORMATS",
    "QUANT_GRANULARITIES",
    "Accelerator", "BlockQuantized", "ClampedSwiGLU", "DenseLayers", "Discrepancy", "Dispatch",
    "FeedForward",
    "FeedForwardTrace", "FitResult", "GatedFeedForward", "GatedFeedForwardTrace",
    "GatedSharedMoE", "GroupedExperts", "InputScaledMoE", "LayerNorm", "Linear",
    "LinearAttention", "LlamaWidth", "MixtureOfExperts", "MoEDims", "ModelDims", "ParallelBlock",
    "Quantized", "RMSNorm", "RouterBiasMoE", "SharedExperts", "Sublayer",
    "arithmetic_intensity", "count_attention_parameters", "count_flops", "count_moe_flops",
    "count_moe_parameters", "count_parameters", "critical_batch", "decode_bytes", "decode_flops",
    "discrepancies", "expected_flops", "experts_read", "fast",
    "fit", "gelu", "gelu_grad", "get_model", "largest_d_ff", "llama_d_ff",
    "mean_squared_error", "quantize_absmax", "quantize_blocks", "relu", "relu2", "relu2_grad",
    "relu_grad", "round_to_e2m1", "round_to_e4m3", "routing", "saved_per_token", "silu",
    "silu_grad", "sort_by_expert", "split_gate_up", "token_flops",
]
