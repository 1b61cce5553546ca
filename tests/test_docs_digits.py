"""Every number in a docs output block or prose tie is checked: change a digit, a test fails.

For each page, one digit in every output block and every prose tie is changed at once, and each
changed place must be reported at its own `file:line` by the harness's checks. Three rounds
(seeds) pick different digits. A lint also makes sure no `text` fence escapes the harness by not
sitting under a python block.

A changed digit in an output or in prose cannot change what the page's code does, so the code
need not run again for the changed copies (it takes up to a minute and a half on one page): the
copies are checked with the harness's own checks (`check_output`, `check_ties`) against what
each block of the page printed and each tie gave, from the harness's `page_outputs` fixture
(this session's run of the page when it ran in this process first, as the root conftest.py
arranges; else a run of the page's blocks by the fixture).

The page with the fewest blocks is also checked the long way: round 0's copy is run by the
harness in a pytester session, and right after each block the same checks also compare rounds
1 and 2's copies with it, so the whole path (the harness running a changed page and naming its
lines) stays tested in every run.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ffn  # noqa: F401  (imported once here: pytester's in-process runs would re-import scipy's C code)
from ffn_docs import markdown_page as pages
from harness import optional, outputs, ties
from harness.running import Outputs

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCKS = {p: len(pages.load(p).blocks) for p in sorted(DOCS.rglob("*.md"))}  # parsed once
PAGES = [p for p, n in BLOCKS.items() if n]
ARGS = ["-p", "harness.plugin", "-p", "no:cacheprovider"]


def checked_blocks(page: pages.Page) -> list[pages.Block]:
    """The page's blocks whose output the harness checks on this machine.

    Without torch the harness skips a PyTorch tab with a visible reason, and its output goes
    unchecked there: its digits are mutated only where torch runs (.ci/run requires it).
    """
    skip_torch = optional.torch_missing() is not None and not optional.required()
    return [b for b in page.blocks if not (skip_torch and "torch" in b.options)]


def checked_places(page: pages.Page) -> list[tuple[int, int, int]]:
    """(line, start column, end column) of every output region and prose tie's shown text."""
    places = []
    for block in checked_blocks(page):
        if block.output is not None:
            out = block.output
            places += [(n, 0, len(page.lines[n])) for n in range(out.start, out.end)]
        places += [(n, m.start("shown"), m.end("shown")) for n, m in block.ties]
    return places


def mutate(page: pages.Page, rng: random.Random) -> tuple[list[str], list[int]]:
    """Change one digit in each output region and each tie; return the lines and where."""
    lines = list(page.lines)
    regions: list[list[tuple[int, int]]] = []  # digit positions (line, col), one list per region
    for block in checked_blocks(page):
        if block.output is not None:
            regions.append([(n, m.start()) for n in range(block.output.start, block.output.end)
                            for m in re.finditer(r"\d", lines[n])])
        regions += [[(n, m.start("shown") + i) for i, ch in enumerate(m["shown"]) if ch.isdigit()]
                    for n, m in block.ties]
    changed = []
    for digits in regions:
        if not digits:
            continue
        n, col = rng.choice(digits)
        new = str((int(lines[n][col]) + rng.randint(1, 9)) % 10)
        lines[n] = lines[n][:col] + new + lines[n][col + 1:]
        changed.append(n + 1)
    return lines, changed


# torch too, where it is installed, for the same reason as ffn above: pytester drops what a run
# imported, and importing torch's C code a second time in one process crashes it.
with contextlib.suppress(ImportError):
    import torch  # noqa: F401

SEEDS = (0, 1, 2)


def _checking_other_rounds(check: Any, first: Path, others: list[pages.Page]) -> Any:
    """`check` (a harness check of one block), which for a block of the page at ``first``
    also checks the same block of each page in ``others`` with the same printed output or tie
    values, and returns every problem found."""
    def checked(page: pages.Page, block: pages.Block, produced: Any,
                edits: Any = None) -> list[str]:
        problems: list[str] = check(page, block, produced, edits)
        if page.path.resolve() == first.resolve():
            i = page.blocks.index(block)
            for other in others:
                assert other.blocks[i].start == block.start, "rounds differ in their code"
                problems += check(other, other.blocks[i], produced, edits)
        return problems
    return checked


def _report_from_record(record: Outputs, copies: list[Path]) -> str:
    """The harness's complaints about the changed copies, from what the page's blocks print
    and give (``record``, by block start line)."""
    problems: list[str] = []
    for copy in copies:
        changed = pages.load(copy)
        for block in changed.blocks:
            if block.start in record:
                printed, values = record[block.start]
                problems += outputs.check_output(changed, block, printed)
                problems += ties.check_ties(changed, block, values)
    return "\n".join(problems)


def _report_from_run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                     copies: list[Path]) -> str:
    """The harness's report on round 0's copy, run in a pytester session; right after each
    block, the same checks compare the other rounds' copies with what it printed and gave."""
    others = [pages.load(copy) for copy in copies[1:]]
    for module, name in ((outputs, "check_output"), (ties, "check_ties")):
        monkeypatch.setattr(module, name,
                            _checking_other_rounds(getattr(module, name), copies[0], others))
    result = pytester.runpytest(*ARGS, str(copies[0]))  # only round 0's copy is collected
    return result.stdout.str()


FEWEST_BLOCKS = min(PAGES, key=lambda p: (BLOCKS[p], p.name))
CASES = [(p, "recorded") for p in PAGES] + [(FEWEST_BLOCKS, "run")]


@pytest.mark.parametrize(("path", "how"), CASES, ids=[f"{p.name}-{how}" for p, how in CASES])
def test_changing_any_digit_fails_at_its_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    page_outputs: Callable[[Path], Outputs], path: Path, how: str
) -> None:
    page = pages.load(path)
    copies, changed = [], {}
    for seed in SEEDS:
        lines, changed[seed] = mutate(page, random.Random(f"{path.name}:{seed}"))
        assert changed[seed], f"{path.name} shows no checked numbers"
        copy = pytester.path / f"round{seed}" / path.name
        copy.parent.mkdir()
        copy.write_text("\n".join(lines), "utf8")
        copies.append(copy)
    if how == "recorded":
        record = page_outputs(path)
        assert sorted(record) == [b.start for b in checked_blocks(page)]
        report = _report_from_record(record, copies)
    else:
        report = _report_from_run(pytester, monkeypatch, copies)
    for seed in SEEDS:
        name = pages.display(copies[seed])
        missed = [n for n in changed[seed] if f"{name}:{n}:" not in report]
        assert not missed, (f"round {seed}: changed digits at lines {missed} of {path.name} "
                            f"went unnoticed:\n{report}")


@pytest.mark.parametrize("path", sorted(DOCS.rglob("*.md")), ids=lambda p: p.name)
def test_every_text_fence_is_a_checked_output(path: Path) -> None:
    page = pages.load(path)
    outputs = {b.output.first for b in page.blocks if b.output is not None}
    fences = [n for n, line in enumerate(page.lines)
              if re.match(r"\s*```text\b", line) and n not in outputs]
    where = [n + 1 for n in fences]
    assert not fences, (f"{path.name}: ```text fences at lines {where} sit under no python "
                        "block, so nothing checks them")
