"""The number formats weights are stored in, by name, and the bytes a value of each takes.

``ffn.inference`` prices the bytes a decode step reads in them; ``ffn.moe_dims`` names the one
a release stores its routed experts in. Block formats count their scales: MXFP4's 4.25 bits.
"""

from __future__ import annotations

from fractions import Fraction

BYTES_PER_VALUE: dict[str, int | Fraction] = {
    "float32": 4, "bfloat16": 2, "int8": 1, "e4m3": 1,
    "mxfp4": Fraction(17, 32),  # 4 bits + an 8-bit scale per 32: 4.25 bits
    "nvfp4": Fraction(9, 16),  # 4 bits + an 8-bit scale per 16: 4.5 bits (+ 4 bytes a tensor)
}
"""Bytes a value of each format takes, block scales included: names for ``bytes_per_value``."""
