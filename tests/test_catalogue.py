"""The catalogue (`ffn.models.CATALOGUE`) and the counts `ModelDims` answers for `ffn.inference`.

The catalogue must be every model once, in the chapters' order, each year the one its own
source cites; a routed expert's and a router's parameters are counted here from the shapes of
the matrices, not with ffn's formulas.
"""

from __future__ import annotations

import re

import pytest

import ffn
from ffn.models import ALL_MODELS, CATALOGUE, MODELS_2026, RECENT_MOE_MODELS, SMOLLM2_135M
from tests.test_errors import raises


def test_the_catalogue_is_every_model_once_in_the_chapters_order() -> None:
    models = (*ALL_MODELS, *RECENT_MOE_MODELS, *MODELS_2026, SMOLLM2_135M)
    assert list(CATALOGUE) == [m.name for m in models]
    assert [entry.model for entry in CATALOGUE.values()] == list(models)
    for name, entry in CATALOGUE.items():
        assert ffn.get_model(name) is entry.model
    with pytest.raises(TypeError):
        CATALOGUE["GPT-2 small"] = CATALOGUE["GPT-2 XL"]  # type: ignore[index]  # read-only


def test_each_year_is_the_one_its_source_cites() -> None:
    """A source citing "Author (YYYY)" dates the model. The others cite a repository and
    commit: LLaMA 2 was released in July 2023, LLaMA 3 in April 2024 (3.1 in July), SmolLM2
    on 1 November 2024 (its report, arXiv 2502.02737, followed in February 2025), and the
    recent mixtures of experts all in 2025 (Llama 4 on 5 April); the models of 2026 in 2026
    (DeepSeek-V4 on 24 April) but LongCat-Flash, whose report (arXiv 2509.01322) and release
    came in September 2025."""
    released = {"LLaMA 2": 2023, "LLaMA 3": 2024, "SmolLM2": 2024, "Qwen3.5": 2026,
                "Gemma 4": 2026, "DeepSeek-V4": 2026, "LongCat": 2025}
    cited = 0
    for entry in CATALOGUE.values():
        year = re.search(r"\((\d{4})\)", entry.model.source)
        if year is not None:
            cited += 1
            assert entry.year == int(year.group(1)), entry.model.name
        else:
            recent = entry.model in RECENT_MOE_MODELS
            assert entry.year == (2025 if recent else released[entry.family]), entry.model.name
    assert cited >= 10  # the search found the citations, not nothing


def test_a_family_holds_the_models_of_its_name() -> None:
    families = {name: entry.family for name, entry in CATALOGUE.items()}
    assert families["GPT-2 XL"] == families["GPT-2 small"] == "GPT-2"
    assert families["LLaMA-3.1-405B"] == "LLaMA 3"
    assert families["gpt-oss-20b"] == "gpt-oss"
    def bare(text: str) -> str:
        return re.sub(r"[- ]", "", text.lower())

    for name, family in families.items():  # each model's name starts with its family's
        assert bare(name).startswith(bare(family)), (name, family)


def test_a_routed_expert_and_the_router_counted_from_their_shapes() -> None:
    oss = ffn.get_model("gpt-oss-120b")  # gated experts with biases, a router bias
    d, h, n = 2880, 2880, 128
    matrices = d * h + d * h + h * d  # gate (d, h), up (d, h), down (h, d)
    assert oss.expert_parameters(biases=False) == matrices
    assert oss.expert_parameters() == matrices + h + h + d  # and the three biases
    assert oss.router_parameters() == d * n + n
    mixtral = ffn.get_model("Mixtral 8x7B")  # no biases anywhere
    assert mixtral.expert_parameters() == mixtral.expert_parameters(biases=False) == (
        3 * 4096 * 14336)
    assert mixtral.router_parameters() == 4096 * 8
    gpt2 = ffn.get_model("GPT-2 small")
    assert gpt2.router_parameters() == 0
    with raises(ValueError, "GPT-2 small: no experts (give moe, a MoEDims)"):
        gpt2.expert_parameters()
    with raises(TypeError, "biases must be a bool, got int 1"):
        oss.expert_parameters(biases=1)  # type: ignore[arg-type]


def test_router_parameters_and_the_router_bias_of_a_moe_count() -> None:
    assert ffn.counting.router_parameters(10, 4) == 40
    assert ffn.counting.router_parameters(10, 4, bias=True) == 44
    assert ffn.count_moe_parameters(10, 20, 4, router_bias=True) == (
        ffn.count_moe_parameters(10, 20, 4) + 4)
    with raises(ValueError, "n_experts must be positive, got 0"):
        ffn.counting.router_parameters(10, 0)
    with raises(TypeError, "bias must be a bool, got str 'yes'"):
        ffn.counting.router_parameters(10, 4, "yes")  # type: ignore[arg-type]


def test_shared_experts_and_their_gate_counted_from_their_shapes() -> None:
    qwen = ffn.get_model("Qwen1.5-MoE-A2.7B")  # 4 shared experts of 1408 as one block, a gate
    d, h = 2048, 4 * 1408
    block = d * h + d * h + h * d  # gate (d, h), up (d, h), down (h, d); no biases
    assert qwen.shared_parameters() == block + d  # and the sigmoid gate, (d, 1)
    forward = 2 * block + 2 * d  # a multiply and an add per weight, for one token
    assert ffn.counting.shared_expert_flops(d, h, gated=True, gate=True) == forward
    assert ffn.counting.shared_expert_flops(d, h, 5, True, True, backward=True) == 3 * 5 * forward
    assert ffn.counting.shared_expert_parameters(d, h, False, True) == block
    with raises(TypeError, "gate must be a bool, got int 1"):
        ffn.counting.shared_expert_parameters(d, h, gate=1)  # type: ignore[arg-type]
