"""ffn.quantize against independent oracles.

FP8 E4M3: the 256 bit patterns decoded here by hand (sign, exponent, mantissa, bias 7, NaN at
S.1111.111) and by ml_dtypes' ``float8_e4m3fn`` (a test-only dependency); rounding against
ml_dtypes' conversion. int8: against a scalar absmax written here with Python's ``round``
(which also rounds half to even).
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import ffn
from ffn.quantize import E4M3_MAGNITUDES, e4m3_codes, e4m3_value

F8 = ml_dtypes.float8_e4m3fn


def decode_by_hand(bits: int) -> float:
    """One E4M3 bit pattern, from the format's definition (OCP 8-bit floating point, E4M3)."""
    sign = -1.0 if bits & 0x80 else 1.0
    exponent, mantissa = (bits >> 3) & 0xF, bits & 0x7
    if exponent == 0xF and mantissa == 0x7:
        return math.nan
    if exponent == 0:
        return sign * math.ldexp(mantissa / 8.0, 1 - 7)
    return sign * math.ldexp(1.0 + mantissa / 8.0, exponent - 7)


def test_all_256_bit_patterns_decode_as_by_hand_and_as_ml_dtypes() -> None:
    bits = np.arange(256, dtype=np.uint8)
    ours = e4m3_value(bits)
    by_hand = np.array([decode_by_hand(b) for b in range(256)])
    oracle = bits.view(F8).astype(np.float64)
    np.testing.assert_array_equal(ours, by_hand)  # NaN where NaN
    np.testing.assert_array_equal(ours, oracle)
    finite = ours[np.isfinite(ours)]
    assert finite.size == 254 and np.unique(finite).size == 253  # +0 and -0
    assert finite.max() == ffn.E4M3_MAX == float(ml_dtypes.finfo(F8).max) == 448.0
    assert E4M3_MAGNITUDES[1] == 2.0**-9  # the smallest subnormal
    assert np.all(np.diff(E4M3_MAGNITUDES) > 0)  # bit pattern order is value order


def float32_midpoints_and_neighbours() -> np.ndarray:
    mid = ((E4M3_MAGNITUDES[1:] + E4M3_MAGNITUDES[:-1]) / 2).astype(np.float32)  # exact
    near = [np.nextafter(mid, np.float32(0)), np.nextafter(mid, np.float32(np.inf))]
    both = np.concatenate([mid, *near])
    return np.concatenate([both, -both])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounding_matches_ml_dtypes(dtype: type) -> None:
    # float32 inputs: ml_dtypes converts float64 through float32, so it rounds twice (a float64
    # just below a midpoint becomes the midpoint); on float32 both round once, to nearest even.
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(scale=s, size=50_000) for s in (1e-3, 0.03, 1.0, 30.0)])
    x = np.concatenate([x.astype(np.float32), float32_midpoints_and_neighbours(),
                        np.array([0.0, -0.0, 448.0, -448.0, 463.9, -463.9], np.float32)])
    ours = ffn.round_to_e4m3(x.astype(dtype))
    assert ours.dtype == dtype
    np.testing.assert_array_equal(ours, x.astype(F8).astype(dtype))
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(x))  # -0.0 stays -0.0


def test_ties_go_to_the_even_code() -> None:
    # 1.0625 lies halfway between 1.0 (code 0x38) and 1.125 (0x39): even wins, 1.0.
    # 1.1875, halfway between 1.125 (0x39) and 1.25 (0x3A): 1.25.
    assert ffn.round_to_e4m3([1.0625, 1.1875, -1.0625]).tolist() == [1.0, 1.25, -1.0]


def test_beyond_448_saturates_and_nan_stays_nan() -> None:
    out = ffn.round_to_e4m3([464.0, 1e9, np.inf, -np.inf, np.nan])
    assert out[:4].tolist() == [448.0, 448.0, 448.0, -448.0] and np.isnan(out[4])


def test_ml_dtypes_is_nan_exactly_above_the_midpoint_past_448() -> None:
    # The threshold by hand: S.1111.111 would be 1.875 * 2**8 = 480 if it were a number, so
    # round-to-nearest sends everything above (448 + 480) / 2 past 448; the midpoint itself
    # ties to 448 (mantissa 110, even). ml_dtypes has no infinity to overflow to and gives
    # NaN there; saturating instead is ffn's choice, stated in its docstring (and on
    # docs/quantization.md, which computes the same threshold).
    next_up = Fraction(15, 8) * 2**8  # the 0x7F pattern decoded as if it were normal
    midpoint = (Fraction(448) + next_up) / 2
    assert midpoint == 464
    # every float32 from 440 to 490 (about 1.6 million), both signs
    start = np.float32(440.0).view(np.uint32)
    stop = np.float32(490.0).view(np.uint32)
    x = np.arange(start, stop + 1, dtype=np.uint32).view(np.float32)
    x = np.concatenate([x, -x])
    theirs = x.astype(F8).astype(np.float64)
    above = np.array([abs(Fraction(float(v))) > midpoint for v in x[::4096]])
    assert np.array_equal(np.isnan(theirs[::4096]), above)  # a Fraction check on a sample
    past = np.abs(x.astype(np.float64)) > float(midpoint)  # exact: float32 -> float64
    assert np.array_equal(np.isnan(theirs), past)
    assert np.all(np.abs(theirs[~past & (np.abs(x) >= 448)]) == 448.0)
    ours = ffn.round_to_e4m3(x)
    assert np.all(np.abs(ours[np.abs(x) >= 448]) == 448.0)  # ffn saturates instead
    assert np.array_equal(ours[~past], theirs[~past].astype(np.float32))


def absmax_int8_by_hand(w: np.ndarray, axis: int | None) -> np.ndarray:
    """Dequantized absmax int8, one scalar at a time, the scale a float64."""
    amax = np.max(np.abs(w), axis=axis, keepdims=True) * np.ones_like(w)
    out = np.empty_like(w)
    for idx in np.ndindex(w.shape):
        scale = float(amax[idx]) / 127
        q = max(-127, min(127, round(float(w[idx]) / scale)))
        out[idx] = q * scale
    return out


@pytest.mark.parametrize(("per", "axis"), [("tensor", None), ("column", 0), ("row", 1)])
def test_int8_matches_a_scalar_absmax(per: str, axis: int | None) -> None:
    w = np.random.default_rng(1).normal(size=(24, 40))
    q = ffn.quantize_absmax(w, "int8", per)
    assert q.codes.dtype == np.int8 and q.codes.shape == w.shape
    assert np.abs(q.codes).max() == 127 and q.codes.min() >= -127
    assert q.scale.dtype == np.float64
    assert q.scale.shape == {"tensor": (1, 1), "column": (1, 40), "row": (24, 1)}[per]
    np.testing.assert_array_equal(q.dequantize(), absmax_int8_by_hand(w, axis))
    # the error of each entry is at most half a step
    assert np.all(np.abs(q.dequantize() - w) <= q.scale / 2 * (1 + 1e-12))


def test_int8_rounds_half_to_even() -> None:
    w = np.array([[127.0, 2.5, -2.5, 3.5, 0.5]])  # scale exactly 1.0
    assert ffn.quantize_absmax(w).codes.tolist() == [[127, 2, -2, 4, 0]]


@pytest.mark.parametrize("per", ["tensor", "column", "row"])
def test_e4m3_codes_are_the_oracles_bits(per: str) -> None:
    w = np.random.default_rng(2).normal(size=(16, 32)) * np.geomspace(1e-3, 1e2, 32)
    q = ffn.quantize_absmax(w, "e4m3", per)
    scaled = (w / q.scale.astype(np.float64)).astype(np.float32)
    assert q.codes.dtype == np.uint8
    np.testing.assert_array_equal(q.codes, scaled.astype(F8).view(np.uint8))
    largest = np.max(np.abs(e4m3_value(q.codes)), axis={"tensor": None, "column": 0,
                                                      "row": 1}[per])
    assert np.all(largest == 448.0)  # the absmax entry lands on the top of the grid
    np.testing.assert_array_equal(q.dequantize(), e4m3_value(q.codes) * q.scale)


def test_bytes() -> None:
    w = np.ones((768, 3072))
    assert ffn.quantize_absmax(w).nbytes == 768 * 3072 + 8
    assert ffn.quantize_absmax(w, "e4m3", "column").nbytes == 768 * 3072 + 8 * 3072


def test_scale_free_and_zero_columns() -> None:
    w = np.random.default_rng(3).normal(size=(8, 6))
    w[:, 2] = 0.0
    for fmt in ffn.QUANT_FORMATS:
        q = ffn.quantize_absmax(w, fmt, "column")
        assert np.all(q.dequantize()[:, 2] == 0.0) and q.scale[0, 2] == 1.0
        # absmax is scale-free: a power of two changes the scales, never the codes
        np.testing.assert_array_equal(ffn.quantize_absmax(w * 2.0**-7, fmt, "column").codes,
                                      q.codes)


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((np.ones((2, 2)), "int4"), ValueError, "unknown format 'int4'"),
        ((np.ones((2, 2)), "int8", "channel"), ValueError, "unknown per 'channel'"),
        ((np.ones(3),), ValueError, "non-empty 2-D matrix"),
        ((np.ones((0, 3)),), ValueError, "non-empty 2-D matrix"),
        ((np.array([[1.0, np.nan]]),), ValueError, "NaN or inf"),
        ((np.array([["a"]]),), TypeError, "w must be a real numeric array"),
    ],
)
def test_bad_input_is_named(args: tuple[object, ...], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        ffn.quantize_absmax(*args)


def test_e4m3_codes_are_ml_dtypes_bits_and_read_back() -> None:
    x = np.array([0.0, -0.0, 0.3, -1.7, 240.0, 463.9, -np.inf, 1e-9], np.float32)
    codes = e4m3_codes(x)
    assert codes.dtype == np.uint8 and codes.shape == x.shape
    oracle = x[:6].astype(F8).view(np.uint8)  # ml_dtypes has no -inf to saturate: by hand
    np.testing.assert_array_equal(codes, [*oracle, 0xFE, 0x00])  # -448; 1e-9 rounds to +0
    np.testing.assert_array_equal(e4m3_value(codes), ffn.round_to_e4m3(x))
    assert e4m3_codes(np.array([np.nan]))[0] == 0x7F
    with pytest.raises(TypeError, match="x must be a real numeric array, got None"):
        e4m3_codes(None)


def test_e4m3_value_wants_bit_patterns() -> None:
    with pytest.raises(TypeError, match="uint8 array of E4M3 bit patterns"):
        e4m3_value(np.array([1.0]))


def exact_absmax(w: np.ndarray, fmt: str) -> np.ndarray:
    """Dequantized absmax, per tensor, in exact fractions: the code of ``w * largest / amax``
    (int8: rounded half to even; E4M3: by ml_dtypes) times ``amax / largest``."""
    amax = Fraction(float(np.max(np.abs(w))))
    largest = 127 if fmt == "int8" else 448
    out = np.empty(w.shape)
    for idx in np.ndindex(w.shape):
        scaled = Fraction(float(w[idx])) * largest / amax  # exact
        code = Fraction(round(scaled)) if fmt == "int8" else Fraction(
            float(np.float64(float(scaled)).astype(F8)))  # E4M3 from the nearest float64
        out[idx] = float(code * amax / largest)
    return out


@pytest.mark.parametrize("fmt", ["int8", "e4m3"])
@pytest.mark.parametrize(("magnitude", "dtype"), [
    (1e-44, np.float32), (1e-40, np.float32), (3e38, np.float32),
    (1e-310, np.float64), (1e-320, np.float64), (1e42, np.float64), (1e300, np.float64),
    (1.7e308, np.float64)])
def test_scales_of_tiny_and_huge_weights(fmt: str, magnitude: float, dtype: type) -> None:
    """Issue 30: float32 scales made weights near 1e-44 or 1e-310 zeros (E4M3: NaN) and weights
    near 1e42 or 1e300 NaN. A float64 scale is finite and positive for every finite weight."""
    w = (np.array([[1.0, -0.75], [0.3, -0.0625]]) * magnitude).astype(dtype)
    for per in ("tensor", "column", "row"):
        q = ffn.quantize_absmax(w, fmt, per)
        assert np.all(np.isfinite(q.scale) & (q.scale > 0)), (per, q.scale)
        got = q.dequantize()
        assert np.all(np.isfinite(got)), (per, got)
    got = ffn.quantize_absmax(w, fmt).dequantize()
    # float64 rounds the scale and the product once each: 1e-15 relative, or, for subnormal
    # results, a few multiples of the smallest subnormal times the code (<= 448)
    np.testing.assert_allclose(got, exact_absmax(w.astype(np.float64), fmt), rtol=1e-15,
                               atol=448 * 2 * 5e-324)


W22 = np.array([[0.5, -1.0], [0.25, 2.0]])


@pytest.mark.parametrize(("kw", "error", "message"), [
    ({"format": "int4"}, ValueError, "unknown format 'int4'"),
    ({"format": None}, TypeError, "format must be a str"),
    ({"codes": np.array([[3.7]]), "scale": np.ones((1, 1))}, ValueError,
     "codes must be integers"),
    ({"codes": np.array([[np.nan]]), "scale": np.ones((1, 1))}, ValueError,
     "codes must be integers"),
    ({"codes": np.array([[200]]), "scale": np.ones((1, 1))}, ValueError, r"\[-127, 127\]"),
    ({"codes": np.array([[-128]]), "scale": np.ones((1, 1))}, ValueError, r"\[-127, 127\]"),
    ({"codes": np.array([[1.0]]), "format": "e4m3", "scale": np.ones((1, 1))}, TypeError,
     "codes for format 'e4m3' must be integer bit patterns"),
    ({"codes": np.array([[256]]), "format": "e4m3", "scale": np.ones((1, 1))}, ValueError,
     r"\[0, 255\]"),
    ({"codes": np.array([1, 2]), "scale": np.ones((1, 1))}, ValueError,
     "codes must be a non-empty 2-D matrix"),
    ({"codes": None}, TypeError, "codes must be a real numeric array"),
    ({"codes": np.array([["a"]])}, TypeError, "codes must be a real numeric array"),
    ({"scale": None}, TypeError, "scale must be a real numeric array"),
    ({"scale": np.ones((2, 2))}, ValueError, r"scale must have shape \(1, 1\), \(1, 2\) or \(2"),
    ({"scale": np.ones(2)}, ValueError, "scale must have shape"),
    ({"scale": np.array([[0.0]])}, ValueError, "scale must be positive and finite"),
    ({"scale": np.array([[-1.0]])}, ValueError, "scale must be positive and finite"),
    ({"scale": np.array([[np.inf]])}, ValueError, "scale must be positive and finite"),
])
def test_hand_built_quantized_is_checked(kw: dict[str, object], error: type,
                                         message: str) -> None:
    """Issue 30: a hand-built Quantized took non-integer int8 codes ([[3.7]]) silently, and
    failed with AttributeError or numpy's broadcast error for format "int4", list codes, a
    scale of the wrong shape or None."""
    q = ffn.quantize_absmax(W22, per="column")
    args = {"format": q.format, "codes": q.codes, "scale": q.scale} | kw
    with pytest.raises(error, match=message):
        ffn.Quantized(**args)  # type: ignore[arg-type]


def test_hand_built_quantized_takes_lists_and_integer_floats() -> None:
    """Lists and integer-valued floats are codes too: the same matrix as quantize_absmax's."""
    q = ffn.quantize_absmax(W22, per="row")
    built = ffn.Quantized("int8", q.codes.astype(np.float64).tolist(), q.scale.tolist())
    assert built.codes.dtype == np.int8 and built.scale.dtype == np.float64
    np.testing.assert_array_equal(built.dequantize(), q.dequantize())
    e = ffn.quantize_absmax(W22, "e4m3")
    scale32 = e.scale.astype(np.float32)  # a float32 scale is taken as its float64 value
    built = ffn.Quantized("e4m3", e.codes.astype(np.int64).tolist(), scale32)
    assert built.codes.dtype == np.uint8
    np.testing.assert_array_equal(built.dequantize(), e4m3_value(e.codes) * np.float64(scale32))
