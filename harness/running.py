"""Running a page's python blocks as a reader would: a `continuation` block in the namespace,
numpy print options and working directory its chain left; any other block afresh.

A chain's namespace is kept between its blocks' tests instead of running the chain again. A
`torch` block (a PyTorch tab) is a side branch: it continues the chain, and the numpy blocks
after it continue the chain as it was without it. It runs only where `import torch` works.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ffn_docs.markdown_page import Block, Page
from harness import optional
from harness.report import DocMismatch, HarnessError
from harness.ties import tie_values

# numpy's print options as the harness found them; every chain of blocks starts from these.
NUMPY_DEFAULTS = dict(np.get_printoptions())
# What each block printed and what its ties gave, by the block's start line.
Outputs = dict[int, tuple[str, list[str | Exception]]]


@dataclass
class Live:
    """What the last block of a page that ran cleanly leaves for a continuation block."""

    start: int  # its first code line
    namespace: dict[str, Any]
    print_options: dict[str, Any]
    cwd: str  # a chain keeps its own working directory, as it keeps its print options


@dataclass
class Runner:
    """The blocks run in a session: live namespaces by page, and what each block gave."""

    live: dict[Path, Live] = field(default_factory=dict)
    branch: dict[Path, Live] = field(default_factory=dict)  # the last torch block's, likewise
    # A rewritten page is read back and must show exactly this before it is written.
    ran: dict[Path, Outputs] = field(default_factory=dict)

    def store(self, block: Block) -> dict[Path, Live]:
        """Where the namespace a block leaves is kept: torch blocks apart from the rest."""
        return self.branch if block.torch else self.live

    def run(self, page: Page, block: Block) -> tuple[str, list[str | Exception]]:
        """Run ``block`` in its chain's namespace, print options and working directory;
        return (and keep in ``ran``) what it printed and what its ties gave."""
        home = os.getcwd()  # a block's os.chdir must not leak into other chains and pages
        printed = io.StringIO()
        try:
            # A chain's first block starts in a fresh module's globals, as `python page.py` would.
            namespace = self._enter(page, block, vars(types.ModuleType("fence")))
            with contextlib.redirect_stdout(printed):
                exec_block(block, page.path, namespace)
            try:
                self.store(block)[page.path] = Live(block.start, namespace,
                                                    dict(np.get_printoptions()), os.getcwd())
                values = tie_values(block, namespace)  # in the block's print options
            except Exception as exc:  # the block ran: what failed is the harness
                raise HarnessError(f"{page.name}:{block.start}") from exc
        finally:
            os.chdir(home)
            reset_print_state(None)
        self.ran.setdefault(page.path, {})[block.start] = (printed.getvalue(), values)
        return printed.getvalue(), values

    def _enter(self, page: Page, block: Block, args: dict[str, Any]) -> dict[str, Any]:
        """Set up print options and cwd for the block; return the namespace it runs in."""
        chain = page.chain_before(block)
        if not chain:
            for store in (self.branch,) if block.torch else (self.live, self.branch):
                store.pop(page.path, None)
            reset_print_state(None)
            return args
        last = self.store(chain[-1]).get(page.path)
        if last is not None and last.start == chain[-1].start:
            reset_print_state(last.print_options)
            os.chdir(last.cwd)
            if block.torch and not chain[-1].torch:  # a side branch: numpy's names stay as
                return dict(last.namespace)  # they were for the numpy blocks after it
            return last.namespace
        # Run alone (say with -k): replay the chain quietly, then run this block.
        reset_print_state(None)
        with contextlib.redirect_stdout(io.StringIO()):
            for earlier in chain:
                exec_block(earlier, page.path, args)
        return args


def exec_block(block: Block, path: Path, namespace: dict[str, Any]) -> None:
    # Padding with blank lines makes tracebacks name the Markdown file's own line numbers.
    code = compile("\n" * block.start + block.code, str(path), "exec", dont_inherit=True)
    exec(code, namespace)


def reset_print_state(options: dict[str, Any] | None) -> None:
    """Restore numpy's print options (a chain's own, or the defaults) and close figures."""
    np.set_printoptions(**(options or NUMPY_DEFAULTS))
    plt = sys.modules.get("matplotlib.pyplot")  # close figures only if a page imported pyplot
    if plt is not None:
        plt.close("all")


def require_torch(page: Page, block: Block) -> None:
    """Skip a torch block where torch cannot be imported (fail under FFN_REQUIRE_TORCH=1).

    A skipped block's output fence is neither checked nor rewritten: nothing ran to say
    what it should be.
    """
    reason = optional.torch_missing()
    if reason is None:
        return
    where = f"{page.name}:{block.start}"
    if optional.required():
        raise DocMismatch(f"{where}: {optional.REQUIRE}=1 but torch cannot be imported "
                          f"({reason}): the PyTorch tab must run")
    pytest.skip(f"{where}: torch is not installed: PyTorch tab not run ({reason})")
