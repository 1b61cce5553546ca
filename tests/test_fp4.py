"""ffn.fp4 (MXFP4 and NVFP4) against independent oracles.

E2M1: the 16 bit patterns decoded here by hand from the layout (sign, 2 exponent bits with
bias 1, 1 mantissa bit, subnormal at exponent 0) and by ml_dtypes' ``float4_e2m1fn``; every
midpoint, and ml_dtypes' rounding of float32 inputs. E8M0: ``float8_e8m0fnu``. MXFP4: a plain
loop over blocks with ``math.frexp`` and Python floats, and gpt-oss's decoding of the packed
bytes (gpt_oss/torch/weights.py). NVFP4: the float32 steps of TensorRT-Model-Optimizer's
nvfp4_tensor.py, with ml_dtypes' E4M3 for the block scales.
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import ffn
from ffn.fp4 import BLOCK_SIZE, BlockQuantized, e2m1_value, e8m0_value, quantize_blocks

F4 = ml_dtypes.float4_e2m1fn


def decode_by_hand(bits: int) -> Fraction:
    """One E2M1 bit pattern from the format's definition: S EE M, bias 1."""
    sign = -1 if bits & 0b1000 else 1
    exponent, mantissa = (bits >> 1) & 0b11, bits & 0b1
    if exponent == 0:  # subnormal: 0.M * 2**(1 - bias)
        return sign * Fraction(mantissa, 2)
    return sign * (1 + Fraction(mantissa, 2)) * Fraction(2) ** (exponent - 1)


def test_all_16_codes_decode_as_by_hand_and_as_ml_dtypes() -> None:
    ours = e2m1_value(np.arange(16))
    by_hand = [float(decode_by_hand(b)) for b in range(16)]
    oracle = np.arange(16, dtype=np.uint8).view(F4).astype(np.float64)
    np.testing.assert_array_equal(ours, by_hand)
    np.testing.assert_array_equal(ours, oracle)
    assert np.signbit(ours[8]) and not np.signbit(ours[0])  # 1000 is -0.0
    assert sorted(set(abs(v) for v in by_hand)) == [0, 0.5, 1, 1.5, 2, 3, 4, 6]  # the list


def test_every_midpoint_rounds_to_the_even_code() -> None:
    grid = [decode_by_hand(b) for b in range(8)]
    for low in range(7):
        mid = (grid[low] + grid[low + 1]) / 2
        even = low if low % 2 == 0 else low + 1  # mantissa bit 0
        for sign in (1, -1):
            got = ffn.round_to_e2m1([float(sign * mid)])[0]
            assert got == float(sign * grid[even]), (mid, got)
            assert got == np.float32(sign * mid).astype(F4).astype(np.float64)
            # just off the midpoint goes to the nearer neighbour
            for step, want in ((-1, low), (1, low + 1)):
                near = float(mid) + step * 2.0**-40
                assert ffn.round_to_e2m1([sign * near])[0] == float(sign * grid[want])


def test_rounding_agrees_with_ml_dtypes_on_float32() -> None:
    # float32 inputs: ml_dtypes converts float64 through float32 (3.4999999999 becomes 3.5, a
    # tie, and then 4), so the comparison feeds it values that float32 holds exactly
    x = np.random.default_rng(0).uniform(-8, 8, 200_001).astype(np.float32)
    x = np.concatenate([x, np.array([0.0, -0.0, 6.0, -6.0, 7.0, 1e30, -1e30, 0.2499], np.float32)])
    ours = ffn.round_to_e2m1(x)
    assert ours.dtype == np.float32
    np.testing.assert_array_equal(ours, x.astype(F4).astype(np.float32))
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(x))
    assert ffn.round_to_e2m1([np.inf, -np.inf]).tolist() == [6.0, -6.0]
    with pytest.raises(ValueError, match="x holds NaN"):
        ffn.round_to_e2m1([1.0, np.nan])


def test_e8m0_bytes_decode_as_ml_dtypes() -> None:
    e = np.arange(256, dtype=np.uint8)
    ours = e8m0_value(e)
    np.testing.assert_array_equal(ours, e.view(ml_dtypes.float8_e8m0fnu).astype(np.float64))
    assert ours[127] == 1.0 and ours[0] == 2.0**-127 and ours[254] == 2.0**127
    assert np.isnan(ours[255])


def mx_by_loop(w: np.ndarray) -> np.ndarray:
    """MXFP4 per OCP MX v1.0 section 6.3, one block (32 down a column) at a time."""
    rows, cols = w.shape
    out = np.zeros_like(w)
    for c in range(cols):
        for b in range(0, rows, 32):
            block = [float(v) for v in w[b:b + 32, c]]
            amax = max(abs(v) for v in block)
            # floor(log2(amax)) from frexp: amax = m * 2**e, 0.5 <= m < 1
            shared = -127 if amax == 0 else max(math.frexp(amax)[1] - 1 - 2, -127)
            x = 2.0**shared
            for i, v in enumerate(block):
                element = float(ffn.round_to_e2m1([v / x])[0])  # rounding tested above
                out[b + i, c] = element * x
    return out


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e30, 1e-300])
def test_mxfp4_equals_the_loop(scale: float) -> None:
    w = np.random.default_rng(1).standard_normal((96, 7)) * scale
    w[:32, 3] = 0.0  # an all-zero block
    q = quantize_blocks(w, "mxfp4")
    np.testing.assert_array_equal(q.dequantize(), mx_by_loop(w))
    assert q.scale.shape == (3, 7) and q.scale[0, 3] == 0  # zero block: E8M0's smallest


def test_mxfp4_scale_examples() -> None:
    w = np.zeros((32, 6))
    w[0] = [6.0, 7.0, 8.0, 0.75, 2.0**-130, 2.0**129]
    w[1, 0] = 5.0  # 5 is a tie between 4 and 6: to even, 4
    q = quantize_blocks(w, "mxfp4")
    # floor(log2(amax)) - 2: 6 -> 0, 7 -> 0 (7 saturates to 6), 8 -> 1, 0.75 -> -3,
    # 2**-130 -> -132 clamped to -127 (the value underflows to 0), 2**129 -> 127
    assert (q.scale[0].astype(int) - 127).tolist() == [0, 0, 1, -3, -127, 127]
    assert q.dequantize()[0].tolist() == [6.0, 6.0, 8.0, 0.75, 0.0, 2.0**129]
    assert q.dequantize()[1, 0] == 4.0
    with pytest.raises(ValueError, match=r"above E8M0's 2\*\*127.*below 2\*\*130"):
        quantize_blocks(np.full((32, 1), 2.0**130), "mxfp4")
    assert quantize_blocks(np.full((32, 1), np.nextafter(2.0**130, 0)), "mxfp4").scale[0, 0] == 254


def gpt_oss_decode(blocks: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """gpt_oss/torch/weights.py:_get_mxfp4_tensor in numpy: LUT, low nibble first, ldexp."""
    lut = np.array([+0.0, +0.5, +1.0, +1.5, +2.0, +3.0, +4.0, +6.0,
                    -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0])
    out = np.empty((blocks.shape[0], blocks.shape[1] * 2))
    out[:, 0::2] = lut[blocks & 0x0F]
    out[:, 1::2] = lut[blocks >> 4]
    return np.ldexp(out, scales.astype(np.int32)[:, None] - 127)


def test_mxfp4_decodes_as_gpt_oss() -> None:
    w = np.random.default_rng(2).standard_normal((64, 5))
    q = quantize_blocks(w, "mxfp4")
    # gpt-oss's layout: one row of 16 bytes per block (the block is our column's 32 entries)
    codes = q.codes.T.reshape(-1, 32)  # (cols * n_blocks, 32), block by block
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)  # (…, 16)
    theirs = gpt_oss_decode(packed, q.scale.T.reshape(-1))
    np.testing.assert_array_equal(theirs.reshape(5, 64).T, q.dequantize())


def nv_by_steps(w: np.ndarray) -> np.ndarray:
    """NVFP4 as modelopt's nvfp4_tensor.py computes it, in float32, via ml_dtypes' E4M3."""
    w32 = w.astype(np.float32)
    ts = np.float32(np.abs(w32).max()) / np.float32(6.0 * 448.0)
    out = np.zeros_like(w)
    for c in range(w.shape[1]):
        for b in range(0, w.shape[0], 16):
            block = w[b:b + 16, c]
            s = np.float32(np.abs(block).max()) / (np.float32(6.0) * ts)
            s = np.float32(1.0) if s == 0 else s
            s8 = float(np.float32(s).astype(ml_dtypes.float8_e4m3fn).astype(np.float64))
            x = s8 * float(ts)
            out[b:b + 16, c] = ffn.round_to_e2m1(block / x) * x if x > 0 else 0.0
    return out


@pytest.mark.parametrize("scale", [1.0, 1e-4, 1e20])
def test_nvfp4_equals_modelopts_steps(scale: float) -> None:
    w = (np.random.default_rng(3).standard_normal((48, 6)) * scale).astype(np.float32)
    w[16:32, 2] = 0.0
    w = w.astype(np.float64)
    q = quantize_blocks(w, "nvfp4")
    np.testing.assert_array_equal(q.dequantize(), nv_by_steps(w))
    assert q.tensor_scale == float(np.float32(np.abs(w).max()) / np.float32(2688.0))
    assert e2m1_value(q.codes).max() == 6.0  # the largest weight lands on 6 (or near)


def test_bits_per_weight() -> None:
    w = np.random.default_rng(4).standard_normal((768, 3072))
    mx, nv = quantize_blocks(w, "mxfp4"), quantize_blocks(w, "nvfp4")
    assert Fraction(8 * mx.nbytes, w.size) == Fraction(17, 4)  # 4 + 8/32 = 4.25
    assert Fraction(8 * nv.nbytes, w.size) == Fraction(9, 2) + Fraction(32, w.size)  # 4 + 8/16
    assert BLOCK_SIZE == {"mxfp4": 32, "nvfp4": 16}


def test_block_scales_beat_one_scale_where_magnitudes_differ() -> None:
    # a column whose first block is 1000 times larger: each block keeps its own grid
    w = np.random.default_rng(5).standard_normal((64, 1))
    w[:32] *= 1000
    for fmt in ffn.BLOCK_FORMATS:
        back = quantize_blocks(w, fmt).dequantize()
        small = np.linalg.norm(back[32:] - w[32:]) / np.linalg.norm(w[32:])
        assert small < 0.2, (fmt, small)


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda: quantize_blocks(np.ones((32, 2)), "fp4"), ValueError, "format"),
    (lambda: quantize_blocks(np.ones((33, 2))), ValueError, "multiple of 32"),
    (lambda: quantize_blocks(np.ones((24, 2)), "nvfp4"), ValueError, "multiple of 16"),
    (lambda: quantize_blocks(np.ones(32)), ValueError, "2-D"),
    (lambda: quantize_blocks(np.ones((0, 3))), ValueError, "non-empty"),
    (lambda: quantize_blocks(np.full((32, 1), np.nan)), ValueError, "NaN or inf"),
    (lambda: quantize_blocks("w"), TypeError, "w"),
    (lambda: quantize_blocks(np.full((16, 1), 1e39), "nvfp4"), ValueError, "float32"),
    (lambda: quantize_blocks(np.full((16, 1), 1e-45), "nvfp4"), ValueError, "float32"),
    (lambda: BlockQuantized("mxfp4", np.zeros((32, 1), np.uint8), np.zeros((2, 1), np.uint8)),
     ValueError, r"scale must have shape \(1, 1\)"),
    (lambda: BlockQuantized("mxfp4", np.full((32, 1), 16, np.uint8), np.zeros((1, 1), np.uint8)),
     ValueError, r"codes must be in \[0, 15\]"),
    (lambda: BlockQuantized("mxfp4", np.zeros((32, 1)), np.zeros((1, 1), np.uint8)),  # type: ignore[arg-type]
     TypeError, "codes must be a numpy array of integers"),
    (lambda: BlockQuantized("mxfp4", np.zeros((32, 1), np.uint8), np.full((1, 1), 255, np.uint8)),
     ValueError, r"scale for format 'mxfp4' must be in \[0, 254\]"),
    (lambda: BlockQuantized("nvfp4", np.zeros((16, 1), np.uint8), np.full((1, 1), 127, np.uint8),
                            0.5), ValueError, r"\[0, 126\]"),
    (lambda: BlockQuantized("nvfp4", np.zeros((16, 1), np.uint8), np.ones((1, 1), np.uint8), 0.0),
     ValueError, "tensor_scale"),
    (lambda: BlockQuantized("nvfp4", np.zeros((16, 1), np.uint8), np.ones((1, 1), np.uint8), 0.1),
     ValueError, "float32 value"),
    (lambda: BlockQuantized("mxfp4", np.zeros((32, 1), np.uint8), np.ones((1, 1), np.uint8), 2.0),
     ValueError, "tensor_scale must be 1.0"),
    (lambda: e2m1_value(np.array([1.0])), TypeError, "codes"),
    (lambda: e8m0_value(np.array([1])), TypeError, "uint8"),
])
def test_bad_input_is_named(call, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        call()


def test_hand_built_round_trips() -> None:
    w = np.random.default_rng(6).standard_normal((32, 3))
    for fmt in ffn.BLOCK_FORMATS:
        q = quantize_blocks(w, fmt)
        again = BlockQuantized(fmt, q.codes, q.scale, q.tensor_scale)
        np.testing.assert_array_equal(again.dequantize(), q.dequantize())
