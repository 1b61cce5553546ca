"""`ffn.models`: the published dimensions and the counts derived from them."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

import ffn
from tests.test_errors import raises

NAMES = [m.name for m in ffn.MODELS]


def test_names_are_unique_and_found() -> None:
    assert len(set(NAMES)) == len(NAMES)
    for model in ffn.MODELS:
        assert ffn.get_model(model.name) is model


def test_unknown_name_lists_the_valid_ones() -> None:
    with pytest.raises(KeyError, match="no model named 'GPT-3'; valid: 'Transformer base'"):
        ffn.get_model("GPT-3")


def test_entries_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ffn.get_model("BERT base").d_model = 1  # type: ignore[misc]


@pytest.mark.parametrize("model", [m for m in ffn.MODELS if not m.gated], ids=lambda m: m.name)
def test_ungated_models_follow_the_four_times_convention(model: ffn.ModelDims) -> None:
    assert model.d_ff == 4 * model.d_model
    assert model.bias


def test_llama_width_comes_from_the_rule() -> None:
    llama = ffn.get_model("LLaMA-7B")
    assert llama.d_ff == ffn.LlamaWidth()  # the rule's defaults: multiple_of 256, no multiplier
    assert llama.resolved_d_ff == 11008  # hidden_dim in Meta's params.json for 7B
    assert llama.gated and not llama.bias


# Published total parameter counts, including embeddings and norms (which ffn.models leaves
# out): GPT-2 small 124,439,808 (Hugging Face's GPT2Model), BERT base 109,482,240
# (bert-base-uncased with its pooler), LLaMA-7B 6,738,415,616 (the released checkpoint).
def test_gpt2_small_total_matches_the_published_count() -> None:
    m = ffn.get_model("GPT-2 small")
    embeddings = 50257 * 768 + 1024 * 768  # tokens and positions
    layer_norms = m.n_layers * 2 * (2 * 768) + 2 * 768  # two per layer, one final
    total = m.ffn_parameters() + m.attention_parameters() + embeddings + layer_norms
    assert total == 124_439_808


def test_bert_base_total_matches_the_published_count() -> None:
    m = ffn.get_model("BERT base")
    embeddings = 30522 * 768 + 512 * 768 + 2 * 768 + 2 * 768  # words, positions, types, LN
    layer_norms = m.n_layers * 2 * (2 * 768)
    pooler = 768 * 768 + 768
    total = m.ffn_parameters() + m.attention_parameters() + embeddings + layer_norms + pooler
    assert total == 109_482_240


def test_llama_7b_total_matches_the_published_count() -> None:
    m = ffn.get_model("LLaMA-7B")
    embeddings_and_head = 2 * 32000 * 4096  # untied input embedding and output head
    norms = m.n_layers * 2 * 4096 + 4096  # RMSNorm has a scale only
    total = m.ffn_parameters() + m.attention_parameters() + embeddings_and_head + norms
    assert total == 6_738_415_616


def test_encoder_decoder_counts_the_cross_attention() -> None:
    base = ffn.get_model("Transformer base")
    # 6 encoder layers with one attention, 6 decoder layers with two.
    assert base.attention_sublayers == 6 * 1 + 6 * 2
    assert base.attention_parameters() == 18 * (4 * 512 * 512 + 4 * 512)
    assert ffn.get_model("BERT base").attention_sublayers == 12


@pytest.mark.parametrize("model", ffn.MODELS, ids=lambda m: m.name)
def test_derived_numbers_agree_with_the_counting_functions(model: ffn.ModelDims) -> None:
    d, f = model.d_model, model.resolved_d_ff
    n_in = 2 if model.gated else 1
    per_layer = (n_in + 1) * d * f + ((n_in * f + d) if model.bias else 0)
    assert model.ffn_parameters_per_layer() == per_layer
    assert model.ffn_parameters() == model.n_layers * per_layer
    attention = model.attention_sublayers * (4 * d * d + (4 * d if model.bias else 0))
    assert model.ffn_share() == pytest.approx(per_layer * model.n_layers
                                              / (per_layer * model.n_layers + attention))
    # 2 FLOPs per weight and token forward; backward costs twice the forward.
    weights = model.n_layers * (n_in + 1) * d * f
    assert model.ffn_flops_per_token() == 2 * weights
    assert model.ffn_flops_per_token(backward=True) == 6 * weights


def test_ffn_holds_about_two_thirds_of_an_ungated_layer() -> None:
    share = ffn.get_model("GPT-2 XL").ffn_share()
    # 8 d^2 + 5 d out of 12 d^2 + 9 d, with d = 1600
    assert share == pytest.approx((8 * 1600**2 + 5 * 1600) / (12 * 1600**2 + 9 * 1600))
    assert 0.66 < share < 2 / 3


@pytest.mark.parametrize(
    ("field", "value", "error", "message"),
    [
        ("d_model", 0, ValueError, "d_model must be positive, got 0"),
        ("d_ff", 2.5, TypeError, "d_ff must be an int or a LlamaWidth, got float 2.5"),
        ("d_ff", None, TypeError, "d_ff must be an int or a LlamaWidth, got NoneType None"),
        ("moe", 8, TypeError, "moe must be a MoEDims or None, got int 8"),
        ("linear_attention", (2, 10), TypeError,
         r"linear_attention must be a LinearAttention or None, got tuple \(2, 10\)"),
        ("n_layers", -1, ValueError, "n_layers must be positive, got -1"),
        ("gated", 1, TypeError, "gated must be a bool, got int 1"),
        ("bias", "yes", TypeError, "bias must be a bool, got str 'yes'"),
        ("n_attention", 0, ValueError, "n_attention must be positive, got 0"),
        ("name", "", TypeError, "name must be a non-empty str, got str ''"),
    ],
)
def test_bad_dimensions_are_rejected(field: str, value: object, error: type[Exception],
                                     message: str) -> None:
    with pytest.raises(error, match=f"^{message}$"):
        dataclasses.replace(ffn.get_model("BERT base"), **{field: value})


@pytest.mark.parametrize(("name", "published"), [
    ("GPT-2 small", 124_439_808), ("BERT base", 109_482_240), ("LLaMA-7B", 6_738_415_616)])
def test_whole_model_totals_match_the_published_counts(name: str, published: int) -> None:
    model = ffn.get_model(name)
    parts = model.parameter_parts()
    assert model.total_parameters() == sum(parts.values()) == published
    assert parts["FFN"] == model.ffn_parameters()
    assert model.ffn_share_of_total() == pytest.approx(parts["FFN"] / published)
    # Per layer the FFN holds about two thirds; over the whole model, less.
    assert model.ffn_share_of_total() < model.ffn_share()


def test_whole_model_parts_follow_each_models_choices() -> None:
    gpt2, llama = ffn.get_model("GPT-2 small"), ffn.get_model("LLaMA-7B")
    assert gpt2.parameter_parts()["head"] == 0  # tied to the token embedding
    assert gpt2.parameter_parts()["embeddings"] == (50257 + 1024) * 768
    assert llama.parameter_parts()["head"] == 32000 * 4096  # untied
    assert llama.parameter_parts()["norms"] == (2 * 32 + 1) * 4096  # RMSNorm: scale only
    with pytest.raises(ValueError, match="Transformer base: no vocab_size"):
        ffn.get_model("Transformer base").total_parameters()
    with pytest.raises(ValueError, match="unknown norm 'batch'"):
        dataclasses.replace(gpt2, norm="batch")


# Issue 26, item 7: other=-10**9 gave a negative total, other="a" failed only in
# total_parameters(), source=None was accepted; numpy ints overflowed the totals.
BASE: dict[str, object] = {"name": "m", "d_model": 8, "d_ff": 32, "n_layers": 2,
                           "gated": False, "bias": True, "source": "s", "vocab_size": 100}


@pytest.mark.parametrize(
    ("changes", "exception", "message"),
    [
        ({"other": -(10**9)}, ValueError, "other must be non-negative, got -1000000000"),
        ({"other": "a"}, TypeError, "other must be an int, got str 'a'"),
        ({"other": None}, TypeError, "other must be an int, got NoneType None"),
        ({"other": True}, TypeError, "other must be an int, got bool True"),
        ({"other": 1.5}, TypeError, "other must be an int, got float 1.5"),
        ({"source": None}, TypeError, "source must be a non-empty str, got NoneType None"),
        ({"source": ""}, TypeError, "source must be a non-empty str, got str ''"),
        ({"source": 5}, TypeError, "source must be a non-empty str, got int 5"),
        ({"name": None}, TypeError, "name must be a non-empty str, got NoneType None"),
    ],
)
def test_bad_fields_are_refused_at_construction(
    changes: dict[str, object], exception: type[Exception], message: str
) -> None:
    with raises(exception, message):
        ffn.ModelDims(**(BASE | changes))  # type: ignore[arg-type]


def test_numpy_ints_are_kept_as_python_ints() -> None:
    big = np.int64(2**40)  # vocab_size * d_model = 2**80 overflows int64
    m = ffn.ModelDims(**(BASE | {"d_model": big, "vocab_size": big, "other": np.int64(5)}))
    assert type(m.d_model) is type(m.vocab_size) is type(m.other) is int
    d, f = 2**40, 32
    per_layer = 2 * d * f + f + d + 4 * d * d + 4 * d
    assert m.total_parameters() == 2 * per_layer + 2**40 * d + 5 * 2 * d + 5


# LLaMA 2 and 3: widths by the rule with ffn_dim_multiplier, grouped-query attention. Widths
# published as torchtune's intermediate_dim (commit bd2a0fc); whole-model totals as
# transformers' LlamaForCausalLM counts them (tests/test_transformers_reference.py builds it).
LLAMA = {"LLaMA-2-7B": (11008, 6_738_415_616), "LLaMA-2-13B": (13824, 13_015_864_320),
         "LLaMA-2-70B": (28672, 68_976_648_192), "LLaMA-3-8B": (14336, 8_030_261_248),
         "LLaMA-3-70B": (28672, 70_553_706_496), "LLaMA-3.1-405B": (53248, 405_853_388_800)}


def test_llama_models_are_found_by_name_and_listed_once() -> None:
    assert [m.name for m in ffn.LLAMA_MODELS] == list(LLAMA)
    everything = [m.name for m in (*ffn.MODELS, *ffn.LLAMA_MODELS, *ffn.MOE_MODELS)]
    assert len(set(everything)) == len(everything)
    for model in ffn.LLAMA_MODELS:
        assert ffn.get_model(model.name) is model
    assert ffn.MODELS[-1].name == "LLaMA-7B"  # MODELS, and the pages that list it, unchanged


@pytest.mark.parametrize("model", ffn.LLAMA_MODELS, ids=lambda m: m.name)
def test_llama_widths_and_totals(model: ffn.ModelDims) -> None:
    d_ff, total = LLAMA[model.name]
    rule = model.d_ff
    assert isinstance(rule, ffn.LlamaWidth) and model.resolved_d_ff == d_ff
    assert model.resolved_d_ff == ffn.llama_d_ff(model.d_model, rule.multiple_of,
                                                 rule.ffn_dim_multiplier)
    # Counted by hand: Q and O (d, d), K and V (d, kv); three FFN matrices; embeddings and an
    # untied head; RMSNorm scales, two per layer and a final one.
    d, kv = model.d_model, model.kv_dim or model.d_model
    layer = 2 * d * d + 2 * d * kv + 3 * d * d_ff + 2 * d
    assert model.total_parameters() == model.n_layers * layer + 2 * model.vocab_size * d + d \
        == total


def test_grouped_query_attention_is_counted() -> None:
    m = ffn.get_model("LLaMA-3-8B")
    assert m.kv_dim == 8 * 128  # 8 key-value heads of 4096 / 32 = 128
    assert m.attention_parameters() == 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024)
    full = dataclasses.replace(m, kv_dim=None)  # as if every head had its own K and V
    assert full.attention_parameters() - m.attention_parameters() == 32 * 2 * 4096 * 3072


MULTIPLIER = r"ffn_dim_multiplier must be in \(0, inf\), got"


@pytest.mark.parametrize(
    ("changes", "exception", "message"),
    [
        ({"ffn_dim_multiplier": 0.0}, ValueError, f"{MULTIPLIER} 0.0"),
        ({"ffn_dim_multiplier": float("nan")}, ValueError, f"{MULTIPLIER} nan"),
        ({"ffn_dim_multiplier": "1.3"}, TypeError,
         "ffn_dim_multiplier must be a real number, got str '1.3'"),
        ({"multiple_of": 0}, ValueError, "multiple_of must be positive, got 0"),
        ({"multiple_of": None}, TypeError, "multiple_of must be an int, got NoneType None"),
    ],
)
def test_bad_llama_rule_arguments_are_refused(changes: dict[str, object],
                                              exception: type[Exception], message: str) -> None:
    # A width and the rule's arguments beside it cannot be given: d_ff is one or the other.
    rule = ffn.get_model("LLaMA-3-8B").d_ff
    assert isinstance(rule, ffn.LlamaWidth)
    with pytest.raises(exception, match=f"^{message}$"):
        dataclasses.replace(rule, **changes)


def test_the_rule_refuses_a_model_too_wide_for_its_multiplier() -> None:
    with raises(ValueError, "d_model must be at most 3.3e307 with an ffn_dim_multiplier",
                prefix=True):
        dataclasses.replace(ffn.get_model("LLaMA-3-8B"), d_model=2**1030)

def test_fine_grained_fields_and_their_errors() -> None:
    ds = ffn.get_model("DeepSeek-V3")
    per_layer = ffn.count_moe_parameters(7168, 2048, 256, bias=False, gated=True) + (
        ffn.count_parameters(7168, 2048, bias=False, gated=True))  # routed, router, shared
    dense = 3 * ffn.count_parameters(7168, 18432, bias=False, gated=True)
    assert ds.ffn_parameters() == dense + 58 * per_layer
    assert ds.ffn_flops_per_token() == 3 * ffn.count_flops(7168, 18432, gated=True) + 58 * (
        ffn.count_moe_flops(7168, 2048, 256, 8, gated=True)
        + ffn.count_flops(7168, 2048, gated=True))
    qwen = ffn.get_model("Qwen1.5-MoE-A2.7B")  # its shared gate: one (d_model, 1) per layer
    assert qwen.ffn_parameters_per_layer() == ffn.count_moe_parameters(
        2048, 1408, 60, bias=False, gated=True) + ffn.count_parameters(
        2048, 5632, bias=False, gated=True) + 2048
    # Shared experts or dense layers without experts, a gate without shared experts, dense
    # layers without their width: none can be written now (each is a part of MoEDims).
    kw: dict[str, object] = {"name": "m", "d_model": 8, "d_ff": 16, "n_layers": 2,
                             "gated": True, "bias": False, "source": "s"}
    experts = ffn.MoEDims(4, 1, dense=ffn.DenseLayers(3, 8))
    with raises(ValueError, "moe.dense.first must be at most n_layers = 2, got 3"):
        ffn.ModelDims(**kw, moe=experts)  # type: ignore[arg-type]
    for make, error, message in [
            (lambda: ffn.MoEDims(4, 5), ValueError, "top_k must be at most n_experts = 4, got 5"),
            (lambda: ffn.MoEDims(0, 1), ValueError, "n_experts must be positive, got 0"),
            (lambda: ffn.MoEDims(4, 1, shared=32), TypeError,  # type: ignore[arg-type]
             "shared must be a SharedExperts or None, got int 32"),
            (lambda: ffn.MoEDims(4, 1, dense=(1, 8)), TypeError,  # type: ignore[arg-type]
             "dense must be a DenseLayers or None, got tuple (1, 8)"),
            (lambda: ffn.MoEDims(4, 1, router_bias=1), TypeError,  # type: ignore[arg-type]
             "router_bias must be a bool, got int 1"),
            (lambda: ffn.SharedExperts(0), ValueError, "d_ff must be positive, got 0"),
            (lambda: ffn.SharedExperts(8, gate=1), TypeError,  # type: ignore[arg-type]
             "gate must be a bool, got int 1"),
            (lambda: ffn.DenseLayers(0, 8), ValueError, "first must be positive, got 0"),
            (lambda: ffn.DenseLayers(1, 8, moe_every=0), ValueError,
             "moe_every must be positive, got 0")]:
        with raises(error, message):
            make()


# ---------------------------------------------------------------- the attention counts' arguments

ATTENTION_COUNTS = [
    (ffn.counting.head_attention_parameters, {"d_model": 2880, "n_heads": 64, "n_kv_heads": 8,
                                            "head_dim": 64}),
    (ffn.counting.gated_deltanet_parameters, {"d_model": 2048, "n_key_heads": 16,
                                            "n_value_heads": 32, "key_dim": 128,
                                            "value_dim": 128, "conv_kernel": 4}),
    (ffn.counting.latent_attention_parameters, {"d_model": 7168, "n_heads": 128, "q_rank": 1536,
                                              "kv_rank": 512, "nope_dim": 128, "rope_dim": 64,
                                              "v_dim": 128}),
]
BAD_SIZES = [(-1, ValueError, "must be positive, got -1"), (0, ValueError, "must be positive"),
             (4.5, TypeError, "must be an int, got float 4.5"),
             (True, TypeError, "must be an int, got bool True"),
             ("8", TypeError, "must be an int, got str '8'"),
             (None, TypeError, "must be an int, got NoneType None")]


@pytest.mark.parametrize(("count", "good"), ATTENTION_COUNTS,
                         ids=[count.__name__ for count, _ in ATTENTION_COUNTS])
def test_attention_counts_check_every_argument(count: Any, good: dict[str, int]) -> None:
    """Issue 39: these counts checked nothing: -1 heads gave -32, 4.5 a float, a conv_kernel
    of -16 16,908,480. Each size is a positive int (numpy's too), named when it is not."""
    total = count(**good)
    assert type(total) is int
    assert count(**{k: np.int64(v) for k, v in good.items()}) == total
    for name in good:
        for value, error, words in BAD_SIZES:
            with pytest.raises(error, match=f"^{name} {re.escape(words)}"):
                count(**good | {name: value})


@pytest.mark.parametrize("flag", ["bias", "sinks", "qk_norm", "output_gate"])
def test_head_attention_flags_are_bools(flag: str) -> None:
    with pytest.raises(TypeError, match=f"^{flag} must be a bool, got int 1$"):
        ffn.counting.head_attention_parameters(2880, 64, 8, 64, **{flag: 1})
    with_flag = ffn.counting.head_attention_parameters(2880, 64, 8, 64, **{flag: np.True_})
    assert with_flag > ffn.counting.head_attention_parameters(2880, 64, 8, 64)
