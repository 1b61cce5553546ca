"""Every number in a docs output block or prose tie is checked: change a digit, a test fails.

For each page, one digit in every output block and every prose tie is changed at once, the page
is run by the harness, and each changed place must be reported at its own `file:line`. Three
rounds pick different digits. A lint also makes sure no `text` fence escapes the harness by not
sitting under a python block.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import ffn  # noqa: F401  (imported once here: pytester's in-process runs would re-import scipy's C code)
from tests.harness import page as pages

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if pages.load(p).blocks)
ARGS = ["-p", "tests.harness.plugin", "--markdown-docs", "--markdown-docs-syntax=superfences",
        "-p", "no:cacheprovider"]


def checked_places(page: pages.Page) -> list[tuple[int, int, int]]:
    """(line, start column, end column) of every output region and prose tie's shown text."""
    places = []
    for block in page.blocks:
        if block.output is not None:
            out = block.output
            places += [(n, 0, len(page.lines[n])) for n in range(out.start, out.end)]
        places += [(n, m.start("shown"), m.end("shown")) for n, m in block.ties]
    return places


def mutate(page: pages.Page, rng: random.Random) -> tuple[list[str], list[int]]:
    """Change one digit in each output region and each tie; return the lines and where."""
    lines = list(page.lines)
    regions: list[list[tuple[int, int]]] = []  # digit positions (line, col), one list per region
    for block in page.blocks:
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


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_changing_any_digit_fails_at_its_line(
    pytester: pytest.Pytester, path: Path, seed: int
) -> None:
    page = pages.load(path)
    lines, changed = mutate(page, random.Random(f"{path.name}:{seed}"))
    assert changed, f"{path.name} shows no checked numbers"
    (pytester.path / path.name).write_text("\n".join(lines), "utf8")
    result = pytester.runpytest(*ARGS)
    report = result.stdout.str()
    missed = [n for n in changed if f"{path.name}:{n}:" not in report]
    assert not missed, f"changed digits at lines {missed} of {path.name} went unnoticed:\n{report}"


@pytest.mark.parametrize("path", sorted(DOCS.rglob("*.md")), ids=lambda p: p.name)
def test_every_text_fence_is_a_checked_output(path: Path) -> None:
    page = pages.load(path)
    outputs = {b.output.first for b in page.blocks if b.output is not None}
    fences = [n for n, line in enumerate(page.lines)
              if re.match(r"\s*```text\b", line) and n not in outputs]
    where = [n + 1 for n in fences]
    assert not fences, (f"{path.name}: ```text fences at lines {where} sit under no python "
                        "block, so nothing checks them")
