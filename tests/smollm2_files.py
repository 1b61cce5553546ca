"""What the SmolLM2 tests share: one loaded model per process, and small fake GGUF files.

The real model (98 MB, dequantized once into the repository's gitignored ``.cache/ffn``) is
loaded at most once per dtype in a process, however many test files ask for it. The fake files
are written with ``gguf.GGUFWriter``, ggml's own writer: a tiny LLaMA (2 layers, width 8) whose
keys and tensors a test can leave out or change, to see what the loader says.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from ffn import smollm2

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "ffn"  # gitignored


@functools.cache
def real_model(dtype: str = "float32") -> smollm2.SmolLM2:
    """SmolLM2-135M from the installed package, one per dtype per process."""
    return smollm2.load(np.dtype(dtype), cache=CACHE)


def byte_alphabet() -> list[str]:
    """GPT-2's 256 printable stand-ins for the bytes (as ``bytes_to_unicode`` builds them)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1),
            *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = [], 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


TINY = {"n_layers": 2, "d_model": 8, "d_ff": 12, "n_heads": 2, "n_kv_heads": 1, "context": 16}


def write_tiny(path: Path, seed: int = 0, architecture: str = "llama",
               drop_key: str | None = None, drop_tensor: str | None = None,
               extra_tensor: str | None = None) -> dict[str, np.ndarray]:
    """A tiny LLaMA GGUF at ``path`` (float32 tensors); returns its tensors as stored
    (``(out, in)``, q and k in llama.cpp's rotary layout)."""
    import gguf
    t = TINY
    d, f, hd = t["d_model"], t["d_ff"], t["d_model"] // t["n_heads"]
    alphabet = byte_alphabet()
    tokens = ["<|endoftext|>", *alphabet, "Ġt", "he", "Ġthe"]
    merges = ["Ġ t", "h e", "Ġt he"]
    rng = np.random.default_rng(seed)
    shapes = {"token_embd.weight": (len(tokens), d), "output_norm.weight": (d,)}
    for i in range(t["n_layers"]):
        shapes |= {f"blk.{i}.attn_norm.weight": (d,), f"blk.{i}.attn_q.weight": (d, d),
                   f"blk.{i}.attn_k.weight": (t["n_kv_heads"] * hd, d),
                   f"blk.{i}.attn_v.weight": (t["n_kv_heads"] * hd, d),
                   f"blk.{i}.attn_output.weight": (d, d), f"blk.{i}.ffn_norm.weight": (d,),
                   f"blk.{i}.ffn_gate.weight": (f, d), f"blk.{i}.ffn_up.weight": (f, d),
                   f"blk.{i}.ffn_down.weight": (d, f)}
    if extra_tensor:
        shapes[extra_tensor] = (len(tokens), d)
    tensors = {name: (rng.standard_normal(s) * 0.3).astype(np.float32)
               for name, s in shapes.items() if name != drop_tensor}
    writer = gguf.GGUFWriter(path, architecture)
    keys: dict[str, Any] = {
        "block_count": writer.add_block_count, "context_length": writer.add_context_length,
        "embedding_length": writer.add_embedding_length,
        "feed_forward_length": writer.add_feed_forward_length,
        "attention.head_count": writer.add_head_count,
        "attention.head_count_kv": writer.add_head_count_kv,
        "rope.freq_base": writer.add_rope_freq_base,
        "attention.layer_norm_rms_epsilon": writer.add_layer_norm_rms_eps}
    values = [t["n_layers"], t["context"], d, f, t["n_heads"], t["n_kv_heads"], 10000.0, 1e-5]
    for (key, add), value in zip(keys.items(), values, strict=True):
        if f"{architecture}.{key}" != drop_key:
            add(value)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_merges(merges)
    writer.add_token_types([3] + [1] * (len(tokens) - 1))
    for name, w in tensors.items():
        writer.add_tensor(name, w)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return tensors
