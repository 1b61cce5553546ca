"""ffn.smollm2 against transformers' own GGUF loader: the same file, read by other code.

transformers reads the GGUF with its own reader and dequantizer (``integrations/gguf``), undoes
llama.cpp's rotary layout itself, builds its ``LlamaForCausalLM`` and tokenizer. Agreement:
the dequantized weights are equal; the logits agree on the book's prompts (float64 within
1e-9 relative, float32 within the bound below); the tokenizers agree on the prompts and on every
line of the book's own pages; the parameter count is ``ModelDims``'.

In float64, transformers still rounds three things to float32 (modeling_llama.py): the RMSNorm
(``hidden_states.to(torch.float32)``), the rotary angles (``.float()``) and nothing else under
SDPA. Those two are replaced on this model instance by the same formulas in float64
(``float64_throughout``), so float64 compares arithmetic, not rounding.

Test-only dependency (pyproject's ``transformers`` group); skipped without it unless
FFN_REQUIRE_TORCH=1, which makes a missing torch or transformers a failure.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ffn.models import SMOLLM2_135M
from ffn.smollm2 import gguf_file
from tests.smollm2_files import real_model
from tests.test_torch_reference import import_or_skip

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach the Hub, even by accident
torch = import_or_skip("torch")
transformers = import_or_skip("transformers")

DOCS = Path(__file__).resolve().parents[1] / "docs"
PROMPTS = [  # facts, counting, code, the book's own words, a chat turn
    "The capital of France is",
    "One, two, three, four,",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return",
    "The feed-forward network of a transformer stores much of what the model knows",
    "<|im_start|>user\nWhat is 12 times 12?<|im_end|>\n<|im_start|>assistant\n",
    "Water boils at 100 degrees Celsius, and it freezes at",
]
F64_RTOL = 1e-9  # the bound: max |difference| / max |logit|
# float32: measured 2026-12-03 on the prompts above, max |difference| / max |logit| ran from
# 1.3e-6 to 3.2e-6 (ffn against transformers, both float32; float64 gave 2e-15 to 5e-15). Two
# float32 forwards of 30 layers that sum in different orders (BLAS blocking, RMSNorm's scaling,
# RoPE angles formed in float64 here and in float32 there) drift by some ulps per layer;
# float32's ulp is 1.2e-7. 1e-5 leaves three times the largest drift measured and still catches
# a wrong weight, head or position (those move the logits by 1e-2 and more).
F32_RTOL = 1e-5


@functools.cache
def hf_model(dtype: str) -> Any:
    """transformers' LlamaForCausalLM built from the installed GGUF, eval mode.

    Read once, in float32 (its loader takes minutes on a busy machine): the float64 model is
    that one cast, which is what ``dtype=torch.float64`` gives too, since transformers
    dequantizes to float32 first (the weights are float32 numbers either way).
    """
    if dtype == "float64":
        model = copy.deepcopy(hf_model("float32")).to(torch.float64)
        float64_throughout(model)
        return model
    path = gguf_file.model_file()
    with one_torch_thread():
        model = transformers.AutoModelForCausalLM.from_pretrained(
            path.parent, gguf_file=path.name, dtype=torch.float32)
    return model.eval()


@functools.cache
def hf_tokenizer() -> Any:
    path = gguf_file.model_file()
    return transformers.AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """PyTorch on one thread meanwhile: the cores are shared (pytest-xdist's workers, the site's
    build), and PyTorch's spinning OpenMP threads made a 5-token forward ten times slower
    (0.7 s against 7 s) on a busy machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def float64_throughout(model: Any) -> None:
    """Replace, on this instance, the two float32 roundings of transformers' float64 Llama."""
    def rms_norm(self: Any, x: Any) -> Any:  # LlamaRMSNorm.forward without .to(float32)
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True)
                                              + self.variance_epsilon))

    def rotary(self: Any, x: Any, position_ids: Any) -> Any:  # LlamaRotaryEmbedding.forward
        base, dim = self.config.rope_parameters["rope_theta"], self.config.head_dim
        inv_freq = 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
        freqs = position_ids[..., None].double() * inv_freq
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    llama = transformers.models.llama.modeling_llama
    for module in model.modules():
        if isinstance(module, llama.LlamaRMSNorm):
            module.forward = types.MethodType(rms_norm, module)
        elif isinstance(module, llama.LlamaRotaryEmbedding):
            module.forward = types.MethodType(rotary, module)
    assert model.config._attn_implementation == "sdpa"  # eager's softmax is float32 too


def hf_logits(dtype: str, tokens: list[int]) -> np.ndarray:
    model = hf_model(dtype)
    with torch.no_grad(), one_torch_thread():
        out = model(torch.tensor([tokens])).logits[0]
    return np.asarray(out.numpy())


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want)) / np.max(np.abs(want)))


def test_the_dequantized_weights_are_transformers() -> None:
    model, hf = real_model("float32"), hf_model("float32")
    for i in (0, 17, 29):
        layer, theirs = model.layers[i], hf.model.layers[i]
        pairs = [(layer.Wq, theirs.self_attn.q_proj), (layer.Wk, theirs.self_attn.k_proj),
                 (layer.Wv, theirs.self_attn.v_proj), (layer.Wo, theirs.self_attn.o_proj),
                 (layer.ffn.W, theirs.mlp.gate_proj), (layer.ffn.V, theirs.mlp.up_proj),
                 (layer.ffn.W2, theirs.mlp.down_proj)]
        for ours, linear in pairs:
            np.testing.assert_array_equal(ours, linear.weight.detach().numpy().T)
        np.testing.assert_array_equal(layer.ffn_norm.gamma,
                                      theirs.post_attention_layernorm.weight.detach().numpy())
    np.testing.assert_array_equal(model.embedding, hf.model.embed_tokens.weight.detach().numpy())
    assert hf.lm_head.weight.data_ptr() == hf.model.embed_tokens.weight.data_ptr()  # tied


@pytest.mark.parametrize("prompt", PROMPTS)
def test_logits_agree_in_float64(prompt: str) -> None:
    model = real_model("float64")
    tokens = model.encode(prompt)
    error = relative_error(model(tokens), hf_logits("float64", tokens))
    print(f"float64, {len(tokens)} tokens: max relative difference {error:.1e}")
    assert error <= F64_RTOL


@pytest.mark.parametrize("prompt", PROMPTS)
def test_logits_agree_in_float32(prompt: str) -> None:
    model = real_model("float32")
    tokens = model.encode(prompt)
    ours = model(tokens)
    assert ours.dtype == np.float32
    error = relative_error(ours, hf_logits("float32", tokens))
    print(f"float32, {len(tokens)} tokens: max relative difference {error:.1e}")
    assert error <= F32_RTOL


def book_lines() -> list[str]:
    """Every non-blank line of the book's pages (docs/*.md): text that ships with the repo."""
    return [line for page in sorted(DOCS.glob("*.md"))
            for line in page.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_tokenization_agrees_on_the_prompts_and_the_books_pages() -> None:
    model, theirs = real_model("float32"), hf_tokenizer()
    lines = book_lines()
    assert len(lines) >= 300
    for text in [*PROMPTS, *lines, "\n".join(lines[:200])]:
        ids = model.encode(text)
        assert ids == theirs(text)["input_ids"], text
        assert model.decode(ids) == theirs.decode(ids), text


def test_parameter_count_agrees_with_transformers() -> None:
    hf = hf_model("float32")
    assert hf.num_parameters() == SMOLLM2_135M.total_parameters() == 134_515_008
    config = hf.config
    assert (config.hidden_size, config.intermediate_size, config.num_hidden_layers,
            config.num_key_value_heads * config.head_dim, config.vocab_size) == (
        SMOLLM2_135M.d_model, SMOLLM2_135M.d_ff, SMOLLM2_135M.n_layers, SMOLLM2_135M.kv_dim,
        SMOLLM2_135M.vocab_size)
