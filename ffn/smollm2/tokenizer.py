"""SmolLM2's tokenizer, built with Hugging Face ``tokenizers`` from the vocabulary in the GGUF.

A byte-level BPE (GPT-2's scheme): text is split by GPT-2's pattern, each piece spelled in
GPT-2's byte alphabet, and merged pair by pair in the order of the file's merge list. The
tokens the file marks as control (``<|im_start|>`` and the like) are kept whole. No token is
added in front (``tokenizer.ggml.add_bos_token`` is false in SmolLM2's file).
"""

from __future__ import annotations

from typing import Any

from ffn.smollm2.gguf_file import metadata, require

CONTROL = 3  # llama.cpp's token type of a control token (tokenizer.ggml.token_type)


def build_tokenizer(reader: Any) -> Any:
    """A ``tokenizers.Tokenizer`` from the file's ``tokenizer.ggml.*`` keys; a ValueError naming
    a missing key or another tokenizer model than ``gpt2`` (byte-level BPE)."""
    tk = require("tokenizers")
    kind = metadata(reader, "tokenizer.ggml.model")
    if kind != "gpt2":
        raise ValueError(f"tokenizer.ggml.model is {kind!r}; ffn.smollm2 builds 'gpt2' "
                         "(byte-level BPE, SmolLM2's)")
    tokens: list[str] = list(metadata(reader, "tokenizer.ggml.tokens"))
    merges = [tuple(m.split(" ", 1)) for m in metadata(reader, "tokenizer.ggml.merges")]
    kinds = list(metadata(reader, "tokenizer.ggml.token_type"))
    vocab = {token: i for i, token in enumerate(tokens)}
    tokenizer = tk.Tokenizer(tk.models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = tk.decoders.ByteLevel()
    control = [tk.AddedToken(t, special=True, normalized=False)
               for t, k in zip(tokens, kinds, strict=True) if k == CONTROL]
    tokenizer.add_special_tokens(control)
    return tokenizer
