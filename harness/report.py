"""How a failing block is reported: the page's fault (a wrong number, a raising block) at the
page's own line, the harness's fault as the harness's."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

from ffn_docs.markdown_page import display


class DocMismatch(AssertionError):
    """The page shows something other than what its code produces."""


class HarnessError(Exception):
    """The harness itself failed while checking a block that ran: a bug here, not in the page."""


def harness_failed(error: HarnessError) -> str:
    """The report of a harness bug, with the traceback of what failed inside the harness."""
    return (f"{error}: the doc-test harness failed (a bug in harness/, not in the page)\n"
            + "".join(traceback.format_exception(error.__cause__)))


def block_raised(path: Path, start: int, code: str,
                 excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The report of a block that raised: its code numbered as the page's lines, and the
    traceback from the page's first frame (the harness's frames above it say nothing)."""
    # The deepest frame in the page names the Markdown line that raised.
    frames = traceback.extract_tb(excinfo.tb)
    in_page = [i for i, f in enumerate(frames) if f.filename == str(path)]
    line = frames[in_page[-1]].lineno if in_page else start
    lines = code.rstrip("\n").split("\n")
    width = len(str(start + len(lines)))
    numbered = [f"{n:>{width}}   {ln}" for n, ln in enumerate(lines, start + 1)]
    shown = traceback.format_list(frames[in_page[0]:] if in_page else frames)
    return "\n".join([
        f"{display(path)}:{line}: the code block raised",
        "Error in code block:", f"{'':>{width}}   ```", *numbered, f"{'':>{width}}   ```",
        "Traceback (most recent call last):", "".join(shown).rstrip("\n"),
        excinfo.exconly()])
