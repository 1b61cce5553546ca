"""Weights in 4 bits, simulated: MXFP4 and NVFP4, E2M1 values sharing a scale per block.

Both formats store each weight as E2M1 (1 sign bit, 2 exponent bits with bias 1, 1 mantissa
bit: +-{0, 0.5, 1, 1.5, 2, 3, 4, 6}) and give each block of consecutive weights one scale:

- MXFP4 (OCP Microscaling Formats v1.0): blocks of 32, an E8M0 scale ``2**(e - 127)``.
  The shared exponent is ``floor(log2(amax)) - 2`` (section 6.3; 2 is E2M1's largest exponent),
  as Microsoft's MX library ``microsoft/microxcaling`` computes it (mx/mx_ops.py:76-79 and
  279-283; formats.py:104-106 gives E2M1's emax 2) and as gpt-oss decodes it: the FP4 table
  (gpt_oss/torch/weights.py:11-14), ``scales - 127`` (:84), the low nibble first (:107-111),
  ``ldexp`` (:114). 4 + 8/32 = 4.25 bits a weight.
- NVFP4 (NVIDIA): blocks of 16, an E4M3 scale per block and one FP32 scale per tensor,
  ``amax / (6 * 448)``; a block's scale is ``block amax / (6 * tensor scale)`` rounded to E4M3
  (TensorRT-Model-Optimizer, modelopt/torch/quantization/qtensor/nvfp4_tensor.py:60, 84-91,
  in float32; a zero block's scale is 1.0, :88). 4 + 8/16 =
  4.5 bits, plus the 4 bytes of the tensor scale.

A block is ``block`` consecutive entries of one column of ``w (rows, cols)``: for ``W1
(d_model, d_ff)`` in ``x @ W1`` they run along d_model, the dimension the product sums over,
as matrix-multiply hardware reads them (gpt-oss stores weights (out, in) and blocks the last
axis, the same one). ``rows`` must be a multiple of the block: a ValueError, no padding. Pass
``w.T`` to block along rows (activations ``X (n, d_model)``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ffn import _validate as check
from ffn._validate import FloatArray
from ffn.quantize import E4M3_MAX, e4m3_codes, e4m3_value, nearest_even_index

BLOCK_FORMATS: tuple[str, ...] = ("mxfp4", "nvfp4")
"""Valid ``format`` values of ``quantize_blocks``."""

BLOCK_SIZE: dict[str, int] = {"mxfp4": 32, "nvfp4": 16}
"""Weights sharing one scale: 32 for MXFP4 (OCP MX v1.0), 16 for NVFP4."""

E2M1_MAX = 6.0
"""E2M1's largest value, S.11.1 = 1.5 * 2**(3 - 1)."""

E2M1_MAGNITUDES: FloatArray = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
"""The 8 non-negative E2M1 values: entry ``i`` has bit pattern ``i`` (sign bit 0)."""
E2M1_MAGNITUDES.flags.writeable = False

E8M0_BIAS = 127  # an E8M0 byte e is the scale 2**(e - 127); 0xFF is NaN
E2M1_EMAX = 2  # floor(log2(6)): the exponent of E2M1's largest value


def e2m1_value(codes: object) -> FloatArray:
    """The float64 value of each E2M1 bit pattern (integers 0 ... 15, bit 3 the sign)."""
    array = np.asarray(codes)
    if array.dtype.kind not in "iu" or array.dtype == np.bool_:
        raise TypeError(f"codes must be integer E2M1 bit patterns in [0, 15], got dtype "
                        f"{array.dtype}")
    if array.size and (array.min() < 0 or array.max() > 15):
        raise ValueError(f"codes must be E2M1 bit patterns in [0, 15], got "
                         f"[{array.min()}, {array.max()}]")
    table = np.concatenate([E2M1_MAGNITUDES, -E2M1_MAGNITUDES])  # (16,): -0.0 at 8
    values: FloatArray = table[array]
    return values


def _e2m1_codes(x: FloatArray) -> NDArray[np.uint8]:
    """Bit patterns of finite ``x`` rounded to nearest E2M1, ties to even; saturating at 6."""
    code = nearest_even_index(np.minimum(np.abs(x), E2M1_MAX), E2M1_MAGNITUDES)
    return (code | (np.signbit(x).astype(np.int64) << 3)).astype(np.uint8)


def round_to_e2m1(x: object) -> FloatArray:
    """``x`` rounded to the nearest E2M1 value, ties to even; beyond +-6 (inf too) +-6.

    -0.0 stays -0.0; NaN is a ValueError (E2M1 has no NaN). Same shape and float dtype as ``x``.
    """
    array = check.float_array(x, "x")
    if np.any(np.isnan(array)):
        raise ValueError("x holds NaN: E2M1 has no NaN to round it to")
    return e2m1_value(_e2m1_codes(array.astype(np.float64))).astype(array.dtype)


def e8m0_value(codes: object) -> FloatArray:
    """The float64 value of each E8M0 byte (uint8): ``2**(e - 127)``, and NaN for 0xFF."""
    array = np.asarray(codes)
    if array.dtype != np.uint8:
        raise TypeError(f"codes must be a uint8 array of E8M0 bytes, got dtype {array.dtype}")
    values: FloatArray = np.where(array == 255, np.nan,
                                  np.ldexp(1.0, array.astype(np.int64) - E8M0_BIAS))
    return values


@dataclass(frozen=True)
class BlockQuantized:
    """A matrix in 4 bits: E2M1 codes, one scale per block of a column, and a tensor scale.

    ``codes (rows, cols)``: E2M1 bit patterns 0 ... 15, one per uint8 here (two per byte when
    stored, as gpt-oss packs them). ``scale (rows // block, cols)``, uint8: E8M0 bytes in
    [0, 254] for MXFP4, E4M3 bit patterns in [0, 126] (non-negative, not NaN) for NVFP4.
    ``tensor_scale``: NVFP4's FP32 scale, positive and finite; 1.0 for MXFP4. Checked when
    built by hand, with a TypeError or ValueError naming the field.
    """

    format: str  # "mxfp4" or "nvfp4"
    codes: NDArray[np.uint8]  # (rows, cols): E2M1 bit patterns
    scale: NDArray[np.uint8]  # (rows // block, cols): E8M0 (mxfp4) or E4M3 (nvfp4) bytes
    tensor_scale: float = 1.0  # nvfp4: the FP32 scale of the whole tensor

    def __post_init__(self) -> None:
        check.choice(self.format, "format", BLOCK_FORMATS)
        block = BLOCK_SIZE[self.format]
        codes, scale = _bytes(self.codes, "codes", 15), _bytes(self.scale, "scale", 255)
        if codes.ndim != 2 or 0 in codes.shape or codes.shape[0] % block:
            raise ValueError(f"codes must be a non-empty 2-D matrix whose rows are a multiple "
                             f"of {block} ({self.format}'s block), got shape {codes.shape}")
        want = (codes.shape[0] // block, codes.shape[1])
        if scale.shape != want:
            raise ValueError(f"scale must have shape {want} (one per block of {block} in each "
                             f"column) for codes of shape {codes.shape}, got {scale.shape}")
        top = 254 if self.format == "mxfp4" else 126  # 0xFF: NaN; E4M3: 0x7F NaN, 0x80+ < 0
        if scale.max() > top:
            raise ValueError(f"scale for format {self.format!r} must be in [0, {top}] (finite, "
                             f"non-negative), got a byte {scale.max()}")
        tensor_scale = check.real(self.tensor_scale, "tensor_scale", 0.0, np.inf, True, True)
        if self.format == "mxfp4" and tensor_scale != 1.0:
            raise ValueError(f"tensor_scale must be 1.0 for format 'mxfp4' (MX has no tensor "
                             f"scale), got {tensor_scale!r}")
        if tensor_scale != float(np.float32(tensor_scale)):
            raise ValueError(f"tensor_scale must be a float32 value, got {tensor_scale!r}")
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "tensor_scale", tensor_scale)

    @property
    def block_scale(self) -> FloatArray:
        """Each block's scale as a float64 ``(rows // block, cols)``, the tensor scale included."""
        if self.format == "mxfp4":
            return e8m0_value(self.scale)
        return e4m3_value(self.scale) * self.tensor_scale  # exact: 4 bits times 24 bits

    def dequantize(self) -> FloatArray:
        """``value(codes) * scale`` of each weight's block, in float64 (exact): ``(rows, cols)``."""
        block = BLOCK_SIZE[self.format]
        per_weight = np.repeat(self.block_scale, block, axis=0)  # (rows, cols)
        return e2m1_value(self.codes) * per_weight

    @property
    def nbytes(self) -> int:
        """Bytes to store it: half a byte a code, one a block scale, 4 for NVFP4's tensor scale."""
        return (self.codes.size + 1) // 2 + self.scale.size + (4 if self.format == "nvfp4" else 0)


def _bytes(value: object, name: str, top: int) -> NDArray[np.uint8]:
    """``value`` as a uint8 array of integers in [0, ``top``], or an error naming it."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "iu":
        kind = value.dtype if isinstance(value, np.ndarray) else check.describe(value)
        raise TypeError(f"{name} must be a numpy array of integers (uint8), got {kind}")
    if value.size and (value.min() < 0 or value.max() > top):
        raise ValueError(f"{name} must be in [0, {top}], got [{value.min()}, {value.max()}]")
    return value.astype(np.uint8)


def _mx_exponents(amax: FloatArray) -> NDArray[np.int64]:
    """OCP MX section 6.3's shared exponent ``floor(log2(amax)) - emax_elem``, in [-127, 127].

    ``np.frexp`` gives ``amax = m * 2**e`` with ``m`` in [0.5, 1): ``floor(log2(amax)) = e - 1``
    exactly, subnormals included. Below -127 it is clamped to -127 (E8M0's smallest, as
    microxcaling does; an all-zero block gets it too); above 127 ``_checked_w`` refuses.
    """
    _, e = np.frexp(amax)
    shared = e.astype(np.int64) - 1 - E2M1_EMAX
    return np.where(amax > 0, np.maximum(shared, -E8M0_BIAS), -E8M0_BIAS)


def _nvfp4_tensor_scale(largest: float) -> np.float32:
    """NVFP4's tensor scale ``amax / 2688`` in float32, as modelopt; 1.0 for an all-zero tensor
    (any scale serves), and for an amax beyond float32, which ``_checked_w`` refuses."""
    if 0 < largest <= np.finfo(np.float32).max:
        return np.float32(largest) / np.float32(6.0 * E4M3_MAX)
    return np.float32(1.0)


def _checked_w(w: object, format: object) -> FloatArray:
    """``quantize_blocks``' arguments checked: ``w`` as a float64 matrix that ``format`` can
    scale (its rows a multiple of the block, finite, its amax in the scales' range)."""
    check.choice(format, "format", BLOCK_FORMATS)
    array = check.float_array(w, "w").astype(np.float64)
    block = BLOCK_SIZE[str(format)]
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(f"w must be a non-empty 2-D matrix (rows, cols), got shape "
                         f"{array.shape}")
    if array.shape[0] % block:
        raise ValueError(f"w's rows must be a multiple of {block}, {format}'s block (blocks run "
                         f"down each column; pad w yourself), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"w holds NaN or inf: {format} scales need finite values")
    largest = np.abs(array).max()
    if format == "mxfp4" and largest >= 2.0**130:  # floor(log2(amax)) - 2 would pass 127
        raise ValueError(f"w has a block with largest magnitude {largest:.4g}, which "
                         "needs an MXFP4 scale above E8M0's 2**127: a block's amax must be "
                         "below 2**130")
    if format == "nvfp4" and (largest > np.finfo(np.float32).max
                              or _nvfp4_tensor_scale(largest) == 0):
        raise ValueError(f"w's largest magnitude {largest:.4g} gives NVFP4 a tensor scale "
                         "amax / 2688 that is no positive finite float32 (amax must be in "
                         "about [1.9e-42, 3.4e38])")
    return array


def quantize_blocks(w: object, format: str = "mxfp4") -> BlockQuantized:
    """``w (rows, cols)`` in MXFP4 or NVFP4, blocks of 32 or 16 consecutive entries a column.

    MXFP4: each block's scale is ``2**(floor(log2(amax)) - 2)``, so ``amax / scale`` is in
    [4, 8) and values above 6 saturate to 6 (OCP MX v1.0, section 6.3). NVFP4: the tensor scale
    is ``amax / 2688`` in float32, each block's ``block amax / (6 * tensor scale)`` rounded to
    E4M3 (a zero block gets 1.0), so a block's largest weight lands near 6. Elements round to
    nearest E2M1, ties to even, saturating at +-6. A ValueError for NaN or inf, for ``rows`` not
    a multiple of the block, for an MXFP4 block whose amax needs a scale above 2**127 (amax of
    2**130 or more), and for an NVFP4 tensor whose scale is no positive finite float32.
    """
    array = _checked_w(w, format)  # (rows, cols), float64
    block = BLOCK_SIZE[format]
    rows, cols = array.shape
    blocks = array.reshape(rows // block, block, cols)  # (n_blocks, block, cols)
    amax = np.max(np.abs(blocks), axis=1)  # (n_blocks, cols)
    tensor_scale = 1.0
    if format == "mxfp4":
        shared = _mx_exponents(amax)  # (n_blocks, cols), at most 127: amax < 2**130
        scale = (shared + E8M0_BIAS).astype(np.uint8)
        per_block = np.ldexp(1.0, shared)  # exact powers of two: dividing by them is exact
    else:
        ts = _nvfp4_tensor_scale(amax.max())  # positive and finite: checked
        block_scale = amax.astype(np.float32) / (np.float32(6.0) * ts)  # float32, as modelopt
        block_scale = np.where(block_scale == 0, np.float32(1.0), block_scale)
        scale = e4m3_codes(block_scale)  # (n_blocks, cols): non-negative, at most 448
        tensor_scale = float(ts)
        per_block = e4m3_value(scale) * tensor_scale  # (n_blocks, cols); 0 if it underflowed
    scaled = blocks / np.where(per_block > 0, per_block, 1.0)[:, None, :]
    codes = _e2m1_codes(np.where(per_block > 0, 1.0, 0.0)[:, None, :] * scaled)
    return BlockQuantized(format, codes.reshape(rows, cols), scale, tensor_scale)

