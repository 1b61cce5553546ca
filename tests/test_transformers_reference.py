"""`ffn` against Hugging Face transformers, the model classes practitioners run.

Two checks. The real-model counts of `ffn.models` agree, part by part, with GPT-2, BERT and
LLaMA as transformers builds them from their default configurations, on PyTorch's meta device
(shapes only: no weights are allocated or downloaded). And `ffn`'s blocks give the same
outputs as transformers' own FFN modules, given the same weights, in float64.

Test-only dependency (pyproject's `transformers` group); skipped without it unless
FFN_REQUIRE_TORCH=1 (set by CI), which makes a missing torch or transformers a failure.
"""

from __future__ import annotations

import importlib
import os
import types
from collections.abc import Callable

import numpy as np
import pytest

import ffn
from tests.test_torch_reference import ATOL, RTOL, import_or_skip

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach the Hub, even by accident
torch = import_or_skip("torch")
transformers = import_or_skip("transformers")


def modeling(model: str) -> types.ModuleType:
    """transformers' ``modeling_<model>`` module, imported when a test first needs it: at the
    top of the file, these imports were two seconds of every collection."""
    return importlib.import_module(f"transformers.models.{model}.modeling_{model}")

# Which part of ffn's count each named parameter belongs to: the first rule whose substring
# occurs in the name wins.
GPT2_RULES = [(".mlp.", "FFN"), (".attn.", "attention"), ("wte", "embeddings"),
              ("wpe", "embeddings"), ("ln_", "norms"), ("lm_head", "head")]
BERT_RULES = [("LayerNorm", "norms"), (".intermediate.", "FFN"), ("attention.", "attention"),
              (".output.dense", "FFN"), ("word_embeddings", "embeddings"),
              ("position_embeddings", "embeddings"), ("token_type", "other"),
              ("pooler", "other")]
LLAMA_RULES = [(".mlp.", "FFN"), (".self_attn.", "attention"), ("embed_tokens", "embeddings"),
               ("norm", "norms"), ("lm_head", "head")]

CASES = [  # ffn's name, transformers' class and default config, the naming rules
    ("GPT-2 small", "GPT2LMHeadModel", "GPT2Config", GPT2_RULES),
    ("BERT base", "BertModel", "BertConfig", BERT_RULES),
    ("LLaMA-7B", "LlamaForCausalLM", "LlamaConfig", LLAMA_RULES),
]


def meta_parts(model_class: str, config_class: str, rules: list[tuple[str, str]]
               ) -> dict[str, int]:
    """Parameters per part of a model built on the meta device (tied weights counted once)."""
    config = getattr(transformers, config_class)()
    with torch.device("meta"):
        model = getattr(transformers, model_class)(config)
    parts = dict.fromkeys(["FFN", "attention", "embeddings", "norms", "head", "other"], 0)
    for name, p in model.named_parameters():  # named_parameters() skips a tied duplicate
        part = next((part for key, part in rules if key in name), None)
        assert part is not None, f"{model_class}: no part for parameter {name}"
        parts[part] += p.numel()
    return parts


@pytest.mark.parametrize(("name", "model_class", "config_class", "rules"), CASES,
                         ids=[c[0] for c in CASES])
def test_counts_agree_part_by_part_with_the_default_models(
        name: str, model_class: str, config_class: str, rules: list[tuple[str, str]]) -> None:
    ours = ffn.get_model(name)
    assert meta_parts(model_class, config_class, rules) == ours.parameter_parts()


def test_default_configs_are_the_published_dimensions() -> None:
    gpt2, bert, llama = (transformers.GPT2Config(), transformers.BertConfig(),
                         transformers.LlamaConfig())
    ours = ffn.get_model("GPT-2 small")
    assert (gpt2.n_embd, gpt2.n_layer, gpt2.vocab_size, gpt2.n_positions) == (
        ours.d_model, ours.n_layers, ours.vocab_size, ours.n_positions)
    assert gpt2.n_inner is None and ours.d_ff == 4 * ours.d_model  # None means 4 * n_embd
    assert gpt2.tie_word_embeddings and ours.tied_head
    assert gpt2.activation_function == "gelu_new"  # the tanh form
    ours = ffn.get_model("BERT base")
    assert (bert.hidden_size, bert.intermediate_size, bert.num_hidden_layers, bert.vocab_size,
            bert.max_position_embeddings) == (ours.d_model, ours.d_ff, ours.n_layers,
                                              ours.vocab_size, ours.n_positions)
    assert bert.hidden_act == "gelu" and bert.type_vocab_size == 2  # exact GELU
    ours = ffn.get_model("LLaMA-7B")
    assert (llama.hidden_size, llama.intermediate_size, llama.num_hidden_layers,
            llama.vocab_size) == (ours.d_model, ours.resolved_d_ff, ours.n_layers,
                                  ours.vocab_size)
    assert not llama.tie_word_embeddings and not ours.tied_head
    assert not llama.mlp_bias and not llama.attention_bias and not ours.bias
    assert llama.hidden_act == "silu" and ours.norm == "rms"
    # LLaMA-7B has as many key-value heads as query heads (no grouped-query attention),
    # so its attention has four full (d_model, d_model) projections, as ffn counts.
    assert llama.num_key_value_heads == llama.num_attention_heads


D_MODEL, D_FF = 16, 64


def fill(module: object, seed: int) -> None:
    """Give every parameter of ``module`` random float64 values (not the library's init)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in module.parameters():  # type: ignore[attr-defined]
            p.copy_(torch.from_numpy(rng.normal(0.0, 0.5, tuple(p.shape))))


def numpy(t: object) -> np.ndarray:
    return t.detach().numpy().copy()  # type: ignore[attr-defined,no-any-return]


def inputs() -> tuple[np.ndarray, object]:
    x = np.random.default_rng(7).normal(size=(3, 5, D_MODEL))  # (batch, tokens, d_model)
    return x, torch.from_numpy(x)


@pytest.mark.parametrize(("hf_name", "ours"), [("gelu_new", "gelu_tanh"), ("gelu", "gelu")])
def test_gpt2_mlp(hf_name: str, ours: str) -> None:
    config = transformers.GPT2Config(n_embd=D_MODEL, activation_function=hf_name,
                                     resid_pdrop=0.0)
    mlp = modeling("gpt2").GPT2MLP(D_FF, config).double().eval()
    fill(mlp, 1)
    # Conv1D stores its weight as (in, out): the row-vector W1 as it is, no transpose.
    block = ffn.FeedForward(numpy(mlp.c_fc.weight), numpy(mlp.c_fc.bias),
                            numpy(mlp.c_proj.weight), numpy(mlp.c_proj.bias), activation=ours)
    x, xt = inputs()
    np.testing.assert_allclose(block.forward(x), numpy(mlp(xt)), rtol=RTOL, atol=ATOL)


def test_gpt2_gelu_forms_differ_so_the_check_above_can_tell_them_apart() -> None:
    x, _ = inputs()
    assert np.abs(ffn.gelu(x) - ffn.gelu(x, approximate="tanh")).max() > 1e-6


def test_bert_intermediate_and_output_are_a_post_norm_sublayer() -> None:
    config = transformers.BertConfig(hidden_size=D_MODEL, intermediate_size=D_FF,
                                     hidden_dropout_prob=0.0)
    intermediate = modeling("bert").BertIntermediate(config).double().eval()
    output = modeling("bert").BertOutput(config).double().eval()
    fill(intermediate, 2)
    fill(output, 3)
    # nn.Linear stores (out, in): transpose to the row-vector (in, out).
    block = ffn.FeedForward(numpy(intermediate.dense.weight).T, numpy(intermediate.dense.bias),
                            numpy(output.dense.weight).T, numpy(output.dense.bias),
                            activation="gelu")
    norm = ffn.LayerNorm(D_MODEL, eps=config.layer_norm_eps, gamma=numpy(output.LayerNorm.weight),
                         beta=numpy(output.LayerNorm.bias), dtype=np.float64)
    sublayer = ffn.Sublayer(block, norm, placement="post")  # LN(x + FFN(x))
    x, xt = inputs()
    theirs = output(intermediate(xt), xt)  # BertOutput adds the residual, then normalises
    np.testing.assert_allclose(sublayer.forward(x), numpy(theirs), rtol=RTOL, atol=ATOL)


def test_llama_mlp_is_a_swiglu_block() -> None:
    config = transformers.LlamaConfig(hidden_size=D_MODEL, intermediate_size=D_FF,
                                      num_attention_heads=4)
    mlp = modeling("llama").LlamaMLP(config).double().eval()
    fill(mlp, 4)
    t: Callable[[object], np.ndarray] = lambda w: numpy(w).T  # noqa: E731  (out, in) -> (in, out)
    block = ffn.GatedFeedForward(t(mlp.gate_proj.weight), t(mlp.up_proj.weight),
                                 t(mlp.down_proj.weight), variant="swiglu")
    assert mlp.gate_proj.bias is None  # mlp_bias=False by default, like ffn's bias-free block
    x, xt = inputs()
    np.testing.assert_allclose(block.forward(x), numpy(mlp(xt)), rtol=RTOL, atol=ATOL)


# LLaMA 2 and 3 as transformers builds them from their published configurations: the fields
# that set a shape, as torchtune's builders (commit bd2a0fc) give them for the released
# checkpoints (embed_dim, intermediate_dim, num_layers, num_heads, num_kv_heads, vocab_size; its
# llama2_7b leaves intermediate_dim to the rule, 11008), in transformers' names.
LLAMA_CONFIGS = {  # hidden, intermediate, layers, heads, key-value heads, vocabulary
    "LLaMA-2-7B": (4096, 11008, 32, 32, 32, 32000),
    "LLaMA-2-13B": (5120, 13824, 40, 40, 40, 32000),
    "LLaMA-2-70B": (8192, 28672, 80, 64, 8, 32000),
    "LLaMA-3-8B": (4096, 14336, 32, 32, 8, 128256),
    "LLaMA-3-70B": (8192, 28672, 80, 64, 8, 128256),
    "LLaMA-3.1-405B": (16384, 53248, 126, 128, 8, 128256),
}


@pytest.mark.parametrize("name", list(LLAMA_CONFIGS))
def test_llama_2_and_3_totals_equal_llama_for_causal_lm(name: str) -> None:
    hidden, intermediate, layers, heads, kv_heads, vocab = LLAMA_CONFIGS[name]
    config = transformers.LlamaConfig(
        hidden_size=hidden, intermediate_size=intermediate, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv_heads, vocab_size=vocab,
        tie_word_embeddings=False)
    with torch.device("meta"):  # shapes only: nothing allocated, nothing downloaded
        model = transformers.LlamaForCausalLM(config)
    ours = ffn.get_model(name)
    assert ours.resolved_d_ff == intermediate  # LLaMA's rule gives the published width
    assert (ours.kv_dim or ours.d_model) == kv_heads * hidden // heads  # None: no GQA
    assert sum(p.numel() for p in model.parameters()) == ours.total_parameters()
    parts = dict.fromkeys(["FFN", "attention", "embeddings", "norms", "head", "other"], 0)
    for pname, p in model.named_parameters():
        parts[next(part for key, part in LLAMA_RULES if key in pname)] += p.numel()
    assert parts == ours.parameter_parts()
