"""The 2025 routers against transformers' own blocks, built on the CPU from tiny configs with
the same weights (nothing downloaded): `ffn.InputScaledMoE` against `Llama4TextMoe`,
`ffn.GatedSharedMoE` against `Qwen2MoeSparseMoeBlock`, `ffn.MixtureOfExperts` against
`Qwen3MoeSparseMoeBlock` (``norm_topk_prob`` both ways) and `ffn.RouterBiasMoE` with
`ffn.ClampedSwiGLU` experts against `GptOssMLP`, the clamp engaged and not. Forward, and the
gradients by autograd.

Float64 throughout, but three routers round to float32 inside: Llama4Router takes its sigmoid
of `router_scores.float()`, the Qwen routers their softmax with `dtype=torch.float`. There the
whole block is compared at rtol 1e-6 (float32's relative precision is 6e-8) plus an atol of
1e-7 on outputs and 1e-6 on gradients: the rounding is relative to the scores, not to each
entry, and reaches every entry as an absolute error (up to about 2e-7 here), so an entry near
zero is off by far more than 1e-6 of itself (a Qwen3 expert gradient of 3e-5 by 1e-3 of it).
The float64 parts are held at the tight tolerance of tests/test_torch_reference.py: the
logits, the experts run with ffn's scores, the shared expert and its gate. gpt-oss's router
stays in the module's dtype: its whole block, forward and gradients, is held at the tight
tolerance.

torch and transformers are test-only here; CI sets FFN_REQUIRE_TORCH=1, under which their
absence fails these tests instead of skipping them.
"""

from __future__ import annotations

import importlib
import os
import types

import numpy as np
import pytest

import ffn
from tests.test_torch_reference import ATOL, RTOL, import_or_skip

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach the Hub
torch = import_or_skip("torch")
transformers = import_or_skip("transformers")

D_MODEL, D_FF, SHARED_D_FF = 16, 6, 10
F32_RTOL = 1e-6  # a router rounding to float32 (6e-8 relative) inside a float64 block
F32_ATOL, F32_GRAD_ATOL = 1e-7, 1e-6  # that rounding as an absolute error on small entries


def modeling(model: str) -> types.ModuleType:
    return importlib.import_module(f"transformers.models.{model}.modeling_{model}")


def numpy(t: object) -> np.ndarray:
    return t.detach().numpy().copy()  # type: ignore[attr-defined,no-any-return]


def t64(a: np.ndarray) -> object:
    return torch.from_numpy(np.array(a))  # a writable copy: ffn's arrays are read-only


def rows(seed: int, n: int = 10) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, D_MODEL))


def swiglu(seed: int, d_ff: int) -> ffn.GatedFeedForward:
    return ffn.GatedFeedForward.random(D_MODEL, d_ff, seed=seed)


def copy_mlp(mlp: object, e: ffn.GatedFeedForward) -> None:
    """A gate_proj/up_proj/down_proj MLP (Linear weights are (out, in)) set to ``e``."""
    mlp.gate_proj.weight.copy_(t64(e.W.T))  # type: ignore[attr-defined]
    mlp.up_proj.weight.copy_(t64(e.V.T))  # type: ignore[attr-defined]
    mlp.down_proj.weight.copy_(t64(e.W2.T))  # type: ignore[attr-defined]


def autograd(block: object, x: np.ndarray, dy: np.ndarray, call: object = None
             ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``block``'s output, dL/dx and parameter gradients for L = sum(output * dy)."""
    xt = t64(x).requires_grad_(True)
    out = (call or block)(xt)  # type: ignore[operator]
    y = out[0] if isinstance(out, tuple) else out
    y.backward(t64(dy).reshape(y.shape))
    grads = {n: numpy(p.grad) for n, p in block.named_parameters()}  # type: ignore[attr-defined]
    return numpy(y).reshape(dy.shape), numpy(xt.grad).reshape(dy.shape), grads


def assert_close(ours: object, theirs: object, rtol: float = RTOL, atol: float = ATOL,
                 what: str = "") -> None:
    assert ours is not None
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=what)


# ---------------------------------------------------------------- Llama 4


def llama4_pair(n_experts: int, top_k: int, seed: int) -> tuple[ffn.InputScaledMoE, object]:
    ours = ffn.InputScaledMoE(
        ffn.MixtureOfExperts.random(D_MODEL, D_FF, n_experts, seed=seed).router,
        [swiglu(seed + 1 + i, D_FF) for i in range(n_experts)], top_k,
        shared_experts=[swiglu(seed + 99, D_FF)])
    config = transformers.Llama4TextConfig(
        hidden_size=D_MODEL, intermediate_size=D_FF, num_local_experts=n_experts,
        num_experts_per_tok=top_k, hidden_act="silu")
    block = modeling("llama4").Llama4TextMoe(config).double()
    with torch.no_grad():
        block.router.weight.copy_(t64(ours.router.T))  # (n_experts, d_model)
        for i, e in enumerate(ours.experts):  # gate_up_proj[i]: (d_model, 2 d_ff), gate first
            assert isinstance(e, ffn.GatedFeedForward)
            block.experts.gate_up_proj[i].copy_(t64(np.concatenate([e.W, e.V], axis=1)))
            block.experts.down_proj[i].copy_(t64(e.W2))  # (d_ff, d_model)
        shared = ours.shared_experts[0]
        assert isinstance(shared, ffn.GatedFeedForward)
        copy_mlp(block.shared_expert, shared)
    return ours, block


@pytest.mark.parametrize(("n_experts", "top_k"), [(4, 1), (6, 2)], ids=["4-top1", "6-top2"])
def test_input_scaled_moe_matches_llama4_text_moe(n_experts: int, top_k: int) -> None:
    ours, block = llama4_pair(n_experts, top_k, seed=30)
    x, dy = rows(31), rows(32)
    y, dx = ours(x), ours.backward(dy)
    _, chosen, s = ours.route(x)
    with torch.no_grad():
        scores, logits = block.router(t64(x))  # type: ignore[attr-defined]
        # float64 logits; scores: sigmoid of the chosen in float32, exactly 0 for the others
        assert_close(numpy(logits), x @ ours.router)
        dense = np.zeros((len(x), n_experts))  # ffn's scores, scattered as transformers does
        np.put_along_axis(dense, chosen, s, axis=-1)
        assert np.array_equal(numpy(scores) == 0, dense == 0)
        assert_close(numpy(scores), dense, rtol=F32_RTOL, atol=0.0)
        # the float64 parts: their experts on the rows scaled by ffn's scores, their shared one
        routed_in = t64(np.concatenate([x * dense[:, [i]] for i in range(n_experts)]))
        routed = numpy(block.experts(routed_in)).reshape(n_experts, len(x), D_MODEL).sum(0)  # type: ignore[attr-defined]
        shared = numpy(block.shared_expert(t64(x)))  # type: ignore[attr-defined]
    assert_close(y, routed + shared, what="ffn against transformers' float64 parts")
    # the sigmoid scales the input: scaling the output instead disagrees with transformers
    output_scaled = ffn.MixtureOfExperts(ours.router, list(ours.experts), top_k, False,
                                         score="sigmoid", shared_experts=list(ours.shared_experts))
    assert not np.allclose(output_scaled(x), routed + shared, rtol=1e-3)
    # The whole block and its gradients: the router's float32 sigmoid (6e-8 relative on
    # scores of about 0.5, on expert inputs of about 1) bounds the agreement.
    whole, dx_t, g = autograd(block, x, dy)
    assert_close(y, whole, F32_RTOL, F32_ATOL, "output")
    assert_close(dx, dx_t, F32_RTOL, F32_GRAD_ATOL, "dL/dx")
    assert_close(ours.grads["router"], g["router.weight"].T, F32_RTOL, F32_GRAD_ATOL, "router")
    for i in range(n_experts):
        gu, down = g["experts.gate_up_proj"][i], g["experts.down_proj"][i]
        for name, theirs in (("W", gu[:, :D_FF]), ("V", gu[:, D_FF:]), ("W2", down)):
            assert_close(ours.grads[f"experts.{i}.{name}"], theirs, F32_RTOL, F32_GRAD_ATOL,
                         name)
    for name, key in (("W", "gate_proj"), ("V", "up_proj"), ("W2", "down_proj")):
        # the shared expert never sees the router: float64 alone
        assert_close(ours.grads[f"shared_experts.0.{name}"],
                     g[f"shared_expert.{key}.weight"].T, what=name)


# ---------------------------------------------------------------- Qwen2-MoE and Qwen3-MoE


def qwen_block(moe: ffn.MixtureOfExperts, model: str) -> object:
    """transformers' Qwen2/Qwen3 sparse block, float64, with ``moe``'s routed weights."""
    kw = {"hidden_size": D_MODEL, "moe_intermediate_size": D_FF, "num_experts": moe.n_experts,
          "num_experts_per_tok": moe.top_k, "norm_topk_prob": moe.normalize,
          "hidden_act": "silu", "experts_implementation": "eager"}
    if model == "qwen2_moe":
        config = transformers.Qwen2MoeConfig(shared_expert_intermediate_size=SHARED_D_FF, **kw)
        block = modeling(model).Qwen2MoeSparseMoeBlock(config)
    else:
        config = transformers.Qwen3MoeConfig(**kw)
        block = modeling(model).Qwen3MoeSparseMoeBlock(config)
    block = block.double()
    with torch.no_grad():
        block.gate.weight.copy_(t64(moe.router.T))
        for i, e in enumerate(moe.experts):  # gate_up_proj[i]: W then V stacked, (2 d_ff, d)
            assert isinstance(e, ffn.GatedFeedForward)
            block.experts.gate_up_proj[i].copy_(t64(np.concatenate([e.W.T, e.V.T])))
            block.experts.down_proj[i].copy_(t64(e.W2.T))
    return block


def routed_grads_match(moe: ffn.MixtureOfExperts, grads: dict[str, np.ndarray],
                       g: dict[str, np.ndarray], rtol: float, atol: float) -> None:
    assert_close(grads["router"], g["gate.weight"].T, rtol, atol, "router")
    for i in range(moe.n_experts):
        gu, down = g["experts.gate_up_proj"][i], g["experts.down_proj"][i]
        for name, theirs in (("W", gu[:D_FF].T), ("V", gu[D_FF:].T), ("W2", down.T)):
            assert_close(grads[f"experts.{i}.{name}"], theirs, rtol, atol, f"{i}.{name}")


def routed_parts(moe: ffn.MixtureOfExperts, block: object, x: np.ndarray) -> np.ndarray:
    """transformers' experts run on ffn's choice and weights, float64; its router's choice and
    float32 weights checked against ffn's on the way."""
    _, chosen, weights = moe.route(x)
    with torch.no_grad():
        logits, scores, indices = block.gate(t64(x))  # type: ignore[attr-defined]
        assert_close(numpy(logits), x @ moe.router)
        np.testing.assert_array_equal(np.sort(numpy(indices), -1), np.sort(chosen, -1))
        # the sort only aligns the two orders within the top-k (torch.topk lists by score, ffn
        # too, but the sets are what is compared); these logits have no ties
        order = np.argsort(numpy(indices), -1)
        assert_close(np.take_along_axis(numpy(scores), order, -1),
                     np.take_along_axis(weights, np.argsort(chosen, -1), -1), F32_RTOL, 0.0)
        return numpy(block.experts(t64(x), torch.from_numpy(chosen),  # type: ignore[attr-defined]
                                   t64(weights)))


@pytest.mark.parametrize("normalize", [False, True], ids=["raw", "norm_topk_prob"])
def test_gated_shared_moe_matches_qwen2_moe_sparse_block(normalize: bool) -> None:
    base = ffn.MixtureOfExperts.random(D_MODEL, D_FF, 8, top_k=3, variant="swiglu", seed=40)
    moe = ffn.MixtureOfExperts(base.router, list(base.experts), 3, normalize)
    gate = np.random.default_rng(41).normal(size=(D_MODEL, 1))
    ours = ffn.GatedSharedMoE(moe, swiglu(42, SHARED_D_FF), gate)
    block = qwen_block(moe, "qwen2_moe")
    with torch.no_grad():
        copy_mlp(block.shared_expert, ours.shared_experts[0])  # type: ignore[attr-defined,arg-type]
        block.shared_expert_gate.weight.copy_(t64(gate.T))  # type: ignore[attr-defined]
    x, dy = rows(43), rows(44)
    y, dx = ours(x.reshape(2, 5, D_MODEL)).reshape(-1, D_MODEL), ours.backward(
        dy.reshape(2, 5, D_MODEL)).reshape(-1, D_MODEL)
    routed = routed_parts(moe, block, x)
    with torch.no_grad():  # sigmoid(x @ gate) * shared(x), float64
        g_t = torch.sigmoid(block.shared_expert_gate(t64(x)))  # type: ignore[attr-defined]
        shared = numpy(g_t * block.shared_expert(t64(x)))  # type: ignore[attr-defined]
    assert_close(y, routed + shared, what="ffn against transformers' float64 parts")
    ungated = ffn.MixtureOfExperts(moe.router, list(moe.experts), 3, normalize,
                                   shared_experts=list(ours.shared_experts))
    assert not np.allclose(ungated(x), routed + shared, rtol=1e-3)  # the gate matters
    whole, dx_t, g = autograd(block, x.reshape(2, 5, D_MODEL), dy)
    assert_close(y, whole, F32_RTOL, F32_ATOL, "output")  # the float32 softmax
    assert_close(dx, dx_t, F32_RTOL, F32_GRAD_ATOL, "dL/dx")
    routed_grads_match(moe, ours.grads, g, F32_RTOL, F32_GRAD_ATOL)
    # the shared expert and its gate never see the router: float64 alone
    assert_close(ours.grads["shared_gate"], g["shared_expert_gate.weight"].T, what="gate")
    for name, key in (("W", "gate_proj"), ("V", "up_proj"), ("W2", "down_proj")):
        assert_close(ours.grads[f"shared_experts.0.{name}"], g[f"shared_expert.{key}.weight"].T,
                     what=name)


def test_ties_choose_other_experts_than_transformers() -> None:
    # ffn breaks a tie for the lower index; torch.topk leaves its tie order unspecified. Two
    # ways to tie: a zero router (Qwen3-MoE's and gpt-oss's router modules start from
    # torch.zeros), and logits distinct in float64 whose float32 softmax (Qwen's) rounds equal.
    base = ffn.MixtureOfExperts.random(D_MODEL, D_FF, 8, top_k=2, variant="swiglu", seed=70)
    moe = ffn.MixtureOfExperts(np.zeros((D_MODEL, 8)), list(base.experts), 2)
    block = qwen_block(moe, "qwen3_moe")
    x = rows(71, n=3)
    _, chosen, weights = moe.route(x)
    np.testing.assert_array_equal(chosen, [[0, 1]] * 3)
    with torch.no_grad():
        _, scores, indices = block.gate(t64(x))  # type: ignore[attr-defined]
        theirs = numpy(block(t64(x[None])))[0]  # type: ignore[operator]
    # what torch 2.13 chose on this CPU (AMD EPYC); the same weights, 1/2 each, as ffn's
    np.testing.assert_array_equal(numpy(indices), [[6, 5]] * 3)
    np.testing.assert_array_equal(numpy(scores), weights)
    expected = (moe.experts[6](x) + moe.experts[5](x)) / 2  # their choice, in ffn's experts
    assert_close(theirs, expected, what="transformers on its tied choice")
    assert np.abs(moe(x) - theirs).max() > 0.1  # so the two blocks differ, by far
    # top-1 of the logits (1e-9, 0, -1, ...): ffn takes expert 0, the float64 maximum; in
    # float32 the two softmax scores are equal and Qwen's top-k takes expert 1
    router = np.zeros((D_MODEL, 8))
    router[0] = [1e-9, 0.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0]
    top1 = ffn.MixtureOfExperts(router, list(base.experts), 1)
    row = np.eye(1, D_MODEL)  # (1, d_model): logits = router[0]
    p32 = torch.softmax(t64(row @ router), dim=-1, dtype=torch.float)
    assert p32[0, 0] == p32[0, 1]
    with torch.no_grad():
        indices = qwen_block(top1, "qwen3_moe").gate(t64(row))[2]  # type: ignore[attr-defined]
    assert (top1.route(row)[1].item(), numpy(indices).item()) == (0, 1)


def test_qwen_moe_configs_default_to_unnormalised_top_k() -> None:
    # transformers' default, which the released Qwen3-30B-A3B config.json overrides
    assert transformers.Qwen3MoeConfig().norm_topk_prob is False
    assert transformers.Qwen2MoeConfig().norm_topk_prob is False


@pytest.mark.parametrize("normalize", [False, True], ids=["default", "norm_topk_prob"])
def test_moe_matches_qwen3_moe_sparse_block(normalize: bool) -> None:
    base = ffn.MixtureOfExperts.random(D_MODEL, D_FF, 8, top_k=4, variant="swiglu", seed=50)
    moe = ffn.MixtureOfExperts(base.router, list(base.experts), 4, normalize)
    block = qwen_block(moe, "qwen3_moe")
    x, dy = rows(51), rows(52)
    y, dx = moe(x), moe.backward(dy)
    assert_close(y, routed_parts(moe, block, x), what="ffn against transformers' experts")
    whole, dx_t, g = autograd(block, x.reshape(2, 5, D_MODEL), dy)
    assert_close(y, whole, F32_RTOL, F32_ATOL, "output")  # the float32 softmax
    assert_close(dx, dx_t, F32_RTOL, F32_GRAD_ATOL, "dL/dx")
    routed_grads_match(moe, moe.grads, g, F32_RTOL, F32_GRAD_ATOL)
    other = ffn.MixtureOfExperts(moe.router, list(moe.experts), 4, not normalize)
    assert not np.allclose(other(x), whole, rtol=1e-3)  # the flag changes the answer


# ---------------------------------------------------------------- gpt-oss


def gpt_oss_pair(scale: float, seed: int) -> tuple[ffn.RouterBiasMoE, object]:
    n_experts, top_k = 6, 4
    config = transformers.GptOssConfig(
        hidden_size=D_MODEL, intermediate_size=D_FF, num_local_experts=n_experts,
        num_experts_per_tok=top_k, experts_implementation="eager")
    assert (config.swiglu_alpha, config.swiglu_limit) == (1.702, 7.0)
    block = modeling("gpt_oss").GptOssMLP(config).double()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in block.named_parameters():
            size = scale if "gate_up_proj" in name else 0.5
            p.copy_(t64(rng.normal(0.0, size, tuple(p.shape))))
    w = {n: numpy(p) for n, p in block.named_parameters()}
    experts = [ffn.ClampedSwiGLU.from_fused(w["experts.gate_up_proj"][e],
                                            w["experts.gate_up_proj_bias"][e],
                                            w["experts.down_proj"][e],
                                            w["experts.down_proj_bias"][e])
               for e in range(n_experts)]
    ours = ffn.RouterBiasMoE(w["router.weight"].T, w["router.bias"], experts, top_k)
    return ours, block


@pytest.mark.parametrize(("scale", "engaged"), [(0.1, False), (2.0, True)],
                         ids=["clamp-idle", "clamp-engaged"])
def test_router_bias_moe_matches_gpt_oss_mlp_in_float64(scale: float, engaged: bool) -> None:
    ours, block = gpt_oss_pair(scale, seed=60)
    x, dy = rows(61), rows(62)
    y, dx = ours(x), ours.backward(dy)
    _, chosen, weights = ours.route(x)
    clamped = 0  # pre-activations past the limit on the rows routed to each expert: in the sum
    for i, e in enumerate(ours.experts):
        t = e.forward_trace(x[(chosen == i).any(axis=-1)])
        clamped += int((t.gate_pre > 7).sum() + (np.abs(t.up - 1) >= 7).sum())
    assert (clamped > 0) == engaged, clamped
    with torch.no_grad():  # the router: float64 logits with the bias, top-4, their softmax
        logits, scores, indices = block.router(t64(x))  # type: ignore[attr-defined]
    assert_close(numpy(logits), x @ ours.router + ours.router_bias)
    np.testing.assert_array_equal(np.sort(numpy(indices), -1), np.sort(chosen, -1))
    order = np.argsort(numpy(indices), -1)
    assert_close(np.take_along_axis(numpy(scores), order, -1),
                 np.take_along_axis(weights, np.argsort(chosen, -1), -1))
    whole, dx_t, g = autograd(block, x.reshape(2, 5, D_MODEL), dy)
    assert_close(y, whole, what="output")
    assert_close(dx, dx_t, what="dL/dx")
    assert_close(ours.grads["router"], g["router.weight"].T, what="router")
    assert_close(ours.grads["router_bias"], g["router.bias"], what="router_bias")
    for e in range(ours.n_experts):
        gu, gb = g["experts.gate_up_proj"][e], g["experts.gate_up_proj_bias"][e]
        theirs = {"W": gu[:, ::2], "V": gu[:, 1::2], "b": gb[::2], "c": gb[1::2],
                  "W2": g["experts.down_proj"][e], "b2": g["experts.down_proj_bias"][e]}
        for name, grad in theirs.items():
            assert_close(ours.grads[f"experts.{e}.{name}"], grad, what=f"{e}.{name}")
    assert np.abs(ours.grads["router_bias"]).max() > 1e-3  # the bias is trained: not zero
    # the bias moves the choice: without it some row of these chooses otherwise
    plain = ffn.MixtureOfExperts(ours.router, list(ours.experts), 4)
    assert not np.array_equal(np.sort(plain.route(x)[1], -1), np.sort(chosen, -1))
