"""The 2026 routing options against transformers' own blocks, built on the CPU from tiny configs
with the same random weights (nothing downloaded), forward and gradients by autograd:

- DeepSeek-V4's hash-routed block (`DeepseekV4SparseMoeBlock`, a `hash_moe` layer:
  `DeepseekV4HashRouter` chooses by `tid2eid[input_ids]`, its learned `weight` still weighs)
  against `ffn.MixtureOfExperts(..., table=...)` with sqrt(softplus) scores, scale 1.5 and
  clamped SwiGLU experts and shared expert (`ffn.ClampedSwiGLU.deepseek_v4`);
- DeepSeek-V4's top-k block (a `moe` layer, `DeepseekV4TopKRouter` with its choice bias);
- LongCat-Flash's block with zero-computation experts (`LongcatFlashMoE`, `zero_expert_num`)
  against `ffn.MixtureOfExperts(..., zero_experts=...)`;
- DeepSeek-V4's clamped SwiGLU (`DeepseekV4MLP`, `swiglu_limit` 10) against
  `ffn.ClampedSwiGLU.deepseek_v4`, the clamp engaged and not.

Float64 throughout. DeepSeek-V4's router stays in the module's dtype, so its blocks are held
at the tight tolerance of tests/test_torch_reference.py. LongCat-Flash's router casts the
rows and its weight to float32 (`LongcatFlashTopkRouter.forward`): its whole block is held to
1e-6 of each array's largest entry (see the test), and its experts, zero ones included, run
on ffn's choice and weights at the tight tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

import ffn
from tests.test_moe_routers_transformers import (
    F32_RTOL,
    assert_close,
    autograd,
    modeling,
    numpy,
    t64,
    torch,
    transformers,
)

D_MODEL, D_FF, VOCAB = 16, 6, 40


def set_random(block: object, seed: int, gate_up_scale: float, other: float = 0.5
               ) -> dict[str, np.ndarray]:
    """Every parameter of ``block`` drawn from N(0, ``other``) (gate and up:
    ``gate_up_scale``); returned by name as numpy arrays."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in block.named_parameters():  # type: ignore[attr-defined]
            wide = "gate_up" in name or "gate_proj" in name or "up_proj" in name
            p.copy_(t64(rng.normal(0.0, gate_up_scale if wide else other, tuple(p.shape))))
    return {n: numpy(p) for n, p in block.named_parameters()}  # type: ignore[attr-defined]


def v4_expert(gate_up: np.ndarray, down: np.ndarray) -> ffn.ClampedSwiGLU:
    """One of transformers' fused experts: ``gate_up`` ``(2 d_ff, d_model)``, gate rows first
    (``chunk(2)``), ``down`` ``(d_model, d_ff)``; ffn's matrices are their transposes."""
    return ffn.ClampedSwiGLU.deepseek_v4(gate_up[:D_FF].T, gate_up[D_FF:].T, down.T)


def deepseek_v4_pair(layer: str, seed: int, scale: float, n_experts: int = 8, top_k: int = 3
                     ) -> tuple[ffn.MixtureOfExperts, object]:
    """A tiny DeepSeek-V4 block of ``layer`` type (``hash_moe`` or ``moe``) and ffn's twin."""
    config = transformers.DeepseekV4Config(
        hidden_size=D_MODEL, moe_intermediate_size=D_FF, n_routed_experts=n_experts,
        num_experts_per_tok=top_k, vocab_size=VOCAB, num_hidden_layers=1,
        mlp_layer_types=[layer], experts_implementation="eager")
    assert (config.scoring_func, config.routed_scaling_factor, config.swiglu_limit) == (
        "sqrtsoftplus", 1.5, 10.0)  # the defaults the layer below is built with
    block = modeling("deepseek_v4").DeepseekV4SparseMoeBlock(config, 0).double()
    w = set_random(block, seed, scale)
    rng = np.random.default_rng(seed + 1)
    table = np.array([rng.choice(n_experts, top_k, replace=False) for _ in range(VOCAB)])
    bias = rng.normal(0.0, 0.3, n_experts)  # the top-k router's choice bias
    with torch.no_grad():
        if layer == "hash_moe":
            block.gate.tid2eid.copy_(torch.from_numpy(table))  # type: ignore[attr-defined]
        else:
            block.gate.e_score_correction_bias.copy_(t64(bias))  # type: ignore[attr-defined]
    experts = [v4_expert(w["experts.gate_up_proj"][e], w["experts.down_proj"][e])
               for e in range(n_experts)]
    shared = ffn.ClampedSwiGLU.deepseek_v4(w["shared_experts.gate_proj.weight"].T,
                                           w["shared_experts.up_proj.weight"].T,
                                           w["shared_experts.down_proj.weight"].T)
    options = {"table": table} if layer == "hash_moe" else {"bias": bias}
    ours = ffn.MixtureOfExperts(w["gate.weight"].T, experts, top_k, score="sqrtsoftplus",
                                scale=1.5, shared_experts=[shared], **options)
    return ours, block


def deepseek_v4_grads_match(ours: ffn.MixtureOfExperts, g: dict[str, np.ndarray]) -> None:
    assert_close(ours.grads["router"], g["gate.weight"].T, what="router")
    for e in range(ours.n_experts):
        gu, down = g["experts.gate_up_proj"][e], g["experts.down_proj"][e]
        for name, theirs in (("W", gu[:D_FF].T), ("V", gu[D_FF:].T), ("W2", down.T)):
            assert_close(ours.grads[f"experts.{e}.{name}"], theirs, what=f"{e}.{name}")
    for name, key in (("W", "gate_proj"), ("V", "up_proj"), ("W2", "down_proj")):
        assert_close(ours.grads[f"shared_experts.0.{name}"],
                     g[f"shared_experts.{key}.weight"].T, what=f"shared {name}")


def clamped_entries(ours: ffn.MixtureOfExperts, x: np.ndarray) -> int:
    """Pre-activations past DeepSeek-V4's limit of 10 in the experts' and shared expert's
    gate and up branches, on all rows."""
    count = 0
    for e in (*ours.experts, *ours.shared_experts):
        assert isinstance(e, ffn.ClampedSwiGLU)
        count += int((x @ e.W > 10).sum() + (np.abs(x @ e.V) > 10).sum())
    return count


@pytest.mark.parametrize(("scale", "engaged"), [(0.1, False), (3.0, True)],
                         ids=["clamp-idle", "clamp-engaged"])
def test_hash_routed_moe_matches_deepseek_v4_hash_block(scale: float, engaged: bool) -> None:
    ours, block = deepseek_v4_pair("hash_moe", seed=80, scale=scale)
    rng = np.random.default_rng(81)
    x, dy = rng.normal(size=(2, 5, D_MODEL)), rng.normal(size=(2, 5, D_MODEL))
    ids = rng.integers(0, VOCAB, size=(2, 5))
    ids[1, 4] = ids[0, 0]  # one token twice: the same experts, other weights
    y, dx = ours(x, token_ids=ids), ours.backward(dy)
    assert (clamped_entries(ours, x.reshape(-1, D_MODEL)) > 0) == engaged
    _, chosen, weights = ours.route(x, token_ids=ids)
    assert ours.table is not None
    np.testing.assert_array_equal(chosen, ours.table[ids])  # the table chose
    assert not np.allclose(weights[1, 4], weights[0, 0])  # the scores weighed
    with torch.no_grad():
        logits, w_t, idx_t = block.gate(t64(x), torch.from_numpy(ids))  # type: ignore[attr-defined]
    np.testing.assert_array_equal(numpy(idx_t), chosen.reshape(-1, 3))
    assert_close(numpy(logits), x.reshape(-1, D_MODEL) @ ours.router)
    assert_close(numpy(w_t), weights.reshape(-1, 3), what="weights")
    xt = t64(x).requires_grad_(True)
    out = block(xt, torch.from_numpy(ids))  # type: ignore[operator]
    out.backward(t64(dy))
    g = {n: numpy(p.grad) for n, p in block.named_parameters()}  # type: ignore[attr-defined]
    assert_close(y, numpy(out), what="output")
    assert_close(dx, numpy(xt.grad), what="dL/dx")
    deepseek_v4_grads_match(ours, g)
    assert np.abs(ours.grads["router"]).max() > 1e-3  # the scores are trained: not zero
    # the table matters: the same layer routing by its scores chooses otherwise
    learned = ffn.MixtureOfExperts(**{**ours.options(), "table": None})
    assert not np.array_equal(learned.route(x)[1], chosen)


def test_top_k_moe_matches_deepseek_v4_routed_block() -> None:
    ours, block = deepseek_v4_pair("moe", seed=90, scale=3.0)
    rng = np.random.default_rng(91)
    x, dy = rng.normal(size=(2, 5, D_MODEL)), rng.normal(size=(2, 5, D_MODEL))
    y, dx = ours(x), ours.backward(dy)
    _, chosen, weights = ours.route(x)
    with torch.no_grad():
        logits, w_t, idx_t = block.gate(t64(x))  # type: ignore[attr-defined]
    assert_close(numpy(logits), x.reshape(-1, D_MODEL) @ ours.router)
    theirs = numpy(idx_t)  # torch.topk(sorted=False): a set, compared as one
    order = np.argsort(theirs, -1)
    np.testing.assert_array_equal(np.take_along_axis(theirs, order, -1),
                                  np.sort(chosen.reshape(-1, 3), -1))
    assert_close(np.take_along_axis(numpy(w_t), order, -1),
                 np.take_along_axis(weights.reshape(-1, 3), np.argsort(chosen.reshape(-1, 3),
                                                                       -1), -1))
    whole, dx_t, g = autograd(block, x, dy)
    assert_close(y, whole, what="output")
    assert_close(dx, dx_t, what="dL/dx")
    deepseek_v4_grads_match(ours, g)
    # sqrt(softplus) weighs otherwise than a sigmoid would, on the same choice
    sigmoid = ffn.MixtureOfExperts(**{**ours.options(), "score": "sigmoid"})
    assert not np.allclose(sigmoid(x), whole, rtol=1e-3)


@pytest.mark.parametrize(("scale", "engaged"), [(0.1, False), (3.0, True)],
                         ids=["clamp-idle", "clamp-engaged"])
def test_deepseek_v4_clamp_matches_deepseek_v4_mlp(scale: float, engaged: bool) -> None:
    config = transformers.DeepseekV4Config(hidden_size=D_MODEL, moe_intermediate_size=D_FF,
                                           num_hidden_layers=1)
    mlp = modeling("deepseek_v4").DeepseekV4MLP(config).double()
    w = set_random(mlp, 100, scale)
    ours = ffn.ClampedSwiGLU.deepseek_v4(w["gate_proj.weight"].T, w["up_proj.weight"].T,
                                         w["down_proj.weight"].T)
    rng = np.random.default_rng(101)
    x, dy = rng.normal(size=(12, D_MODEL)), rng.normal(size=(12, D_MODEL))
    y, dx = ours(x), ours.backward(dy)
    gate_pre, up_pre = x @ ours.W, x @ ours.V
    assert ((gate_pre > 10).any() and (np.abs(up_pre) > 10).any()) == engaged
    whole, dx_t, g = autograd(mlp, x, dy)
    assert_close(y, whole, what="output")
    assert_close(dx, dx_t, what="dL/dx")
    for name, key in (("W", "gate_proj"), ("V", "up_proj"), ("W2", "down_proj")):
        assert_close(ours.grads[name], g[f"{key}.weight"].T, what=name)
    # gpt-oss's clamp (slope 1.702, 1 added to the up branch, limit 7) is another function
    gpt_oss = ffn.ClampedSwiGLU(ours.W, ours.V, ours.W2)
    assert not np.allclose(gpt_oss(x), whole, rtol=1e-3)


def longcat_pair(seed: int, n_experts: int = 6, n_zero: int = 3, top_k: int = 3
                 ) -> tuple[ffn.MixtureOfExperts, object]:
    config = transformers.LongcatFlashConfig(
        hidden_size=D_MODEL, expert_ffn_hidden_size=D_FF, n_routed_experts=n_experts,
        zero_expert_num=n_zero, moe_topk=top_k, num_layers=1, experts_implementation="eager")
    assert config.routed_scaling_factor == 6.0 and config.hidden_act == "silu"
    block = modeling("longcat_flash").LongcatFlashMoE(config).double()
    # small weights: outputs of about 1, as the float32 tolerances assume (the router's
    # rounding scales each expert's share of the output, times LongCat's scale of 6)
    w = set_random(block, seed, 0.25, 0.25)
    bias = np.random.default_rng(seed + 1).normal(0.0, 0.05, n_experts + n_zero)
    with torch.no_grad():
        block.router.e_score_correction_bias.copy_(t64(bias))  # type: ignore[attr-defined]
    gu, down = w["experts.gate_up_proj"], w["experts.down_proj"]
    experts = [ffn.GatedFeedForward(gu[e][:D_FF].T, gu[e][D_FF:].T, down[e].T, variant="swiglu")
               for e in range(n_experts)]  # gate_up_proj's rows past n_experts go unused
    ours = ffn.MixtureOfExperts(w["router.classifier.weight"].T, experts, top_k,
                                normalize=False, bias=bias, scale=6.0, zero_experts=n_zero)
    return ours, block


def test_zero_experts_match_longcat_flash_moe() -> None:
    ours, block = longcat_pair(seed=110)
    rng = np.random.default_rng(111)
    x, dy = rng.normal(size=(2, 8, D_MODEL)), rng.normal(size=(2, 8, D_MODEL))
    y, dx = ours(x), ours.backward(dy)
    _, chosen, weights = ours.route(x)
    zero = chosen >= ours.n_experts
    assert zero.any() and not zero.all(axis=-1).all()  # zero experts chosen, not only them
    rows = x.reshape(-1, D_MODEL)
    with torch.no_grad():  # float64: transformers' experts on ffn's choice and weights
        routed = numpy(block.experts(t64(rows), torch.from_numpy(chosen.reshape(-1, 3)),  # type: ignore[attr-defined]
                                     t64(weights.reshape(-1, 3))))
        logits, w_t, idx_t = block.router(t64(x))  # type: ignore[attr-defined]
    # float32 logits: the rows and the weight cast before the product
    assert_close(numpy(logits), rows @ ours.router, F32_RTOL, F32_RTOL * 10)
    assert_close(y.reshape(-1, D_MODEL), routed, what="ffn against transformers' experts")
    theirs = numpy(idx_t)
    order = np.argsort(theirs, -1)
    np.testing.assert_array_equal(np.take_along_axis(theirs, order, -1),
                                  np.sort(chosen.reshape(-1, 3), -1))
    assert_close(np.take_along_axis(numpy(w_t), order, -1),
                 np.take_along_axis(weights.reshape(-1, 3), np.argsort(chosen.reshape(-1, 3),
                                                                       -1), -1),
                 F32_RTOL, 0.0, "weights")
    whole, dx_t, g = autograd(block, x, dy)
    # The float32 router rounds each weight by up to 6e-8 of it (times LongCat's scale of 6),
    # an error relative to the expert outputs it scales, not to each sum of them: an entry
    # where they cancel is off by far more than 1e-6 of itself. So each array is held to
    # 1e-6 of its own largest entry (the error seen: 2e-7 on outputs of about 2).
    def f32_close(ours: object, theirs: np.ndarray, what: str) -> None:
        assert_close(ours, theirs, F32_RTOL, F32_RTOL * np.abs(theirs).max(), what)

    f32_close(y, whole, "output")
    f32_close(dx, dx_t, "dL/dx")
    f32_close(ours.grads["router"], g["router.classifier.weight"].T, "router")
    for e in range(ours.n_experts):
        gu, down = g["experts.gate_up_proj"][e], g["experts.down_proj"][e]
        for name, theirs_g in (("W", gu[:D_FF].T), ("V", gu[D_FF:].T), ("W2", down.T)):
            f32_close(ours.grads[f"experts.{e}.{name}"], theirs_g, f"{e}.{name}")
    # transformers allocates gate_up_proj for the zero experts too (modeling_longcat_flash.py
    # line 171); no row reaches those matrices: ffn has none, and their gradient is zero
    assert g["experts.gate_up_proj"].shape[0] == ours.n_choices
    assert not g["experts.gate_up_proj"][ours.n_experts:].any()
    # a zero expert adds its weight times the row: leaving it out disagrees
    w_zero = np.sum(weights * zero, axis=-1, keepdims=True)  # (2, 8, 1)
    assert np.abs(w_zero * x).max() > 0.1
    assert not np.allclose(y - w_zero * x, whole, rtol=1e-3)
