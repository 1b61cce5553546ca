"""The Megatron-LM split of the FFN, run for real: two processes, a gloo group, one all-reduce.

The test starts two worker processes (this file run as a script) on 127.0.0.1. Each holds its
shard of the weights as float64 torch tensors (W1 and b1 by columns, W2 by rows), computes its
partial output gelu(x @ W1_i + b1_i) @ W2_i, sums the partials with `dist.all_reduce` and adds
b2 once; then autograd gives its local dx_i, and a second all-reduce sums them. Both results
must equal ffn's unsplit `FeedForward` (forward and backward) at rtol 1e-12; each shard's
weight gradients must equal the matching slice of ffn's. Needs torch: skipped without it,
failed under FFN_REQUIRE_TORCH=1. The workers are killed after 180 s at most (a generous bound:
on this shared 2-core machine at load 13, `import torch` alone took 17 s and the whole group 51 s;
unloaded it takes a few seconds).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

RTOL, ATOL = 1e-12, 1e-14  # as tests/test_torch_reference.py: GELU's tails cancel in torch
WORLD_SIZE = 2
TIMEOUT = 180.0  # seconds for the whole group, start to finish


def worker(rank: int, world_size: int, port: int, inputs: Path, out: Path) -> None:
    """One device: its shard's forward and backward, with the two all-reduces.

    Args:
        rank: this process's rank, 0 <= rank < world_size.
        world_size: number of processes (devices) in the group.
        port: the TCP port of rank 0's rendezvous on 127.0.0.1.
        inputs: an .npz with the unsplit W1, b1, W2, b2, the input x and the gradient dy.
        out: where to write this rank's results (.npz).
    """
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)  # two processes share the machine's cores
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size, timeout=timedelta(seconds=TIMEOUT / 2))
    try:
        with np.load(inputs) as arrays:
            a = {k: torch.tensor(v) for k, v in arrays.items()}
        d_ff = a["W1"].shape[1]
        cols = slice(rank * d_ff // world_size, (rank + 1) * d_ff // world_size)
        W1_i = a["W1"][:, cols].clone().requires_grad_()  # (d_model, d_ff / k)
        b1_i = a["b1"][cols].clone().requires_grad_()  # (d_ff / k,)
        W2_i = a["W2"][cols, :].clone().requires_grad_()  # (d_ff / k, d_model)
        x = a["x"].clone().requires_grad_()  # (n, d_model), the same on every rank
        partial = torch.nn.functional.gelu(x @ W1_i + b1_i) @ W2_i  # (n, d_model)
        y = partial.detach().clone()
        dist.all_reduce(y)  # sum of the k partial outputs, on every rank
        y += a["b2"]  # b2 once, after the sum
        partial.backward(a["dy"])  # local: dW1_i, db1_i, dW2_i and this shard's dx_i
        dx = x.grad.clone()  # type: ignore[union-attr]
        dist.all_reduce(dx)  # dL/dx needs every shard's share
        np.savez(out, y=y.numpy(), dx=dx.numpy(), dW1=W1_i.grad.numpy(),  # type: ignore[union-attr]
                 db1=b1_i.grad.numpy(), dW2=W2_i.grad.numpy())  # type: ignore[union-attr]
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_ranks(script: Path, args: Callable[[int], list[str]]) -> None:
    """``script`` as WORLD_SIZE processes on 127.0.0.1 (rank, world size, port, then
    ``args(rank)``), each to succeed within TIMEOUT; all stopped by the test, whatever happens.
    tests/test_expert_parallel.py runs its ranks this way too."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1]), "OMP_NUM_THREADS": "1"}
    procs = [subprocess.Popen(
        [sys.executable, str(script), str(rank), str(WORLD_SIZE), str(port), *args(rank)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for rank in range(WORLD_SIZE)]
    deadline = time.monotonic() + TIMEOUT
    try:
        for rank, proc in enumerate(procs):
            try:
                output, _ = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pytest.fail(f"the gloo group did not finish in {TIMEOUT:.0f} s (rank {rank})")
            assert proc.returncode == 0, f"rank {rank} failed:\n{output}"
    finally:
        for proc in procs:  # stopped by the test, whatever happened
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_gloo_all_reduce_of_two_shards_equals_ffn(tmp_path: Path) -> None:
    from harness import optional

    optional.import_torch("the tensor-parallel gloo test")
    import ffn

    d_model, d_ff, n = 16, 64, 6
    rng = np.random.default_rng(12)
    W1 = rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model)  # (d_model, d_ff)
    b1 = 0.1 * rng.standard_normal(d_ff)  # (d_ff,)
    W2 = rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff)  # (d_ff, d_model)
    b2 = 0.1 * rng.standard_normal(d_model)  # (d_model,)
    x = rng.standard_normal((n, d_model))  # (n, d_model)
    dy = rng.standard_normal((n, d_model))  # (n, d_model)
    np.savez(tmp_path / "inputs.npz", W1=W1, b1=b1, W2=W2, b2=b2, x=x, dy=dy)

    block = ffn.FeedForward(W1, b1, W2, b2, activation="gelu")  # exact GELU, as torch's default
    y = block(x)  # (n, d_model)
    dx = block.backward(dy)  # (n, d_model)

    run_ranks(Path(__file__), lambda rank: [str(tmp_path / "inputs.npz"),
                                            str(tmp_path / f"rank{rank}.npz")])

    d = d_ff // WORLD_SIZE
    for rank in range(WORLD_SIZE):
        with np.load(tmp_path / f"rank{rank}.npz") as saved:
            got = dict(saved)
        cols = slice(rank * d, (rank + 1) * d)
        np.testing.assert_allclose(got["y"], y, rtol=RTOL, atol=ATOL, err_msg=f"y, rank {rank}")
        np.testing.assert_allclose(got["dx"], dx, rtol=RTOL, atol=ATOL, err_msg=f"dx, rank {rank}")
        for name, ours in [("dW1", block.grads["W1"][:, cols]), ("db1", block.grads["b1"][cols]),
                           ("dW2", block.grads["W2"][cols, :])]:
            np.testing.assert_allclose(got[name], ours, rtol=RTOL, atol=ATOL,
                                       err_msg=f"{name}, rank {rank}")
        # Each shard alone is far from the whole: the all-reduce is what makes y right.
        assert not np.allclose(got["y"] - b2, 0.0)


if __name__ == "__main__":
    rank, world_size, port = (int(a) for a in sys.argv[1:4])
    worker(rank, world_size, port, Path(sys.argv[4]), Path(sys.argv[5]))
