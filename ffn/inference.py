"""The FFN on an accelerator: bytes moved per decode step, arithmetic intensity, the roofline,
and the activations training keeps for backward.

Counts, not measurements: a decode step reads every weight it uses once from main memory, reads
each token's input ``x`` and writes its output ``y``; what stays on chip (the hidden layer of a
fused kernel) and what caches may hold is left out. Every function raises TypeError or
ValueError for an argument of the wrong type or size.
"""

from __future__ import annotations

import math
import numbers
import sys
from dataclasses import dataclass
from fractions import Fraction

from ffn import _validate as check
from ffn.activations import ACTIVATIONS
from ffn.formats import BYTES_PER_VALUE
from ffn.model_dims import ModelDims


@dataclass(frozen=True)
class Accelerator:
    """An accelerator's two roofs: dense matrix FLOP/s and main-memory bandwidth."""

    name: str
    peak_flops: float  # FLOP/s of its matrix units, dense, in the number format used
    bandwidth: float  # bytes/s between main memory and the chip
    memory: float  # bytes of main memory
    source: str  # where the figures come from

    def __post_init__(self) -> None:
        for field in ("name", "source"):
            check.text(getattr(self, field), field)
        for field in ("peak_flops", "bandwidth", "memory"):
            value = check.real(getattr(self, field), field, 0.0, float("inf"), high_open=True,
                               low_open=True)
            object.__setattr__(self, field, value)
        ridge = self.peak_flops / self.bandwidth
        if not sys.float_info.min <= ridge < math.inf:  # inf, 0 or a subnormal's lost digits
            raise ValueError(f"peak_flops / bandwidth = {self.peak_flops!r} / {self.bandwidth!r} "
                             "is outside float64's range [2.2e-308, 1.8e308]: no ridge point")

    @property
    def ridge_point(self) -> float:
        """FLOPs per byte where the roofs meet: below it memory sets the pace, above it compute."""
        return self.peak_flops / self.bandwidth

    def attainable(self, intensity: float) -> float:
        """The roofline: ``min(peak_flops, bandwidth * intensity)`` FLOP/s at that intensity."""
        intensity = check.real(intensity, "intensity", 0.0, float("inf"), high_open=True)
        return min(self.peak_flops, self.bandwidth * intensity)


H100_SXM = Accelerator(
    "NVIDIA H100 SXM", peak_flops=1979e12 / 2, bandwidth=3.35e12, memory=80e9,
    source="NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column: BFLOAT16 Tensor Core "
           "1,979 teraFLOPS with sparsity (dense: half), GPU memory 80GB, GPU memory "
           "bandwidth 3.35TB/s")
"""One NVIDIA H100 SXM in bfloat16, without sparsity."""


def experts_read(n_experts: int, top_k: int, batch: int) -> float:
    """Expected number of distinct experts a batch of tokens uses in one MoE layer.

    Each token picks ``top_k`` different experts, all choices equally likely and independent of
    the other tokens: an expert is missed by one token with probability ``1 - top_k/n_experts``,
    so it is used with probability ``1 - (1 - top_k/n_experts) ** batch``: in exact fractions
    for up to 256 tokens (so one token reads exactly ``top_k``), else as
    ``-expm1(batch * log1p(-top_k/n_experts))``: for ``top_k/n_experts`` near 0 the plain form
    cancels (``(10**17, 1, 1)`` would give 0, not 1). Any ``batch`` works; ``n_experts`` up to
    float64's largest value (1.8e308).
    """
    n_experts = check.positive_int(n_experts, "n_experts")
    top_k = check.positive_int(top_k, "top_k")
    batch = check.positive_int(batch, "batch")
    if top_k > n_experts:
        raise ValueError(f"top_k = {top_k} is more than n_experts = {n_experts}")
    return _experts_read(n_experts, top_k, batch)


def _experts_read(n_experts: int, top_k: int, batch: int) -> float:
    """``experts_read`` of checked arguments; a ValueError for an answer beyond a float."""
    try:
        n = float(n_experts)
    except OverflowError:
        raise ValueError(f"n_experts must be at most 1.8e308 (float64's largest value), got "
                         f"{_size(n_experts)}") from None
    if top_k == n_experts:
        return n  # every token uses every expert
    if batch <= 256:  # exact, then rounded once: cheap here (batch 1 gives top_k exactly)
        return float(n_experts * (1 - (1 - Fraction(top_k, n_experts)) ** batch))
    if 2 * top_k <= n_experts:  # log1p keeps the digits of a small top_k / n_experts
        log_one_missed = math.log1p(-top_k / n_experts)
    else:  # top_k / n_experts may round to 1.0 (log1p(-1) fails): log (n - k) / n, exact ints
        log_one_missed = math.log(n_experts - top_k) - math.log(n_experts)
    log_missed = _times(batch, log_one_missed)  # log P(no token uses it) < 0
    return n * -math.expm1(log_missed)


def _times(count: int, x: float) -> float:
    """``count * x`` for an int ``count`` of any size (``-inf`` or ``inf`` beyond a float)."""
    shift = max(count.bit_length() - 64, 0)  # the top 64 bits of count, times 2**shift
    try:
        return math.ldexp(float(count >> shift) * x, shift)
    except OverflowError:
        return math.copysign(math.inf, x)


def decode_flops(model: ModelDims, batch: int = 1) -> int:
    """FLOPs of all the model's FFN matrix products for one decode step of ``batch`` tokens."""
    return check.positive_int(batch, "batch") * _model(model).ffn_flops_per_token()


Size = int | float | Fraction | str  # bytes_per_value: a count, a fraction or a format's name

SMALLEST_SIZE = Fraction(sys.float_info.min)
"""The smallest ``bytes_per_value`` taken: float64's smallest normal number, 2.2e-308."""


def _bytes_per_value(value: object, name: str = "bytes_per_value") -> int | Fraction:
    """A size argument (``name``) as a positive int or an exact Fraction (4.25 / 8, "mxfp4")."""
    if isinstance(value, str):
        return BYTES_PER_VALUE[check.choice(value, name, tuple(BYTES_PER_VALUE))]
    kind = f"an int, a float, a Fraction or one of {', '.join(map(repr, BYTES_PER_VALUE))}"
    if isinstance(value, numbers.Integral):  # int, numpy's ints and bool (refused)
        return check.positive_int(value, name, kind=kind)
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be {kind}, got {check.describe(value)}")
    if isinstance(value, Fraction):
        number = value
    else:
        real = check.real(value, name, 0.0, math.inf, True, True)
        number = Fraction(real)  # exact: 4.25 / 8 is 17/32
    if number <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    if number < SMALLEST_SIZE:  # the bytes, a float, would lose digits or be 0
        shown = repr(value) if isinstance(value, float) else _value(number)
        raise ValueError(f"{name} must be at least 2.2e-308 (float64's smallest normal number, "
                         f"what the bytes are counted in), got {shown}")
    return number


def _sizes(bytes_per_value: object,
           expert_bytes_per_value: object) -> tuple[int | Fraction, int | Fraction]:
    """Both size arguments checked, in that order; an absent ``expert_bytes_per_value`` is
    ``bytes_per_value``, the other values' format."""
    size = _bytes_per_value(bytes_per_value)
    if expert_bytes_per_value is None:
        return size, size
    return size, _bytes_per_value(expert_bytes_per_value, "expert_bytes_per_value")


def decode_bytes(model: ModelDims, batch: int = 1, bytes_per_value: Size = 2,
                 expert_bytes_per_value: Size | None = None) -> float:
    """Bytes all the model's FFNs move for one decode step of ``batch`` tokens.

    Per layer: every weight and bias used, read once for the whole batch (a mixture of experts:
    the router, the shared experts and the routed experts the batch uses, ``experts_read`` on
    average; its leading dense layers, if any, their whole FFN), plus each token's ``x`` read
    and ``y`` written, ``d_model`` values each. A ValueError where a mixture of experts' bytes
    (a float) would exceed float64's range; a dense model's are an exact int when
    ``bytes_per_value`` is an int.

    ``bytes_per_value``: an int, float or Fraction from 2.2e-308 up (``SMALLEST_SIZE``: below
    it the bytes, a float, would lose digits or be 0; MXFP4's 4.25 bits are 17/32 of a byte),
    or a name in ``BYTES_PER_VALUE`` ("mxfp4", "nvfp4", ...), applied to every value moved,
    weights and activations alike (NVFP4's 4 bytes a tensor are left out).
    ``expert_bytes_per_value``: the same kinds of value, for the routed experts' weight
    matrices alone (gpt-oss-120b as served: "mxfp4", every other value bfloat16); None prices
    them at ``bytes_per_value``. A dense model has no routed experts: it changes nothing there.
    """
    model, batch = _model(model), check.positive_int(batch, "batch")
    return _decode_bytes(model, batch, *_sizes(bytes_per_value, expert_bytes_per_value))


def _decode_bytes(model: ModelDims, batch: int, size: int | Fraction,
                  expert_size: int | Fraction) -> float:
    """``decode_bytes`` of checked arguments (``expert_size``: the routed experts' matrices)."""
    activations = 2 * batch * model.d_model  # x read, y written
    if model.moe is None:
        exact = model.n_layers * size * (model.ffn_parameters_per_layer() + activations)
        if isinstance(exact, int):
            return exact
        try:
            return float(exact)
        except OverflowError:
            raise ValueError(f"{model.name}: with batch = {_size(batch)} and bytes_per_value = "
                             f"{_value(size)} the bytes exceed float64's range (1.8e308)"
                             ) from None
    expert, matrices = model.expert_parameters(), model.expert_parameters(biases=False)
    router = model.router_parameters()
    read = _experts_read(model.moe.n_experts, model.moe.top_k, batch)
    moe_layers = model.moe_layers  # the dense FFNs: the leading ones and, with moe_every, between
    dense = (model.n_layers - moe_layers) * size * (model.dense_ffn_parameters() + activations)
    try:
        if expert_size == size:  # every value at size: the experts' matrices with the rest
            weights, own = router + read * expert + model.shared_parameters(), 0.0
        else:  # their matrices at expert_size; biases, router, shared experts at size
            weights = router + read * (expert - matrices) + model.shared_parameters()
            own = moe_layers * expert_size * read * matrices
        total = moe_layers * size * (weights + activations) + own + dense
    except OverflowError:  # an int beyond a float met the float weights
        total = math.inf
    if not math.isfinite(total):
        sizes, smaller = f"bytes_per_value = {_value(size)}", "bytes_per_value"
        if expert_size != size:
            sizes += f", expert_bytes_per_value = {_value(expert_size)}"
            smaller = "bytes_per_value or expert_bytes_per_value"
        raise ValueError(f"{model.name}: with batch = {_size(batch)} and {sizes} the bytes "
                         f"exceed float64's range (1.8e308): give a smaller batch or {smaller}")
    return total


def _size(n: int) -> str:
    """An int for a message: its digits, or its order of magnitude when it is huge."""
    return str(n) if n.bit_length() < 64 else f"~2**{n.bit_length() - 1}"


def _value(size: int | Fraction) -> str:
    """A bytes-per-value for a message: an int as ``_size`` shows it, a Fraction as it is
    (or its order of magnitude, when its digits are many)."""
    if isinstance(size, int):
        return _size(size)
    if max(size.numerator, size.denominator).bit_length() < 64:
        return str(size)
    return f"~2**{size.numerator.bit_length() - size.denominator.bit_length()}"


def arithmetic_intensity(model: ModelDims, batch: int = 1, bytes_per_value: Size = 2,
                         expert_bytes_per_value: Size | None = None) -> float:
    """FLOPs per byte moved of the model's FFNs in one decode step of ``batch`` tokens (the
    sizes as in ``decode_bytes``). The ratio is taken exactly and rounded once, so a batch
    beyond a float still gives it; a ValueError where it exceeds float64's range (a tiny
    ``bytes_per_value``)."""
    batch = check.positive_int(batch, "batch")
    model = _model(model)
    sizes = _sizes(bytes_per_value, expert_bytes_per_value)
    exact = Fraction(batch * model.ffn_flops_per_token()) / Fraction(
        _decode_bytes(model, batch, *sizes))
    try:
        return float(exact)
    except OverflowError:
        raise ValueError(f"{model.name}: with bytes_per_value = {_value(sizes[0])} the intensity "
                         "exceeds float64's range (1.8e308): give a larger bytes_per_value"
                         ) from None


def critical_batch(model: ModelDims, accelerator: Accelerator, bytes_per_value: Size = 2,
                   expert_bytes_per_value: Size | None = None) -> int:
    """The smallest batch whose decode step reaches the accelerator's ridge point.

    Below it the FFNs wait on memory; from it on, on arithmetic. A ValueError if no batch
    does: the intensity never exceeds ``flops per token / (2 * d_model * bytes_per_value)`` per
    layer, the cost of each token's own ``x`` and ``y``. The sizes as in ``decode_bytes``.
    """
    model = _model(model)
    if not isinstance(accelerator, Accelerator):
        raise TypeError(f"accelerator must be an Accelerator, got {check.describe(accelerator)}")
    size, expert_size = _sizes(bytes_per_value, expert_bytes_per_value)
    ridge = accelerator.ridge_point
    flops = model.ffn_flops_per_token()  # per token at any batch: only the bytes change

    def below(batch: int) -> bool:  # intensity < ridge, compared exactly: neither can overflow
        try:
            moved = _decode_bytes(model, batch, size, expert_size)
        except ValueError:  # only a size whose ceiling is within ~1e-300 of the ridge gets here
            raise ValueError(f"{model.name}: the batch reaching {accelerator.name}'s ridge point "
                             "is too large for its bytes to be a float") from None
        return batch * flops < Fraction(ridge) * Fraction(moved)

    ceiling = flops / (model.n_layers * Fraction(size) * 2 * model.d_model)  # exact
    if ceiling <= ridge:
        raise ValueError(f"{model.name}: the intensity stays below {float(ceiling):.1f} FLOPs "
                         f"per byte, under {accelerator.name}'s ridge point {ridge:.1f}")
    low, high = 0, 1  # the intensity rises with the batch: low is below the ridge, high not
    while below(high):
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        if below(middle):
            low = middle
        else:
            high = middle
    return high


def saved_per_token(d_model: int, d_ff: int, activation: str = "gelu", gated: bool = False) -> int:
    """Values one token leaves in one FFN for the backward pass, as PyTorch's autograd keeps them.

    Plain: ``x`` (for ``dW1``), ``h_pre`` (for the activation's derivative) and ``h`` (for
    ``dW2``); with ReLU, ``h_pre`` is not kept, since ``h > 0`` exactly where ``h_pre > 0``.
    Gated: ``x``, the gate before and after its activation (ReLU, as above: after only), the
    up projection and their product ``h``.
    """
    d_model = check.positive_int(d_model, "d_model")
    d_ff = check.positive_int(d_ff, "d_ff")
    check.choice(activation, "activation", ACTIVATIONS)
    before = 0 if activation == "relu" else 1  # h_pre (the gate before its activation) kept?
    if check.boolean(gated, "gated"):
        return d_model + (3 + before) * d_ff  # and the gate after, the up projection, h
    return d_model + (1 + before) * d_ff  # and h


def _model(model: object) -> ModelDims:
    if not isinstance(model, ModelDims):
        raise TypeError(f"model must be a ModelDims, got {check.describe(model)}")
    return model
