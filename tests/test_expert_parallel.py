"""Expert parallelism run for real: two processes, a gloo group, dispatch and combine by all-to-all.

The test starts two worker processes (this file run as a script) on 127.0.0.1. Each holds its
own batch of tokens and half of a DeepSeek-style MoE layer's routed experts (ranks own
consecutive experts), as float64 torch tensors. Each routes its tokens (ffn's router), sends
every assignment's token vector to the rank that holds the expert (`all_to_all_single`: the
dispatch), runs its experts on what it received, sends the outputs back the same way (the
combine), weighs them and adds the shared expert, which every rank holds whole. The output must
equal ffn's `MixtureOfExperts` on that rank's tokens at rtol 1e-12, and the token bytes each
rank sent must equal the chapter's count (docs/moe-models.md, "Expert parallelism for real"):
d_model values of 8 bytes out for each of its tokens' assignments to another rank's expert, and
back for each assignment another rank's token made to one of its experts.

gloo and all-to-all: `ProcessGroupGloo` implements `alltoall_base`, which is what
`dist.all_to_all_single` calls (one flat tensor and split sizes per rank); the test uses it.
Needs torch: skipped without it, failed under FFN_REQUIRE_TORCH=1. The workers are killed after
180 s at most, as in tests/test_tensor_parallel.py.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import numpy as np

from tests.test_tensor_parallel import TIMEOUT, WORLD_SIZE, run_ranks

RTOL, ATOL = 1e-12, 1e-14
D_MODEL, D_FF, N_EXPERTS, TOP_K, TOKENS = 16, 8, 8, 2, 24  # TOKENS on each rank
BYTES = 8  # float64


def layer() -> object:
    """The MoE layer every rank and the test build: DeepSeek-V3's router, one shared expert."""
    import ffn

    base = ffn.MixtureOfExperts.random(D_MODEL, D_FF, N_EXPERTS, TOP_K, "swiglu", seed=40)
    bias = 0.1 * np.random.default_rng(41).standard_normal(N_EXPERTS)
    shared = [ffn.GatedFeedForward.random(D_MODEL, 2 * D_FF, seed=42)]
    return ffn.MixtureOfExperts(base.router, list(base.experts), TOP_K, score="sigmoid",
                                bias=bias, n_groups=4, top_groups=2, scale=2.5,
                                shared_experts=shared)


def tokens(rank: int) -> np.ndarray:
    """Rank ``rank``'s own batch, ``(TOKENS, D_MODEL)``."""
    return np.random.default_rng(50 + rank).standard_normal((TOKENS, D_MODEL)) + 0.3


def owner(expert: np.ndarray, world_size: int) -> np.ndarray:
    """The rank holding each expert: consecutive blocks of n_experts / world_size."""
    return expert // (N_EXPERTS // world_size)


def worker(rank: int, world_size: int, port: int, out: Path) -> None:
    """One device: route, dispatch, run its experts, combine, add the shared expert."""
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)  # the processes share the machine's cores
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size, timeout=timedelta(seconds=TIMEOUT / 2))
    try:
        moe = layer()
        x = tokens(rank)  # (TOKENS, d_model)
        _, chosen, weights = moe.route(x)  # (TOKENS, top_k) each
        row = np.arange(chosen.size) // TOP_K  # each assignment's token
        expert = chosen.ravel()  # (TOKENS * top_k,)
        order = np.argsort(owner(expert, world_size), kind="stable")  # grouped by destination
        send_counts = np.bincount(owner(expert, world_size), minlength=world_size)
        # Dispatch. First the counts and the expert ids (metadata), then the token vectors.
        recv_counts = torch.empty(world_size, dtype=torch.int64)
        dist.all_to_all_single(recv_counts, torch.tensor(send_counts))
        recv_counts_list = recv_counts.tolist()
        n_recv = sum(recv_counts_list)
        recv_expert = torch.empty(n_recv, dtype=torch.int64)
        dist.all_to_all_single(recv_expert, torch.tensor(expert[order]),
                               recv_counts_list, send_counts.tolist())
        send_x = torch.tensor(x[row[order]])  # (assignments, d_model)
        recv_x = torch.empty(n_recv, D_MODEL, dtype=torch.float64)
        dist.all_to_all_single(recv_x, send_x, recv_counts_list, send_counts.tolist())
        # This rank's experts on the rows they received: SwiGLU, written out in torch.
        out_rows = torch.zeros_like(recv_x)  # (received, d_model)
        for e in torch.unique(recv_expert).tolist():
            block = moe.experts[e]
            W, V, W2 = (torch.tensor(a) for a in (block.W, block.V, block.W2))
            mine = recv_expert == e
            h = recv_x[mine]  # (n_e, d_model)
            out_rows[mine] = (torch.nn.functional.silu(h @ W) * (h @ V)) @ W2
        # Combine: the outputs go back the way the tokens came.
        back = torch.empty(chosen.size, D_MODEL, dtype=torch.float64)
        dist.all_to_all_single(back, out_rows, send_counts.tolist(), recv_counts_list)
        y = torch.zeros(TOKENS, D_MODEL, dtype=torch.float64)
        w = torch.tensor(weights.ravel()[order])[:, None]  # (assignments, 1)
        y.index_add_(0, torch.tensor(row[order]), w * back)
        shared = moe.shared_experts[0]
        W, V, W2 = (torch.tensor(a) for a in (shared.W, shared.V, shared.W2))
        xt = torch.tensor(x)
        y += (torch.nn.functional.silu(xt @ W) * (xt @ V)) @ W2
        others = [r for r in range(world_size) if r != rank]
        rows_sent = sum(send_counts[r] for r in others) + sum(recv_counts_list[r] for r in others)
        token_bytes = rows_sent * D_MODEL * send_x.element_size()  # dispatch and combine
        np.savez(out, y=y.numpy(), token_bytes=token_bytes, send_counts=send_counts,
                 recv_counts=np.array(recv_counts_list))
    finally:
        dist.destroy_process_group()


def test_gloo_all_to_all_dispatch_and_combine_equal_ffn(tmp_path: Path) -> None:
    from harness import optional

    optional.import_torch("the expert-parallel gloo test")
    moe = layer()
    run_ranks(Path(__file__), lambda rank: [str(tmp_path / f"rank{rank}.npz")])

    # The chapter's count, from ffn's routing: an assignment whose expert is on another rank
    # sends d_model values there and gets d_model values back.
    home = [owner(moe.route(tokens(r))[1], WORLD_SIZE) for r in range(WORLD_SIZE)]  # type: ignore[attr-defined]
    remote_out = [int(np.sum(h != r)) for r, h in enumerate(home)]  # its tokens' assignments
    served = [sum(int(np.sum(h == r)) for s, h in enumerate(home) if s != r)
              for r in range(WORLD_SIZE)]  # other ranks' assignments to its experts
    for rank in range(WORLD_SIZE):
        with np.load(tmp_path / f"rank{rank}.npz") as saved:
            got = dict(saved)
        np.testing.assert_allclose(got["y"], moe(tokens(rank)), rtol=RTOL, atol=ATOL,  # type: ignore[operator]
                                   err_msg=f"y, rank {rank}")
        expected = (remote_out[rank] + served[rank]) * D_MODEL * BYTES
        assert int(got["token_bytes"]) == expected, rank
        assert 0 < remote_out[rank] < TOKENS * TOP_K  # some assignments travel, not all
    assert sum(remote_out) == sum(served)  # every dispatched row comes back once


if __name__ == "__main__":
    rank, world_size, port = (int(a) for a in sys.argv[1:4])
    worker(rank, world_size, port, Path(sys.argv[4]))
