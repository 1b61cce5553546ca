"""Blocks and threads for elementwise kernels: large arrays in blocks of ``BLOCK_ELEMENTS``, so a
multi-pass formula stays in the CPU cache, the blocks shared among threads (numpy and scipy
ufuncs release the GIL), and reusable per-thread work arrays. ``ffn.fast.kernels`` runs its
activations through ``apply_blocked``; ``ffn.fast.FeedForward`` uses the same blocks.
"""

from __future__ import annotations

import contextvars
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from ffn._validate import FloatArray

Kernel = Callable[[FloatArray, FloatArray], None]
"""``kernel(x, out)`` writes f(x) into ``out``: same shape and dtype, not aliasing ``x``."""

BLOCK_ELEMENTS = 1 << 16
"""Elements per block of elementwise work: 256/512 KiB in float32/float64, fits in L2."""


# ---------------------------------------------------------------- blocks and threads


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the CPUs this process may run on
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


THREADS = _cpu_count()
"""Threads for elementwise work (the calling thread included): the usable CPUs."""

_pool: ThreadPoolExecutor | None = None
_pool_key: tuple[int, int] = (0, 0)  # (pid, workers) the pool was made for
_pool_lock = threading.Lock()
_local = threading.local()  # per thread: work arrays, and whether it is a pool worker


def _get_pool(workers: int) -> ThreadPoolExecutor:
    global _pool, _pool_key
    key = (os.getpid(), workers)
    with _pool_lock:
        # A forked child inherits the pool object but not its threads: make a new one.
        if _pool is None or _pool_key != key:
            if _pool is not None:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="ffn", initializer=_mark_worker
            )
            _pool_key = key
        return _pool


def _mark_worker() -> None:
    _local.in_pool = True


def for_each_block(
    task: Callable[[int, int], None],
    n_items: int,
    block: int,
    parallel: bool = True,
    min_parallel: int = 2,
) -> None:
    """Call ``task(start, stop)`` for consecutive ranges of ``block`` items covering ``n_items``.

    The ranges are the same whatever the thread count, so results do not
    depend on it. With ``parallel``, at least ``min_parallel`` blocks and
    more than one CPU, the blocks are split into one contiguous run per
    thread; the calling thread does one run itself. Each run executes in a
    copy of the caller's context, so ``np.errstate`` settings apply in every
    thread. An exception in any run is raised here, after all runs have
    finished.

    Pass ``parallel=False`` right after a multithreaded BLAS call: numpy's
    OpenBLAS keeps its worker threads spinning for ~0.1 s after each call,
    so the other cores are taken, and extra threads only add overhead
    (measured here: no speedup, 1 % slower).
    """
    starts = range(0, n_items, block)
    n_blocks = len(starts)
    n_threads = min(THREADS, n_blocks) if parallel else 1
    if n_threads < 2 or n_blocks < min_parallel or getattr(_local, "in_pool", False):
        for start in starts:
            task(start, min(start + block, n_items))
        return

    def run(first: int, last: int) -> None:  # blocks first..last-1
        for start in starts[first:last]:
            task(start, min(start + block, n_items))

    bounds = [n_blocks * k // n_threads for k in range(n_threads + 1)]
    pool = _get_pool(THREADS - 1)
    futures: list[Future[None]] = [
        pool.submit(contextvars.copy_context().run, run, bounds[k], bounds[k + 1])
        for k in range(1, n_threads)
    ]
    try:
        run(bounds[0], bounds[1])
    finally:
        for future in futures:
            future.exception()  # wait for every run before reporting anything
    for future in futures:
        future.result()


def work_arrays(like: FloatArray, count: int, first: int = 0) -> list[FloatArray]:
    """``count`` scratch arrays with the shape and dtype of ``like``, reused per thread.

    Slots ``first, first + 1, ...`` of the calling thread's cache; arrays up to
    ``BLOCK_ELEMENTS`` are kept between calls, larger ones are allocated fresh.
    The contents are garbage: callers must write before they read. The
    kernels use slots 0-7: code that holds work arrays while it calls a
    kernel must take them from slot 8 on.
    """
    size, dtype = like.size, like.dtype
    if size > BLOCK_ELEMENTS:
        return [np.empty(like.shape, dtype=dtype) for _ in range(count)]
    cache: dict[tuple[np.dtype[Any], int], FloatArray] | None = getattr(
        _local, "work", None
    )
    if cache is None:
        cache = _local.work = {}
    arrays = []
    for slot in range(first, first + count):
        buffer = cache.get((dtype, slot))
        if buffer is None:
            buffer = cache[(dtype, slot)] = np.empty(BLOCK_ELEMENTS, dtype=dtype)
        arrays.append(buffer[:size].reshape(like.shape))
    return arrays


def apply_blocked(kernel: Kernel, x: FloatArray, out: FloatArray) -> None:
    """Run ``kernel`` over ``x`` and ``out`` block by block, on several threads if large.

    Both arrays must have the same shape; ``out`` must be C-contiguous. Blocks
    of ``BLOCK_ELEMENTS`` elements keep the few intermediate passes of a kernel
    inside the CPU cache instead of streaming whole arrays through memory.
    """
    x_flat = x.reshape(-1)  # a copy only if x is not contiguous; never written
    out_flat = out.reshape(-1)  # a view: out is C-contiguous

    def task(start: int, stop: int) -> None:
        kernel(x_flat[start:stop], out_flat[start:stop])

    for_each_block(task, x_flat.size, BLOCK_ELEMENTS)
