"""Time ffn.FeedForward (reference) and ffn.fast.FeedForward against the bare GEMMs and PyTorch.

    python scripts/bench.py                  # every row (3-4 minutes)
    python scripts/bench.py --quick          # fewer repeats (about 1 minute)
    python scripts/bench.py --rows 2048,float32 --rows 128,gelu_tanh,fwd

Shapes are GPT-2 small's block: d_model = 768, d_ff = 3072, for N = 1, 128 and
2048 tokens, in float32 and float64, with the tanh GELU (``gelu_tanh``) and the
exact one (``gelu``), forward only (``fwd``) and forward plus backward
(``fwd+bwd``). For each row four things are timed, interleaved (the order
rotates every repeat, so a burst of machine noise hits all of them alike):

- reference: ``ffn.FeedForward``, the plain code the chapters show: ``block(x)``, plus
  ``block.backward(dy)`` for fwd+bwd;
- fast: the same with ``ffn.fast.FeedForward``, the speed path (the "ffn" of the targets);
- GEMMs: only the matrix products the layer must do, into preallocated
  outputs (2 forward; 4 more backward): the physical limit on this machine;
- PyTorch: ``torch.nn.Linear`` modules and ``torch.nn.functional.gelu``
  (``approximate="tanh"`` / ``"none"``), same shapes, dtype and thread count
  (forward under ``torch.inference_mode()``; fwd+bwd with autograd,
  gradients for the weights, biases and x). "n/a" when torch is not installed.

Each timed run directly follows an untimed run of the same kind (steady use):
numpy's OpenBLAS and PyTorch's OpenMP keep their worker threads spinning for
a while after a call, which would otherwise slow down whichever ran next.

Reported: the median times, GFLOP/s of the fast block from ``ffn.count_flops`` (matrix
products only), and the median over repeats of the per-repeat ratios reference / GEMMs,
fast / GEMMs and fast / PyTorch. Not part of the test run.

A second table times a mixture of experts' forward at N = 2048 tokens, float32, SwiGLU
experts, in Mixtral's shape (8 experts, top-2) and DeepSeek-V3's (256 experts, top-8, one
shared expert, sigmoid scores with a choice bias, 8 groups of which 4 are kept, scale 2.5):
``ffn.MixtureOfExperts`` (the loop over experts), ``ffn.GroupedExperts`` on it (rows sorted by
expert, one pass per expert over its segment) and the grouped forward written in PyTorch, with
one ``@`` per segment and with one ``torch.nn.functional.grouped_mm`` call a product.
``--moe-divide D`` divides d_model and d_ff by D (default 16: the full shapes need 5.6 GB and
45 GB of float32 weights and minutes a forward on a small machine); the table says which
shapes ran. ``--moe`` runs only this table, ``--no-moe`` skips it.

A third table runs SmolLM2-135M (``ffn.smollm2``, float32) on a 32-token prompt against
transformers' ``LlamaForCausalLM`` built from the same GGUF (dequantized, dense, float32), same
threads, interleaved; and, each in a fresh process (so its peak memory is its own), a cold
load (read the GGUF, dequantize, write the cache, in an empty cache folder) and a warm load
(memory-map the cache), each followed by one forward, with the process's peak resident memory.
Goals: forward at most 1.5 times PyTorch's time; peak memory at most 1 GiB. ``--smollm2`` runs
only this table, ``--no-smollm2`` skips it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import ffn
import ffn.fast.blocks

try:
    import torch
except ImportError:  # the script runs without torch and prints "n/a"
    torch = None

D_MODEL, D_FF = 768, 3072
TOKENS = (1, 128, 2048)
DTYPES = ("float32", "float64")
ACTIVATIONS = ("gelu_tanh", "gelu")
PASSES = ("fwd", "fwd+bwd")

# At N = 2048: (activation, dtype) -> largest acceptable ffn / GEMMs ratio.
TARGETS = {
    ("gelu_tanh", "float32"): 1.10,
    ("gelu", "float32"): 1.30,
    ("gelu_tanh", "float64"): 1.15,
    ("gelu", "float64"): 1.30,
}


@dataclass(frozen=True)
class Row:
    n_tokens: int
    dtype: str
    activation: str
    passes: str

    @property
    def label(self) -> str:
        return f"N={self.n_tokens} {self.dtype} {self.activation} {self.passes}"

    def matches(self, tokens: list[str]) -> bool:
        fields = {*self.label.split(), str(self.n_tokens)}
        return all(token in fields for token in tokens)


@dataclass(frozen=True)
class Result:
    row: Row
    ref_s: float  # the reference ffn.FeedForward
    ref_vs_gemm: float
    ffn_s: float  # ffn.fast.FeedForward
    gemm_s: float
    torch_s: float | None
    vs_gemm: float
    vs_torch: float | None
    repeats: int


def blas_threads() -> tuple[int, str]:
    """Threads numpy's BLAS uses, and how that was found out."""
    try:
        from threadpoolctl import threadpool_info  # type: ignore[import-not-found]

        for info in threadpool_info():
            if info.get("user_api") == "blas":
                return int(info["num_threads"]), "threadpoolctl"
    except ImportError:
        pass
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var]), var
    return os.cpu_count() or 1, "os.cpu_count()"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "n/a"


def make_cases(row: Row) -> dict[str, Callable[[], object] | None]:
    """The three timed callables of a row (PyTorch None without torch)."""
    dtype = np.dtype(row.dtype)
    rng = np.random.default_rng(0)
    block = ffn.FeedForward.random(D_MODEL, D_FF, activation=row.activation, dtype=dtype)
    b1 = (0.1 * rng.standard_normal(D_FF)).astype(dtype)
    b2 = (0.1 * rng.standard_normal(D_MODEL)).astype(dtype)
    reference = ffn.FeedForward(block.W1, b1, block.W2, b2, activation=row.activation)
    block = ffn.fast.FeedForward(block.W1, b1, block.W2, b2, activation=row.activation)
    W1, W2 = block.W1, block.W2
    x = rng.standard_normal((row.n_tokens, D_MODEL)).astype(dtype)
    dy = rng.standard_normal((row.n_tokens, D_MODEL)).astype(dtype)
    backward = row.passes == "fwd+bwd"

    def run_ffn() -> object:
        y = block(x)
        return block.backward(dy) if backward else y

    def run_reference() -> object:
        y = reference(x)
        return reference.backward(dy) if backward else y

    # The matrix products alone, into preallocated outputs.
    H = np.empty((row.n_tokens, D_FF), dtype=dtype)
    Y = np.empty((row.n_tokens, D_MODEL), dtype=dtype)
    dW1, dW2 = np.empty_like(W1), np.empty_like(W2)
    dH, dX = np.empty_like(H), np.empty_like(Y)

    def run_gemms() -> object:
        np.matmul(x, W1, out=H)
        np.matmul(H, W2, out=Y)
        if backward:
            np.matmul(H.T, dy, out=dW2)
            np.matmul(dy, W2.T, out=dH)
            np.matmul(x.T, dH, out=dW1)
            np.matmul(dH, W1.T, out=dX)
        return Y

    cases: dict[str, Callable[[], object] | None] = {
        "ffn": run_ffn,
        "reference": run_reference,
        "gemm": run_gemms,
        "torch": None,
    }
    if torch is None:
        return cases

    tdtype = getattr(torch, row.dtype)
    l1 = torch.nn.Linear(D_MODEL, D_FF, dtype=tdtype)
    l2 = torch.nn.Linear(D_FF, D_MODEL, dtype=tdtype)
    with torch.no_grad():  # the same weights (torch stores W transposed)
        l1.weight.copy_(torch.from_numpy(W1.T.copy()))
        l1.bias.copy_(torch.from_numpy(b1))
        l2.weight.copy_(torch.from_numpy(W2.T.copy()))
        l2.bias.copy_(torch.from_numpy(b2))
    approximate = "tanh" if row.activation == "gelu_tanh" else "none"
    xt = torch.from_numpy(x.copy())
    dyt = torch.from_numpy(dy)
    params = [l1.weight, l1.bias, l2.weight, l2.bias]

    def torch_forward(inp: Any) -> Any:
        return l2(torch.nn.functional.gelu(l1(inp), approximate=approximate))

    if backward:
        xg = xt.clone().requires_grad_(True)

        def run_torch() -> object:
            for p in params:
                p.grad = None
            xg.grad = None
            torch_forward(xg).backward(dyt)
            return xg.grad

    else:

        def run_torch() -> object:
            with torch.inference_mode():
                return torch_forward(xt)

    check_against_torch(row, run_ffn(), run_torch())
    cases["torch"] = run_torch
    return cases


def check_against_torch(row: Row, ours: Any, theirs: Any) -> None:
    """Stop if ffn and PyTorch do not compute the same thing."""
    theirs_np = theirs.detach().numpy()
    scale = float(np.abs(theirs_np).max()) or 1.0
    error = float(np.abs(ours - theirs_np).max()) / scale
    limit = 1e-4 if row.dtype == "float32" else 1e-10
    if not error <= limit:
        sys.exit(f"{row.label}: ffn and PyTorch differ by {error:.2e} (relative)")


def interleaved(active: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Each callable's times over ``repeats`` rounds, the order rotating every round."""
    names = list(active)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        order = names[r % len(names):] + names[: r % len(names)]  # rotate
        for name in order:
            fn = active[name]
            # Untimed first: each timed run follows a run of its own kind, as in
            # steady use. After a call, OpenBLAS's and PyTorch's worker threads
            # keep spinning for a while, and would slow whatever ran next.
            fn()
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def time_row(row: Row, repeats: int | None, budget_s: float, min_repeats: int) -> Result:
    cases = make_cases(row)
    active = {name: fn for name, fn in cases.items() if fn is not None}
    for fn in active.values():  # warm up: caches, thread pools, allocator
        fn()
    first = {}
    for name, fn in active.items():
        start = time.perf_counter()
        fn()
        first[name] = time.perf_counter() - start
    if repeats is None:
        per_repeat = 2 * sum(first.values())
        repeats = max(min_repeats, min(500, math.ceil(budget_s / per_repeat)))

    times = interleaved(active, repeats)

    def ratio(other: str) -> float:
        return statistics.median(a / b for a, b in zip(times["ffn"], times[other], strict=True))

    has_torch = "torch" in times
    return Result(
        row=row,
        ref_s=statistics.median(times["reference"]),
        ref_vs_gemm=statistics.median(
            a / b for a, b in zip(times["reference"], times["gemm"], strict=True)),
        ffn_s=statistics.median(times["ffn"]),
        gemm_s=statistics.median(times["gemm"]),
        torch_s=statistics.median(times["torch"]) if has_torch else None,
        vs_gemm=ratio("gemm"),
        vs_torch=ratio("torch") if has_torch else None,
        repeats=repeats,
    )


@dataclass(frozen=True)
class MoeShape:
    name: str
    d_model: int  # the model's; the bench divides it by --moe-divide
    d_ff: int  # one expert's width, likewise
    n_experts: int
    top_k: int
    deepseek: bool  # DeepSeek-V3's router and one shared expert, else Mixtral's router


MOE_SHAPES = (MoeShape("Mixtral-like", 4096, 14336, 8, 2, deepseek=False),
              MoeShape("DeepSeek-like", 7168, 2048, 256, 8, deepseek=True))
MOE_TOKENS = 2048


def make_moe(shape: MoeShape, divide: int) -> ffn.MixtureOfExperts:
    """A float32 SwiGLU mixture of ``shape``, d_model and d_ff divided by ``divide``."""
    d_model, d_ff = shape.d_model // divide, shape.d_ff // divide
    f32 = np.float32
    moe = ffn.MixtureOfExperts.random(d_model, d_ff, shape.n_experts, shape.top_k, "swiglu",
                                      seed=0, dtype=f32)
    if not shape.deepseek:
        return moe
    bias = (0.01 * np.random.default_rng(1).standard_normal(shape.n_experts)).astype(f32)
    shared = ffn.GatedFeedForward.random(d_model, d_ff, "swiglu", seed=2, dtype=f32)
    return ffn.MixtureOfExperts(moe.router, list(moe.experts), shape.top_k, score="sigmoid",
                                bias=bias, n_groups=8, top_groups=4, scale=2.5,
                                shared_experts=[shared])


def torch_grouped(moe: ffn.MixtureOfExperts, one_call: bool) -> Callable[[Any], Any]:
    """``ffn.GroupedExperts(moe)``'s forward written in PyTorch, on copies of the weights.

    ``one_call``: each of the three products for all experts' segments in one call of
    ``torch.nn.functional.grouped_mm`` (a grouped GEMM, as ``transformers`` calls it), else
    one ``@`` per segment, as ``ffn.GroupedExperts`` does.
    """
    def t(a: Any) -> Any:
        return torch.from_numpy(np.array(a))

    blocks = [*moe.experts, *moe.shared_experts]
    assert all(isinstance(b, ffn.GatedFeedForward) and b.variant == "swiglu" and b.b is None
               and b.c is None and b.b2 is None for b in blocks)
    W, V, W2 = ([t(getattr(b, name)) for b in blocks] for name in ("W", "V", "W2"))
    n_experts, top_k, silu = moe.n_experts, moe.top_k, torch.nn.functional.silu
    stacked = [torch.stack(w[:n_experts]) for w in (W, V, W2)]  # (n_experts, ., .) each
    router, bias = t(moe.router), None if moe.bias is None else t(moe.bias)

    def forward(x: Any) -> Any:
        n = x.shape[0]
        logits = x @ router
        p = logits.softmax(-1) if moe.score == "softmax" else logits.sigmoid()
        choice = p if bias is None else p + bias
        if moe.n_groups > 1:
            grouped = choice.view(n, moe.n_groups, -1)
            group_score = grouped.topk(2, dim=-1).values.sum(-1)
            kept = group_score.topk(moe.top_groups, dim=-1).indices
            mask = torch.zeros_like(group_score, dtype=torch.bool).scatter_(1, kept, True)
            choice = grouped.masked_fill(~mask[..., None], float("-inf")).view(n, -1)
        chosen = choice.topk(top_k, dim=-1).indices  # (N, top_k)
        weights = p.gather(1, chosen)
        if moe.normalize:
            weights = weights / weights.sum(-1, keepdim=True)
        weights = weights * moe.scale
        flat = chosen.flatten()
        order = torch.argsort(flat, stable=True)  # the pairs by expert
        counts = torch.bincount(flat, minlength=n_experts)
        rows = order // top_k
        xs = x[rows]
        if one_call:
            ends = torch.cumsum(counts, 0, dtype=torch.int32)  # each segment's end
            gate, up = (torch.nn.functional.grouped_mm(xs, w, offs=ends) for w in stacked[:2])
            out = torch.nn.functional.grouped_mm(silu(gate) * up, stacked[2], offs=ends)
        else:
            out = torch.empty_like(xs)
            start = 0
            for i, count in enumerate(counts.tolist()):  # one segment an expert
                seg = xs[start:start + count]
                if count:
                    out[start:start + count] = (silu(seg @ W[i]) * (seg @ V[i])) @ W2[i]
                start += count
        y = torch.zeros_like(x).index_add_(0, rows, weights.flatten()[order, None] * out)
        for j in range(n_experts, len(blocks)):  # shared experts, weight 1
            y += (silu(x @ W[j]) * (x @ V[j])) @ W2[j]
        return y

    return forward


def time_moe(shape: MoeShape, divide: int, repeats: int) -> dict[str, float | None]:
    """Median times of the loop, the grouped forward and PyTorch's, and the median ratios."""
    moe = make_moe(shape, divide)
    grouped = ffn.GroupedExperts(moe)
    x = np.random.default_rng(3).standard_normal((MOE_TOKENS, moe.d_model)).astype(np.float32)
    if not np.array_equal(grouped(x), moe(x)):
        sys.exit(f"{shape.name}: GroupedExperts and the loop differ")
    active: dict[str, Callable[[], object]] = {"loop": lambda: moe(x),
                                               "grouped": lambda: grouped(x)}
    if torch is not None:
        xt = torch.from_numpy(x.copy())
        for name, one_call in (("torch", False), ("grouped_mm", True)):
            forward = torch_grouped(moe, one_call)

            def run_torch(forward: Callable[[Any], Any] = forward) -> object:
                with torch.inference_mode():
                    return forward(xt)

            ours, theirs = grouped(x), run_torch().numpy()
            error = float(np.abs(ours - theirs).max()) / (float(np.abs(theirs).max()) or 1.0)
            if not error <= 1e-4:
                sys.exit(f"{shape.name}: GroupedExperts and PyTorch ({name}) differ by "
                         f"{error:.2e} (relative)")
            active[name] = run_torch
    times = interleaved(active, repeats)
    names = ("loop", "grouped", "torch", "grouped_mm")
    result: dict[str, float | None] = {name: statistics.median(times[name]) if name in times
                                       else None for name in names}
    for other in ("loop", "torch", "grouped_mm"):
        result[f"grouped/{other}"] = statistics.median(
            a / b for a, b in zip(times["grouped"], times[other], strict=True)
        ) if other in times else None
    return result


def print_moe_table(divide: int, repeats: int) -> None:
    print(f"\nMixture of experts, forward, N={MOE_TOKENS} float32, SwiGLU experts; "
          f"d_model and d_ff divided by {divide}"
          + (" (the full shapes)" if divide == 1 else " (not the full shapes)"))
    print("| shape | d_model | d_ff | experts | top_k | shared | loop ms | grouped ms "
          "| grouped/loop | PyTorch ms | grouped/PyTorch | PyTorch grouped_mm ms "
          "| grouped/grouped_mm | repeats |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for shape in MOE_SHAPES:
        r = time_moe(shape, divide, repeats)
        ratios = {k: "n/a (no torch)" if r[k] is None else f"{r[k]:.2f}"
                  for k in ("grouped/loop", "grouped/torch", "grouped/grouped_mm")}
        print(f"| {shape.name} | {shape.d_model // divide} | {shape.d_ff // divide} "
              f"| {shape.n_experts} | {shape.top_k} | {int(shape.deepseek)} "
              f"| {fmt_ms(r['loop'])} | {fmt_ms(r['grouped'])} | {ratios['grouped/loop']} "
              f"| {fmt_ms(r['torch'])} | {ratios['grouped/torch']} "
              f"| {fmt_ms(r['grouped_mm'])} | {ratios['grouped/grouped_mm']} | {repeats} |",
              flush=True)
    print("PyTorch: the same grouped forward with one @ per segment; PyTorch grouped_mm: each "
          "product for all segments in one torch.nn.functional.grouped_mm call")


SMOLLM2_TOKENS = 32
SMOLLM2_TEXT = ("The feed-forward network is the part of a transformer layer that works on each "
                "token alone: it widens the vector, bends it with a nonlinearity, and narrows it "
                "again, and most of the parameters of a model sit in it.")
SMOLLM2_FORWARD_GOAL, SMOLLM2_MEMORY_GOAL = 1.5, 1 << 30  # times PyTorch's; bytes
# One load in a fresh process: the time to load, one forward, and the peak resident memory.
SMOLLM2_CHILD = """
import json, resource, sys, time
import numpy as np
from ffn import smollm2
start = time.perf_counter()
model = smollm2.load(np.float32, cache=sys.argv[1])
loaded = time.perf_counter()
model(model.encode(sys.argv[2])[:int(sys.argv[3])])
done = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
print(json.dumps({"load_s": loaded - start, "forward_s": done - loaded, "peak": peak}))
"""


def smollm2_load(cache: str) -> dict[str, float]:
    """One ``smollm2.load`` and forward in a fresh process (the repository on its path)."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", SMOLLM2_CHILD, cache, SMOLLM2_TEXT,
                          str(SMOLLM2_TOKENS)], env=env, check=True, capture_output=True,
                         text=True).stdout
    result: dict[str, float] = json.loads(out.splitlines()[-1])
    return result


def print_smollm2_table(repeats: int) -> None:
    from ffn import smollm2

    print(f"\nSmolLM2-135M (ffn.smollm2), float32, a {SMOLLM2_TOKENS}-token prompt")
    with tempfile.TemporaryDirectory(prefix="bench-smollm2-") as folder:
        cold = smollm2_load(folder)  # an empty cache: read, dequantize, write
        warm = smollm2_load(folder)  # the cache written just now: memory-mapped
        model = smollm2.load(np.float32, cache=folder)
    tokens = model.encode(SMOLLM2_TEXT)[:SMOLLM2_TOKENS]
    assert len(tokens) == SMOLLM2_TOKENS, len(tokens)
    active: dict[str, Callable[[], object]] = {"ffn": lambda: model(tokens)}
    if torch is not None:
        try:
            import transformers
        except ImportError:
            transformers = None
        if transformers is not None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            path = smollm2.model_file()
            hf = transformers.AutoModelForCausalLM.from_pretrained(
                path.parent, gguf_file=path.name, dtype=torch.float32).eval()
            ids = torch.tensor([tokens])

            def pytorch() -> object:
                with torch.inference_mode():
                    return hf(ids, use_cache=False).logits

            error = np.max(np.abs(model(tokens) - pytorch()[0].numpy()))
            print(f"the two agree: max |logit difference| {error:.1e}")
            active["PyTorch"] = pytorch
    runs = interleaved(active, repeats)
    times = {k: statistics.median(v) for k, v in runs.items()}
    ratio = statistics.median(a / b for a, b in zip(runs["ffn"], runs["PyTorch"], strict=True)
                              ) if "PyTorch" in runs else None  # as the other tables' ratios
    print("| what | time | goal | met |")
    print("|---|--:|---|---|")
    verdict = "n/a" if ratio is None else "yes" if ratio <= SMOLLM2_FORWARD_GOAL else "NO"
    print(f"| forward, ffn | {fmt_ms(times['ffn'])} ms | | |")
    print(f"| forward, PyTorch | {fmt_ms(times.get('PyTorch'))} ms | | |")
    print(f"| forward, ffn / PyTorch | {'n/a' if ratio is None else f'{ratio:.2f}'} "
          f"| <= {SMOLLM2_FORWARD_GOAL} | {verdict} |")
    print(f"| cold load (read, dequantize, cache) | {cold['load_s']:.2f} s | | |")
    print(f"| warm load (memory-mapped cache) | {warm['load_s']:.2f} s | | |")
    for name, r in (("cold", cold), ("warm", warm)):
        ok = "yes" if r["peak"] <= SMOLLM2_MEMORY_GOAL else "NO"
        print(f"| peak memory, {name} load + forward | {r['peak'] / 2**20:.0f} MiB "
              f"| <= 1024 MiB | {ok} |")
    print(f"repeats: {repeats}; a load's time is a single run in a fresh process")


def fmt_ms(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    ms = seconds * 1e3
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats per row")
    parser.add_argument("--repeats", type=int, help="repeats per row (default: adaptive)")
    parser.add_argument(
        "--rows",
        action="append",
        default=[],
        metavar="TOKENS",
        help="only rows whose label has every comma-separated token, e.g. "
        "2048,float32,gelu_tanh,fwd (repeatable: rows matching any)",
    )
    parser.add_argument("--moe", action="store_true", help="only the mixture-of-experts table")
    parser.add_argument("--no-moe", action="store_true", help="skip the mixture-of-experts table")
    parser.add_argument("--smollm2", action="store_true", help="only the SmolLM2-135M table")
    parser.add_argument("--no-smollm2", action="store_true", help="skip the SmolLM2-135M table")
    parser.add_argument("--moe-divide", type=int, default=16, metavar="D",
                        help="divide the MoE shapes' d_model and d_ff by D (1: full shapes)")
    args = parser.parse_args()
    if args.moe_divide < 1 or (args.moe and args.no_moe) or (args.smollm2 and args.no_smollm2):
        parser.error("--moe-divide must be at least 1, and --moe and --no-moe (--smollm2 and "
                     "--no-smollm2) exclude each other")
    if args.moe and args.smollm2:
        parser.error("--moe and --smollm2 each run one table only: give one")
    budget_s, min_repeats = (1.0, 3) if args.quick else (6.0, 7)

    n_threads, how = blas_threads()
    if torch is not None:
        torch.set_num_threads(n_threads)
    rows = [
        Row(n, dtype, activation, passes)
        for n in TOKENS
        for dtype in DTYPES
        for activation in ACTIVATIONS
        for passes in PASSES
    ]
    if args.rows:
        filters = [spec.split(",") for spec in args.rows]
        rows = [row for row in rows if any(row.matches(tokens) for tokens in filters)]
    if args.moe or args.smollm2:
        rows = []

    print(f"command: python scripts/bench.py {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs; load average before: {load()}")
    torch_version = torch.__version__ if torch is not None else "not installed"
    print(
        f"threads: BLAS {n_threads} ({how}), PyTorch "
        f"{torch.get_num_threads() if torch is not None else 'n/a'}; ffn's elementwise "
        f"work: 1 in ffn.fast.FeedForward, {ffn.fast.blocks.THREADS} in ffn.fast's activations"
    )
    print(
        f"versions: Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, torch {torch_version}"
    )
    print("times are medians; ratios are medians of interleaved per-repeat ratios; other "
          "work on the machine (see the load averages) distorts both")
    if rows:
        print(f"\nd_model={D_MODEL}, d_ff={D_FF}")
        print("| N | dtype | activation | pass | reference ms | reference/GEMMs | fast ms "
              "| GFLOP/s | GEMMs ms | fast/GEMMs | PyTorch ms | fast/PyTorch | repeats |")
        print("|--:|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    results = []
    for row in rows:
        result = time_row(row, args.repeats, budget_s, min_repeats)
        results.append(result)
        flops = ffn.count_flops(D_MODEL, D_FF, row.n_tokens, backward=row.passes == "fwd+bwd")
        vs_torch = "n/a" if result.vs_torch is None else f"{result.vs_torch:.2f}"
        print(
            f"| {row.n_tokens} | {row.dtype} | {row.activation} | {row.passes} "
            f"| {fmt_ms(result.ref_s)} | {result.ref_vs_gemm:.2f} "
            f"| {fmt_ms(result.ffn_s)} | {flops / result.ffn_s / 1e9:.1f} "
            f"| {fmt_ms(result.gemm_s)} | {result.vs_gemm:.2f} "
            f"| {fmt_ms(result.torch_s)} | {vs_torch} | {result.repeats} |",
            flush=True,
        )
    if not args.no_moe and not args.smollm2:
        print_moe_table(args.moe_divide, args.repeats or (3 if args.quick else 5))
    if not args.no_smollm2 and not args.moe:
        print_smollm2_table(args.repeats or (5 if args.quick else 11))
    print(f"\nload average after: {load()}")

    checked = [r for r in results if r.row.n_tokens == 2048]
    if checked:
        print("\ntargets at N=2048 (ratio <= limit):")
    for r in checked:
        limit = TARGETS[(r.row.activation, r.row.dtype)]
        ok = "yes" if r.vs_gemm <= limit else "NO"
        verdicts = [f"ffn/GEMMs {r.vs_gemm:.3f} <= {limit:.2f}: {ok}"]
        if r.row.activation == "gelu_tanh" and r.row.dtype == "float32":
            if r.vs_torch is None:
                verdicts.append("ffn/PyTorch n/a")
            else:
                ok = "yes" if r.vs_torch <= 1.0 else "NO"
                verdicts.append(f"ffn/PyTorch {r.vs_torch:.2f} <= 1.00: {ok}")
        print(f"  {r.row.label}: {'; '.join(verdicts)}")


if __name__ == "__main__":
    main()
