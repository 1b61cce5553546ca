"""The knock-out widget's table (widgets/knockout/knockout.json) is current and right.

Current: it records the sha256 of the model file it was computed from, the prompts, the dtype
and TOP; each must be what is installed and what data.py asks for now, or the table is stale
(regenerate: see widgets/knockout/data.py).

Right, recomputed two ways for a sample of rows (every clean run; for each prompt the FFN and
the attention knock-out that lower the clean first token most, layer 0 of each, and two layers
drawn by a seeded generator):

- by ffn.smollm2 again, in this process (the generator's code path, so this checks that the
  committed numbers are what the code gives, not that the code is right);
- by transformers' own LlamaForCausalLM built from the same GGUF (its reader, dequantizer and
  forward), the layer's `mlp` or `self_attn` output replaced by zeros with a forward hook:
  code that shares nothing with ffn.smollm2. Its float32 logits are within F32_RTOL * max
  |logit| of ffn's on clean runs (test_smollm2_transformers.py); a log-softmax moves by at most
  twice the largest change of a logit, so each log-probability must agree within twice that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ffn.smollm2 import cache, gguf_file
from tests.smollm2_files import real_model
from widgets.knockout import data as knockout

TABLE = knockout.load_table()
# ffn against ffn: the same code and weights; only the summation order BLAS picks may differ
# (threads). 1e-5 relative on a probability is a few float32 ulps of a logit (exp amplifies
# a logit's change of d into a relative change of about d).
SAME_CODE_RTOL = 1e-5


def sample() -> list[tuple[str, str, int | None]]:
    """The rows recomputed: (prompt, kind, layer)."""
    rng = np.random.default_rng(42)
    rows: list[tuple[str, str, int | None]] = []
    for e in TABLE["prompts"]:
        rows.append((e["name"], "none", None))
        for kind in knockout.KINDS:
            watch = [r["watch"] for r in e[kind]]
            layers = {int(np.argmin(watch)), 0, *(int(i) for i in rng.choice(30, 2, False))}
            rows += [(e["name"], kind, i) for i in sorted(layers)]
    return rows


SAMPLE = sample()


def test_the_table_is_current() -> None:
    file = gguf_file.model_file()
    assert TABLE["model"] == {"file": file.name, "sha256": cache.sha256(file)}, (
        "knockout.json was made from another model file: regenerate it (widgets/knockout)")
    assert {e["name"]: e["text"] for e in TABLE["prompts"]} == knockout.PROMPTS
    assert (TABLE["top"], TABLE["dtype"]) == (knockout.TOP, knockout.DTYPE)
    model = real_model(knockout.DTYPE)
    assert TABLE["n_layers"] == model.config.n_layers
    for e in TABLE["prompts"]:
        assert e["tokens"] == model.encode(e["text"])


@pytest.mark.parametrize(("prompt", "kind", "layer"), SAMPLE)
def test_rows_recomputed_by_ffn(prompt: str, kind: str, layer: int | None) -> None:
    model = real_model(knockout.DTYPE)
    e = next(e for e in TABLE["prompts"] if e["name"] == prompt)
    patch = None if layer is None else {(knockout.KINDS[kind], layer): 0.0}
    got = knockout.top(model, e["tokens"], patch, None if layer is None
                       else e["clean"]["ids"][0])
    want = knockout.row(TABLE, prompt, kind, layer)
    assert got["ids"] == want["ids"] and got["texts"] == want["texts"]
    np.testing.assert_allclose(got["p"], want["p"], rtol=SAME_CODE_RTOL)
    np.testing.assert_allclose(got["watch"], want["watch"], rtol=SAME_CODE_RTOL)


def hf_knocked_logits(tokens: list[int], kind: str, layer: int | None) -> np.ndarray:
    """transformers' next-token logits after the last token (float32, returned as float64)
    with layer ``layer``'s MLP or attention output zeroed by a forward hook."""
    from tests.test_smollm2_transformers import hf_model, one_torch_thread, torch

    model = hf_model("float32")
    handles = []
    if layer is not None:
        block = model.model.layers[layer]
        zero: Callable[..., Any]
        if kind == "ffn":
            def zero(module: Any, args: Any, output: Any) -> Any:
                return torch.zeros_like(output)
            handles.append(block.mlp.register_forward_hook(zero))
        else:
            def zero(module: Any, args: Any, output: Any) -> Any:
                return (torch.zeros_like(output[0]), *output[1:])
            handles.append(block.self_attn.register_forward_hook(zero))
    try:
        with torch.no_grad(), one_torch_thread():
            logits = model(torch.tensor([tokens])).logits[0, -1].double().numpy()
    finally:
        for h in handles:
            h.remove()
    return logits


@pytest.mark.parametrize(("prompt", "kind", "layer"), SAMPLE)
def test_rows_recomputed_by_transformers(prompt: str, kind: str, layer: int | None) -> None:
    from tests.test_smollm2_transformers import F32_RTOL

    e = next(e for e in TABLE["prompts"] if e["name"] == prompt)
    logits = hf_knocked_logits(e["tokens"], kind, layer)  # (vocab_size,)
    log_p = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
    bound = 2 * F32_RTOL * np.abs(logits).max()
    want = knockout.row(TABLE, prompt, kind, layer)
    assert np.abs(np.log(want["p"]) - log_p[want["ids"]]).max() <= bound, (want, bound)
    watched = e["clean"]["ids"][0]
    assert abs(np.log(want["watch"]) - log_p[watched]) <= bound
    # The top tokens are transformers' top, but for near-ties within the bound.
    top = np.argsort(-log_p, kind="stable")[:knockout.TOP]
    for ours, theirs in zip(want["ids"], top, strict=True):
        assert ours == theirs or abs(log_p[ours] - log_p[theirs]) <= 2 * bound
